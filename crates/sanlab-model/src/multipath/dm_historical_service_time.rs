//! Linux dm-multipath `historical-service-time` (drivers/md/dm-ps-historical-service-time.c,
//! since 5.8), decision for decision: the kernel's integer arithmetic, its pairwise comparison and
//! its rotating list.
//!
//! - Each path keeps an average service time in 10-bit fixed point (`HST_FIXED_SHIFT`), starting
//!   at 1 ns (`HST_FIXED_1`). A completion's sample is `now − max(start, last_finish)` ns (as if
//!   the path served one request at a time); the average moves by `fixed_ema` with the weight of
//!   the sample's 16.8 ms bucket (`sample >> 24`): `base_weight^(bucket + 1)` by the kernel's
//!   rounded `fixed_power`, and 0 (the sample replaces the history) from bucket 63, about 1.06 s.
//!   Then `stale_after = last_finish + valid paths × (average >> 10)`.
//! - `hst_compare(p1, p2)`: averages within `threshold_multiplier` of each other compare on in-flight
//!   count alone. Otherwise, if either path is idle and stale (`stale_after < now`), or both are
//!   idle, staleness alone decides: the idle path with the earlier `stale_after` (against a loaded
//!   path the idle one, unless the loaded one has never completed an I/O). Otherwise the lower
//!   `(1 + in flight) × average` wins, but a stale winner only competes on in-flight count.
//! - `hst_select_path` folds that comparison over the group's list in order (a path replaces the
//!   best so far only when strictly better) and moves the pick to the list's tail; a path that comes
//!   back from failed also goes to the tail (`hst_reinstate_path`).
//!
//! Ours: one simulated clock stands for both of the kernel's (`sched_clock` when choosing,
//! `ktime_get_ns` on completion); the valid-path count used on a completion is the path's group's
//! at the latest selection that saw the path in the chosen group (the kernel's is the count at
//! completion); multipathd's table reloads, which would restart the averages, are not modelled.

use super::dm_groups::DmGroups;
use super::{PathSelector, PathState, PspEvent};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "dm_historical_service_time",
    summary: "Linux dm-multipath historical-service-time: time-weighted average of service time × (1 + in flight), the idle path most stale first",
    build,
};

const FIXED_SHIFT: u32 = 10;
const FIXED_1: u64 = 1 << FIXED_SHIFT;
const FIXED_MAX: u64 = u64::MAX >> FIXED_SHIFT;
/// From this many in flight the kernel drops the averages' fraction before multiplying.
const MAX_INFLIGHT: i64 = FIXED_1 as i64;
const BUCKET_SHIFT: u32 = 24;
const WEIGHT_COUNT: usize = 64;

#[derive(Clone, Copy)]
struct PathInfo {
    /// Average service time, ns in 10-bit fixed point.
    average_fixed: u64,
    stale_after_ns: u64,
    last_finish_ns: u64,
    /// Valid paths of the path's group, for its next `stale_after`.
    valid_count: u64,
    /// Could carry I/O at the latest selection (coming back moves it to the list's tail).
    usable: bool,
}

struct Hst {
    groups: DmGroups,
    /// `weights[bucket]`, 10-bit fixed point (`hst_set_weights`).
    weights: [u64; WEIGHT_COUNT],
    threshold_multiplier: u64,
    info: Vec<PathInfo>,
    /// The kernel's list of paths, in its order; each group's list is its members' subsequence.
    order: Vec<usize>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let groups = DmGroups::read(spec)?;
    let base = spec.int("base_weight", Some(972), 0, 1023, "weight of history per 16.8 ms bucket, in 1/1024 (0: no history)")?;
    let threshold_multiplier = spec.int("threshold_multiplier", Some(0), 0, i64::from(u32::MAX), "paths whose averages are within this factor compare on in-flight count only (0, 1: only equal averages)")?;
    Ok(Box::new(Hst::new(groups, base as u64, threshold_multiplier as u64)))
}

/// `x^n` for `x` in `frac_bits` fixed point, rounding each product as the kernel does.
fn fixed_power(mut x: u64, frac_bits: u32, mut n: u32) -> u64 {
    let half = 1 << (frac_bits - 1);
    let mut result = 1 << frac_bits;
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + half) >> frac_bits;
        }
        n >>= 1;
        if n > 0 {
            x = (x * x + half) >> frac_bits;
        }
    }
    result
}

