//! Seeds 000/001: the metro-cluster path-policy study, against the seed's figures.
//!
//! Two kinds of check, kept apart: the figures docs/studies/metro_cluster_psp.md derives (Little's
//! law over the six-step write latencies), asserted tightly and computed here from the scenario's
//! parameters; and the post's own measurements (Hosterman's ~8,500 and ~13,500 IOPS), which the
//! model is not tuned to and which keep their wide "accepted" bands.
use crate::common::{claim, run, with_sets};
use sanlab_scenario::Overrides;
use sanlab_spec::{parse_bandwidth_bps, parse_duration_ns, parse_size_bytes};

const STUDY: &str = "scenarios/studies/metro_cluster_psp.toml";

/// What the page's arithmetic needs, read from the scenario file.
struct Params {
    /// One write alone on each `[[path]]` group, seconds: (group name, count, latency).
    groups: Vec<(String, u32, f64)>,
    /// Writes outstanding (the job's iodepth).
    outstanding: f64,
}

/// The page's six steps for one write alone: command, transfer ready, data and status on the
/// path's link (data serialised at its bandwidth), the forward to the peer array and its
/// acknowledgement on the replication link (data serialised there too), the peer's NVRAM write.
fn params() -> Params {
    let text = std::fs::read_to_string(crate::common::repo(STUDY)).unwrap();
    let t: toml::Table = text.parse().unwrap();
    let s = |v: &toml::Value| v.as_str().unwrap().to_string();
    let secs = |v: &toml::Value| parse_duration_ns(&s(v)).unwrap() as f64 * 1e-9;
    let bps = |v: &toml::Value| parse_bandwidth_bps(&s(v)).unwrap();
    let job = &t["vm"][0]["job"][0];
    let bits = parse_size_bytes(&s(&job["bs"])).unwrap() as f64 * 8.0;
    let rep = &t["replication"][0]["link"];
    let nvram = secs(&t["array"][1]["media"]["write_latency"]);
    let replication = 2.0 * secs(&rep["latency"]) + bits / bps(&rep["bandwidth"]) + nvram;
    let groups = t["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let link = &p["link"];
            let own = 4.0 * secs(&link["latency"]) + bits / bps(&link["bandwidth"]);
            (s(&p["name"]), p["count"].as_integer().unwrap() as u32, own + replication)
        })
        .collect();
    Params { groups, outstanding: job["iodepth"].as_integer().unwrap() as f64 }
}

impl Params {
    fn alone(&self, group: &str) -> f64 {
        self.groups.iter().find(|g| g.0 == group).unwrap().2
    }

    /// Mean response time with equal shares over the named groups (all when empty), seconds.
    fn mean_over(&self, groups: &[&str]) -> f64 {
        let g: Vec<_> = self.groups.iter().filter(|g| groups.is_empty() || groups.contains(&g.0.as_str())).collect();
        g.iter().map(|g| f64::from(g.1) * g.2).sum::<f64>() / g.iter().map(|g| f64::from(g.1)).sum::<f64>()
    }
}

#[test]
fn the_pages_arithmetic_from_the_scenario() {
    let p = params();
    // The page's table: 2.2626, 6.0626 and 8.0626 ms for one write alone.
    for (group, ms) in [("local", 2.2626), ("remote", 6.0626), ("remote-slow", 8.0626)] {
        assert!((p.alone(group) * 1e3 - ms).abs() < 1e-4, "{group}: {} ms", p.alone(group) * 1e3);
    }
    assert_eq!(p.outstanding, 32.0);
    // Little's law: 32 / 4.4626 ms = 7,171 (all paths), 32 / 2.2626 ms = 14,143 (local paths).
    assert!((p.outstanding / p.mean_over(&[]) - 7_170.7).abs() < 0.1);
    assert!((p.outstanding / p.mean_over(&["local"]) - 14_143.0).abs() < 0.1);
}

fn short() -> Overrides {
    Overrides { duration: Some("20s".into()), ..Overrides::default() }
}

