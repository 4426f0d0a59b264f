//! Metrics: per-entity latency histograms and throughput counters, interval counters that feed the
//! time series, and the time series itself (long format: time, entity, metric, value).
//!
//! Memory is bounded per entity except the time series, which grows by one row per entity and
//! metric per sample interval. An entity's HDR histogram is created with its first measured I/O,
//! so entities that carry none (idle paths, say) cost a few bytes and building a large topology
//! costs nothing before the run; it then grows only as far as the largest latency it has seen
//! (about 80 KB up to 1 ms, at most [`HISTOGRAM_BYTES`] for an hour). Growing does not move any
//! bucket: the figures are those of a histogram allocated whole. Its counts are as narrow as the
//! I/Os it holds allow (2 bytes up to 65,535 I/Os, then 4, then 8), so a VM's histogram is a
//! quarter of that.

use hdrhistogram::{Counter, Histogram};
use serde::Serialize;

/// Highest latency the histograms resolve: one hour. Larger values are clamped to it.
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % relative error, finer than fio's own ~0.8 % buckets.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Memory of one histogram over that whole range at that precision: 33,792 counts of at most 8
/// bytes.
pub const HISTOGRAM_BYTES: u64 = 33_792 * 8;

/// fio's default `percentile_list`, so the fio-compatible output carries the same keys.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Latency and throughput of one entity (a VM, a job direction, a path, a device, an array).
pub struct IoStats {
    /// None until the first measured I/O.
    hist: Option<Counts>,
    /// False for an entity whose distribution is the merge of others' (see [`IoStats::merged`]).
    keeps_histogram: bool,
    ios: u64,
    bytes: u64,
    latency_sum_ns: u128,
    interval: IntervalCounter,
}

/// A histogram with counts as wide as its total needs: no bucket can hold more than the total,
/// so a count cannot overflow before the histogram widens (at 65,535 and 4,294,967,295 I/Os).
enum Counts {
    U16(Histogram<u16>),
    U32(Histogram<u32>),
    U64(Histogram<u64>),
}

/// Runs `$body` with `$h` bound to the histogram, whatever its count type.
macro_rules! with_histogram {
    ($counts:expr, $h:ident => $body:expr) => {
        match $counts {
            Counts::U16($h) => $body,
            Counts::U32($h) => $body,
            Counts::U64($h) => $body,
        }
    };
}

impl Counts {
    #[inline]
    fn record(&mut self, latency_ns: u64) {
        // Within 1 ns..1 h an auto-resizing histogram takes every value (it fails only where
        // usize cannot index its counts, below 64 bits).
        with_histogram!(self, h => h.record(latency_ns)).expect("a 64-bit histogram grows to any value up to an hour");
    }

    /// Moves to wider counts once the total reaches what the narrow ones hold: twice in a
    /// histogram's life, so out of line, behind one comparison per record.
    #[inline(always)]
    fn widen_at(&mut self, total: u64) {
        if total == u64::from(u16::MAX) || total == u64::from(u32::MAX) {
            self.widen(total);
        }
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self, total: u64) {
        match self {
            Counts::U16(h) if total == u64::from(u16::MAX) => *self = Counts::U32(widened(h)),
            Counts::U32(h) if total == u64::from(u32::MAX) => *self = Counts::U64(widened(h)),
            _ => {}
        }
    }
}

/// The same buckets with the same counts, in a wider type.
fn widened<A: Counter, B: Counter>(narrow: &Histogram<A>) -> Histogram<B> {
    let mut wide = new_histogram();
    add_counts(&mut wide, narrow);
    wide
}

/// Adds the counts of `from` to `to`, bucket by bucket (each bucket's recorded value falls in
/// the same bucket of `to`: same precision).
fn add_counts<A: Counter, B: Counter>(to: &mut Histogram<B>, from: &Histogram<A>) {
    for v in from.iter_recorded() {
        let count = B::from_u64(v.count_at_value().as_u64()).expect("a count type at least as wide");
        to.record_n(v.value_iterated_to(), count).expect("a 64-bit histogram grows to any value up to an hour");
    }
}

/// No I/O lost in a component: issued = completed + failed + in flight, with in flight counted
/// from the requests actually alive.
#[derive(Serialize, Debug)]
pub struct Conservation {
    pub component: String,
    pub issued: u64,
    pub completed: u64,
    /// Given up here: moved off a dead path, or an exchange the array dropped.
    pub failed: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.issued == self.completed + self.failed + self.in_flight
    }
}

