//! Tests of the `fio` kind as a scenario builds it: what its jobs draw, how they are paced, and the
//! errors their options give.

use super::block_sizes::BlockSizes;
use super::build;
use super::job::FioJob;
use super::options::{lookup, Effect, ASYNC_ENGINES, SYNC_ENGINES};
use super::values::{Dialect, OptionError, OptionValues};
use crate::face::{Instance, JobSource, Op, Request};
use crate::plan::Pacing;
use sanlab_spec::{Spec, SpecResult};
use sanlab_des::RngStream;

fn source(src: &str) -> SpecResult<Box<dyn JobSource>> {
    let t: toml::Table = src.parse().unwrap();
    let spec = Spec::new(&t, "vm[0].job[0]");
    let w = build(&spec)?;
    spec.finish()?;
    Ok(w)
}

/// The job's first instance.
fn job(src: &str) -> SpecResult<Instance> {
    Ok(source(src)?.instances().remove(0))
}

fn draw(j: &mut Instance, n: usize) -> Vec<Request> {
    let mut rng = RngStream::new(1, "t");
    (0..n).map_while(|_| j.workload.next(&mut rng)).collect()
}

#[test]
fn random_writes_are_aligned_and_in_range() {
    let mut j = job("rw = \"randwrite\"\nbs = \"32k\"\nsize = \"1MiB\"\noffset = \"1MiB\"").unwrap();
    for r in draw(&mut j, 1000) {
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.offset_bytes % 32768, 0);
        assert!((1 << 20..2 << 20).contains(&r.offset_bytes));
    }
}

#[test]
fn sequential_wraps_per_direction_and_mix_follows_rwmixread() {
    let mut j = job("rw = \"read\"\nbs = \"4k\"\nsize = \"8k\"").unwrap();
    let offs: Vec<u64> = draw(&mut j, 3).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offs, [0, 4096, 0]);
    let mut j = job("rw = \"rw\"\nrwmixread = 70").unwrap();
    let reqs = draw(&mut j, 10_000);
    let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
    assert!((6_800..7_200).contains(&reads), "{reads}");
    // Reads and writes each go through the region in order, as fio keeps a position per direction.
    let writes: Vec<u64> = reqs.iter().filter(|r| r.op == Op::Write).take(3).map(|r| r.offset_bytes).collect();
    assert_eq!(writes, [0, 4096, 8192]);
}

#[test]
fn block_sizes_per_direction_bsrange_and_bssplit() {
    let mut j = job("rw = \"randrw\"\nbs = \"4k,16k\"").unwrap();
    for r in draw(&mut j, 1000) {
        assert_eq!(r.size_bytes, if r.op == Op::Read { 4096 } else { 16384 });
    }
    let mut j = job("rw = \"randread\"\nbsrange = \"4k-16k\"").unwrap();
    let reqs = draw(&mut j, 40_000);
    for size in [4096, 8192, 12288, 16384] {
        let n = reqs.iter().filter(|r| r.size_bytes == size).count();
        assert!((9_400..10_600).contains(&n), "{size}: {n}");
    }
    assert!(reqs.iter().all(|r| r.offset_bytes % 4096 == 0));
    let mut j = job("bssplit = \"4k/75:64k/\"").unwrap();
    let big = draw(&mut j, 10_000).iter().filter(|r| r.size_bytes == 65536).count();
    assert!((2_300..2_700).contains(&big), "{big}");
    assert!(job("bssplit = \"4k/70:64k/20\"").err().unwrap().message.contains("add up to 90"));
}

#[test]
fn errors_are_located() {
    let e = job("rw = \"randwirte\"").err().unwrap();
    assert!(e.message.contains("did you mean `randwrite`"), "{}", e.message);
    assert_eq!(job("iodepth = 0").err().unwrap().location, "vm[0].job[0].iodepth");
    assert!(job("rw = \"randtrim\"").err().unwrap().message.contains("trims are not modelled"));
    assert_eq!(job("blocksize = \"4k\"").err().unwrap().location, "vm[0].job[0].blocksize");
    assert!(job("ioengine = \"spdk\"").err().unwrap().message.starts_with("unknown engine `spdk`: expected a sync engine"));
    let e = job("ioengine = \"rbd\"").err().unwrap();
    assert_eq!(e.message, "engine `rbd` does not do block I/O on a disk, and sanlab simulates block I/O: use a block engine such as libaio, io_uring or psync");
    assert!(job("thinktime = 10\nrate_iops = 10").err().unwrap().message.contains("thinktime with rate_iops"));
}

