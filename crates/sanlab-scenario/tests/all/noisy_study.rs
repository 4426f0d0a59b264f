//! Seed 002: the noisy-neighbour study and its isolation matrix.
use crate::common::{claim, run};
use sanlab_scenario::{Overrides, VariantResult};

const STUDY: &str = "scenarios/studies/noisy_neighbor.toml";

fn vm<'a>(v: &'a VariantResult, name: &str) -> &'a sanlab_model::report::VmReport {
    v.report.vms.iter().find(|x| x.name == name).unwrap()
}

#[test]
fn isolation_matrix_and_the_fix() {
    let r = run(STUDY, &[], Overrides::default());
    let good_ms = |name: &str| vm(r.variants.iter().find(|v| v.name == name).unwrap(), "good").lat_ms.mean;
    let fixed = good_ms("queues_256");
    claim("noisy.queues_256.good_latency", fixed);
    let shared = good_ms("shared_pe");
    assert!(shared >= 20.0 * fixed, "shared PE {shared} ms vs fixed {fixed} ms");
    // Against the post's own measurement (300-400 ms), not a derived figure: a wide band.
    claim("noisy.fifo.good_latency", shared);
    // Bad where the two VMs share a device queue, fine where they do not.
    for (variant, bad) in [("shared_pe", true), ("two_containers", true), ("vmfs_and_vvol", false), ("two_hosts", false), ("bad_4k_qd1", false), ("bad_512k_qd1", false)] {
        let ms = good_ms(variant);
        assert_eq!(ms > 20.0 * fixed, bad, "{variant}: good VM at {ms} ms");
    }
    // The bad VM gets about 25 IOPS at 512k: Bronze burst 2000 / (4 pieces of 128k at cost 19.5).
    let bad = vm(&r.variants[0], "bad");
    assert!((bad.iops - 2000.0 / 19.5 / 4.0).abs() < 0.5, "bad VM {} IOPS", bad.iops);
}

#[test]
fn only_fifo_dispatch_with_a_device_wide_dsnro_reaches_the_seeds_latency() {
    let r = run(STUDY, &["shared_pe", "shared_pe_fair_share", "shared_pe_esxi", "shared_pe_world_dsnro"], Overrides::default());
    let ms: Vec<f64> = r.variants.iter().map(|v| vm(v, "good").lat_ms.mean).collect();
    assert!(ms[0] > 250.0, "fifo {}", ms[0]);
    // Fair share lets the good VM take the next free slot: one 512k completion away. The bad VM
    // completes 2000 / 19.5 / 4 = 25.64 writes a second (Bronze burst over four 128k pieces at
    // cost 19.5), a slot every 39.0 ms; a probe arriving at a random point of that cycle waits
    // half of it, 19.50 ms, plus the 0.30 ms it takes when it never waits (`shared_pe_world_dsnro`
    // below): 19.80 ms (docs/studies/noisy_neighbor.md). Measured: 20.20 ms (+2.0 %) for every
    // seed (1-6 give the same figure to the microsecond: nothing here is random). What moves it is
    // where the 50 probes, one a second, fall in the 39 ms cycle (0.64 of a cycle apart): over
    // other windows (40-60 s, warm-up 10-15 s) 19.56-20.36 ms. Tolerance: 3 % (19.21-20.39 ms).
    let slot_ms = 1000.0 / (2000.0 / 19.5 / 4.0);
    let alone_ms = vm(r.variants.iter().find(|v| v.name == "shared_pe_world_dsnro").unwrap(), "good").lat_ms.mean;
    assert!((alone_ms - 0.30).abs() < 0.01, "the good VM alone: {alone_ms} ms");
    let derived = slot_ms / 2.0 + alone_ms;
    assert!((ms[1] - derived).abs() <= 0.03 * derived, "fair share {} ms, derived {derived} ms", ms[1]);
    claim("noisy.fair_share.good_latency", ms[1]);
    // At most one slot's wait: 39.0 + 0.30 ms (measured 39.19 ms, every seed); 3 % below it.
    let max = vm(&r.variants[1], "good").lat_ms.max;
    assert!((0.97 * (slot_ms + alone_ms)..=slot_ms + alone_ms).contains(&max), "fair share: longest wait {max} ms, one slot {slot_ms} ms");
    assert!((ms[2] - ms[1]).abs() < 1e-9, "random I/O: the quantum never applies");
    assert!(ms[3] < 2.0, "per-VM DSNRO never blocks the good VM: {}", ms[3]);
    // esxtop: DQLEN drops to 32 on the shared PE.
    let dev = &r.variants[0].report.devices[0];
    assert!(dev.dqlen_mean < 40.0 && dev.qued_mean > 5.0, "{} {}", dev.dqlen_mean, dev.qued_mean);
}

