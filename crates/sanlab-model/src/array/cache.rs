//! The array's read cache: least-recently-used blocks up to a capacity. Reads of cached blocks are
//! served in `hit_latency` without the flash; reads and writes both bring their blocks in (writes
//! land in NVRAM and DRAM). A request hits only when all of its blocks are cached. Sizes and
//! latency are parameters; hit ≈ 10–50 µs of controller time (arrays.md §4.3).

use crate::noise::{Delay, DelaySpec};
use sanlab_spec::{Spec, SpecResult};
use std::collections::HashMap;

const NIL: u32 = u32::MAX;

pub struct ReadCache {
    block_bytes: u64,
    capacity_blocks: usize,
    pub hit: Delay,
    /// block → slot; slots form a doubly linked LRU list (head = most recent).
    index: HashMap<u64, u32>,
    blocks: Vec<(u64, u32, u32)>,
    head: u32,
    tail: u32,
    pub hits: u64,
    pub misses: u64,
}

impl ReadCache {
    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let size = spec.size_bytes("size", Some((8 << 30, "8GiB")), "cache capacity")?;
        let block = spec.size_bytes("block", Some((64 << 10, "64KiB")), "cache block")?;
        let hit = spec.service("hit_latency", (30_000, "30us"), "service time of a read hit, or its distribution")?;
        spec.finish()?;
        if block == 0 || size < block {
            return Err(spec.error("size", format!("{size} bytes holds no {block}-byte block")));
        }
        let capacity_blocks = usize::try_from(size / block).unwrap_or(usize::MAX).min(1 << 26);
        Ok(Self { block_bytes: block, capacity_blocks, hit, index: HashMap::new(), blocks: vec![], head: NIL, tail: NIL, hits: 0, misses: 0 })
    }

    fn unlink(&mut self, s: u32) {
        let (_, prev, next) = self.blocks[s as usize];
        if prev == NIL { self.head = next } else { self.blocks[prev as usize].2 = next }
        if next == NIL { self.tail = prev } else { self.blocks[next as usize].1 = prev }
    }

    fn push_front(&mut self, s: u32) {
        self.blocks[s as usize].1 = NIL;
        self.blocks[s as usize].2 = self.head;
        if self.head != NIL {
            self.blocks[self.head as usize].1 = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    fn touch(&mut self, block: u64) -> bool {
        if let Some(&s) = self.index.get(&block) {
            self.unlink(s);
            self.push_front(s);
            return true;
        }
        let s = if self.blocks.len() < self.capacity_blocks {
            self.blocks.push((block, NIL, NIL));
            (self.blocks.len() - 1) as u32
        } else {
            let victim = self.tail;
            self.unlink(victim);
            self.index.remove(&self.blocks[victim as usize].0);
            self.blocks[victim as usize].0 = block;
            victim
        };
        self.index.insert(block, s);
        self.push_front(s);
        false
    }

    /// Touches the blocks of a request; true when every block was already cached.
    pub fn access(&mut self, offset: u64, size: u64, is_read: bool) -> bool {
        let first = offset / self.block_bytes;
        let last = (offset + size.max(1) - 1) / self.block_bytes;
        let mut all = true;
        for b in first..=last {
            all &= self.touch(b);
        }
        if is_read {
            if all { self.hits += 1 } else { self.misses += 1 }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_hits_and_evicts() {
        let t: toml::Table = "size = \"256KiB\"\nblock = \"64KiB\"".parse().unwrap();
        let mut c = ReadCache::from_spec(Spec::new(&t, "cache")).unwrap();
        let k = 64 << 10;
        assert!(!c.access(0, 4096, true));
        assert!(c.access(0, 4096, true));
        for b in 1..4 {
            c.access(b * k, 4096, false);
        }
        assert!(c.access(0, 4096, true), "block 0 is still among the 4 most recent");
        c.access(4 * k, 4096, false); // evicts block 1, the least recently used
        assert!(!c.access(k, 4096, true));
        assert_eq!((c.hits, c.misses), (2, 2));
    }
}