/// Counts since the last time-series sample.
#[derive(Default, Clone, Copy)]
pub struct IntervalCounter {
    pub ios: u64,
    pub bytes: u64,
    pub latency_sum_ns: u64,
}

impl IntervalCounter {
    /// Returns the counts and starts a new interval.
    pub fn take(&mut self) -> IntervalCounter {
        std::mem::take(self)
    }
}

/// Latency summary in milliseconds, as the CLI and JSON show it.
#[derive(Serialize, Clone, Copy, Default, Debug)]
pub struct LatencyMs {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Latency distribution in nanoseconds, shaped like fio's `clat_ns` object.
#[derive(Serialize, Clone, Debug)]
pub struct LatencyNs {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(rename = "N")]
    pub n: u64,
    pub percentile: std::collections::BTreeMap<String, u64>,
    /// fio's json+ `bins`: I/Os per fio latency bucket, keyed by the bucket's mean value [ns].
    pub bins: std::collections::BTreeMap<u64, u64>,
}

/// fio's latency buckets (stat.h): values below 128 ns have a bucket each; above, each power of
/// two is split into 64 buckets, so a bucket is at most 1/64 of its value wide; 29 groups.
const FIO_PLAT_BITS: u32 = 6;
const FIO_PLAT_VAL: u64 = 1 << FIO_PLAT_BITS;
const FIO_PLAT_NR: u64 = 29 * FIO_PLAT_VAL;

/// The fio bucket of a latency [ns].
fn fio_bucket(ns: u64) -> u64 {
    let msb = 63 - ns.max(1).leading_zeros();
    if msb <= FIO_PLAT_BITS {
        return ns;
    }
    let dropped = msb - FIO_PLAT_BITS;
    let index = (u64::from(dropped) + 1) * FIO_PLAT_VAL + ((ns >> dropped) & (FIO_PLAT_VAL - 1));
    index.min(FIO_PLAT_NR - 1)
}

/// The value fio writes for a bucket: the mean of its range [ns], truncated as fio prints it.
fn fio_bucket_value(index: u64) -> u64 {
    if index < FIO_PLAT_VAL << 1 {
        return index;
    }
    let dropped = (index >> FIO_PLAT_BITS) - 1;
    let base = 1u64 << (dropped + u64::from(FIO_PLAT_BITS));
    (base as f64 + ((index % FIO_PLAT_VAL) as f64 + 0.5) * (1u64 << dropped) as f64) as u64
}

/// `Histogram::stdev`, the same arithmetic in the same order (so the same bits), over one walk of
/// the histogram instead of two: the walk visits every bucket and dominates a large run's report.
fn stdev<T: Counter>(h: &Histogram<T>) -> f64 {
    let total = h.len();
    if total == 0 {
        return 0.0;
    }
    let recorded: Vec<(f64, u64)> = h.iter_recorded().map(|v| (h.median_equivalent(v.value_iterated_to()) as f64, v.count_at_value().as_u64())).collect();
    let mean = recorded.iter().fold(0.0_f64, |sum, &(value, count)| sum + value * count as f64 / total as f64);
    let squares = recorded.iter().fold(0.0_f64, |sum, &(value, count)| {
        let dev = value - mean;
        sum + (dev * dev) * count as f64
    });
    (squares / total as f64).sqrt()
}

/// An empty histogram at the reported precision that grows to fit what it records.
fn new_histogram<T: Counter>() -> Histogram<T> {
    let mut h = Histogram::new_with_bounds(1, 2, SIGNIFICANT_DIGITS).expect("valid histogram bounds");
    h.auto(true);
    h
}

impl Default for IoStats {
    fn default() -> Self {
        Self::new()
    }
}

impl IoStats {
    pub fn new() -> Self {
        Self {
            hist: None,
            ios: 0,
            bytes: 0,
            latency_sum_ns: 0,
            interval: IntervalCounter::default(),
            keeps_histogram: true,
        }
    }

    /// Counts and sums without a histogram, for an entity whose measured I/Os are exactly those
    /// of others: its distribution is theirs merged, when reported ([`IoStats::merged`]).
    pub fn without_histogram() -> Self {
        Self { keeps_histogram: false, ..Self::new() }
    }

