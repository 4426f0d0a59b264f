//! The corpus under tests/data: every job file, parameter file and trace parses into the workload
//! it describes (checked on the request stream it generates), and every malformed one gets a
//! message naming its file and line.

use sanlab_des::RngStream;
use sanlab_spec::{build_kind, Spec};
use sanlab_workload::{Instance, JobSource, Op, Pacing, Request, REGISTRY};
use std::path::PathBuf;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn build(src: &str) -> Result<Box<dyn JobSource>, String> {
    let t: toml::Table = src.parse().unwrap();
    build_kind(&Spec::new(&t, "vm[0].job[0]").with_base_dir(data()), REGISTRY, None)
        .map_err(|e| format!("{}: {}", e.location, e.message).replace(&data().display().to_string(), "DATA"))
}

/// The job instances of a workload, by name suffix.
fn jobs(src: &str) -> Vec<(String, Instance)> {
    build(src).unwrap_or_else(|e| panic!("{e}")).instances().into_iter().map(|i| (i.suffix.clone().unwrap_or_default(), i)).collect()
}

fn job(src: &str, name: &str) -> Instance {
    jobs(src).into_iter().find(|j| j.0 == name).unwrap_or_else(|| panic!("no job {name}")).1
}

fn draw(j: &mut Instance, n: usize) -> Vec<Request> {
    let mut rng = RngStream::new(1, "corpus");
    (0..n).map_while(|_| j.workload.next(&mut rng)).collect()
}

fn error(src: &str) -> String {
    build(src).err().expect("an error")
}

fn share(reqs: &[Request], f: impl Fn(&Request) -> bool) -> f64 {
    reqs.iter().filter(|r| f(r)).count() as f64 / reqs.len() as f64
}

fn fio(file: &str) -> String {
    format!("kind = \"fio_file\"\nfile = \"fio/{file}\"")
}

// ---- fio job files -------------------------------------------------------------------------

#[test]
fn fio_oltp_globals_clones_and_value_less_options() {
    let all = jobs(&fio("oltp.fio"));
    assert_eq!(all.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["oltp-read.0", "oltp-read.1", "oltp-write"]);
    let (_, mut read) = all.into_iter().next().unwrap();
    assert_eq!(read.plan.pacing, Pacing::Closed { depth: 16 });
    assert_eq!(read.plan.runtime_ns, Some(60_000_000_000));
    let reqs = draw(&mut read, 5_000);
    assert_eq!(reqs.len(), 5_000, "time_based: no end after size bytes");
    assert!(reqs.iter().all(|r| r.op == Op::Read && r.size_bytes == 8192 && r.offset_bytes % 8192 == 0 && r.offset_bytes < 10 * GIB));
    assert!(read.plan.options.contains(&("group_reporting".to_string(), "1".to_string())));
    let mut write = job(&fio("oltp.fio"), "oltp-write");
    assert_eq!(write.plan.pacing, Pacing::Closed { depth: 4 });
    assert!(draw(&mut write, 100).iter().all(|r| r.op == Op::Write));
    let picked = jobs(&format!("{}\njobs = [\"oltp-write\"]", fio("oltp.fio")));
    assert_eq!(picked.len(), 1);
}

#[test]
fn fio_global_applies_below_only() {
    let src = fio("scoping.fio");
    let mut early = job(&src, "early");
    assert_eq!(early.plan.pacing, Pacing::Closed { depth: 1 }, "above [global]: fio's psync default");
    assert_eq!(draw(&mut early, 1)[0].size_bytes, 4096);
    let mut middle = job(&src, "middle");
    assert_eq!(middle.plan.pacing, Pacing::Closed { depth: 8 });
    assert!(draw(&mut middle, 10).iter().all(|r| r.size_bytes == 16384 && r.op == Op::Write));
    let mut late = job(&src, "late");
    let offs: Vec<u64> = draw(&mut late, 3).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offs, [0, 65536, 131072], "[global-more] is global too (fio's prefix match)");
}

#[test]
fn fio_includes_nest_and_env_expands() {
    let mut inc = job(&fio("include.fio"), "inc");
    assert_eq!(inc.plan.pacing, Pacing::Closed { depth: 32 });
    assert_eq!(draw(&mut inc, 1)[0].size_bytes, 4096);
    // The only test that touches these variables.
    std::env::set_var("SANLAB_TEST_BS", "16k");
    std::env::set_var("SANLAB_TEST_DEPTH", "4");
    let mut env = job(&fio("env.fio"), "env");
    assert_eq!(env.plan.pacing, Pacing::Closed { depth: 4 });
    assert_eq!(draw(&mut env, 1)[0].size_bytes, 16384);
}

#[test]
fn fio_block_sizes() {
    let reqs = draw(&mut job(&fio("bssplit.fio"), "mix"), 20_000);
    assert!((share(&reqs, |r| r.op == Op::Read) - 0.70).abs() < 0.02);
    let reads: Vec<Request> = reqs.iter().filter(|r| r.op == Op::Read).copied().collect();
    assert!((share(&reads, |r| r.size_bytes == 4096) - 0.5).abs() < 0.03);
    assert!(reads.iter().all(|r| r.size_bytes == 4096 || r.size_bytes == 65536));
    assert!(reqs.iter().filter(|r| r.op == Op::Write).all(|r| r.size_bytes == 16384));
    let reqs = draw(&mut job(&fio("bsrange.fio"), "range"), 20_000);
    for size in [4096, 8192, 12288, 16384] {
        assert!((share(&reqs, |r| r.size_bytes == size) - 0.25).abs() < 0.02, "{size}");
    }
    let reqs = draw(&mut job(&fio("per_direction_bs.fio"), "split-bs"), 1_000);
    assert!(reqs.iter().all(|r| r.size_bytes == if r.op == Op::Read { 4096 } else { 16384 }));
}

