//! Linux NVMe native multipath, iopolicy `round-robin` (multipath.c `nvme_round_robin_path`): from
//! the current path, the next optimized path in order; if none, the current one when it is
//! optimized; else the next non-optimized one. One I/O per path, no repeat count.

use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "nvme_round_robin",
    summary: "Linux NVMe iopolicy round-robin: the next optimized path for every I/O",
    build,
};

struct NvmeRoundRobin {
    current: Option<usize>,
}

fn build(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(NvmeRoundRobin { current: None }))
}

impl PathSelector for NvmeRoundRobin {
    fn select(&mut self, _now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        // next_from wraps around to the current path last, as the kernel falls back to it.
        let start = self.current.map_or(0, |c| c + 1);
        let pick = Eligible::of(paths, false).next_from(paths, start)?;
        self.current = Some(pick);
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn every_io_to_the_next_optimized_path() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveNonOptimized, true), (ActiveOptimized, true)]);
        let mut s = build("nvme_round_robin", "");
        assert_eq!(picks(s.as_mut(), &p, 4), vec![0, 2, 0, 2]);
        p[0].up = false;
        assert_eq!(picks(s.as_mut(), &p, 2), vec![2, 2], "a single optimized path keeps the I/O");
        p[2].up = false;
        assert_eq!(picks(s.as_mut(), &p, 1), vec![1], "then the non-optimized one");
    }
}
