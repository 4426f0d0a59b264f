//! Metrics: per-entity latency histograms and throughput counters, interval counters that feed the
//! time series, and the time series itself (long format: time, entity, metric, value).
//!
//! Memory is fixed per entity (HDR histograms with a fixed range) except the time series, which
//! grows by one row per entity and metric per sample interval.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency the histograms resolve: one hour. Larger values are clamped to it.
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % relative error, finer than fio's own ~0.8 % buckets.
const SIGNIFICANT_DIGITS: u8 = 3;

/// fio's default `percentile_list`, so the fio-compatible output carries the same keys.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Latency and throughput of one entity (a VM, a job direction, a path, a device, an array).
pub struct IoStats {
    hist: Histogram<u64>,
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
}

impl Default for IoStats {
    fn default() -> Self {
        Self::new()
    }
}

impl IoStats {
    pub fn new() -> Self {
        Self {
            hist: Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).expect("valid histogram bounds"),
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
            self.hist.saturating_record(latency_ns.clamp(1, MAX_TRACKABLE_NS));
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

    fn quantile_ns(&self, q: f64) -> u64 {
        if self.ios == 0 { 0 } else { self.hist.value_at_quantile(q) }
    }

    pub fn latency_ms(&self) -> LatencyMs {
        let ms = |ns: u64| ns as f64 / 1e6;
        LatencyMs {
            mean: self.mean_ns() / 1e6,
            p50: ms(self.quantile_ns(0.50)),
            p95: ms(self.quantile_ns(0.95)),
            p99: ms(self.quantile_ns(0.99)),
            p999: ms(self.quantile_ns(0.999)),
            max: if self.ios == 0 { 0.0 } else { ms(self.hist.max()) },
        }
    }

    pub fn latency_ns(&self) -> LatencyNs {
        let percentile = FIO_PERCENTILES
            .iter()
            .map(|p| (format!("{p:.6}"), self.quantile_ns(p / 100.0)))
            .collect();
        LatencyNs {
            min: if self.ios == 0 { 0 } else { self.hist.min() },
            max: if self.ios == 0 { 0 } else { self.hist.max() },
            mean: self.mean_ns(),
            stddev: if self.ios == 0 { 0.0 } else { self.hist.stdev() },
            n: self.ios,
            percentile,
        }
    }
}

/// Sampled time series in long format. Entities and metrics are interned, so a row costs
/// 8 + 4 + 2 + 8 bytes.
#[derive(Default)]
pub struct TimeSeries {
    entities: Vec<String>,
    metrics: Vec<&'static str>,
    t_ns: Vec<u64>,
    entity: Vec<u32>,
    metric: Vec<u16>,
    value: Vec<f64>,
}

/// Handle to an interned entity name.
#[derive(Clone, Copy)]
pub struct EntityId(u32);

#[derive(Serialize)]
pub struct TimeSeriesColumns {
    pub t_s: Vec<f64>,
    pub entity: Vec<String>,
    pub metric: Vec<String>,
    pub value: Vec<f64>,
}

impl TimeSeries {
    pub fn entity(&mut self, name: String) -> EntityId {
        self.entities.push(name);
        EntityId((self.entities.len() - 1) as u32)
    }

    pub fn push(&mut self, t_ns: u64, entity: EntityId, metric: &'static str, value: f64) {
        let m = match self.metrics.iter().position(|x| *x == metric) {
            Some(i) => i,
            None => {
                self.metrics.push(metric);
                self.metrics.len() - 1
            }
        };
        self.t_ns.push(t_ns);
        self.entity.push(entity.0);
        self.metric.push(m as u16);
        self.value.push(value);
    }

    pub fn rows(&self) -> usize {
        self.t_ns.len()
    }

    pub fn columns(&self) -> TimeSeriesColumns {
        TimeSeriesColumns {
            t_s: self.t_ns.iter().map(|t| *t as f64 / 1e9).collect(),
            entity: self.entity.iter().map(|e| self.entities[*e as usize].clone()).collect(),
            metric: self.metric.iter().map(|m| self.metrics[*m as usize].to_string()).collect(),
            value: self.value.clone(),
        }
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
    fn time_series_interns_names() {
        let mut ts = TimeSeries::default();
        let a = ts.entity("vm/a".into());
        ts.push(1_000_000_000, a, "iops", 5.0);
        ts.push(2_000_000_000, a, "iops", 6.0);
        let c = ts.columns();
        assert_eq!(c.t_s, vec![1.0, 2.0]);
        assert_eq!(c.entity, vec!["vm/a", "vm/a"]);
        assert_eq!(ts.rows(), 2);
    }
}
