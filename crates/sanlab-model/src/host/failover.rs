//! How a host reacts when a path fails: when it hears of a failure the fabric reports, how long
//! it waits for a command on a silently failed path, and how often it probes a dead path.
//!
//! A command lost on a dead path is aborted and retried on another path the PSP chooses (FIXED
//! falls back to its preferred path when that returns, MRU stays, RR skips dead paths). With no
//! usable path left the command waits and is tried again every `path_check` (all paths down:
//! queued; the APD timeout that fails it is not modelled yet).

use crate::spec::{Spec, SpecResult};

#[derive(Clone, Copy, Debug)]
pub struct Failover {
    /// From a reported link failure (RSCN) or return to the host acting on it.
    pub notice_ns: u64,
    /// A command unanswered this long is aborted and retried; a silent failure is found this way.
    pub command_timeout_ns: u64,
    /// How often the path checker probes a dead path (finding a silent return).
    pub path_check_ns: u64,
}

impl Failover {
    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let notice_ns = spec.duration_ns("notice", Some((10_000_000, "10ms")), "from a reported link failure or return (RSCN) to the host acting on it (ours)")?;
        let command_timeout_ns = spec.duration_ns("command_timeout", Some((30_000_000_000, "30s")), "a command unanswered this long is aborted and retried (Linux sd default 30 s)")?;
        let path_check_ns = spec.duration_ns("path_check", Some((5_000_000_000, "5s")), "path checker interval on a dead path (dm-multipath polling_interval 5 s)")?;
        spec.finish()?;
        for (key, ns) in [("command_timeout", command_timeout_ns), ("path_check", path_check_ns)] {
            if ns == 0 {
                return Err(spec.error(key, "must be positive, e.g. \"5s\""));
            }
        }
        Ok(Self { notice_ns, command_timeout_ns, path_check_ns })
    }
}
