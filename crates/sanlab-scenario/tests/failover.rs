//! Faults on paths: a path going down with notice or silently, coming back, a degrading link; the
//! host's reaction (dead path skipped, command retried, FIXED fails back, MRU does not).
mod common;
use common::run_text as run;
use sanlab_scenario::VariantResult;

/// One host, two paths to one array; faults on `p0` from 1 s to 2 s.
const TWO_PATHS: &str = r#"
schema_version = 1
name = "failover"
[run]
duration = "3s"
sample_interval = "100ms"
[[array]]
name = "a"
[[volume]]
name = "lun"
arrays = ["a"]
[[host]]
name = "h"
multipath = { psp = { kind = "rr", iops = 1 } }
failover = { command_timeout = "200ms", path_check = "100ms" }
[[path]]
name = "p0"
host = "h"
array = "a"
link = { latency = "50us" }
[[path]]
name = "p1"
host = "h"
array = "a"
link = { latency = "50us" }
[[vm]]
name = "vm"
host = "h"
volume = "lun"
[[vm.job]]
rw = "randrw"
iodepth = 8
"#;

fn with_event(event: &str) -> String {
    format!("{TWO_PATHS}\n[[event]]\n{event}\n")
}

/// IOPS of `path` in each sample, by sample end time (s).
fn iops(v: &VariantResult, path: &str) -> Vec<(f64, f64)> {
    v.report.timeseries.get(&format!("path/{path}"), "iops").unwrap()
}

fn iops_between(v: &VariantResult, path: &str, from_s: f64, to_s: f64) -> f64 {
    iops(v, path).iter().filter(|(t, _)| *t > from_s && *t <= to_s).map(|(_, x)| x).sum()
}

fn path<'a>(v: &'a VariantResult, name: &str) -> &'a sanlab_model::report::PathReport {
    v.report.paths.iter().find(|p| p.name == name).unwrap()
}

#[test]
fn a_path_down_with_notice_carries_nothing_then_comes_back() {
    let v = run(&with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"1s\"\nuntil = \"2s\""), &[]);
    assert_eq!(iops_between(&v, "p0", 1.1, 2.0), 0.0, "a dead path carries nothing");
    assert!(iops_between(&v, "p0", 2.1, 3.0) > 0.0, "the path is back");
    assert!(iops_between(&v, "p1", 1.1, 2.0) > 0.0, "I/O moved to the other path");
    let events: Vec<&str> = v.report.psp_events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(events, ["path dead", "path alive"]);
    assert!((v.report.psp_events[0].t_s - 1.01).abs() < 1e-9, "dead after the 10 ms notice");
    // Commands caught on the dead link are retried on the other path, never lost.
    assert!(path(&v, "p0").failed_over > 0);
    assert_eq!(v.report.devices[0].retried, path(&v, "p0").failed_over);
}

#[test]
fn a_silent_failure_is_found_at_the_command_timeout() {
    let v = run(&with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"1s\"\nuntil = \"2s\"\nnotice = false"), &[]);
    let dead = v.report.psp_events.iter().find(|e| e.event == "path dead").unwrap();
    // The first command lost was sent just before the failure: it times out 200 ms after it was sent.
    assert!((1.15..=1.2).contains(&dead.t_s), "found at the 200 ms command timeout, not at {} s", dead.t_s);
    assert!(v.report.vms[0].lat_ms.max >= 200.0, "a lost command waited its timeout");
    assert!(iops_between(&v, "p0", 2.2, 3.0) > 0.0, "the path checker found the path back");
}

#[test]
fn fixed_fails_back_and_mru_does_not() {
    let event = with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"1s\"\nuntil = \"2s\"");
    let fixed = run(&event, &["host[0].multipath.psp={kind=\"fixed\", preferred=\"p0\"}"]);
    assert!(iops_between(&fixed, "p0", 2.1, 3.0) > 0.0 && iops_between(&fixed, "p1", 2.1, 3.0) == 0.0);
    let mru = run(&event, &["host[0].multipath.psp={kind=\"mru\"}"]);
    assert!(iops_between(&mru, "p1", 2.1, 3.0) > 0.0 && iops_between(&mru, "p0", 2.1, 3.0) == 0.0);
}

#[test]
fn all_paths_down_queues_until_one_returns() {
    let text = format!("{}[[event]]\nkind = \"path_down\"\npath = \"p1\"\nat = \"1s\"\nuntil = \"1.5s\"\n", with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"1s\"\nuntil = \"2s\""));
    let v = run(&text, &[]);
    assert_eq!(iops_between(&v, "p0", 1.1, 1.5) + iops_between(&v, "p1", 1.1, 1.5), 0.0);
    assert!(iops_between(&v, "p1", 1.6, 2.0) > 0.0);
    assert!(v.report.vms[0].lat_ms.max >= 490.0, "held while no path was up");
}

#[test]
fn a_degrading_link_raises_its_latency() {
    let v = run(&with_event("kind = \"link_latency\"\npath = \"p0\"\nat = \"1s\"\nlatency = \"2ms\""), &[]);
    let lat = v.report.timeseries.get("path/p0", "lat_ms_mean").unwrap();
    let before = lat.iter().find(|(t, _)| (*t - 0.5).abs() < 1e-9).unwrap().1;
    let after = lat.iter().find(|(t, _)| (*t - 2.0).abs() < 1e-9).unwrap().1;
    assert!(after > before + 3.9, "4 ms more round trip: {before} ms then {after} ms");
}

#[test]
fn commands_cut_at_the_adapter_fail_over_piece_by_piece() {
    let event = with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"1s\"\nuntil = \"2s\"\nnotice = false");
    let v = run(&event, &["host[0].adapter={kind=\"sw_iscsi\"}", "vm[0].job[0].bs=\"512k\""]);
    assert!(v.report.devices[0].retried > path(&v, "p0").failed_over, "four 128 KiB pieces per request");
    assert!(iops_between(&v, "p0", 2.2, 3.0) > 0.0);
}

#[test]
fn a_flapping_path_goes_and_comes_back_each_period() {
    let v = run(&with_event("kind = \"path_down\"\npath = \"p0\"\nat = \"0.5s\"\nuntil = \"0.7s\"\nevery = \"500ms\""), &[]);
    let times: Vec<(f64, &str)> = v.report.psp_events.iter().map(|e| ((e.t_s * 1000.0).round() / 1000.0, e.event.as_str())).collect();
    let expected: Vec<(f64, &str)> = (0..5).flat_map(|n| [(0.51 + 0.5 * f64::from(n), "path dead"), (0.71 + 0.5 * f64::from(n), "path alive")]).collect();
    assert_eq!(times, expected);
}
