//! A vdbench parameter file of several runs: each run is a variant named as vdbench names it, a
//! for loop's runs each get their own I/O pattern, and a curve's points run at vdbench's rounded
//! percents of what the max run reached.
mod common;
use common::{run, write_scenario};
use sanlab_scenario::{run_file, Overrides, Scenario};

const SERIES: &str = "scenarios/examples/vdbench_series.toml";

#[test]
fn every_run_is_a_variant_with_its_own_pattern() {
    let r = run(SERIES, &[], Overrides::default());
    let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["xfer xfersize=4k", "xfer xfersize=64k", "curve xfersize=8k", "curve_(50%) xfersize=8k", "curve_(90%) xfersize=8k"]);
    // The for loop: bytes per I/O of each run.
    for (v, bytes) in r.variants.iter().zip([4096.0, 65536.0, 8192.0, 8192.0, 8192.0]) {
        let vm = &v.report.vms[0];
        let per_io = vm.mbps * 1e6 / vm.iops;
        assert!((per_io - bytes).abs() < 1.0, "{}: {per_io} bytes per I/O", v.name);
        let job = &v.report.jobs[0];
        let reads = job.read.total_ios as f64 / (job.read.total_ios + job.write.total_ios) as f64;
        assert!((reads - 0.7).abs() < 0.03, "{}: rdpct=70 gave {reads}", v.name);
    }
    // The curve: the max run closed at 16 threads, then 50 % and 90 % of its rate, paced.
    let max = r.variants[2].report.vms[0].iops;
    let job_iops = |i: usize| r.variants[i].report.jobs.iter().map(|j| j.read.iops + j.write.iops).sum::<f64>();
    assert_eq!(r.variants[2].report.jobs[0].options["iorate"], "max");
    for (i, pct) in [(3, 50), (4, 90)] {
        let rate = ((job_iops(2) as i64 * pct / 100 + 99) / 100 * 100) as f64;
        assert_eq!(r.variants[i].report.jobs[0].options["iorate"], format!("{rate}"), "{}", r.variants[i].name);
        let got = r.variants[i].report.vms[0].iops;
        assert!((got - rate).abs() < rate * 0.03, "{}: {got} IOPS against {rate}", r.variants[i].name);
        assert!(got < max);
    }
}

#[test]
fn a_curve_point_needs_its_max_run() {
    let o = Overrides::default();
    let e = run_file(&common::repo(SERIES), &["curve_(50%) xfersize=8k".to_string()], &o, None).err().expect("an error");
    assert!(e.0.ends_with("variant `curve_(50%) xfersize=8k` is a point of a vdbench curve: its rate is a percent of what `curve xfersize=8k` reaches, so run that variant too, before it"), "{e}");
}

#[test]
fn variants_of_the_scenario_multiply_the_runs() {
    let text = std::fs::read_to_string(common::repo(SERIES)).unwrap().replace("file = \"parm/series.vdb\"", &format!("file = \"{}\"", common::repo("scenarios/examples/parm/series.vdb").display()))
        + "\n[[variant]]\nname = \"a\"\nset = {}\n[[variant]]\nname = \"b\"\nset = { \"vm[0].job[0].rd\" = \"xfer\" }\n";
    let s = Scenario::load(&write_scenario(&text)).unwrap();
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["a/xfer xfersize=4k", "a/xfer xfersize=64k", "a/curve xfersize=8k", "a/curve_(50%) xfersize=8k", "a/curve_(90%) xfersize=8k", "b/xfer xfersize=4k", "b/xfer xfersize=64k"]);
}
