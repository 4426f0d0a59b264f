//! Pending-event set: a calendar queue (timing wheel) with a heap for the far future.
//!
//! Keys are `(time << 64) | seq`: events leave in time order and, at equal times, in the order
//! they were scheduled, which makes runs deterministic. Storage events cluster a few microseconds
//! to milliseconds ahead of now, so the wheel has 8192 buckets of 1.024 µs (8.4 ms ahead); a
//! bitmap finds the next non-empty bucket, and events further out wait in a binary heap until the
//! wheel reaches them. A 4-ary heap alone cost ~200 instructions per event on the metro study; see
//! docs/performance.md.

use crate::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const BUCKET_SHIFT: u32 = 10;
const WHEEL: u64 = 1 << 13;
const WORDS: usize = (WHEEL / 64) as usize;

/// The future-event set and the simulation clock.
pub struct EventQueue {
    /// Each bucket sorted ascending by key; holds events whose bucket number is in
    /// `[cursor, cursor + WHEEL)`, at `bucket % WHEEL`.
    buckets: Vec<Vec<(u128, u64)>>,
    occupied: [u64; WORDS],
    cursor: u64,
    /// Events at bucket `cursor + WHEEL` or later.
    far: BinaryHeap<Reverse<(u128, u64)>>,
    /// Bucket of the earliest far event (u64::MAX when none), to skip the heap on most pops.
    far_bucket: u64,
    len: usize,
    now: SimTime,
    next_seq: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn bucket_of(key: u128) -> u64 {
    ((key >> 64) as u64) >> BUCKET_SHIFT
}

impl EventQueue {
    pub fn new() -> Self {
        Self {
            buckets: (0..WHEEL).map(|_| Vec::with_capacity(4)).collect(),
            occupied: [0; WORDS],
            cursor: 0,
            far: BinaryHeap::new(),
            far_bucket: u64::MAX,
            len: 0,
            now: 0,
            next_seq: 0,
            popped: 0,
        }
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events handed out so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Events still pending.
    pub fn pending(&self) -> usize {
        self.len
    }

    #[inline]
    fn insert_near(&mut self, key: u128, payload: u64) {
        let slot = (bucket_of(key) % WHEEL) as usize;
        let b = &mut self.buckets[slot];
        // New keys are usually the largest in their bucket.
        if b.last().is_none_or(|last| last.0 < key) {
            b.push((key, payload));
            self.occupied[slot / 64] |= 1 << (slot % 64);
            return;
        }
        let mut pos = b.len();
        while pos > 0 && b[pos - 1].0 > key {
            pos -= 1;
        }
        b.insert(pos, (key, payload));
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Schedules `payload` at absolute time `at` (never in the past).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, payload: u64) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let key = (u128::from(at.max(self.now)) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        self.len += 1;
        if bucket_of(key) < self.cursor + WHEEL {
            self.insert_near(key, payload);
        } else {
            self.far.push(Reverse((key, payload)));
            self.far_bucket = self.far_bucket.min(bucket_of(key));
        }
    }

    /// Schedules `payload` after `delay_ns`.
    #[inline]
    pub fn schedule_in(&mut self, delay_ns: u64, payload: u64) {
        self.schedule_at(self.now + delay_ns, payload);
    }

    /// Bucket number of the first non-empty bucket at or after the cursor, if any.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        let start = (self.cursor % WHEEL) as usize;
        let (w0, bit0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << bit0);
        if first != 0 {
            let slot = w0 * 64 + first.trailing_zeros() as usize;
            return Some(self.cursor + (slot - start) as u64);
        }
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let bits = if k == WORDS { self.occupied[w] & !(!0u64 << bit0) } else { self.occupied[w] };
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let dist = (slot + WHEEL as usize - start) % WHEEL as usize;
                return Some(self.cursor + dist as u64);
            }
        }
        None
    }

    /// Moves the cursor to `bucket` and brings far events that are now within reach into the wheel.
    #[inline]
    fn advance_cursor(&mut self, bucket: u64) {
        self.cursor = bucket;
        if self.far_bucket >= self.cursor + WHEEL {
            return;
        }
        while let Some(Reverse((key, _))) = self.far.peek() {
            if bucket_of(*key) >= self.cursor + WHEEL {
                break;
            }
            let Reverse((key, payload)) = self.far.pop().expect("peeked");
            self.insert_near(key, payload);
        }
        self.far_bucket = self.far.peek().map_or(u64::MAX, |Reverse((k, _))| bucket_of(*k));
    }

    /// Removes the earliest event if it is due at or before `until`, advancing the clock to it.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<u64> {
        let bucket = match self.next_occupied() {
            Some(b) => b,
            None => {
                // The wheel is empty: jump to the earliest far event.
                let Reverse((key, _)) = *self.far.peek()?;
                if ((key >> 64) as u64) > until {
                    return None;
                }
                self.advance_cursor(bucket_of(key));
                self.next_occupied().expect("far event moved into the wheel")
            }
        };
        let slot = (bucket % WHEEL) as usize;
        let (key, payload) = self.buckets[slot][0];
        let t = (key >> 64) as u64;
        if t > until {
            return None;
        }
        let b = &mut self.buckets[slot];
        b.remove(0);
        if b.is_empty() {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        if bucket != self.cursor {
            self.advance_cursor(bucket);
        }
        self.len -= 1;
        self.now = t;
        self.popped += 1;
        Some(payload)
    }

    /// Moves the clock to `t` when no event is left before it (end of run).
    pub fn advance_to(&mut self, t: SimTime) {
        self.now = self.now.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_in_time_then_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule_at(30, 1);
        q.schedule_at(10, 2);
        q.schedule_at(30, 3);
        q.schedule_at(20, 4);
        let mut out = vec![];
        while let Some(p) = q.pop_until(u64::MAX) {
            out.push((q.now(), p));
        }
        assert_eq!(out, vec![(10, 2), (20, 4), (30, 1), (30, 3)]);
        assert_eq!(q.events_processed(), 4);
    }

    #[test]
    fn matches_a_sorted_order_under_random_interleaving() {
        let mut q = EventQueue::new();
        let mut rng = crate::RngStream::new(3, "queue");
        let mut expected = vec![];
        let mut got = vec![];
        let mut id = 0;
        for _ in 0..20_000 {
            if rng.below(3) > 0 || q.pending() == 0 {
                // Mostly near events, some far beyond the wheel, some at the same time.
                let t = q.now() + match rng.below(10) { 0 => rng.below(50_000_000), 1 => 0, _ => rng.below(20_000) };
                q.schedule_at(t, id);
                expected.push((t, id));
                id += 1;
            } else {
                let p = q.pop_until(u64::MAX).unwrap();
                got.push((q.now(), p));
            }
        }
        while let Some(p) = q.pop_until(u64::MAX) {
            got.push((q.now(), p));
        }
        expected.sort();
        assert_eq!(got, expected);
    }

    #[test]
    fn pop_until_stops_at_horizon() {
        let mut q = EventQueue::new();
        q.schedule_at(5, 1);
        q.schedule_at(15, 2);
        assert_eq!(q.pop_until(10), Some(1));
        assert_eq!(q.pop_until(10), None);
        assert_eq!(q.pending(), 1);
        q.advance_to(10);
        assert_eq!(q.now(), 10);
    }
}