/// Mean latency of the paths named `<group>-<n>`.
fn mean_latency(v: &sanlab_scenario::VariantResult, group: &str) -> f64 {
    let in_group = |name: &str| name.rsplit_once('-').is_some_and(|(g, n)| g == group && n.parse::<u32>().is_ok());
    let p: Vec<_> = v.report.paths.iter().filter(|p| in_group(&p.name) && p.ios > 0).collect();
    assert!(!p.is_empty(), "no I/O on {group}-*");
    p.iter().map(|p| p.lat_ms.mean).sum::<f64>() / p.len() as f64
}

#[test]
fn round_robin_over_all_paths_matches_the_seed() {
    let r = run(STUDY, &["rr_iops1"], short());
    let v = &r.variants[0];
    let p = params();
    // Derived: each path's latency is the six steps of one write alone (2.2626, 6.0626, 8.0626
    // ms), plus what a write waits when it meets another's frame on a link. Every delay here is
    // fixed, so there is no seed-to-seed spread (seeds 1, 2, 7 give the same figures to the last
    // digit); the waits add 0.24 % on the local paths, 0.12 % on the remote ones, none on the
    // slow ones (a few paths at 2.280 and 6.081 ms). Tolerance: none below, 0.5 % above.
    for group in ["local", "remote", "remote-slow"] {
        let (ms, alone) = (mean_latency(v, group), p.alone(group) * 1e3);
        assert!((alone - 1e-6..=alone * 1.005).contains(&ms), "{group}-*: {ms} ms, one write alone {alone} ms");
    }
    // Against the post's own measurements (about 2.2 ms, 6 ms and a little over 8 ms): wide.
    let local = mean_latency(v, "local");
    let remote = mean_latency(v, "remote");
    let slow = mean_latency(v, "remote-slow");
    claim("metro.rr_iops1.local_latency", local);
    claim("metro.rr_iops1.remote_latency", remote);
    claim("metro.rr_iops1.slow_latency", slow);
    let iops = v.report.vms[0].iops;
    // Derived (the page's Little's law): 32 / 4.4626 ms = 7,170.7 IOPS for writes alone; the
    // link waits above make it 7,162 (the page's figure, from its measured path means). Measured
    // 7,162.2 over this 20 s run, 7,161.9 over 60 s, 7,160.7 over 5 s, identical for seeds 1, 2
    // and 7: no seed spread, only the window's edges (32 writes in flight over 18 s measured).
    // Tolerance: 0.3 % below the writes-alone figure (7,149.2-7,170.7), and 0.1 % around 7,162.
    let alone = p.outstanding / p.mean_over(&[]);
    assert!((alone * 0.997..=alone).contains(&iops), "RR iops=1: {iops} IOPS, derived {alone} for writes alone");
    claim("metro.rr_iops1.iops_derived", iops);
    // Little's law itself, with the measured mean latency: 32 in flight.
    let in_flight = iops * v.report.vms[0].lat_ms.mean * 1e-3;
    assert!((in_flight - 32.0).abs() < 0.1, "IOPS x mean latency = {in_flight}");
    // The post's measured ~8,500 (not derivable from its own per-path latencies; see the page):
    // a wide band, the page's "accepted" column.
    claim("metro.rr_iops1.iops_post", iops);
    // Every path carries an equal share (1/20).
    for p in &v.report.paths {
        assert!((p.share - 0.05).abs() < 0.001, "{} share {}", p.name, p.share);
    }
    // The arrays model no cores: each controller's load is the I/O of the paths on its ports,
    // alternating over the two controllers (5 of each array's 10 paths), with no utilisation.
    for a in &v.report.arrays {
        let paths: Vec<_> = v.report.paths.iter().filter(|p| p.array == a.name).collect();
        assert_eq!(a.controllers.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["ctrl1", "ctrl2"], "{}", a.name);
        for c in &a.controllers {
            let carried: f64 = paths.iter().filter(|p| p.controller == c.name).map(|p| p.iops).sum();
            assert!((c.iops - carried).abs() < 1e-6 && carried > 0.0, "{} {}: {} against {carried}", a.name, c.name, c.iops);
            assert!((c.share - 0.5).abs() < 0.01 && c.util.is_none(), "{} {}: share {}", a.name, c.name, c.share);
        }
    }
}