#[test]
fn pacing_depth_and_rates() {
    assert_eq!(job("iodepth = 32").unwrap().plan.pacing, Pacing::Closed { depth: 32 });
    // Every block engine runs: sync ones one request at a time, the others at iodepth.
    for engine in SYNC_ENGINES {
        assert_eq!(job(&format!("iodepth = 32\nioengine = \"{engine}\"")).unwrap().plan.pacing, Pacing::Closed { depth: 1 }, "{engine}");
    }
    for engine in ASYNC_ENGINES {
        assert_eq!(job(&format!("iodepth = 32\nioengine = \"{engine}\"")).unwrap().plan.pacing, Pacing::Closed { depth: 32 }, "{engine}");
    }
    assert_eq!(
        job("rate_iops = 500\nrate_process = \"poisson\"\niodepth = 8").unwrap().plan.pacing,
        Pacing::Open { depth: 8, rate_iops: 500.0, poisson: true }
    );
    // Per-direction rates on a mixed job: both streams, mixed at their rates.
    let mut j = job("rw = \"randrw\"\nrate_iops = \"300,100\"").unwrap();
    assert_eq!(j.plan.pacing, Pacing::Open { depth: 1, rate_iops: 400.0, poisson: false });
    let reads = draw(&mut j, 10_000).iter().filter(|r| r.op == Op::Read).count();
    assert!((7_300..7_700).contains(&reads), "{reads}");
    assert_eq!(job("rw = \"randread\"\nrate_iops = \"300,100\"").unwrap().plan.pacing, Pacing::Open { depth: 1, rate_iops: 300.0, poisson: false });
    assert!(job("rw = \"randrw\"\nrate_iops = \",100\"").err().unwrap().message.contains("only one direction"));
}

#[test]
fn times_think_and_limits() {
    let mut j = job("runtime = 30\nramp_time = \"5s\"\nstartdelay = \"500ms\"\nthinktime = 200\nthinktime_blocks = 4\niodepth = 16").unwrap();
    assert_eq!(j.plan.runtime_ns, Some(35_500_000_000));
    assert_eq!(j.plan.start_ns, 500_000_000);
    assert_eq!(j.plan.measured_from_ns, 5_500_000_000);
    assert_eq!(j.plan.pacing, Pacing::Closed { depth: 4 }, "thinktime_blocks caps the depth");
    let mut rng = RngStream::new(1, "t");
    for _ in 0..3 {
        j.workload.next(&mut rng);
    }
    assert_eq!(j.workload.think_ns(0, 0), None);
    j.workload.next(&mut rng);
    assert_eq!(j.workload.think_ns(0, 0), Some(200_000), "200 us after 4 requests");
    assert_eq!(j.workload.think_ns(0, 0), None);
    // time_based = false stops after io_size x loops bytes, number_ios after that many requests.
    let mut j = job("time_based = false\nsize = \"64k\"\nloops = 2").unwrap();
    assert_eq!(draw(&mut j, 100).len(), 32);
    let mut j = job("number_ios = 7").unwrap();
    assert_eq!(draw(&mut j, 100).len(), 7);
}

#[test]
fn rw_suffix_and_clones() {
    let mut j = job("rw = \"write:4k\"\nbs = \"4k\"").unwrap();
    let offs: Vec<u64> = draw(&mut j, 3).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offs, [0, 8192, 16384]);
    let mut j = job("rw = \"randread:4\"").unwrap();
    let offs: Vec<u64> = draw(&mut j, 4).iter().map(|r| r.offset_bytes).collect();
    assert_eq!([offs[1] - offs[0], offs[2] - offs[1], offs[3] - offs[2]], [4096; 3]);
    let inst = source("numjobs = 3\noffset_increment = \"1MiB\"\nsize = \"1MiB\"\nrw = \"randread\"").unwrap().instances();
    assert_eq!(inst.iter().map(|i| i.suffix.clone().unwrap()).collect::<Vec<_>>(), ["0", "1", "2"]);
    let mut third = inst.into_iter().nth(2).unwrap();
    assert!(draw(&mut third, 100).iter().all(|r| (2 << 20..3 << 20).contains(&r.offset_bytes)));
}

