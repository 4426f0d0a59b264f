//! `Scenario::cost`: the pilot's estimate of I/Os and events against the run itself, job time,
//! and the memory model's parts.


use crate::common::{repo, with_sets};
use sanlab_model::topology::memory;
use sanlab_scenario::{run_file, Scenario};

const METRO: &str = "scenarios/studies/metro_cluster_psp.toml";

/// Estimated and measured I/Os and events of one variant of the metro study with `sets`.
fn estimate_and_run(sets: &[&str]) -> ((u64, u64), (u64, u64)) {
    let o = with_sets(sets);
    let variant = ["alua_rr".to_string()];
    let cost = Scenario::load(&repo(METRO)).unwrap().cost(&variant, &o).unwrap();
    let r = run_file(&repo(METRO), &variant, &o, None).unwrap();
    let v = &r.variants[0].report;
    ((cost.ios.unwrap(), cost.events.unwrap()), (v.ios, v.events))
}

fn assert_within(estimate: u64, measured: u64, tolerance: f64, what: &str) {
    let error = estimate as f64 / measured as f64 - 1.0;
    assert!(error.abs() <= tolerance, "{what}: estimated {estimate}, measured {measured} ({:+.1} %)", error * 100.0);
}

#[test]
fn a_steady_closed_loop_is_estimated_within_one_percent() {
    let ((ios, events), (ios_run, events_run)) = estimate_and_run(&["run.duration=20s"]);
    assert_within(ios, ios_run, 0.01, "I/Os");
    assert_within(events, events_run, 0.01, "events");
}

#[test]
fn a_job_counts_for_the_time_it_issues() {
    // Starts at 4 s, stops at 10 s of 20: 6 s of issuing.
    let ((ios, events), (ios_run, events_run)) = estimate_and_run(&["run.duration=20s", "run.warmup=0s", "vm[0].job[0].startdelay=4s", "vm[0].job[0].runtime=10s"]);
    assert_within(ios, ios_run, 0.02, "I/Os");
    assert_within(events, events_run, 0.02, "events");
}

#[test]
fn memory_grows_with_the_time_series_and_the_requests_outstanding() {
    let cost = |sets: &[&str]| Scenario::load(&repo(METRO)).unwrap().cost(&["alua_rr".to_string()], &with_sets(sets)).unwrap();
    let base = cost(&["run.duration=10s"]);
    let fine = cost(&["run.duration=10s", "run.sample_interval=10ms"]);
    let (coarse_v, fine_v) = (&base.variants[0], &fine.variants[0]);
    assert_eq!((coarse_v.samples, fine_v.samples), (10, 1_000));
    let extra_rows = (fine_v.samples - coarse_v.samples) * fine_v.series;
    // The engine's f32 per value and u64 per sample time.
    let extra_engine = extra_rows * 4 + (fine_v.samples - coarse_v.samples) * 8;
    assert_eq!(fine.peak_memory_bytes - base.peak_memory_bytes, extra_rows * memory::RESULT_ROW_BYTES + extra_engine);
    let deep = cost(&["run.duration=10s", "vm[0].job[0].iodepth=65536"]);
    assert_eq!(deep.variants[0].outstanding, 65_536);
    assert_eq!(deep.peak_memory_bytes - base.peak_memory_bytes, (65_536 - 32) * memory::REQUEST_BYTES);
}

#[test]
fn a_bad_scenario_gets_the_same_error_as_validate() {
    let s = Scenario::load(&repo(METRO)).unwrap();
    let o = with_sets(&["run.sample_interval=0s"]);
    let validate = s.validate(&[], &o).err().expect("an error");
    assert_eq!(s.cost(&[], &o).unwrap_err(), validate);
    assert!(validate.0.contains("run.sample_interval: must be positive"), "{validate}");
}