#[test]
fn alua_preferred_array_matches_the_seed() {
    let r = run(STUDY, &["alua_rr"], short());
    let v = &r.variants[0];
    let iops = v.report.vms[0].iops;
    // Derived: 32 / 2.2626 ms = 14,143.0 IOPS; nothing waits on the local paths (every path at
    // 2.2626 ms). Measured 14,144.0 over this 20 s run, 14,143.2 over 60 s, the same for every
    // seed (no random delay). Tolerance 0.1 %: the window's edges only.
    let derived = params().outstanding / params().mean_over(&["local"]);
    assert!((iops - derived).abs() <= 0.001 * derived, "ALUA: {iops} IOPS, derived {derived}");
    claim("metro.alua.iops_derived", iops);
    // The post's measured ~13,500: a wide band, the page's "accepted" column.
    claim("metro.alua.iops_post", iops);
    for p in &v.report.paths {
        let local = p.name.starts_with("local-");
        assert_eq!(p.alua, if local { "AO" } else { "ANO" }, "{}", p.name);
        assert_eq!(p.ios > 0, local, "{} carried {} I/Os", p.name, p.ios);
    }
}

#[test]
fn latency_psp_drops_slowest_paths_then_the_other_remote_ones() {
    let r = run(STUDY, &["alua_rr", "latency"], Overrides::default());
    let alua_iops = r.variants[0].report.vms[0].iops;
    let v = &r.variants[1];
    let ev = &v.report.psp_events;
    assert_eq!(ev.len(), 2, "{:?}", ev.iter().map(|e| &e.event).collect::<Vec<_>>());
    // First evaluation, right at the start: exactly the three slow paths go.
    assert!(ev[0].t_s < 1.0);
    let mut first = ev[0].paths.clone();
    first.sort();
    assert_eq!(first, vec!["remote-slow-0", "remote-slow-1", "remote-slow-2"]);
    // Next evaluation (latency_eval_time = 180 s later): every remote path is excluded.
    assert!((180.0..182.0).contains(&ev[1].t_s), "{}", ev[1].t_s);
    assert_eq!(ev[1].paths.len(), 10);
    assert!(ev[1].paths.iter().all(|p| p.starts_with("remote")));
    // It ends within 5 % of the ALUA figure: IOPS over the last minute of the time series.
    let iops = v.report.timeseries.get("vm/vm1", "iops").unwrap();
    let last: Vec<f64> = iops.iter().filter(|(t, _)| *t > 360.0).map(|(_, x)| *x).collect();
    assert_eq!(last.len(), 60);
    let end_iops = last.iter().sum::<f64>() / last.len() as f64;
    assert!((end_iops - alua_iops).abs() / alua_iops < 0.05, "latency PSP ends at {end_iops} vs ALUA {alua_iops}");
}

/// The exclusions the latency PSP logs with keep-rule tolerance `tolerance`, evaluating every 30 s
/// over 70 s (evaluations at 0.05, 30.1 and 60.15 s): for each, its time and the path groups it
/// excluded, with how many paths.
fn exclusions(tolerance: f64) -> Vec<(f64, usize, Vec<String>)> {
    let tol = format!("host[0].multipath.psp.tolerance={tolerance}");
    let o = with_sets(&[&tol, "host[0].multipath.psp.latency_eval_time=30s", "run.duration=70s"]);
    let r = run(STUDY, &["latency"], o);
    let events = &r.variants[0].report.psp_events;
    assert!(!events.is_empty() && events[0].t_s < 1.0, "tolerance {tolerance}: no first evaluation");
    events
        .iter()
        .filter(|e| !e.paths.is_empty())
        .map(|e| {
            let mut groups: Vec<String> = e.paths.iter().map(|p| p.rsplit_once('-').unwrap().0.to_string()).collect();
            groups.sort();
            groups.dedup();
            (e.t_s, e.paths.len(), groups)
        })
        .collect()
}

