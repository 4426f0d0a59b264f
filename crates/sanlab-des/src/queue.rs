//! Pending-event set: a calendar queue (timing wheel) with a heap for the far future.
//!
//! Events leave in time order and, at equal times, in the order they were scheduled (a sequence
//! number breaks ties), which makes runs deterministic. Storage events cluster a few microseconds
//! to milliseconds ahead of now, so the wheel has 8192 buckets of 1.024 µs (8.4 ms ahead). Each
//! bucket is a sorted singly linked list of nodes in one arena (new events nearly always go at the
//! tail), a bitmap finds the next non-empty bucket, and events further out wait in a binary heap
//! until the wheel reaches them. Profiles behind this choice are in docs/performance.md.

use crate::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const BUCKET_SHIFT: u32 = 10;
const WHEEL: u64 = 1 << 13;
const WORDS: usize = (WHEEL / 64) as usize;
const NIL: u32 = u32::MAX;

/// First and last node of a bucket (NIL when empty), side by side: an insert reads both.
#[derive(Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
}

#[derive(Clone, Copy)]
struct Node {
    time: SimTime,
    seq: u64,
    payload: u64,
    next: u32,
}

/// The future-event set and the simulation clock.
pub struct EventQueue {
    nodes: Vec<Node>,
    free: u32,
    /// A bucket holds events whose bucket number is in `[cursor, cursor + WHEEL)`, at
    /// `bucket % WHEEL`, sorted by (time, seq). A fixed-size array, so that the index needs no
    /// bounds check.
    buckets: Box<[Bucket; WHEEL as usize]>,
    occupied: [u64; WORDS],
    cursor: u64,
    /// Events at bucket `cursor + WHEEL` or later: (time, seq, payload).
    far: BinaryHeap<Reverse<(SimTime, u64, u64)>>,
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
fn bucket_of(time: SimTime) -> u64 {
    time >> BUCKET_SHIFT
}

impl EventQueue {
    pub fn new() -> Self {
        Self {
            nodes: Vec::with_capacity(1024),
            free: NIL,
            buckets: Box::new([Bucket { head: NIL, tail: NIL }; WHEEL as usize]),
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
    fn alloc(&mut self, node: Node) -> u32 {
        if self.free == NIL {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        }
    }

    // Always inline: called from `schedule_at` and from the far heap's refill, and left out of
    // line it costs its prologue on most events (0.6 % of the metro study's instructions).
    #[inline(always)]
    fn insert_near(&mut self, time: SimTime, seq: u64, payload: u64) {
        let slot = (bucket_of(time) % WHEEL) as usize;
        let n = self.alloc(Node { time, seq, payload, next: NIL });
        let bucket = &mut self.buckets[slot];
        let tail = bucket.tail;
        if tail == NIL {
            *bucket = Bucket { head: n, tail: n };
            self.occupied[slot / 64] |= 1 << (slot % 64);
            return;
        }
        let t = self.nodes[tail as usize];
        if (t.time, t.seq) < (time, seq) {
            bucket.tail = n;
            self.nodes[tail as usize].next = n;
            return;
        }
        // Rare: an earlier event than the bucket's last one. Walk from the head.
        let head = bucket.head;
        let h = self.nodes[head as usize];
        if (time, seq) < (h.time, h.seq) {
            bucket.head = n;
            self.nodes[n as usize].next = head;
            return;
        }
        let mut prev = head;
        loop {
            let next = self.nodes[prev as usize].next;
            let nx = self.nodes[next as usize];
            if (time, seq) < (nx.time, nx.seq) {
                self.nodes[n as usize].next = next;
                self.nodes[prev as usize].next = n;
                return;
            }
            prev = next;
        }
    }

    /// Schedules `payload` at absolute time `at` (never in the past).
    // Always inline: with many call sites the compiler stops inlining it, at ~3 % of a run's
    // instructions (callgrind, metro study).
    #[inline(always)]
    pub fn schedule_at(&mut self, at: SimTime, payload: u64) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let time = at.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        let b = bucket_of(time);
        if b < self.cursor + WHEEL {
            self.insert_near(time, seq, payload);
        } else {
            self.far.push(Reverse((time, seq, payload)));
            self.far_bucket = self.far_bucket.min(b);
        }
    }

    /// Schedules `payload` after `delay_ns`; a time past the end of `SimTime` saturates there,
    /// beyond any run's end, instead of wrapping into the past.
    #[inline]
    pub fn schedule_in(&mut self, delay_ns: u64, payload: u64) {
        self.schedule_at(self.now.saturating_add(delay_ns), payload);
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
    #[inline(always)]
    fn advance_cursor(&mut self, bucket: u64) {
        self.cursor = bucket;
        if self.far_bucket >= self.cursor + WHEEL {
            return;
        }
        while let Some(Reverse((time, _, _))) = self.far.peek() {
            if bucket_of(*time) >= self.cursor + WHEEL {
                break;
            }
            let Reverse((time, seq, payload)) = self.far.pop().expect("peeked");
            self.insert_near(time, seq, payload);
        }
        self.far_bucket = self.far.peek().map_or(u64::MAX, |Reverse((t, _, _))| bucket_of(*t));
    }

    /// Removes the earliest event if it is due at or before `until`, advancing the clock to it.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<u64> {
        let bucket = match self.next_occupied() {
            Some(b) => b,
            None => {
                // The wheel is empty: jump to the earliest far event.
                let Reverse((time, _, _)) = *self.far.peek()?;
                if time > until {
                    return None;
                }
                self.advance_cursor(bucket_of(time));
                self.next_occupied().expect("far event moved into the wheel")
            }
        };
        let slot = (bucket % WHEEL) as usize;
        let head = self.buckets[slot].head;
        let node = self.nodes[head as usize];
        if node.time > until {
            return None;
        }
        self.buckets[slot].head = node.next;
        if node.next == NIL {
            self.buckets[slot].tail = NIL;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        self.nodes[head as usize].next = self.free;
        self.free = head;
        if bucket != self.cursor {
            self.advance_cursor(bucket);
        }
        self.len -= 1;
        self.now = node.time;
        self.popped += 1;
        Some(node.payload)
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

    #[test]
    fn a_delay_past_the_end_of_time_saturates_instead_of_wrapping() {
        let mut q = EventQueue::new();
        q.advance_to(10);
        q.schedule_in(u64::MAX, 1);
        q.schedule_in(5, 2);
        assert_eq!(q.pop_until(1_000), Some(2));
        assert_eq!(q.pop_until(u64::MAX - 1), None, "a wrapped time would come before the horizon");
        assert_eq!(q.pop_until(u64::MAX), Some(1));
    }
}
