//! Workloads: what a VM asks of its disk. Each kind generates the next request's shape and says
//! how requests are paced (closed loop at a depth, open arrivals at a rate, or timed arrivals).
//!
//! Kinds: `fio` (fio options in the scenario), `fio_file` (fio job files), `vdbench` (parameter
//! files or inline keys), `trace` (fio iolog, MSR Cambridge CSV, blkparse text) and `ioping`.

mod distribution;
mod face;
mod fio;
mod findings;
mod input;
mod ioping;
mod plan;
mod trace;
mod vdbench;

pub use face::{Completion, Instance, JobSource, Op, Request, Steer, Workload};
pub use findings::{FioFindings, JobError, LatencyFound, SteadyFound};
pub use input::{open_input, read_text, MAX_TEXT_FILE_BYTES};
pub use plan::{ExitRule, ExitWhat, FioPlace, JobPlan, Pacing, RateSampling, SyncSchedule};
pub use trace::volumes::expand as expand_trace_volumes;
pub use vdbench::{runs as vdbench_runs, runs_with_vars as vdbench_runs_with_vars, vars as vdbench_vars, VdbenchRun};

use sanlab_spec::{Kind, KindDoc};

pub static REGISTRY: &[Kind<dyn JobSource>] = &[fio::KIND, fio::FILE_KIND, vdbench::KIND, trace::KIND, ioping::KIND];

/// The workload kinds, then fio's option table (what each fio option does in sanlab).
pub fn kinds() -> Vec<KindDoc> {
    let mut out = sanlab_spec::describe_kinds("workload", REGISTRY);
    out.extend(fio::option_kinds());
    out
}

/// How many of fio's options sanlab models, accepts without effect, and cannot model.
pub fn fio_option_coverage() -> [usize; 3] {
    fio::option_coverage()
}
