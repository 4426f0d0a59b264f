//! sanlab's own selector: send I/O over every path except those whose latency is higher than the
//! best path's by a margin that matters *and* by more than noise explains; keep probing the
//! excluded ones. Written for the questions Hosterman 2018's readers asked about latency-based policies: react to a
//! degrading path within a second, never flap between paths that differ by noise (0.265 vs
//! 0.260 ms), keep using every good path at low load, prefer the near array's paths without ALUA,
//! and notice when an excluded path recovers. docs/models/multipath.md gives the reasoning.
//!
//! Each completion is compared with the device's recent latency for I/Os of its size (a log2 size
//! class, pooled over every path): the path is judged on its *excess* over that baseline, so a path
//! that happened to carry more large transfers does not look slower. A sample is first clipped to
//! `clip_ratio` × the baseline, so a few stalled I/Os (an array-wide pause) cannot dominate a mean
//! for the tens of seconds it takes them to fade.
//!
//! Per path, excesses feed an exponentially time-decayed mean and variance (half-life
//! `half_life`, so old evidence fades by time, not by I/O count, and the estimate moves as fast at
//! 100 IOPS as at 100,000). With weights w (1 for a new sample, halved every half-life), the
//! effective sample count is (Σw)² / Σw² and the standard error of the mean √(var / n_eff).
//!
//! A path j is excluded when it has `min_samples` effective samples and
//! * practically slower: excess_j − excess_best > max(`margin`, `margin_ratio` × latency_best), and
//! * significantly slower: excess_j − z·se_j > excess_best + z·se_best (z = `confidence_z`).
//!
//! An excluded path is judged on its latest `readmit_probes` completions alone (its history before
//! the exclusion is what excluded it) and returns when their mean excess is within half the margin
//! of the best path's (hysteresis); its estimate then restarts from those probes. A probe is one user
//! I/O sent to an idle excluded path every `probe_interval`. A probe to a path whose last probe was
//! slow is slow too, so those draw on a budget of `probe_share` of the device's I/O: they stay
//! below its p99.9 at any load, at the cost of noticing a recovery later on a quiet device.
//! The paths kept share the I/O by fewest outstanding bytes, ties rotating.

