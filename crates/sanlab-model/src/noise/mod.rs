//! Noise: latency and service-time parameters drawn from a distribution.
//!
//! A parameter written as a duration (`latency = "50us"`) is fixed and draws no random numbers,
//! so a scenario without noise runs exactly as before. Written as a table it names a kind:
//! `{ kind = "lognormal", mean = "50us", cv = 0.5 }`, `exponential`, `uniform`, `empirical` (a
//! CDF from a file) or `fixed`. Each random parameter of each entity draws from its own stream,
//! derived from the run seed and `<entity>/<parameter>`, so noise on one link changes no other
//! entity's numbers. docs/models/noise.md says which real effects each kind stands for.

mod empirical;
mod exponential;
mod fixed;
mod lognormal;
mod uniform;

use sanlab_spec::{build_kind, Kind, KindDoc, Spec, SpecResult};
use toml::Value;
use sanlab_des::RngStream;
use std::sync::Arc;

/// A distribution of durations.
pub trait Distribution {
    /// One draw, ns (never negative).
    fn draw_ns(&self, rng: &mut RngStream) -> f64;
}

pub static DISTRIBUTIONS: &[Kind<dyn Distribution>] = &[fixed::KIND, exponential::KIND, lognormal::KIND, uniform::KIND, empirical::KIND];

pub fn kinds() -> Vec<KindDoc> {
    sanlab_spec::describe_kinds("distribution", DISTRIBUTIONS)
}

/// How a kind reads its latency and service-time parameters: a fixed duration or a distribution
/// table. Lives here rather than in the reader, which knows no model.
pub trait DelaySpec {
    fn delay_param(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<DelayParam>;
    fn delay(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<Delay>;
    fn service(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<Delay>;
}

impl DelaySpec for Spec<'_> {
    /// A latency or service time: a duration ("50us", fixed: no random draws) or a distribution
    /// table (`{ kind = "lognormal", mean = "50us", cv = 0.5 }`, see `noise`).
    fn delay_param(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<DelayParam> {
        const TYPE: &str = "duration or distribution";
        match self.raw(key).filter(|_| !self.is_describing()) {
            Some(Value::Table(t)) => {
                self.note(key, TYPE, default.1.to_string(), doc);
                Ok(DelayParam::Random(build_kind(&self.child(t, self.at(key)), DISTRIBUTIONS, None)?.into()))
            }
            Some(v) if !v.is_str() => {
                self.note(key, TYPE, default.1.to_string(), doc);
                Err(self.mistyped(key, "a duration as a string (\"50us\") or a distribution table ({ kind = \"lognormal\", mean = \"50us\", cv = 0.5 })", v))
            }
            _ => self.duration_ns(key, Some(default), doc).map(DelayParam::Fixed),
        }
    }

    /// [`DelaySpec::delay_param`] of this table's entity, with its stream `<entity>/<key>`.
    fn delay(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<Delay> {
        let param = self.delay_param(key, default, doc)?;
        let (seed, name) = self.stream_of(key);
        Ok(param.stream(seed, &name))
    }

    /// A service time: a duration of at least 1 µs (`MIN_SERVICE_NS`), or a distribution. An array
    /// that answers in no time would let a closed loop issue and complete forever at one instant,
    /// the clock never moving; one that answers in nanoseconds, nearly so.
    fn service(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<Delay> {
        let param = self.delay_param(key, default, doc)?;
        if matches!(param, DelayParam::Fixed(ns) if ns < sanlab_spec::MIN_SERVICE_NS) && !self.is_describing() {
            return Err(self.takes_no_time(key));
        }
        let (seed, name) = self.stream_of(key);
        Ok(param.stream(seed, &name))
    }
}

/// A latency parameter as the scenario gives it; one parameter can serve several entities (the
/// `count` links of a `[[path]]`), each drawing from its own stream.
#[derive(Clone)]
pub enum DelayParam {
    Fixed(u64),
    Random(Arc<dyn Distribution>),
}

impl DelayParam {
    /// The parameter of one entity: `stream` names it (`<entity>/<parameter>`) for its random stream.
    pub fn stream(&self, run_seed: u64, stream: &str) -> Delay {
        match self {
            Self::Fixed(ns) => Delay::Fixed(*ns),
            Self::Random(d) => Delay::Random(Arc::clone(d), RngStream::new(run_seed, stream)),
        }
    }
}

/// A latency parameter of one entity, with its random stream when it is random.
pub enum Delay {
    Fixed(u64),
    Random(Arc<dyn Distribution>, RngStream),
}

impl Delay {
    #[inline]
    pub fn draw_ns(&mut self) -> u64 {
        match self {
            Self::Fixed(ns) => *ns,
            Self::Random(d, rng) => d.draw_ns(rng).round() as u64,
        }
    }

    /// Fixed at zero: the stage it times takes no time (and may be skipped).
    pub fn is_zero(&self) -> bool {
        matches!(self, Self::Fixed(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sanlab_spec::{build_kind, Spec};

    /// Checks the mean and coefficient of variation of `n` draws of the distribution a TOML table
    /// describes, within 1 %.
    pub(super) fn assert_moments(src: &str, n: usize, mean_ns: f64, cv: f64) {
        let t: toml::Table = src.parse().unwrap();
        let d = build_kind(&Spec::new(&t, "latency"), DISTRIBUTIONS, None).unwrap();
        let mut rng = RngStream::new(7, "test");
        let xs: Vec<f64> = (0..n).map(|_| d.draw_ns(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        assert!((mean / mean_ns - 1.0).abs() < 0.01, "{src}: mean {mean} ns, expected {mean_ns}");
        assert!((sd / mean - cv).abs() < 0.01, "{src}: cv {}, expected {cv}", sd / mean);
    }

    #[test]
    fn fixed_carries_no_stream() {
        let mut d = DelayParam::Fixed(50_000).stream(1, "link/a/out/latency");
        assert!(matches!(d, Delay::Fixed(50_000)));
        assert_eq!(d.draw_ns(), 50_000);
    }

    #[test]
    fn streams_are_per_entity() {
        let t: toml::Table = "kind = \"exponential\"\nmean = \"10us\"".parse().unwrap();
        let p = DelayParam::Random(Arc::from(build_kind(&Spec::new(&t, "latency"), DISTRIBUTIONS, None).unwrap()));
        let (mut a, mut a2, mut b) = (p.stream(3, "link/a/out/latency"), p.stream(3, "link/a/out/latency"), p.stream(3, "link/b/out/latency"));
        let draws = |d: &mut Delay| (0..8).map(|_| d.draw_ns()).collect::<Vec<_>>();
        assert_eq!(draws(&mut a), draws(&mut a2));
        assert_ne!(draws(&mut a), draws(&mut b));
    }
}
