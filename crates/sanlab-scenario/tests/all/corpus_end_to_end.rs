//! Every parameter file and trace of the corpus under tests/data runs end to end in a scenario:
//! each of its runs (a variant each) completes I/O, and no I/O is lost.
use crate::common::{repo, write_scenario};
use sanlab_scenario::{run_file, Overrides};

/// A one-VM scenario running `job`.
fn scenario(job: &str) -> String {
    scenario_with(job, "volume = \"lun\"", "")
}

/// A one-VM scenario running `job`, with the VM's `volume_key` and more volumes.
fn scenario_with(job: &str, volume_key: &str, volumes: &str) -> String {
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
{volumes}
[[host]]
name = "h"
adapter = {{ kind = "ideal" }}
[[path]]
host = "h"
array = "a"
[[vm]]
name = "vm"
host = "h"
{volume_key}
[[vm.job]]
{job}
"#
    )
}

/// Runs `job`; returns the variants' names, each checked to have completed I/O.
fn run_job(job: &str) -> Vec<String> {
    let r = run_file(&write_scenario(&scenario(job)), &[], &Overrides::default(), None).unwrap_or_else(|e| panic!("{job}: {e}"));
    for v in &r.variants {
        crate::common::assert_conserved(v);
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
            "two_runs.vdb" | "forhitarea.vdb" | "range_wrap.vdb" => 2,
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

/// The volumes of the mapping tests: one per traced disk.
const DISK_VOLUMES: &str = "[[volume]]\nname = \"vol_a\"\narrays = [\"a\"]\n[[volume]]\nname = \"vol_b\"\narrays = [\"a\"]\n[[volume]]\nname = \"vol_c\"\narrays = [\"a\"]";

fn trace_map(file: &str, volumes: &str) -> Result<sanlab_scenario::RunResult, String> {
    let job = format!("kind = \"trace\"\nfile = \"{}\"\nvolumes = {volumes}", repo("tests/data/traces").join(file).display());
    run_file(&write_scenario(&scenario_with(&job, "", DISK_VOLUMES)), &[], &Overrides::default(), None).map_err(|e| e.0)
}

#[test]
fn msr_disks_each_onto_their_own_volume() {
    // msr_disks.csv: host src2, disks 0 (4k reads), 1 (8k writes), 2 (64k reads), 10 records each.
    let r = trace_map("msr_disks.csv", r#"{ "0" = "vol_a", "1" = "vol_b", "2" = "vol_c" }"#).unwrap();
    let v = &r.variants[0];
    crate::common::assert_conserved(v);
    let vms: Vec<&str> = v.report.vms.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(vms, ["vm.0", "vm.1", "vm.2"]);
    for (vm, (volume, bytes, writes)) in v.report.vms.iter().zip([("vol_a", 4096.0, false), ("vol_b", 8192.0, true), ("vol_c", 65536.0, false)]) {
        assert_eq!(vm.completed, 10, "{}", vm.name);
        assert!((vm.mbps * 1e6 / vm.iops - bytes).abs() < 1.0, "{}: {} bytes per I/O", vm.name, vm.mbps * 1e6 / vm.iops);
        assert_eq!(if writes { vm.read_iops } else { vm.write_iops }, 0.0, "{}", vm.name);
        let device = v.report.devices.iter().find(|d| d.volume == volume).expect("a device per volume");
        assert_eq!(device.ios, 10, "every I/O of disk {} lands on {volume}", vm.name);
    }
    // A resolved scenario holds the VMs per disk; resolving it again keeps them.
    let s = sanlab_scenario::Scenario::load(&write_scenario(&scenario_with(&format!("kind = \"trace\"\nfile = \"{}\"\nvolumes = {{ \"0\" = \"vol_a\", \"1\" = \"vol_b\" }}", repo("tests/data/traces/msr_disks.csv").display()), "", DISK_VOLUMES))).unwrap();
    let resolved = s.resolve(None, &Overrides::default()).unwrap();
    let again = sanlab_scenario::Scenario::from_text("again.toml", &toml::to_string(&resolved).unwrap()).unwrap().resolve(None, &Overrides::default()).unwrap();
    assert_eq!(again.get("vm"), resolved.get("vm"));
    // Several hosts: keyed Hostname/DiskNumber.
    let r = trace_map("msr_hosts.csv", r#"{ "web/0" = "vol_a", "web/1" = "vol_b", "src1/0" = "vol_c" }"#).unwrap();
    let done: Vec<(&str, u64)> = r.variants[0].report.vms.iter().map(|m| (m.name.as_str(), m.completed)).collect();
    assert_eq!(done, [("vm.src1-0", 1), ("vm.web-0", 3), ("vm.web-1", 1)]);
}

#[test]
fn unmapped_and_unknown_disks_are_named() {
    let file = repo("tests/data/traces/msr_disks.csv").display().to_string();
    let e = trace_map("msr_disks.csv", r#"{ "0" = "vol_a", "1" = "vol_b" }"#).err().expect("an error");
    assert!(e.ends_with(&format!("vm[0].job[0].file: {file}:4: disk `src2/2` has no volume in `volumes` (it maps 0, 1): add it, e.g. \"src2/2\" = \"<volume>\"")), "{e}");
    let e = trace_map("msr_disks.csv", r#"{ "0" = "vol_a", "1" = "vol_b", "2" = "vol_c", "7" = "vol_c" }"#).err().expect("an error");
    assert!(e.ends_with(&format!("vm[3].job[0].file: {file}: `volumes` maps disk `7`, which has no read or write records in the file: check the disk's id (mapped: 0, 1, 2, 7)")), "{e}");
    let hosts = repo("tests/data/traces/msr_hosts.csv").display().to_string();
    let e = trace_map("msr_hosts.csv", r#"{ "0" = "vol_a", "1" = "vol_b" }"#).err().expect("an error");
    assert!(e.ends_with(&format!("{hosts}:3: Hostname `src1` after `web`: a file of several hosts maps Hostname/DiskNumber, e.g. volumes = {{ \"src1/0\" = \"<volume>\" }}")), "{e}");
    let e = trace_map("msr_disks.csv", r#"{ "0" = "vol_x" }"#).err().expect("an error");
    assert!(e.ends_with("vm[0].job[0].volumes.\"0\": `vol_x` is no volume (volumes: lun, vol_a, vol_b, vol_c); did you mean `vol_a`?"), "{e}");
}
