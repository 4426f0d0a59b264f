//! Seed 003: PARDA's experiments (FAST '09 Figs. 6-9, 12-13, Tables 2-4, 6) as tolerances.
use crate::common::{claim, run};
use sanlab_model::report::{HostReport, RunReport};
use sanlab_scenario::{Overrides, VariantResult};

pub(crate) fn variant<'a>(r: &'a [VariantResult], name: &str) -> &'a RunReport {
    &r.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no variant {name}")).report
}

pub(crate) fn host<'a>(r: &'a RunReport, name: &str) -> &'a HostReport {
    r.hosts.iter().find(|h| h.name == name).unwrap_or_else(|| panic!("no host {name}"))
}

pub(crate) fn total_iops(r: &RunReport) -> f64 {
    r.hosts.iter().map(|h| h.iops).sum()
}

/// I/O-weighted mean of the hosts' VM-observed latency.
pub(crate) fn overall_ms(r: &RunReport) -> f64 {
    r.hosts.iter().map(|h| h.iops * h.lat_ms.mean).sum::<f64>() / total_iops(r)
}

/// I/O-weighted mean of the hosts' device latency: the paper's "overall average latency at each host".
pub(crate) fn device_ms(r: &RunReport) -> f64 {
    r.hosts.iter().map(|h| h.iops * h.device_lat_ms).sum::<f64>() / total_iops(r)
}

fn threshold_ms(r: &RunReport) -> f64 {
    r.hosts[0].flow_control.as_ref().expect("controlled").latency_threshold_ms
}

/// Mean of a host's series over `[from_s, to_s)`.
fn series_mean(r: &RunReport, host: &str, metric: &str, from_s: f64, to_s: f64) -> f64 {
    let points = r.timeseries.get(&format!("host/{host}"), metric).unwrap_or_else(|| panic!("no {metric} series for {host}"));
    let inside: Vec<f64> = points.iter().filter(|(t, _)| (from_s..to_s).contains(t)).map(|(_, v)| *v).collect();
    assert!(!inside.is_empty(), "{host} {metric}: no samples in {from_s}..{to_s}");
    inside.iter().sum::<f64>() / inside.len() as f64
}

#[test]
fn fig6_latency_rises_with_hosts_but_throughput_falls_unlike_the_paper() {
    let r = run("scenarios/studies/parda_load.toml", &[], Overrides::default());
    let iops: Vec<f64> = (1..=5).map(|n| total_iops(variant(&r.variants, &format!("hosts_{n}")))).collect();
    let lat: Vec<f64> = (1..=5).map(|n| overall_ms(variant(&r.variants, &format!("hosts_{n}")))).collect();
    for n in 1..5 {
        assert!(lat[n] > lat[n - 1] * 1.15, "latency keeps rising: {lat:?}");
    }
    // Known divergence: the paper's throughput rises to a peak at three hosts; ours falls from one
    // host on (3,977 to 2,299 IOPS): one host's 32 requests already keep our datasheet drives busy
    // on a short-stroked 16 GB region, and each host added spreads the seeks wider
    // (docs/studies/parda.md). The calibrated study shows the paper's peak while the write cache
    // absorbs the writes (docs/studies/parda_calibrated.md).
    assert!(iops[4] < iops[0], "throughput does not grow with hosts in our model: {iops:?}");
    assert!(iops[4] > 0.4 * iops[0], "nor does it collapse: {iops:?}");
}

#[test]
fn fig7_static_windows_follow_littles_law() {
    let r = run("scenarios/studies/parda_static.toml", &[], Overrides::default());
    let (all, thr) = (variant(&r.variants, "all_32"), variant(&r.variants, "throttled_16"));
    let mean = |rep: &RunReport, hosts: &[&str], f: fn(&HostReport) -> f64| hosts.iter().map(|h| f(host(rep, h))).sum::<f64>() / hosts.len() as f64;
    let (free, throttled) = (["host1", "host2", "host3", "host4"], ["host5", "host6", "host7"]);
    let iops_ratio = mean(thr, &throttled, |h| h.iops) / mean(thr, &free, |h| h.iops);
    claim("parda.fig7.throttled_iops_ratio", iops_ratio);
    let lat_ratio = mean(thr, &throttled, |h| h.lat_ms.mean) / mean(thr, &free, |h| h.lat_ms.mean);
    claim("parda.fig7.throttled_latency_ratio", lat_ratio);
    for rep in [all, thr] {
        let device: Vec<f64> = rep.hosts.iter().map(|h| h.device_lat_ms).collect();
        let (lo, hi) = (device.iter().cloned().fold(f64::MAX, f64::min), device.iter().cloned().fold(0.0, f64::max));
        assert!(hi / lo < 1.15, "device latency alike across hosts: {device:?}");
    }
    let fall = 1.0 - device_ms(thr) / device_ms(all);
    claim("parda.fig7.device_latency_fall", fall);
}