/// `last × weight + next × (1 − weight)`, rounded, all in 10-bit fixed point (u64 arithmetic, as C's).
fn fixed_ema(last: u64, next: u64, weight: u64) -> u64 {
    last.wrapping_mul(weight).wrapping_add(next.wrapping_mul(FIXED_1 - weight)).wrapping_add(1 << (FIXED_SHIFT - 1)) >> FIXED_SHIFT
}

impl Hst {
    fn new(groups: DmGroups, base_weight: u64, threshold_multiplier: u64) -> Self {
        let mut weights = [0; WEIGHT_COUNT];
        for (i, w) in weights.iter_mut().enumerate().take(WEIGHT_COUNT - 1) {
            *w = fixed_power(base_weight, FIXED_SHIFT, i as u32 + 1);
        }
        Self { groups, weights, threshold_multiplier, info: vec![], order: vec![] }
    }

    /// `hst_compare`: negative when `a` is the better path for the next I/O.
    fn compare(&self, a: usize, b: usize, now: u64, paths: &[PathState]) -> i64 {
        let (p1, p2) = (&self.info[a], &self.info[b]);
        let (hst1, hst2) = (p1.average_fixed, p2.average_fixed);
        let (out1, out2) = (i64::from(paths[a].outstanding), i64::from(paths[b].outstanding));
        let over_threshold = if hst1 > hst2 { hst1 > self.threshold_multiplier.wrapping_mul(hst2) } else { hst2 > self.threshold_multiplier.wrapping_mul(hst1) };
        if !over_threshold {
            return out1 - out2;
        }
        let (stale1, stale2) = (p1.stale_after_ns < now, p2.stale_after_ns < now);
        let (idle1, idle2) = (out1 == 0, out2 == 0);
        if (idle1 && stale1) || (idle2 && stale2) || (idle1 && idle2) {
            // Signed, as the kernel's long long: an idle path's stale_after against the other's if idle.
            return (i64::from(idle2) * p1.stale_after_ns as i64).wrapping_sub(i64::from(idle1) * p2.stale_after_ns as i64);
        }
        let b_better = if out1 == out2 {
            hst1 > hst2
        } else {
            let shift = if out1 >= MAX_INFLIGHT || out2 >= MAX_INFLIGHT { FIXED_SHIFT } else { 0 };
            ((1 + out1) as u64).wrapping_mul(hst1 >> shift) > ((1 + out2) as u64).wrapping_mul(hst2 >> shift)
        };
        // A stale winner has gone too long without a completion: only the in-flight counts decide.
        let winner_stale = if b_better { stale2 } else { stale1 };
        if winner_stale {
            out1 - out2
        } else if b_better {
            1
        } else {
            -1
        }
    }

    fn move_to_tail(&mut self, path: usize) {
        let at = self.order.iter().position(|&i| i == path).expect("every path is in the list");
        self.order.remove(at);
        self.order.push(path);
    }
}

