//! The event kernel of sanlab: integer-nanosecond time, a pending-event queue ordered by
//! `(time, sequence)`, seeded random-number streams, one per component, and the arena that holds
//! what the loop creates and retires.
//!
//! It knows nothing about storage: the domain model decides what an event means.

mod queue;
mod rng;
mod slab;

pub use queue::EventQueue;
pub use rng::{RngStream, stream_seed, timing_draws};
pub use slab::Slab;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared with another thread while a run goes on: the run publishes its simulated time, the
/// other side may ask it to stop. Touched once per sample interval, never per event.
#[derive(Default)]
pub struct RunControl {
    sim_ns: AtomicU64,
    end_ns: AtomicU64,
    runs_done: AtomicU64,
    cancel: AtomicBool,
}

impl RunControl {
    pub fn publish(&self, sim_ns: SimTime, end_ns: SimTime) {
        self.sim_ns.store(sim_ns, Ordering::Relaxed);
        self.end_ns.store(end_ns, Ordering::Relaxed);
    }

    /// (simulated time, end time) of the run in progress.
    pub fn position(&self) -> (SimTime, SimTime) {
        (self.sim_ns.load(Ordering::Relaxed), self.end_ns.load(Ordering::Relaxed))
    }

    pub fn finish_one(&self) {
        self.runs_done.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs (variants) finished so far.
    pub fn runs_done(&self) -> u64 {
        self.runs_done.load(Ordering::Relaxed)
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Simulated time in nanoseconds since the start of the run.
pub type SimTime = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;
