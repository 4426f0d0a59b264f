//! Every path selector on the metro cluster of seed 000 (one VM, 32 writes of 32 KiB outstanding,
//! local paths at 0.05 ms one way, remote ones about 1 ms further): each carries I/O without losing
//! any, and those that watch latency or queues send most of it down the local paths.
mod common;
use common::run;
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