#[test]
fn rate_caps_bandwidth_per_direction() {
    // 1 MiB/s of 4k: 256 IOPS; per direction "1m,512k" on a 70/30 mix of 4k reads and 64k writes.
    assert_eq!(job("rate = \"1m\"").unwrap().plan.pacing, Pacing::Open { depth: 1, rate_iops: 256.0, poisson: false });
    let j = job("rw = \"randrw\"\nbs = \"4k,64k\"\nrate = \"1m,512k\"\nrate_iops = 999").unwrap();
    assert_eq!(j.plan.pacing, Pacing::Open { depth: 1, rate_iops: 256.0 + 8.0, poisson: false }, "rate wins over rate_iops");
    // A bsrange's mean: 4k..16k in 4k steps, uniform.
    assert_eq!(job("bsrange = \"4k-16k\"\nrate = \"10m\"").unwrap().plan.pacing, Pacing::Open { depth: 1, rate_iops: 10.0 * 1048576.0 / 10240.0, poisson: false });
    assert_eq!(BlockSizes::Split(vec![(4096, 75), (65536, 100)]).mean_bytes(), 0.75 * 4096.0 + 0.25 * 65536.0);
    let e = job("rate = \"0.5\"").err().unwrap();
    assert_eq!((e.location.as_str(), e.message.as_str()), ("vm[0].job[0].rate", "rate `0.5` is below 1: expected 0 (no cap) or at least 1 (nearest valid: 1)"));
    // rate_iops keeps sanlab's range: one request every 5 s is a rate.
    assert!(job("rate_iops = 0.2").is_ok());
}

#[test]
fn sequential_skips_go_forward_or_backwards_and_blockalign() {
    let offs = |src: &str, n| draw(&mut job(src).unwrap(), n).iter().map(|r| r.offset_bytes).collect::<Vec<u64>>();
    // read:-8k with 4k blocks reads backwards 4k at a time, wrapping to the end (fio's rule).
    assert_eq!(offs("rw = \"read:-8k\"\nsize = \"64k\"", 5), [0, 56 << 10, 52 << 10, 48 << 10, 44 << 10]);
    assert_eq!(offs("rw = \"read:8k\"\nsize = \"64k\"", 6), [0, 12 << 10, 24 << 10, 36 << 10, 48 << 10, 60 << 10]);
    assert!(job("rw = \"read:-64k\"\nsize = \"64k\"").err().unwrap().message.contains("does not fit"));
    // Random 8k requests on a 512-byte boundary.
    let reqs = draw(&mut job("rw = \"randread\"\nbs = \"8k\"\nblockalign = 512\nsize = \"1m\"").unwrap(), 2_000);
    assert!(reqs.iter().all(|r| r.offset_bytes % 512 == 0 && r.offset_bytes + 8192 <= 1 << 20));
    assert!(reqs.iter().any(|r| r.offset_bytes % 8192 != 0));
}

#[test]
fn thinktime_iotime_pauses_after_issuing_for_a_while() {
    // No thinktime_blocks: only time counts (fio skips the blocks check), and the depth stays.
    let mut j = job("thinktime = \"1ms\"\nthinktime_iotime = \"10ms\"\nthinktime_spin = \"200us\"\niodepth = 4").unwrap();
    assert_eq!(j.plan.pacing, Pacing::Closed { depth: 4 });
    let mut rng = RngStream::new(1, "t");
    j.workload.next(&mut rng);
    assert_eq!(j.workload.think_ns(0, 9_000_000), None);
    assert_eq!(j.workload.think_ns(9_000_000, 10_000_000), Some(1_000_000), "10 ms of issuing");
    // Issuing resumed at 11.5 ms (the job drained, then paused): the next pause is 10 ms later.
    assert_eq!(j.workload.think_ns(11_500_000, 12_000_000), None);
    assert_eq!(j.workload.think_ns(20_000_000, 21_400_000), None);
    assert_eq!(j.workload.think_ns(21_000_000, 21_500_000), Some(1_000_000));
    // With thinktime_blocks too, whichever comes first.
    let mut j = job("thinktime = \"1ms\"\nthinktime_iotime = \"10s\"\nthinktime_blocks = 2").unwrap();
    j.workload.next(&mut rng);
    j.workload.next(&mut rng);
    assert_eq!(j.workload.think_ns(0, 1_000), Some(1_000_000));
}

