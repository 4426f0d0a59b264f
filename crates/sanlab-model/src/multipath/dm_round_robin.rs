//! Linux dm-multipath `round-robin` (drivers/md/dm-ps-round-robin.c): within the path group in use,
//! the head path of the list takes the I/O and goes to the tail; multipath.conf's `rr_min_io_rq`
//! (request-based dm, default 1) I/Os go down a path before the next.

use super::dm_groups::DmGroups;
use super::{PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "dm_round_robin",
    summary: "Linux dm-multipath round-robin: rr_min_io_rq I/Os per path within the path group",
    build,
};

struct DmRoundRobin {
    groups: DmGroups,
    rr_min_io_rq: u32,
    current: usize,
    sent: u32,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let groups = DmGroups::read(spec)?;
    let rr_min_io_rq = spec.int("rr_min_io_rq", Some(1), 1, 1_000_000, "I/Os to a path before moving to the next (multipath.conf, request-based)")? as u32;
    Ok(Box::new(DmRoundRobin { groups, rr_min_io_rq, current: usize::MAX, sent: 0 }))
}

impl PathSelector for DmRoundRobin {
    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let in_group = self.groups.choose(now, paths)?;
        let n = paths.len();
        let keep = self.current < n && in_group.has(self.current, &paths[self.current]) && self.sent < self.rr_min_io_rq;
        if !keep {
            let start = if self.current < n { self.current + 1 } else { 0 };
            self.current = (0..n).map(|k| (start + k) % n).find(|&i| in_group.has(i, &paths[i]))?;
            self.sent = 0;
        }
        self.sent += 1;
        Some(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn rotates_within_the_optimized_group() {
        let p = paths(&[(ActiveOptimized, true), (ActiveNonOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(picks(build("dm_round_robin", "").as_mut(), &p, 4), vec![0, 2, 0, 2]);
        assert_eq!(picks(build("dm_round_robin", "rr_min_io_rq = 2").as_mut(), &p, 5), vec![0, 0, 2, 2, 0]);
        assert_eq!(picks(build("dm_round_robin", "path_grouping_policy = \"multibus\"").as_mut(), &p, 3), vec![0, 1, 2]);
    }
}
