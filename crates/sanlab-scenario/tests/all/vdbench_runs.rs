//! A vdbench parameter file of several runs: each run is a variant named as vdbench names it, a
//! for loop's runs each get their own I/O pattern, and a curve's points run at vdbench's rounded
//! percents of what the max run reached.
use crate::common::{run, write_scenario};
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
    let e = run_file(&crate::common::repo(SERIES), &["curve_(50%) xfersize=8k".to_string()], &o, None).err().expect("an error");
    assert!(e.0.ends_with("variant `curve_(50%) xfersize=8k` is a point of a vdbench curve: its rate is a percent of what `curve xfersize=8k` reaches, so run that variant too, before it"), "{e}");
}

#[test]
fn variants_of_the_scenario_multiply_the_runs() {
    let text = std::fs::read_to_string(crate::common::repo(SERIES)).unwrap().replace("file = \"parm/series.vdb\"", &format!("file = \"{}\"", crate::common::repo("scenarios/examples/parm/series.vdb").display()))
        + "\n[[variant]]\nname = \"a\"\nset = {}\n[[variant]]\nname = \"b\"\nset = { \"vm[0].job[0].rd\" = \"xfer\" }\n";
    let s = Scenario::load(&write_scenario(&text)).unwrap();
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["a/xfer xfersize=4k", "a/xfer xfersize=64k", "a/curve xfersize=8k", "a/curve_(50%) xfersize=8k", "a/curve_(90%) xfersize=8k", "b/xfer xfersize=4k", "b/xfer xfersize=64k"]);
}

/// The series example with its parameter file replaced by `parm` (written beside the scenario)
/// and `run_keys` added to [run]; the error of loading and running it, if any.
fn series_with(parm: &str, run_keys: &str) -> (std::path::PathBuf, Result<sanlab_scenario::RunResult, String>) {
    let parm_path = write_scenario(parm).with_extension("vdb");
    std::fs::write(&parm_path, parm).unwrap();
    let text = std::fs::read_to_string(crate::common::repo(SERIES)).unwrap().replace("file = \"parm/series.vdb\"", &format!("file = \"{}\"", parm_path.display())).replace("warmup = \"0s\"", &format!("warmup = \"0s\"\n{run_keys}"));
    let r = run_file(&write_scenario(&text), &[], &Overrides::default(), None).map_err(|e| e.0);
    (parm_path, r)
}

#[test]
fn interval_is_reported_and_checked_against_the_samples() {
    const PARM: &str = "sd=sd1,size=1g\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,elapsed=4,interval=2\n";
    // 2 s intervals from 500 ms samples: the job carries its interval for the summary lines.
    let (_, r) = series_with(PARM, "sample_interval = \"500ms\"");
    let r = r.unwrap();
    assert_eq!(r.variants[0].report.jobs[0].options["interval"], "2");
    // 1.5 s samples cannot make 2 s intervals: the error names the parameter file's line.
    let (parm, e) = series_with(PARM, "sample_interval = \"1500ms\"");
    let e = e.err().expect("an error");
    assert!(e.contains(&format!("vm[0].job[0].file: {}:3: rd=rd1: interval=2 cannot be reported", parm.display())), "{e}");
    assert!(e.contains("taken every 1500ms (run.sample_interval)") && e.ends_with("or interval= to a whole multiple of the sample interval, e.g. interval=3"), "{e}");
}

#[test]
fn elapsed_and_warmup_are_whole_intervals_as_vdbench_checks() {
    for (rd, message) in [
        ("elapsed=25,interval=10", "rd=rd1: elapsed=25 must be a multiple of interval=10 (vdbench): the nearest are elapsed=20 and elapsed=30"),
        ("elapsed=30,interval=10,warmup=15", "rd=rd1: warmup=15 must be a multiple of interval=10 (vdbench): the nearest are warmup=10 and warmup=20"),
        ("elapsed=3,interval=2", "rd=rd1: elapsed=3 must be at least twice interval=2 (vdbench): e.g. elapsed=4 or interval=1"),
        ("elapsed=0.5", "rd=rd1: elapsed=0.5: vdbench keeps whole seconds, which makes 0; expected at least elapsed=1"),
    ] {
        let (parm, e) = series_with(&format!("sd=sd1,size=1g\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,{rd}\n"), "");
        let e = e.err().expect("an error");
        assert!(e.contains(&format!("{}:3: {message}", parm.display())), "{rd}: {e}");
    }
    // Without interval=, vdbench reports every min(elapsed/2, 60) s.
    let (_, r) = series_with("sd=sd1,size=1g\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,elapsed=4,interval=0\n", "");
    assert_eq!(r.unwrap().variants[0].report.jobs[0].options["interval"], "2");
}

