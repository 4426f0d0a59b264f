//! Every kind of bad input gets one message naming the file, the location and the fix.
use sanlab_scenario::{run_file, Overrides, Scenario};
use crate::common::{with_sets, write_scenario};

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
    assert!(e.contains("vm[3].name: index 3 is out of range: `vm` has 1 entry, [0] (from --set)"), "{e}");
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
fn other_platforms_selector_parameters_are_checked() {
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"dm_historical_service_time\", base_weight=1024}"]);
    assert!(e.contains("host[0].multipath.psp.base_weight: 1024 is out of range: expected 0..=1023 (nearest valid: 1023)"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"dm_service_time\", relative_throughput={h-a-0=101}}"]);
    assert!(e.contains("host[0].multipath.psp.relative_throughput.h-a-0: 101 is out of range: expected 0..=100 (nearest valid: 100)"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"mpio_weighted_paths\", weights={h-a-0=-1}}"]);
    assert!(e.contains("host[0].multipath.psp.weights.h-a-0: -1 is out of range: expected 0..=1000000 (nearest valid: 0)"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"mpio_weighted_paths\", weights={h-a-9=1}}"]);
    assert!(e.contains("weights names `h-a-9`, which is not a path of this device; did you mean `h-a-0`?"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"dm_queue_lenght\"}"]);
    assert!(e.contains("host[0].multipath.psp.kind: unknown kind `dm_queue_lenght`") && e.contains("did you mean `dm_queue_length`?"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"significant_latency\", probe_interval=\"0s\"}"]);
    assert!(e.contains("host[0].multipath.psp.probe_interval: must be positive"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"significant_latency\", clip_ratio=0.5}"]);
    assert!(e.contains("host[0].multipath.psp.clip_ratio: 0.5 is out of range") && e.contains("(nearest valid: 1)"), "{e}");
    let e = error_for(BASE, &["host[0].multipath.psp={kind=\"significant_latency\", probe_share=0}"]);
    assert!(e.contains("host[0].multipath.psp.probe_share: 0 is out of range"), "{e}");
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
fn shares_are_named_or_numbered() {
    let e = error_for(BASE, &["vm[0].shares=\"hihg\""]);
    assert_eq!(e, "FILE: vm[0].shares: `hihg`: expected low, normal, high or a number 100..=10000; did you mean `high`?");
    let e = error_for(BASE, &["vm[0].shares=50"]);
    assert!(e.contains("vm[0].shares: 50 is out of range: expected low, normal, high or 100..=10000 (nearest valid: 100)"), "{e}");
}

