//! Block traces as users have them, taken from public repositories (tests/data/traces/SOURCES.md):
//! bcc biosnoop rows without a disk or a sector, blkparse output under a `#Maj,Mn` header, a
//! blkparse trace of D and C events only, and traces from disks larger than the default volume.
//! What each test expects is read from the file's own text, not written down.

use sanlab_des::RngStream;
use sanlab_spec::{build_kind, Spec};
use sanlab_workload::{Instance, Op, REGISTRY};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces")
}

/// The trace job on `file` with the further keys `rest`: its instance, or its error.
fn trace(file: &str, rest: &str) -> Result<Instance, String> {
    let t: toml::Table = format!("kind = \"trace\"\nfile = \"{file}\"\n{rest}").parse().unwrap();
    let job = build_kind(&Spec::new(&t, "job").with_base_dir(data()), REGISTRY, None).map_err(|e| format!("{}: {}", e.location, e.message))?;
    Ok(job.instances().remove(0))
}

fn option(job: &Instance, key: &str) -> Option<String> {
    job.plan.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

/// Open replay: (arrival ns, op, size, offset) of each request.
fn replayed(job: &mut Instance) -> Vec<(u64, Op, u32, u64)> {
    let mut rng = RngStream::new(1, "t");
    let mut out = vec![];
    while let Some(at) = job.workload.next_arrival_ns(0, &mut rng) {
        let r = job.workload.next(&mut rng).unwrap();
        out.push((at, r.op, r.size_bytes, r.offset_bytes));
    }
    out
}

/// The whitespace-separated fields of each line of `file` that `keep` keeps.
fn rows(file: &str, keep: impl Fn(&[&str]) -> bool) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(data().join(file)).unwrap();
    text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).filter(|f| keep(f)).map(|f| f.iter().map(|s| s.to_string()).collect()).collect()
}

/// Seconds with decimals, in ns.
fn ns(seconds: &str) -> u64 {
    let (s, frac) = seconds.split_once('.').unwrap();
    s.parse::<u64>().unwrap() * 1_000_000_000 + format!("{frac:0<9}").parse::<u64>().unwrap()
}

/// blkparse event rows of `action` with `sector + n` and a read or write (RWBS starting with R
/// or W: a leading F is a flush): (time ns, op, bytes, offset).
fn blkparse_events(file: &str, action: &str) -> Vec<(u64, Op, u32, u64)> {
    rows(file, |f| f.len() > 9 && f[5] == action && f[8] == "+" && (f[6].starts_with('R') || f[6].starts_with('W')))
        .iter()
        .map(|f| (ns(&f[3]), if f[6].starts_with('R') { Op::Read } else { Op::Write }, f[9].parse::<u32>().unwrap() * 512, f[7].parse::<u64>().unwrap() * 512))
        .collect()
}

/// Times relative to the first record's, as open replay issues them.
fn from_first(mut records: Vec<(u64, Op, u32, u64)>) -> Vec<(u64, Op, u32, u64)> {
    let first = records[0].0;
    records.iter_mut().for_each(|r| r.0 -= first);
    records
}

#[test]
fn biosnoop_rows_without_a_disk_or_a_sector_are_skipped_and_counted() {
    // bcc's biosnoop prints a flush with an empty DISK, sector u64 -1 and 0 bytes, and a request
    // whose issuer it missed as `? 0` with no DISK: 8 fields where the header names 8, or 7.
    // They failed the whole file ("expected 8 fields"); now they are counted, the rest replayed.
    let mut job = trace("biosnoop_flush.txt", "").unwrap();
    assert_eq!(option(&job, "format").as_deref(), Some("biosnoop"));
    let flushes = rows("biosnoop_flush.txt", |f| f.len() == 7 && f[4] == "18446744073709551615").len();
    let unseen = rows("biosnoop_flush.txt", |f| f.len() == 7 && f[1] == "?" && f[5] == "0").len();
    assert!(flushes > 0 && unseen > 0);
    assert_eq!(option(&job, "skipped"), Some(format!("{flushes} no sector (flush), {unseen} no data")));
    let with_disk: Vec<_> = rows("biosnoop_flush.txt", |f| f.len() == 8 && f[3] == "nvme0n1")
        .iter()
        .map(|f| (ns(&f[0]), if f[4] == "R" { Op::Read } else { Op::Write }, f[6].parse::<u32>().unwrap(), f[5].parse::<u64>().unwrap() * 512))
        .collect();
    assert_eq!(option(&job, "records"), Some(with_disk.len().to_string()));
    assert_eq!(replayed(&mut job), from_first(with_disk));
    // The one disk named: no "several disks" error for the rows without one.
    assert!(trace("biosnoop_flush.txt", "disk = \"nvme0n1\"").is_ok());
}

