//! Every kind of bad input gets one message naming the file, the location and the fix.
use sanlab_scenario::{run_file, Overrides, Scenario};
mod common;
use common::{with_sets, write_scenario};

const BASE: &str = r#"
schema_version = 1
name = "t"
[run]
duration = "1s"
[[array]]
name = "a"
[[volume]]
name = "lun"
arrays = ["a"]
[[host]]
name = "h"
multipath = { psp = { kind = "rr", iops = 1 } }
[[path]]
host = "h"
array = "a"
count = 2
[[vm]]
name = "vm"
host = "h"
volume = "lun"
[[vm.job]]
rw = "randread"
"#;

fn error_for(text: &str, sets: &[&str]) -> String {
    let path = write_scenario(text);
    match run_file(&path, &[], &with_sets(sets), None) {
        Ok(_) => panic!("expected an error for {sets:?}"),
        Err(e) => e.0.replace(&path.display().to_string(), "FILE"),
    }
}

#[test]
fn base_is_valid() {
    Scenario::load(&write_scenario(BASE)).unwrap().validate(&[], &Overrides::default()).unwrap();
}

#[test]
fn unknown_key_names_location_and_closest() {
    let e = error_for(BASE, &["host[0].multipath.psp.use_anno=1"]);
    assert_eq!(e, "FILE: host[0].multipath.psp.use_anno: unknown key `use_anno`; expected one of: kind, type, iops, bytes, use_ano; did you mean `use_ano`?");
    let e = error_for(&BASE.replace("[run]", "duraton = 5\n[run]"), &[]);
    assert!(e.starts_with("FILE: duraton: unknown key `duraton`"), "{e}");
}

#[test]
fn unknown_kind() {
    let e = error_for(BASE, &["host[0].multipath.psp.kind=round_robin"]);
    assert!(e.starts_with("FILE: host[0].multipath.psp.kind: unknown kind `round_robin`: expected one of fixed, mru, rr, rr_latency"), "{e}");
}

#[test]
fn value_out_of_range() {
    let e = error_for(BASE, &["vm[0].job[0].iodepth=-4"]);
    assert_eq!(e, "FILE: vm[0].job[0].iodepth: -4 is out of range: expected 1..=65536 (nearest valid: 1)");
    let e = error_for(BASE, &["vm[0].adapter.disk_queue_depth=300"]);
    assert!(e.contains("vm[0].adapter.disk_queue_depth: 300 is out of range: expected 1..=254"), "{e}");
}

#[test]
fn missing_reference() {
    let e = error_for(BASE, &["path[0].array=b"]);
    assert_eq!(e, "FILE: path[0].array: no array named `b` (defined: a)");
    let e = error_for(&BASE.replace("arrays = [\"a\"]", "arrays = [\"aa\"]"), &[]);
    assert!(e.contains("volume[0].arrays: no array named `aa` (defined: a); did you mean `a`?"), "{e}");
}

#[test]
fn wrong_types_and_units() {
    let e = error_for(BASE, &["run.duration=5"]);
    assert!(e.contains("run.duration: expected duration as a string, found an integer `5`"), "{e}");
    let e = error_for(BASE, &["run.duration=5sec"]);
    assert!(e.contains("run.duration: `5sec` has unknown unit `sec`"), "{e}");
}

#[test]
fn toml_syntax_error_has_line_and_column() {
    let e = error_for(&BASE.replace("name = \"vm\"", "name = vm\""), &[]);
    assert!(e.starts_with("FILE: line 19, column 8: invalid TOML"), "{e}");
}

#[test]
fn missing_file_and_unknown_variant() {
    let e = run_file(std::path::Path::new("nope/missing.toml"), &[], &Overrides::default(), None).err().unwrap();
    assert!(e.0.starts_with("nope/missing.toml: cannot read the scenario"), "{}", e.0);
    let path = write_scenario(&format!("{BASE}\n[[variant]]\nname = \"fast\"\nset = {{}}\n"));
    let e = run_file(&path, &["fsat".into()], &Overrides::default(), None).err().unwrap();
    assert!(e.0.ends_with("no variant named `fsat`: expected one of fast; did you mean `fast`?"), "{}", e.0);
}

