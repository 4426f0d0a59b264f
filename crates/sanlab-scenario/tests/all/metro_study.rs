//! Seeds 000/001: the metro-cluster path-policy study, against the seed's figures.
use crate::common::run;
use sanlab_scenario::Overrides;

const STUDY: &str = "scenarios/studies/metro_cluster_psp.toml";

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
    let local = mean_latency(v, "local");
    let remote = mean_latency(v, "remote");
    let slow = mean_latency(v, "remote-slow");
    assert!((2.2..2.35).contains(&local), "optimized path latency {local} ms, seed ~2.2");
    assert!((6.0..6.3).contains(&remote), "non-optimized {remote} ms, seed ~6");
    assert!((8.0..8.3).contains(&slow), "slow non-optimized {slow} ms, seed ~8");
    let iops = v.report.vms[0].iops;
    assert!((7_000.0..9_500.0).contains(&iops), "RR iops=1: {iops} IOPS, accepted 7,000-9,500");
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
    assert!((12_500.0..15_000.0).contains(&iops), "ALUA: {iops} IOPS, accepted 12,500-15,000");
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