#[test]
fn blkparse_under_a_maj_mn_header_is_recognised() {
    // blktrace_merge's test data starts with `#Maj,Mn CPU SeqNo ...` and a rule of dashes: auto
    // detection named no format for it.
    let mut job = trace("blkparse_header.txt", "").unwrap();
    assert_eq!(option(&job, "format").as_deref(), Some("blkparse"));
    let queued = blkparse_events("blkparse_header.txt", "Q");
    assert_eq!(option(&job, "action"), None, "the file has Q events");
    assert_eq!(replayed(&mut job), from_first(queued));
}

#[test]
fn a_trace_without_q_events_replays_its_d_events_and_says_so() {
    // D and C events only (as `blktrace -a issue -a complete` records): Q, the default, found no
    // record and the error said only "no read or write records to replay".
    let mut job = trace("blkparse_issued.txt", "").unwrap();
    let note = option(&job, "action").expect("a note");
    assert!(note.starts_with("D (issued to the driver): the file has no Q (queued) event"), "{note}");
    let issued = blkparse_events("blkparse_issued.txt", "D");
    assert!(!issued.is_empty());
    assert_eq!(replayed(&mut job), from_first(issued));
    // The flushes among the D events (RWBS FN) are counted.
    let flushes = rows("blkparse_issued.txt", |f| f.len() > 6 && f[5] == "D" && f[6].starts_with('F')).len();
    assert_eq!(option(&job, "skipped"), Some(format!("{flushes} flush")));
    // An action the user gives is kept, even one with no events.
    let completed = trace("blkparse_issued.txt", "action = \"C\"").unwrap();
    assert_eq!((option(&completed, "action"), option(&completed, "records")), (None, Some(blkparse_events("blkparse_issued.txt", "C").len().to_string())));
    let e = trace("blkparse_issued.txt", "action = \"Q\"").err().unwrap();
    assert!(e.ends_with("blkparse_issued.txt: no read or write records to replay"), "{e}");
}

#[test]
fn a_trace_from_a_larger_disk_sizes_the_volume_unless_device_size_is_set() {
    // The nvme0n1 trace reaches about 391 GB, beyond the default 100 GiB volume.
    for file in ["blkparse_header.txt", "blkparse_issued.txt"] {
        let action = if file == "blkparse_header.txt" { "Q" } else { "D" };
        let end_bytes = blkparse_events(file, action).iter().map(|r| r.3 + u64::from(r.2)).max().unwrap();
        assert!(end_bytes > 100 << 30, "{file}");
        let job = trace(file, "").unwrap();
        let note = option(&job, "device_size").expect("a note");
        assert!(note.starts_with(&format!("{end_bytes} bytes (")) && note.ends_with("device_size is not set and the trace's furthest record ends there, beyond the default 100 GiB"), "{note}");
        // Set, it is the volume: a record beyond it is an error naming its line, as before.
        let e = trace(file, "device_size = \"100GiB\"").err().unwrap();
        assert!(e.contains(&format!("{file}:")) && e.contains("ends beyond the volume's 107374182400 bytes (device_size)"), "{e}");
        // Wrapped onto the default volume, as before: nothing to say.
        assert_eq!(option(&trace(file, "offset_wrap = true").unwrap(), "device_size"), None);
    }
    // The biosnoop rows reach about 398 GB too; a trace within the default volume says nothing.
    assert!(option(&trace("biosnoop_flush.txt", "").unwrap(), "device_size").is_some());
    assert_eq!(option(&trace("biosnoop.txt", "disk = \"sda\"").unwrap(), "device_size"), None);
    // device_size takes every size unit fio takes (one parser: sanlab_spec::parse_size_bytes).
    for size in ["400GiB", "400G", "400GB", "400g", "0.5TiB", "1T", "1TB", "1TiB", "1P", "1PB", "1PiB", "1p", "419430400KiB", "409600MiB"] {
        let job = trace("blkparse_header.txt", &format!("device_size = \"{size}\"")).unwrap_or_else(|e| panic!("{size}: {e}"));
        assert_eq!(option(&job, "device_size"), None, "{size}");
    }
    let e = trace("blkparse_header.txt", "device_size = \"1ZiB\"").err().unwrap();
    assert!(e.starts_with("job.device_size: ") && e.contains("ZiB"), "{e}");
}
