//! The host side: VM virtual disk and adapter queues, the host device queue (LUN queue depth),
//! the host adapter queue, splitting at the adapter's max I/O size, and host-level flow control
//! (PARDA, SIOC) that sizes the device queue.

pub mod adapters;
pub mod device_queue;
pub mod failover;
pub mod flow_control;
pub mod scheduler;

use sanlab_metrics::TimeWeighted;
use std::collections::VecDeque;

/// A bounded queue of slots (a queue depth) with a FIFO of waiting requests.
pub struct SlotQueue {
    pub capacity: u32,
    in_use: u32,
    waiting: VecDeque<u32>,
    /// (active, queued) over time.
    occupancy: TimeWeighted<2>,
}

impl SlotQueue {
    pub fn new(capacity: u32) -> Self {
        Self { capacity, in_use: 0, waiting: VecDeque::new(), occupancy: TimeWeighted::default() }
    }

    #[inline]
    fn account(&mut self, now: u64) {
        self.occupancy.advance(now, [u64::from(self.in_use), self.waiting.len() as u64]);
    }

    /// Takes a slot for `io`, or queues it and returns false.
    #[inline]
    pub fn enter(&mut self, now: u64, io: u32) -> bool {
        self.account(now);
        if self.in_use < self.capacity {
            self.in_use += 1;
            true
        } else {
            self.waiting.push_back(io);
            false
        }
    }

    /// Frees a slot; the next waiting request (returned) takes it.
    #[inline]
    pub fn leave(&mut self, now: u64) -> Option<u32> {
        self.account(now);
        let next = self.waiting.pop_front();
        if next.is_none() {
            self.in_use -= 1;
        }
        next
    }

    pub fn active(&self) -> u32 {
        self.in_use
    }

    pub fn queued(&self) -> usize {
        self.waiting.len()
    }

    /// Time-averaged (active, queued) since the last call; starts a new averaging window.
    pub fn take_averages(&mut self, now: u64, window_ns: u64) -> (f64, f64) {
        self.account(now);
        let [active, queued] = self.occupancy.take_means(window_ns);
        (active, queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_waiters() {
        let mut q = SlotQueue::new(1);
        assert!(q.enter(0, 7));
        assert!(!q.enter(0, 8));
        assert_eq!((q.active(), q.queued()), (1, 1));
        assert_eq!(q.leave(10), Some(8));
        assert_eq!(q.leave(20), None);
        assert_eq!(q.active(), 0);
        let (actv, qued) = q.take_averages(20, 20);
        assert!((actv - 1.0).abs() < 1e-9 && (qued - 0.5).abs() < 1e-9, "{actv} {qued}");
    }
}