    /// These counts with the histogram of `parts` merged: the same buckets with the same counts
    /// as a histogram that had recorded their I/Os itself, so the same figures, bit for bit.
    pub fn merged<'a>(&self, parts: impl IntoIterator<Item = &'a IoStats>) -> IoStats {
        let mut merged: Option<Histogram<u64>> = None;
        for c in parts.into_iter().filter_map(|p| p.hist.as_ref()) {
            let to = merged.get_or_insert_with(new_histogram);
            with_histogram!(c, h => add_counts(to, h));
        }
        IoStats { hist: merged.map(Counts::U64), ios: self.ios, bytes: self.bytes, latency_sum_ns: self.latency_sum_ns, interval: self.interval, keeps_histogram: true }
    }

    /// Whether it records its own histogram.
    pub fn keeps_histogram(&self) -> bool {
        self.keeps_histogram
    }

    /// Records one completed I/O. `measured` is false during warm-up: the interval counters (time
    /// series) still see it, the summary does not.
    #[inline(always)]
    pub fn record(&mut self, latency_ns: u64, size_bytes: u64, measured: bool) {
        self.interval.ios += 1;
        self.interval.bytes += size_bytes;
        self.interval.latency_sum_ns += latency_ns;
        if measured {
            self.ios += 1;
            self.bytes += size_bytes;
            self.latency_sum_ns += u128::from(latency_ns);
            if !self.keeps_histogram {
                return;
            }
            let hist = self.hist.get_or_insert_with(|| Counts::U16(new_histogram()));
            hist.record(latency_ns.clamp(1, MAX_TRACKABLE_NS));
            hist.widen_at(self.ios);
        }
    }

    pub fn ios(&self) -> u64 {
        self.ios
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn interval_mut(&mut self) -> &mut IntervalCounter {
        &mut self.interval
    }

    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 { 0.0 } else { self.latency_sum_ns as f64 / self.ios as f64 }
    }

    /// The values at ascending quantiles `qs`, in one pass over the histogram (0 when empty).
    fn quantiles_ns<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        let mut out = [0; N];
        if let Some(c) = &self.hist {
            with_histogram!(c, h => for (o, v) in out.iter_mut().zip(h.value_at_quantiles(qs)) {
                *o = v;
            });
        }
        out
    }

    pub fn latency_ms(&self) -> LatencyMs {
        let ms = |ns: u64| ns as f64 / 1e6;
        let [p50, p95, p99, p999] = self.quantiles_ns([0.50, 0.95, 0.99, 0.999]).map(ms);
        LatencyMs { mean: self.mean_ns() / 1e6, p50, p95, p99, p999, max: ms(self.max_ns()) }
    }

    pub fn latency_ns(&self) -> LatencyNs {
        let values = self.quantiles_ns(FIO_PERCENTILES.map(|p| p / 100.0));
        let percentile = FIO_PERCENTILES.iter().zip(values).map(|(p, v)| (format!("{p:.6}"), v)).collect();
        LatencyNs {
            min: self.hist.as_ref().map_or(0, |c| with_histogram!(c, h => h.min())),
            max: self.max_ns(),
            mean: self.mean_ns(),
            stddev: self.hist.as_ref().map_or(0.0, |c| with_histogram!(c, h => stdev(h))),
            n: self.ios,
            percentile,
            bins: self.fio_bins(),
        }
    }

    fn max_ns(&self) -> u64 {
        self.hist.as_ref().map_or(0, |c| with_histogram!(c, h => h.max()))
    }

    /// The histogram regrouped into fio's buckets: each recorded value (to 0.1 %) counts in
    /// the bucket of its middle.
    fn fio_bins(&self) -> std::collections::BTreeMap<u64, u64> {
        let mut bins = std::collections::BTreeMap::new();
        if let Some(c) = &self.hist {
            with_histogram!(c, h => for v in h.iter_recorded() {
                let value = h.median_equivalent(v.value_iterated_to());
                *bins.entry(fio_bucket_value(fio_bucket(value))).or_insert(0) += v.count_at_value().as_u64();
            });
        }
        bins
    }
}

/// A running total's value when the measured time began (the warm-up's end): what the measured
/// time added is the total less it. Each counter a report takes over the measured time keeps
/// one; the measured span is the run's, passed when the figure is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Baseline<T>(T);

