//! Faults on paths: a path going down with notice or silently, coming back, a degrading link; the
//! host's reaction (dead path skipped, command retried, FIXED fails back, MRU does not).
use crate::common::run_text as run;
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

#[test]
fn paths_alternate_across_controllers_and_name_their_ports() {
    let v = run(TWO_PATHS, &[]);
    let ends: Vec<(&str, &str, &str)> = v.report.paths.iter().map(|p| (p.adapter.as_str(), p.controller.as_str(), p.port.as_str())).collect();
    assert_eq!(ends, [("vmhba0", "ctrl1", "ctrl1.fc1"), ("vmhba0", "ctrl2", "ctrl2.fc1")]);
}

#[test]
fn an_adapter_and_a_port_take_their_paths_down() {
    let text = TWO_PATHS.replace("name = \"p1\"\nhost = \"h\"", "name = \"p1\"\nhost = \"h\"\nadapter = \"vmhba1\"");
    let v = run(&format!("{text}[[event]]\nkind = \"adapter_down\"\nhost = \"h\"\nadapter = \"vmhba1\"\nat = \"1s\"\nuntil = \"2s\"\n"), &[]);
    assert_eq!(iops_between(&v, "p1", 1.1, 2.0), 0.0, "the adapter's path carries nothing");
    assert!(iops_between(&v, "p0", 1.1, 2.0) > 0.0 && iops_between(&v, "p1", 2.1, 3.0) > 0.0);
    let v = run(&with_event("kind = \"port_down\"\narray = \"a\"\nport = \"ctrl1.fc1\"\nat = \"1s\"\nuntil = \"2s\""), &[]);
    assert_eq!(iops_between(&v, "p0", 1.1, 2.0), 0.0, "the port's path carries nothing");
    let edges: Vec<(f64, &str, &str)> = v.report.faults.iter().map(|f| (f.t_s, f.kind, f.phase)).collect();
    assert_eq!(edges, [(1.0, "port_down", "start"), (2.0, "port_down", "end")]);
    assert_eq!(v.report.faults[0].paths, ["p0"]);
}

#[test]
fn a_controller_failure_holds_commands_for_the_takeover_and_moves_its_paths() {
    let v = run(&with_event("kind = \"controller_down\"\narray = \"a\"\ncontroller = \"ctrl2\"\ntakeover = \"300ms\"\nat = \"1s\"\nuntil = \"2s\""), &["host[0].failover.command_timeout=\"1s\""]);
    // (A command timeout shorter than the takeover would abort the held commands: see
    // a_command_slower_than_the_timeout_is_aborted_and_retried.)
    assert_eq!(iops_between(&v, "p1", 1.1, 2.0), 0.0, "ctrl2's path is down");
    assert_eq!(iops_between(&v, "p0", 1.1, 1.3), 0.0, "the survivor holds commands while it takes over");
    assert!(iops_between(&v, "p0", 1.4, 2.0) > 0.0);
    let start = &v.report.faults[0];
    assert!((300.0..310.0).contains(&start.max_io_latency_ms), "held for the takeover: {} ms", start.max_io_latency_ms);
}

#[test]
fn a_lost_controllers_segments_move_to_the_survivor() {
    let cores = "[[array]]\nname = \"a\"\ncores = { controllers = 2, cores_per_controller = 1 }";
    let text = TWO_PATHS.replace("[[array]]\nname = \"a\"", cores);
    let v = run(&format!("{text}[[event]]\nkind = \"controller_down\"\narray = \"a\"\ncontroller = \"ctrl2\"\ntakeover = \"10ms\"\nat = \"1s\"\n"), &[]);
    let core_iops = |core: &str, from: f64| -> f64 { v.report.timeseries.get(&format!("core/a/{core}"), "iops").unwrap().iter().filter(|(t, _)| *t > from).map(|(_, x)| x).sum() };
    assert!(core_iops("ctrl2.core1", 0.0) > 0.0, "ctrl2 worked before it failed");
    assert_eq!(core_iops("ctrl2.core1", 1.1), 0.0, "and not after");
    assert!(core_iops("ctrl1.core1", 1.1) > 0.0);
}

