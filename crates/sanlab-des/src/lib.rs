//! The event kernel of sanlab: integer-nanosecond time, a pending-event queue ordered by
//! `(time, sequence)`, and seeded random-number streams, one per component.
//!
//! It knows nothing about storage: the domain model decides what an event means.

mod queue;
mod rng;

pub use queue::EventQueue;
pub use rng::{RngStream, stream_seed};

/// Simulated time in nanoseconds since the start of the run.
pub type SimTime = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;