impl<T: Copy + std::ops::Sub<Output = T>> Baseline<T> {
    /// The measured time starts with the total at `total`.
    pub fn set(&mut self, total: T) {
        self.0 = total;
    }

    /// What `total` gained since the measured time started.
    pub fn since(&self, total: T) -> T {
        total - self.0
    }
}

/// Time integrals of `N` levels (queue occupancies, busy servers), for time averages.
#[derive(Clone, Copy, Debug)]
pub struct TimeWeighted<const N: usize> {
    area: [u128; N],
    last_ns: u64,
}

impl<const N: usize> Default for TimeWeighted<N> {
    fn default() -> Self {
        Self { area: [0; N], last_ns: 0 }
    }
}

impl<const N: usize> TimeWeighted<N> {
    /// Accounts for `levels` having held since the last call.
    #[inline]
    pub fn advance(&mut self, now: u64, levels: [u64; N]) {
        let dt = u128::from(now - self.last_ns);
        for (a, l) in self.area.iter_mut().zip(levels) {
            *a += u128::from(l) * dt;
        }
        self.last_ns = now;
    }

    /// Level-time integrals so far (level × ns).
    pub fn area(&self) -> [u128; N] {
        self.area
    }

    /// Mean levels over the last `window_ns` (call `advance` first); starts a new window.
    pub fn take_means(&mut self, window_ns: u64) -> [f64; N] {
        let w = window_ns.max(1) as f64;
        let out = self.area.map(|a| a as f64 / w);
        self.area = [0; N];
        out
    }
}

/// Sampled time series: one column of values per (entity, metric), sharing one time column.
/// Stored as `f32` (seven significant digits, plenty for a per-interval rate or mean), so a
/// sample of one series costs 4 bytes. Serialised in long format (`t_s`, `entity`, `metric`,
/// `value`) without building the long table in memory.
#[derive(Default)]
pub struct TimeSeries {
    t_ns: Vec<u64>,
    series: Vec<Series>,
    /// The owner key of the series registered next (see [`TimeSeries::set_owner`]).
    owner: u64,
}

struct Series {
    entity: String,
    metric: &'static str,
    values: Vec<f32>,
    /// The build step that registered it and the index of the entity it belongs to there, as
    /// `step << 32 | index`: what orders the series of parts run apart ([`TimeSeries::merge`]).
    owner: u64,
}

/// Handle to one series (an entity's metric).
#[derive(Clone, Copy, Debug)]
pub struct SeriesId(u32);

impl TimeSeries {
    pub fn series(&mut self, entity: &str, metric: &'static str) -> SeriesId {
        self.series.push(Series { entity: entity.to_string(), metric, values: vec![], owner: self.owner });
        SeriesId((self.series.len() - 1) as u32)
    }

    /// The series registered from now on belong to entity `index` of build step `step`. A run
    /// registers its series in (step, index) order.
    pub fn set_owner(&mut self, step: u8, index: usize) {
        self.owner = (u64::from(step) << 32) | index as u64;
    }

    /// The series of independent parts of one topology, each run apart over the same sample
    /// times, as one run of the whole registers them: every series' owner index mapped to the
    /// whole's by `whole_index(part, step, index)`, then the series in (step, whole index)
    /// order, a part's own order kept among one owner's series.
    pub fn merge(parts: Vec<TimeSeries>, whole_index: impl Fn(usize, u8, usize) -> usize) -> TimeSeries {
        let mut t_ns = None;
        let mut series = vec![];
        for (k, part) in parts.into_iter().enumerate() {
            let times = t_ns.get_or_insert_with(|| part.t_ns.clone());
            assert_eq!(*times, part.t_ns, "every part is sampled at the same times");
            series.extend(part.series.into_iter().map(|mut s| {
                let step = (s.owner >> 32) as u8;
                s.owner = (u64::from(step) << 32) | whole_index(k, step, (s.owner & 0xffff_ffff) as usize) as u64;
                s
            }));
        }
        series.sort_by_key(|s| s.owner);
        TimeSeries { t_ns: t_ns.unwrap_or_default(), series, owner: 0 }
    }

    /// Starts the sample at `t_ns`; then [`TimeSeries::push`] each series once.
    pub fn begin_sample(&mut self, t_ns: u64) {
        self.t_ns.push(t_ns);
    }

