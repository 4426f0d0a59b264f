//! Every parameter file and trace of the corpus under tests/data runs end to end in a scenario:
//! each of its runs (a variant each) completes I/O, and no I/O is lost; a trace completes exactly
//! its read and write records, counted from the file by the test.
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

/// The read and write records of one trace fixture, counted from the file itself, by each
/// format's documented layout, not by the engine's parser: the I/Os a replay must complete.
/// Records that are no read or write are not I/O and are not counted: fio's `trim`, `sync` and
/// `wait` actions, blkparse's flushes (`FWS`, no sector), blktrace's flush and notify records.
/// `keep` sees each line's fields (comma-separated in a `.csv`, else separated by white space)
/// and selects the records of the disk (and host) the job names.
fn text_records(file: &str, keep: impl Fn(&[&str]) -> bool) -> u64 {
    let text = std::fs::read_to_string(repo("tests/data/traces").join(file)).unwrap();
    let csv = file.ends_with(".csv");
    text.lines().filter(|l| keep(&if csv { l.split(',').map(str::trim).collect::<Vec<_>>() } else { l.split_whitespace().collect() })).count() as u64
}

/// blktrace's binary per-CPU files (`struct blk_io_trace`, little-endian here: 48 bytes, then
/// `pdu_len` bytes of payload): the queue events (action code 1, `Q`) that carry data, neither
/// notify (category bit 10) nor discard (bit 13). Flushes carry no bytes.
fn blktrace_records(cpu_files: &[&str]) -> u64 {
    let mut n = 0;
    for file in cpu_files {
        let b = std::fs::read(repo("tests/data/traces/blktrace").join(file)).unwrap();
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let mut at = 0;
        while at < b.len() {
            assert_eq!(u32_at(at) & 0xffff_ff00, 0x6561_7400, "{file}: record at byte {at}: blktrace's magic");
            let (bytes, action) = (u32_at(at + 24), u32_at(at + 28));
            let category = action >> 16;
            if action & 0xffff == 1 && category & (1 << 10 | 1 << 13) == 0 && bytes > 0 {
                n += 1;
            }
            at += 48 + usize::from(u16::from_le_bytes([b[at + 46], b[at + 47]]));
        }
    }
    n
}

/// CRC-32 (IEEE, gzip's).
fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |c, &b| (0..8).fold(c ^ u32::from(b), |c, _| if c & 1 == 1 { (c >> 1) ^ 0xedb8_8320 } else { c >> 1 }))
}