fn file_job(opts: &[(&'static str, &str)]) -> Result<Instance, OptionError> {
    Ok(FioJob::from_options(&OptionValues::of(opts), Dialect::JobFile { device_size_bytes: 1 << 30 })?.instances().remove(0))
}

#[test]
fn verify_reads_back_what_was_written() {
    let ops = |reqs: &[Request]| reqs.iter().map(|r| if r.op == Op::Read { 'R' } else { 'W' }).collect::<String>();
    // After the writes (and a pause for them to complete), every block is read back.
    let mut j = file_job(&[("rw", "write"), ("size", "16k"), ("verify", "crc32c")]).unwrap();
    let mut rng = RngStream::new(1, "t");
    let writes: Vec<Request> = (0..4).map(|_| j.workload.next(&mut rng).unwrap()).collect();
    assert_eq!(j.workload.think_ns(0, 0), Some(0), "the writes complete before the reads");
    let rest = draw(&mut j, 100);
    assert_eq!(ops(&rest), "RRRR");
    assert_eq!(rest.iter().map(|r| (r.offset_bytes, r.size_bytes)).collect::<Vec<_>>(), writes.iter().map(|r| (r.offset_bytes, r.size_bytes)).collect::<Vec<_>>());
    // verify_backlog interleaves; loops verify after each pass; do_verify=0 keeps only the backlog.
    let mut j = file_job(&[("rw", "randwrite"), ("size", "32k"), ("verify", "md5"), ("verify_backlog", "3")]).unwrap();
    assert_eq!(ops(&draw(&mut j, 100)), "WWWRRRWWWRRRWWRR");
    let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("loops", "2"), ("verify", "md5")]).unwrap();
    assert_eq!(ops(&draw(&mut j, 100)), "WWRRWWRR");
    let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("verify", "md5"), ("do_verify", "0")]).unwrap();
    assert_eq!(ops(&draw(&mut j, 100)), "WW");
    // time_based: fio ends the job at its runtime, before any verify phase.
    let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("time_based", "1"), ("verify", "md5")]).unwrap();
    assert!(draw(&mut j, 100).iter().all(|r| r.op == Op::Write));
    let e = file_job(&[("rw", "randread"), ("verify", "crc32c")]).err().unwrap();
    assert!(e.message.starts_with("a read-only job (rw=randread) checks data that an earlier run wrote"), "{}", e.message);
}

/// Requests (after the first) that start where the previous one ended.
fn continuations(reqs: &[Request]) -> usize {
    reqs.windows(2).filter(|w| w[1].offset_bytes == w[0].offset_bytes + u64::from(w[0].size_bytes)).count()
}

#[test]
fn percentage_random_mixes_sequential_continuations() {
    // 0: fully sequential, wrapping at the region's end (time_based, the scenario default).
    let mut j = job("rw = \"randread\"\nsize = \"64k\"\npercentage_random = 0").unwrap();
    let offs: Vec<u64> = draw(&mut j, 40).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offs, (0..40).map(|i| i * 4096 % 65536).collect::<Vec<u64>>());
    // 70: about 30 % of requests continue from the previous one (a random block lands there
    // by chance once in 262,144).
    let mut j = job("rw = \"randread\"\npercentage_random = 70").unwrap();
    let seq = continuations(&draw(&mut j, 10_001));
    assert!((2_800..=3_200).contains(&seq), "{seq}");
    // 100 (the default) draws nothing more: the same requests as without the option.
    let mut a = job("rw = \"randrw\"\nbsrange = \"4k-16k\"\nrandom_distribution = \"zipf:1.2\"").unwrap();
    let mut b = job("rw = \"randrw\"\nbsrange = \"4k-16k\"\nrandom_distribution = \"zipf:1.2\"\npercentage_random = 100").unwrap();
    assert_eq!(draw(&mut a, 1_000), draw(&mut b, 1_000));
    // Sequential modes ignore it, as fio does.
    let mut a = job("rw = \"rw\"").unwrap();
    let mut b = job("rw = \"rw\"\npercentage_random = 30").unwrap();
    assert_eq!(draw(&mut a, 1_000), draw(&mut b, 1_000));
}

