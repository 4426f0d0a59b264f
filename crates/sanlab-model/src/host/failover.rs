//! How a host reacts when a path fails: when it hears of a failure the fabric reports, how long
//! it waits for a command on a silently failed path, and how often it probes a dead path.
//!
//! A command lost on a dead path is aborted and retried on another path the PSP chooses (FIXED
//! falls back to its preferred path when that returns, MRU stays, RR skips dead paths). With no
//! usable path left (all paths down, APD) the command waits and is tried again every
//! `path_check`; once the device has had no path for `apd_timeout` its commands fail.

use sanlab_spec::{format_duration, Spec, SpecResult};

/// The fastest path checker: dm-multipath's `polling_interval` is whole seconds (default 5); a
/// checker polling faster than 1 ms is not a real configuration, and at 1 ns with every path down
/// a run retried its commands every nanosecond and never ended (a hang found while fuzzing).
const MIN_PATH_CHECK_NS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug)]
pub struct Failover {
    /// From a reported link failure (RSCN) or return to the host acting on it.
    pub notice_ns: u64,
    /// A command unanswered this long is aborted and retried; a silent failure is found this way.
    pub command_timeout_ns: u64,
    /// How often the path checker probes a dead path (finding a silent return).
    pub path_check_ns: u64,
    /// All paths down this long: commands fail (`u64::MAX`: they queue for ever; 0: at once).
    pub apd_timeout_ns: u64,
}

/// Why an I/O failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// No usable path and the host does not queue (`apd_timeout = "0s"`, dm `no_path_retry = fail`).
    NoPath,
    /// No usable path for `apd_timeout` (ESXi APD timeout, dm `no_path_retry` N × polling).
    ApdTimeout,
    /// The array reported the volume permanently lost.
    Pdl,
}


impl Failover {
    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let notice_ns = spec.duration_ns("notice", Some((10_000_000, "10ms")), "from a reported link failure or return (RSCN) to the host acting on it (ours)")?;
        let command_timeout_ns = spec.duration_ns("command_timeout", Some((30_000_000_000, "30s")), "a command unanswered this long is aborted and retried (Linux sd default 30 s)")?;
        let path_check_ns = spec.duration_ns("path_check", Some((5_000_000_000, "5s")), "path checker interval on a dead path (dm-multipath polling_interval 5 s)")?;
        const APD_DOC: &str = "all paths down this long: commands fail (ESXi Misc.APDTimeout 140 s); \"0s\": at once (dm no_path_retry = fail); \"never\": queue (dm queue_if_no_path)";
        let apd_timeout_ns = spec.duration_or_never_ns("apd_timeout", (140_000_000_000, "140s"), APD_DOC)?;
        spec.finish()?;
        if command_timeout_ns == 0 {
            return Err(spec.error("command_timeout", "must be positive, e.g. \"30s\""));
        }
        if path_check_ns < MIN_PATH_CHECK_NS {
            return Err(spec.error("path_check", format!("{} is faster than any path checker polls: expected at least 1ms (nearest valid: 1ms; dm-multipath's polling_interval is whole seconds, default 5)", format_duration(path_check_ns))));
        }
        Ok(Self { notice_ns, command_timeout_ns, path_check_ns, apd_timeout_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> SpecResult<Failover> {
        let t: toml::Table = text.parse().unwrap();
        Failover::from_spec(Spec::new(&t, "host[0].failover"))
    }

    #[test]
    fn a_path_checker_faster_than_a_millisecond_is_refused() {
        // With every path down, 1 ns retried the commands every nanosecond: the run never ended.
        let e = read("path_check = \"1ns\"").unwrap_err();
        assert_eq!(e.location, "host[0].failover.path_check");
        assert!(e.message.starts_with("1ns is faster than any path checker polls") && e.message.contains("nearest valid: 1ms"), "{}", e.message);
        assert!(read("path_check = \"999us\"").is_err());
        assert_eq!(read("path_check = \"1ms\"").unwrap().path_check_ns, 1_000_000);
        assert!(read("command_timeout = \"0s\"").unwrap_err().message.contains("must be positive"));
    }
}
