//! Workloads: what a VM asks of its disk. Each kind generates the next request's shape and says
//! how requests are paced (closed loop at a depth, open arrivals at a rate, or timed arrivals).
//!
//! Kinds: `fio` (fio options in the scenario), `fio_file` (fio job files), `vdbench` (parameter
//! files or inline keys), `trace` (fio iolog, MSR Cambridge CSV, blkparse text) and `ioping`.

mod distribution;
mod fio;
mod ioping;
mod trace;
mod vdbench;

pub use fio::{FioFindings, JobError, LatencyFound, SteadyFound, SyncSchedule};
pub use trace::volumes::expand as expand_trace_volumes;
pub use vdbench::{runs as vdbench_runs, VdbenchRun};

use sanlab_spec::{Kind, KindDoc};
use sanlab_des::RngStream;

/// A request's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// Shape of the next request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub op: Op,
    pub size_bytes: u32,
    pub offset_bytes: u64,
}

/// How a job issues requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// Keep `depth` requests outstanding; the next is issued when one completes (after
    /// [`Workload::think_ns`], if the workload thinks).
    Closed { depth: u32 },
    /// Requests arrive at `rate_iops` (evenly spaced, or Poisson); at most `depth` outstanding, the
    /// rest wait in the job's backlog (fio's behaviour when it falls behind its rate).
    Open { depth: u32, rate_iops: f64, poisson: bool },
    /// Requests arrive when the workload says ([`Workload::next_arrival_ns`], e.g. a trace's
    /// timestamps); at most `depth` outstanding, the rest wait in the backlog.
    Timed { depth: u32 },
    /// Arrivals as with [`Pacing::Timed`], and the slots they leave free kept busy as in a closed
    /// loop: every issue asks [`Workload::next`], which serves a waiting arrival first (vdbench
    /// workloads with `priority=` sharing an SD's threads: paced workloads first, `iorate=max`
    /// ones taking the rest). Its closed loop starts with the job, or at its first arrival when
    /// the job starts after the run's start.
    Shared { depth: u32 },
}

impl Pacing {
    /// Requests the job keeps outstanding at most.
    pub fn depth(&self) -> u32 {
        match *self {
            Pacing::Closed { depth } | Pacing::Open { depth, .. } | Pacing::Timed { depth } | Pacing::Shared { depth } => depth,
        }
    }
}

/// One job instance a workload entry expands into: its name suffix (None keeps the job's name),
/// its fixed facts, its state, and the instances (indices among the entry's) that must finish
/// before it starts (fio's `stonewall` and `wait_for`).
pub struct Instance {
    pub suffix: Option<String>,
    pub plan: JobPlan,
    pub workload: Box<dyn Workload>,
    pub after: Vec<usize>,
}

/// A job's fixed facts: read when the run is built, when the job starts and when it is reported,
/// never in the event loop's hot path.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    pub pacing: Pacing,
    /// Simulated time after which the job stops issuing (fio `runtime`), if any.
    pub runtime_ns: Option<u64>,
    /// When the job issues (or its arrivals start): fio `startdelay`.
    pub start_ns: u64,
    /// Completions before this time are left out of the job's own statistics (fio `ramp_time`,
    /// vdbench `warmup`); the run's `warmup` applies to every statistic as well.
    pub measured_from_ns: u64,
    /// The byte range of the disk the job addresses, when it is fixed (fio's offset and size).
    pub region_bytes: Option<std::ops::Range<u64>>,
    /// The job's options as the user would write them (for fio-compatible output).
    pub options: Vec<(String, String)>,
    /// Options the job's file gave that have no effect on the model (fio's logging, CPU
    /// placement, engine tuning, ...), listed once per run as "ignored: ...".
    pub ignored: Vec<&'static str>,
    /// How the job's bandwidth and IOPS are sampled for fio's `bw_*` and `iops_*` figures
    /// (`[bandwidth, iops]`).
    pub rate_sampling: [RateSampling; 2],
    /// Whether the job's end ends other jobs of its file (fio `exitall`, `exit_what`,
    /// `exitall_on_error`).
    pub exit_rule: Option<ExitRule>,
    /// When the job syncs between its writes (fio `fsync`, `fdatasync`, `sync_file_range`).
    pub sync_schedule: Option<SyncSchedule>,
    /// Memory the workload's own state may grow to (fio's random map), for the run's estimate.
    pub state_bytes: u64,
    /// Where a job of a fio job file or command line sits in it, for fio's JSON.
    pub fio_place: Option<FioPlace>,
}