#[test]
fn percentage_random_per_direction() {
    // Reads fully random, writes fully sequential; each direction continues from its own last request.
    let mut j = job("rw = \"randrw\"\npercentage_random = \"100,0\"").unwrap();
    let reqs = draw(&mut j, 4_000);
    let (reads, writes): (Vec<Request>, Vec<Request>) = reqs.into_iter().partition(|r| r.op == Op::Read);
    assert_eq!(writes.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), (0..writes.len() as u64).map(|i| i * 4096).collect::<Vec<_>>());
    assert!(continuations(&reads) < 5, "{}", continuations(&reads));
    // A single value applies to both directions; "0," leaves writes at the default 100.
    let mut j = job("rw = \"randrw\"\npercentage_random = 0").unwrap();
    let reqs = draw(&mut j, 1_000);
    assert!(reqs.iter().filter(|r| r.op == Op::Read).collect::<Vec<_>>().windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 4096));
    let mut j = job("rw = \"randrw\"\npercentage_random = \"0,\"").unwrap();
    let writes: Vec<Request> = draw(&mut j, 2_000).into_iter().filter(|r| r.op == Op::Write).collect();
    assert!(continuations(&writes) < 5);
}

#[test]
fn percentage_random_without_time_based_ends_the_pass_at_the_region_end() {
    // fio stops a pass when a sequential continuation runs off the end, even before io_size...
    let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\npercentage_random = 0").unwrap();
    assert_eq!(draw(&mut j, 1_000).len(), 16);
    // ...starts the next loop at the region's start...
    let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\nloops = 2\npercentage_random = 0").unwrap();
    let offs: Vec<u64> = draw(&mut j, 1_000).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offs, (0..32).map(|i| i % 16 * 4096).collect::<Vec<u64>>());
    // ...and wraps instead for a randrw job whose io_size exceeds size.
    let mut j = job("rw = \"randrw\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\npercentage_random = 0").unwrap();
    assert_eq!(draw(&mut j, 1_000).len(), 256);
    // A mix still stops after io_size bytes at most.
    let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"1MiB\"\npercentage_random = 50").unwrap();
    assert!(draw(&mut j, 1_000).len() <= 256);
}

#[test]
fn the_random_map_covers_every_block_once_per_pass() {
    let blocks = |j: &mut Instance, n| draw(j, n).iter().map(|r| r.offset_bytes / 4096).collect::<Vec<u64>>();
    let distinct = |b: &[u64]| b.iter().collect::<std::collections::BTreeSet<_>>().len();
    // fio's default: 256 requests cover the 256 blocks of 1 MiB, then the job ends.
    let mut j = file_job(&[("rw", "randwrite"), ("size", "1m")]).unwrap();
    let once = blocks(&mut j, 1000);
    assert_eq!((once.len(), distinct(&once)), (256, 256));
    assert_ne!(once, (0..256).collect::<Vec<u64>>(), "random, not sequential");
    assert_eq!(j.plan.state_bytes, 32, "one bit per block");
    // time_based: the map starts over once full; loops=2: a second full pass.
    for (opt, drawn) in [(("time_based", "1"), 512), (("loops", "2"), 1000)] {
        let mut j = file_job(&[("rw", "randrw"), ("size", "1m"), opt]).unwrap();
        let twice = blocks(&mut j, drawn);
        assert_eq!(twice.len(), 512);
        assert_eq!((distinct(&twice[..256]), distinct(&twice[256..])), (256, 256), "reads and writes share the map");
    }
    // Mixed block sizes: a request is cut at the first used block, so the pass covers the
    // region exactly.
    let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("bsrange", "4k-64k")]).unwrap();
    let reqs = draw(&mut j, 10_000);
    assert_eq!(reqs.iter().map(|r| u64::from(r.size_bytes)).sum::<u64>(), 1 << 20);
    let mut covered = vec![0u8; 256];
    for r in &reqs {
        for b in r.offset_bytes / 4096..(r.offset_bytes + u64::from(r.size_bytes)) / 4096 {
            covered[b as usize] += 1;
        }
    }
    assert!(covered.iter().all(|&c| c == 1));
    // Non-uniform distributions, zones and sanlab's own keys keep drawing with replacement.
    assert_eq!(file_job(&[("rw", "randread"), ("random_distribution", "zipf:1.2")]).unwrap().plan.state_bytes, 0);
    assert_eq!(file_job(&[("rw", "randread"), ("zonemode", "strided"), ("zonesize", "64k"), ("zonerange", "1m")]).unwrap().plan.state_bytes, 0);
    assert_eq!(job("rw = \"randread\"").unwrap().plan.state_bytes, 0);
}

