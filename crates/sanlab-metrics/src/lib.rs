//! Metrics: per-entity latency histograms and throughput counters, interval counters that feed the
//! time series, and the time series itself (long format: time, entity, metric, value).
//!
//! Memory is bounded per entity except the time series, which grows by one row per entity and
//! metric per sample interval. An entity's HDR histogram is created with its first measured I/O,
//! so entities that carry none (idle paths, say) cost a few bytes and building a large topology
//! costs nothing before the run; it then grows only as far as the largest latency it has seen
//! (about 80 KB up to 1 ms, at most [`HISTOGRAM_BYTES`] for an hour). Growing does not move any
//! bucket: the figures are those of a histogram allocated whole.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency the histograms resolve: one hour. Larger values are clamped to it.
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % relative error, finer than fio's own ~0.8 % buckets.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Memory of one histogram over that whole range at that precision: 33,792 counts of 8 bytes.
pub const HISTOGRAM_BYTES: u64 = 33_792 * 8;

/// fio's default `percentile_list`, so the fio-compatible output carries the same keys.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Latency and throughput of one entity (a VM, a job direction, a path, a device, an array).
pub struct IoStats {
    /// None until the first measured I/O.
    hist: Option<Histogram<u64>>,
    ios: u64,
    bytes: u64,
    latency_sum_ns: u128,
    interval: IntervalCounter,
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
fn stdev(h: &Histogram<u64>) -> f64 {
    let total = h.len();
    if total == 0 {
        return 0.0;
    }
    let recorded: Vec<(f64, u64)> = h.iter_recorded().map(|v| (h.median_equivalent(v.value_iterated_to()) as f64, v.count_at_value())).collect();
    let mean = recorded.iter().fold(0.0_f64, |sum, &(value, count)| sum + value * count as f64 / total as f64);
    let squares = recorded.iter().fold(0.0_f64, |sum, &(value, count)| {
        let dev = value - mean;
        sum + (dev * dev) * count as f64
    });
    (squares / total as f64).sqrt()
}

/// An empty histogram at the reported precision that grows to fit what it records.
fn new_histogram() -> Histogram<u64> {
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
        }
    }

    /// Records one completed I/O. `measured` is false during warm-up: the interval counters (time
    /// series) still see it, the summary does not.
    #[inline]
    pub fn record(&mut self, latency_ns: u64, size_bytes: u64, measured: bool) {
        self.interval.ios += 1;
        self.interval.bytes += size_bytes;
        self.interval.latency_sum_ns += latency_ns;
        if measured {
            self.ios += 1;
            self.bytes += size_bytes;
            self.latency_sum_ns += u128::from(latency_ns);
            let hist = self.hist.get_or_insert_with(new_histogram);
            // Within 1 ns..1 h an auto-resizing histogram takes every value (it fails only where
            // usize cannot index its counts, below 64 bits).
            hist.record(latency_ns.clamp(1, MAX_TRACKABLE_NS)).expect("a 64-bit histogram grows to any value up to an hour");
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
        if let Some(h) = &self.hist {
            for (o, v) in out.iter_mut().zip(h.value_at_quantiles(qs)) {
                *o = v;
            }
        }
        out
    }

    pub fn latency_ms(&self) -> LatencyMs {
        let ms = |ns: u64| ns as f64 / 1e6;
        let [p50, p95, p99, p999] = self.quantiles_ns([0.50, 0.95, 0.99, 0.999]).map(ms);
        LatencyMs { mean: self.mean_ns() / 1e6, p50, p95, p99, p999, max: self.hist.as_ref().map_or(0.0, |h| ms(h.max())) }
    }

    pub fn latency_ns(&self) -> LatencyNs {
        let values = self.quantiles_ns(FIO_PERCENTILES.map(|p| p / 100.0));
        let percentile = FIO_PERCENTILES.iter().zip(values).map(|(p, v)| (format!("{p:.6}"), v)).collect();
        LatencyNs {
            min: self.hist.as_ref().map_or(0, Histogram::min),
            max: self.hist.as_ref().map_or(0, Histogram::max),
            mean: self.mean_ns(),
            stddev: self.hist.as_ref().map_or(0.0, stdev),
            n: self.ios,
            percentile,
            bins: self.fio_bins(),
        }
    }

    /// The histogram regrouped into fio's buckets: each recorded value (to 0.1 %) counts in
    /// the bucket of its middle.
    fn fio_bins(&self) -> std::collections::BTreeMap<u64, u64> {
        let mut bins = std::collections::BTreeMap::new();
        if let Some(h) = &self.hist {
            for v in h.iter_recorded() {
                let value = h.median_equivalent(v.value_iterated_to());
                *bins.entry(fio_bucket_value(fio_bucket(value))).or_insert(0) += v.count_at_value();
            }
        }
        bins
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
}

struct Series {
    entity: String,
    metric: &'static str,
    values: Vec<f32>,
}

/// Handle to one series (an entity's metric).
#[derive(Clone, Copy, Debug)]
pub struct SeriesId(u32);

impl TimeSeries {
    pub fn series(&mut self, entity: &str, metric: &'static str) -> SeriesId {
        self.series.push(Series { entity: entity.to_string(), metric, values: vec![] });
        SeriesId((self.series.len() - 1) as u32)
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
        let bytes = |s: &IoStats| s.hist.as_ref().unwrap().distinct_values() as u64 * 8;
        assert_eq!(bytes(&s), 16 * 1024, "a microsecond needs the first bucket only");
        s.record(1_000_000, 4096, true);
        assert_eq!(bytes(&s), 11 * 8 * 1024, "a millisecond: 10 buckets of 1,024 counts beyond the first");
        s.record(u64::MAX, 4096, true);
        assert_eq!(bytes(&s), HISTOGRAM_BYTES, "clamped to an hour: the whole range");
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
        assert!(s.hist.as_ref().unwrap().distinct_values() < whole.distinct_values());
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