use super::dm_groups::least;
use super::{Eligible, PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::{SimTime, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "significant_latency",
    summary: "sanlab's: avoid paths slower by a practical margin and beyond noise (size-stratified, clipped, confidence bounds, hysteresis, budgeted probes)",
    build,
};

/// Log2 size classes from 512 B (class 0) up; larger sizes share the last class.
const SIZE_CLASSES: usize = 24;

fn size_class(size_bytes: u32) -> usize {
    ((size_bytes.max(512) >> 9).ilog2() as usize).min(SIZE_CLASSES - 1)
}

/// Time-decayed moments of a latency figure.
#[derive(Clone, Copy, Default)]
struct Moments {
    weight: f64,
    weight_sq: f64,
    sum_ns: f64,
    sum_sq_ns: f64,
    last_ns: SimTime,
}

impl Moments {
    fn add(&mut self, now: SimTime, value_ns: f64, half_life_ns: f64) {
        let f = 0.5f64.powf((now - self.last_ns) as f64 / half_life_ns);
        self.weight = self.weight * f + 1.0;
        self.weight_sq = self.weight_sq * f * f + 1.0;
        self.sum_ns = self.sum_ns * f + value_ns;
        self.sum_sq_ns = self.sum_sq_ns * f + value_ns * value_ns;
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

/// A completion on an excluded path: when it ended and its excess over the baseline.
#[derive(Clone, Copy)]
struct Probe {
    t_ns: SimTime,
    excess_ns: f64,
}

struct SignificantLatency {
    use_ano: bool,
    half_life_ns: f64,
    margin_ns: f64,
    margin_ratio: f64,
    z: f64,
    min_samples: f64,
    clip_ratio: f64,
    probe_interval_ns: SimTime,
    probe_share: f64,
    readmit_probes: usize,
    /// The device's latency per size class, every path pooled: the baseline of an excess.
    by_size: [Moments; SIZE_CLASSES],
    /// Every completion's latency, to scale `margin_ratio`.
    pooled: Moments,
    excess: Vec<Moments>,
    excluded: Vec<bool>,
    probes: Vec<VecDeque<Probe>>,
    last_probe_ns: Vec<SimTime>,
    /// Budgeted probes the device may send now (grows by `probe_share` per I/O, at most 1).
    probe_credit: f64,
    next: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let use_ano = spec.boolean("use_ano", false, "also use active-non-optimized paths")?;
    let half_life_ns = spec.duration_ns("half_life", Some((2_000 * NS_PER_MS, "2s")), "how fast old latency evidence fades")?;
    let margin_ns = spec.duration_ns("margin", Some((20 * NS_PER_US, "20us")), "smallest latency difference worth avoiding a path for")?;
    let margin_ratio = spec.float("margin_ratio", 0.2, 0.0, 100.0, "... or this fraction of the best path's latency, whichever is larger")?;
    let z = spec.float("confidence_z", 3.0, 0.0, 10.0, "standard errors the difference must exceed on both sides")?;
    let min_samples = spec.int("min_samples", Some(8), 1, 1_000_000, "effective samples before a path is judged")?;
    let clip_ratio = spec.float("clip_ratio", 10.0, 1.0, 1e6, "a sample counts at most this multiple of the device's latency for its size")?;
    let probe_interval_ns = spec.duration_ns("probe_interval", Some((1_000 * NS_PER_MS, "1s")), "at most one I/O this often to an excluded path")?;
    let probe_share = spec.float("probe_share", 0.001, 1e-9, 1.0, "fraction of the device's I/O that may probe paths whose last probe was slow")?;
    let readmit_probes = spec.int("readmit_probes", Some(3), 1, 1_000, "latest completions an excluded path is judged on to return")?;
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
        clip_ratio,
        probe_interval_ns,
        probe_share,
        readmit_probes: readmit_probes as usize,
        by_size: [Moments::default(); SIZE_CLASSES],
        pooled: Moments::default(),
        excess: vec![],
        excluded: vec![],
        probes: vec![],
        last_probe_ns: vec![],
        probe_credit: 0.0,
        next: 0,
    }))
}

impl SignificantLatency {
    /// The best judged path's mean excess and the margin around it.
    fn best(&self, paths: &[PathState], eligible: Eligible) -> Option<(usize, f64, f64)> {
        let judged = |i: usize| eligible.contains(&paths[i]) && !self.excluded[i] && self.excess[i].samples() >= self.min_samples;
        let best = least(paths.len(), 0, judged, |i| self.excess[i].mean_ns())?;
        let excess_ns = self.excess[best].mean_ns();
        let margin = self.margin_ns.max(self.margin_ratio * (self.pooled.mean_ns() + excess_ns));
        Some((best, excess_ns, margin))
    }

    /// Mean excess of an excluded path's latest probes, once it has enough of them.
    fn probe_mean_ns(&self, i: usize) -> Option<f64> {
        let probes = &self.probes[i];
        (probes.len() == self.readmit_probes).then(|| probes.iter().map(|p| p.excess_ns).sum::<f64>() / probes.len() as f64)
    }

    /// Updates the excluded set; true when it changed.
    fn judge(&mut self, paths: &[PathState], eligible: Eligible) -> bool {
        let usable = |i: &usize| eligible.contains(&paths[*i]);
        let mut kept = (0..paths.len()).filter(usable).map(|i| !self.excluded[i]).peekable();
        if kept.peek().is_some() && !kept.any(|k| k) {
            // Every kept path is gone: the excluded ones are all there is.
            (0..paths.len()).filter(usable).for_each(|i| self.readmit(i));
            return true;
        }
        let Some((best, best_ns, margin)) = self.best(paths, eligible) else { return false };
        let b = self.excess[best];
        let mut changed = false;
        for i in (0..paths.len()).filter(usable) {
            if self.excluded[i] {
                if self.probe_mean_ns(i).is_some_and(|mean| mean - best_ns < margin / 2.0) {
                    self.readmit(i);
                    changed = true;
                }
                continue;
            }
            let m = self.excess[i];
            let slower = i != best
                && m.samples() >= self.min_samples
                && m.mean_ns() - best_ns > margin
                && m.mean_ns() - self.z * m.standard_error_ns() > best_ns + self.z * b.standard_error_ns();
            if slower {
                self.excluded[i] = true;
                self.probes[i].clear();
                changed = true;
            }
        }
        changed
    }

