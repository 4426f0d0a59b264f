//! Per-volume QoS in the SolidFire (NetApp Element) style.
//!
//! Limits are in 4 KiB-equivalent IOPS: a request of size S costs `curve(S) / 100` units, from the
//! I/O-size cost curve (4K=100, 8K=160, 16K=270, 32K=500, 64K=1000, 128K=1950, 256K=3900,
//! 512K=7600, 1M=15000; linear between points, proportional beyond 1 MiB — our choice). A volume
//! may run at `max` units per second, or at `burst` while it has burst credit: one second of
//! credit accrues for every second it runs below `max`, up to 60 s, and bursting spends it.
//! Requests over the limit are held at the array, in order, while they keep their host queue
//! slots: that is the latency SolidFire injects (Baker 2019). Under contention for the array's
//! media, requests of volumes running below their `min` are served first. Sources:
//! NetAppDocs/element-software (QoS concepts and API); docs/references.md.

use sanlab_spec::{Spec, SpecResult};
use sanlab_metrics::Baseline;
use std::collections::VecDeque;

const DEFAULT_CURVE: [(u64, f64); 9] = [
    (4096, 100.0), (8192, 160.0), (16384, 270.0), (32768, 500.0), (65536, 1000.0),
    (131072, 1950.0), (262144, 3900.0), (524288, 7600.0), (1048576, 15000.0),
];

/// A volume's QoS settings.
#[derive(Clone, Debug)]
pub struct QosParams {
    pub min_iops: f64,
    pub max_iops: f64,
    pub burst_iops: f64,
    pub max_credit_s: f64,
    pub initial_credit_s: f64,
    curve: Vec<(u64, f64)>,
}

impl QosParams {
    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let min = spec.float("min", 50.0, 0.0, 1e9, "minimum 4K IOPS, honoured under contention")?;
        let max = spec.float("max", 15_000.0, 1.0, 1e9, "sustained maximum 4K IOPS")?;
        let burst = spec.float("burst", 15_000.0, 1.0, 1e9, "4K IOPS while burst credit lasts")?;
        let max_credit = spec.float("burst_time_s", 60.0, 0.0, 1e6, "most burst credit a volume can hold, seconds")?;
        let initial = spec.float("initial_credit_s", 60.0, 0.0, 1e6, "burst credit at the start (a volume idle before the run has it all)")?;
        let curve_given = spec.has("cost_curve");
        let raw = spec.tables_or_pairs("cost_curve", "[[size, cost], ...] with cost 100 at 4 KiB; default SolidFire's")?;
        if spec.is_describing() {
            return Ok(Self::with(min, max, burst, max_credit, initial, DEFAULT_CURVE.to_vec()));
        }
        if min > max {
            return Err(spec.error("min", format!("{min} is above max ({max}): expected min <= max")));
        }
        if burst < max {
            return Err(spec.error("burst", format!("{burst} is below max ({max}): expected burst >= max")));
        }
        let curve = if curve_given {
            let mut curve = vec![];
            for (i, (size, cost)) in raw.iter().enumerate() {
                if let Some((prev_size, prev_cost)) = curve.last() {
                    if size <= prev_size || cost <= prev_cost {
                        return Err(spec.error(
                            "cost_curve",
                            format!("entry {i} ({size} bytes, cost {cost}) does not increase on entry {} ({prev_size} bytes, cost {prev_cost}): sizes and costs must both increase", i - 1),
                        ));
                    }
                }
                curve.push((*size, *cost));
            }
            if curve.is_empty() {
                return Err(spec.error("cost_curve", "is empty: give at least one [size, cost] pair"));
            }
            curve
        } else {
            DEFAULT_CURVE.to_vec()
        };
        Ok(Self::with(min, max, burst, max_credit, initial.min(max_credit), curve))
    }

    fn with(min_iops: f64, max_iops: f64, burst_iops: f64, max_credit_s: f64, initial_credit_s: f64, curve: Vec<(u64, f64)>) -> Self {
        Self { min_iops, max_iops, burst_iops, max_credit_s, initial_credit_s, curve }
    }

    /// Cost of one request of `size` bytes, in 4K-equivalent I/Os (curve value / 100).
    pub fn units(&self, size: u64) -> f64 {
        let c = &self.curve;
        let cost = if size <= c[0].0 {
            c[0].1
        } else if let Some(w) = c.windows(2).find(|w| size <= w[1].0) {
            let (a, b) = (w[0], w[1]);
            a.1 + (b.1 - a.1) * (size - a.0) as f64 / (b.0 - a.0) as f64
        } else {
            let last = c[c.len() - 1];
            last.1 * size as f64 / last.0 as f64
        };
        cost / 100.0
    }
}

/// A volume's QoS state at the array.
pub struct QosState {
    pub params: QosParams,
    credit_s: f64,
    /// Earliest time the next held request may be released.
    next_free_ns: u64,
    last_release_ns: u64,
    held: VecDeque<u32>,
    pub timer_pending: bool,
    /// Units released in the current and the previous second, for the below-min test.
    window_start_ns: u64,
    window_units: f64,
    last_rate: f64,
    pub released: u64,
    pub held_ns_sum: u128,
    released_at_start: Baseline<u64>,
    held_at_start: Baseline<u128>,
}