#[test]
fn sioc_automatic_parameters_are_checked() {
    let e = error_for(BASE, &["volume[0].flow_control={kind=\"sioc\", threshold_mode=\"automatic\", percent_of_peak=101}"]);
    assert!(e.contains("volume[0].flow_control.percent_of_peak: 101 is out of range: expected 50..=100"), "{e}");
    let e = error_for(BASE, &["volume[0].flow_control={kind=\"sioc\", threshold_mode=\"automatic\", injector_io_size=\"1000\"}"]);
    assert!(e.contains("injector_io_size: 1000 bytes: expected a positive multiple of 512 (nearest valid: 512)"), "{e}");
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

/// Asserts that each `--set` is rejected with a message containing the text given.
fn assert_rejected(cases: &[(&str, &str)]) {
    for (set, expected) in cases {
        let e = error_for(BASE, &[set]);
        assert!(e.contains(expected), "{set}: {e}");
        assert!(!e.contains('\n'), "{set}: one line: {e}");
    }
}

#[test]
fn overflow_nan_and_infinity_are_errors_where_written() {
    assert_rejected(&[
        ("run.duration=99999999999999999999999h", "run.duration: `99999999999999999999999h` is beyond the largest duration sanlab accepts, 365 days"),
        ("array[0].media={kind=\"flash\", read_latency=\"99999999999999999999999h\"}", "array[0].media.read_latency: `99999999999999999999999h` is beyond the largest duration"),
        ("vm[0].job[0].size=\"99999999999999999999GiB\"", "vm[0].job[0].size: `99999999999999999999GiB` is beyond the largest size sanlab accepts, 1 EiB"),
        ("vm[0].job[0].rate_iops=\"1e-300\"", "vm[0].job[0].rate_iops: rate `1e-300` is out of range: expected 0 or 3.171e-8..=1e9 IOPS"),
        ("vm[0].job[0].rate_iops=nan", "rate_iops: `NaN` is not a finite number"),
        ("vm[0].job[0].random_distribution=\"zipf:nan\"", "random_distribution: zipf: parameter `nan` is not a finite number"),
        ("vm[0].job[0].random_distribution=\"pareto:nan\"", "random_distribution: pareto: parameter `nan` is not a finite number"),
        ("vm[0].job[0].random_distribution=\"normal:inf\"", "random_distribution: normal: parameter `inf` is not a finite number"),
        ("vm[0].job[0].random_distribution=\"zoned:100/nan\"", "zoned zone `100/nan`: range percent `nan` is not a finite number"),
        ("vm[0].job[0].random_distribution=\"zoned:4294967196/10:100/90\"", "zoned zone `4294967196/10`: access percent 4294967196 is out of range: expected 0..=100"),
        ("vm[0].job[0].random_distribution=\"zoned_abs:50/1000000000GiB:50/1000000000GiB\"", "zoned_abs zones cover 2147483648000000000 bytes, more than the job's region"),
        ("vm[0].job[0].offset=\"18446744073709551615\"", "vm[0].job[0].offset: `18446744073709551615` is beyond the largest size sanlab accepts, 1 EiB"),
        ("vm[0].job[0]={offset=\"1073741000GiB\", size=\"1000GiB\"}", "vm[0].job[0].offset: the job's region would end beyond 1 EiB"),
        ("vm[0].job[0]={numjobs=4, offset_increment=\"1000000000GiB\"}", "vm[0].job[0].offset_increment: the job's region would end beyond 1 EiB"),
        ("vm[0].job[0].thinktime=\"99999999999999999999999\"", "vm[0].job[0].thinktime: `99999999999999999999999` is beyond the largest duration"),
        ("vm[0].job[0].runtime=\"999999999999\"", "vm[0].job[0].runtime: `999999999999` is beyond the largest duration"),
    ]);
    let e = error_for(BASE, &[&format!("run.duration=1{}s", "0".repeat(400))]);
    assert!(e.contains("run.duration: `1000") && e.ends_with("is not a finite number"), "{e}");
}

#[test]
fn names_that_become_file_names_are_checked_where_written() {
    let two_jobs = |a: &str, b: &str| BASE.replace("[[vm.job]]\nrw = \"randread\"", &format!("[[vm.job]]\nname = \"{a}\"\n[[vm.job]]\nname = \"{b}\""));
    let e = error_for(&two_jobs("a b", "a_b"), &[]);
    assert_eq!(e, "FILE: vm[0].job[1].name: jobs `a b` and `a_b` would share the file name `a_b`: rename one");
    let e = error_for(&two_jobs("x", ".."), &[]);
    assert_eq!(e, "FILE: vm[0].job[1].name: name `..` gives no file name: use letters, digits, `.`, `_` or `-`");
    let e = error_for(&two_jobs("a\\tb", "a\\nb"), &[]);
    assert_eq!(e, "FILE: vm[0].job[1].name: jobs `a\\tb` and `a\\nb` would share the file name `a_b`: rename one", "names shown escaped, on one line");
    let e = error_for(&BASE.replace("name = \"t\"", &format!("name = \"{}\"", "n".repeat(300))), &[]);
    assert!(e.starts_with("FILE: name: name `nnnnnnnnnnnnnnnnnnnn…` is 300 characters long: at most 120"), "{e}");
}

#[test]
fn resource_limits_are_checked_before_the_run() {
    let e = error_for(BASE, &["run.sample_interval=1ns"]);
    assert_eq!(e, "FILE: run.sample_interval: 1000000000 samples of 6 entities make about 184.0 GB of time series, above the limit of 1.1 GB: use a sample_interval of at least 1us");
    let e = error_for(BASE, &["vm[0].job[0]={numjobs=4096, iodepth=65536}"]);
    assert_eq!(e, "FILE: vm[0]: with job `vm-0.64`, the jobs would keep 268435456 requests outstanding (iodepth x numjobs, summed), above the limit of 4194304: lower iodepth or numjobs");
    // 1024 paths: no histogram is allocated before the run, so this validates at once.
    let wide = BASE.replace("count = 2", "count = 1024");
    let start = std::time::Instant::now();
    Scenario::load(&write_scenario(&wide)).unwrap().validate(&[], &Overrides::default()).unwrap();
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
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
    assert!(e.contains("event[1].at: overlaps another path_down event on path h-a-0 (from 0.5s)"), "{e}");
    let e = error_for(&ev("kind = \"link_latency\"\npath = \"h-a-0\"\nat = \"0.5s\""), &[]);
    assert!(e.contains("event[0].latency: is required"), "{e}");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nevery = \"1s\""), &[]);
    assert!(e.contains("event[0].every: needs `until`"), "{e}");
    let e = error_for(&ev("kind = \"path_down\"\npath = \"h-a-0\"\nat = \"0.5s\"\nuntil = \"0.7s\"\nevery = \"0.1s\""), &[]);
    assert!(e.contains("event[0].every: 0.1s is not longer than each time (0.2s"), "{e}");
    let e = error_for(&ev("kind = \"path_flap\"\npath = \"h-a-0\"\nat = \"0.5s\""), &[]);
    assert!(e.contains("event[0].kind: unknown kind `path_flap`: expected one of path_down, link_latency"), "{e}");
}