#[test]
fn fio_random_distributions() {
    let src = fio("distributions.fio");
    let blocks = 1024; // size=4m of 4k blocks
    let hottest = |name: &str| {
        let reqs = draw(&mut job(&src, name), 50_000);
        let mut counts = vec![0u32; blocks];
        for r in &reqs {
            counts[(r.offset_bytes / 4096) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts[0] as f64 / reqs.len() as f64
    };
    // zipf 1.2 over 1024 blocks: the top block takes 1 / zeta(1024, 1.2) = 23 %.
    let zetan: f64 = (1..=blocks).map(|i| (i as f64).powf(-1.2)).sum();
    assert!((hottest("zipf") - 1.0 / zetan).abs() < 0.01);
    assert!(hottest("pareto") > 0.3);
    assert!(hottest("normal") < 0.02, "normal spreads wider than zipf or pareto");
    let zoned = draw(&mut job(&src, "zoned"), 50_000);
    assert_eq!(zoned.len(), 50_000, "time_based");
    assert!((share(&zoned, |r| r.offset_bytes < 4 * MIB / 10) - 0.60).abs() < 0.02);
    let abs = draw(&mut job(&src, "zoned_abs"), 50_000);
    assert!((share(&abs, |r| r.offset_bytes < MIB) - 0.75).abs() < 0.02, "fio's form of vdbench rhpct=75, hitarea=1m");
}

#[test]
fn fio_think_time_delays_and_rates() {
    let mut think = job(&fio("thinktime.fio"), "think");
    assert_eq!(think.plan.pacing, Pacing::Closed { depth: 4 }, "thinktime_blocks caps the depth");
    draw(&mut think, 4);
    assert_eq!(think.workload.think_ns(0, 0), Some(2_000_000), "2000 us, after 4 requests");
    let timed = job(&fio("timing.fio"), "timed");
    assert_eq!((timed.plan.start_ns, timed.plan.measured_from_ns, timed.plan.runtime_ns), (2_000_000_000, 7_000_000_000, Some(37_000_000_000)));
    let mut paced = job(&fio("rate.fio"), "paced");
    assert_eq!(paced.plan.pacing, Pacing::Open { depth: 16, rate_iops: 400.0, poisson: true });
    assert!((share(&draw(&mut paced, 20_000), |r| r.op == Op::Read) - 0.75).abs() < 0.02);
    assert_eq!(job(&fio("sync_engine.fio"), "sync").plan.pacing, Pacing::Closed { depth: 1 });
}

#[test]
fn fio_quirks_end_units_and_rw_suffix() {
    let reqs = draw(&mut job(&fio("not_time_based.fio"), "one-pass"), 1_000);
    assert_eq!(reqs.len(), 32, "1m of 64k, twice");
    assert_eq!((reqs[15].offset_bytes, reqs[16].offset_bytes), (15 * 65536, 0));
    let compat = draw(&mut job(&fio("kb_base.fio"), "compat"), 2_000);
    assert!(compat.iter().all(|r| r.size_bytes == 4000 && r.offset_bytes + 4000 <= 1_000_000), "kb_base=1024: KiB means 1000");
    let si = draw(&mut job(&fio("kb_base.fio"), "si"), 2_000);
    assert!(si.iter().all(|r| r.size_bytes == 4096) && si.iter().any(|r| r.offset_bytes >= 1_000_000));
    let holes: Vec<u64> = draw(&mut job(&fio("rw_suffix.fio"), "holes"), 3).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(holes, [0, 8192, 16384]);
    let runs: Vec<u64> = draw(&mut job(&fio("rw_suffix.fio"), "runs"), 4).iter().map(|r| r.offset_bytes).collect();
    assert_eq!([runs[1] - runs[0], runs[2] - runs[1], runs[3] - runs[2]], [4096; 3]);
}

#[test]
fn fio_percent_sizes_are_of_the_device() {
    let reqs = draw(&mut job(&format!("{}\ndevice_size = \"1GiB\"", fio("percent.fio")), "pct"), 10_000);
    assert!(reqs.iter().all(|r| (512 * MIB..512 * MIB + GIB / 10).contains(&r.offset_bytes)));
    assert!(reqs.iter().any(|r| r.offset_bytes > 600 * MIB));
}

#[test]
fn fio_stonewall_and_wait_for_order_the_jobs() {
    let all = build(&fio("stonewall.fio")).unwrap().instances();
    let order: Vec<(String, Vec<usize>)> = all.into_iter().map(|i| (i.suffix.unwrap(), i.after)).collect();
    assert_eq!(order, [("fill".to_string(), vec![]), ("check".to_string(), vec![0]), ("side".to_string(), vec![0])]);
    // Picking jobs drops waits for jobs that do not run.
    let picked = build(&format!("{}\njobs = [\"check\"]", fio("stonewall.fio"))).unwrap().instances();
    assert_eq!(picked[0].after, Vec::<usize>::new());
}

#[test]
fn fio_malformed_files_name_file_and_line() {
    let e = |f: &str| error(&fio(&format!("bad/{f}")));
    assert_eq!(e("bad_size.fio"), "vm[0].job[0].file: DATA/fio/bad/bad_size.fio:3: job `job`: option `bs`: `4kx` has an unknown size suffix `kx`: expected one of b, k, kb, kib, m, mb, mib, g, gb, gib, t, tb, % (e.g. \"4k\"); did you mean `k`?");
    assert!(e("bad_rw.fio").starts_with("vm[0].job[0].file: DATA/fio/bad/bad_rw.fio:2: job `job`: option `rw`: unknown rw mode `randomread`"), "{}", e("bad_rw.fio"));
    assert_eq!(e("unterminated.fio"), "vm[0].job[0].file: DATA/fio/bad/unterminated.fio:2: unterminated section header `[job`: expected `[name]`");
    assert!(e("missing_include.fio").starts_with("vm[0].job[0].file: DATA/fio/bad/missing_include.fio:3: include `nothere.fio`: cannot read"));
    assert_eq!(e("verify_read_only.fio"), "vm[0].job[0].file: DATA/fio/bad/verify_read_only.fio:4: job `check`: option `verify`: a read-only job (rw=randread) checks data that an earlier run wrote, which sanlab does not model; sanlab models the reads that verify adds to a writing job: drop verify, or make the job write (rw=write, randwrite, rw or randrw)");
    assert_eq!(e("rate_below_one.fio"), "vm[0].job[0].file: DATA/fio/bad/rate_below_one.fio:4: job `slow`: option `rate`: rate `0.5` is below 1: expected 0 (no cap) or at least 1 (nearest valid: 1)");
    assert_eq!(e("wrong_section.fio"), "vm[0].job[0].file: DATA/fio/bad/wrong_section.fio:4: `output-format` is an option of fio's command line, not of a job section (fio: \"Bad option\"): remove it from the file");
    assert_eq!(e("wait_for_loop.fio"), "vm[0].job[0].file: DATA/fio/bad/wait_for_loop.fio:2: job `first`: wait_for=`second` waits for job `second`, defined below it; fio waits only for jobs defined above (no forward references), so the jobs would wait for each other forever: wait for a job above, or move `second` above `first`");
    assert_eq!(e("sync_file_range_flag.fio"), "vm[0].job[0].file: DATA/fio/bad/sync_file_range_flag.fio:5: job `wal`: option `sync_file_range`: unknown flag `writ`: expected wait_before, write or wait_after; did you mean `write`?");
    assert!(e("unknown_option.fio").ends_with("unknown_option.fio:2: unknown fio option `iodepht`; did you mean `iodepth`?"));
    assert!(e("include_section.fio").contains("fio/bad/../include/with_section.fio:2: `[sneaky]`: included files may not contain sections"));
    assert!(e("unset_env.fio").ends_with("unset_env.fio:3: job `job`: option `size`: `` does not start with a number (${SANLAB_TEST_UNSET} is not set, so it expanded to nothing)"), "{}", e("unset_env.fio"));
    assert!(error("kind = \"fio_file\"\nfile = \"fio/oltp.fio\"\njobs = [\"oltp-reed\"]").contains("has no job `oltp-reed` (jobs: oltp-read, oltp-write); did you mean `oltp-read`?"));
    assert_eq!(error("kind = \"fio_file\""), "vm[0].job[0].file: is required: the fio job file, e.g. \"jobs/oltp.fio\"");
}

// ---- vdbench -------------------------------------------------------------------------------

fn vdb(file: &str) -> String {
    format!("kind = \"vdbench\"\nfile = \"vdbench/{file}\"")
}

#[test]
fn vdbench_rhpct_puts_hits_in_the_first_mib() {
    let mut sd = job(&vdb("rhpct.vdb"), "sd1");
    assert_eq!(sd.plan.pacing, Pacing::Closed { depth: 32 }, "iorate=max: threads outstanding");
    assert_eq!((sd.plan.runtime_ns, sd.plan.measured_from_ns), (Some(60_000_000_000), 1_000_000_000));
    let reqs = draw(&mut sd, 40_000);
    assert!(reqs.iter().all(|r| r.op == Op::Read && r.size_bytes == 8192 && r.offset_bytes % 8192 == 0 && r.offset_bytes < 100 * GIB));
    // Hits land in [8k, 1m): block 0 is never touched; misses avoid the hit area.
    let hits = share(&reqs, |r| r.offset_bytes < MIB);
    assert!((hits - 0.75).abs() < 0.01, "{hits}");
    assert!(reqs.iter().all(|r| r.offset_bytes >= 8192));
    let mut wide = job(&vdb("hitarea_8m.vdb"), "sd1");
    let reqs = draw(&mut wide, 40_000);
    assert!((share(&reqs, |r| r.offset_bytes < 8 * MIB) - 0.75).abs() < 0.01);
    assert!((share(&reqs, |r| r.offset_bytes < MIB) - 0.75 / 8.0).abs() < 0.01, "hits spread over the 8 MiB");
}

#[test]
fn vdbench_hotband_is_a_hot_spot() {
    let reqs = draw(&mut job(&vdb("hotband.vdb"), "sd1"), 60_000);
    let (lo, hi) = (10 * GIB, 20 * GIB);
    assert!(reqs.iter().all(|r| (lo..hi).contains(&r.offset_bytes)), "hotband=(10,20) of 100g");
    let reads: Vec<Request> = reqs.iter().filter(|r| r.op == Op::Read).copied().collect();
    let writes: Vec<Request> = reqs.iter().filter(|r| r.op == Op::Write).copied().collect();
    assert!((reads.len() as f64 / reqs.len() as f64 - 0.70).abs() < 0.01);
    // vdbench's KB-for-bytes slip: about a third of reads in the band's first MiB (arrays.md 3.7).
    assert!((share(&reads, |r| r.offset_bytes < lo + MIB) - 0.33).abs() < 0.03);
    // Writes start 1 % of the band (8k records) further on.
    let shift = (10 * GIB / 1_000_000 * 1_000_000 / 8192 / 100) * 8192;
    assert!((share(&writes, |r| (lo + shift..lo + shift + MIB).contains(&r.offset_bytes)) - 0.33).abs() < 0.03);
}

#[test]
fn vdbench_defaults_abbreviations_skew_and_rates() {
    let all = jobs(&vdb("mixed.vdb"));
    assert_eq!(all.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["sd1", "sd2"]);
    let (_, mut sd1) = all.into_iter().next().unwrap();
    assert_eq!(sd1.plan.pacing, Pacing::Timed { depth: 16 }, "threads=16 from sd=default in the include");
    assert_eq!(job(&vdb("mixed.vdb"), "sd2").plan.pacing, Pacing::Timed { depth: 4 }, "th=4");
    assert_eq!((sd1.plan.runtime_ns, sd1.plan.measured_from_ns), (Some(140_000_000_000), 20_000_000_000), "elapsed=2m after warmup=20");
    // iorate=1000 over two SDs: 500 per SD, uniform inter-arrival times.
    let mut rng = RngStream::new(2, "arrivals");
    let (mut t, n) = (0, 20_000);
    for _ in 0..n {
        t = sd1.workload.next_arrival_ns(t, &mut rng).unwrap();
    }
    assert!((t as f64 / n as f64 - 2e6).abs() < 2e4, "mean gap {} ns", t / n);
    let reqs = draw(&mut sd1, 40_000);
    // skew: seqread 40 % (4k sequential reads), randmix 60 % (70 % reads, the xfersize table).
    let big = share(&reqs, |r| r.size_bytes == 65536);
    assert!((big - 0.6 * 0.5).abs() < 0.01, "{big}");
    assert!((share(&reqs, |r| r.op == Op::Write) - 0.6 * 0.3).abs() < 0.01);
    // randmix read hits (50 %) go to the 2m hit area of sd=default; block 0 is left out.
    let small_reads = share(&reqs, |r| r.op == Op::Read && r.offset_bytes < 2 * MIB && r.size_bytes != 4096);
    assert!(small_reads > 0.1, "{small_reads}");
}

#[test]
fn vdbench_eof_runs_and_inline_keys() {
    let reqs = draw(&mut job(&vdb("eof.vdb"), "sd1"), 100);
    assert_eq!(reqs.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), (1..16).map(|k| k * 65536).collect::<Vec<_>>(), "64k..1m, then stop");
    assert!(error(&vdb("two_runs.vdb")).contains("2 run definitions (small, large): pick one with rd = \"...\""));
    let mut large = job(&format!("{}\nrd = \"large\"", vdb("two_runs.vdb")), "sd1");
    assert_eq!(large.plan.pacing, Pacing::Timed { depth: 8 });
    let mut rng = RngStream::new(1, "t");
    assert_eq!(large.workload.next_arrival_ns(1_000, &mut rng), Some(2_001_000), "deterministic 500 IOPS");
    let w = draw(&mut large, 3);
    assert!(w.iter().all(|r| r.op == Op::Write && r.size_bytes == 65536));
    assert_eq!(w[1].offset_bytes - w[0].offset_bytes, 65536);
    // The same keys inline, without a file.
    let mut inline = job("kind = \"vdbench\"\nxfersize = \"8k\"\nrhpct = 75\nhitarea = \"8m\"\nthreads = 16\nelapsed = 60", "sd1");
    assert_eq!(inline.plan.pacing, Pacing::Closed { depth: 16 });
    assert!((share(&draw(&mut inline, 20_000), |r| r.offset_bytes < 8 * MIB) - 0.75).abs() < 0.015);
    assert_eq!(error("kind = \"vdbench\"\nfile = \"vdbench/rhpct.vdb\"\nrhpct = 50"), "vm[0].job[0].rhpct: `rhpct` belongs in the parameter file when `file` is given");
    assert_eq!(error("kind = \"vdbench\"\nxfersize = \"(4k,50,8k,40)\""), "vm[0].job[0].xfersize: xfersize distribution adds up to 90%, expected 100 (vdbench)");
}

#[test]
fn vdbench_malformed_files_name_file_and_line() {
    let e = |f: &str| error(&vdb(&format!("bad/{f}")));
    assert!(e("unknown_keyword.vdb").starts_with("vm[0].job[0].file: DATA/vdbench/bad/unknown_keyword.vdb:1: sd=sd1: unknown keyword `sizee`"), "{}", e("unknown_keyword.vdb"));
    // priority= as vdbench checks it (WD_entry, FifoList.countPriorities): whole numbers from 1,
    // one per workload of the run, without a gap, workloads with their own iorate first.
    assert!(e("priority_zero.vdb").ends_with("priority_zero.vdb:2: wd=wd1: priority=0: expected a whole number from 1 (served first) up, e.g. priority=1 (vdbench: a workload priority may not be zero)"), "{}", e("priority_zero.vdb"));
    assert!(e("priority_word.vdb").ends_with("priority_word.vdb:2: wd=wd1: priority=`high` is not a vdbench number (k, m, g, t are powers of 1024, e.g. 4k, 1m)"), "{}", e("priority_word.vdb"));
    assert!(e("priority_gap.vdb").ends_with("priority_gap.vdb:4: rd=rd1: the priorities of its workloads (wd=wd1: 1, wd=wd2: 3) must run 1, 2, … 2 without a gap (vdbench)"), "{}", e("priority_gap.vdb"));
    assert!(e("priority_missing.vdb").ends_with("priority_missing.vdb:4: rd=rd1: wd=wd2 has no priority=: once a workload of the run has one, every workload needs its own (vdbench)"), "{}", e("priority_missing.vdb"));
    assert!(e("priority_same.vdb").ends_with("priority_same.vdb:4: rd=rd1: wd=wd1 and wd=wd2 have the same priority=2: each workload needs its own (vdbench)"), "{}", e("priority_same.vdb"));
    assert!(e("priority_iorate_below.vdb").ends_with("priority_iorate_below.vdb:4: rd=rd1: wd=wd2 has iorate= and priority=2, below wd=wd1 without iorate= at priority=1: workloads with their own iorate need the higher priorities, i.e. the lower numbers (vdbench)"), "{}", e("priority_iorate_below.vdb"));
    assert!(e("iorate_no_priority.vdb").ends_with("iorate_no_priority.vdb:2: wd=wd1: iorate= needs priority= too (vdbench): a workload with its own rate is served by priority, 1 first"), "{}", e("iorate_no_priority.vdb"));
    assert!(e("iorate_skew.vdb").ends_with("iorate_skew.vdb:2: wd=wd1: iorate= and skew= are mutually exclusive (vdbench): a workload gets its own rate or a share of the run's"), "{}", e("iorate_skew.vdb"));
    assert!(e("range_span.vdb").ends_with("range_span.vdb:2: wd=wd1: on sd=sd1: range=(10,120) may not span 100 % or more (vdbench): e.g. range=(10,109)"), "{}", e("range_span.vdb"));
    assert!(e("streams_threads.vdb").ends_with("streams_threads.vdb:2: wd=wd1 on sd=sd1: threads=6 must be a multiple of streams=4, each stream getting the same threads (vdbench): e.g. threads=4 or threads=8"), "{}", e("streams_threads.vdb"));
    assert!(e("streams_two_wds.vdb").ends_with("streams_two_wds.vdb:2: wd=wd1: streams= needs a run of one workload (vdbench), and rd=rd1 runs 2"), "{}", e("streams_two_wds.vdb"));
    assert!(e("bad_xfersize.vdb").ends_with("bad_xfersize.vdb:2: wd=wd1: xfersize distribution adds up to 90%, expected 100 (vdbench)"));
    assert!(e("missing_include.vdb").contains("missing_include.vdb:1: include=nothere.vdb: cannot read"));
    assert!(e("small_sd.vdb").contains("small_sd.vdb:3: wd=wd1: on sd=sd1: after the hit area (1048576 bytes)"), "{}", e("small_sd.vdb"));
    assert!(e("range_without_step.vdb").ends_with("range_without_step.vdb:3: rd=rd1: `1-64`: a range is followed by a step or `d` (double), e.g. (1-64,d)"), "{}", e("range_without_step.vdb"));
    assert!(e("name_range.vdb").ends_with("name_range.vdb:2: wd=wd1: `sd1-disk4`: a name range keeps its letters and counts up, e.g. (sd1-sd2)"), "{}", e("name_range.vdb"));
    assert!(e("fsd.vdb").ends_with("fsd.vdb:1: `fsd=` is a vdbench keyword sanlab cannot model: file system workloads (fsd/fwd) are not modelled: use sd/wd"), "{}", e("fsd.vdb"));
    assert!(e("replay.vdb").ends_with("replay.vdb:1: `rg=` is a vdbench keyword sanlab cannot model: replay groups are not modelled: replay a trace with kind = \"trace\""), "{}", e("replay.vdb"));
    assert!(e("fordepth.vdb").ends_with("fordepth.vdb:3: rd=rd1: `fordepth=` is a vdbench keyword sanlab cannot model: file system workloads (fsd/fwd and their for loops) are not modelled: use sd/wd"), "{}", e("fordepth.vdb"));
    assert!(e("bad_for_xfersize.vdb").ends_with("bad_for_xfersize.vdb:3: rd=rd1: forxfersize=`1000`: expected a positive multiple of 512 bytes"), "{}", e("bad_for_xfersize.vdb"));
    assert!(e("wd_threads.vdb").ends_with("wd_threads.vdb:2: wd=wd1: threads= on a WD needs concatenatesds=yes (vdbench); without it, set threads= on the SD"), "{}", e("wd_threads.vdb"));
    assert!(e("concat_no_threads.vdb").ends_with("concat_no_threads.vdb:3: wd=wd1: with concatenatesds=yes each WD needs threads= (or the rd's threads= or forthreads=)"), "{}", e("concat_no_threads.vdb"));
    assert!(e("too_many_runs.vdb").ends_with("too_many_runs.vdb:3: rd=rd1: its loops make more than 4096 runs, each simulated on its own: loop over fewer values"), "{}", e("too_many_runs.vdb"));
    assert!(e("unknown_wd.vdb").ends_with("unknown_wd.vdb:3: rd=rd1: wd=wd9 matches no workload definition (defined: wd1); did you mean `wd1`?"), "{}", e("unknown_wd.vdb"));
}

/// The runs of a parameter file, by name.
fn vdb_runs(file: &str) -> Vec<String> {
    sanlab_workload::vdbench_runs(&data().join("vdbench").join(file)).unwrap().into_iter().map(|r| r.name).collect()
}

fn vdb_run(file: &str, run: &str) -> String {
    format!("{}\nrd = \"{run}\"", vdb(file))
}

#[test]
fn vdbench_for_loops_nest_as_vdbench_nests_them() {
    let names = vdb_runs("for_loops.vdb");
    assert_eq!(names.len(), 12, "3 xfersizes x 2 thread counts x 2 read percents");
    assert_eq!(&names[..3], ["sweep xfersize=4k threads=2 rdpct=100", "sweep xfersize=4k threads=2 rdpct=50", "sweep xfersize=4k threads=8 rdpct=100"]);
    assert_eq!(names[11], "sweep xfersize=16k threads=8 rdpct=50");
    // Each run's I/O pattern: its transfer size, thread count and read share.
    for (xfer, threads, rdpct) in [(4096u32, 2u32, 100u32), (8192, 8, 50), (16384, 2, 50)] {
        let run = format!("sweep xfersize={}k threads={threads} rdpct={rdpct}", xfer / 1024);
        let mut sd = job(&vdb_run("for_loops.vdb", &run), "sd1");
        assert_eq!(sd.plan.pacing, Pacing::Closed { depth: threads }, "{run}");
        let reqs = draw(&mut sd, 20_000);
        assert!(reqs.iter().all(|r| r.size_bytes == xfer && r.offset_bytes % u64::from(xfer) == 0), "{run}");
        assert!((share(&reqs, |r| r.op == Op::Read) - f64::from(rdpct) / 100.0).abs() < 0.015, "{run}");
        assert!(sd.plan.options.contains(&("run".to_string(), run.clone())));
    }
    assert!(error(&vdb("for_loops.vdb")).contains("12 runs (sweep xfersize=4k threads=2 rdpct=100, "), "{}", error(&vdb("for_loops.vdb")));
    let e = error(&vdb_run("for_loops.vdb", "sweep"));
    assert!(e.starts_with("vm[0].job[0].rd: DATA/vdbench/for_loops.vdb:4: rd=sweep makes 12 runs"), "{e}");
    assert!(error(&vdb_run("for_loops.vdb", "sweep xfersize=4k")).contains("no run `sweep xfersize=4k`"));
}

#[test]
fn vdbench_rd_with_sds_and_workload_keys() {
    assert_eq!(vdb_runs("rd_keys.vdb"), ["direct threads=4 rdpct=70 seekpct=0"]);
    let all = jobs(&vdb("rd_keys.vdb"));
    assert_eq!(all.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["sd1", "sd2"], "sd=sd* in the rd");
    for (_, mut sd) in all {
        assert_eq!(sd.plan.pacing, Pacing::Closed { depth: 4 });
        let reqs = draw(&mut sd, 10_000);
        // wd=default's 8k, the rd's 70 % reads and seekpct=0 (sequential from the first block).
        assert!(reqs.iter().all(|r| r.size_bytes == 8192));
        assert!((share(&reqs, |r| r.op == Op::Read) - 0.70).abs() < 0.015);
        assert!(reqs.windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 8192));
    }
}

