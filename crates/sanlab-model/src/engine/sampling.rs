//! The time series: every sample interval, each entity's interval figures.

use super::{pack, Ev, World};
use sanlab_des::SimTime;
use sanlab_metrics::TimeSeries;

/// The sampling stage's state: the run's time series and its sample clock. Each stage writes its
/// entities' figures into the series when asked; the report takes the series at the end.
pub(super) struct SamplingStage {
    series: TimeSeries,
    /// The sample interval (0: none), and the last sample's time.
    interval_ns: SimTime,
    last_ns: SimTime,
}

impl SamplingStage {
    /// `series` holds every entity's series, registered when the world was built.
    pub(super) fn new(series: TimeSeries, interval_ns: SimTime) -> Self {
        Self { series, interval_ns, last_ns: 0 }
    }

    /// The series, moved out: at the end of the run.
    pub(super) fn take_series(&mut self) -> TimeSeries {
        std::mem::take(&mut self.series)
    }
}

impl World {
    /// The run starts: the first sample is armed.
    pub(super) fn arm_sampling(&mut self) {
        if self.sampling.interval_ns > 0 {
            self.q.schedule_at(self.sampling.interval_ns.min(self.end_ns), pack(Ev::Sample, 0));
        }
    }

    pub(super) fn sample(&mut self) {
        let now = self.q.now();
        let s = &mut self.sampling;
        let window = now - s.last_ns;
        s.last_ns = now;
        let secs = window as f64 / 1e9;
        let measured = now > self.warmup_ns;
        s.series.begin_sample(now);
        self.host.sample(&mut s.series, now, window, secs, measured);
        self.array.sample(&mut s.series, now, window, secs);
        let next = now + s.interval_ns;
        if next <= self.end_ns {
            self.q.schedule_at(next, pack(Ev::Sample, 0));
        }
    }
}
