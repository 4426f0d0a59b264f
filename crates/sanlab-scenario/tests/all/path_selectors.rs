//! Every path selector on the metro cluster of Hosterman 2018 (one VM, 32 writes of 32 KiB outstanding,
//! local paths at 0.05 ms one way, remote ones about 1 ms further): each carries I/O without losing
//! any, and those that watch latency or queues send most of it down the local paths.
use crate::common::run;
use sanlab_scenario::Overrides;

fn local_share(kind: &str) -> f64 {
    let o = Overrides { sets: vec![format!("host[0].multipath.psp={{kind=\"{kind}\"}}")], duration: Some("20s".into()), ..Overrides::default() };
    let r = run("scenarios/studies/metro_cluster_psp.toml", &["base"], o);
    let report = &r.variants[0].report;
    let ios: u64 = report.paths.iter().map(|p| p.ios).sum();
    assert!(ios > 10_000, "{kind}: {ios} I/Os");
    let local: u64 = report.paths.iter().filter(|p| p.name.starts_with("local")).map(|p| p.ios).sum();
    local as f64 / ios as f64
}

#[test]
fn every_selector_runs_and_the_aware_ones_stay_local() {
    let mut shares = vec![];
    for kind in sanlab_model::multipath::kinds() {
        shares.push((kind.kind, local_share(kind.kind)));
    }
    let share = |name: &str| shares.iter().find(|(k, _)| *k == name).unwrap_or_else(|| panic!("no kind {name}")).1;
    for name in ["significant_latency", "dm_historical_service_time"] {
        assert!(share(name) > 0.99, "{name} keeps I/O local: {shares:?}");
    }
    // ESXi's latency policies spread I/O over every path while they sample it, at the start.
    for name in ["rr_latency", "hpp_lb_latency"] {
        assert!(share(name) > 0.85, "{name} keeps I/O local after sampling: {shares:?}");
    }
    for name in ["dm_queue_length", "dm_service_time", "nvme_queue_depth", "mpio_least_queue_depth", "mpio_least_blocks"] {
        assert!(share(name) > 0.6, "{name}: fast paths drain their queues sooner: {shares:?}");
    }
    let rr = share("rr");
    for name in ["dm_round_robin", "nvme_round_robin", "mpio_round_robin"] {
        assert!((share(name) - rr).abs() < 0.02, "{name} spreads like ESXi's rr: {shares:?}");
    }
}

/// Seconds after `from_s` until path `bad` carries under 5 % of the device's I/O in a 1 s sample
/// (None: not by the end of the run).
fn reaction_s(report: &sanlab_model::report::RunReport, bad: &str, from_s: f64) -> Option<f64> {
    let iops = |path: &str| report.timeseries.get(&format!("path/{path}"), "iops").unwrap_or_else(|| panic!("no series for {path}"));
    let bad_series = iops(bad);
    let all: Vec<_> = report.paths.iter().map(|p| iops(&p.name)).collect();
    bad_series.iter().enumerate().filter(|(_, (t, _))| *t > from_s).find_map(|(k, (t, x))| {
        let total: f64 = all.iter().map(|s| s[k].1).sum();
        (total > 0.0 && x / total < 0.05).then_some(t - from_s)
    })
}

#[test]
fn a_degrading_local_path_is_left_in_seconds_by_ours_and_at_the_next_evaluation_by_esxi() {
    let degrade = "event=[{kind=\"link_latency\", path=\"local-0\", at=\"20s\", latency=\"2ms\"}]";
    let run_with = |kind: &str| {
        // One I/O at a time: the queue-aware part of a policy cannot route around the slow path.
        let sets = vec![format!("host[0].multipath.psp={{kind=\"{kind}\"}}"), degrade.to_string(), "run.warmup=0s".into(), "vm[0].job[0].iodepth=1".into()];
        run("scenarios/studies/metro_cluster_psp.toml", &["base"], Overrides { sets, duration: Some("200s".into()), ..Overrides::default() })
    };
    let ours = run_with("significant_latency");
    let esxi = run_with("rr_latency");
    let ours_s = reaction_s(&ours.variants[0].report, "local-0", 20.0).expect("ours reacts");
    let esxi_s = reaction_s(&esxi.variants[0].report, "local-0", 20.0).expect("the latency PSP reacts at its next evaluation");
    assert!(ours_s <= 2.0, "ours left the degraded path after {ours_s} s");
    assert!(esxi_s >= 10.0 * ours_s, "rr_latency after {esxi_s} s, ours after {ours_s} s");
}