#[test]
fn vdbench_several_rds_run_in_order_with_ranges_and_wildcards() {
    assert_eq!(vdb_runs("runs_in_order.vdb"), ["first", "second iorate=400", "second iorate=800"]);
    let first = jobs(&vdb_run("runs_in_order.vdb", "first"));
    assert_eq!(first.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["sd1", "sd2"], "wd=rand,sd=(sd1-sd2)");
    // rd=second: both WDs (wd=*), moved to sd3 and sd4 by the rd's sd=; 800 IOPS over two WDs on two SDs.
    let second = jobs(&vdb_run("runs_in_order.vdb", "second iorate=800"));
    assert_eq!(second.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["sd3", "sd4"]);
    let (_, mut sd3) = second.into_iter().next().unwrap();
    let mut rng = RngStream::new(5, "arrivals");
    let (mut t, n) = (0, 20_000);
    for _ in 0..n {
        t = sd3.workload.next_arrival_ns(t, &mut rng).unwrap();
    }
    assert!((t as f64 / n as f64 - 2.5e6).abs() < 5e4, "400 IOPS on sd3: mean gap {} ns", t / n);
    let reqs = draw(&mut sd3, 10_000);
    assert!((share(&reqs, |r| r.size_bytes == 65536) - 0.5).abs() < 0.02, "rand and seq share sd3 evenly");
}