#[test]
fn events_name_existing_adapters_ports_controllers_pairs_and_volumes() {
    let ev = |body: &str| format!("{BASE}\n[[event]]\n{body}\nat = \"0.5s\"\n");
    let e = error_for(&ev("kind = \"adapter_down\"\nhost = \"h\"\nadapter = \"vmhba1\""), &[]);
    assert!(e.contains("event[0].adapter: host `h` has no paths on adapter `vmhba1` (its adapters: vmhba0); did you mean `vmhba0`?"), "{e}");
    let e = error_for(&ev("kind = \"port_down\"\narray = \"a\"\nport = \"ctrl1.fc9\""), &[]);
    assert!(e.contains("event[0].port: no path reaches port `ctrl1.fc9` of array `a` (its ports with paths: ctrl1.fc1, ctrl2.fc1)"), "{e}");
    let e = error_for(&ev("kind = \"controller_down\"\narray = \"a\"\ncontroller = \"ctrl3\""), &[]);
    assert!(e.contains("event[0].controller: array `a` has no controller `ctrl3`: expected one of ctrl1, ctrl2"), "{e}");
    let e = error_for(&ev("kind = \"replication_down\"\narrays = [\"a\", \"a\"]"), &[]);
    assert!(e.contains("event[0].arrays: `a` and `a` are not a [[replication]] pair"), "{e}");
    let e = error_for(&ev("kind = \"replication_down\"\narrays = [\"a\"]"), &[]);
    assert!(e.contains("event[0].arrays: expected the two arrays of a [[replication]] pair"), "{e}");
    let e = error_for(&ev("kind = \"alua_state\"\narray = \"a\"\nstate = \"optimised\""), &[]);
    assert!(e.contains("event[0].state: "), "{e}");
    let e = error_for(&ev("kind = \"device_lost\"\narray = \"a\"\nvolume = \"lum\""), &[]);
    assert!(e.contains("event[0].volume: no volume named `lum` (defined: lun); did you mean `lun`?"), "{e}");
    let e = error_for(&ev("kind = \"link_bandwidth\"\npath = \"h-a-0\"\nbandwidth = \"0Gb/s\""), &[]);
    assert!(e.contains("event[0].bandwidth: `0Gb/s`: a bandwidth must be positive"), "{e}");
    let e = error_for(&BASE.replace("[[path]]", "failover = { apd_timeout = \"sometimes\" }\n[[path]]"), &[]);
    assert!(e.contains("host[0].failover.apd_timeout"), "{e}");
}

#[test]
fn a_service_that_takes_no_time_is_refused_as_it_would_never_end() {
    assert_rejected(&[
        ("array[0].media={kind=\"flash\", read_latency=\"0ns\"}", "array[0].media.read_latency: must be at least 1us: no storage answers a command faster"),
        ("array[0].media={kind=\"flash\", read_latency=\"1ns\"}", "(nearest valid: \"1us\")"),
        ("array[0].cache={hit_latency=\"0us\"}", "array[0].cache.hit_latency: must be at least 1us"),
        ("array[0].media={kind=\"disk_group\", write_ack=\"999ns\"}", "array[0].media.write_ack: must be at least 1us"),
    ]);
}

#[test]
fn variant_names_and_base_files_are_checked_by_the_scenario_reader() {
    let two = format!("{BASE}\n[[variant]]\nname = \"a b\"\nset = {{}}\n\n[[variant]]\nname = \"a_b\"\nset = {{}}\n");
    let e = error_for(&two, &[]);
    assert!(e.contains("variant[1].name: variants `a b` and `a_b` would share the file name `a_b`: rename one"), "{e}");
    let e = error_for(&format!("base = \"/dev/zero\"\n{BASE}"), &[]);
    assert!(e.contains("base: cannot read `/dev/zero`: not a regular file"), "{e}");
}

