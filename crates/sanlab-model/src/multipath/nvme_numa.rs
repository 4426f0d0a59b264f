//! Linux NVMe native multipath, iopolicy `numa` (the default; drivers/nvme/host/multipath.c
//! `__nvme_find_path`): the optimized path nearest the submitting CPU's NUMA node, else the
//! nearest non-optimized one, cached until it stops being optimized. sanlab's hosts have one NUMA
//! node (ours: every distance is equal), so this is the first optimized path in path order, kept
//! while it stays optimized and up. ANA states map to ALUA's: optimized = AO, non-optimized = ANO,
//! inaccessible, persistent loss and change are never used.

use super::{Alua, Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "nvme_numa",
    summary: "Linux NVMe iopolicy numa: the nearest optimized path, kept while optimized (one NUMA node)",
    build,
};

struct NvmeNuma {
    current: Option<usize>,
}

fn build(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(NvmeNuma { current: None }))
}

impl PathSelector for NvmeNuma {
    fn select(&mut self, _now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let keep = self.current.filter(|&c| paths[c].carries_io() && paths[c].alua == Alua::ActiveOptimized);
        let pick = match keep {
            Some(c) => c,
            None => Eligible::of(paths, false).next_from(paths, 0)?,
        };
        self.current = Some(pick);
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn sticks_to_the_first_optimized_path() {
        let mut p = paths(&[(ActiveNonOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut s = build("nvme_numa", "");
        assert_eq!(picks(s.as_mut(), &p, 3), vec![1, 1, 1]);
        p[1].up = false;
        assert_eq!(picks(s.as_mut(), &p, 2), vec![2, 2]);
        p[1].up = true;
        assert_eq!(picks(s.as_mut(), &p, 1), vec![2], "no failback while the current path stays optimized");
        p[2].alua = ActiveNonOptimized;
        assert_eq!(picks(s.as_mut(), &p, 1), vec![1]);
    }
}