#[test]
fn vdbench_curve_points_take_percents_of_the_max_run() {
    assert_eq!(vdb_runs("curve.vdb"), ["c", "c_(50%)", "c_(90%)"]);
    let runs = sanlab_workload::vdbench_runs(&data().join("vdbench/curve.vdb")).unwrap();
    assert_eq!(runs[1].curve_max_run.as_deref(), Some("c"));
    assert_eq!(job(&vdb_run("curve.vdb", "c"), "sd1").plan.pacing, Pacing::Closed { depth: 8 });
    // 50 % of 12,345.6 IOPS: 6,172, rounded up to a multiple of 100 above 1000 (RD_entry.set_iorate).
    let half = job(&format!("{}\ncurve_max_iops = 12345.6", vdb_run("curve.vdb", "c_(50%)")), "sd1");
    assert_eq!(half.plan.pacing, Pacing::Timed { depth: 8 });
    assert!(half.plan.options.contains(&("iorate".to_string(), "6200".to_string())));
    let stops = sanlab_workload::vdbench_runs(&data().join("vdbench/stopcurve.vdb")).unwrap();
    assert_eq!(stops.iter().map(|r| r.stopcurve_ms).collect::<Vec<_>>(), [None, Some(0.001), Some(0.001), Some(0.001)], "points only");
    let low = job(&format!("{}\ncurve_max_iops = 101", vdb_run("curve.vdb", "c_(90%)")), "sd1");
    assert!(low.plan.options.contains(&("iorate".to_string(), "90".to_string())), "90 % of 101: 90, a multiple of 10");
}

