//! VMW_PSP_FIXED: all I/O on the preferred path while it works; on failure the first other
//! working path; back to the preferred path when it returns (fail-back).

use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "fixed",
    summary: "VMW_PSP_FIXED: preferred path, fail-back when it returns",
    build,
};

struct Fixed {
    preferred_name: Option<String>,
    preferred: Option<usize>,
    current: Option<usize>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let preferred_name = spec.opt_string("preferred", "preferred path name; default: the first active-optimized path")?;
    Ok(Box::new(Fixed { preferred_name, preferred: None, current: None }))
}

impl PathSelector for Fixed {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        if let Some(want) = &self.preferred_name {
            let i = names.iter().position(|n| n == want).ok_or_else(|| {
                format!("preferred path `{want}` is not a path of this device{}", did_you_mean(want, names.iter().map(String::as_str)))
            })?;
            self.preferred = Some(i);
        }
        Ok(())
    }

    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, false);
        // Without a designated path, the host picks the first optimized path it finds at boot.
        let preferred = *self.preferred.get_or_insert(eligible.next_from(paths, 0)?);
        let pick = if eligible.contains(&paths[preferred]) {
            preferred
        } else {
            match self.current {
                Some(c) if eligible.contains(&paths[c]) => c,
                _ => eligible.next_from(paths, 0)?,
            }
        };
        if self.current.is_some_and(|c| c != pick) {
            let what = if pick == preferred { "fail-back to preferred path" } else { "failover" };
            log.push(PspEvent { t_ns: now, event: what.into(), paths: vec![pick] });
        }
        self.current = Some(pick);
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn stays_on_preferred_fails_over_and_back() {
        let mut p = build("fixed", "");
        p.attach(&["a".into(), "b".into(), "c".into()]).unwrap();
        let mut paths = paths(&[(ActiveNonOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(picks(p.as_mut(), &paths, 3), vec![1, 1, 1]);
        paths[1].up = false;
        assert_eq!(picks(p.as_mut(), &paths, 2), vec![2, 2]);
        paths[1].up = true;
        assert_eq!(picks(p.as_mut(), &paths, 1), vec![1]);
    }

    #[test]
    fn unknown_preferred_path_is_an_error() {
        let mut p = build("fixed", "preferred = \"vmhba1:C0:T0:L9\"");
        let e = p.attach(&["vmhba1:C0:T0:L1".into()]).unwrap_err();
        assert!(e.contains("did you mean `vmhba1:C0:T0:L1`"), "{e}");
    }
}