    /// Back on the strength of its probes: what it did before no longer counts.
    fn readmit(&mut self, i: usize) {
        self.excluded[i] = false;
        self.excess[i] = Moments::default();
        for p in std::mem::take(&mut self.probes[i]) {
            self.excess[i].add(p.t_ns, p.excess_ns, self.half_life_ns);
        }
    }

    /// The excluded path to probe now, if any: idle, its interval elapsed, the longest unprobed;
    /// a path whose last probe was slow also needs the budget.
    fn probe(&mut self, now: SimTime, paths: &[PathState], eligible: Eligible) -> Option<usize> {
        let slow_ok = self.probe_credit >= 1.0;
        let best = self.best(paths, eligible);
        let last_fast = |i: usize| match (self.probes[i].back(), best) {
            (Some(p), Some((_, best_ns, margin))) => p.excess_ns - best_ns < margin,
            _ => false,
        };
        let due = |i: usize| {
            self.excluded[i] && eligible.contains(&paths[i]) && paths[i].outstanding == 0 && now >= self.last_probe_ns[i] + self.probe_interval_ns && (slow_ok || last_fast(i))
        };
        let probe = least(paths.len(), 0, due, |i| self.last_probe_ns[i] as f64)?;
        if !last_fast(probe) {
            self.probe_credit -= 1.0;
        }
        self.last_probe_ns[probe] = now;
        Some(probe)
    }
}