#[test]
fn vdbench_forhitarea_keeps_its_hit_area() {
    assert_eq!(vdb_runs("forhitarea.vdb"), ["rd1 hitarea=8m", "rd1 hitarea=64m"]);
    for (run, area) in [("rd1 hitarea=8m", 8 * MIB), ("rd1 hitarea=64m", 64 * MIB)] {
        let reqs = draw(&mut job(&vdb_run("forhitarea.vdb", run), "sd1"), 20_000);
        assert!(reqs.iter().all(|r| r.offset_bytes >= area), "{run}: misses start after the hit area");
    }
}

#[test]
fn vdbench_concatenated_sds() {
    let all = jobs(&vdb("concat.vdb"));
    assert_eq!(all.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["concat#01", "concat#02"], "one concatenated SD per WD");
    let mut it = all.into_iter();
    let (_, mut c1) = it.next().unwrap();
    let (_, c2) = it.next().unwrap();
    assert_eq!((c1.plan.pacing, c2.plan.pacing), (Pacing::Closed { depth: 4 }, Pacing::Closed { depth: 2 }), "the WDs' threads");
    // wd1 reads sd1 then sd2 end to end: sequential past the first 1 GiB, within 4 GiB.
    let reqs = draw(&mut c1, 30_000);
    assert!(reqs.windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 65536));
    assert!(reqs.last().unwrap().offset_bytes > GIB && reqs.last().unwrap().offset_bytes < 4 * GIB);
}

#[test]
fn vdbench_streams_read_their_parts_in_sequence() {
    // 1 GiB in 4 streams of 256 MiB, 2 of the 8 threads each; seekpct=random is overridden.
    let all = jobs(&vdb("streams.vdb"));
    assert_eq!(all.iter().map(|j| j.0.as_str()).collect::<Vec<_>>(), ["sd1.stream0", "sd1.stream1", "sd1.stream2", "sd1.stream3"]);
    for (k, (_, mut w)) in all.into_iter().enumerate() {
        assert_eq!(w.plan.pacing, Pacing::Closed { depth: 2 });
        let (low, high) = (k as u64 * 256 * MIB + 65536, (k as u64 + 1) * 256 * MIB);
        let reqs = draw(&mut w, 5_000);
        assert_eq!(reqs[0].offset_bytes, low, "stream {k} starts past its first block");
        for p in reqs.windows(2) {
            let next = p[0].offset_bytes + 65536;
            assert_eq!(p[1].offset_bytes, if next + 65536 > high { low } else { next }, "stream {k}: in sequence, back to its start at its end");
        }
        assert!(reqs.iter().all(|r| r.op == Op::Read && r.offset_bytes + 65536 <= high));
    }
}

#[test]
fn vdbench_range_past_100_percent_wraps() {
    // range=(75,150) of 1 GiB: random misses from 768 MiB on, those past the end (2 in 3) back
    // at the start.
    let rand = draw(&mut job(&format!("{}\nrd = \"rand\"", vdb("range_wrap.vdb")), "sd1"), 20_000);
    assert!(rand.iter().all(|r| r.offset_bytes > 0 && r.offset_bytes + 4096 <= GIB));
    assert!((share(&rand, |r| r.offset_bytes < GIB / 2) - 2.0 / 3.0).abs() < 0.02);
    assert_eq!(share(&rand, |r| (GIB / 2..768 * MIB).contains(&r.offset_bytes)), 0.0);
    // Sequential: 768 MiB on to the end, then 1 MiB (block 0 skipped) to 511 MiB, then back to
    // the range's start.
    let seq: Vec<u64> = draw(&mut job(&format!("{}\nrd = \"seq\"", vdb("range_wrap.vdb")), "sd1"), 800).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(&seq[..3], [768 * MIB, 769 * MIB, 770 * MIB]);
    assert_eq!(&seq[254..257], [1022 * MIB, 1023 * MIB, MIB], "past the end: wrapped, block 0 skipped");
    assert_eq!(&seq[765..768], [510 * MIB, 511 * MIB, 768 * MIB], "back to the range's start");
}

#[test]
fn vdbench_priority_serves_waiting_arrivals_first() {
    // priority.vdb: `paced` (4k reads, iorate=2000, priority=1) and `rest` (64k writes,
    // iorate=max, priority=2) share sd1's 8 threads.
    let mut sd = job(&vdb("priority.vdb"), "sd1");
    assert_eq!(sd.plan.pacing, Pacing::Shared { depth: 8 }, "arrivals, and the threads they leave kept busy");
    assert!(sd.plan.options.contains(&("priority".to_string(), "paced:1:2000 rest:2:max".to_string())), "{:?}", sd.plan.options);
    let mut rng = RngStream::new(1, "t");
    let is_paced = |r: &Request| r.op == Op::Read && r.size_bytes == 4096;
    // No arrival yet: every free thread goes to `rest`.
    assert!(draw(&mut sd, 3).iter().all(|r| r.op == Op::Write && r.size_bytes == 65536));
    // Arrivals at 2000 IOPS (exponential gaps): each is served before `rest` while it waits.
    let mut at = sd.workload.next_arrival_ns(0, &mut rng).expect("paced arrivals");
    let mut waiting = 0;
    for _ in 0..2000 {
        at = sd.workload.next_arrival_ns(at, &mut rng).expect("paced arrivals");
        waiting += 1;
    }
    let served: Vec<Request> = (0..2001).map(|_| sd.workload.next(&mut rng).expect("a request")).collect();
    assert!(served[..waiting].iter().all(is_paced) && !is_paced(&served[waiting]), "the {waiting} waiting arrivals first, then `rest`");
    // 2001 arrivals announced in about 1 s.
    assert!((at as f64 / 1e9 - 1.0).abs() < 0.1, "{at} ns for 2000 gaps at 2000 IOPS");
    // Two iorate=max workloads: the first by priority takes every thread.
    let parm = std::env::temp_dir().join(format!("sanlab-priority-{}.vdb", std::process::id()));
    std::fs::write(&parm, "sd=sd1,size=1g\nwd=first,sd=sd1,priority=1\nwd=second,sd=sd1,rdpct=0,priority=2\nrd=rd1,wd=*,iorate=max\n").unwrap();
    let mut strict = job(&format!("kind = \"vdbench\"\nfile = \"{}\"", parm.display()), "sd1");
    assert_eq!(strict.plan.pacing, Pacing::Closed { depth: 8 });
    assert!(draw(&mut strict, 1000).iter().all(|r| r.op == Op::Read), "`second` never gets a thread");
    // With a rate for the run, each workload is paced at its share and none takes the threads.
    std::fs::write(&parm, "sd=sd1,size=1g\nwd=first,sd=sd1,iorate=100,priority=1\nwd=second,sd=sd1,rdpct=0,priority=2\nrd=rd1,wd=*,iorate=300\n").unwrap();
    let paced = job(&format!("kind = \"vdbench\"\nfile = \"{}\"", parm.display()), "sd1");
    assert_eq!(paced.plan.pacing, Pacing::Timed { depth: 8 });
    assert!(paced.plan.options.contains(&("priority".to_string(), "first:1:100 second:2:200".to_string())), "{:?}", paced.plan.options);
    std::fs::remove_file(&parm).unwrap();
}