#[test]
fn the_staged_exclusion_depends_on_the_keep_rules_tolerance() {
    // The keep rule (ours: keep a path whose figure is within reference x (1 + tolerance), the
    // reference being the mean over the paths kept before) gives the post's staged drop only in a
    // window of tolerances, computed from one write alone on each path:
    //  - first evaluation, reference over all 20 paths, 4.4626 ms: the 6.06 ms paths go at once
    //    below 6.0626 / 4.4626 - 1 = 0.359; the 8.06 ms ones survive above 8.0626 / 4.4626 - 1 = 0.807;
    //  - next evaluation, reference over the 17 kept paths, 3.8273 ms: the 6.06 ms paths go only
    //    below 6.0626 / 3.8273 - 1 = 0.584.
    // So: staged for 0.359-0.584. Between 0.584 and 0.807 the slow paths go and the other remote
    // paths are never excluded. Nothing here is random (the same events for every seed); the
    // measured edges lie within 0.01 of these (0.355 and 0.585 give mixed, 3-stage drops because a
    // few paths sample at 6.081 ms), so each case below stands 0.02 from an edge.
    let p = params();
    let (all, kept) = (p.mean_over(&[]), p.mean_over(&["local", "remote"]));
    let lower = p.alone("remote") / all - 1.0;
    let upper = p.alone("remote") / kept - 1.0;
    let slow = p.alone("remote-slow") / all - 1.0;
    assert!((lower - 0.359).abs() < 0.001 && (upper - 0.584).abs() < 0.001 && (slow - 0.807).abs() < 0.001, "{lower} {upper} {slow}");
    let slow_only = |g: &Vec<String>| g == &["remote-slow"];
    let every_remote = |g: &Vec<String>| g == &["remote", "remote-slow"];
    // Inside, at both ends: the three slow paths at the first evaluation, the other seven at the next.
    for t in [lower + 0.02, upper - 0.02] {
        let ev = exclusions(t);
        assert_eq!(ev.len(), 2, "tolerance {t}: {ev:?}");
        assert!(ev[0].0 < 1.0 && ev[0].1 == 3 && slow_only(&ev[0].2), "tolerance {t}: {ev:?}");
        assert!((30.0..31.0).contains(&ev[1].0) && ev[1].1 == 10 && every_remote(&ev[1].2), "tolerance {t}: {ev:?}");
    }
    // Below: every remote path at once.
    let ev = exclusions(lower - 0.02);
    assert!(ev.len() == 1 && ev[0].0 < 1.0 && ev[0].1 == 10 && every_remote(&ev[0].2), "tolerance {}: {ev:?}", lower - 0.02);
    // Above: the slow paths go, the other remote paths stay for good.
    let ev = exclusions(upper + 0.02);
    assert!(ev.len() == 1 && ev[0].0 < 1.0 && ev[0].1 == 3 && slow_only(&ev[0].2), "tolerance {}: {ev:?}", upper + 0.02);
    // Above the slow paths' edge: nothing is excluded.
    let ev = exclusions(slow + 0.02);
    assert!(ev.is_empty(), "tolerance {}: {ev:?}", slow + 0.02);
}

#[test]
fn same_seed_same_results() {
    let a = run(STUDY, &["rr_iops1", "latency"], Overrides { duration: Some("5s".into()), seed: Some(42), ..Overrides::default() });
    let b = run(STUDY, &["rr_iops1", "latency"], Overrides { duration: Some("5s".into()), seed: Some(42), ..Overrides::default() });
    let strip = |r: &sanlab_scenario::RunResult| {
        let mut j = serde_json::to_value(r).unwrap();
        for v in j["variants"].as_array_mut().unwrap() {
            v.as_object_mut().unwrap().remove("wall_s");
        }
        j.to_string()
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a.variants[0].seed, 42);
}