impl QosState {
    pub fn new(params: QosParams) -> Self {
        let credit_s = params.initial_credit_s;
        Self {
            params,
            credit_s,
            next_free_ns: 0,
            last_release_ns: 0,
            held: VecDeque::new(),
            timer_pending: false,
            window_start_ns: 0,
            window_units: 0.0,
            last_rate: 0.0,
            released: 0,
            held_ns_sum: 0,
            released_at_start: Baseline::default(),
            held_at_start: Baseline::default(),
        }
    }

    /// The measured time starts: releases and hold times count from here.
    pub fn measure_from(&mut self) {
        self.released_at_start.set(self.released);
        self.held_at_start.set(self.held_ns_sum);
    }

    /// Requests released, and their time held (ns), over the measured time.
    pub fn measured(&self) -> (u64, u128) {
        (self.released_at_start.since(self.released), self.held_at_start.since(self.held_ns_sum))
    }

    /// A request arrives: true if it may go on now, else it is held until [`QosState::release`].
    pub fn arrive(&mut self, now: u64, io: u32, size: u64) -> bool {
        if self.held.is_empty() && now >= self.next_free_ns {
            self.admit(now, size);
            return true;
        }
        self.held.push_back(io);
        false
    }

    /// Time the head of the held queue may go, if any is held.
    pub fn next_release_ns(&self) -> Option<u64> {
        (!self.held.is_empty()).then_some(self.next_free_ns)
    }

    /// Releases the head of the held queue (call at `next_release_ns`); `size_of` gives its size.
    pub fn release(&mut self, now: u64, size_of: impl Fn(u32) -> u64) -> Option<u32> {
        let io = self.held.pop_front()?;
        self.admit(now, size_of(io));
        Some(io)
    }

    fn admit(&mut self, now: u64, size: u64) {
        let units = self.params.units(size);
        // Credit: spend while running above max, earn while below (SolidFire's burst credit).
        let dt_s = (now - self.last_release_ns) as f64 / 1e9;
        if dt_s > 0.0 {
            // Running at max (to rounding) neither earns nor spends.
            let rate = units / dt_s;
            if rate > self.params.max_iops * 1.001 {
                self.credit_s = (self.credit_s - dt_s).max(0.0);
            } else if rate < self.params.max_iops * 0.999 {
                self.credit_s = (self.credit_s + dt_s).min(self.params.max_credit_s);
            }
        }
        let limit = if self.credit_s > 0.0 { self.params.burst_iops } else { self.params.max_iops };
        let start = now.max(self.next_free_ns);
        self.next_free_ns = start + (units / limit * 1e9).round() as u64;
        self.last_release_ns = now;
        self.released += 1;
        if now - self.window_start_ns >= 1_000_000_000 {
            self.last_rate = self.window_units / ((now - self.window_start_ns) as f64 / 1e9);
            self.window_start_ns = now;
            self.window_units = 0.0;
        }
        self.window_units += units;
    }

    /// Whether the volume ran below its min over the last measured second (served first under
    /// contention).
    pub fn below_min(&self) -> bool {
        self.last_rate < self.params.min_iops
    }

    pub fn held(&self) -> usize {
        self.held.len()
    }

    pub fn credit_s(&self) -> f64 {
        self.credit_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(src: &str) -> SpecResult<QosParams> {
        let t: toml::Table = src.parse().unwrap();
        QosParams::from_spec(Spec::new(&t, "volume[0].qos"))
    }

    #[test]
    fn cost_curve_matches_solidfire_figures() {
        let p = params("").unwrap();
        // 6000 burst at 256 KiB is 154 IOPS (Baker 2019); bronze 2000 at 128 KiB pieces: 102.6/s.
        assert!((6000.0 / p.units(262_144) - 153.8).abs() < 0.1);
        assert!((2000.0 / p.units(131_072) - 102.6).abs() < 0.1);
        assert_eq!(p.units(4096), 1.0);
        assert_eq!(p.units(512), 1.0);
        assert!((p.units(98_304) - 14.75).abs() < 1e-9, "midway between 64K and 128K");
        assert_eq!(p.units(2 << 20), 300.0);
    }

    #[test]
    fn holds_requests_to_the_limit_then_spends_credit() {
        let mut q = QosState::new(params("min = 25\nmax = 1000\nburst = 2000\ninitial_credit_s = 1").unwrap());
        // 64 KiB requests cost 10 units: burst 2000 → one per 5 ms while credit lasts.
        let mut t = 0;
        let mut released = vec![];
        assert!(q.arrive(0, 0, 65_536));
        for io in 1..400 {
            assert!(!q.arrive(0, io, 65_536));
        }
        while let Some(at) = q.next_release_ns() {
            t = at;
            released.push(t);
            q.release(t, |_| 65_536);
        }
        assert!((released[0] as f64 - 5e6).abs() < 1.0, "{}", released[0]);
        // After ~1 s of bursting the credit is gone: spacing doubles to 10 ms.
        let gap = released[390] - released[389];
        assert_eq!(gap, 10_000_000);
        assert_eq!(q.credit_s(), 0.0);
        let _ = t;
    }

    #[test]
    fn bad_settings_are_located() {
        assert_eq!(params("min = 2000\nmax = 1000").err().unwrap().message, "2000 is above max (1000): expected min <= max");
        assert!(params("max = 1000\nburst = 500").err().unwrap().message.contains("expected burst >= max"));
        let e = params("cost_curve = [[4096, 100], [8192, 90]]").err().unwrap();
        assert_eq!(e.location, "volume[0].qos.cost_curve");
        assert!(e.message.contains("must both increase"), "{}", e.message);
    }
}
