//! sanlab's own selector: send I/O over every path except those whose latency is higher than the
//! best path's by a margin that matters *and* by more than noise explains; keep probing the
//! excluded ones. Written for seed 000's questions about latency-based policies: react to a
//! degrading path in well under a second, never flap between paths that differ by noise (0.265 vs
//! 0.260 ms), keep using every good path at low load, prefer the near array's paths without ALUA,
//! and notice when an excluded path recovers. docs/models/multipath.md gives the reasoning.
//!
//! Per path, completions feed an exponentially time-decayed mean and variance of latency
//! (half-life `half_life`, so old evidence fades by time, not by I/O count, and the estimate moves
//! as fast at 100 IOPS as at 100,000). With weights w (1 for a new sample, halved every half-life),
//! the effective sample count is (Σw)² / Σw² and the standard error of the mean √(var / n_eff).
//!
//! A path j is excluded when it has `min_samples` effective samples and
//! * practically slower: mean_j − mean_best > max(`margin`, `margin_ratio` × mean_best), and
//! * significantly slower: mean_j − z·se_j > mean_best + z·se_best (z = `confidence_z`).
//!
//! It returns when mean_j − mean_best falls below half the margin (hysteresis), judged on its mean
//! alone: an excluded path gets one I/O every `probe_interval` when it has nothing in flight, so
//! its estimate stays fresh, but the probes alone are too few for a confidence bound.
//! The paths kept share the I/O by fewest outstanding requests, ties rotating.

use super::dm_groups::least;
use super::{Eligible, PathSelector, PathState, PspEvent};
use crate::spec::{Kind, Spec, SpecResult};
use sanlab_des::{SimTime, NS_PER_MS, NS_PER_US};

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "significant_latency",
    summary: "sanlab's: avoid paths slower by a practical margin and beyond noise (confidence bounds, hysteresis, probes)",
    build,
};

/// Time-decayed moments of one path's latency.
#[derive(Clone, Copy, Default)]
struct Moments {
    weight: f64,
    weight_sq: f64,
    sum_ns: f64,
    sum_sq_ns: f64,
    last_ns: SimTime,
}

impl Moments {
    fn add(&mut self, now: SimTime, latency_ns: f64, half_life_ns: f64) {
        let f = 0.5f64.powf((now - self.last_ns) as f64 / half_life_ns);
        self.weight = self.weight * f + 1.0;
        self.weight_sq = self.weight_sq * f * f + 1.0;
        self.sum_ns = self.sum_ns * f + latency_ns;
        self.sum_sq_ns = self.sum_sq_ns * f + latency_ns * latency_ns;
        self.last_ns = now;
    }

    fn mean_ns(&self) -> f64 {
        self.sum_ns / self.weight
    }

    fn samples(&self) -> f64 {
        if self.weight_sq == 0.0 { 0.0 } else { self.weight * self.weight / self.weight_sq }
    }

    fn standard_error_ns(&self) -> f64 {
        let variance = (self.sum_sq_ns / self.weight - self.mean_ns().powi(2)).max(0.0);
        (variance / self.samples()).sqrt()
    }
}