    pub fn push(&mut self, id: SeriesId, value: f64) {
        let s = &mut self.series[id.0 as usize];
        debug_assert_eq!(s.values.len() + 1, self.t_ns.len(), "one value per series per sample");
        s.values.push(value as f32);
    }

    pub fn rows(&self) -> usize {
        self.series.iter().map(|s| s.values.len()).sum()
    }

    /// Series recorded (each entity's metrics).
    pub fn series_count(&self) -> usize {
        self.series.len()
    }

    /// Samples taken so far.
    pub fn samples(&self) -> usize {
        self.t_ns.len()
    }

    /// Sample times (s) and values of one series.
    pub fn get(&self, entity: &str, metric: &str) -> Option<Vec<(f64, f64)>> {
        let s = self.series.iter().find(|s| s.entity == entity && s.metric == metric)?;
        Some(self.t_ns.iter().zip(&s.values).map(|(t, v)| (*t as f64 / 1e9, f64::from(*v))).collect())
    }

    /// Sample times, ns.
    pub fn times_ns(&self) -> &[u64] {
        &self.t_ns
    }

    /// Every entity's values of `metric`, found in one pass (where [`TimeSeries::get`] for
    /// each of 10,000 entities would search 100,000 series each time).
    pub fn by_entity(&self, metric: &str) -> std::collections::HashMap<&str, &[f32]> {
        self.series.iter().filter(|s| s.metric == metric).map(|s| (s.entity.as_str(), s.values.as_slice())).collect()
    }
}

/// The three series every I/O-carrying entity has: IOPS, MB/s and mean latency per interval.
#[derive(Clone, Copy, Debug)]
pub struct IoSeries {
    iops: SeriesId,
    mbps: SeriesId,
    lat_ms_mean: SeriesId,
}

impl IoSeries {
    pub fn new(ts: &mut TimeSeries, entity: &str) -> Self {
        Self { iops: ts.series(entity, "iops"), mbps: ts.series(entity, "mbps"), lat_ms_mean: ts.series(entity, "lat_ms_mean") }
    }

    /// Pushes the interval's figures of `stats` and starts its next interval.
    pub fn sample(&self, ts: &mut TimeSeries, stats: &mut IoStats, window_s: f64) {
        let c = stats.interval_mut().take();
        ts.push(self.iops, c.ios as f64 / window_s);
        ts.push(self.mbps, c.bytes as f64 / window_s / 1e6);
        ts.push(self.lat_ms_mean, if c.ios == 0 { 0.0 } else { c.latency_sum_ns as f64 / c.ios as f64 / 1e6 });
    }
}

/// What every entity that requests pass through counts: requests taken on, finished, and given
/// up (moved off a dead path, an exchange the array dropped), their latency and throughput, and
/// its IOPS/MB/s/latency series.
pub struct Tally {
    pub issued: u64,
    pub completed: u64,
    pub failed: u64,
    pub stats: IoStats,
    pub series: IoSeries,
}

impl Tally {
    /// The counters and series of `entity` (`path/p0`); without `own_histogram` its latencies are
    /// recorded elsewhere and merged when reported.
    pub fn new(series: &mut TimeSeries, entity: &str, own_histogram: bool) -> Self {
        let stats = if own_histogram { IoStats::new() } else { IoStats::without_histogram() };
        Self { issued: 0, completed: 0, failed: 0, stats, series: IoSeries::new(series, entity) }
    }

    #[inline]
    pub fn done(&mut self, latency_ns: u64, size_bytes: u32, measured: bool) {
        self.completed += 1;
        self.stats.record(latency_ns, u64::from(size_bytes), measured);
    }

    /// Pushes the interval's figures and starts the next interval.
    pub fn sample(&mut self, series: &mut TimeSeries, window_s: f64) {
        self.series.sample(series, &mut self.stats, window_s);
    }

    /// Checks the counters against `in_flight`, the requests actually alive in the component.
    pub fn conservation(&self, component: String, in_flight: u64) -> Conservation {
        Conservation { component, issued: self.issued, completed: self.completed, failed: self.failed, in_flight }
    }
}