#[test]
fn every_trace_format_replays_each_of_its_records() {
    let t = |f: &str| repo("tests/data/traces").join(f).display().to_string();
    let io = |f: &str| f.eq_ignore_ascii_case("read") || f.eq_ignore_ascii_case("write");
    // msr.csv.gz is msr.csv gzipped, as its one member's trailer (CRC-32 and size of the
    // content) says: the same records.
    let (gz, plain) = (std::fs::read(t("msr.csv.gz")).unwrap(), std::fs::read(t("msr.csv")).unwrap());
    let trailer = |i: usize| u32::from_le_bytes(gz[gz.len() - 8 + i..gz.len() - 4 + i].try_into().unwrap());
    assert_eq!((&gz[..3], trailer(0), trailer(4)), (&[0x1f, 0x8b, 8][..], crc32(&plain), plain.len() as u32), "msr.csv.gz holds msr.csv");
    let msr = text_records("msr.csv", |f| f.len() == 7 && io(f[3]));
    let cases: [(&str, &str, u64); 12] = [
        // `file action offset length`, after the header and `add`/`open`; `wait` and `sync` are not I/O.
        ("v2.iolog", "", text_records("v2.iolog", |f| f.len() == 4 && io(f[1]))),
        // `timestamp file action offset length`; `trim` is not replayed (the model has no trim).
        ("v3.iolog", "", text_records("v3.iolog", |f| f.len() == 5 && io(f[2]))),
        // Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
        ("msr.csv", "", msr),
        ("msr.csv.gz", "format = \"msr_csv\"", msr),
        ("msr_hosts.csv", "host = \"web\"\ndisk = \"0\"", text_records("msr_hosts.csv", |f| f.len() == 7 && io(f[3]) && f[1] == "web" && f[2] == "0")),
        // `maj,min cpu seq time pid action RWBS sector + nsectors [process]`: the queue events (Q,
        // the default action) with a sector; the flush `Q FWS` has none.
        ("blkparse.txt", "", text_records("blkparse.txt", |f| f.len() > 8 && f[5] == "Q" && f[8] == "+")),
        ("blkparse_actions.txt", "disk = \"8,16\"\naction = \"C\"", text_records("blkparse_actions.txt", |f| f.len() > 8 && f[0] == "8,16" && f[5] == "C" && f[8] == "+")),
        // Naming one CPU's file replays every CPU's.
        ("blktrace/sdb.blktrace.0", "", blktrace_records(&["sdb.blktrace.0", "sdb.blktrace.1"])),
        // ASU,LBA,Size,Opcode,Timestamp
        ("spc.csv", "disk = \"0\"", text_records("spc.csv", |f| f.len() == 5 && f[0] == "0")),
        // device_id,opcode,offset,length,timestamp
        ("alibaba.csv", "disk = \"5\"\ndevice_size = \"200GiB\"", text_records("alibaba.csv", |f| f.len() == 5 && f[0] == "5")),
        // Timestamp,Offset,Size,IOType,VolumeID
        ("tencent.csv", "disk = \"1063\"\ntime_scale = 0.1", text_records("tencent.csv", |f| f.len() == 5 && f[4] == "1063")),
        // TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms), after its header line
        ("biosnoop.txt", "disk = \"sda\"\nmode = \"closed\"\ndepth = 2", text_records("biosnoop.txt", |f| f.len() == 8 && f[3] == "sda")),
    ];
    for (file, keys, records) in cases {
        // Each fixture has records of its disk, and every one replays within the run's 1.1 s
        // (tencent.csv's 3 s at time_scale 0.1).
        assert!(records > 0, "{file}: no records counted");
        let job = format!("kind = \"trace\"\nfile = \"{}\"\n{keys}", t(file));
        let r = run_file(&write_scenario(&scenario(&job)), &[], &Overrides::default(), None).unwrap_or_else(|e| panic!("{job}: {e}"));
        let v = &r.variants[0];
        crate::common::assert_conserved(v);
        let vm = &v.report.vms[0];
        assert_eq!((vm.issued, vm.completed, vm.failed), (records, records, 0), "{file}: I/Os issued, completed and failed, for its {records} records");
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

#[test]
fn a_fio_iolog_of_two_files_maps_each_onto_its_volume() {
    // Its two files were mixed onto one volume; now each file is a disk, as in every other
    // format of several disks: mapped with `volumes` (file names whole), or refused.
    let log = write_scenario("").with_extension("iolog");
    std::fs::write(&log, "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdc add\n100 /dev/sdb read 0 4096\n200 /dev/sdc write 0 8192\n300 /dev/sdb read 4096 4096\n400 /dev/sdc write 8192 8192\n500 /dev/sdc write 16384 8192\n").unwrap();
    let run = |keys: &str, volume_key: &str| {
        let job = format!("kind = \"trace\"\nfile = \"{}\"\n{keys}", log.display());
        run_file(&write_scenario(&scenario_with(&job, volume_key, DISK_VOLUMES)), &[], &Overrides::default(), None).map_err(|e| e.0)
    };
    let r = run(r#"volumes = { "/dev/sdb" = "vol_a", "/dev/sdc" = "vol_b" }"#, "").unwrap();
    let v = &r.variants[0];
    crate::common::assert_conserved(v);
    let done: Vec<(&str, u64, f64)> = v.report.vms.iter().map(|m| (m.name.as_str(), m.completed, m.write_iops)).collect();
    assert_eq!(done.iter().map(|d| (d.0, d.1)).collect::<Vec<_>>(), [("vm.dev-sdb", 2), ("vm.dev-sdc", 3)]);
    assert_eq!(done[0].2, 0.0, "sdb's VM only reads");
    for (volume, ios) in [("vol_a", 2), ("vol_b", 3)] {
        assert_eq!(v.report.devices.iter().find(|d| d.volume == volume).expect("a device").ios, ios, "{volume}");
    }
    let e = run("", "volume = \"lun\"").err().expect("an error");
    assert!(e.contains("reads and writes of several files (/dev/sdb, /dev/sdc, ...)"), "{e}");
}
