//! Pending-event set: a binary min-heap on `(time, seq)`.
//!
//! Events at the same time leave in the order they were scheduled (the sequence number only goes
//! up), which makes runs deterministic. The payload is a plain `u64` the model packs itself, so the
//! heap holds 24-byte entries and never allocates once it has grown to the run's working size.

use crate::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Eq, PartialEq)]
struct Entry {
    time: SimTime,
    seq: u64,
    payload: u64,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The future-event set and the simulation clock.
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    now: SimTime,
    next_seq: u64,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self { heap: BinaryHeap::with_capacity(1024), now: 0, next_seq: 0, popped: 0 }
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
        self.heap.len()
    }

    /// Schedules `payload` at absolute time `at` (never in the past).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, payload: u64) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time: at.max(self.now), seq, payload });
    }

    /// Schedules `payload` after `delay_ns`.
    #[inline]
    pub fn schedule_in(&mut self, delay_ns: u64, payload: u64) {
        self.schedule_at(self.now + delay_ns, payload);
    }

    /// Removes the earliest event if it is due at or before `until`, advancing the clock to it.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<u64> {
        match self.heap.peek() {
            Some(e) if e.time <= until => {
                let e = self.heap.pop().expect("peeked");
                self.now = e.time;
                self.popped += 1;
                Some(e.payload)
            }
            _ => None,
        }
    }

    /// Moves the clock to `t` when no event is left before it (end of run).
    pub fn advance_to(&mut self, t: SimTime) {
        debug_assert!(self.heap.peek().is_none_or(|e| e.time >= t));
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