#[test]
fn bad_set_and_schema_version() {
    let e = error_for(BASE, &["vm[3].name=x"]);
    assert!(e.contains("vm[3].name: index 3 is out of range: there are 1 entries (from --set)"), "{e}");
    let e = error_for(&BASE.replace("schema_version = 1", "schema_version = 2"), &[]);
    assert!(e.contains("schema_version: version 2 is not supported"), "{e}");
    let e = error_for(BASE, &["nonsense"]);
    assert!(e.starts_with("--set `nonsense`: expected KEY=VALUE"), "{e}");
}

#[test]
fn psp_parameters_follow_esxi_ranges() {
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"rr_latency\", num_sampling_cycles=8}"]);
    assert!(e.contains("num_sampling_cycles: 8 is out of range: expected 16..=2147483647 (nearest valid: 16)"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"fixed\", preferred=\"h-a-7\"}"]);
    assert_eq!(e, "FILE: host[0].multipath.psp: preferred path `h-a-7` is not a path of this device; did you mean `h-a-0`?");
}

#[test]
fn queue_depths_qos_and_protocol_endpoints() {
    let e = error_for(BASE, &["host[0].adapter.lun_queue_depth=0"]);
    assert_eq!(e, "FILE: host[0].adapter.lun_queue_depth: 0 is out of range: expected 1..=4096 (nearest valid: 1)");
    let e = error_for(BASE, &["host[0].adapter={kind=\"sw_iscsi\", lun_queue_depth=5000}"]);
    assert!(e.ends_with("5000 is out of range: expected 1..=4096 (nearest valid: 4096)"), "{e}");
    let e = error_for(BASE, &["host[0].adapter={kind=\"sw_iscsi\", max_io_size=\"1MiB\"}"]);
    assert!(e.contains("host[0].adapter.max_io_size: 1048576 bytes is out of range for a sw_iscsi adapter"), "{e}");
    let e = error_for(BASE, &["volume[0].qos={min=2000, max=1000}"]);
    assert_eq!(e, "FILE: volume[0].qos.min: 2000 is above max (1000): expected min <= max");
    let e = error_for(BASE, &["volume[0].qos={max=1000, burst=500}"]);
    assert!(e.contains("volume[0].qos.burst: 500 is below max (1000): expected burst >= max"), "{e}");
    let e = error_for(BASE, &["volume[0].qos={cost_curve=[[4096, 100], [8192, 80]]}"]);
    assert!(e.contains("volume[0].qos.cost_curve: entry 1"), "{e}");
    let two_arrays = BASE.replace("[[volume]]", "[[array]]\nname = \"b\"\npe = \"a-pe\"\n[[volume]]");
    let e = error_for(&two_arrays, &[]);
    assert!(e.contains("array[1].pe: protocol endpoint `a-pe` is already array `a`'s"), "{e}");
    let e = error_for(BASE, &["host[0].scheduler={kind=\"fifo\", dsnro=0}"]);
    assert!(e.contains("host[0].scheduler.dsnro: 0 is out of range"), "{e}");
    let e = error_for(BASE, &["host[0].scheduler.kind=sfq"]);
    assert!(e.contains("unknown kind `sfq`: expected one of fifo, fair_share, esxi"), "{e}");
}

#[test]
fn reservations_and_limits_need_mclock_and_a_limit_above_the_reservation() {
    let e = error_for(BASE, &["host[0].scheduler.kind=mclock", "vm[0].reservation=700", "vm[0].limit=500"]);
    assert_eq!(e, "FILE: vm[0].limit: 500 IOPS is a limit below the reservation (700 IOPS): expected limit >= reservation, or 0 for none (nearest valid: 700)");
    let e = error_for(BASE, &["host[0].scheduler.kind=fifo", "vm[0].limit=500"]);
    assert_eq!(e, "FILE: vm[0].limit: an IOPS limit needs the mclock scheduler: set host[0].scheduler.kind = \"mclock\"");
    let e = error_for(BASE, &["vm[0].reservation=100"]);
    assert!(e.contains("vm[0].reservation: an IOPS reservation needs the mclock scheduler"), "{e}");
}