#[test]
fn lfsr_uses_every_block_once_before_any_repeats() {
    let blocks = |j: &mut Instance, n| draw(j, n).iter().map(|r| r.offset_bytes / 4096).collect::<Vec<u64>>();
    let distinct = |b: &[u64]| b.iter().collect::<std::collections::BTreeSet<_>>().len();
    // 1 MiB in 4 KiB blocks: without time_based the job does 256 requests, every block once.
    let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("random_generator", "lfsr")]).unwrap();
    let once = blocks(&mut j, 1000);
    assert_eq!((once.len(), distinct(&once)), (256, 256));
    assert_ne!(once, (0..256).collect::<Vec<u64>>(), "random, not sequential");
    // time_based: the cycle starts over once every block has been used.
    let mut j = file_job(&[("rw", "randrw"), ("size", "1m"), ("random_generator", "lfsr"), ("time_based", "1")]).unwrap();
    let twice = blocks(&mut j, 512);
    assert_eq!(distinct(&twice[..256]), 256, "reads and writes share the cycle, as fio's file does");
    assert_eq!(twice[..256], twice[256..]);
    // fio's default generator with norandommap draws with replacement: repeats long before
    // the region is used.
    let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("random_generator", "tausworthe"), ("norandommap", "1")]).unwrap();
    assert!(distinct(&blocks(&mut j, 1000)) < 200);
    // Non-uniform distributions ignore it, as fio's do; zones and files are not modelled.
    assert!(file_job(&[("rw", "randread"), ("random_generator", "lfsr"), ("random_distribution", "zipf:1.2")]).unwrap().plan.region_bytes.is_some());
    let e = file_job(&[("rw", "randread"), ("random_generator", "lfsr"), ("zonemode", "strided"), ("zonesize", "64k"), ("zonerange", "1m")]).err().unwrap();
    assert!(e.option == "random_generator" && e.message.contains("not modelled"), "{}", e.message);
    let e = file_job(&[("random_generator", "lsfr")]).err().unwrap();
    assert_eq!(e.message, "unknown value `lsfr`: expected tausworthe, lfsr or tausworthe64; did you mean `lfsr`?");
}

#[test]
fn percentage_random_errors_and_job_files() {
    let e = job("rw = \"randread\"\npercentage_random = 120").err().unwrap();
    assert_eq!(e.location, "vm[0].job[0].percentage_random");
    assert!(e.message.contains("120 is out of range: expected 0..=100 (nearest valid: 100)"), "{}", e.message);
    let e = job("percentage_random = \"50,-5\"").err().unwrap();
    assert!(e.message.contains("-5 is out of range: expected 0..=100 (nearest valid: 0)"), "{}", e.message);
    assert!(job("percentage_random = \"half\"").err().unwrap().message.contains("`half` is not a whole number"));
    // Job files read the same option table.
    assert!(lookup("percentage_random").is_some_and(|o| o.effect == Effect::Model));
    let mut v = OptionValues::of(&[("rw", "randwrite"), ("size", "64k"), ("percentage_random", "50,0")]);
    let mut j = FioJob::from_options(&v, Dialect::JobFile { device_size_bytes: 1 << 30 }).unwrap().instances().remove(0);
    assert_eq!(draw(&mut j, 100).iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), (0..16).map(|i| i * 4096).collect::<Vec<u64>>());
    v.set("percentage_random", "101".into());
    assert_eq!(FioJob::from_options(&v, Dialect::JobFile { device_size_bytes: 1 << 30 }).err().unwrap().option, "percentage_random");
}