struct SignificantLatency {
    use_ano: bool,
    half_life_ns: f64,
    margin_ns: f64,
    margin_ratio: f64,
    z: f64,
    min_samples: f64,
    probe_interval_ns: SimTime,
    moments: Vec<Moments>,
    excluded: Vec<bool>,
    last_probe_ns: Vec<SimTime>,
    next: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let use_ano = spec.boolean("use_ano", false, "also use active-non-optimized paths")?;
    let half_life_ns = spec.duration_ns("half_life", Some((2_000 * NS_PER_MS, "2s")), "how fast old latency evidence fades")?;
    let margin_ns = spec.duration_ns("margin", Some((20 * NS_PER_US, "20us")), "smallest latency difference worth avoiding a path for")?;
    let margin_ratio = spec.float("margin_ratio", 0.2, 0.0, 100.0, "... or this fraction of the best path's latency, whichever is larger")?;
    let z = spec.float("confidence_z", 3.0, 0.0, 10.0, "standard errors the difference must exceed on both sides")?;
    let min_samples = spec.int("min_samples", Some(8), 1, 1_000_000, "effective samples before a path is judged")?;
    let probe_interval_ns = spec.duration_ns("probe_interval", Some((1_000 * NS_PER_MS, "1s")), "one I/O this often to an excluded path")?;
    for (key, value) in [("half_life", half_life_ns), ("probe_interval", probe_interval_ns)] {
        if value == 0 {
            return Err(spec.error(key, "must be positive, e.g. \"1s\""));
        }
    }
    Ok(Box::new(SignificantLatency {
        use_ano,
        half_life_ns: half_life_ns as f64,
        margin_ns: margin_ns as f64,
        margin_ratio,
        z,
        min_samples: min_samples as f64,
        probe_interval_ns,
        moments: vec![],
        excluded: vec![],
        last_probe_ns: vec![],
        next: 0,
    }))
}

impl SignificantLatency {
    /// Updates the excluded set; true when it changed.
    fn judge(&mut self, paths: &[PathState], eligible: Eligible) -> bool {
        let judged = |i: usize| eligible.contains(&paths[i]) && self.moments[i].samples() >= self.min_samples;
        let Some(best) = least(paths.len(), 0, judged, |i| self.moments[i].mean_ns()) else { return false };
        let b = self.moments[best];
        let margin = self.margin_ns.max(self.margin_ratio * b.mean_ns());
        let mut changed = false;
        for i in (0..paths.len()).filter(|&i| eligible.contains(&paths[i])) {
            let m = self.moments[i];
            let gap = m.mean_ns() - b.mean_ns();
            // An excluded path is only measured by probes, too few to judge afresh: it comes back
            // on its mean alone, once that is within half the margin.
            let exclude = if self.excluded[i] {
                gap >= margin / 2.0
            } else {
                i != best && judged(i) && gap > margin && m.mean_ns() - self.z * m.standard_error_ns() > b.mean_ns() + self.z * b.standard_error_ns()
            };
            changed |= exclude != self.excluded[i];
            self.excluded[i] = exclude;
        }
        changed
    }
}

