//! Seeded random-number streams, one per component.
//!
//! A stream's seed is derived from the run seed and the component's name, so adding a component
//! never changes the numbers another component draws.

use rand_core::{Rng, SeedableRng};
use std::cell::Cell;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Derives a stream seed from the run seed and a component name (FNV-1a, then SplitMix64 mixing).
pub fn stream_seed(run_seed: u64, component: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in component.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = h ^ run_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

thread_local! {
    /// Draws on this thread that may shape timing: every draw but those of where an I/O lands.
    static TIMING_DRAWS: Cell<u64> = const { Cell::new(0) };
}

/// Draws on this thread so far, other than addresses ([`RngStream::address_below`],
/// [`RngStream::address_uniform`]): when a run adds none and nothing it models looks at
/// addresses, its figures do not depend on the seed.
pub fn timing_draws() -> u64 {
    TIMING_DRAWS.with(Cell::get)
}

/// One component's random stream.
pub struct RngStream(Xoshiro256PlusPlus);

impl RngStream {
    pub fn new(run_seed: u64, component: &str) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(stream_seed(run_seed, component)))
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        TIMING_DRAWS.with(|n| n.set(n.get() + 1));
        self.address_uniform()
    }

    /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        TIMING_DRAWS.with(|count| count.set(count.get() + 1));
        self.address_below(n)
    }

    /// [`Self::uniform`] for where an I/O lands (an offset, a random or sequential step): the
    /// same numbers, not counted in [`timing_draws`].
    #[inline]
    pub fn address_uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// [`Self::below`] for where an I/O lands, not counted in [`timing_draws`].
    #[inline]
    pub fn address_below(&mut self, n: u64) -> u64 {
        ((u128::from(self.0.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Exponentially distributed with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent_of_each_other() {
        let a1: Vec<u64> = (0..4).map({ let mut r = RngStream::new(7, "vm/a"); move |_| r.below(1000) }).collect();
        let a2: Vec<u64> = (0..4).map({ let mut r = RngStream::new(7, "vm/a"); move |_| r.below(1000) }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = RngStream::new(7, "vm/b"); move |_| r.below(1000) }).collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(stream_seed(1, "x"), stream_seed(2, "x"));
    }

    #[test]
    fn address_draws_are_the_same_numbers_and_not_counted() {
        let (mut a, mut b) = (RngStream::new(3, "job/x"), RngStream::new(3, "job/x"));
        let before = timing_draws();
        let addresses = (a.address_below(1000), a.address_uniform());
        assert_eq!(timing_draws(), before);
        assert_eq!(addresses, (b.below(1000), b.uniform()));
        assert_eq!(timing_draws(), before + 2);
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut r = RngStream::new(1, "exp");
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.exponential(5.0)).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.05, "{mean}");
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.01);
    }
}
