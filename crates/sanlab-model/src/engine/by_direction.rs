//! A device's reads and writes apart, per sample: what esxtop's per-direction counters need
//! (Reads/sec, MBytes Read/sec, Average Guest and Driver MilliSec/Read, and the same for writes;
//! `python/sanlab/esxtop.py`). The device's own series add both directions up.

use crate::io::Op;
use sanlab_metrics::{SeriesId, TimeSeries};

/// Series per direction: IOPS, MB/s (10^6), guest latency (entering the device queue to
/// completion, esxtop's GAVG) and driver latency (dispatch to completion, DAVG), in ms.
const METRICS: [[&str; 4]; 2] = [["read_iops", "read_mbps", "read_lat_ms_mean", "read_driver_ms_mean"], ["write_iops", "write_mbps", "write_lat_ms_mean", "write_driver_ms_mean"]];
// The run's cost estimate counts these series (`topology::DEVICE_DIRECTION_SERIES`).
const _: () = assert!(METRICS.len() * METRICS[0].len() == crate::topology::DEVICE_DIRECTION_SERIES as usize);

#[derive(Default, Clone, Copy)]
struct Counts {
    ios: u64,
    bytes: u64,
    guest_ns: u64,
    driver_ns: u64,
}

pub(crate) struct ByDirection {
    counts: [Counts; 2],
    series: [[SeriesId; 4]; 2],
}

impl ByDirection {
    pub fn new(series: &mut TimeSeries, entity: &str) -> Self {
        Self { counts: [Counts::default(); 2], series: METRICS.map(|ms| ms.map(|m| series.series(entity, m))) }
    }

    /// A request of the device completed (every completion counts in its sample, as the
    /// device's own series do).
    #[inline]
    pub fn done(&mut self, op: Op, size_bytes: u32, guest_ns: u64, driver_ns: u64) {
        let c = &mut self.counts[usize::from(op != Op::Read)];
        c.ios += 1;
        c.bytes += u64::from(size_bytes);
        c.guest_ns += guest_ns;
        c.driver_ns += driver_ns;
    }

    /// Pushes the sample's figures and starts the next.
    pub fn sample(&mut self, series: &mut TimeSeries, window_s: f64) {
        for (c, ids) in self.counts.iter_mut().zip(self.series) {
            let c = std::mem::take(c);
            let mean_ms = |ns: u64| if c.ios == 0 { 0.0 } else { ns as f64 / c.ios as f64 / 1e6 };
            for (id, v) in ids.into_iter().zip([c.ios as f64 / window_s, c.bytes as f64 / window_s / 1e6, mean_ms(c.guest_ns), mean_ms(c.driver_ns)]) {
                series.push(id, v);
            }
        }
    }
}