impl PathSelector for Hst {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        let fresh = PathInfo { average_fixed: FIXED_1, stale_after_ns: 0, last_finish_ns: 0, valid_count: names.len() as u64, usable: true };
        self.info = vec![fresh; names.len()];
        self.order = (0..names.len()).collect();
        Ok(())
    }

    fn select(&mut self, now: SimTime, _size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let in_group = self.groups.choose(now, paths)?;
        for (i, p) in paths.iter().enumerate() {
            let usable = p.carries_io();
            if usable && !self.info[i].usable {
                self.move_to_tail(i);
            }
            self.info[i].usable = usable;
        }
        let valid = (0..paths.len()).filter(|&i| in_group.has(i, &paths[i])).count() as u64;
        let mut best: Option<usize> = None;
        for &i in self.order.iter().filter(|&&i| in_group.has(i, &paths[i])) {
            self.info[i].valid_count = valid;
            best = match best {
                Some(b) if self.compare(i, b, now, paths) >= 0 => Some(b),
                _ => Some(i),
            };
        }
        let pick = best?;
        self.move_to_tail(pick);
        Some(pick)
    }

    fn on_complete(&mut self, now: SimTime, path: usize, latency_ns: u64, _size_bytes: u32) {
        let start_ns = (now - latency_ns).max(self.info[path].last_finish_ns);
        let sample_ns = now.saturating_sub(start_ns);
        let weight = self.weights[((sample_ns >> BUCKET_SHIFT) as usize).min(WEIGHT_COUNT - 1)];
        let p = &mut self.info[path];
        p.last_finish_ns = now;
        p.average_fixed = fixed_ema(p.average_fixed, sample_ns.wrapping_mul(FIXED_1).min(FIXED_MAX), weight);
        p.stale_after_ns = p.last_finish_ns.wrapping_add(p.valid_count.wrapping_mul(p.average_fixed >> FIXED_SHIFT));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};
    use super::*;

    const MS: u64 = 1_000_000;

    fn hst(params: &str) -> Hst {
        let t: toml::Table = params.parse().unwrap();
        let spec = Spec::new(&t, "psp");
        let base = spec.int("base_weight", Some(972), 0, 1023, "").unwrap();
        let threshold = spec.int("threshold_multiplier", Some(0), 0, i64::from(u32::MAX), "").unwrap();
        let mut s = Hst::new(DmGroups::read(&spec).unwrap(), base as u64, threshold as u64);
        s.attach(&["a".into(), "b".into()]).unwrap();
        s
    }

    /// Picks at one I/O outstanding: each I/O is sent when the previous one completes.
    fn one_at_a_time(s: &mut dyn PathSelector, latency_ns: [u64; 2], n: usize) -> Vec<usize> {
        let p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut now = 0;
        let mut picks = vec![];
        for _ in 0..n {
            let i = s.select(now, 4096, &p, &mut vec![]).unwrap();
            now += latency_ns[i];
            s.on_complete(now, i, latency_ns[i], 4096);
            picks.push(i);
        }
        picks
    }

    #[test]
    fn fixed_point_as_the_kernel() {
        // hst_set_weights: base^(bucket + 1), each product rounded: 972·972 = 944,784, (+ 512) >> 10
        // = 923; 972·923 = 897,156 → 876; the last bucket keeps nothing.
        let s = hst("");
        assert_eq!(s.weights[..4], [972, 923, 876, 832]);
        assert_eq!((s.weights[62], s.weights[63]), (39, 0));
        assert!(hst("base_weight = 0").weights.iter().all(|&w| w == 0));
        // Without history the average is the last sample, exactly; a sample counts from the later
        // of its start (300 ns) and the previous finish (1000 ns).
        let mut s = hst("base_weight = 0");
        s.on_complete(1000, 0, 1000, 4096);
        s.on_complete(1500, 0, 1200, 4096);
        assert_eq!(s.info[0].average_fixed, 500 << FIXED_SHIFT);
        assert_eq!(s.info[0].stale_after_ns, 1500 + 2 * 500);
        // Default weight, a 1 ms sample (bucket 0) on the 1 ns start: (1024·972 + 1,000,000·1024·52
        // + 512) >> 10 = 52,000,972 (50,782 ns).
        let mut s = hst("");
        s.on_complete(MS, 0, MS, 4096);
        assert_eq!(s.info[0].average_fixed, 52_000_972);
        assert_eq!(s.info[0].stale_after_ns, MS + 2 * 50_782);
        // From bucket 63 (63 × 2^24 ns, about 1.06 s) the sample replaces the history.
        s.on_complete(MS + 1_200 * MS, 0, 1_200 * MS, 4096);
        assert_eq!(s.info[0].average_fixed, (1_200 * MS) << FIXED_SHIFT);
    }

    #[test]
    fn without_history_three_fast_ios_per_slow_one() {
        // base_weight 0: weights all 0, so an average is its last sample and stale_after =
        // finish + 2 paths × sample. A = 2 ms, B = 4.6 ms, times in ms; list order in brackets.
        //  #0 t=0     [A,B] both idle, stale_after 0 both: compare(B, A) = 0 − 0, not < 0: A.
        //             A ends 2.0: stale_A = 2.0 + 4.0 = 6.0
        //  #1 t=2.0   [B,A] both idle: compare(A, B) = 6.0 − 0 > 0: B. Ends 6.6: stale_B = 6.6 + 9.2 = 15.8
        //  #2 t=6.6   [A,B] compare(B, A) = 15.8 − 6.0 > 0: A. Ends 8.6: stale_A = 12.6
        //  #3 t=8.6   [B,A] compare(A, B) = 12.6 − 15.8 < 0: A. Ends 10.6: stale_A = 14.6
        //  #4 t=10.6  [B,A] 14.6 − 15.8 < 0: A. Ends 12.6: stale_A = 16.6
        //  #5 t=12.6  [B,A] 16.6 − 15.8 > 0: B. Ends 17.2: stale_B = 26.4
        //  #6 t=17.2  [A,B] compare(B, A) = 26.4 − 16.6 > 0: A. Ends 19.2: stale_A = 23.2
        //  #7, #8     23.2, then 25.2 < 26.4: A, A. Ends 23.2: stale_A = 27.2
        //  #9 t=23.2  27.2 > 26.4: B; and so on: the cycle of #2–#5.
        let picks = one_at_a_time(&mut hst("base_weight = 0"), [2 * MS, 4_600_000], 14);
        assert_eq!(picks, [0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
    }

    #[test]
    fn from_the_kernels_start_the_paths_alternate_until_the_averages_grow() {
        // Default weight: a sample of 2 or 4.6 ms is bucket 0 (< 2^24 ns), weight 972, so
        // avg' = (avg × 972 + sample × 1024 × 52 + 512) >> 10, from avg = 1024 (1 ns);
        // stale_after = finish + 2 × (avg >> 10). A = 2 ms, B = 4.6 ms, times in ns.
        //  #0 t=0         [A,B] both idle, stale_after 0: compare(B, A) = 0: A. Ends 2,000,000:
        //                 avg_A = (995,328 + 106,496,000,000 + 512) >> 10 = 104,000,972 (101,563 ns),
        //                 stale_A = 2,000,000 + 2 × 101,563 = 2,203,126
        //  #1 t=2,000,000 [B,A] compare(A, B) = 2,203,126 − 0 > 0: B. Ends 6,600,000:
        //                 avg_B = (995,328 + 244,940,800,000 + 512) >> 10 = 239,200,972 (233,594 ns),
        //                 stale_B = 6,600,000 + 467,188 = 7,067,188
        //  #2 t=6,600,000 [A,B] compare(B, A) = 7,067,188 − 2,203,126 > 0: A. Ends 8,600,000:
        //                 avg_A = (104,000,972 × 972 + 106,496,000,000 + 512) >> 10 = 202,719,673
        //                 (197,968 ns), stale_A = 8,600,000 + 395,936 = 8,995,936
        //  #3 t=8,600,000 [B,A] compare(A, B) = 8,995,936 − 7,067,188 > 0: B.
        // While the averages are far below the latencies, stale_after is about the last finish,
        // and the other path finished earlier: they alternate. The same rule, further on:
        //  #    t           stale_A      stale_B      list   pick
        //  19   61,400,000  63,024,676   62,844,480   [B,A]  B
        //  20   66,000,000  63,024,676   69,736,752   [A,B]  A
        //  21   68,000,000  69,745,296   69,736,752   [B,A]  B (8.5 µs more stale)
        //  22   72,600,000  69,745,296   76,614,182   [A,B]  A
        //  23   74,600,000  76,459,794   76,614,182   [B,A]  A: the first repeat
        //  24   76,600,000  78,568,476   76,614,182   [B,A]  B
        let picks = one_at_a_time(&mut hst(""), [2 * MS, 4_600_000], 25);
        let mut expected: Vec<usize> = [0, 1].repeat(11);
        expected.extend([0, 0, 1]);
        assert_eq!(picks, expected);
    }

    #[test]
    fn once_settled_one_slow_io_in_four() {
        // Averages settled at a = 2 ms and b = 4.6 ms: after B ends at T (stale_after T + 2b), A's
        // k-th completion leaves stale_after T + (k + 2)a, earlier than B's while k + 2 < 2b/a = 4.6:
        // A takes three I/Os, then B one. (A path's average keeps (972/1024)^k of where it started
        // after k samples: settled within a few hundred I/Os.)
        let picks = one_at_a_time(&mut hst(""), [2 * MS, 4_600_000], 4_000);
        for (k, window) in picks[400..].windows(4).enumerate() {
            assert_eq!(window.iter().sum::<usize>(), 1, "I/Os {}..{}: {window:?}", 400 + k, 404 + k);
        }
    }

    #[test]
    fn near_equal_paths_alternate() {
        // A = 0.260 ms, B = 0.265 ms, default weight, times in ns:
        //  #0 t=0       [A,B] tie: A. Ends 260,000: avg_A = (995,328 + 260,000 × 1024 × 52 + 512)
        //               >> 10 = 13,520,972 (13,204 ns), stale_A = 260,000 + 26,408 = 286,408
        //  #1 t=260,000 [B,A] compare(A, B) = 286,408 − 0 > 0: B. Ends 525,000: avg_B = 13,780,972
        //               (13,457 ns), stale_B = 525,000 + 26,914 = 551,914
        //  #2 t=525,000 [A,B] compare(B, A) = 551,914 − 286,408 > 0: A. Ends 785,000:
        //               avg_A = 26,354,360 (25,736 ns), stale_A = 785,000 + 51,472 = 836,472
        //  #3 t=785,000 [B,A] compare(A, B) = 836,472 − 551,914 > 0: B.
        // Settled: when B ends at T (stale_after T + 0.53 ms), A's next I/O ends at T + 0.26 ms with
        // stale_after T + 0.78 ms: B is always the more stale, so they alternate for good.
        let picks = one_at_a_time(&mut hst(""), [260_000, 265_000], 100_000);
        assert!(picks.iter().enumerate().all(|(k, &i)| i == k % 2), "{:?}", &picks[..40]);
    }

    #[test]
    fn in_flight_estimate_stale_winner_and_threshold() {
        // No history: A's average 1 ms (stale_after 10 + 2 × 1 = 12 ms), B's 3 ms (stale_after 16 ms).
        let setup = |params: &str| {
            let mut s = hst(params);
            s.on_complete(10 * MS, 0, MS, 4096);
            s.on_complete(10 * MS, 1, 3 * MS, 4096);
            s
        };
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut s = setup("base_weight = 0");
        // At 11 ms, A loaded with 1, B idle and fresh: (1 + 1) × 1 ms < (1 + 0) × 3 ms: A.
        p[0].outstanding = 1;
        assert_eq!(s.select(11 * MS, 4096, &p, &mut vec![]), Some(0));
        // With 3 in flight, 4 × 1 ms > 3 ms: B.
        p[0].outstanding = 3;
        assert_eq!(s.select(11 * MS, 4096, &p, &mut vec![]), Some(1));
        // At 13 ms A is stale (12 < 13): still the better estimate with 1 in flight, but a stale
        // winner competes on in-flight count only: 0 − 1 < 0, B.
        p[0].outstanding = 1;
        assert_eq!(s.select(13 * MS, 4096, &p, &mut vec![]), Some(1));
        // Averages within threshold_multiplier (3 ms ≤ 4 × 1 ms) compare on in-flight count: B;
        // beyond it (3 ms > 2 × 1 ms) on the estimate: A.
        assert_eq!(setup("base_weight = 0\nthreshold_multiplier = 4").select(11 * MS, 4096, &p, &mut vec![]), Some(1));
        assert_eq!(setup("base_weight = 0\nthreshold_multiplier = 2").select(11 * MS, 4096, &p, &mut vec![]), Some(0));
    }

    #[test]
    fn the_pick_and_a_returning_path_go_to_the_lists_tail() {
        // Nothing measured yet: every comparison is a tie, so the list's head is picked.
        let mut s = hst("");
        s.attach(&["a".into(), "b".into(), "c".into()]).unwrap();
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut pick = |p: &[PathState]| s.select(0, 4096, p, &mut vec![]).unwrap();
        // [0,1,2] → 0, list [1,2,0]; 1 fails: [2,0] → 2, 0, 2; 1 returns to the tail: [0,2,1].
        assert_eq!(pick(&p), 0);
        p[1].up = false;
        assert_eq!([pick(&p), pick(&p), pick(&p)], [2, 0, 2]);
        p[1].up = true;
        assert_eq!([pick(&p), pick(&p), pick(&p)], [0, 2, 1]);
    }
}