impl JobPlan {
    /// A job paced so, with these options, running the whole run from its start and measured from
    /// it; every other fact at its default (fio's 500 ms rate windows, no exit rule, no syncs).
    pub fn new(pacing: Pacing, options: Vec<(String, String)>) -> Self {
        Self {
            pacing,
            runtime_ns: None,
            start_ns: 0,
            measured_from_ns: 0,
            region_bytes: None,
            options,
            ignored: vec![],
            rate_sampling: [RateSampling::DEFAULT; 2],
            exit_rule: None,
            sync_schedule: None,
            state_bytes: 0,
            fio_place: None,
        }
    }
}

/// A measured completion of one of the job's requests (see [`Workload::completed`]).
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    pub op: Op,
    pub size_bytes: u32,
    pub latency_ns: u64,
    /// Time since the job's measured start (after startdelay and ramp_time, or the run's warmup).
    pub since_ns: u64,
    /// The job's requests still in flight after this one.
    pub outstanding: u32,
}

/// What a job asks of the engine after a completion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Steer {
    Keep,
    /// Keep at most `depth` requests outstanding from now on; with `quiesce`, a closed-loop job
    /// first waits for every request in flight (fio's ramp-down).
    Depth { depth: u32, quiesce: bool },
    /// Restart the job's own statistics now (fio's final latency-target cycle).
    Remeasure,
    /// The job has ended: it stops issuing at `since_ns` (at most the completion's `since_ns`).
    Stop { since_ns: u64 },
}

/// A running job's face to the engine: the next request, the next arrival, what a completion
/// changes. One instance per job (fio's `numjobs` clones a job; a job file or a vdbench run holds
/// several); its fixed facts are its [`JobPlan`].
pub trait Workload {
    /// The next request, or None when the workload has no more (a trace's end, a fio job's
    /// `size` done without `time_based`, vdbench `seekpct=eof`): the job then stops issuing.
    fn next(&mut self, rng: &mut RngStream) -> Option<Request>;
    /// With [`Pacing::Timed`]: absolute time of the next arrival at or after `now_ns`, or None
    /// when the workload has no more requests.
    fn next_arrival_ns(&mut self, _now_ns: u64, _rng: &mut RngStream) -> Option<u64> {
        None
    }
    /// With [`Pacing::Closed`]: a request issued at `issued_ns` completed at `now_ns`. `Some(pause)`
    /// makes the job stop issuing, wait until its outstanding requests have completed, wait
    /// `pause` more, then fill up to its depth again (fio `thinktime`, ioping's interval). None
    /// issues the next request at once.
    fn think_ns(&mut self, _issued_ns: u64, _now_ns: u64) -> Option<u64> {
        None
    }
    /// A measured request completed: jobs that steer by what they see (fio `latency_target`,
    /// `steadystate`, `rate_min`) answer with a change.
    fn completed(&mut self, _c: &Completion) -> Steer {
        Steer::Keep
    }
    /// What the job found or why it ended early, for its results.
    fn findings(&self) -> Option<FioFindings> {
        None
    }
}

/// What a workload kind builds from a `[[vm.job]]` table: the job instances it expands into.
pub trait JobSource {
    /// The job instances to run: fio's `numjobs` clones, or every job of a job file.
    fn instances(&self) -> Vec<Instance>;
    /// Whether the job's own output can be made from the run's time series, sampled every
    /// `sample_interval_ns` (vdbench's summary lines at its `interval=`); the error names the
    /// job's key to blame.
    fn check_sampling(&self, _sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// A job's place in its fio job file or command line, as fio's JSON reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FioPlace {
    /// The job's section (or `--name`): fio's `jobname`, which its clones share.
    pub name: String,
    /// Its reporting group: a `stonewall` or `new_group` job after the first starts the next
    /// (init.c).
    pub group: u32,
    /// The options given with a value, as written (the last of a repeated one): fio's
    /// `global options` (the globals above the job) and `job options` (its own).
    pub global_options: Vec<(String, String)>,
    pub job_options: Vec<(String, String)>,
}

/// When a job's end ends others of the same file, as fio does (libfio.c `fio_terminate_threads`,
/// called from backend.c when a job exits; HOWTO `exitall`, `exit_what`, `exitall_on_error`).
/// The others stop issuing at once and finish what they have in flight; jobs ended before they
/// started do not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitRule {
    /// The job's reporting group: fio starts a new one at each `stonewall` or `new_group`.
    pub group: u32,
    /// Some job of the file sets `exitall`: fio then acts at every job's end (the flag is global).
    pub on_end: bool,
    /// The job's `exitall_on_error`: act when it ends in error.
    pub on_error: bool,
    pub what: ExitWhat,
}