/// A volume's own `psp` replaces its host's for that volume's devices (ESXi sets the policy per
/// device): two volumes on the metro cluster's paths, one left to the host's fixed policy, one
/// with round robin over its active-optimized paths.
#[test]
fn a_volume_policy_replaces_the_hosts_for_its_devices() {
    let text = crate::common::on_one_vm(
        r#"[[array]]
name = "a"
media = { kind = "flash", read_latency = "100us", write_latency = "20us", servers = 64 }
[[volume]]
name = "fixed_lun"
arrays = ["a"]
[[volume]]
name = "rr_lun"
arrays = ["a"]
psp = { kind = "rr", iops = 1 }
[[host]]
name = "h"
adapter = { kind = "ideal" }
multipath = { psp = "fixed" }
[[path]]
host = "h"
array = "a"
count = 2
[[vm]]
name = "on_fixed"
host = "h"
volume = "fixed_lun"
[[vm.job]]
cmdline = "--name=j --rw=randread --bs=4k --iodepth=8"
[[vm]]
name = "on_rr"
host = "h"
volume = "rr_lun"
[[vm.job]]
cmdline = "--name=j --rw=randread --bs=4k --iodepth=8"
"#,
    );
    let v = crate::common::run_text(&text, &[]);
    let ios = |name: &str| v.report.paths.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no path {name}")).ios;
    assert_eq!(ios("h-a-1:fixed_lun"), 0, "fixed keeps one path");
    assert!(ios("h-a-0:fixed_lun") > 1000);
    let (rr0, rr1) = (ios("h-a-0:rr_lun"), ios("h-a-1:rr_lun"));
    assert!(rr0.abs_diff(rr1) <= 1, "rr iops=1 alternates: {rr0} and {rr1}");
    // A preferred path is named as the report names it: `<link>:<device>` on a link several devices share.
    let preferred = text.replace("psp = { kind = \"rr\", iops = 1 }", "psp = { kind = \"fixed\", preferred = \"h-a-1:rr_lun\" }");
    let v = crate::common::run_text(&preferred, &[]);
    let ios = |name: &str| v.report.paths.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no path {name}")).ios;
    assert_eq!(ios("h-a-0:rr_lun"), 0);
    assert!(ios("h-a-1:rr_lun") > 1000);
    // Errors name the volume's key: a policy the volume's devices cannot take, a vVol's.
    let bad = text.replace("psp = { kind = \"rr\", iops = 1 }", "psp = { kind = \"rr\", iosp = 1 }");
    let e = sanlab_scenario::run_file(&crate::common::write_scenario(&bad), &[], &sanlab_scenario::Overrides::default(), None).err().expect("an error").to_string();
    assert!(e.contains("volume[1].psp.iosp") && e.contains("did you mean `iops`"), "{e}");
    let vvol = text.replace("name = \"rr_lun\"\narrays = [\"a\"]", "name = \"rr_lun\"\narrays = [\"a\"]\ntype = \"vvol\"");
    let e = sanlab_scenario::run_file(&crate::common::write_scenario(&vvol), &[], &sanlab_scenario::Overrides::default(), None).err().expect("an error").to_string();
    assert!(e.contains("volume[1].psp") && e.contains("protocol endpoint"), "{e}");
}
