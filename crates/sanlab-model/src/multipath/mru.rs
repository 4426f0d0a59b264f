//! VMW_PSP_MRU: stays on the path it uses until that path fails; no fail-back. With ALUA it moves
//! from a non-optimized path to an optimized one when one appears.
//!
//! Windows MPIO's Failover Only is the same policy: one active path, the others stand by, and "a
//! failed path on return goes back to the standby role" (Microsoft DSM documentation).

use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "mru",
    summary: "VMW_PSP_MRU: most recently used path, no fail-back",
    build,
};
pub const FAILOVER_ONLY_KIND: Kind<dyn PathSelector> = Kind {
    name: "mpio_failover_only",
    summary: "Windows MPIO Failover Only: one active path, the others standby, no fail-back (as MRU)",
    build,
};

struct Mru {
    current: Option<usize>,
}

fn build(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(Mru { current: None }))
}

impl PathSelector for Mru {
    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, false);
        // A non-optimized current path stops being eligible as soon as an optimized one is up.
        let keep = self.current.filter(|&c| eligible.contains(&paths[c]));
        let pick = match keep {
            Some(c) => c,
            None => {
                let p = eligible.next_from(paths, 0)?;
                if self.current.is_some() {
                    log.push(PspEvent { t_ns: now, event: "failover".into(), paths: vec![p] });
                }
                p
            }
        };
        self.current = Some(pick);
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn no_fail_back() {
        let mut p = build("mru", "");
        let mut paths = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(picks(p.as_mut(), &paths, 2), vec![0, 0]);
        paths[0].up = false;
        assert_eq!(picks(p.as_mut(), &paths, 1), vec![1]);
        paths[0].up = true;
        assert_eq!(picks(p.as_mut(), &paths, 2), vec![1, 1]);
    }

    #[test]
    fn moves_from_non_optimized_to_optimized() {
        let mut p = build("mru", "");
        let mut paths = paths(&[(ActiveNonOptimized, true), (ActiveOptimized, false)]);
        assert_eq!(picks(p.as_mut(), &paths, 1), vec![0]);
        paths[1].up = true;
        assert_eq!(picks(p.as_mut(), &paths, 1), vec![1]);
    }
}