#[test]
fn vdbench_stride_skips_forward() {
    let reqs = draw(&mut job(&vdb("stride.vdb"), "sd1"), 20_000);
    assert_eq!(reqs[0].offset_bytes, 4096, "the first at the start (block 0 is never touched)");
    let mut wraps = 0;
    for w in reqs.windows(2) {
        let gap = w[1].offset_bytes as i64 - (w[0].offset_bytes + 4096) as i64;
        if gap < 0 {
            wraps += 1;
            assert_eq!(w[1].offset_bytes, 4096, "past the end: back to the start");
        } else {
            assert!((65536..128 * 1024).contains(&gap) && gap % 4096 == 0, "gap {gap}");
        }
    }
    // About 1 GiB / (4k + 96k mean skip) requests per pass.
    assert!((wraps as f64 - 20_000.0 * 100.0 * 1024.0 / (1u64 << 30) as f64).abs() < 3.0, "{wraps} wraps");
}

#[test]
fn vdbench_general_keywords_align_and_maxdata() {
    let mut sd = job(&vdb("general.vdb"), "sd1");
    let ignored = sd.plan.options.iter().find(|o| o.0 == "ignored").map(|o| o.1.clone());
    assert_eq!(ignored.as_deref(), Some("compratio, messagescan, histogram, report, openflags, pause"));
    let reqs = draw(&mut sd, 1_000_000);
    // align=4k: 16k requests at any 4k boundary, not only at 16k ones.
    assert!(reqs.iter().all(|r| r.offset_bytes % 4096 == 0));
    assert!(share(&reqs, |r| r.offset_bytes % 16384 != 0) > 0.7);
    // maxdata=2: twice the 1 GiB SD, then the run stops.
    assert_eq!(reqs.len() as u64, 2 * GIB / 16384);
}

// ---- traces --------------------------------------------------------------------------------

fn trace(file: &str, rest: &str) -> Instance {
    job(&format!("kind = \"trace\"\nfile = \"traces/{file}\"\n{rest}"), "")
}

/// Open replay: each request with its arrival time.
fn replay(j: &mut Instance) -> Vec<(u64, Request)> {
    let mut rng = RngStream::new(1, "t");
    let mut out = vec![];
    while let Some(at) = j.workload.next_arrival_ns(0, &mut rng) {
        out.push((at, j.workload.next(&mut rng).unwrap()));
    }
    out
}

#[test]
fn traces_replay_at_their_timestamps() {
    let mut v2 = trace("v2.iolog", "format = \"fio_iolog\"");
    assert_eq!(v2.plan.pacing, Pacing::Timed { depth: 64 });
    let r = replay(&mut v2);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 0, 1_000_000, 3_000_000], "v2: waits add up");
    assert_eq!(r[2].1, Request { op: Op::Write, size_bytes: 8192, offset_bytes: MIB });
    assert!(v2.plan.options.contains(&("skipped".to_string(), "1 sync".to_string())));
    let mut v3 = trace("v3.iolog", "format = \"fio_iolog\"\ntime_scale = 0.5");
    assert_eq!(replay(&mut v3).iter().map(|x| x.0).collect::<Vec<_>>(), [0, 500_000, 750_000, 2_500_000], "v3: relative to the first, at twice the speed");
    let mut msr = trace("msr.csv", "format = \"msr_csv\"");
    let plain = replay(&mut msr);
    assert_eq!(plain.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 10_000_000, 15_000_000, 40_000_000]);
    assert_eq!(plain[0].1, Request { op: Op::Read, size_bytes: 24576, offset_bytes: 7_014_609_920 });
    assert_eq!(replay(&mut trace("msr.csv.gz", "format = \"msr_csv\"")), plain, "gzipped reads the same");
    let blk = replay(&mut trace("blkparse.txt", "format = \"blkparse\""));
    assert_eq!(blk.iter().map(|x| (x.0, x.1.op, x.1.size_bytes, x.1.offset_bytes)).collect::<Vec<_>>(), [(0, Op::Read, 4096, 2048 * 512), (250_000, Op::Write, 8192, 4096 * 512), (1_000_000, Op::Read, 65536, 10240 * 512)]);
    let issued = replay(&mut trace("blkparse.txt", "format = \"blkparse\"\naction = \"D\""));
    assert_eq!(issued.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 258_000, 1_118_000]);
}

#[test]
fn closed_replay_and_bad_traces() {
    let mut closed = trace("v3.iolog", "format = \"fio_iolog\"\nmode = \"closed\"\ndepth = 4");
    assert_eq!(closed.plan.pacing, Pacing::Closed { depth: 4 });
    assert_eq!(draw(&mut closed, 100).len(), 4, "the trace's end ends the job");
    let e = |f: &str, format: &str| error(&format!("kind = \"trace\"\nfile = \"traces/bad/{f}\"\nformat = \"{format}\""));
    assert!(e("v1.iolog", "fio_iolog").starts_with("vm[0].job[0].file: DATA/traces/bad/v1.iolog:1: expected the header `fio version 2 iolog` or `fio version 3 iolog`"));
    assert!(e("short_row.csv", "msr_csv").ends_with("short_row.csv:2: expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 6"));
    assert!(e("no_sector.txt", "blkparse").ends_with("no_sector.txt:2: expected `sector + nsectors` after RWBS `W`"));
    assert!(error("kind = \"trace\"\nfile = \"traces/v2.iolog\"\nformat = \"fio_iolog\"\naction = \"D\"").contains("applies to format = \"blkparse\" or \"blktrace\" only"));
    assert!(error("kind = \"trace\"\nfile = \"traces/nothere.csv\"\nformat = \"msr_csv\"").contains("cannot read trace DATA/traces/nothere.csv"));
}

/// (arrival ns, op, size, offset) of each request of an open replay.
fn replayed(file: &str, rest: &str) -> Vec<(u64, Op, u32, u64)> {
    replay(&mut trace(file, rest)).into_iter().map(|(t, r)| (t, r.op, r.size_bytes, r.offset_bytes)).collect()
}

