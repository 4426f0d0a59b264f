//! Seed 004: vdbench's rhpct/hitarea against an array whose cores own 1 MiB address segments.
use crate::common::run;
use sanlab_scenario::{Overrides, VariantResult};

const STUDY: &str = "scenarios/studies/vdbench_hitarea.toml";

/// (largest core share, mean share, utilisation of the busiest-by-share core)
fn skew(v: &VariantResult) -> (f64, f64, f64) {
    let cores = &v.report.arrays[0].cores;
    assert_eq!(cores.len(), 8);
    let hot = cores.iter().max_by(|a, b| a.share.total_cmp(&b.share)).unwrap();
    (hot.share, cores.iter().map(|c| c.share).sum::<f64>() / 8.0, hot.util.expect("a modelled core has a utilisation"))
}

#[test]
fn one_core_limits_the_array_until_the_hit_area_covers_all_cores() {
    let r = run(STUDY, &["hitarea_1m", "hitarea_8m", "hotband", "fio_zoned_abs"], Overrides { duration: Some("4s".into()), ..Overrides::default() });
    let (v1, v8, band, fio) = (&r.variants[0], &r.variants[1], &r.variants[2], &r.variants[3]);
    let (share1, _, util1) = skew(v1);
    assert!((0.70..0.80).contains(&share1), "1m: hot core serves {share1}");
    assert!(util1 > 0.95, "1m: the hot core is the bottleneck (util {util1})");
    let (share8, mean8, _) = skew(v8);
    assert!(share8 <= 1.25 * mean8, "8m: busiest core {share8} vs mean {mean8}");
    let (vm1, vm8) = (&v1.report.vms[0], &v8.report.vms[0]);
    assert!(vm8.iops > 1.5 * vm1.iops, "8m {} IOPS vs 1m {}", vm8.iops, vm1.iops);
    assert!(vm8.lat_ms.mean < vm1.lat_ms.mean);
    let (share_band, mean_band, _) = skew(band);
    assert!(share_band > 2.0 * mean_band, "hotband hot spot: {share_band}");
    // fio's zoned_abs form of rhpct=75/hitarea=1m gives the same picture.
    assert!((skew(fio).0 - share1).abs() < 0.02);
}
