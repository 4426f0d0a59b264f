//! Windows MPIO (Microsoft DSM) policies that send each I/O down the path with the least of
//! something: Least Queue Depth (fewest outstanding requests, size ignored), Least Blocks (fewest
//! outstanding bytes) and Weighted Paths (the least administrator-given weight; VDS
//! `VDS_LBP_WEIGHTED_PATHS`). Ours where Microsoft is silent: ties rotate (Dell's MD-series DSM
//! resolves weight ties by round robin), and on an ALUA disk the optimized paths are used, the
//! non-optimized ones when none is left.

use super::dm_groups::least;
use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const QUEUE_DEPTH_KIND: Kind<dyn PathSelector> = Kind {
    name: "mpio_least_queue_depth",
    summary: "Windows MPIO Least Queue Depth: fewest outstanding requests",
    build: build_queue_depth,
};
pub const BLOCKS_KIND: Kind<dyn PathSelector> = Kind { name: "mpio_least_blocks", summary: "Windows MPIO Least Blocks: fewest outstanding bytes", build: build_blocks };
pub const WEIGHTED_KIND: Kind<dyn PathSelector> = Kind {
    name: "mpio_weighted_paths",
    summary: "Windows MPIO Weighted Paths: the path with the least weight",
    build: build_weighted,
};

#[derive(Clone, Copy)]
enum Measure {
    Requests,
    Bytes,
    Weight,
}

struct MpioLeast {
    measure: Measure,
    weight_by_name: Vec<(String, u32)>,
    weight: Vec<u32>,
    next: usize,
}

fn boxed(measure: Measure, weight_by_name: Vec<(String, u32)>) -> Box<dyn PathSelector> {
    Box::new(MpioLeast { measure, weight_by_name, weight: vec![], next: 0 })
}

fn build_queue_depth(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(boxed(Measure::Requests, vec![]))
}

fn build_blocks(_spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    Ok(boxed(Measure::Bytes, vec![]))
}

fn build_weighted(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let table = spec.table("weights", "per path name, 0..=1000000 (default 0): the least weight carries the I/O")?;
    let mut weights = vec![];
    for (name, _) in table.entries() {
        weights.push((name.to_string(), table.int(name, None, 0, 1_000_000, "weight of this path")? as u32));
    }
    table.finish()?;
    Ok(boxed(Measure::Weight, weights))
}

impl PathSelector for MpioLeast {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.weight = vec![0; names.len()];
        for (want, w) in &self.weight_by_name {
            let i = names.iter().position(|n| n == want).ok_or_else(|| format!("weights names `{want}`, which is not a path of this device{}", did_you_mean(want, names.iter().map(String::as_str))))?;
            self.weight[i] = *w;
        }
        Ok(())
    }

    fn select(&mut self, _now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, false);
        let key = |i: usize| match self.measure {
            Measure::Requests => f64::from(paths[i].outstanding),
            Measure::Bytes => paths[i].outstanding_bytes as f64,
            Measure::Weight => f64::from(self.weight[i]),
        };
        let pick = least(paths.len(), self.next, |i| eligible.contains(&paths[i]), key)?;
        self.next = (pick + 1) % paths.len();
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn least_requests_bytes_and_weight() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        p[0].outstanding = 1;
        p[0].outstanding_bytes = 4096;
        p[1].outstanding = 2;
        p[1].outstanding_bytes = 1024;
        p[2].outstanding = 1;
        p[2].outstanding_bytes = 65536;
        assert_eq!(picks(build("mpio_least_queue_depth", "").as_mut(), &p, 2), vec![0, 2], "ties rotate");
        assert_eq!(picks(build("mpio_least_blocks", "").as_mut(), &p, 2), vec![1, 1]);
        let mut w = build("mpio_weighted_paths", "weights = { a = 5, b = 1, c = 1 }");
        w.attach(&["a".into(), "b".into(), "c".into()]).unwrap();
        assert_eq!(picks(w.as_mut(), &p, 3), vec![1, 2, 1]);
        p[1].up = false;
        p[2].up = false;
        assert_eq!(picks(w.as_mut(), &p, 1), vec![0]);
    }
}
