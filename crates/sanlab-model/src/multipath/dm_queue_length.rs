//! Linux dm-multipath `queue-length` (drivers/md/dm-ps-queue-length.c): the path of the group with
//! the fewest I/Os in flight; the chosen path goes to the tail of the list, so ties rotate. I/O size
//! is ignored.

use super::dm_groups::{least, DmGroups};
use super::{PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "dm_queue_length",
    summary: "Linux dm-multipath queue-length: fewest I/Os in flight within the path group",
    build,
};

struct DmQueueLength {
    groups: DmGroups,
    next: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(DmQueueLength { groups: DmGroups::read(spec)?, next: 0 }))
}

impl PathSelector for DmQueueLength {
    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let in_group = self.groups.choose(now, paths)?;
        let pick = least(paths.len(), self.next, |i| in_group.has(i, &paths[i]), |i| f64::from(paths[i].outstanding))?;
        self.next = (pick + 1) % paths.len();
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};
    use sanlab_des::SimTime;

    #[test]
    fn fewest_in_flight_with_ties_rotating() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut s = build("dm_queue_length", "");
        assert_eq!(picks(s.as_mut(), &p, 3), vec![0, 1, 2], "all idle: ties rotate");
        p[0].outstanding = 3;
        p[2].outstanding = 1;
        assert_eq!(s.select(0 as SimTime, 4096, &p, &mut vec![]), Some(1));
    }
}