#[test]
fn a_mistake_every_variant_overrides_is_still_found() {
    let text = BASE.replace("kind = \"rr\", iops = 1", "kind = \"rrr\"") + "[[variant]]\nname = \"v\"\nset = { \"host[0].multipath.psp\" = \"fixed\" }\n";
    let e = error_for(&text, &[]);
    assert!(e.starts_with("FILE: host[0].multipath.psp.kind: unknown kind `rrr`"), "{e}");
    assert!(e.ends_with("did you mean `rr`? (in the scenario as written, before any variant's `set`)"), "{e}");
    // Overrides on the command line may address a variant's kind: the file as written is checked without them.
    let e = error_for(&text, &["host[0].multipath.psp=rr"]);
    assert!(e.ends_with("(in the scenario as written, before any variant's `set`)"), "{e}");
    let text = text.replace("kind = \"rrr\"", "kind = \"rr\"") + "[[variant]]\nname = \"latency\"\nset = { \"host[0].multipath.psp\" = \"rr_latency\" }\n";
    run_file(&write_scenario(&text), &["latency".to_string()], &with_sets(&["host[0].multipath.psp.num_sampling_cycles=160"]), None).unwrap();
}

#[test]
fn a_list_that_replaces_its_bases_says_so() {
    let base = write_scenario(BASE);
    let child = format!("base = \"{}\"\n[[path]]\narray = \"a\"\n", base.file_name().unwrap().to_str().unwrap());
    let path = base.with_extension("child.toml");
    std::fs::write(&path, child).unwrap();
    let e = run_file(&path, &[], &Overrides::default(), None).err().expect("an error").0;
    let base_file = base.display().to_string();
    assert_eq!(
        e,
        format!("{}: path[0].host: is required: expected string (this file's `path` replaces the list of base `{base_file}` and its 1 entry: lists are not merged with a base's; repeat the entries you need)", path.display())
    );
}

#[test]
fn a_run_within_its_warm_up_says_what_to_do() {
    let e = error_for(BASE, &["run.warmup=2s"]);
    assert_eq!(e, "FILE: run.warmup: 2s must be shorter than run.duration (1s): run longer than the warm-up (e.g. --duration 4s) or shorten it (--set run.warmup=0s)");
}

#[test]
fn a_mistyped_section_is_named_first() {
    let e = error_for(&BASE.replace("[[path]]", "[[paths]]"), &[]);
    assert!(e.starts_with("FILE: paths: unknown key `paths`; expected one of: schema_version, name,"), "{e}");
    assert!(e.ends_with("did you mean `path`?"), "{e}");
}

/// The error `validate` gives (the run would give the same, after building).
fn validate_error(text: &str, sets: &[&str]) -> String {
    let path = write_scenario(text);
    match Scenario::load(&path).and_then(|s| s.validate(&[], &with_sets(sets)).map(|_| ())) {
        Ok(()) => panic!("expected an error for {sets:?}"),
        Err(e) => e.0.replace(&path.display().to_string(), "FILE"),
    }
}

const FLAPPING: &str = "[[event]]\nkind = \"path_down\"\npath = \"h-a-0\"\nat = \"0s\"\nuntil = \"1us\"\nevery = \"2us\"\n";

#[test]
fn a_fault_repeating_past_the_edge_limit_is_refused_with_the_period_that_fits() {
    // Every 2 us over 3 s: 3 M edges, which ended in "memory allocation failed".
    let text = format!("{}{FLAPPING}", BASE.replace("duration = \"1s\"", "duration = \"3s\""));
    let e = validate_error(&text, &[]);
    assert_eq!(e, "FILE: event[0].every: 2us repeats 1500000 times: 3000000 edges (starts and ends) within the run (3s), above the limit of 131072 (each is a row of the fault timeline, about 4 kB): expected every >= 46us (nearest valid), or a shorter run");
    // The period it gives fits.
    let fits = text.replace("every = \"2us\"", "every = \"46us\"");
    Scenario::load(&write_scenario(&fits)).unwrap().validate(&[], &Overrides::default()).unwrap();
    // The limit is on all the events together: a second one passes it, and is told so.
    let second = format!("{fits}{}", FLAPPING.replace("h-a-0", "h-a-1").replace("every = \"2us\"", "every = \"1ms\""));
    let e = validate_error(&second, &[]);
    assert!(e.starts_with("FILE: event[1].every: 1ms repeats 3000 times: 6000 edges (starts and ends) within the run (3s), 136436 with the events before it, above the limit of 131072"), "{e}");
}

