//! Noise: latency parameters drawn from distributions, each entity on its own random stream.
use crate::common::run_text as run;
use sanlab_scenario::VariantResult;

/// Two independent sites (host, path, array, VM), both links noisy.
const TWO_SITES: &str = r#"
schema_version = 1
name = "noise"
[run]
duration = "2s"
[[array]]
name = "a"
[[array]]
name = "b"
[[volume]]
name = "va"
arrays = ["a"]
[[volume]]
name = "vb"
arrays = ["b"]
[[host]]
name = "ha"
[[host]]
name = "hb"
[[path]]
host = "ha"
array = "a"
link = { latency = { kind = "lognormal", mean = "100us", cv = 1.0 } }
[[path]]
host = "hb"
array = "b"
link = { latency = { kind = "exponential", mean = "100us" } }
[[vm]]
name = "vma"
host = "ha"
volume = "va"
[[vm.job]]
rw = "randread"
[[vm]]
name = "vmb"
host = "hb"
volume = "vb"
[[vm.job]]
rw = "randread"
"#;

/// The report of one path and of the VM behind it, as JSON text.
fn figures(r: &VariantResult, path: &str, vm: &str) -> String {
    let rep = &r.report;
    let p = rep.paths.iter().find(|p| p.name == path).unwrap();
    let v = rep.vms.iter().find(|v| v.name == vm).unwrap();
    format!("{}\n{}", serde_json::to_string(p).unwrap(), serde_json::to_string(v).unwrap())
}

#[test]
fn noise_on_one_link_leaves_the_other_site_identical() {
    let base = run(TWO_SITES, &[]);
    let louder = run(TWO_SITES, &["path[0].link.latency={kind=\"lognormal\", mean=\"300us\", cv=2.0}"]);
    assert_ne!(figures(&base, "ha-a", "vma"), figures(&louder, "ha-a", "vma"));
    assert_eq!(figures(&base, "hb-b", "vmb"), figures(&louder, "hb-b", "vmb"));
}

#[test]
fn a_noisy_path_has_a_tail() {
    let r = run(TWO_SITES, &[]);
    let p = r.report.paths.iter().find(|p| p.name == "ha-a").unwrap();
    assert!(p.lat_ms.p99 > 2.0 * p.lat_ms.p50, "p50 {} ms, p99 {} ms", p.lat_ms.p50, p.lat_ms.p99);
}

#[test]
fn a_fixed_distribution_is_a_plain_duration() {
    let fixed = ["path[0].link.latency={kind=\"fixed\", value=\"100us\"}", "path[1].link.latency={kind=\"fixed\", value=\"100us\"}"];
    let plain = ["path[0].link.latency=100us", "path[1].link.latency=100us"];
    let (a, b) = (run(TWO_SITES, &fixed), run(TWO_SITES, &plain));
    assert_eq!(figures(&a, "ha-a", "vma"), figures(&b, "ha-a", "vma"));
    let p = a.report.paths.iter().find(|p| p.name == "ha-a").unwrap();
    assert_eq!(p.lat_ms.p50, p.lat_ms.p99, "no noise, no tail");
}

#[test]
fn media_cores_and_cache_take_distributions() {
    let sets = [
        "array[0].media={kind=\"flash\", read_latency={kind=\"uniform\", min=\"100us\", max=\"300us\"}}",
        "array[0].cores={owner_time={kind=\"exponential\", mean=\"5us\"}}",
        "array[0].cache={hit_latency={kind=\"lognormal\", mean=\"30us\", cv=0.3}}",
    ];
    let r = run(TWO_SITES, &sets);
    let a = r.report.arrays.iter().find(|a| a.name == "a").unwrap();
    assert!(a.lat_ms.p99 > 1.2 * a.lat_ms.p50, "p50 {} ms, p99 {} ms", a.lat_ms.p50, a.lat_ms.p99);
}
