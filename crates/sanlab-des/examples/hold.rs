//! Hold-model micro-benchmark of the event set: `pending` events; each pop schedules one more
//! after a delay drawn from a few constants (as storage latencies are). Prints events per second.
use sanlab_des::{EventQueue, RngStream};

fn main() {
    let pending: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let delays = [50_000u64, 1_000_000, 20_000, 16_384, 1_500_000, 26_215];
    let mut q = EventQueue::new();
    let mut rng = RngStream::new(1, "hold");
    for i in 0..pending {
        q.schedule_in(rng.below(1_000_000), i);
    }
    let n = 20_000_000u64;
    let start = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..n {
        let p = q.pop_until(u64::MAX).unwrap();
        sum = sum.wrapping_add(p);
        q.schedule_in(delays[(p % 6) as usize], p.wrapping_mul(31).wrapping_add(7) % 1_000_003);
    }
    let s = start.elapsed().as_secs_f64();
    println!("{pending} pending: {:.1} M events/s (checksum {sum})", n as f64 / s / 1e6);
}