#[test]
fn all_paths_down_fails_at_the_apd_timeout_or_at_once_or_never() {
    let down = "kind = \"adapter_down\"\nhost = \"h\"\nadapter = \"vmhba0\"\nat = \"1s\"";
    let v = run(&with_event(down), &["host[0].failover.apd_timeout=\"500ms\""]);
    let vm = &v.report.vms[0];
    assert_eq!((vm.failed, vm.failed_by_reason.apd_timeout), (8, 8), "the job's 8 outstanding requests fail, then it stops (as fio does)");
    let waited_ms = v.report.faults[0].max_io_latency_ms;
    assert!((500.0..520.0).contains(&waited_ms), "they failed at the timeout: {waited_ms} ms");
    let v = run(&with_event(down), &["host[0].failover.apd_timeout=\"0s\""]);
    assert_eq!(v.report.vms[0].failed_by_reason.no_path, 8);
    let v = run(&with_event(down), &["host[0].failover.apd_timeout=\"never\""]);
    assert_eq!((v.report.vms[0].failed, v.report.vms[0].in_flight), (0, 8), "queued for ever: in flight at the end");
}

#[test]
fn a_lost_volume_fails_its_commands_once_every_path_reports_it() {
    let v = run(&with_event("kind = \"device_lost\"\narray = \"a\"\nvolume = \"lun\"\nat = \"1s\""), &[]);
    let vm = &v.report.vms[0];
    assert_eq!((vm.failed, vm.failed_by_reason.pdl), (8, 8));
    assert!(vm.lat_ms.max < 5.0, "PDL fails at once, without the APD wait");
    let dead: Vec<(&str, usize)> = v.report.psp_events.iter().map(|e| (e.event.as_str(), e.paths.len())).collect();
    assert_eq!(dead, [("path dead (PDL)", 2)], "both paths reported it, in the same instant");
}

#[test]
fn a_standby_port_group_carries_nothing_and_transitioning_holds_io() {
    let v = run(&with_event("kind = \"alua_state\"\narray = \"a\"\ncontroller = \"ctrl1\"\nstate = \"standby\"\nat = \"1s\"\nuntil = \"2s\""), &[]);
    assert_eq!(iops_between(&v, "p0", 1.1, 2.0), 0.0);
    assert!(iops_between(&v, "p0", 2.1, 3.0) > 0.0, "AO again");
    let v = run(&with_event("kind = \"alua_state\"\narray = \"a\"\nstate = \"AO\"\ntransition = \"300ms\"\nat = \"1s\"\nuntil = \"2s\""), &[]);
    assert_eq!(iops_between(&v, "p0", 1.1, 1.3) + iops_between(&v, "p1", 1.1, 1.3), 0.0, "no path carries I/O while transitioning");
    assert!(iops_between(&v, "p0", 1.4, 2.0) > 0.0);
}

#[test]
fn a_slower_link_stretches_large_transfers() {
    let v = run(&with_event("kind = \"link_bandwidth\"\npath = \"p0\"\nbandwidth = \"100Mb/s\"\nat = \"1s\""), &["vm[0].job[0].bs=\"256k\""]);
    let lat = v.report.timeseries.get("path/p0", "lat_ms_mean").unwrap();
    let after = lat.iter().find(|(t, _)| (*t - 2.0).abs() < 1e-9).unwrap().1;
    assert!(after > 20.0, "256 KiB at 100 Mb/s take 21 ms to send: {after} ms");
}

