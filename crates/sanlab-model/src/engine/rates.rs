//! A job's bandwidth and IOPS sampled as fio samples them for its `bw_*` and `iops_*` figures,
//! and its submissions counted by depth for `iodepth_level` (see `sanlab-workload`'s `fio/rates.rs` for
//! fio's rules). O(1) state per job: the current window's counts and running statistics.

use crate::io::Op;
use sanlab_workload::RateSampling;
use crate::report::RateReport;

/// Running minimum, maximum, mean and sum of squared deviations of whole-number samples
/// (Welford's method, in f64 as fio keeps them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RateStat {
    samples: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl RateStat {
    fn add(&mut self, x: u64) {
        if self.samples == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.samples += 1;
        let delta = x as f64 - self.mean;
        self.mean += delta / self.samples as f64;
        self.m2 += delta * (x as f64 - self.mean);
    }

    pub fn report(&self) -> RateReport {
        let dev = if self.samples > 1 { (self.m2 / (self.samples - 1) as f64).sqrt() } else { 0.0 };
        RateReport { min: self.min, max: self.max, mean: self.mean, dev, samples: self.samples }
    }
}

/// Samples of one quantity (bytes or I/Os) per direction: the window being counted (its
/// statistics, `[RateStat; 2]` per direction, are kept apart by [`JobRates`]).
#[derive(Clone, Debug)]
struct Sampler {
    how: RateSampling,
    /// Bytes, reported in KiB/s; else I/Os, reported per second.
    kib: bool,
    /// The measured start, and the end of the window that holds `pending`.
    from_ns: u64,
    window_end_ns: u64,
    pending: [u64; 2],
}

impl Sampler {
    fn new(how: RateSampling, kib: bool, from_ns: u64) -> Self {
        let window_end_ns = match how {
            RateSampling::Window { ms } => from_ns + ms * 1_000_000,
            RateSampling::PerIo => u64::MAX,
        };
        Self { how, kib, from_ns, window_end_ns, pending: [0; 2] }
    }

    /// The rate of `count` over a window of `ms`, in whole units per second (KiB/s for bytes).
    fn rate(&self, count: u64, ms: u64) -> u64 {
        let per_s = count.saturating_mul(1000) / ms;
        if self.kib {
            per_s / 1024
        } else {
            per_s
        }
    }

    /// Closes the pending window when it ended before `end_ns` (fio takes no sample of the
    /// window its job ends in).
    fn close(&mut self, stat: &mut [RateStat; 2], end_ns: u64) {
        let RateSampling::Window { ms } = self.how else { return };
        for (d, stat) in stat.iter_mut().enumerate() {
            let count = std::mem::take(&mut self.pending[d]);
            if count > 0 && self.window_end_ns < end_ns {
                stat.add(self.rate(count, ms));
            }
        }
    }

    /// A measured completion at `now_ns` of `count` (its bytes or 1) that took `latency_ns`;
    /// `end_ns` is when the job stops.
    fn done(&mut self, stat: &mut [RateStat; 2], now_ns: u64, end_ns: u64, d: usize, count: u64, latency_ns: u64) {
        match self.how {
            // fio's per-I/O bandwidth: bytes x 10^6 / the I/O's completion latency in ns.
            RateSampling::PerIo if self.kib => stat[d].add(if latency_ns == 0 { 0 } else { (count as u128 * 1_000_000 / u128::from(latency_ns)) as u64 }),
            RateSampling::PerIo => stat[d].add(1),
            RateSampling::Window { ms } => {
                // Most completions fall in the current window: one comparison, no division.
                if now_ns >= self.window_end_ns {
                    self.close(stat, end_ns);
                    let window_ns = ms * 1_000_000;
                    let window = (now_ns - self.from_ns) / window_ns;
                    self.window_end_ns = self.from_ns + (window + 1) * window_ns;
                }
                self.pending[d] += count;
            }
        }
    }

    /// Its statistics `stat` as they stand when the job ends at `end_ns`.
    fn finished(&self, stat: &[RateStat; 2], end_ns: u64) -> [RateStat; 2] {
        let mut last = *stat;
        self.clone().close(&mut last, end_ns);
        last
    }
}