impl PathSelector for SignificantLatency {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.excess = vec![Moments::default(); names.len()];
        self.excluded = vec![false; names.len()];
        self.probes = vec![VecDeque::with_capacity(self.readmit_probes); names.len()];
        self.last_probe_ns = vec![0; names.len()];
        Ok(())
    }

    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], log: &mut Vec<PspEvent>) -> Option<usize> {
        let eligible = Eligible::of(paths, self.use_ano);
        if self.judge(paths, eligible) {
            let out: Vec<usize> = (0..paths.len()).filter(|&i| self.excluded[i] && eligible.contains(&paths[i])).collect();
            log.push(PspEvent { t_ns: now, event: format!("excluding {} of {} paths", out.len(), paths.iter().filter(|p| eligible.contains(p)).count()), paths: out });
        }
        self.probe_credit = (self.probe_credit + self.probe_share).min(1.0);
        if let Some(probe) = self.probe(now, paths, eligible) {
            return Some(probe);
        }
        let pick = least(paths.len(), self.next, |i| eligible.contains(&paths[i]) && !self.excluded[i], |i| paths[i].outstanding_bytes as f64)?;
        self.next = (pick + 1) % paths.len();
        Some(pick)
    }

    fn on_complete(&mut self, now: SimTime, path: usize, latency_ns: u64, size_bytes: u32) {
        let class = &mut self.by_size[size_class(size_bytes)];
        let latency_ns = latency_ns as f64;
        let (sample_ns, excess_ns) = if class.weight == 0.0 {
            (latency_ns, 0.0)
        } else {
            let baseline_ns = class.mean_ns();
            let clipped_ns = if class.samples() >= self.min_samples { latency_ns.min(self.clip_ratio * baseline_ns) } else { latency_ns };
            (clipped_ns, clipped_ns - baseline_ns)
        };
        class.add(now, sample_ns, self.half_life_ns);
        self.pooled.add(now, sample_ns, self.half_life_ns);
        if self.excluded[path] {
            let probes = &mut self.probes[path];
            if probes.len() == self.readmit_probes {
                probes.pop_front();
            }
            probes.push_back(Probe { t_ns: now, excess_ns });
        } else {
            self.excess[path].add(now, excess_ns, self.half_life_ns);
        }
    }
}
#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*, PathSelector};
    use sanlab_des::{SimTime, NS_PER_S, NS_PER_US};

    const KIB4: u32 = 4096;

    /// Runs `ios` one at a time, `gap_ns` apart, the k-th of `size(k)` bytes; `latency(path, k)`
    /// gives its latency. Returns how many I/Os each path carried from I/O `count_from` on, and the
    /// policy's events.
    fn drive(s: &mut dyn PathSelector, n: usize, (ios, count_from): (usize, usize), gap_ns: SimTime, size: impl Fn(usize) -> u32, latency: impl Fn(usize, usize) -> u64) -> (Vec<usize>, usize) {
        let p = paths(&vec![(ActiveOptimized, true); n]);
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        s.attach(&names).unwrap();
        let mut log = vec![];
        let mut counts = vec![0; n];
        for k in 0..ios {
            let now = k as u64 * gap_ns;
            let i = s.select(now, size(k), &p, &mut log).unwrap();
            if k >= count_from {
                counts[i] += 1;
            }
            let l = latency(i, k);
            s.on_complete(now + l, i, l, size(k));
        }
        (counts, log.len())
    }

    fn small(_: usize) -> u32 {
        KIB4
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
        let (counts, events) = drive(s.as_mut(), 4, (20_000, 10_000), 1_000_000, small, |i, k| noisy(means[i], 0.3, k));
        assert_eq!(events, 0, "no exclusion, no flapping");
        assert!(counts.iter().all(|&c| c > 2000), "{counts:?}");
    }

    #[test]
    fn a_path_that_carries_the_large_transfers_is_not_thought_slow() {
        // Every fourth I/O is 256 KiB and takes 10x as long; rotation gives them all to path 0.
        let size = |k: usize| if k.is_multiple_of(4) { 64 * KIB4 } else { KIB4 };
        let latency = |_: usize, k: usize| noisy(if k.is_multiple_of(4) { 2_600.0 } else { 260.0 }, 0.2, k);
        let (counts, events) = drive(build("significant_latency", "").as_mut(), 4, (20_000, 0), 1_000_000, size, latency);
        assert_eq!(events, 0, "compared size for size, no path is slower: {counts:?}");
    }

    #[test]
    fn a_remote_path_is_avoided_and_a_degraded_one_within_a_second() {
        // Two near paths (50 us) and a far one (+1 ms round trip), 100 IOPS: low load.
        let mut s = build("significant_latency", "");
        let far = |i: usize, k: usize| if i == 2 { noisy(1050.0, 0.2, k) } else { noisy(50.0, 0.2, k) };
        let (counts, _) = drive(s.as_mut(), 3, (2_000, 1_000), 10_000_000, small, far);
        assert!(counts[0] > 400 && counts[1] > 400, "both near paths in use at low load: {counts:?}");
        assert!(counts[2] <= 2, "the far path only probed, within the budget of 1 I/O in 1000: {counts:?}");
        // Path 1 degrades to 2 ms at I/O 1000 (10 s): within 0.2 s it is out.
        let degrade = |i: usize, k: usize| if i == 1 && k >= 1000 { 2_000_000 } else { noisy(50.0, 0.2, k) };
        let (counts, _) = drive(build("significant_latency", "").as_mut(), 2, (1_020, 1_000), 10_000_000, small, degrade);
        assert!(counts[1] >= 3, "still used in the first tenth of a second: {counts:?}");
        let (counts, events) = drive(build("significant_latency", "").as_mut(), 2, (1_300, 1_020), 10_000_000, small, degrade);
        assert!(events == 1 && counts[1] <= 1, "out after 0.2 s: {counts:?}");
    }

    #[test]
    fn probes_of_a_slow_path_stay_within_their_share_of_the_io() {
        // A far path, 100 IOPS for 10 minutes: probes at most 1 in 1000 I/Os, not one a second.
        let far = |i: usize, k: usize| if i == 1 { noisy(2_050.0, 0.2, k) } else { noisy(50.0, 0.2, k) };
        let (counts, _) = drive(build("significant_latency", "").as_mut(), 2, (60_000, 100), 10_000_000, small, far);
        assert!((50..=61).contains(&counts[1]), "{counts:?}");
        let (counts, _) = drive(build("significant_latency", "probe_share = 1.0").as_mut(), 2, (60_000, 100), 10_000_000, small, far);
        assert!((595..=600).contains(&counts[1]), "without the budget, one a second: {counts:?}");
    }

    #[test]
    fn an_excluded_path_that_recovers_comes_back() {
        // Path 1 is slow for the first 20 s, then as fast as path 0; 100 IOPS for 60 s. Its probes
        // are budgeted while slow, then once a second: three fast ones bring it back.
        let lat = |i: usize, k: usize| if i == 1 && k < 2000 { 2_000_000 } else { noisy(50.0, 0.2, k) };
        let (counts, events) = drive(build("significant_latency", "").as_mut(), 2, (6_000, 3_500), 10_000_000, small, lat);
        assert_eq!(events, 2, "excluded once, re-included once");
        assert!(counts[1] > 1000, "in use again by 35 s: {counts:?}");
    }

    /// I/Os each path carried from 0.5 s after the stall, and the policy's events.
    fn through_a_stall(params: &str) -> ([usize; 4], usize) {
        // Four paths, an I/O every 20 us (50,000 IOPS) at 0.26 ms. At 1 s the array stalls every
        // write in flight for 5 s (a mediator election), but path 3 happens to have none in
        // flight; then all serve as before. Unclipped, about 4 samples of 5 s in 36,000 make paths
        // 0-2 look 0.5 ms slower, beyond noise, for the 20 s it takes them to fade.
        let mut s = build("significant_latency", params);
        let p = paths(&[(ActiveOptimized, true); 4]);
        s.attach(&(0..4).map(|i| format!("p{i}")).collect::<Vec<_>>()).unwrap();
        let (mut log, mut counts) = (vec![], [0usize; 4]);
        let mut in_flight: std::collections::BinaryHeap<std::cmp::Reverse<(SimTime, SimTime, usize)>> = Default::default();
        let (stall_ns, resume_ns) = (NS_PER_S, 6 * NS_PER_S);
        for k in 0..200_000usize {
            let now = k as u64 * 20_000 + if k >= 50_000 { resume_ns - stall_ns } else { 0 };
            while let Some(&std::cmp::Reverse((done, issued, i))) = in_flight.peek().filter(|std::cmp::Reverse((done, ..))| *done <= now) {
                in_flight.pop();
                s.on_complete(done, i, done - issued, KIB4);
            }
            let i = s.select(now, KIB4, &p, &mut log).unwrap();
            counts[i] += usize::from(now >= resume_ns + NS_PER_S / 2);
            let stalled = i != 3 && now < stall_ns && now + 260_000 > stall_ns;
            in_flight.push(std::cmp::Reverse((if stalled { resume_ns } else { now + noisy(260.0, 0.2, k) }, now, i)));
        }
        (counts, log.len())
    }

    #[test]
    fn a_stall_of_the_array_excludes_no_path() {
        let (counts, events) = through_a_stall("");
        assert!(events == 0 && counts.iter().all(|&c| c > 25_000), "{counts:?}");
        let (counts, events) = through_a_stall("clip_ratio = 1e6");
        assert!(events > 0 && counts[3] > 50_000, "unclipped, path 3 carries nearly everything: {counts:?}");
    }

    #[test]
    fn when_the_kept_paths_die_the_excluded_ones_carry_the_io() {
        let mut s = build("significant_latency", "");
        let far = |i: usize, k: usize| if i == 1 { noisy(2_050.0, 0.2, k) } else { noisy(50.0, 0.2, k) };
        drive(s.as_mut(), 2, (2_000, 0), 10_000_000, small, far);
        let p = paths(&[(ActiveOptimized, false), (ActiveOptimized, true)]);
        assert_eq!(s.select(30 * NS_PER_S, KIB4, &p, &mut vec![]), Some(1));
    }
}