/// A metro pair: one host, one path to each array, one replicated volume.
const METRO: &str = r#"
schema_version = 1
name = "metro"
[run]
duration = "3s"
sample_interval = "100ms"
[[array]]
name = "a"
[[array]]
name = "b"
[[replication]]
arrays = ["a", "b"]
link = { latency = "1ms" }
election = "300ms"
[[volume]]
name = "lun"
arrays = ["a", "b"]
[[host]]
name = "h"
multipath = { psp = { kind = "rr", iops = 1 } }
[[path]]
name = "pa"
host = "h"
array = "a"
[[path]]
name = "pb"
host = "h"
array = "b"
[[vm]]
name = "vm"
host = "h"
volume = "lun"
[[vm.job]]
rw = "randwrite"
iodepth = 8
"#;

#[test]
fn the_replication_link_fails_writes_stall_then_the_preferred_array_serves_alone() {
    let event = "[[event]]\nkind = \"replication_down\"\narrays = [\"a\", \"b\"]\nat = \"1s\"\nuntil = \"2s\"\n";
    let v = run(&format!("{METRO}{event}"), &["replication[0].preferred=\"b\""]);
    let mediator = v.report.faults.iter().find(|f| f.phase == "mediator").unwrap();
    assert_eq!((mediator.t_s, mediator.detail.as_str()), (1.3, "b keeps the volumes, a stops serving them"));
    assert!(mediator.max_io_latency_ms >= 300.0, "writes stalled for the election: {} ms", mediator.max_io_latency_ms);
    assert_eq!(iops_between(&v, "pb", 1.0, 1.3), 0.0, "no write completes during the race");
    assert_eq!(iops_between(&v, "pa", 1.4, 2.0), 0.0, "the loser's path is unavailable");
    let unavailable = v.report.psp_events.iter().find(|e| e.event == "ALUA unavailable").unwrap();
    assert_eq!(unavailable.paths, ["pa"]);
    assert!(iops_between(&v, "pa", 2.1, 3.0) > 0.0, "served again once the link is back");
    assert_eq!(v.report.vms[0].failed, 0, "no write is lost: the loser's are retried on the winner");
    // Alone, the winner acknowledges without the 2 ms mirror round trip.
    let lat = v.report.timeseries.get("path/pb", "lat_ms_mean").unwrap();
    let at = |s: f64| lat.iter().find(|(t, _)| (*t - s).abs() < 1e-9).unwrap().1;
    assert!(at(1.9) < at(0.9) - 1.9, "{} ms alone vs {} ms mirrored", at(1.9), at(0.9));
}

#[test]
fn an_array_failure_leaves_the_volume_on_its_peer() {
    let event = "[[event]]\nkind = \"array_down\"\narray = \"a\"\nat = \"1s\"\n";
    let v = run(&format!("{METRO}{event}"), &[]);
    let mediator = v.report.faults.iter().find(|f| f.phase == "mediator").unwrap();
    assert_eq!(mediator.detail, "b keeps the volumes, a stops serving them");
    assert_eq!(iops_between(&v, "pa", 1.1, 3.0), 0.0);
    assert!(iops_between(&v, "pb", 1.4, 3.0) > 0.0);
    assert_eq!(v.report.vms[0].failed, 0);
}

/// Two VMs on two volumes of one array over two paths; `kind` is the volumes' type.
fn two_volumes(kind: &str) -> String {
    let mut s = String::from("schema_version = 1\nname = \"pdl\"\n[run]\nduration = \"3s\"\nsample_interval = \"100ms\"\n[[array]]\nname = \"a\"\n[[host]]\nname = \"h\"\nmultipath = { psp = { kind = \"rr\", iops = 1 } }\n");
    for p in ["p0", "p1"] {
        s += &format!("[[path]]\nname = \"{p}\"\nhost = \"h\"\narray = \"a\"\n");
    }
    for k in 0..2 {
        s += &format!("[[volume]]\nname = \"v{k}\"\narrays = [\"a\"]\ntype = \"{kind}\"\n[[vm]]\nname = \"vm{k}\"\nhost = \"h\"\nvolume = \"v{k}\"\n[[vm.job]]\nrw = \"randrw\"\niodepth = 8\n");
    }
    s + "[[event]]\nkind = \"device_lost\"\narray = \"a\"\nvolume = \"v0\"\nat = \"1s\"\n"
}