#[test]
fn deep_host_queues_flood_a_limited_target_queue_and_qfull_throttling_contains_it() {
    let o = Overrides { duration: Some("20s".into()), ..Overrides::default() };
    let names = ["q1_default", "q1_target_4096", "q1_target_4096_qfull", "q1_target_2048_default", "q1_target_2048_4096"];
    let r = run("scenarios/studies/noisy_neighbor_questions.toml", &names, o);
    let other = |i: usize| vm(&r.variants[i], "other_host").iops;
    // The collapse needs the 128-command target queue, our figure chosen to make it visible.
    assert!(other(1) < 0.05 * other(0), "flooded target: other host {} vs {}", other(1), other(0));
    assert!(other(2) > 0.8 * other(0), "adaptive depth: other host {} vs {}", other(2), other(0));
    let pe = &r.variants[2].report.devices[0];
    assert!(pe.qfull > 0 && pe.depth_end < 64, "PE device throttled to {}", pe.depth_end);
    assert_eq!(r.variants[0].report.arrays[0].qfull_sent, 0);
    // With the sourced 2048 commands per port, this load never fills it: no QUEUE FULL, the other
    // host unaffected, and host queues at 4096 simply fix the good VM.
    for i in [3, 4] {
        assert_eq!(r.variants[i].report.arrays[0].qfull_sent, 0, "{}", names[i]);
        assert!((other(i) / other(0) - 1.0).abs() < 1e-9, "{}: other host {} vs {}", names[i], other(i), other(0));
    }
    assert!(vm(&r.variants[4], "good").lat_ms.mean < 1.0, "queues at 4096 under a 2048 target: good VM {} ms", vm(&r.variants[4], "good").lat_ms.mean);
}

#[test]
fn qos_minimum_is_honoured_when_the_array_is_contended() {
    // One array server of 100 µs (10,000 4K IOPS) shared by two closed loops of 32: FIFO would
    // split it evenly (5,000 each); the volume with min 7,000 is served first while below it.
    let text = r#"
schema_version = 1
name = "min_iops"
[run]
duration = "20s"
warmup = "2s"
[[array]]
name = "a"
media = { kind = "flash", read_latency = "100us", servers = 1 }
[[volume]]
name = "guaranteed"
arrays = ["a"]
qos = { min = 7000, max = 15000, burst = 15000 }
[[volume]]
name = "other"
arrays = ["a"]
[[host]]
name = "h"
adapter = { kind = "ideal" }
[[path]]
host = "h"
array = "a"
[[vm]]
name = "g"
host = "h"
volume = "guaranteed"
[[vm.job]]
rw = "randread"
iodepth = 32
[[vm]]
name = "o"
host = "h"
volume = "other"
[[vm.job]]
rw = "randread"
iodepth = 32
[[variant]]
name = "with_min"
set = {}
[[variant]]
name = "no_min"
set = { "volume[0].qos.min" = 0 }
"#;
    let r = sanlab_scenario::run_file(&crate::common::write_scenario(text), &[], &Overrides::default(), None).unwrap();
    for v in &r.variants {
        crate::common::assert_conserved(v);
    }
    let (with_min, no_min) = (vm(&r.variants[0], "g").iops, vm(&r.variants[1], "g").iops);
    assert!((4_500.0..5_500.0).contains(&no_min), "without a minimum the server is shared: {no_min}");
    assert!(with_min >= 0.97 * 7_000.0, "minimum 7,000 under contention: {with_min}");
}