/// priority=: `paced` (4k reads at 2000 IOPS, priority=1) and `rest` (64k writes, iorate=max,
/// priority=2) share sd1's 8 threads; the job's reads are `paced`, its writes `rest`.
#[test]
fn a_priority_workload_gets_its_rate_and_the_other_the_threads_left() {
    const PARM: &str = "sd=sd1,size=10g,threads=8\nwd=paced,sd=sd1,xfersize=4k,rdpct=100,iorate=2000,priority=1\nwd=rest,sd=sd1,xfersize=64k,rdpct=0,priority=2\nrd=rd1,wd=(paced,rest),iorate=max,elapsed=4,interval=1\n";
    let (_, r) = series_with(PARM, "");
    let r = r.unwrap();
    let (job, vm) = (&r.variants[0].report.jobs[0], &r.variants[0].report.vms[0]);
    let (reads, writes) = (&job.read, &job.write);
    assert!((reads.iops - 2000.0).abs() < 2000.0 * 0.04, "the priority workload's rate: {} IOPS", reads.iops);
    // The threads are always busy (Little's law), never more than 8 outstanding.
    let busy = reads.iops * reads.lat_ns.mean / 1e9 + writes.iops * writes.lat_ns.mean / 1e9;
    assert!((busy - 8.0).abs() < 0.2, "{busy} threads busy on average");
    assert!(vm.in_flight <= 8 && vm.issued == vm.completed + vm.failed + vm.in_flight, "{} issued, {} completed, {} in flight", vm.issued, vm.completed, vm.in_flight);
    // `rest` alone has all 8 threads: with `paced` it keeps those `paced` leaves.
    let (_, alone) = series_with(&PARM.replace("wd=(paced,rest)", "wd=rest").replace(",priority=2", ""), "");
    let alone = &alone.unwrap().variants[0].report.jobs[0].write;
    let left = (8.0 - reads.iops * reads.lat_ns.mean / 1e9) / 8.0;
    assert!(writes.iops < alone.iops && (writes.iops / alone.iops - left).abs() < 0.03, "{} IOPS beside `paced`, {} alone, {left} of the threads left", writes.iops, alone.iops);
}

/// priority= with a rate for the run: each workload paced at its own rate or its share of the
/// rest, the run's rate honoured.
#[test]
fn priorities_with_a_run_rate_pace_every_workload() {
    const PARM: &str = "sd=sd1,size=10g,threads=8\nwd=paced,sd=sd1,xfersize=4k,rdpct=100,iorate=1000,priority=1\nwd=rest,sd=sd1,xfersize=8k,rdpct=0,priority=2\nrd=rd1,wd=(paced,rest),iorate=3000,elapsed=4,interval=1\n";
    let (_, r) = series_with(PARM, "");
    let job = &r.unwrap().variants[0].report.jobs[0];
    assert!((job.read.iops - 1000.0).abs() < 1000.0 * 0.05, "{} read IOPS", job.read.iops);
    assert!((job.write.iops - 2000.0).abs() < 2000.0 * 0.05, "{} write IOPS", job.write.iops);
}

/// The series example with a parameter file of 64 x 64 = 4096 runs (the cap of one file) and
/// `variants` written [[variant]]s.
fn runs_at_the_cap_with(variants: usize) -> std::path::PathBuf {
    let sizes: Vec<String> = (1..=64).map(|k| format!("{}k", 4 * k)).collect();
    let threads: Vec<String> = (1..=64).map(|t| t.to_string()).collect();
    let parm = format!("sd=sd1,lun=/dev/sdb,size=10g,threads=16\nwd=wd1,sd=sd1,rdpct=70\nrd=many,wd=wd1,iorate=max,elapsed=4,interval=1,forxfersize=({}),forthreads=({})\n", sizes.join(","), threads.join(","));
    let parm_path = write_scenario(&parm).with_extension("vdb");
    std::fs::write(&parm_path, parm).unwrap();
    let mut text = std::fs::read_to_string(crate::common::repo(SERIES)).unwrap().replace("file = \"parm/series.vdb\"", &format!("file = \"{}\"", parm_path.display()));
    for i in 0..variants {
        text += &format!("\n[[variant]]\nname = \"v{i}\"\nset = {{}}\n");
    }
    write_scenario(&text)
}

#[test]
fn variants_times_runs_are_capped_as_runs_are() {
    // 60 [[variant]] x 4096 runs made 245,760 variants: validate never ended.
    let e = Scenario::load(&runs_at_the_cap_with(60)).err().expect("an error");
    assert!(e.0.ends_with(": variant: 60 [[variant]] times the runs of vm[0].job[0]'s vdbench file (4096 runs) make 245,760 variants, each simulated on its own: expected at most 4096; at most 1 [[variant]] of this file's, or pick one RD of the file with rd = \"...\""), "{e}");
    let s = Scenario::load(&runs_at_the_cap_with(1)).unwrap();
    assert_eq!(s.variants.len(), 4096);
    // A name not found lists a few of the 4096 and counts the rest (it printed them all).
    let Err(e) = s.select(&["nope".to_string()]) else { panic!("nope selected") };
    assert!(e.0.contains(": no variant named `nope`: expected one of v0/many xfersize=4k threads=1, v0/many xfersize=4k threads=2, "), "{e}");
    assert!(e.0.contains(" and 4,088 more"), "{e}");
    assert!(e.0.len() < 600, "{} bytes", e.0.len());
}

