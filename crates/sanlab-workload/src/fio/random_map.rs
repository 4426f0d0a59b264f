//! fio's random map: without `norandommap`, a uniform random job keeps one bit per block of its
//! region (lib/axmap.c; filesetup.c `init_random_map` sizes it to the region over the smallest
//! block size). A drawn block already used moves to the next free one after it, wrapping around
//! (`axmap_next_free`); a request marks the free blocks it covers from its start and is cut short
//! at the first used one or at the region's end (io_u.c `mark_random_map`, `axmap_set_nr`). When
//! every block is used, a time_based job clears the map and draws again; another ends its pass
//! (io_u.c `get_next_rand_block`).
//!
//! *Ours*: a flat bitmap (fio's axmap adds summary levels to find free bits fast; the search
//! here skips whole used words), made at the job's first random offset.

/// A job's random maps: one per file of `region_bytes`, in blocks of `unit_bytes`, each made
/// when its file is first addressed.
#[derive(Clone, Debug)]
pub(crate) struct RandomMaps {
    pub unit_bytes: u64,
    region_bytes: u64,
    maps: Vec<Option<RandomMap>>,
}

impl RandomMaps {
    pub fn new(unit_bytes: u64, region_bytes: u64, files: usize) -> Self {
        Self { unit_bytes, region_bytes, maps: vec![None; files] }
    }

    /// The map of file `file`.
    pub fn of(&mut self, file: usize) -> &mut RandomMap {
        let blocks = (self.region_bytes / self.unit_bytes).max(1);
        self.maps[file].get_or_insert_with(|| RandomMap::new(blocks))
    }

    /// A new pass: every map cleared.
    pub fn clear(&mut self) {
        self.maps.iter_mut().flatten().for_each(RandomMap::clear);
    }

    /// Bytes the maps take once made, for the run's memory estimate.
    pub fn bytes(&self) -> u64 {
        self.maps.len() as u64 * (self.region_bytes / self.unit_bytes).max(1).div_ceil(64) * 8
    }
}

/// The blocks of a file's region that its requests have covered in this pass.
#[derive(Clone, Debug)]
pub(crate) struct RandomMap {
    blocks: u64,
    words: Vec<u64>,
}

impl RandomMap {
    pub fn new(blocks: u64) -> Self {
        Self { blocks, words: vec![0; blocks.div_ceil(64) as usize] }
    }

    fn used(&self, block: u64) -> bool {
        self.words[(block / 64) as usize] & (1 << (block % 64)) != 0
    }

    /// `block` if it is free, else the next free block after it, wrapping around; None when
    /// every block is used.
    pub fn free_from(&self, block: u64) -> Option<u64> {
        let block = block.min(self.blocks - 1);
        if !self.used(block) {
            return Some(block);
        }
        self.first_free(block + 1, self.blocks).or_else(|| self.first_free(0, block))
    }

    /// The first free block in `from..to`.
    fn first_free(&self, from: u64, to: u64) -> Option<u64> {
        let mut b = from;
        while b < to {
            let word = self.words[(b / 64) as usize] | ((1u64 << (b % 64)) - 1);
            if word != u64::MAX {
                let free = (b / 64) * 64 + u64::from(word.trailing_ones());
                return (free < to).then_some(free);
            }
            b = (b / 64 + 1) * 64;
        }
        None
    }

    /// Marks `count` blocks from `block` as used, stopping at the first used one or the region's
    /// end; returns how many it marked (0 when `block` is used already).
    pub fn mark(&mut self, block: u64, count: u64) -> u64 {
        let end = block.saturating_add(count).min(self.blocks);
        let mut b = block;
        while b < end && !self.used(b) {
            self.words[(b / 64) as usize] |= 1 << (b % 64);
            b += 1;
        }
        b - block
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_used_block_moves_to_the_next_free_one_wrapping_around() {
        let mut m = RandomMap::new(130);
        assert_eq!(m.mark(5, 3), 3);
        assert_eq!(m.free_from(5), Some(8));
        assert_eq!(m.free_from(4), Some(4));
        // A request is cut at the first used block and at the region's end.
        assert_eq!(m.mark(3, 4), 2);
        assert_eq!(m.mark(128, 8), 2);
        assert_eq!(m.mark(128, 1), 0);
        // Every block but 64 used: draws anywhere find it; then none is left.
        m.clear();
        assert_eq!(m.mark(0, 64), 64);
        assert_eq!(m.mark(65, 65), 65);
        assert_eq!((m.free_from(0), m.free_from(100), m.free_from(129)), (Some(64), Some(64), Some(64)));
        assert_eq!(m.mark(64, 1), 1);
        assert_eq!(m.free_from(7), None);
        assert_eq!(RandomMaps::new(4096, 130 * 4096, 2).bytes(), 48);
    }
}