impl Serialize for TimeSeries {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // Long format, row order: time, then series.
        struct Column<'a, F: Fn(usize, &'a Series) -> Cell<'a>>(&'a TimeSeries, F);
        enum Cell<'a> {
            Num(f64),
            // Written as the f32 it is, so 7161.8 stays 7161.8 and not 7161.7998046875.
            Num32(f32),
            Text(&'a str),
        }
        impl<'a, F: Fn(usize, &'a Series) -> Cell<'a>> Serialize for Column<'a, F> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let ts = self.0;
                let mut seq = serializer.serialize_seq(Some(ts.rows()))?;
                for i in 0..ts.t_ns.len() {
                    for s in ts.series.iter().filter(|s| s.values.len() > i) {
                        match (self.1)(i, s) {
                            Cell::Num(x) => seq.serialize_element(&x)?,
                            Cell::Num32(x) => seq.serialize_element(&x)?,
                            Cell::Text(t) => seq.serialize_element(t)?,
                        }
                    }
                }
                seq.end()
            }
        }
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("t_s", &Column(self, |i, _| Cell::Num(self.t_ns[i] as f64 / 1e9)))?;
        map.serialize_entry("entity", &Column(self, |_, s| Cell::Text(&s.entity)))?;
        map.serialize_entry("metric", &Column(self, |_, s| Cell::Text(s.metric)))?;
        map.serialize_entry("value", &Column(self, |i, s| Cell::Num32(s.values[i])))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_mean_follow_the_recorded_values() {
        let mut s = IoStats::new();
        for i in 1..=1000u64 {
            s.record(i * 1_000, 4096, true);
        }
        s.record(5, 4096, false); // warm-up: not in the summary
        let l = s.latency_ms();
        assert_eq!(s.ios(), 1000);
        assert!((l.mean - 0.5005).abs() < 1e-9, "{l:?}");
        assert!((l.p50 - 0.5).abs() < 0.001);
        assert!((l.p99 - 0.99).abs() < 0.002);
        assert!((l.max - 1.0).abs() < 0.001);
        let ns = s.latency_ns();
        assert_eq!(ns.n, 1000);
        assert!(ns.percentile.contains_key("99.990000"));
        assert_eq!(s.interval_mut().take().ios, 1001);
        assert_eq!(s.interval_mut().ios, 0);
    }

    #[test]
    fn fio_buckets_follow_fio() {
        // Exact below 128 ns; then 64 buckets per power of two, written as their mean.
        assert_eq!((fio_bucket(100), fio_bucket_value(100)), (100, 100));
        assert_eq!(fio_bucket(128), 128);
        assert_eq!(fio_bucket_value(128), 129, "128 and 129 share a bucket");
        assert_eq!(fio_bucket(1_000_000), fio_bucket(1_007_000));
        let b = fio_bucket(1_000_000);
        assert_eq!((fio_bucket_value(b), fio_bucket_value(b + 1) - fio_bucket_value(b)), (1_003_520, 8_192), "as fio writes it");
        let mut s = IoStats::new();
        for ns in [40, 50, 50, 1_000_000] {
            s.record(ns, 4096, true);
        }
        assert_eq!(s.latency_ns().bins.into_iter().collect::<Vec<_>>(), [(40, 1), (50, 2), (1_003_520, 1)]);
    }

    #[test]
    fn histograms_are_allocated_by_the_first_measured_io() {
        let mut s = IoStats::new();
        assert!(s.hist.is_none(), "an idle entity holds no histogram");
        assert_eq!((s.latency_ms().p99, s.latency_ns().max), (0.0, 0));
        s.record(1_000, 4096, false);
        assert!(s.hist.is_none(), "warm-up I/Os are not in the summary");
        s.record(1_000, 4096, true);
        assert_eq!(counts_bytes(&s), 2 * 2048, "a microsecond needs the first bucket only, in 2-byte counts");
        s.record(1_000_000, 4096, true);
        assert_eq!(counts_bytes(&s), 2 * 11 * 1024, "a millisecond: 10 buckets of 1,024 counts beyond the first");
        s.record(u64::MAX, 4096, true);
        assert_eq!(counts_bytes(&s) as u64 * 4, HISTOGRAM_BYTES, "clamped to an hour: the whole range, in 2-byte counts");
    }

    /// Bytes of the counts an entity holds.
    fn counts_bytes(s: &IoStats) -> usize {
        s.hist.as_ref().map_or(0, |c| with_histogram!(c, h => h.distinct_values() * std::mem::size_of_val(&h.count_at(1))))
    }

    #[test]
    fn a_merged_histogram_reports_what_one_recording_every_io_does() {
        let (mut whole, mut derived, mut reads, mut writes) = (IoStats::new(), IoStats::without_histogram(), IoStats::new(), IoStats::new());
        let mut x = 3u64;
        for i in 0..70_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let latency_ns = (x >> 40) * (x >> 62 | 1);
            let measured = i >= 100;
            whole.record(latency_ns, 8192, measured);
            derived.record(latency_ns, 8192, measured);
            if i % 3 == 0 { &mut writes } else { &mut reads }.record(latency_ns, 8192, measured);
        }
        assert!(derived.hist.is_none());
        let merged = derived.merged([&reads, &writes]);
        let (a, b) = (whole.latency_ns(), merged.latency_ns());
        assert_eq!((a.min, a.max, a.n, a.mean.to_bits(), a.stddev.to_bits()), (b.min, b.max, b.n, b.mean.to_bits(), b.stddev.to_bits()));
        assert_eq!((a.percentile, a.bins), (b.percentile, b.bins));
        assert_eq!(format!("{:?}", whole.latency_ms()), format!("{:?}", merged.latency_ms()));
    }

    #[test]
    fn widening_counts_keeps_every_figure() {
        let mut whole = Histogram::<u64>::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).unwrap();
        let mut s = IoStats::new();
        let mut x = 7u64;
        // One bucket takes more I/Os than a 2-byte count holds.
        for i in 0..100_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let latency_ns = if i % 10 == 0 { (x >> 44) + 1 } else { 250_000 };
            s.record(latency_ns, 4096, true);
            whole.record(latency_ns).unwrap();
            if i + 1 == u64::from(u16::MAX) - 1 {
                assert!(matches!(s.hist, Some(Counts::U16(_))), "2-byte counts below 65,535 I/Os");
            }
        }
        assert!(matches!(s.hist, Some(Counts::U32(_))), "4-byte counts from 65,535 I/Os");
        let expected: std::collections::BTreeMap<String, u64> = FIO_PERCENTILES.iter().map(|p| (format!("{p:.6}"), whole.value_at_quantile(p / 100.0))).collect();
        let ns = s.latency_ns();
        assert_eq!(ns.percentile, expected);
        assert_eq!((ns.max, ns.min), (whole.max(), whole.min()));
        assert_eq!(ns.stddev.to_bits(), whole.stdev().to_bits());
        assert_eq!(ns.bins.values().sum::<u64>(), 100_000);
        assert_eq!(whole.count_at(250_000), 90_000);
    }

    #[test]
    fn a_grown_histogram_reports_what_one_allocated_whole_does() {
        let mut whole = Histogram::<u64>::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).unwrap();
        let mut s = IoStats::new();
        let mut x = 1u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let latency_ns = (x >> 40) * (x >> 60 | 1); // 1 ns to ~1.5e8 ns, skewed
            s.record(latency_ns, 4096, true);
            whole.saturating_record(latency_ns.clamp(1, MAX_TRACKABLE_NS));
        }
        let expected: std::collections::BTreeMap<String, u64> = FIO_PERCENTILES.iter().map(|p| (format!("{p:.6}"), whole.value_at_quantile(p / 100.0))).collect();
        let ns = s.latency_ns();
        assert_eq!(ns.percentile, expected);
        assert_eq!((ns.max, ns.min), (whole.max(), whole.min()));
        assert_eq!(ns.stddev.to_bits(), whole.stdev().to_bits(), "hdrhistogram's arithmetic, bit for bit");
        assert!(counts_bytes(&s) < whole.distinct_values() * 8);
    }

    #[test]
    fn time_series_serialises_in_long_format() {
        let mut ts = TimeSeries::default();
        let a = ts.series("vm/a", "iops");
        let b = ts.series("vm/a", "lat_ms_mean");
        for (t, x) in [(1_000_000_000, 5.0), (2_000_000_000, 6.5)] {
            ts.begin_sample(t);
            ts.push(a, x);
            ts.push(b, x / 10.0);
        }
        assert_eq!(ts.rows(), 4);
        let j: serde_json::Value = serde_json::to_value(&ts).unwrap();
        assert_eq!(j["t_s"], serde_json::json!([1.0, 1.0, 2.0, 2.0]));
        assert_eq!(j["metric"], serde_json::json!(["iops", "lat_ms_mean", "iops", "lat_ms_mean"]));
        assert_eq!(j["value"][2], serde_json::json!(6.5));
    }
}
