//! PARDA (FAST '09) in the paper's own numbers: the array fitted on Table 3's uncontrolled run
//! (scenarios/studies/parda/paper_hosts_calibrated.toml) predicts the other experiments. The paper
//! gives no error bars: a prediction's tolerance (all but Fig. 8's window ratio) is our error plus
//! a margin for the seeds' noise, drawn around our output, so the claim says "known divergence";
//! the margins' arithmetic is in docs/studies/parda_calibrated.md.
use crate::common::{claim, run, with_sets};
use crate::parda_study::{device_ms, host, overall_ms, total_iops, variant};
use sanlab_model::report::RunReport;
use sanlab_scenario::Overrides;

const STUDY: &str = "scenarios/studies/parda_calibrated.toml";

fn hosts_iops(r: &RunReport, n: usize) -> Vec<f64> {
    (1..=n).map(|i| host(r, &format!("host{i}")).iops).collect()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

// Targets and tolerances: tests/data/claims.toml (`parda_cal.*`), printed in docs/validation.md.
#[test]
fn tables_3_and_4_are_predicted_from_table_3_uncontrolled() {
    let r = run(STUDY, &["table3_uncontrolled", "table3_parda30", "table4_uncontrolled", "table4_parda30"], Overrides::default());
    // The fitted point itself (the fit's largest error is 3.6 %, on a latency).
    for (i, iops) in hosts_iops(variant(&r.variants, "table3_uncontrolled"), 4).into_iter().enumerate() {
        claim(&format!("parda_cal.t3_uncontrolled.host{}_iops", i + 1), iops);
    }
    // Predictions: PARDA at the paper's 30 ms, no scaling.
    let t3 = variant(&r.variants, "table3_parda30");
    claim("parda_cal.t3_parda30.aggregate", total_iops(t3));
    for (i, iops) in hosts_iops(t3, 4).into_iter().enumerate() {
        claim(&format!("parda_cal.t3_parda30.host{}_iops", i + 1), iops);
        claim(&format!("parda_cal.t3_parda30.host{}_latency", i + 1), host(t3, &format!("host{}", i + 1)).device_lat_ms);
    }
    let t4 = variant(&r.variants, "table4_uncontrolled");
    // Host 5 is the page's one miss (+32 %): the paper's host 5 sat somewhere the others did not.
    for (i, iops) in hosts_iops(t4, 6).into_iter().enumerate() {
        claim(&format!("parda_cal.t4_uncontrolled.host{}_iops", i + 1), iops);
    }
    claim("parda_cal.t4_uncontrolled.aggregate", total_iops(t4));
    claim("parda_cal.t4_uncontrolled.latency", overall_ms(t4));
    let t4p = variant(&r.variants, "table4_parda30");
    claim("parda_cal.t4_parda30.aggregate", total_iops(t4p));
    claim("parda_cal.t4_parda30.latency", device_ms(t4p));
}

#[test]
fn fig7_static_windows_are_predicted_within_twenty_percent() {
    let r = run(STUDY, &["fig7_all_32", "fig7_throttled_16"], Overrides::default());
    let (all, thr) = (variant(&r.variants, "fig7_all_32"), variant(&r.variants, "fig7_throttled_16"));
    // Known divergence (docs/studies/parda_calibrated.md): the fit saw only 16 KiB reads; the
    // predicted 5-disk group with a third of 32 KiB writes is 15-20 % faster than the paper's.
    claim("parda_cal.fig7_all32.latency", device_ms(all));
    claim("parda_cal.fig7_throttled.latency", device_ms(thr));
    let iops = hosts_iops(thr, 7);
    claim("parda_cal.fig7_throttled.other_iops", mean(&iops[..4]));
    claim("parda_cal.fig7_throttled.throttled_iops", mean(&iops[4..]));
    let vm_lat: Vec<f64> = (1..=7).map(|i| host(thr, &format!("host{i}")).lat_ms.mean).collect();
    claim("parda_cal.fig7_throttled.other_vm_latency", mean(&vm_lat[..4]));
    claim("parda_cal.fig7_throttled.throttled_vm_latency", mean(&vm_lat[4..]));
}

#[test]
fn fig8_windows_follow_beta_and_throughput_a_little_more() {
    let r = run(STUDY, &["fig8_beta_1122"], Overrides::default());
    let f8 = variant(&r.variants, "fig8_beta_1122");
    let windows: Vec<f64> = f8.hosts.iter().filter(|h| h.iops > 0.0).map(|h| h.window.as_ref().expect("PARDA").mean).collect();
    claim("parda_cal.fig8.window_ratio", windows[2] / windows[0]);
    claim("parda_cal.fig8.latency", device_ms(f8));
    // Known divergence: the paper's throughput is close to 1:2; the fitted array serves a deeper
    // queue more than proportionally (its drives reorder among 14 commands): about 2.4.
    let iops = hosts_iops(f8, 4);
    claim("parda_cal.fig8.throughput_ratio", (iops[2] + iops[3]) / (iops[0] + iops[1]));
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
