//! Every parameter file and trace of the corpus under tests/data runs end to end in a scenario:
//! each of its runs (a variant each) completes I/O, and no I/O is lost.
mod common;
use common::{repo, write_scenario};
use sanlab_scenario::{run_file, Overrides};

/// A one-VM scenario running `job`.
fn scenario(job: &str) -> String {
    format!(
        r#"schema_version = 1
name = "corpus"
[run]
duration = "1100ms"
warmup = "0s"
[[array]]
name = "a"
media = {{ kind = "flash", read_latency = "150us", write_latency = "20us", servers = 16 }}
[[volume]]
name = "lun"
arrays = ["a"]
[[host]]
name = "h"
adapter = {{ kind = "ideal" }}
[[path]]
host = "h"
array = "a"
[[vm]]
name = "vm"
host = "h"
volume = "lun"
[[vm.job]]
{job}
"#
    )
}

/// Runs `job`; returns the variants' names, each checked to have completed I/O.
fn run_job(job: &str) -> Vec<String> {
    let r = run_file(&write_scenario(&scenario(job)), &[], &Overrides::default(), None).unwrap_or_else(|e| panic!("{job}: {e}"));
    for v in &r.variants {
        common::assert_conserved(v);
        assert!(v.report.vms[0].completed > 0, "{job}: variant {} completed no I/O", v.name);
    }
    r.variants.into_iter().map(|v| v.name).collect()
}

#[test]
fn every_vdbench_file_runs() {
    let dir = repo("tests/data/vdbench");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "vdb")).collect();
    files.sort();
    for f in files {
        // common.vdb is only included by others.
        if f.ends_with("common.vdb") {
            continue;
        }
        let names = run_job(&format!("kind = \"vdbench\"\nfile = \"{}\"", f.display()));
        let expected = match f.file_name().unwrap().to_str().unwrap() {
            "for_loops.vdb" => 12,
            "curve.vdb" | "runs_in_order.vdb" => 3,
            "two_runs.vdb" | "forhitarea.vdb" => 2,
            // stopcurve=: the first curve point is slower than 1 us, which ends the runs.
            "stopcurve.vdb" => 2,
            _ => 1,
        };
        assert_eq!(names.len(), expected, "{}: {names:?}", f.display());
    }
}

#[test]
fn every_trace_format_runs() {
    let t = |f: &str| repo("tests/data/traces").join(f).display().to_string();
    for (file, keys) in [
        ("v2.iolog", ""),
        ("v3.iolog", ""),
        ("msr.csv", ""),
        ("msr.csv.gz", "format = \"msr_csv\""),
        ("msr_hosts.csv", "host = \"web\"\ndisk = \"0\""),
        ("blkparse.txt", ""),
        ("blkparse_actions.txt", "disk = \"8,16\"\naction = \"C\""),
        ("blktrace/sdb.blktrace.0", ""),
        ("spc.csv", "disk = \"0\""),
        ("alibaba.csv", "disk = \"5\"\ndevice_size = \"200GiB\""),
        ("tencent.csv", "disk = \"1063\"\ntime_scale = 0.1"),
        ("biosnoop.txt", "disk = \"sda\"\nmode = \"closed\"\ndepth = 2"),
    ] {
        run_job(&format!("kind = \"trace\"\nfile = \"{}\"\n{keys}", t(file)));
    }
}