/// fio `exit_what`: which jobs an `exitall` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the ending job's group (fio's default).
    Group,
    /// Every job running now, whatever its group; jobs not yet started run later, as they would.
    Stonewall,
    /// Every job, started or not.
    All,
}

/// How fio samples a job's bandwidth or IOPS for its `bw_min/max/mean/dev/samples` and
/// `iops_*` figures (stat.c `__add_samples`, `add_bw_sample`, `add_iops_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSampling {
    /// One sample per direction per window of the job's measured time in which it completed
    /// I/O: the window's bytes (KiB/s) or I/Os per second, in whole units.
    Window { ms: u64 },
    /// One sample per completed I/O: what fio does when the job writes the matching log per I/O
    /// (`write_bw_log` / `write_iops_log` without `log_avg_msec`, or a compressed log).
    PerIo,
}

impl RateSampling {
    /// fio's `bwavgtime` and `iopsavgtime` default: 500 ms.
    pub const DEFAULT: RateSampling = RateSampling::Window { ms: 500 };
}

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

/// Largest scenario, job or parameter file, each read whole: 16 MiB.
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;
/// Largest trace, read line by line: 64 GiB.
pub(crate) const MAX_TRACE_FILE_BYTES: u64 = 64 << 30;
/// Longest line of a trace: 64 KiB.
pub(crate) const MAX_TRACE_LINE_BYTES: u64 = 64 << 10;

/// Opens an input file: a regular file (not a device such as /dev/zero, a FIFO or a folder) of
/// at most `max_bytes`. Checked before opening, which would wait forever on a FIFO.
pub fn open_input(path: &std::path::Path, max_bytes: u64) -> std::io::Result<std::fs::File> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(invalid("not a regular file (a device, a FIFO or a folder): expected a file".into()));
    }
    if meta.len() > max_bytes {
        return Err(invalid(format!("{} bytes, above the limit of {max_bytes} bytes for this kind of file", meta.len())));
    }
    std::fs::File::open(path)
}

/// A scenario, job or parameter file's text (see [`open_input`]).
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_input(path, MAX_TEXT_FILE_BYTES)?.take(MAX_TEXT_FILE_BYTES).read_to_string(&mut text)?;
    Ok(text)
}

/// "path:line: message", the way every file-format error names its place.
pub(crate) fn at_line(path: &std::path::Path, line: usize, message: impl std::fmt::Display) -> String {
    format!("{}:{line}: {message}", path.display())
}

/// The jobs one file describes (a fio job file's sections, a vdbench run's SDs), by name.
/// [`JobSource::instances`] gives each job's instances, named `job` or `job.clone`.
#[derive(Default)]
struct JobSet {
    jobs: Vec<(String, Box<dyn JobSource>)>,
    /// Per job: the jobs (indices into `jobs`) whose every instance must finish before its
    /// instances start; empty when the set has no ordering.
    after: Vec<Vec<usize>>,
}

impl JobSource for JobSet {
    fn instances(&self) -> Vec<Instance> {
        let mut out: Vec<Instance> = vec![];
        // Per job, the range of its instances in `out`.
        let mut ranges: Vec<std::ops::Range<usize>> = vec![];
        for (k, (name, job)) in self.jobs.iter().enumerate() {
            let after: Vec<usize> = self.after.get(k).into_iter().flatten().flat_map(|&p| ranges[p].clone()).collect();
            let start = out.len();
            for i in job.instances() {
                out.push(Instance { suffix: Some(i.suffix.map_or_else(|| name.clone(), |s| format!("{name}.{s}"))), after: after.clone(), ..i });
            }
            ranges.push(start..out.len());
        }
        out
    }

    fn check_sampling(&self, sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        self.jobs.iter().try_for_each(|(_, j)| j.check_sampling(sample_interval_ns))
    }
}
