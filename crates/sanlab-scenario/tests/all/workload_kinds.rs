//! Workload kinds end to end: the example scenarios run, and the engine honours what the kinds ask
//! (ioping's wait, fio thinktime, startdelay and ramp_time, a trace's end, vdbench's elapsed).
use crate::common::{assert_conserved, repo, run};
use sanlab_scenario::{run_file, Overrides, RunResult};

fn short(duration: &str) -> Overrides {
    Overrides { duration: Some(duration.to_string()), ..Overrides::default() }
}

/// Runs the one-VM scenario with `job`, its flash array's reads taking 150 us.
fn run_job(job: &str, run: &str) -> RunResult {
    run_job_on(job, run, "read_latency = \"150us\"")
}

/// Runs the one-VM scenario with `job`; `media`: the flash media's keys besides `write_latency`.
fn run_job_on(job: &str, run: &str, media: &str) -> RunResult {
    let text = crate::common::on_one_vm(&format!(
        r#"[run]
{run}
[[array]]
name = "a"
media = {{ kind = "flash", {media}, write_latency = "20us" }}
[[vm]]
name = "vm"
host = "h"
volume = "lun"
adapter = {{ kind = "ideal" }}
[[vm.job]]
{job}
"#
    ));
    let r = run_file(&crate::common::write_scenario(&text), &[], &Overrides::default(), None).unwrap_or_else(|e| panic!("{e}"));
    for v in &r.variants {
        assert_conserved(v);
    }
    r
}

#[test]
fn examples_run() {
    let r = run("scenarios/examples/fio_file.toml", &[], short("3s"));
    let names: Vec<&str> = r.variants[0].report.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["oltp.oltp-read.0", "oltp.oltp-read.1", "oltp.oltp-log"]);
    assert_eq!(r.variants[1].report.jobs.len(), 2, "jobs = [\"oltp-read\"]");
    let r = run("scenarios/examples/vdbench.toml", &[], short("3s"));
    let paced = &r.variants[1].report.vms[0];
    assert!((paced.iops - 5000.0).abs() < 150.0, "rd=paced: {} IOPS", paced.iops);
    let r = run("scenarios/examples/trace.toml", &[], short("5s"));
    for v in &r.variants {
        assert_eq!(v.report.vms[0].completed, 2000, "{}: the whole trace, then nothing", v.name);
    }
    let r = run("scenarios/examples/ioping.toml", &[], short("10s"));
    assert_eq!(r.variants[0].report.vms[0].completed, 5, "count = 5");
    let r = run("scenarios/examples/mixed_kinds.toml", &[], short("3s"));
    let vms: Vec<&str> = r.variants[0].report.vms.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(vms, ["probe", "app", "bench"]);
    assert!((r.variants[0].report.vms[2].iops - 2000.0).abs() < 100.0);
}

#[test]
fn ioping_waits_for_the_interval_or_the_request() {
    // 150 us reads every 100 ms: 10 per second.
    let r = run_job("kind = \"ioping\"\ninterval = \"100ms\"", "duration = \"10s\"");
    assert!((r.variants[0].report.vms[0].completed as i64 - 100).abs() <= 1);
    // 250 ms reads every 100 ms: each waits for the one before, so one every 250 ms.
    let slow = run_job_on("kind = \"ioping\"\ninterval = \"100ms\"", "duration = \"3s\"", "read_latency = \"250ms\"");
    let vm = &slow.variants[0].report.vms[0];
    assert_eq!((vm.completed, vm.in_flight), (12, 0), "issued at 0, 0.25, ..., 2.75 s");
}

