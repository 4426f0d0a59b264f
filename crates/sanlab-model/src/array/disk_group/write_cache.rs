//! The write-back cache: dirty pages per stripe, room for host writes, and when to destage.

use super::layout::Piece;
use sanlab_des::Slab;
use sanlab_metrics::TimeWeighted;
use std::collections::{HashMap, VecDeque};

/// Pages of a data element, one bit each in its dirty mask.
pub(super) const PAGES_PER_ELEMENT: u64 = 64;
/// A host write waiting for cache room.
#[derive(Clone, Copy)]
pub(super) struct WaitingWrite {
    pub(super) token: u64,
    pub(super) offset_bytes: u64,
    pub(super) size_bytes: u64,
}

/// Dirty data per stripe and the room it takes.
pub(super) struct WriteCache {
    pub(super) capacity_bytes: u64,
    pub(super) high_bytes: u64,
    pub(super) low_bytes: u64,
    pub(super) ack_ns: u64,
    pub(super) page_bytes: u64,
    pub(super) data_disks: usize,
    /// Stripe → slot of `stripe_of` / `masks`.
    pub(super) index: HashMap<u64, u32>,
    pub(super) stripe_of: Slab<u64>,
    /// `data_disks` page masks per slot.
    pub(super) masks: Vec<u64>,
    /// Slots in the order their stripes became dirty.
    pub(super) oldest: VecDeque<u32>,
    /// Including stripes being destaged: their room is freed when the destage ends.
    pub(super) dirty_bytes: u64,
    /// Dirty bytes × ns, for the mean fullness.
    pub(super) dirty_area: TimeWeighted<1>,
    pub(super) destaging_bytes: u64,
    pub(super) flushing: bool,
    pub(super) waiting: VecDeque<WaitingWrite>,
}

impl WriteCache {
    /// Accounts for the dirty bytes having held since the last change (call before changing them).
    pub(super) fn account(&mut self, now: u64) {
        self.dirty_area.advance(now, [self.dirty_bytes]);
    }

    pub(super) fn page_mask(&self, piece: &Piece) -> u64 {
        let first = piece.within_bytes / self.page_bytes;
        let last = (piece.within_bytes + piece.size_bytes - 1) / self.page_bytes;
        (u64::MAX >> (PAGES_PER_ELEMENT - 1 - last)) & (u64::MAX << first)
    }

    pub(super) fn has_room(&self, size_bytes: u64) -> bool {
        self.dirty_bytes == 0 || self.dirty_bytes + size_bytes <= self.capacity_bytes
    }

    /// Dirties the pages of `piece`.
    pub(super) fn mark(&mut self, piece: &Piece) {
        let slot = match self.index.get(&piece.stripe) {
            Some(&slot) => slot,
            None => {
                let slot = self.stripe_of.insert(piece.stripe);
                let base = slot as usize * self.data_disks;
                if self.masks.len() < base + self.data_disks {
                    self.masks.resize(base + self.data_disks, 0);
                }
                self.masks[base..base + self.data_disks].fill(0);
                self.index.insert(piece.stripe, slot);
                self.oldest.push_back(slot);
                slot
            }
        };
        let mask = self.page_mask(piece);
        let dirty = &mut self.masks[slot as usize * self.data_disks + piece.element as usize];
        self.dirty_bytes += u64::from((mask & !*dirty).count_ones()) * self.page_bytes;
        *dirty |= mask;
    }

    /// Whether every byte of `piece` is dirty here.
    pub(super) fn holds(&self, piece: &Piece) -> bool {
        let mask = self.page_mask(piece);
        self.index.get(&piece.stripe).is_some_and(|&slot| self.masks[slot as usize * self.data_disks + piece.element as usize] & mask == mask)
    }

    pub(super) fn mask(&self, slot: u32, element: u32) -> u64 {
        self.masks[slot as usize * self.data_disks + element as usize]
    }

    /// Whether the watermarks or waiting writes call for another stripe to be destaged.
    pub(super) fn wants_destage(&mut self) -> bool {
        if self.dirty_bytes > self.high_bytes {
            self.flushing = true;
        }
        if self.dirty_bytes - self.destaging_bytes <= self.low_bytes {
            self.flushing = false;
        }
        self.flushing || !self.waiting.is_empty()
    }
}