#[test]
fn table2_throughput_follows_queue_length_and_preference_survives() {
    let r = run("scenarios/studies/parda_phases.toml", &[], Overrides::default());
    let (p1, p2) = (variant(&r.variants, "phase1"), variant(&r.variants, "phase2"));
    // Hosts 3 and 4 go from 32 to 16 in phase 2: each loses, together about in proportion.
    for h in ["host3", "host4"] {
        let ratio = host(p2, h).iops / host(p1, h).iops;
        assert!(ratio < 0.8, "{h}: throughput at 16 is {ratio:.2} of that at 32");
    }
    let pair = |rep: &RunReport| host(rep, "host3").iops + host(rep, "host4").iops;
    let ratio = pair(p2) / pair(p1);
    assert!((0.4..=0.7).contains(&ratio), "hosts 3 and 4 together: {ratio:.2} of their phase-1 throughput");
    let favoured_at_32 = host(p1, "host3").iops > host(p1, "host4").iops;
    let favoured_at_16 = host(p2, "host3").iops > host(p2, "host4").iops;
    assert_eq!(favoured_at_32, favoured_at_16, "the array's preference survives the smaller queue");
    assert!(total_iops(p2) < total_iops(p1), "less queued, less throughput");
}

#[test]
fn table3_fig8_throughput_follows_beta_near_the_threshold() {
    let r = run("scenarios/studies/parda_fairness.toml", &[], Overrides::default());
    let uncontrolled = total_iops(variant(&r.variants, "uncontrolled"));
    for (name, betas) in [("beta_1111", [1.0, 1.0, 1.0, 1.0]), ("beta_1122", [1.0, 1.0, 2.0, 2.0])] {
        let rep = variant(&r.variants, name);
        let threshold_ms = threshold_ms(rep);
        let window_per_beta = |k: usize| rep.hosts[k].window.as_ref().unwrap().mean / betas[k];
        let iops_per_beta = |k: usize| rep.hosts[k].iops / betas[k];
        for k in 1..4 {
            let ratio = window_per_beta(k) / window_per_beta(0);
            assert!((0.95..=1.05).contains(&ratio), "{name}: host{} window per beta {ratio:.3} of host1's", k + 1);
        }
        // Known divergence, a band around our output: per beta, hosts 3-4 get 1.26x hosts 1-2's
        // IOPS at both β settings (2,017 + 2,019 vs 1,600 + 1,594 at equal shares); the paper's
        // 1.07 (930 + 800 vs 730 + 890) and about 1.0 at 1:1:2:2. Hosts at the ends of the 64 GB
        // span get less, as in the paper, and our drives, reordering among 32 commands, serve a
        // deeper window more than proportionally (docs/studies/parda.md, "Table 3 and Fig. 8").
        // The calibrated array (parda_calibrated.toml, 14 commands per drive) gives 1.21 at 1:1:2:2.
        let pair = |i: usize, j: usize| iops_per_beta(i) + iops_per_beta(j);
        let ratio = pair(2, 3) / pair(0, 1);
        assert!((0.75..=1.3).contains(&ratio), "{name}: hosts 3-4 get {ratio:.3} of hosts 1-2's IOPS per beta");
        for h in &rep.hosts {
            let l = h.flow_control.as_ref().expect("controlled").latency_estimate_ms;
            assert!((l - threshold_ms).abs() <= 0.2 * threshold_ms, "{name}: {} latency estimate {l:.1} ms vs {threshold_ms}", h.name);
        }
        let device = device_ms(rep);
        assert!((device - threshold_ms).abs() <= 0.2 * threshold_ms, "{name}: device latency {device:.1} ms vs {threshold_ms}");
        // Known divergence, a band around our output: the paper lost nothing (3,350 vs 3,360);
        // our datasheet drives gain with every queued command, so PARDA's shorter windows cost
        // 8 % (β 1:1:1:1) and 13 % (1:1:2:2). The calibrated array loses 3.3 %.
        let aggregate = total_iops(rep);
        assert!((0.7..1.0).contains(&(aggregate / uncontrolled)), "{name}: aggregate {aggregate:.0} vs uncontrolled {uncontrolled:.0}");
    }
}