#[test]
fn fio_thinktime_startdelay_and_ramp() {
    // iodepth 1 with 10 ms of think time: one request per 10.15 ms.
    let r = run_job("rw = \"randread\"\nthinktime = \"10ms\"", "duration = \"10s\"");
    let iops = r.variants[0].report.vms[0].iops;
    assert!((iops - 1e3 / 10.15).abs() < 1.0, "{iops}");
    // startdelay: nothing in the first 2 s of 4, so half the I/Os, at the same rate over the
    // time the job ran (a VM's rate is over its jobs' time).
    let vm = |job: &str| {
        let r = run_job(job, "duration = \"4s\"");
        (r.variants[0].report.vms[0].completed as f64, r.variants[0].report.vms[0].iops)
    };
    let ((delayed, delayed_iops), (full, full_iops)) = (vm("rw = \"randread\"\nstartdelay = 2"), vm("rw = \"randread\""));
    assert!((delayed / full - 0.5).abs() < 0.01, "{delayed} vs {full} I/Os");
    assert!((delayed_iops / full_iops - 1.0).abs() < 0.01, "{delayed_iops} vs {full_iops} IOPS");
    // ramp_time: the job runs 1 s + runtime 3 s, and its own statistics leave out the first
    // second; the VM's count everything.
    let r = run_job("rw = \"randread\"\nramp_time = 1\nruntime = 3", "duration = \"5s\"");
    let v = &r.variants[0].report;
    let job_ios = v.jobs[0].read.total_ios as f64;
    assert!((job_ios / v.vms[0].completed as f64 - 0.75).abs() < 0.01, "{job_ios} of {}", v.vms[0].completed);
}

#[test]
fn fio_stonewall_runs_jobs_one_group_after_another() {
    // 64 reads of 64k at depth 1 (about 14 ms), then 64 writes; `b` starts only when `a` is done.
    let cmd = |b: &str| format!("kind = \"fio\"\ncmdline = \"fio --ioengine=libaio --bs=64k --size=4m --name=a --rw=read --name=b {b} --rw=write\"");
    let names = |r: &RunResult| r.variants[0].report.jobs.iter().map(|j| (j.read.total_ios, j.write.total_ios)).collect::<Vec<_>>();
    let r = run_job(&cmd("--stonewall"), "duration = \"1s\"");
    assert_eq!(names(&r), [(64, 0), (0, 64)]);
    let (a, b) = (&r.variants[0].report.jobs[0], &r.variants[0].report.jobs[1]);
    assert!(a.read.runtime_ms > 5.0 && b.write.runtime_ms > 0.5, "each measured over its own span: {} {}", a.read.runtime_ms, b.write.runtime_ms);
    // Stopped while `a` still runs: `b` never starts, whereas without stonewall it runs beside `a`.
    let short = run_job(&cmd("--stonewall"), "duration = \"5ms\"");
    let (a_ios, b_ios) = (names(&short)[0].0, names(&short)[1].1);
    assert!(a_ios > 10 && b_ios == 0, "{a_ios} {b_ios}");
    assert_eq!(short.variants[0].report.jobs[1].write.runtime_ms, 0.0);
    let together = run_job(&cmd(""), "duration = \"5ms\"");
    assert!(names(&together)[1].1 > 10);
    // wait_for names the job to wait for.
    let r = run_job(&cmd("--wait_for=a"), "duration = \"5ms\"");
    assert_eq!(names(&r)[1].1, 0);
}

