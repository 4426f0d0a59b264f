//! The disk group against the drive's datasheet and the layout's arithmetic.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const KIB: u64 = 1024;

fn group(extra: &str) -> DiskGroup {
    let t: toml::Table = extra.parse().unwrap();
    let spec = Spec::new(&t, "array[0].media");
    let g = DiskGroup::from_spec(&spec).unwrap();
    spec.finish().unwrap();
    g
}

fn error(extra: &str) -> sanlab_spec::SpecError {
    let t: toml::Table = extra.parse().unwrap();
    DiskGroup::from_spec(&Spec::new(&t, "array[0].media")).err().expect("should be rejected")
}

/// splitmix64: deterministic request positions for the tests.
struct Positions(u64);

impl Positions {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Disk(u32),
    Done(u64),
}

/// Plays the engine: timers and completions in time order, a closed loop of `depth` requests.
struct Run {
    group: DiskGroup,
    done: Vec<(SimTime, u64)>,
    /// Stats and time when `warmup` requests were done.
    at_warmup: Option<(DiskGroupStats, SimTime)>,
    end_ns: SimTime,
}

fn closed_loop(group: DiskGroup, depth: usize, total: usize, warmup: usize, mut request: impl FnMut(usize) -> (Op, u64, u32)) -> Run {
    let mut run = Run { group, done: vec![], at_warmup: None, end_ns: 0 };
    let mut out = DiskOut::default();
    let mut events = BinaryHeap::new();
    let mut seq = 0u64;
    let mut submitted = 0;
    let mut now = 0;
    loop {
        while submitted < total && submitted < run.done.len() + depth {
            let (op, offset, size) = request(submitted);
            run.group.submit(now, submitted as u64, op, offset, size, &mut out);
            submitted += 1;
        }
        for (t, disk) in out.timers.drain(..) {
            events.push(Reverse((t, seq, Event::Disk(disk))));
            seq += 1;
        }
        for (t, token, _) in out.done.drain(..) {
            events.push(Reverse((t, seq, Event::Done(token))));
            seq += 1;
        }
        let Some(Reverse((t, _, event))) = events.pop() else { break };
        now = t;
        match event {
            Event::Disk(disk) => run.group.disk_done(now, disk, &mut out),
            Event::Done(token) => {
                run.done.push((now, token));
                if run.done.len() == warmup {
                    run.at_warmup = Some((run.group.stats(now, now), now));
                }
            }
        }
    }
    run.end_ns = now;
    run
}

fn random_reads(group: DiskGroup, depth: usize, total: usize, size: u64) -> Run {
    let span = group.layout.data_bytes() / size;
    let mut at = Positions(7);
    closed_loop(group, depth, total, 0, |_| (Op::Read, at.below(span) * size, size as u32))
}

fn mean_service_ms(run: &Run) -> f64 {
    run.end_ns as f64 / run.done.len() as f64 / 1e6
}

const ONE_DISK: &str = "disks = 1\nraid = \"raid0\"";

#[test]
fn seek_curve_meets_the_datasheet() {
    let c = SeekCurve::fit(0.2e6, 3.5e6, 7.4e6);
    assert!((c.sqrt_ns - 4.5e6).abs() < 1.0 && (c.linear_ns - 2.7e6).abs() < 1.0, "{c:?}");
    assert!((c.seek_ns(1.0) - 7.4e6).abs() < 1.0);
    // Mean over x with density 2(1 − x), midpoint rule.
    let n = 200_000;
    let mean: f64 = (0..n).map(|i| (i as f64 + 0.5) / n as f64).map(|x| c.seek_ns(x) * 2.0 * (1.0 - x) / n as f64).sum();
    assert!((mean - 3.5e6).abs() < 1e3, "mean seek {mean}");
    // An average below a third of the stroke clamps to a straight line.
    let linear = SeekCurve::fit(0.2e6, 1.0e6, 7.4e6);
    assert_eq!(linear.sqrt_ns, 0.0);
    assert!((linear.seek_ns(1.0) - 7.4e6).abs() < 1.0);
}

#[test]
fn left_symmetric_layout() {
    let g = group("");
    let l = g.layout;
    assert_eq!((0..5).map(|s| l.parity_disk(s)).collect::<Vec<_>>(), [4, 3, 2, 1, 0]);
    assert_eq!((0..4).map(|e| l.data_disk(1, e)).collect::<Vec<_>>(), [4, 0, 1, 2]);
    let pieces: Vec<_> = l.pieces(60 * KIB, 8 * KIB).map(|p| (p.stripe, p.element, p.within_bytes, p.size_bytes)).collect();
    assert_eq!(pieces, [(0, 0, 60 * KIB, 4 * KIB), (0, 1, 0, 4 * KIB)]);
    let last = l.pieces(4 * 64 * KIB + 1, 1).next().unwrap();
    assert_eq!((last.stripe, last.element, last.within_bytes), (1, 0, 1));
}

