//! fio's `random_generator=lfsr`: random offsets that never repeat a block until every block of
//! the region has been used, in O(1) memory (HOWTO `random_generator`: "lfsr guarantees that we
//! never generate the same offset twice"; filesetup.c sizes it to the region's blocks of the
//! smallest block size, io_u.c restarts it when it runs out in a time_based job).
//!
//! *Our generator, not fio's*: fio steps a linear feedback shift register; sanlab walks a full-
//! period linear congruential sequence modulo 2^k (Hull–Dobell: odd increment, multiplier 1 mod
//! 4), passes each state through a keyed bijection of k bits, and skips values at or above the
//! block count (cycle walking). Every block comes once per cycle, as with fio's; the order is a
//! different pseudo-random one, drawn from the job's seeded stream.

use sanlab_des::RngStream;

#[derive(Clone, Debug)]
pub(crate) struct BlockCycle {
    blocks: u64,
    mask: u64,
    /// Half the width, for the bijection's xor-shift.
    shift: u32,
    mul: u64,
    inc: u64,
    key: u64,
    odd: u64,
    state: u64,
}

impl BlockCycle {
    /// A cycle over `blocks` (at least 1) blocks, its order drawn from `rng`.
    pub fn new(blocks: u64, rng: &mut RngStream) -> Self {
        let bits = 64 - (blocks.max(2) - 1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut draw = || rng.address_below(u64::MAX) & mask;
        let (mul, inc, key, odd, state) = ((draw() & !3) | 1, draw() | 1, draw(), draw() | 1, draw());
        Self { blocks, mask, shift: bits.div_ceil(2), mul, inc, key, odd, state }
    }

    /// A bijection of the k-bit values.
    fn mix(&self, x: u64) -> u64 {
        let x = (x ^ self.key).wrapping_mul(self.odd) & self.mask;
        x ^ (x >> self.shift)
    }

    /// The next block; after `blocks` calls every block has come once, and the cycle repeats.
    pub fn next(&mut self) -> u64 {
        loop {
            let block = self.mix(self.state);
            self.state = self.state.wrapping_mul(self.mul).wrapping_add(self.inc) & self.mask;
            if block < self.blocks {
                return block;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_comes_once_per_cycle_and_the_cycle_repeats() {
        let mut rng = RngStream::new(7, "lfsr");
        for blocks in [1u64, 2, 3, 4, 5, 7, 8, 100, 1000, 4097, 65_536] {
            let mut c = BlockCycle::new(blocks, &mut rng);
            let first: Vec<u64> = (0..blocks).map(|_| c.next()).collect();
            let mut sorted = first.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..blocks).collect::<Vec<_>>(), "{blocks} blocks");
            let second: Vec<u64> = (0..blocks).map(|_| c.next()).collect();
            assert_eq!(first, second, "{blocks} blocks: the cycle repeats");
        }
    }

    #[test]
    fn orders_differ_by_seed_and_look_random() {
        let order = |seed| {
            let mut rng = RngStream::new(seed, "lfsr");
            let mut c = BlockCycle::new(10_000, &mut rng);
            (0..10_000).map(|_| c.next()).collect::<Vec<_>>()
        };
        let (a, b) = (order(1), order(2));
        assert_ne!(a, b);
        // Not sequential: few steps of +1 between consecutive blocks, and both halves of the
        // region are visited in the first tenth of the cycle.
        let steps = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(steps < 100, "{steps}");
        let low = a[..1000].iter().filter(|&&x| x < 5000).count();
        assert!((400..600).contains(&low), "{low}");
    }
}
