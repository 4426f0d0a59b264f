//! Workload kinds end to end: the example scenarios run, and the engine honours what the kinds ask
//! (ioping's wait, fio thinktime, startdelay and ramp_time, a trace's end, vdbench's elapsed).
mod common;
use common::{assert_conserved, run};
use sanlab_scenario::{run_file, Overrides, RunResult};

fn short(duration: &str) -> Overrides {
    Overrides { duration: Some(duration.to_string()), ..Overrides::default() }
}

/// Runs a scenario given as text: one flash array (150 us reads unless `read_latency` says), one
/// host, one VM with `job`.
fn run_job(job: &str, run: &str) -> RunResult {
    run_job_on(job, run, "150us")
}

fn run_job_on(job: &str, run: &str, read_latency: &str) -> RunResult {
    let text = format!(
        r#"schema_version = 1
name = "t"
[run]
{run}
[[array]]
name = "a"
media = {{ kind = "flash", read_latency = "{read_latency}", write_latency = "20us" }}
[[volume]]
name = "lun"
arrays = ["a"]
[[host]]
name = "h"
adapter = {{ kind = "ideal" }}
[[path]]
host = "h"
array = "a"
[[vm]]
name = "vm"
host = "h"
volume = "lun"
adapter = {{ kind = "ideal" }}
[[vm.job]]
{job}
"#
    );
    let r = run_file(&common::write_scenario(&text), &[], &Overrides::default(), None).unwrap_or_else(|e| panic!("{e}"));
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
    let slow = run_job_on("kind = \"ioping\"\ninterval = \"100ms\"", "duration = \"3s\"", "250ms");
    let vm = &slow.variants[0].report.vms[0];
    assert_eq!((vm.completed, vm.in_flight), (12, 0), "issued at 0, 0.25, ..., 2.75 s");
}

#[test]
fn fio_thinktime_startdelay_and_ramp() {
    // iodepth 1 with 10 ms of think time: one request per 10.15 ms.
    let r = run_job("rw = \"randread\"\nthinktime = \"10ms\"", "duration = \"10s\"");
    let iops = r.variants[0].report.vms[0].iops;
    assert!((iops - 1e3 / 10.15).abs() < 1.0, "{iops}");
    // startdelay: nothing in the first 2 s of 4.
    let r = run_job("rw = \"randread\"\nstartdelay = 2", "duration = \"4s\"");
    let delayed = r.variants[0].report.vms[0].iops;
    let r = run_job("rw = \"randread\"", "duration = \"4s\"");
    let full = r.variants[0].report.vms[0].iops;
    assert!((delayed / full - 0.5).abs() < 0.01, "{delayed} vs {full}");
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
fn vdbench_elapsed_stops_the_run() {
    let r = run_job("kind = \"vdbench\"\niorate = 1000\nelapsed = 2\ndistribution = \"deterministic\"", "duration = \"4s\"");
    // Arrivals every 1 ms from 1 ms on; the one at 2 s falls at the stop.
    assert_eq!(r.variants[0].report.vms[0].completed, 1999);
}