#[test]
fn every_shipped_scenario_is_valid() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut checked = 0;
    for dir in ["examples", "studies", "validation"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
                s.validate(&[], &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} scenarios");
}

#[test]
fn distributions_are_checked() {
    let e = error_for(BASE, &["path[0].link.latency={kind=\"lognormal\", mean=\"50us\", cv=-0.5}"]);
    assert_eq!(e, "FILE: path[0].link.latency.cv: -0.5 is out of range: expected 0..=100 (nearest valid: 0)");
    let e = error_for(BASE, &["path[0].link.latency={kind=\"lognormal\", mean=\"50us\", cv=nan}"]);
    assert_eq!(e, "FILE: path[0].link.latency.cv: NaN is not a number: expected 0..=100");
    let e = error_for(BASE, &["path[0].link.latency={kind=\"uniform\", min=\"80us\", max=\"50us\"}"]);
    assert_eq!(e, "FILE: path[0].link.latency.min: 80000 ns is above max (50000 ns): expected min <= max (nearest valid: 50000 ns)");
    let e = error_for(BASE, &["path[0].link.latency={kind=\"gaussian\", mean=\"50us\"}"]);
    assert!(e.contains("path[0].link.latency.kind: unknown kind `gaussian`: expected one of fixed, exponential, lognormal, uniform, empirical"), "{e}");
    let e = error_for(BASE, &["path[0].link.latency=5"]);
    assert!(e.contains("path[0].link.latency: expected a duration as a string (\"50us\") or a distribution table"), "{e}");
    let cdf = write_scenario("10us,0.5\n5us,0.7\n20us,1\n");
    let e = error_for(BASE, &[&format!("array[0].media.read_latency={{kind=\"empirical\", file={:?}}}", cdf.display().to_string())]);
    assert!(e.contains("array[0].media.read_latency.file: `") && e.ends_with("` is not a CDF: line 2: values and probabilities never decrease in a CDF"), "{e}");
}

#[test]
fn events_name_existing_paths_within_the_run() {
    let ev = |body: &str| format!("{BASE}\n[[event]]\n{body}\n");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-7\"\nat = \"0.5s\""), &[]);
    assert!(e.contains("event[0].path: no path named `h-a-7` (defined: h-a-0, h-a-1); did you mean `h-a-0`?"), "{e}");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"5s\""), &[]);
    assert_eq!(e, "FILE: event[0].at: 5s is beyond the run (1s): expected a time within it");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nuntil = \"0.2s\""), &[]);
    assert_eq!(e, "FILE: event[0].until: 0.2s is not after `at` (0.5s): expected until > at");
    let two = format!("{}[[event]]\nkind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.6s\"\n", ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nuntil = \"0.8s\""));
    let e = error_for(&two, &[]);
    assert!(e.contains("event[1].at: overlaps an event of the same kind on path `h-a-0` (from 0.5s)"), "{e}");
    let e = error_for(&ev("kind = \"link_latency\"\npath = \"h-a-0\"\nat = \"0.5s\""), &[]);
    assert!(e.contains("event[0].latency: is required"), "{e}");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nevery = \"1s\""), &[]);
    assert!(e.contains("event[0].every: needs `until`"), "{e}");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nuntil = \"0.7s\"\nevery = \"0.1s\""), &[]);
    assert!(e.contains("event[0].every: 0.1s is not longer than each time (0.2s"), "{e}");
    let e = error_for(&ev("kind = \"path_flap\"\npath = \"h-a-0\"\nat = \"0.5s\""), &[]);
    assert!(e.contains("event[0].kind: unknown kind `path_flap`: expected one of path_down, link_latency"), "{e}");
}
