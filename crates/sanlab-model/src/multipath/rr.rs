//! VMW_PSP_RR with `type=iops` or `type=bytes`: rotate through the eligible paths, moving to the
//! next one after `iops` I/Os or `bytes` bytes. `use_ano` adds active-non-optimized paths.

use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "rr",
    summary: "VMW_PSP_RR: round robin, switch after `iops` I/Os or `bytes` bytes",
    build,
};

enum Limit {
    Ios(u64),
    Bytes(u64),
}

struct RoundRobin {
    limit: Limit,
    use_ano: bool,
    current: usize,
    since_switch: u64,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let switch = spec.choice("type", &["iops", "bytes"], Some("iops"), "switch on I/O count or on bytes")?;
    // Ranges of the vSphere API (HppLogicalUnitPolicy); defaults as `esxcli storage nmp device list` shows.
    let iops = spec.int("iops", Some(1000), 1, 10_000, "I/Os before moving to the next path (type=iops)")?;
    let bytes = spec.int("bytes", Some(10_485_760), 1, 104_857_600, "bytes before moving to the next path (type=bytes)")?;
    let use_ano = spec.boolean("use_ano", false, "also use active-non-optimized paths")?;
    if !spec.is_describing() && switch == "iops" && spec.has("bytes") {
        return Err(spec.error("bytes", "is only used with type = \"bytes\"; set type = \"bytes\" or remove it"));
    }
    if !spec.is_describing() && switch == "bytes" && spec.has("iops") {
        return Err(spec.error("iops", "is only used with type = \"iops\"; remove it or set type = \"iops\""));
    }
    let limit = if switch == "iops" { Limit::Ios(iops as u64) } else { Limit::Bytes(bytes as u64) };
    Ok(Box::new(RoundRobin { limit, use_ano, current: usize::MAX, since_switch: 0 }))
}

impl PathSelector for RoundRobin {
    fn select(&mut self, _now: SimTime, size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, self.use_ano);
        let used_up = match self.limit {
            Limit::Ios(n) => self.since_switch >= n,
            Limit::Bytes(n) => self.since_switch >= n,
        };
        if self.current >= paths.len() || used_up || !eligible.contains(&paths[self.current]) {
            let start = if self.current >= paths.len() { 0 } else { self.current + 1 };
            self.current = eligible.next_from(paths, start)?;
            self.since_switch = 0;
        }
        self.since_switch += match self.limit {
            Limit::Ios(_) => 1,
            Limit::Bytes(_) => u64::from(size),
        };
        Some(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn iops_1_rotates_over_optimized_paths_only() {
        let mut p = build("rr", "iops = 1");
        let paths = paths(&[(ActiveOptimized, true), (ActiveNonOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(picks(p.as_mut(), &paths, 4), vec![0, 2, 0, 2]);
    }

    #[test]
    fn use_ano_and_iops_n() {
        let mut p = build("rr", "iops = 2\nuse_ano = 1");
        let paths = paths(&[(ActiveOptimized, true), (ActiveNonOptimized, true)]);
        assert_eq!(picks(p.as_mut(), &paths, 5), vec![0, 0, 1, 1, 0]);
    }

    #[test]
    fn bytes_limit() {
        let mut p = build("rr", "type = \"bytes\"\nbytes = 8192");
        let paths = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        // 4 KiB I/Os: two per path.
        assert_eq!(picks(p.as_mut(), &paths, 6), vec![0, 0, 1, 1, 0, 0]);
    }

    #[test]
    fn falls_back_to_non_optimized_when_no_optimized_path_is_up() {
        let mut p = build("rr", "");
        let paths = paths(&[(ActiveOptimized, false), (ActiveNonOptimized, true), (Standby, true)]);
        assert_eq!(picks(p.as_mut(), &paths, 2), vec![1, 1]);
    }
}