impl PathSelector for SignificantLatency {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.moments = vec![Moments::default(); names.len()];
        self.excluded = vec![false; names.len()];
        self.last_probe_ns = vec![0; names.len()];
        Ok(())
    }

    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, self.use_ano);
        if self.judge(paths, eligible) {
            let out: Vec<usize> = (0..paths.len()).filter(|&i| self.excluded[i] && eligible.contains(&paths[i])).collect();
            log.push(PspEvent { t_ns: now, event: format!("excluding {} of {} paths", out.len(), paths.iter().filter(|p| eligible.contains(p)).count()), paths: out });
        }
        let due = |i: usize| self.excluded[i] && eligible.contains(&paths[i]) && paths[i].outstanding == 0 && now >= self.last_probe_ns[i] + self.probe_interval_ns;
        if let Some(probe) = (0..paths.len()).find(|&i| due(i)) {
            self.last_probe_ns[probe] = now;
            return Some(probe);
        }
        let pick = least(paths.len(), self.next, |i| eligible.contains(&paths[i]) && !self.excluded[i], |i| f64::from(paths[i].outstanding))?;
        self.next = (pick + 1) % paths.len();
        Some(pick)
    }

    fn on_complete(&mut self, now: SimTime, path: usize, latency_ns: u64, _size_bytes: u32) {
        self.moments[path].add(now, latency_ns as f64, self.half_life_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*, PathSelector};
    use sanlab_des::{SimTime, NS_PER_US};

    /// Runs `ios` one at a time, `gap_ns` apart; `latency(path, k)` gives the k-th I/O's latency.
    /// Returns how many I/Os each path carried from I/O `count_from` on, and the policy's events.
    fn drive(s: &mut dyn PathSelector, n: usize, (ios, count_from): (usize, usize), gap_ns: SimTime, latency: impl Fn(usize, usize) -> u64) -> (Vec<usize>, usize) {
        let p = paths(&vec![(ActiveOptimized, true); n]);
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        s.attach(&names).unwrap();
        let mut log = vec![];
        let mut counts = vec![0; n];
        for k in 0..ios {
            let now = k as u64 * gap_ns;
            let i = s.select(now, 4096, &p, &mut log).unwrap();
            if k >= count_from {
                counts[i] += 1;
            }
            let l = latency(i, k);
            s.on_complete(now + l, i, l, 4096);
        }
        (counts, log.len())
    }

    /// Deterministic noise: ±`spread` around `mean` (a fixed sequence, no RNG).
    fn noisy(mean_us: f64, spread: f64, k: usize) -> u64 {
        let u = ((k * 7919) % 1000) as f64 / 1000.0 - 0.5;
        (mean_us * (1.0 + 2.0 * spread * u) * NS_PER_US as f64) as u64
    }

    #[test]
    fn paths_that_differ_by_noise_all_stay_in_use() {
        // Seed 000's commenter: 0.265 ms next to 0.260 ms paths, ±30 % noise, 1,000 IOPS.
        let means = [260.0, 265.0, 260.0, 262.0];
        let mut s = build("significant_latency", "");
        let (counts, events) = drive(s.as_mut(), 4, (20_000, 10_000), 1_000_000, |i, k| noisy(means[i], 0.3, k));
        assert_eq!(events, 0, "no exclusion, no flapping");
        assert!(counts.iter().all(|&c| c > 2000), "{counts:?}");
    }

    #[test]
    fn a_remote_path_is_avoided_and_a_degraded_one_within_a_second() {
        // Two near paths (50 us) and a far one (+1 ms round trip), 100 IOPS: low load.
        let mut s = build("significant_latency", "");
        let far = |i: usize, k: usize| if i == 2 { noisy(1050.0, 0.2, k) } else { noisy(50.0, 0.2, k) };
        let (counts, _) = drive(s.as_mut(), 3, (2_000, 1_000), 10_000_000, far);
        assert!(counts[0] > 400 && counts[1] > 400, "both near paths in use at low load: {counts:?}");
        assert!(counts[2] <= 12, "the far path only probed (once a second): {counts:?}");
        // Path 1 degrades to 2 ms at I/O 1000 (10 s): within 0.2 s it is out, then only probed.
        let mut s = build("significant_latency", "");
        let degrade = |i: usize, k: usize| if i == 1 && k >= 1000 { 2_000_000 } else { noisy(50.0, 0.2, k) };
        let (counts, _) = drive(s.as_mut(), 2, (1_020, 1_000), 10_000_000, degrade);
        assert!(counts[1] >= 3, "still used in the first tenth of a second: {counts:?}");
        let (counts, events) = drive(build("significant_latency", "").as_mut(), 2, (1_300, 1_020), 10_000_000, degrade);
        assert!(events == 1 && counts[1] <= 3, "out after 0.2 s, then probed once a second: {counts:?}");
    }

    #[test]
    fn an_excluded_path_that_recovers_comes_back() {
        let mut s = build("significant_latency", "");
        // Path 1 is slow for the first 20 s, then as fast as path 0; 100 IOPS for 60 s.
        let lat = |i: usize, k: usize| if i == 1 && k < 2000 { 2_000_000 } else { noisy(50.0, 0.2, k) };
        let (counts, events) = drive(s.as_mut(), 2, (6_000, 3_000), 10_000_000, lat);
        assert_eq!(events, 2, "excluded once, re-included once");
        assert!(counts[1] > 1000, "in use again: {counts:?}");
    }
}