#[test]
fn random_reads_at_depth_one_cost_average_seek_half_turn_and_transfer() {
    let run = random_reads(group(ONE_DISK), 1, 20_000, 4 * KIB);
    let expected_ms = 3.5 + 2.0 + 4096.0 / 99e6 * 1e3;
    let got = mean_service_ms(&run);
    assert!((got / expected_ms - 1.0).abs() < 0.05, "mean service {got:.3} ms, datasheet {expected_ms:.3} ms");
}

#[test]
fn the_10k_class_costs_its_datasheet_seek_and_half_turn() {
    let run = random_reads(group(&format!("{ONE_DISK}\ndrive = \"ultrastar_146z10\"")), 1, 20_000, 4 * KIB);
    let expected_ms = 4.7 + 3.0 + 4096.0 / 50e6 * 1e3;
    let got = mean_service_ms(&run);
    assert!((got / expected_ms - 1.0).abs() < 0.05, "mean service {got:.3} ms, datasheet {expected_ms:.3} ms");
    // A key given beside the class overrides the class's figure.
    let faster = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\ndrive = \"ultrastar_146z10\"\nrpm = 15000")), 1, 20_000, 4 * KIB));
    assert!((got - faster - 1.0).abs() < 0.15, "15,000 rpm saves a third of a 6 ms turn's half: {got:.3} vs {faster:.3} ms");
}

#[test]
fn command_overhead_adds_to_every_disk_operation() {
    let plain = mean_service_ms(&random_reads(group(ONE_DISK), 1, 20_000, 4 * KIB));
    let slowed = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\ncommand_overhead = \"0.4ms\"")), 1, 20_000, 4 * KIB));
    // Random targets: the rotational wait after the overhead is still half a turn on average.
    assert!((slowed - plain - 0.4).abs() < 0.1, "{slowed:.3} ms with 0.4 ms overhead vs {plain:.3} ms without");
    // Zero overhead is the model without it, bit for bit.
    let zero = random_reads(group(&format!("{ONE_DISK}\ncommand_overhead = \"0s\"")), 4, 5_000, 4 * KIB);
    assert_eq!(zero.done, random_reads(group(ONE_DISK), 4, 5_000, 4 * KIB).done);
}

#[test]
fn reordering_raises_throughput_with_queue_depth() {
    let fifo = mean_service_ms(&random_reads(group(ONE_DISK), 1, 20_000, 4 * KIB));
    let satf = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\nreorder_window = 32")), 32, 20_000, 4 * KIB));
    assert!(fifo / satf >= 1.8, "depth 32 gives {:.2}x depth 1", fifo / satf);
    let deep_fifo = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\nreorder_window = 1")), 32, 20_000, 4 * KIB));
    assert!((deep_fifo / fifo - 1.0).abs() < 0.05, "FIFO at depth 32 {deep_fifo:.3} ms vs depth 1 {fifo:.3} ms");
}

/// Back-end operations per host request between warm-up and the end.
fn ops_per_request(run: &mut Run) -> f64 {
    let (before, _) = run.at_warmup.as_ref().unwrap();
    let (last_ns, _) = *run.done.last().unwrap();
    let mut g = run.group.stats(last_ns, last_ns);
    // Count only operations issued up to the last host completion (the tail of the destage
    // queue runs on afterwards).
    g.backend_reads -= before.backend_reads;
    g.backend_writes -= before.backend_writes;
    let requests = run.done.iter().filter(|&&(t, _)| t > run.at_warmup.as_ref().unwrap().1).count();
    (g.backend_reads + g.backend_writes) as f64 / requests as f64
}

#[test]
fn random_small_writes_cost_four_operations_each() {
    let g = group("write_cache = \"1MiB\"");
    let span = g.layout.data_bytes() / (8 * KIB);
    let mut at = Positions(11);
    let mut run = closed_loop(g, 32, 30_000, 10_000, |_| (Op::Write, at.below(span) * 8 * KIB, 8 * 1024));
    let ratio = ops_per_request(&mut run);
    assert!((ratio / 4.0 - 1.0).abs() < 0.03, "{ratio:.3} back-end operations per host write");
    let s = run.group.stats(run.end_ns, run.end_ns);
    assert_eq!(s.full_stripe_writes, 0);
    assert!(s.writes_waited > 20_000, "steady state is destage-bound: {} waited", s.writes_waited);
}