#[test]
fn table4_fig9_six_hosts_and_leaving_vms() {
    let r = run("scenarios/studies/parda_six_hosts.toml", &[], Overrides::default());
    let (unc, parda, leave) = (variant(&r.variants, "uncontrolled"), variant(&r.variants, "parda"), variant(&r.variants, "vms_leave"));
    let l = threshold_ms(parda);
    assert!(device_ms(unc) > 1.5 * l, "uncontrolled: {:.1} ms, twice the threshold as in the paper (60 vs 30 ms)", device_ms(unc));
    assert!((device_ms(parda) - l).abs() < 0.2 * l, "PARDA holds latency near {l} ms: {:.1}", device_ms(parda));
    // Known divergence, a band around our output: the paper kept its throughput (3,150 vs 3,130);
    // ours keeps 0.76 (6,224 vs 8,180): shorter windows cost our drives' reordering. The
    // calibrated array keeps 0.93 (3,118 vs 3,346).
    let kept = total_iops(parda) / total_iops(unc);
    assert!((0.65..1.0).contains(&kept), "aggregate {:.0} vs {:.0} uncontrolled (paper: the same)", total_iops(parda), total_iops(unc));
    // As VMs leave, the remaining hosts' windows grow and latency stays near the threshold.
    let before = series_mean(leave, "host1", "window", 100.0, 144.0);
    let after = series_mean(leave, "host1", "window", 350.0, 400.1);
    assert!(after > 1.5 * before, "host1's window grows from {before:.1} to {after:.1}");
    let late = series_mean(leave, "host1", "latency_estimate_ms", 350.0, 400.1);
    assert!((late - l).abs() < 0.2 * l, "latency near {l} ms after VMs leave: {late:.1}");
}

#[test]
fn table6_fig13_vm_iops_follow_shares_and_idle_vms_lower_beta() {
    let r = run("scenarios/studies/parda_end_to_end.toml", &[], Overrides::default());
    let shares = variant(&r.variants, "shares");
    let vm = |rep: &RunReport, name: &str| rep.vms.iter().find(|v| v.name == name).unwrap().iops;
    let within = |x: f64, want: f64| (x / want - 1.0).abs() <= 0.2;
    assert!(within(vm(shares, "oltp1") / vm(shares, "oltp2"), 2.0), "host1 VMs 20:10 -> {:.2}", vm(shares, "oltp1") / vm(shares, "oltp2"));
    assert!(within(vm(shares, "oltp3") / vm(shares, "oltp4"), 1.0), "host2 VMs 10:10");
    // Across hosts the array's favour adds to beta's (the paper: 740 vs 400 for beta 4:2).
    let micro = vm(shares, "micro3") / vm(shares, "micro4");
    assert!((1.6..=2.8).contains(&micro), "hosts 3:4 beta 4:2 -> {micro:.2}");
    let betas: Vec<f64> = shares.hosts.iter().map(|h| h.flow_control.as_ref().unwrap().beta).collect();
    assert_eq!(betas, [6.0, 4.0, 4.0, 2.0]);
    let windows: Vec<f64> = shares.hosts.iter().map(|h| h.window.as_ref().unwrap().mean).collect();
    assert!(within(windows[0] / windows[3], 3.0) && within(windows[1] / windows[3], 2.0), "windows follow beta 6:4:4:2: {windows:?}");

    let idle = variant(&r.variants, "idle_vm");
    assert_eq!(series_mean(idle, "host1", "beta", 200.0, 300.0), 4.0, "beta while oltp2 idles");
    assert_eq!(series_mean(idle, "host1", "beta", 330.0, 400.1), 6.0, "beta after it returns");
    let w_busy = series_mean(idle, "host1", "window", 100.0, 140.0) / series_mean(idle, "host4", "window", 100.0, 140.0);
    let w_idle = series_mean(idle, "host1", "window", 220.0, 300.0) / series_mean(idle, "host4", "window", 220.0, 300.0);
    assert!(w_idle < 0.8 * w_busy, "host1's window follows its beta down: {w_busy:.2} -> {w_idle:.2} of host4's");
}