#[test]
fn trace_formats_spc_alibaba_tencent_biosnoop_and_auto() {
    // SPC: LBA in sectors, size in bytes, seconds; ASU 1 selected away with disk = "0".
    let spc = replayed("spc.csv", "format = \"spc\"\ndisk = \"0\"");
    assert_eq!(spc, [(0, Op::Write, 3584, 303_567 * 512), (1_000_000, Op::Write, 3584, 303_574 * 512), (2_500_000, Op::Read, 512, 303_581 * 512)]);
    assert!(trace("spc.csv", "format = \"spc\"\ndisk = \"0\"").plan.options.contains(&("skipped".to_string(), "1 other ASUs".to_string())));
    // Alibaba: bytes and microseconds, device 5.
    let ali = replayed("alibaba.csv", "disk = \"5\"\ndevice_size = \"200GiB\"");
    assert_eq!(ali, [(0, Op::Read, 4096, 126_703_644_672), (1_000_000, Op::Write, 16384, 126_703_648_768), (3_000_000, Op::Read, 4096, 0)]);
    // Tencent: sectors and whole seconds, volume 1063.
    let ten = replayed("tencent.csv", "disk = \"1063\"");
    assert_eq!(ten, [(0, Op::Read, 4096, 2048 * 512), (1_000_000_000, Op::Write, 4096, 2056 * 512), (3_000_000_000, Op::Read, 16384, 8192 * 512)]);
    // biosnoop: columns from the header, DISK sda.
    let bio = replayed("biosnoop.txt", "disk = \"sda\"");
    assert_eq!(bio, [(0, Op::Write, 4096, 1_048_576 * 512), (812_000, Op::Read, 8192, 2_097_152 * 512), (4_000_000, Op::Read, 8192, 2_097_168 * 512)]);
    // auto: each recognised from its first line, and said so.
    for (file, format, disk) in [("spc.csv", "spc", "0"), ("alibaba.csv", "alibaba", "5\"\ndevice_size = \"200GiB"), ("tencent.csv", "tencent", "1063"), ("biosnoop.txt", "biosnoop", "sda"), ("v3.iolog", "fio_iolog", ""), ("blkparse.txt", "blkparse", ""), ("msr.csv", "msr_csv", "")] {
        let rest = if disk.is_empty() { String::new() } else { format!("disk = \"{disk}\"") };
        assert!(trace(file, &rest).plan.options.contains(&("format".to_string(), format.to_string())), "{file}");
    }
    let e = error("kind = \"trace\"\nfile = \"traces/bad/unknown_format.txt\"");
    assert_eq!(e, "vm[0].job[0].format: DATA/traces/bad/unknown_format.txt:1: `hello world` is none of the trace formats sanlab reads (tried blktrace, fio_iolog, biosnoop, blkparse, msr_csv, alibaba, tencent, spc): give format = \"...\"");
    // Several disks in one file: one must be picked.
    let e = error("kind = \"trace\"\nfile = \"traces/alibaba.csv\"\ndevice_size = \"200GiB\"");
    assert!(e.ends_with("alibaba.csv: records of several disks (5, 7, ...): replaying them onto one volume mixes their offsets; select one with disk"), "{e}");
}

#[test]
fn msr_hosts_and_disks_blkparse_actions() {
    let e = error("kind = \"trace\"\nfile = \"traces/msr_hosts.csv\"");
    assert!(e.contains("records of several disks (web/0, src1/0, ...)") && e.ends_with("select one with host and disk (e.g. host = \"web\", disk = \"0\")"), "{e}");
    let web0 = replayed("msr_hosts.csv", "host = \"web\"\ndisk = \"0\"");
    assert_eq!(web0.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 40_000_000, 50_000_000]);
    assert!(trace("msr_hosts.csv", "host = \"web\"\ndisk = \"0\"").plan.options.contains(&("skipped".to_string(), "1 other hosts, 1 other disks".to_string())));
    // Every action letter can be replayed; records without data are skipped and counted.
    let q = trace("blkparse_actions.txt", "disk = \"8,16\"");
    assert!(q.plan.options.contains(&("skipped".to_string(), "1 flush, 1 other devices".to_string())), "{:?}", q.plan.options);
    assert_eq!(replayed("blkparse_actions.txt", "disk = \"8,16\"\naction = \"M\""), [(0, Op::Write, 4096, 4112 * 512)]);
    assert_eq!(replayed("blkparse_actions.txt", "disk = \"8,16\"\naction = \"C\"").iter().map(|r| r.0).collect::<Vec<_>>(), [0, 100_000]);
    assert!(error("kind = \"trace\"\nfile = \"traces/blkparse_actions.txt\"\ndisk = \"8,16\"\naction = \"P\"").ends_with("no read or write records to replay"), "plugs carry no data");
}

#[test]
fn binary_blktrace_cpu_files_merge_by_time() {
    // Naming one CPU's file reads both, merged by time; the notify and the flush are not I/O.
    let q = trace("blktrace/sdb.blktrace.1", "");
    assert!(q.plan.options.contains(&("format".to_string(), "blktrace".to_string())));
    assert!(q.plan.options.contains(&("skipped".to_string(), "1 flush".to_string())), "{:?}", q.plan.options);
    let queued = replayed("blktrace/sdb.blktrace.0", "format = \"blktrace\"");
    assert_eq!(queued, [(0, Op::Read, 4096, 2048 * 512), (199_000, Op::Read, 65536, 8192 * 512), (299_000, Op::Write, 8192, 4096 * 512)]);
    assert_eq!(replayed("blktrace/sdb.blktrace.0", "action = \"D\""), [(0, Op::Write, 8192, 4096 * 512)]);
    let mut issued = trace("blktrace/sdb.blktrace.0", "action = \"C\"\nmode = \"closed\"");
    assert_eq!(draw(&mut issued, 10), [Request { op: Op::Read, size_bytes: 4096, offset_bytes: 2048 * 512 }]);
    assert!(error("kind = \"trace\"\nfile = \"traces/blktrace/sdb.blktrace.0\"\ndisk = \"8,32\"").ends_with("no read or write records to replay"));
    let e = error("kind = \"trace\"\nfile = \"traces/bad/bad_magic.blktrace.0\"");
    assert!(e.ends_with("bad_magic.blktrace.0:2: record 2 (of the CPU files merged by time): not a blktrace record: magic 0x12345678, expected 0x65617400 (is this blkparse text? use format = \"blkparse\")"), "{e}");
}

#[test]
fn trace_volume_bounds_timing_and_replay_controls() {
    let e = error("kind = \"trace\"\nfile = \"traces/bad/beyond_volume.csv\"\ndevice_size = \"100GiB\"");
    assert!(e.ends_with("beyond_volume.csv:2: offset 107374182400 + 4096 bytes ends beyond the volume's 107374182400 bytes (device_size): set device_size to the traced disk's size or leave it unset (the volume then covers the trace), or offset_wrap = true"), "{e}");
    let wrapped = replayed("bad/beyond_volume.csv", "offset_wrap = true");
    assert_eq!(wrapped[1].3, 0, "100 GiB wraps to 0");
    assert!(error("kind = \"trace\"\nfile = \"traces/msr.csv\"\ndevice_size = \"1GiB\"").contains("msr.csv:1: offset 7014609920 + 24576 bytes ends beyond"));
    let e = error("kind = \"trace\"\nfile = \"traces/bad/no_timing.iolog\"");
    assert!(e.ends_with("no_timing.iolog: its 2 records all have the same time (no timing), so open replay would issue them at once: replay with mode = \"closed\" (depth outstanding) or give rate_iops"), "{e}");
    assert_eq!(replayed("bad/no_timing.iolog", "rate_iops = 1000").iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1_000_000]);
    // iops_scale = 4 is time_scale = 0.25; a window; reads only.
    let msr = |rest: &str| replayed("msr.csv", rest).iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(msr("iops_scale = 4.0"), [0, 2_500_000, 3_750_000, 10_000_000]);
    assert_eq!(msr("from = \"10ms\"\nto = \"40ms\""), [0, 5_000_000], "records at 10 and 15 ms, from the window's first");
    assert_eq!(replayed("msr.csv", "ops = \"reads\"").iter().map(|r| r.1).collect::<Vec<_>>(), [Op::Read, Op::Read]);
    assert!(error("kind = \"trace\"\nfile = \"traces/msr.csv\"\ntime_scale = 0.5\niops_scale = 2.0").contains("both compress time"));
    assert!(error("kind = \"trace\"\nfile = \"traces/msr.csv\"\ndevice_size = \"0\"").ends_with("device_size: must hold at least one 512-byte sector"));
}

// ---- numbers out of range ------------------------------------------------------------------