#[test]
fn fio_pacing_is_reported_as_the_engine_runs_it() {
    use sanlab_model::report::JobPacing;
    // A synchronous engine issues one request at a time whatever its iodepth; an async one keeps
    // iodepth outstanding.
    let pacing = |engine: &str| {
        let job = format!("kind = \"fio\"\nrw = \"randread\"\nioengine = \"{engine}\"\niodepth = 32");
        run_job(&job, "duration = \"100ms\"").variants[0].report.jobs[0].pacing
    };
    assert_eq!(pacing("mmap"), JobPacing::Closed { depth: 1 });
    assert_eq!(pacing("libaio"), JobPacing::Closed { depth: 32 });
    // An open loop reports its rate; the document writes the kind as a tag.
    let r = run_job("kind = \"fio\"\nrw = \"randread\"\nioengine = \"libaio\"\niodepth = 4\nrate_iops = 1000", "duration = \"100ms\"");
    let open = &r.variants[0].report.jobs[0].pacing;
    assert_eq!(*open, JobPacing::Open { depth: 4, rate_iops: 1000.0, poisson: false });
    assert_eq!(serde_json::to_string(open).unwrap(), r#"{"kind":"open","depth":4,"rate_iops":1000.0,"poisson":false}"#);
}

/// Per job: its I/Os and its runtime in ms, for a fio command line on one flash server (100 us reads).
fn exit_jobs(args: &str) -> Vec<(u64, f64)> {
    let job = format!("kind = \"fio\"\ncmdline = \"fio --ioengine=libaio --bs=4k --iodepth=1 {args}\"");
    let r = run_job_on(&job, "duration = \"1s\"", "read_latency = \"100us\", servers = 1");
    r.variants[0].report.jobs.iter().map(|j| (j.read.total_ios + j.write.total_ios, j.read.runtime_ms.max(j.write.runtime_ms))).collect()
}

#[test]
fn fio_exitall_ends_the_other_jobs_as_fio_does() {
    // `a` reads 1 MiB (256 reads, some tens of ms); the others run for the whole second.
    let a = "--name=a --rw=read --size=1m";
    let timed = |name: &str, extra: &str| format!("--name={name} --rw=randread --size=1g --time_based --runtime=1 {extra}");
    let base = format!("{a} {} {}", timed("b", ""), timed("c", "--new_group"));
    let free = exit_jobs(&base);
    assert_eq!(free[0].0, 256);
    assert!(free[1].1 > 999.0 && free[2].1 > 999.0, "{free:?}");
    // exitall (the default exit_what=group): `b`, in `a`'s group, ends when `a` ends, having
    // finished its request in flight; `c`, in a new group, runs on.
    let ended = exit_jobs(&format!("--exitall {base}"));
    let a_ms = ended[0].1;
    assert!(a_ms > 10.0 && ended[1].1 >= a_ms && ended[1].1 < a_ms + 1.0, "{ended:?}");
    assert!(ended[2].1 > 999.0, "{ended:?}");
    // exit_what=stonewall: every running job ends, whatever its group.
    let ended = exit_jobs(&format!("--exitall --exit_what=stonewall {base}"));
    assert!(ended[1].1 < a_ms + 1.0 && ended[2].1 < a_ms + 1.0, "{ended:?}");
    // A later stonewall group still runs after a stonewall exit, but not after exit_what=all.
    let later = format!("{base} {}", timed("d", "--stonewall"));
    let ended = exit_jobs(&format!("--exitall --exit_what=stonewall {later}"));
    assert!(ended[3].0 > 1_000, "{ended:?}");
    let ended = exit_jobs(&format!("--exitall --exit_what=all {later}"));
    assert_eq!(ended[3].0, 0, "{ended:?}");
    assert!(ended[2].1 < a_ms + 1.0, "{ended:?}");
}

#[test]
fn fio_exitall_on_error_acts_only_on_a_job_ending_in_error() {
    // A latency target of 50 us that no depth meets ends `a` in error (ETIMEDOUT).
    let a = "--name=a --rw=randread --size=1g --iodepth=8 --time_based --runtime=1 --latency_target=50us";
    let b = "--name=b --rw=randread --size=1g --time_based --runtime=1";
    let free = exit_jobs(&format!("{a} {b}"));
    assert!(free[0].1 < 500.0 && free[1].1 > 999.0, "{free:?}");
    let ended = exit_jobs(&format!("{a} --exitall_on_error {b}"));
    assert!(ended[1].1 >= ended[0].1 && ended[1].1 < ended[0].1 + 1.0, "{ended:?}");
    // A job that ends without error leaves the others running.
    let ok = exit_jobs(&format!("--name=a --rw=read --size=1m --exitall_on_error {b}"));
    assert!(ok[1].1 > 999.0, "{ok:?}");
}

#[test]
fn vdbench_elapsed_stops_the_run() {
    let r = run_job("kind = \"vdbench\"\niorate = 1000\nelapsed = 2\ndistribution = \"deterministic\"", "duration = \"4s\"");
    // Arrivals every 1 ms from 1 ms on; the one at 2 s falls at the stop.
    assert_eq!(r.variants[0].report.vms[0].completed, 1999);
}

/// A fio command line on one flash server whose reads all take 100 us: at depth d a read waits
/// for the d - 1 before it, so latency rises with depth.
fn one_server(args: &str, duration: &str) -> RunResult {
    let job = format!("kind = \"fio\"\ncmdline = \"fio --name=j --ioengine=libaio --rw=randread --bs=4k --size=1g --time_based {args}\"");
    run_job_on(&job, &format!("duration = \"{duration}\""), "read_latency = \"100us\", servers = 1")
}

#[test]
fn fio_latency_target_finds_the_deepest_queue_that_meets_it() {
    let r = one_server("--iodepth=32 --runtime=10 --latency_target=650us --latency_window=100ms", "10s");
    let job = &r.variants[0].report.jobs[0];
    let found = job.fio.as_ref().and_then(|f| f.latency_target.as_ref()).expect("the depth found");
    assert_eq!((found.target_ns, found.window_us, found.percentile), (650_000, 100_000, 100.0));
    assert!(1 < found.depth && found.depth < 32, "{}", found.depth);
    // The search ends the job after a last window at the depth found, measured on its own.
    assert!(job.read.runtime_ms < 2_000.0 && job.read.runtime_ms >= 100.0, "{}", job.read.runtime_ms);
    // That depth meets the target, one more does not.
    let worst = |depth: u32| one_server(&format!("--iodepth={depth} --runtime=1"), "1s").variants[0].report.jobs[0].read.lat_ns.max;
    assert!(worst(found.depth) <= 650_000, "depth {}: {} ns", found.depth, worst(found.depth));
    assert!(worst(found.depth + 1) > 650_000, "depth {}: {} ns", found.depth + 1, worst(found.depth + 1));
    // latency_run keeps the job running at the depth it settles on.
    let r = one_server("--iodepth=32 --runtime=3 --latency_target=650us --latency_window=100ms --latency_run=1", "3s");
    let job = &r.variants[0].report.jobs[0];
    assert_eq!(job.fio.as_ref().unwrap().latency_target.as_ref().unwrap().depth, found.depth);
    assert!(job.read.runtime_ms > 2_999.0);
    // A target not even depth 1 meets: fio ends the job with ETIMEDOUT.
    let r = one_server("--iodepth=8 --runtime=3 --latency_target=50us", "3s");
    let e = r.variants[0].report.jobs[0].fio.as_ref().unwrap().error.clone().unwrap();
    assert_eq!(e.errno, 110, "{}", e.message);
}

#[test]
fn fio_steadystate_ends_a_steady_job_and_reports_an_unsteady_one() {
    // 10,000 IOPS every second: steady as soon as 5 samples are in, at 5 s.
    let r = one_server("--iodepth=1 --runtime=20 --ss=iops_slope:0.1% --ss_dur=5", "20s");
    let job = &r.variants[0].report.jobs[0];
    let ss = job.fio.as_ref().unwrap().steadystate.as_ref().unwrap();
    assert!(ss.attained);
    assert_eq!(job.read.runtime_ms, 5_000.0);
    assert_eq!(ss.iops[1..], [10_000; 4]);
    assert_eq!(ss.ss, "iops_slope:0.100000%");
    // Poisson arrivals at 1,000 IOPS vary by about 3 % per second: a 0.5 % deviation never holds.
    let r = one_server("--iodepth=4 --runtime=10 --rate_iops=1000 --rate_process=poisson --ss=iops:0.5% --ss_dur=5", "10s");
    let job = &r.variants[0].report.jobs[0];
    let ss = job.fio.as_ref().unwrap().steadystate.as_ref().unwrap();
    assert!(!ss.attained && ss.criterion > 0.5, "{}", ss.criterion);
    assert_eq!(job.read.runtime_ms, 10_000.0);
    // ss_ramp=3: the first sample is taken one interval after it (at 4 s), the fifth at 8 s.
    let r = one_server("--iodepth=1 --runtime=20 --ss=iops:1% --ss_dur=5 --ss_ramp=3", "20s");
    assert_eq!(r.variants[0].report.jobs[0].read.runtime_ms, 8_000.0);
}

#[test]
fn fio_rate_min_ends_a_job_below_it() {
    // Depth 1 on a 100 us server: 10,000 IOPS, 40 MiB/s.
    let r = one_server("--iodepth=1 --runtime=5 --rate_iops_min=9000", "5s");
    assert!(r.variants[0].report.jobs[0].fio.is_none());
    assert_eq!(r.variants[0].report.jobs[0].read.runtime_ms, 5_000.0);
    let r = one_server("--iodepth=1 --runtime=5 --rate_iops_min=11000", "5s");
    let job = &r.variants[0].report.jobs[0];
    let e = job.fio.as_ref().unwrap().error.clone().unwrap();
    assert_eq!((e.errno, e.message.as_str()), (5, "rate_iops_min=11000 not met for reads, got 10000 IOPS"));
    // Checked after a 2 s settle, then over each rate_cycle.
    assert!((3_000.0..3_001.0).contains(&job.read.runtime_ms), "{}", job.read.runtime_ms);
    let r = one_server("--iodepth=1 --runtime=5 --rate_min=50m --ratecycle=500", "5s");
    let job = &r.variants[0].report.jobs[0];
    assert!(job.fio.as_ref().unwrap().error.as_ref().unwrap().message.starts_with("rate_min=52428800B/s not met for reads, got 409"));
    assert!((2_500.0..2_501.0).contains(&job.read.runtime_ms), "{}", job.read.runtime_ms);
    let r = one_server("--iodepth=1 --runtime=5 --rate_min=30m", "5s");
    assert!(r.variants[0].report.jobs[0].fio.is_none());
}

#[test]
fn fio_flow_keeps_jobs_in_their_weights_ratio_as_fio_does() {
    // fio-3.33 ran tests/data/fio/flow/flow.fio (weights 2 and 1, null engine): its I/O counts.
    let real: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo("tests/data/fio/flow/flow.json")).unwrap()).unwrap();
    let count = |j: usize| real["jobs"][j]["read"]["total_ios"].as_f64().unwrap();
    let real_ratio = count(0) / count(1);
    assert!((real_ratio - 2.0).abs() < 0.01, "{real_ratio}");
    let file = repo("tests/data/fio/flow/flow.fio");
    let r = run_job(&format!("kind = \"fio_file\"\nfile = \"{}\"", file.display()), "duration = \"2s\"");
    let jobs = &r.variants[0].report.jobs;
    let ratio = jobs[0].read.total_ios as f64 / jobs[1].read.total_ios as f64;
    assert!((ratio / real_ratio - 1.0).abs() < 0.01, "sanlab {ratio} vs fio {real_ratio}");
    // Without flow the two jobs share the array evenly.
    let text = std::fs::read_to_string(&file).unwrap().replace("flow=", "; flow=").replace("flow_id=", "; flow_id=");
    let plain = crate::common::write_scenario(&text);
    let r = run_job(&format!("kind = \"fio_file\"\nfile = \"{}\"", plain.display()), "duration = \"2s\"");
    let jobs = &r.variants[0].report.jobs;
    assert!((jobs[0].read.total_ios as f64 / jobs[1].read.total_ios as f64 - 1.0).abs() < 0.01);
}
