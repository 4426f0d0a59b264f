//! Seed 004: vdbench's rhpct/hitarea against an array whose cores own 1 MiB address segments.
use crate::common::{claim, run};
use sanlab_model::array::cores::Cores;
use sanlab_scenario::{Overrides, VariantResult};
use sanlab_spec::Spec;

const STUDY: &str = "scenarios/studies/vdbench_hitarea.toml";

/// The study's cores, built from the scenario's `array[0].cores` table.
fn study_cores() -> Cores {
    let text = std::fs::read_to_string(crate::common::repo(STUDY)).unwrap();
    let t: toml::Table = text.parse().unwrap();
    let table = t["array"][0]["cores"].as_table().unwrap().clone();
    Cores::from_spec(Spec::new(&table, "array[0].cores")).unwrap()
}

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
    // Derived (docs/studies/vdbench_hitarea.md): the hit area is one segment, so its owner gets
    // the 75 % hits and its eighth of the 25 % misses, 0.75 + 0.25 / 8 = 0.78125. Measured over
    // this 4 s run, seeds 1-8, both variants: 0.7800-0.7824 (spread +-0.0013; one run's sampling
    // error is about 0.0007). Tolerance: +-0.003.
    let derived_share = 0.75 + 0.25 / 8.0;
    claim("hitarea.hot_core_share", share1);
    assert!(util1 > 0.95, "1m: the hot core is the bottleneck (util {util1})");
    // The core's ceiling: 10 us of owner work on each of its own requests, 10 us of data work on
    // each request whose fingerprint picks it. The page's "about 110,000" takes that fingerprint
    // share as 1/8: 1 / ((0.78125 + 0.125) x 10 us) = 110,345. The fingerprint is a fixed hash of
    // the block, though, and it puts 12 of the hit area's 128 8 KiB blocks on the hot core, so its
    // data share is 0.75 x 12/128 + 0.25 / 8 = 0.1016 and the ceiling 1 / ((0.78125 + 0.1016) x
    // 10 us) = 113,274 IOPS. Measured over this 4 s run, seeds 1-8, both variants: 113,077-113,484
    // (-0.17 % to +0.19 %). Tolerance: 0.5 %; 110,345 is 2.6 % below, outside it.
    let cores = study_cores();
    let hot = cores.owner(0);
    assert_eq!(cores.name(hot), "ctrl1.core1");
    let blocks: Vec<u64> = (0..128).map(|b| b * 8192).collect();
    let on_hot = blocks.iter().filter(|&&o| cores.data_core(o) == hot).count();
    assert_eq!(on_hot, 12, "hit-area blocks whose fingerprint lands on the hot core");
    let data_share = 0.75 * on_hot as f64 / 128.0 + 0.25 / 8.0;
    let ceiling = 1.0 / ((derived_share + data_share) * 10e-6);
    for v in [v1, fio] {
        let iops = v.report.vms[0].iops;
        assert!((iops - ceiling).abs() < 0.005 * ceiling, "{}: {iops} IOPS, derived ceiling {ceiling}", v.name);
        claim(if v.name == "fio_zoned_abs" { "hitarea.fio_ceiling" } else { "hitarea.ceiling" }, iops);
        // Little's law with 64 in flight: 64 / 113,274 = 0.565 ms.
        let in_flight = iops * v.report.vms[0].lat_ms.mean * 1e-3;
        assert!((in_flight - 64.0).abs() < 0.5, "{}: IOPS x mean latency = {in_flight}", v.name);
    }
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
