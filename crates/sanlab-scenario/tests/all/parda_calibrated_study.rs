//! PARDA (FAST '09) in the paper's own numbers: the array fitted on Table 3's uncontrolled run
//! (scenarios/studies/parda/paper_hosts_calibrated.toml) predicts the other experiments. Each band
//! is the paper's figure with the prediction error docs/studies/parda_calibrated.md derives, plus
//! the noise of a 200 s measurement (under 1 %); the divergences are named where they are asserted.
use crate::common::{run, with_sets};
use crate::parda_study::{device_ms, host, overall_ms, total_iops, variant};
use sanlab_model::report::RunReport;
use sanlab_scenario::Overrides;

const STUDY: &str = "scenarios/studies/parda_calibrated.toml";

fn within(got: f64, paper: f64, tolerance: f64, what: &str) {
    let error = got / paper - 1.0;
    assert!(error.abs() <= tolerance, "{what}: {got:.1} against the paper's {paper} ({:+.1} %, band ±{:.0} %)", error * 100.0, tolerance * 100.0);
}

fn hosts_iops(r: &RunReport, n: usize) -> Vec<f64> {
    (1..=n).map(|i| host(r, &format!("host{i}")).iops).collect()
}

#[test]
fn tables_3_and_4_are_predicted_from_table_3_uncontrolled() {
    let r = run(STUDY, &["table3_uncontrolled", "table3_parda30", "table4_uncontrolled", "table4_parda30"], Overrides::default());
    // The fitted point itself: per host within 3 % (the fit's largest error is 3.6 %, on a latency).
    let fitted = variant(&r.variants, "table3_uncontrolled");
    for (got, paper) in hosts_iops(fitted, 4).into_iter().zip([780.0, 900.0, 890.0, 790.0]) {
        within(got, paper, 0.03, "Table 3 uncontrolled, host IOPS");
    }
    // Predictions: PARDA at the paper's 30 ms, no scaling.
    let t3 = variant(&r.variants, "table3_parda30");
    within(total_iops(t3), 3350.0, 0.05, "Table 3 PARDA 30 ms, aggregate IOPS");
    for (got, paper) in hosts_iops(t3, 4).into_iter().zip([730.0, 890.0, 930.0, 800.0]) {
        within(got, paper, 0.08, "Table 3 PARDA 30 ms, host IOPS");
    }
    for (i, paper) in [34.0, 29.0, 29.0, 33.0].into_iter().enumerate() {
        within(host(t3, &format!("host{}", i + 1)).device_lat_ms, paper, 0.06, "Table 3 PARDA 30 ms, host latency");
    }
    let t4 = variant(&r.variants, "table4_uncontrolled");
    within(total_iops(t4), 3130.0, 0.09, "Table 4 uncontrolled, aggregate IOPS");
    within(overall_ms(t4), 60.0, 0.07, "Table 4 uncontrolled, mean latency");
    let t4p = variant(&r.variants, "table4_parda30");
    within(total_iops(t4p), 3150.0, 0.04, "Table 4 PARDA 30 ms, aggregate IOPS");
    within(device_ms(t4p), 30.0, 0.10, "Table 4 PARDA 30 ms, latency at the hosts");
}

#[test]
fn fig7_static_windows_are_predicted_within_twenty_percent() {
    let r = run(STUDY, &["fig7_all_32", "fig7_throttled_16"], Overrides::default());
    let (all, thr) = (variant(&r.variants, "fig7_all_32"), variant(&r.variants, "fig7_throttled_16"));
    // Known divergence (docs/studies/parda_calibrated.md): the fit saw only 16 KiB reads; the
    // predicted 5-disk group with a third of 32 KiB writes is 15-20 % faster than the paper's.
    within(device_ms(all), 470.0, 0.16, "Fig. 7 all at 32, latency at the hosts");
    within(device_ms(thr), 375.0, 0.20, "Fig. 7 throttled, latency at the hosts");
    let mean = |ps: &[f64]| ps.iter().sum::<f64>() / ps.len() as f64;
    let iops = hosts_iops(thr, 7);
    within(mean(&iops[..4]), 85.0, 0.22, "Fig. 7 throttled, the other hosts' IOPS");
    within(mean(&iops[4..]), 42.0, 0.22, "Fig. 7 throttled, the throttled hosts' IOPS");
    let vm_lat: Vec<f64> = (1..=7).map(|i| host(thr, &format!("host{i}")).lat_ms.mean).collect();
    within(mean(&vm_lat[..4]), 360.0, 0.16, "Fig. 7 throttled, the other VMs' latency");
    within(mean(&vm_lat[4..]), 780.0, 0.22, "Fig. 7 throttled, the throttled VMs' latency");
}

#[test]
fn fig8_windows_follow_beta_and_throughput_a_little_more() {
    let r = run(STUDY, &["fig8_beta_1122"], Overrides::default());
    let f8 = variant(&r.variants, "fig8_beta_1122");
    let windows: Vec<f64> = f8.hosts.iter().filter(|h| h.iops > 0.0).map(|h| h.window.as_ref().expect("PARDA").mean).collect();
    within(windows[2] / windows[0], 2.0, 0.05, "Fig. 8 window ratio, beta 2 : 1");
    within(device_ms(f8), 25.0, 0.15, "Fig. 8 latency at the hosts");
    // Known divergence: the paper's throughput is close to 1:2; the fitted array serves a deeper
    // queue more than proportionally (its drives reorder among 14 commands): about 2.4.
    let iops = hosts_iops(f8, 4);
    let ratio = (iops[2] + iops[3]) / (iops[0] + iops[1]);
    assert!((2.0..=2.6).contains(&ratio), "beta 2 hosts get {ratio:.2}x the beta 1 hosts (paper: about 2)");
}

#[test]
fn fig6_latency_rises_and_throughput_peaks_only_while_the_cache_absorbs_the_writes() {
    let names: Vec<String> = (1..=5).map(|n| format!("fig6_hosts_{n}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let series = |o: Overrides| {
        let r = run(STUDY, &names, o);
        let iops: Vec<f64> = names.iter().map(|n| total_iops(variant(&r.variants, n))).collect();
        let lat: Vec<f64> = names.iter().map(|n| overall_ms(variant(&r.variants, n))).collect();
        (iops, lat)
    };
    let (iops, lat) = series(Overrides::default());
    for n in 1..5 {
        assert!(lat[n] > lat[n - 1] * 1.15, "latency keeps rising: {lat:?}");
    }
    // Known divergence: destaging RAID-5 writes keeps the fitted drives busy from one host on.
    assert!(iops[4] < iops[0], "with the 2 GiB cache destaging, throughput falls: {iops:?}");
    // With a cache that holds the run's writes, only reads reach the drives: the paper's peak at 3.
    let (iops, _) = series(with_sets(&["array[0].media.write_cache=8GiB"]));
    let peak = iops.iter().cloned().fold(0.0, f64::max);
    assert_eq!(iops[2], peak, "throughput peaks at three hosts: {iops:?}");
}
