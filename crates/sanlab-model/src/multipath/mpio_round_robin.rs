//! Windows MPIO (Microsoft DSM) Round Robin and Round Robin with Subset: every I/O to the next
//! path. With Subset, only the primary paths rotate, the others stand by until every primary path
//! has failed, and I/O returns to the primaries when one comes back. The primaries are the paths
//! named in `subset`, by default the active-optimized ones: MSDSM's default for ALUA disks is Round
//! Robin with Subset over the optimized paths (mpclaim). Ours: plain Round Robin on an ALUA disk uses
//! the optimized paths, and the non-optimized ones when none is left, as every policy here does.

use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind { name: "mpio_round_robin", summary: "Windows MPIO Round Robin: every I/O to the next path", build };
pub const SUBSET_KIND: Kind<dyn PathSelector> = Kind {
    name: "mpio_round_robin_subset",
    summary: "Windows MPIO Round Robin with Subset: rotate over the primary paths, the rest stand by",
    build: build_subset,
};

struct MpioRoundRobin {
    /// Primary path names (Round Robin with Subset); resolved at attach.
    subset_names: Option<Vec<String>>,
    primary: Vec<bool>,
    current: Option<usize>,
}

fn build(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(Box::new(MpioRoundRobin { subset_names: None, primary: vec![], current: None }))
}

fn build_subset(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let names = spec.strings("subset", "primary path names; default: the active-optimized paths")?;
    Ok(Box::new(MpioRoundRobin { subset_names: Some(names), primary: vec![], current: None }))
}

impl PathSelector for MpioRoundRobin {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.primary = vec![false; names.len()];
        for want in self.subset_names.iter().flatten() {
            let i = names.iter().position(|n| n == want).ok_or_else(|| format!("subset names `{want}`, which is not a path of this device{}", did_you_mean(want, names.iter().map(String::as_str))))?;
            self.primary[i] = true;
        }
        Ok(())
    }

    fn select(&mut self, _now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, false);
        let named = self.subset_names.as_ref().is_some_and(|s| !s.is_empty());
        let primary = |i: usize| if named { self.primary[i] && paths[i].carries_io() } else { eligible.contains(&paths[i]) };
        let any_primary = (0..paths.len()).any(primary);
        let candidate = |i: usize| if any_primary { primary(i) } else { paths[i].carries_io() };
        let n = paths.len();
        let start = self.current.map_or(0, |c| c + 1);
        let pick = (0..n).map(|k| (start + k) % n).find(|&i| candidate(i))?;
        self.current = Some(pick);
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn round_robin_and_subset() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(picks(build("mpio_round_robin", "").as_mut(), &p, 4), vec![0, 1, 2, 0]);
        let mut s = build("mpio_round_robin_subset", "subset = [\"a\", \"c\"]");
        s.attach(&["a".into(), "b".into(), "c".into()]).unwrap();
        assert_eq!(picks(s.as_mut(), &p, 3), vec![0, 2, 0]);
        p[0].up = false;
        p[2].up = false;
        assert_eq!(picks(s.as_mut(), &p, 2), vec![1, 1], "the standby path once every primary failed");
        p[2].up = true;
        assert_eq!(picks(s.as_mut(), &p, 2), vec![2, 2], "back to a primary when one returns");
        let e = build("mpio_round_robin_subset", "subset = [\"x\"]").attach(&["a".into()]).unwrap_err();
        assert!(e.contains("`x`, which is not a path"), "{e}");
    }
}