#[test]
fn sioc_and_mclock_on_the_fig7_platform() {
    let r = run("scenarios/studies/sioc_vs_parda.toml", &[], Overrides::default());
    let (favoured, throttled) = (["host1", "host2", "host3", "host4"], ["host5", "host6", "host7"]);
    let mean = |rep: &RunReport, hosts: &[&str], f: fn(&HostReport) -> f64| hosts.iter().map(|h| f(host(rep, h))).sum::<f64>() / hosts.len() as f64;
    let uncontrolled = total_iops(variant(&r.variants, "uncontrolled"));

    // Manual 30 ms, shares 2000 vs 1000: IOPS 2:1 and L settles at 𝓛 + Σβ/X (the window law's
    // fixed point w = βL/(L − 𝓛) summed over hosts, with Little's law Σw = L·X).
    let manual = variant(&r.variants, "sioc_manual");
    let ratio = mean(manual, &favoured, |h| h.iops) / mean(manual, &throttled, |h| h.iops);
    assert!((1.7..=2.3).contains(&ratio), "sioc_manual: favoured/throttled IOPS {ratio:.2}, shares 2:1");
    let beta_sum: f64 = manual.hosts.iter().map(|h| h.flow_control.as_ref().unwrap().beta).sum();
    assert_eq!(beta_sum, 11.0, "β: four hosts at 2, three at 1");
    let fixed_point_ms = 30.0 + beta_sum / (total_iops(manual) / 1000.0);
    let l = manual.hosts[0].flow_control.as_ref().unwrap().latency_estimate_ms;
    assert!((l / fixed_point_ms - 1.0).abs() < 0.1, "sioc_manual: L {l:.1} ms vs 𝓛 + Σβ/X = {fixed_point_ms:.1} ms");
    assert!(total_iops(manual) > 0.9 * uncontrolled, "sioc_manual keeps the array busy");

    // Automatic: the injector's curve rises to a peak; the threshold is the latency at 90 % of it.
    let auto = r.variants.iter().find(|v| v.name == "sioc_automatic").unwrap();
    let inj = &auto.injector[0];
    let (first, peak_point) = (&inj.points[0], inj.points.iter().max_by(|a, b| a.iops.total_cmp(&b.iops)).unwrap());
    assert!(peak_point.iops > 3.0 * first.iops, "the injector finds a peak well above one outstanding read: {:?}", inj.points);
    assert!(inj.threshold_ms > first.latency_ms && inj.threshold_ms < peak_point.latency_ms, "threshold {:.2} ms inside the curve", inj.threshold_ms);
    assert_eq!(threshold_ms(&auto.report), inj.threshold_ms);
    // Measured on 8 KiB reads, it sits below any latency the 32 KiB mixed load can reach with
    // seven hosts at the smallest window: every window pins at w_min and shares stop mattering.
    for h in &auto.report.hosts {
        assert_eq!(h.window.as_ref().unwrap().last, 4.0, "{} pinned at w_min", h.name);
    }
    let ratio = mean(&auto.report, &favoured, |h| h.iops) / mean(&auto.report, &throttled, |h| h.iops);
    assert!((0.9..=1.15).contains(&ratio), "sioc_automatic: favoured/throttled IOPS {ratio:.2}");

    // mClock on each host: limits hold exactly; reservations are per host, so a reservation the
    // other hosts' load leaves no room for is not met.
    let limits = variant(&r.variants, "mclock");
    for h in throttled {
        let iops = host(limits, h).iops;
        assert!((iops / 100.0 - 1.0).abs() < 0.03, "mclock: {h} limited to 100 IOPS, got {iops:.1}");
    }
    let reserved = variant(&r.variants, "mclock_reservations");
    let got = mean(reserved, &favoured, |h| h.iops);
    assert!(got < 0.7 * 300.0, "per-host mClock cannot hold 300 IOPS against other hosts: {got:.0}");
}