/// PDL is per volume: a lost vVol fails its own I/O at once (its sense is for its secondary LUN
/// ID) and leaves the protocol endpoint and the other vVol behind it alone, as a lost VMFS volume
/// leaves the other VMFS volume alone. The PE's paths used to be marked dead, so the healthy vVol
/// lost every path and failed at the APD timeout.
#[test]
fn a_lost_vvol_leaves_the_other_vvols_behind_its_protocol_endpoint_alone() {
    for kind in ["vvol", "vmfs"] {
        let v = run(&two_volumes(kind), &["host[0].failover.apd_timeout=\"500ms\""]);
        let (lost, other) = (&v.report.vms[0], &v.report.vms[1]);
        assert_eq!((lost.failed, lost.failed_by_reason.pdl), (8, 8), "{kind}: the lost volume's 8 outstanding requests fail with PDL");
        assert!(lost.lat_ms.max < 5.0, "{kind}: at once, without the APD wait");
        assert_eq!((other.failed, other.failed_by_reason.apd_timeout), (0, 0), "{kind}: the other volume never fails");
        let vm1 = v.report.timeseries.get("vm/vm1", "iops").unwrap();
        assert!(vm1.iter().filter(|(t, _)| *t > 2.5).all(|(_, x)| *x > 0.0), "{kind}: and goes on to the end");
        if kind == "vvol" {
            assert!(v.report.psp_events.iter().all(|e| !e.event.starts_with("path dead")), "the PE's paths stay up: {:?}", v.report.psp_events.iter().map(|e| &e.event).collect::<Vec<_>>());
        }
    }
}

/// A command slower than the command timeout is aborted like a lost one: p0's link takes 2 s each
/// way against a 300 ms timeout. Each command sent on p0 is aborted 300 ms after it went out,
/// p0 is failed (as dm-multipath fails a path on a timed-out command) and the command goes again
/// on p1; the checker reinstates p0 at its next probe and it fails again at the next timeout.
/// The array still finishes the aborted commands; their late statuses (4 s after the send) are
/// dropped at the host, so nothing is counted twice. It used to complete after 4 s, never
/// aborted.
#[test]
fn a_command_slower_than_the_timeout_is_aborted_and_retried() {
    let text = TWO_PATHS.replace("command_timeout = \"200ms\"", "command_timeout = \"300ms\"").replacen("link = { latency = \"50us\" }", "link = { latency = \"2s\" }", 1).replace("duration = \"3s\"", "duration = \"6s\"");
    let v = run(&text, &[]);
    let vm = &v.report.vms[0];
    assert!(vm.lat_ms.max < 350.0, "no request waits past the 300 ms timeout (plus the retry): {} ms", vm.lat_ms.max);
    assert!(vm.failed == 0 && vm.completed > 1000, "failed {}, completed {}", vm.failed, vm.completed);
    let dead: Vec<f64> = v.report.psp_events.iter().filter(|e| e.event == "path dead").map(|e| e.t_s).collect();
    assert!(!dead.is_empty() && (dead[0] - 0.3).abs() < 0.01, "p0 is failed at the first timeout: {dead:?}");
    let p0 = path(&v, "p0");
    assert_eq!(p0.ios, 0, "nothing completes on the 2 s path");
    assert!(p0.failed_over > 0 && v.report.devices[0].retried == p0.failed_over, "every aborted command went again on p1");
    // The array answered the aborted commands that reached it (2 s out, 2 s back within 6 s).
    let array = v.report.conservation.iter().find(|c| c.component == "array/a").unwrap();
    assert!(array.completed > vm.completed, "the array also finished the aborted commands: {array:?}");
}