#[test]
fn sequential_writes_become_full_stripe_writes() {
    let g = group("write_cache = \"4MiB\"");
    let mut run = closed_loop(g, 4, 8_000, 2_000, |i| (Op::Write, i as u64 * 64 * KIB, 64 * 1024));
    let ratio = ops_per_request(&mut run);
    assert!((ratio / 1.25 - 1.0).abs() < 0.03, "{ratio:.3} back-end operations per 64 KiB element, RAID-5 4+1 wants 5/4");
    let s = run.group.stats(run.end_ns, run.end_ns);
    assert_eq!(s.rmw_writes, 0);
    assert!(s.full_stripe_writes > 1_000, "{s:?}");
    assert_eq!(s.backend_reads, 0);
}

#[test]
fn sequential_reads_beat_random_reads() {
    let random = mean_service_ms(&random_reads(group(""), 1, 5_000, 4 * KIB));
    let sequential = mean_service_ms(&closed_loop(group(""), 1, 5_000, 0, |i| (Op::Read, i as u64 * 4 * KIB, 4096)));
    assert!(random / sequential >= 5.0, "sequential {sequential:.4} ms, random {random:.3} ms per read");
}

/// Reads and writes of assorted sizes, crossing elements and stripes.
fn mixed(depth: usize) -> Run {
    let g = group("write_cache = \"2MiB\"\ndestage_depth = 3");
    let span = g.layout.data_bytes() / 512;
    let mut at = Positions(3);
    closed_loop(g, depth, 5_000, 0, |i| {
        let op = if i % 3 == 0 { Op::Read } else { Op::Write };
        let hot = at.below(4) == 0; // a quarter of the requests revisit a small area
        let offset = if hot { at.below(64) * 8 * KIB } else { at.below(span) * 512 };
        (op, offset, (1 + at.below(512)) as u32 * 1024)
    })
}

#[test]
fn every_request_completes_once_and_nothing_is_left_in_flight() {
    let run = mixed(16);
    let mut tokens: Vec<u64> = run.done.iter().map(|&(_, t)| t).collect();
    tokens.sort_unstable();
    assert_eq!(tokens, (0..5_000).collect::<Vec<u64>>());
    let g = &run.group;
    assert_eq!(g.ops.live().count(), 0);
    assert_eq!(g.jobs.live().count(), 0);
    assert!(g.disks.iter().all(|d| d.queue.is_empty() && d.serving.is_none()));
    assert!(g.cache.waiting.is_empty() && g.destages_in_flight == 0 && g.cache.destaging_bytes == 0);
    assert!(g.cache.dirty_bytes <= g.cache.high_bytes);
    assert!(g.counters.write_cache_read_hits > 0, "the hot area is read back from the cache");
}

#[test]
fn identical_runs_are_identical() {
    let a = mixed(8);
    let b = mixed(8);
    assert_eq!(a.done, b.done);
    assert!(a.done.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn a_read_of_dirty_data_is_served_from_the_cache() {
    let mut g = group("");
    let mut out = DiskOut::default();
    g.submit(1_000, 1, Op::Write, 64 * KIB, 16 * 1024, &mut out);
    g.submit(2_000, 2, Op::Read, 68 * KIB, 4 * 1024, &mut out);
    assert_eq!(out.done, [(101_000, 1, true), (102_000, 2, true)]);
    assert!(out.timers.is_empty());
    g.submit(3_000, 3, Op::Read, 78 * KIB, 4 * 1024, &mut out);
    assert_eq!(out.timers.len(), 1, "half of this read is not in the cache");
}

#[test]
fn parameter_errors_name_the_key() {
    let e = error("disks = 2");
    assert_eq!(e.location, "array[0].media.disks");
    assert!(e.message.contains("RAID-5 needs at least 3 disks") && e.message.contains("nearest valid: 3"), "{}", e.message);
    let e = error("high_watermark = 60\nlow_watermark = 60");
    assert_eq!(e.location, "array[0].media.low_watermark");
    assert!(e.message.contains("nearest valid: 59"), "{}", e.message);
    let e = error("seek_average = \"9ms\"");
    assert_eq!(e.location, "array[0].media.seek_average");
    assert!(e.message.contains("nearest valid: 7.4ms"), "{}", e.message);
    let e = error("stripe_element = \"1000\"");
    assert!(e.message.contains("nearest valid: 1024"), "{}", e.message);
    assert!(DiskGroup::from_spec(&Spec::new(&"disks = 2\nraid = \"raid0\"".parse().unwrap(), "m")).is_ok());
}

#[test]
fn describe_mode_builds_with_defaults() {
    let spec = Spec::describing();
    let g = DiskGroup::from_spec(&spec).unwrap();
    assert_eq!(g.disks.len(), 5);
    let docs = spec.into_docs();
    assert!(docs.iter().any(|d| d.name == "high_watermark" && d.default == "80"));
}