#[test]
fn written_variants_alone_are_capped() {
    let mut text = std::fs::read_to_string(crate::common::repo("scenarios/examples/vdbench_series.toml")).unwrap().replace("file = \"parm/series.vdb\"", "file = \"x.vdb\"");
    for i in 0..5000 {
        text += &format!("[[variant]]\nname = \"v{i}\"\n");
    }
    let e = Scenario::from_text("many.toml", &text).err().expect("an error");
    assert_eq!(e.0, "many.toml: variant: 5,000 [[variant]], each simulated on its own: expected at most 4096");
}

/// The series example on `tests/data/vdbench/<parm>` with the job's `vars` written as `vars`
/// (TOML inline table text, or none).
fn with_vars(parm: &str, vars: Option<&str>) -> std::path::PathBuf {
    let file = crate::common::repo(&format!("tests/data/vdbench/{parm}"));
    let job = format!("file = \"{}\"{}", file.display(), vars.map(|v| format!("\nvars = {v}")).unwrap_or_default());
    write_scenario(&std::fs::read_to_string(crate::common::repo(SERIES)).unwrap().replace("file = \"parm/series.vdb\"", &job))
}

/// A real file's `$xfer_sz`, `$seq_rnd`, `$rdwr`, `$files_threads` and `$elap_secs`, with the
/// values its script gives vdbench's command line (at 16 threads, 4 s here).
const RAW_VARS: &str = "{ files_threads = 16, seq_rnd = \"random\", xfer_sz = \"8k\", elap_secs = 4, rdwr = 100 }";

#[test]
fn variables_take_the_values_given_as_on_vdbench_s_command_line() {
    let r = run_file(&with_vars("proj_fio_vdbench_vdb_gen.cfg", Some(RAW_VARS)), &[], &Overrides::default(), None).unwrap();
    let (job, vm) = (&r.variants[0].report.jobs[0], &r.variants[0].report.vms[0]);
    assert_eq!((job.options["threads"].as_str(), job.options["elapsed"].as_str()), ("16", "4"));
    assert!((vm.mbps * 1e6 / vm.iops - 8192.0).abs() < 1.0, "xfer_sz=8k: {} bytes per I/O", vm.mbps * 1e6 / vm.iops);
    assert_eq!(job.write.total_ios, 0, "rdwr=100: forrdpct=(100)");
    // A value is text: `rdwr = "100,0"` makes forrdpct=(100,0), two runs, two variants.
    let s = Scenario::load(&with_vars("proj_fio_vdbench_vdb_gen.cfg", Some(&RAW_VARS.replace("rdwr = 100", "rdwr = \"100,0\"")))).unwrap();
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["rd1 rdpct=100 threads=16", "rd1 rdpct=0 threads=16"]);
}

#[test]
fn a_variable_without_a_value_or_a_value_unused_is_an_error() {
    let error = |vars: Option<&str>| {
        let path = with_vars("proj_fio_vdbench_vdb_gen.cfg", vars);
        Scenario::load(&path).and_then(|s| s.validate(&[], &Overrides::default()).map(|_| ())).expect_err("an error").0
    };
    let parm = crate::common::repo("tests/data/vdbench/proj_fio_vdbench_vdb_gen.cfg");
    // The first line that holds one: the file, the line, the variable, the values given.
    let e = error(None);
    assert!(e.contains(&format!("vm[0].job[0].file: {}:5: `$xfer_sz` has no value (no vars are given): vdbench takes it from its command line (./vdbench -f file xfer_sz=...); give it in the job's vars, e.g. vars = {{ xfer_sz = \"...\" }}", parm.display())), "{e}");
    // A typo: the nearest name given.
    let e = error(Some(&RAW_VARS.replace("elap_secs", "elapse_secs")));
    assert!(e.contains(&format!("{}:6: `$elap_secs` has no value (vars given: ", parm.display())) && e.ends_with("did you mean `elapse_secs`?"), "{e}");
    // vdbench stops on a value no line uses.
    let e = error(Some(&RAW_VARS.replace("{ ", "{ jvms = 4, ")));
    assert!(e.contains(&format!("vm[0].job[0].vars.jvms: {} has no `$jvms` (nor `!jvms`): vdbench stops on a value it does not use", parm.display())), "{e}");
}