#[test]
fn overflowing_non_finite_and_zero_values_in_files_are_errors() {
    let e = |f: &str, format: &str| error(&format!("kind = \"trace\"\nfile = \"traces/bad/{f}\"\nformat = \"{format}\""));
    assert!(e("huge_timestamp.iolog", "fio_iolog").ends_with("huge_timestamp.iolog:3: timestamp `18446744073709552` is out of range"), "{}", e("huge_timestamp.iolog", "fio_iolog"));
    assert!(e("far_apart.csv", "msr_csv").ends_with("far_apart.csv:2: this record replays more than 365 days after the first one, the longest duration sanlab simulates"));
    assert!(e("huge_sector.txt", "blkparse").ends_with("huge_sector.txt:1: sector `36028797018963968` is out of range"));
    assert!(error(&fio("bad/long_section.fio")).ends_with("long_section.fio:4: section name `jjjjjjjjjjjjjjjjjjjj…` is 300 characters long: at most 120, as it becomes a file name"), "{}", error(&fio("bad/long_section.fio")));
    let v = |f: &str| error(&vdb(&format!("bad/{f}")));
    assert!(v("non_ascii_wildcard.vdb").ends_with("non_ascii_wildcard.vdb:3: rd=rd1: wd=*a matches no workload definition (defined: wdé)"), "{}", v("non_ascii_wildcard.vdb"));
    assert!(v("half_byte_xfersize.vdb").ends_with("half_byte_xfersize.vdb:2: wd=wd1: xfersize 0.5 bytes: a transfer size is a positive multiple of 512 bytes"));
    let inline = |key: &str, value: &str| error(&format!("kind = \"vdbench\"\n{key} = \"{value}\""));
    for (key, value, expected) in [
        ("elapsed", "nan", "vm[0].job[0].elapsed: elapsed=`nan` is not a finite number"),
        ("interval", "inf", "vm[0].job[0].interval: interval=`inf` is not a finite number"),
        ("hitarea", "nan", "vm[0].job[0].hitarea: hitarea=`nan` is not a finite number"),
        ("hitarea", "1e300", "vm[0].job[0].hitarea: hitarea=`1e300` is beyond the largest size sanlab accepts, 1 EiB"),
        ("warmup", "inf", "vm[0].job[0].warmup: warmup=`inf` is not a finite number"),
        ("warmup", "-1", "vm[0].job[0].warmup: warmup=-1 must be 0 or positive"),
        ("elapsed", "1e12", "vm[0].job[0].elapsed: elapsed=`1e12` is beyond the largest duration sanlab accepts, 365 days"),
        ("iorate", "1e-300", "vm[0].job[0].iorate: rate `1e-300` is out of range: expected 0 or 3.171e-8..=1e9 IOPS (a lower rate spaces arrivals more than 365 days apart)"),
        ("range", "(-10,50)", "vm[0].job[0].range: range=`(-10,50)`: the beginning must not be negative"),
        ("xfersize", "1e400k", "vm[0].job[0].xfersize: xfersize=`1e400k` is not a vdbench number (k, m, g, t are powers of 1024, e.g. 4k, 1m)"),
    ] {
        assert_eq!(inline(key, value), expected);
    }
}

#[test]
fn input_files_are_regular_files_of_bounded_size() {
    let dir = std::env::temp_dir().join(format!("sanlab-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let huge = dir.join("huge.fio");
    std::fs::File::create(&huge).unwrap().set_len(17 << 20).unwrap();
    let include = dir.join("include_zero.fio");
    std::fs::write(&include, "[job]\ninclude /dev/zero\n").unwrap();
    let long = dir.join("long.csv");
    std::fs::write(&long, "1".repeat(70_000)).unwrap();
    let cases = [
        (format!("kind = \"trace\"\nfile = \"{}\"\nformat = \"msr_csv\"", long.display()), format!("{}:1: line longer than 65536 bytes: is this a trace?", long.display())),
        ("kind = \"trace\"\nfile = \"/dev/zero\"\nformat = \"msr_csv\"".to_string(), "cannot read trace /dev/zero: not a regular file (a device, a FIFO or a folder): expected a file".to_string()),
        (format!("kind = \"fio_file\"\nfile = \"{}\"", fifo.display()), format!("cannot read fio job file {}: not a regular file", fifo.display())),
        ("kind = \"vdbench\"\nfile = \"/dev/urandom\"".to_string(), "cannot read vdbench parameter file /dev/urandom: not a regular file".to_string()),
        (format!("kind = \"fio_file\"\nfile = \"{}\"", include.display()), format!("{}:2: include `/dev/zero`: cannot read /dev/zero: not a regular file", include.display())),
        (format!("kind = \"fio_file\"\nfile = \"{}\"", huge.display()), "17825792 bytes, above the limit of 16777216 bytes for this kind of file".to_string()),
    ];
    for (src, expected) in cases {
        let e = error(&src);
        assert!(e.contains(&expected), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_workload_page_states_the_option_tables_coverage() {
    let page = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/models/fio.md")).unwrap();
    let [model, ignored, unmodelled] = sanlab_workload::fio_option_coverage();
    let line = format!("**modelled: {model}, accepted without effect: {ignored}, cannot be modelled: {unmodelled}**");
    assert!(page.contains(&line), "docs/models/fio.md should say {line}");
}

/// The (op, offset, length) lines of an iolog fio wrote (v3: a timestamp first).
fn fio_issued(name: &str) -> Vec<(Op, u64, u32)> {
    let text = std::fs::read_to_string(data().join(format!("fio/iolog/{name}.iolog"))).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let op = match f.get(2) {
                Some(&"read") => Op::Read,
                Some(&"write") => Op::Write,
                _ => return None,
            };
            Some((op, f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect()
}

/// Like [`fio_issued`], with the file's number (`job.0.N`).
fn fio_issued_files(name: &str) -> Vec<(u64, Op, u64, u32)> {
    let text = std::fs::read_to_string(data().join(format!("fio/iolog/{name}.iolog"))).unwrap();
    let ops = fio_issued(name);
    let files = text.lines().skip(1).filter(|l| l.contains(" read ") || l.contains(" write ")).map(|l| l.split_whitespace().nth(1).unwrap().rsplit('.').next().unwrap().parse::<u64>().unwrap());
    files.zip(ops).map(|(f, (op, offset, len))| (f, op, offset, len)).collect()
}

fn sanlab_issued(name: &str) -> Vec<(Op, u64, u32)> {
    let mut j = job(&fio(&format!("iolog/{name}.fio")), name);
    draw(&mut j, 10_000).iter().map(|r| (r.op, r.offset_bytes, r.size_bytes)).collect()
}

#[test]
fn fio_issues_what_fio_itself_issued() {
    for name in ["read", "holes", "backwards", "verify", "strided", "strided_wide"] {
        assert_eq!(sanlab_issued(name), fio_issued(name), "{name}");
    }
    // Two files of 16k: fio names them; sanlab lays them one after the other.
    let files: Vec<(Op, u64, u32)> = fio_issued_files("files").into_iter().map(|(file, op, offset, len)| (op, file * 16384 + offset, len)).collect();
    assert_eq!(sanlab_issued("files"), files);
    // Random block sizes: another generator, the same kind of sequence: each write where the
    // previous ended, multiples of 4k from 4k to 16k, 64k in all.
    for issued in [fio_issued("bsrange"), sanlab_issued("bsrange")] {
        assert!(issued.windows(2).all(|w| w[1].1 == w[0].1 + u64::from(w[0].2)), "{issued:?}");
        assert!(issued.iter().all(|r| r.0 == Op::Write && r.2 % 4096 == 0 && (4096..=16384).contains(&r.2)));
        assert_eq!(issued.iter().map(|r| u64::from(r.2)).sum::<u64>(), 65536, "{issued:?}");
    }
    // fio's random map: another generator, the same kind of sequence: every 4k block of the
    // 1 MiB read exactly once, 64k reads cut short where they meet a block already read.
    for issued in [fio_issued("randmap"), sanlab_issued("randmap")] {
        let mut reads = vec![0u32; 256];
        for &(op, offset, len) in &issued {
            assert!(op == Op::Read && len % 4096 == 0 && (4096..=65536).contains(&len), "{issued:?}");
            (offset / 4096..(offset + u64::from(len)) / 4096).for_each(|b| reads[b as usize] += 1);
        }
        assert!(reads.iter().all(|&n| n == 1), "{issued:?}");
        assert!(issued.iter().any(|r| r.2 != 4096 && r.2 != 65536), "some reads were cut short: {issued:?}");
    }
}
