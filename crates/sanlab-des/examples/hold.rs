//! Hold-model micro-benchmark of the event set: `pending` events; each pop schedules one more
//! after a delay drawn from a few constants (as storage latencies are). Prints events per second.
//! `hold PENDING binary-heap` runs the same on std's `BinaryHeap` of (time, sequence): the bare
//! heap `benches/metro_bench.py` measures the engine against, an event loop doing nothing else.
use sanlab_des::{EventQueue, RngStream};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const DELAYS_NS: [u64; 6] = [50_000, 1_000_000, 20_000, 16_384, 1_500_000, 26_215];
const EVENTS: u64 = 20_000_000;

/// The next payload and its delay, from the one just popped.
#[inline]
fn next(payload: u64) -> (u64, u64) {
    (payload.wrapping_mul(31).wrapping_add(7) % 1_000_003, DELAYS_NS[(payload % 6) as usize])
}

fn calendar(pending: u64, rng: &mut RngStream) -> u64 {
    let mut q = EventQueue::new();
    for i in 0..pending {
        q.schedule_in(rng.below(1_000_000), i);
    }
    let mut sum = 0u64;
    for _ in 0..EVENTS {
        let p = q.pop_until(u64::MAX).expect("an event is always pending");
        sum = sum.wrapping_add(p);
        let (payload, delay) = next(p);
        q.schedule_in(delay, payload);
    }
    sum
}

fn binary_heap(pending: u64, rng: &mut RngStream) -> u64 {
    let mut q: BinaryHeap<Reverse<(u64, u64, u64)>> = BinaryHeap::with_capacity(pending as usize);
    let mut seq = 0u64;
    for i in 0..pending {
        q.push(Reverse((rng.below(1_000_000), seq, i)));
        seq += 1;
    }
    let mut sum = 0u64;
    for _ in 0..EVENTS {
        let Reverse((now, _, p)) = q.pop().expect("an event is always pending");
        sum = sum.wrapping_add(p);
        let (payload, delay) = next(p);
        q.push(Reverse((now + delay, seq, payload)));
        seq += 1;
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pending: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let heap = args.get(2).is_some_and(|a| a == "binary-heap");
    let mut rng = RngStream::new(1, "hold");
    let start = std::time::Instant::now();
    let sum = if heap { binary_heap(pending, &mut rng) } else { calendar(pending, &mut rng) };
    let s = start.elapsed().as_secs_f64();
    let set = if heap { "binary heap" } else { "calendar queue" };
    println!("{pending} pending, {set}: {:.1} M events/s (checksum {sum})", EVENTS as f64 / s / 1e6);
}
