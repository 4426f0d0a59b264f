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
fn vdbench_elapsed_stops_the_run() {
    let r = run_job("kind = \"vdbench\"\niorate = 1000\nelapsed = 2\ndistribution = \"deterministic\"", "duration = \"4s\"");
    // Arrivals every 1 ms from 1 ms on; the one at 2 s falls at the stop.
    assert_eq!(r.variants[0].report.vms[0].completed, 1999);
}
