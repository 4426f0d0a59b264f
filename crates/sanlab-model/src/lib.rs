//! The storage I/O path, one module per stage:
//!
//! ```text
//! workload → host (VM queues, device queue, adapter, splitting) → multipath (ALUA, PSP)
//!          → fabric (links) → array (media, replication)
//! ```
//! `engine` carries requests along that chain; `report` turns a finished run into results;
//! `noise` gives latency parameters their distributions. The workloads (fio, vdbench, traces)
//! come from the `sanlab-workload` crate; every kind reads its parameters through the strict
//! reader of the `sanlab-spec` crate.

pub mod array;
pub mod engine;
pub mod fabric;
pub mod fault;
pub mod host;
pub mod io;
pub mod multipath;
pub mod noise;
pub mod report;
pub mod parts;
pub mod topology;

pub use engine::World;

/// Every kind of every extension point, documented (for `sanlab kinds`).
pub fn all_kinds() -> Vec<sanlab_spec::KindDoc> {
    let mut out = sanlab_workload::kinds();
    out.extend(host::scheduler::kinds());
    out.extend(host::flow_control::kinds());
    out.extend(multipath::kinds());
    out.extend(array::kinds());
    out.extend(noise::kinds());
    out.extend(fault::kinds());
    out
}
