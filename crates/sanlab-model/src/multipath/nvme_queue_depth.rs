//! Linux NVMe native multipath, iopolicy `queue-depth` (multipath.c `nvme_queue_depth_path`,
//! nvme.git f227345f0a70): the optimized path whose controller has the fewest requests in flight,
//! counted per controller over every namespace on it (`nr_active`); a controller with none is taken
//! at once; non-optimized paths only when no optimized one is left; ties to the first in order.
//! sanlab's controller is the path's link: every device whose paths share a link shares its count.

use super::dm_groups::least;
use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "nvme_queue_depth",
    summary: "Linux NVMe iopolicy queue-depth: the optimized path whose controller has the fewest requests in flight",
    build,
};

struct NvmeQueueDepth;

fn build(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(NvmeQueueDepth))
}

impl PathSelector for NvmeQueueDepth {
    fn select(&mut self, _now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, false);
        least(paths.len(), 0, |i| eligible.contains(&paths[i]), |i| f64::from(paths[i].controller_outstanding))
    }

    fn reads_controller_load(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn fewest_in_flight_on_the_controller() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true), (ActiveNonOptimized, true)]);
        let mut s = build("nvme_queue_depth", "");
        assert_eq!(picks(s.as_mut(), &p, 2), vec![0, 0], "ties to the first");
        p[0].controller_outstanding = 5;
        p[1].controller_outstanding = 2;
        assert_eq!(picks(s.as_mut(), &p, 1), vec![1]);
        p[0].up = false;
        p[1].up = false;
        assert_eq!(picks(s.as_mut(), &p, 1), vec![2]);
    }
}
