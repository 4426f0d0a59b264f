//! Linux dm-multipath `historical-service-time` (drivers/md/dm-ps-historical-service-time.c,
//! since 5.8): each path keeps a time-weighted moving average of its service time, and the path of
//! the group with the lowest `(1 + in flight) × average` takes the I/O.
//!
//! As the kernel does: a completion's sample is `now − max(start, last_finish)` (as if the path
//! served one request at a time); the average moves by `w = (base_weight / 1024)^(bucket + 1)`,
//! `bucket = sample_ns >> 24` (16.8 ms buckets; from bucket 63, about 1.06 s, the sample replaces
//! the history); the average starts at 1 ns. A path is stale once `last_finish + valid paths ×
//! average` has passed: an idle stale path is picked to probe it (the most stale first), so a path
//! too slow to win is still measured now and then; a loaded stale winner only competes on
//! outstanding count. With `threshold_multiplier` > 1, paths whose averages are within that factor
//! compare on outstanding count alone.

use super::dm_groups::{least, DmGroups};
use super::{PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "dm_historical_service_time",
    summary: "Linux dm-multipath historical-service-time: time-weighted EMA of service time × (1 + in flight), probing stale paths",
    build,
};

const BUCKET_SHIFT: u32 = 24;
const BUCKETS: u64 = 64;

#[derive(Clone, Copy, Default)]
struct History {
    average_ns: f64,
    last_finish_ns: SimTime,
}

struct Hst {
    groups: DmGroups,
    base: f64,
    threshold_multiplier: f64,
    history: Vec<History>,
    next: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let groups = DmGroups::read(spec)?;
    let base = spec.int("base_weight", Some(972), 0, 1023, "weight of history per 16.8 ms bucket, in 1/1024 (0: no history)")?;
    let threshold_multiplier = spec.int("threshold_multiplier", Some(0), 0, 1_000_000, "averages within this factor compare on outstanding count only (0, 1: off)")?;
    Ok(Box::new(Hst { groups, base: base as f64 / 1024.0, threshold_multiplier: threshold_multiplier as f64, history: vec![], next: 0 }))
}

impl Hst {
    fn stale_after(&self, i: usize, valid: usize) -> f64 {
        self.history[i].last_finish_ns as f64 + valid as f64 * self.history[i].average_ns
    }
}

impl PathSelector for Hst {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.history = vec![History { average_ns: 1.0, last_finish_ns: 0 }; names.len()];
        Ok(())
    }

    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let n = paths.len();
        let in_group = self.groups.choose(now, paths)?;
        let valid = (0..n).filter(|&i| in_group.has(i, &paths[i])).count();
        let stale = |i: usize| (now as f64) >= self.stale_after(i, valid);
        // An idle stale path gets a probe; the most stale first.
        let probe = least(n, self.next, |i| in_group.has(i, &paths[i]) && paths[i].outstanding == 0 && stale(i), |i| self.stale_after(i, valid));
        let pick = match probe {
            Some(p) => p,
            None => {
                let best = least(n, self.next, |i| in_group.has(i, &paths[i]), |i| f64::from(1 + paths[i].outstanding) * self.history[i].average_ns)?;
                let lowest = (0..n).filter(|&i| in_group.has(i, &paths[i])).map(|i| self.history[i].average_ns).fold(f64::INFINITY, f64::min);
                let close = self.threshold_multiplier > 1.0 && self.history[best].average_ns <= lowest * self.threshold_multiplier;
                if stale(best) || close {
                    let near = |i: usize| in_group.has(i, &paths[i]) && (!close || self.history[i].average_ns <= lowest * self.threshold_multiplier);
                    least(n, self.next, near, |i| f64::from(paths[i].outstanding))?
                } else {
                    best
                }
            }
        };
        self.next = (pick + 1) % n;
        Some(pick)
    }

    fn on_complete(&mut self, now: SimTime, path: usize, latency_ns: u64, _size_bytes: u32) {
        let h = &mut self.history[path];
        let start = now - latency_ns;
        let sample_ns = now - start.max(h.last_finish_ns);
        let bucket = (sample_ns >> BUCKET_SHIFT).min(BUCKETS - 1);
        let weight = if bucket == BUCKETS - 1 { 0.0 } else { self.base.powi(bucket as i32 + 1) };
        h.average_ns = h.average_ns * weight + sample_ns as f64 * (1.0 - weight);
        h.last_finish_ns = now;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};
    use sanlab_des::NS_PER_MS;

    #[test]
    fn prefers_the_faster_path_and_probes_the_slower() {
        let p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut s = build("dm_historical_service_time", "");
        s.attach(&["fast".into(), "slow".into()]).unwrap();
        let mut log = vec![];
        let mut now = 0;
        let mut counts = [0; 2];
        for _ in 0..2000 {
            let i = s.select(now, 4096, &p, &mut log).unwrap();
            counts[i] += 1;
            let latency = if i == 0 { NS_PER_MS / 10 } else { 2 * NS_PER_MS };
            now += latency;
            s.on_complete(now, i, latency, 4096);
        }
        assert!(counts[0] > 1800, "{counts:?}");
        assert!(counts[1] >= 5, "the slow path is still probed: {counts:?}");
    }

    #[test]
    fn the_average_is_time_weighted() {
        use super::*;
        let t = toml::Table::new();
        let mut s = Hst { groups: DmGroups::read(&Spec::new(&t, "psp")).unwrap(), base: 972.0 / 1024.0, threshold_multiplier: 0.0, history: vec![], next: 0 };
        s.attach(&["a".into()]).unwrap();
        let w: f64 = 972.0 / 1024.0;
        // A 1 ms sample is bucket 0: the history keeps w.
        s.on_complete(NS_PER_MS, 0, NS_PER_MS, 4096);
        let after_1ms = w * 1.0 + (1.0 - w) * 1e6;
        assert!((s.history[0].average_ns - after_1ms).abs() < 1e-6);
        // A 1 s sample is bucket 59 (1e9 >> 24): the history keeps w^60, about 4 %.
        s.on_complete(NS_PER_MS + 1_000_000_000, 0, 1_000_000_000, 4096);
        let keep = w.powi(60);
        assert!((s.history[0].average_ns - (after_1ms * keep + 1e9 * (1.0 - keep))).abs() < 1e-3);
        // A sample that started before the previous finish counts from that finish.
        s.on_complete(NS_PER_MS + 1_000_000_000 + 10, 0, 500, 4096);
        assert_eq!(s.history[0].last_finish_ns, NS_PER_MS + 1_000_000_010);
    }
}