/// fio's `iodepth_level` bucket of a depth: 1, 2, 4, 8, 16, 32, >=64 (io_u.c
/// `io_u_mark_depth`), each holding the depths from its value up to the next one's.
fn depth_level(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// A job's fio sampling state. `repr(C)` keeps what each submission and completion touches (the
/// samplers' windows, the depth counts) together, ahead of the statistics, which change only as a
/// window closes (see the engine's `Job` for why).
#[repr(C)]
#[derive(Clone, Debug)]
pub(crate) struct JobRates {
    bw: Sampler,
    iops: Sampler,
    /// Measured submissions by the job's depth just after each (itself included), syncs too
    /// as fio counts them.
    pub depth_levels: [u64; 7],
    /// `[bw, iops]`'s statistics per direction.
    stats: [[RateStat; 2]; 2],
    /// Measured syncs by kind: fsync, fdatasync, sync_file_range.
    pub syncs: [u64; 3],
}

impl JobRates {
    /// Sampling `[bw, iops]` as the job asks, measured from `from_ns`.
    pub fn new(how: [RateSampling; 2], from_ns: u64) -> Self {
        Self { bw: Sampler::new(how[0], true, from_ns), iops: Sampler::new(how[1], false, from_ns), depth_levels: [0; 7], stats: [[RateStat::default(); 2]; 2], syncs: [0; 3] }
    }

    /// Starts over from `from_ns` (the job's measured start, or fio's final latency-target cycle).
    pub fn restart(&mut self, from_ns: u64) {
        *self = Self::new([self.bw.how, self.iops.how], from_ns);
    }

    /// A measured submission that brought the job's requests in flight to `depth`.
    #[inline]
    pub fn issued(&mut self, depth: u32) {
        self.depth_levels[depth_level(depth)] += 1;
    }

    /// A measured sync of `kind` that brought the job's requests in flight to `depth`.
    pub fn synced(&mut self, kind: usize, depth: u32) {
        self.syncs[kind] += 1;
        self.issued(depth);
    }

    /// A measured completion.
    #[inline]
    pub fn done(&mut self, now_ns: u64, end_ns: u64, op: Op, bytes: u64, latency_ns: u64) {
        let d = usize::from(op != Op::Read);
        let [bw, iops] = &mut self.stats;
        self.bw.done(bw, now_ns, end_ns, d, bytes, latency_ns);
        self.iops.done(iops, now_ns, end_ns, d, 1, latency_ns);
    }

    /// `[bw, iops]` per direction `[read, write]`, as they stand when the job ends at `end_ns`.
    pub fn report(&self, end_ns: u64) -> [[RateReport; 2]; 2] {
        [self.bw.finished(&self.stats[0], end_ns).map(|s| s.report()), self.iops.finished(&self.stats[1], end_ns).map(|s| s.report())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn windows_ending_before_the_job_give_one_sample_each() {
        // 4 KiB every ms for 2 s, windows of 500 ms: the window ending at the job's end gives none.
        let mut r = JobRates::new([RateSampling::Window { ms: 500 }; 2], 0);
        let end = 2_000 * MS;
        for k in 0..2_000 {
            r.done(k * MS, end, Op::Write, 4096, 100_000);
        }
        let [bw, iops] = r.report(end);
        assert_eq!(iops[1], RateReport { min: 1000, max: 1000, mean: 1000.0, dev: 0.0, samples: 3 });
        assert_eq!(bw[1], RateReport { min: 4000, max: 4000, mean: 4000.0, dev: 0.0, samples: 3 });
        assert_eq!(bw[0].samples, 0, "no reads");
        // 2.2 s: the window ending at 2 s now counts, the last 200 ms do not.
        assert_eq!(r.report(2_200 * MS)[1][1].samples, 4);
    }

    #[test]
    fn rates_are_whole_units_and_windows_without_io_give_no_sample() {
        let mut r = JobRates::new([RateSampling::Window { ms: 1000 }; 2], 10 * MS);
        let end = 10_000 * MS;
        // Window 0: 3 reads of 1000 bytes; window 1: nothing; window 2: 1 read.
        for at in [10, 20, 30] {
            r.done((10 + at) * MS, end, Op::Read, 1000, 1);
        }
        r.done(2_500 * MS, end, Op::Read, 1000, 1);
        r.done(3_500 * MS, end, Op::Read, 1000, 1);
        let [bw, iops] = r.report(end);
        assert_eq!(iops[0].samples, 3);
        assert_eq!((iops[0].min, iops[0].max), (1, 3));
        // 3000 bytes per s is 2 KiB/s in whole KiB, 1000 bytes per s is 0.
        assert_eq!((bw[0].min, bw[0].max), (0, 2));
        let mean = 5.0 / 3.0;
        assert!((iops[0].mean - mean).abs() < 1e-12);
        let dev = (((3.0 - mean) * (3.0 - mean) + 2.0 * (1.0 - mean) * (1.0 - mean)) / 2.0f64).sqrt();
        assert!((iops[0].dev - dev).abs() < 1e-12);
    }

    #[test]
    fn per_io_samples_take_each_io() {
        let mut r = JobRates::new([RateSampling::PerIo; 2], 0);
        r.done(MS, 10 * MS, Op::Read, 4096, 2_000_000);
        r.done(2 * MS, 10 * MS, Op::Read, 8192, 1_000_000);
        let [bw, iops] = r.report(10 * MS);
        assert_eq!(iops[0], RateReport { min: 1, max: 1, mean: 1.0, dev: 0.0, samples: 2 });
        assert_eq!((bw[0].min, bw[0].max, bw[0].samples), (2048, 8192, 2));
    }

    #[test]
    fn depth_levels_follow_fio_buckets() {
        let mut r = JobRates::new([RateSampling::DEFAULT; 2], 0);
        for d in [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 1000] {
            r.issued(d);
        }
        assert_eq!(r.depth_levels, [1, 2, 2, 2, 2, 2, 2]);
        r.restart(5);
        assert_eq!(r.depth_levels, [0; 7]);
    }
}