#[test]
fn periodic_timers_faster_than_their_mechanism_are_refused() {
    // Each hung the run past 30 s at 1 ns.
    let e = validate_error(&BASE.replace("arrays = [\"a\"]", "arrays = [\"a\"]\nflow_control = { kind = \"parda\", period = \"1ns\" }"), &[]);
    assert!(e.starts_with("FILE: volume[0].flow_control.period: 1ns is too short for hosts to exchange their latencies: expected at least 10ms (nearest valid: 10ms;"), "{e}");
    let e = validate_error(&BASE.replace("multipath = {", "failover = { path_check = \"1ns\" }\nmultipath = {"), &[]);
    assert!(e.starts_with("FILE: host[0].failover.path_check: 1ns is faster than any path checker polls: expected at least 1ms (nearest valid: 1ms;"), "{e}");
    let e = validate_error(&BASE.replace("multipath = {", "adapter = { qfull_retry = \"1ns\" }\nmultipath = {"), &[]);
    assert!(e.starts_with("FILE: host[0].adapter.qfull_retry: 1ns resends a refused command faster than a target frees a slot: expected at least 100us (nearest valid: 100us;"), "{e}");
}

#[test]
fn an_event_written_with_zero_until_or_every_is_refused() {
    let event = "[[event]]\nkind = \"path_down\"\npath = \"h-a-0\"\nat = \"100ms\"\n";
    let e = validate_error(&format!("{BASE}{event}until = \"0s\"\n"), &[]);
    assert_eq!(e, "FILE: event[0].until: 0s is not after `at` (0.1s): expected until > at, or no `until` for a fault that lasts");
    let e = validate_error(&format!("{BASE}{event}until = \"200ms\"\nevery = \"0s\"\n"), &[]);
    assert_eq!(e, "FILE: event[0].every: 0s repeats nothing: expected a period longer than until - at, or no `every` for a fault that happens once");
}

#[test]
fn a_base_of_another_schema_version_is_refused() {
    let base = write_scenario(&BASE.replace("schema_version = 1", "schema_version = 2"));
    let child = format!("schema_version = 1\nbase = \"{}\"\n", base.file_name().unwrap().to_str().unwrap());
    let path = base.with_extension("child.toml");
    std::fs::write(&path, child).unwrap();
    let e = Scenario::load(&path).err().expect("an error").0;
    assert_eq!(e, format!("{}: schema_version: version 2 is not supported: this sanlab reads schema_version = 1 (in a base file)", base.display()));
}

#[test]
fn a_boolean_where_fio_expects_a_number_is_refused() {
    // `iodepth = true` was read as 1.
    let e = validate_error(BASE, &["vm[0].job[0].iodepth=true"]);
    assert_eq!(e, "FILE: vm[0].job[0].iodepth: expected integer as a string or a number, found a boolean `true`");
    let ok = BASE.replace("rw = \"randread\"", "rw = \"randread\"\ntime_based = true");
    Scenario::load(&write_scenario(&ok)).unwrap().validate(&[], &Overrides::default()).unwrap();
}

#[test]
fn rates_below_one_io_in_the_longest_run_are_refused() {
    let trace = crate::common::repo("scenarios/examples/trace.toml");
    let e = Scenario::load(&trace).unwrap().validate(&["open".to_string()], &with_sets(&["vm[0].job[0].rate_iops=1e-300"])).err().expect("an error").0;
    assert!(e.contains("vm[0].job[0].rate_iops: 1e-300 IOPS is out of range: expected 0 or 3.171e-8..=1000000000 IOPS (nearest valid: 3.171e-8;"), "{e}");
    let mclock = BASE.replace("multipath = {", "scheduler = { kind = \"mclock\" }\nmultipath = {");
    let e = validate_error(&mclock, &["vm[0].limit=1e-300"]);
    assert!(e.starts_with("FILE: vm[0].limit: 1e-300 IOPS is out of range: expected 0 or 3.171e-8..=10000000 IOPS"), "{e}");
    Scenario::load(&write_scenario(&mclock)).unwrap().validate(&[], &with_sets(&["vm[0].limit=1e-7"])).unwrap();
}
