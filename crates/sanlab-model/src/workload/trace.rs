//! Block-trace replay: fio iolog v2/v3, MSR Cambridge CSV and blkparse text (formats in
//! shared/reference/simulators.md section 4), optionally gzipped.
//!
//! The file is read twice, never held: once when the scenario is built, to check every line and
//! count the records, and again, streamed, while the run replays it. Open replay issues each
//! record at its timestamp (relative to the first record, times `time_scale`); closed replay
//! keeps `depth` records outstanding and ignores the timestamps.

use super::{at_line, Instance, Pacing, Request, Workload};
use crate::io::Op;
use crate::number::{DURATION, SIZE};
use crate::spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub const KIND: Kind<dyn Workload> = Kind { name: "trace", summary: "replay a block trace: fio iolog (v2, v3), MSR Cambridge CSV, blkparse text", build };

const FORMATS: [&str; 3] = ["fio_iolog", "msr_csv", "blkparse"];
/// blkparse events: Q queued (what fio's blktrace replay uses), D issued to the driver, C completed.
const BLK_ACTIONS: [&str; 3] = ["Q", "D", "C"];
const SECTOR_BYTES: u64 = 512;
/// MSR timestamps are Windows FILETIME: 100 ns ticks.
const FILETIME_TICK_NS: u64 = 100;
/// fio iolog v2: "Everything below 100 is discarded" for `wait` (HOWTO, trace file format v2).
const MIN_WAIT_US: u64 = 100;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    FioIolog,
    MsrCsv,
    Blkparse { action: char },
}

/// What one line holds.
#[derive(Debug, PartialEq)]
enum Line {
    /// A read or write at a trace time.
    Io { at_ns: u64, req: Request },
    /// A record sanlab does not replay (sync, trim, flush, discard, fio v3 wait), by name.
    Skipped(&'static str),
    /// Headers, file actions, other blkparse events, summaries, blank lines.
    Other,
}

/// Parses a trace line by line; carries fio's iolog version and v2's accumulated waits.
#[derive(Clone)]
struct LineParser {
    format: Format,
    iolog_version: Option<u8>,
    wait_ns: u64,
}

fn num<T: std::str::FromStr>(field: &str, what: &str) -> Result<T, String> {
    field.trim().parse().map_err(|_| format!("{what} `{field}` is not a whole number in range"))
}

/// `field` (a whole number) times `unit`, if the product fits.
fn num_times(field: &str, what: &str, unit: u64) -> Result<u64, String> {
    num::<u64>(field, what)?.checked_mul(unit).ok_or_else(|| format!("{what} `{}` is out of range", field.trim()))
}

fn request(op: Op, offset_bytes: u64, size: u64) -> Result<Request, String> {
    let size_bytes = u32::try_from(size).ok().filter(|s| *s > 0).ok_or_else(|| format!("request size {size} bytes is out of range: expected 1..=4 GiB"))?;
    if offset_bytes > SIZE.max() {
        return Err(format!("offset {offset_bytes} bytes is beyond the largest size sanlab accepts, {}", SIZE.max_text()));
    }
    Ok(Request { op, size_bytes, offset_bytes })
}

impl LineParser {
    fn new(format: Format) -> Self {
        Self { format, iolog_version: None, wait_ns: 0 }
    }

    fn line(&mut self, number: usize, text: &str) -> Result<Line, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Line::Other);
        }
        match self.format {
            Format::FioIolog => self.iolog(text),
            Format::MsrCsv => msr(number, text),
            Format::Blkparse { action } => blkparse(text, action),
        }
    }

    /// fio iolog (HOWTO "Trace file format v2/v3", iolog.c `read_iolog`): v2 lines are
    /// `file action [offset length]`, with `wait` (µs, relative) for timing; v3 lines start with a
    /// timestamp in µs since the run began.
    fn iolog(&mut self, text: &str) -> Result<Line, String> {
        let Some(version) = self.iolog_version else {
            self.iolog_version = match text {
                "fio version 2 iolog" => Some(2),
                "fio version 3 iolog" => Some(3),
                _ => return Err(format!("expected the header `fio version 2 iolog` or `fio version 3 iolog`, found `{text}` (fio dropped v1 logs in 1.20)")),
            };
            return Ok(Line::Other);
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let (at_ns, rest) = if version == 3 {
            let (ts, rest) = fields.split_first().expect("non-empty line");
            (num_times(ts, "timestamp", 1_000)?, rest)
        } else {
            (self.wait_ns, &fields[..])
        };
        match rest {
            [_file, "add" | "open" | "close"] => Ok(Line::Other),
            [_file, action, offset, length] => {
                let (offset, length): (u64, u64) = (num(offset, "offset")?, num(length, "length")?);
                match *action {
                    "read" => Ok(Line::Io { at_ns, req: request(Op::Read, offset, length)? }),
                    "write" => Ok(Line::Io { at_ns, req: request(Op::Write, offset, length)? }),
                    "wait" if version == 2 => {
                        if offset >= MIN_WAIT_US {
                            self.wait_ns = offset.checked_mul(1_000).and_then(|w| w.checked_add(self.wait_ns)).ok_or_else(|| format!("wait `{offset}` takes the log's time out of range"))?;
                        }
                        Ok(Line::Other)
                    }
                    // fio ignores `wait` in v3 logs: timestamps do its job.
                    "wait" => Ok(Line::Skipped("wait")),
                    "sync" => Ok(Line::Skipped("sync")),
                    "datasync" => Ok(Line::Skipped("datasync")),
                    "trim" => Ok(Line::Skipped("trim")),
                    other => Err(format!("unknown action `{other}`: expected read, write, wait, sync, datasync or trim")),
                }
            }
            _ => {
                let ts = if version == 3 { "timestamp " } else { "" };
                Err(format!("expected `{ts}filename action offset length` or `{ts}filename add|open|close`, found {} fields", fields.len()))
            }
        }
    }
}

/// MSR Cambridge: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Timestamp in
/// FILETIME ticks, Offset and Size in bytes (SNIA IOTTA README).
fn msr(number: usize, text: &str) -> Result<Line, String> {
    let f: Vec<&str> = text.split(',').collect();
    if number == 1 && f.first().is_some_and(|t| t.trim().eq_ignore_ascii_case("timestamp")) {
        return Ok(Line::Other);
    }
    if f.len() != 7 {
        return Err(format!("expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {}", f.len()));
    }
    let at_ns = num_times(f[0], "Timestamp", FILETIME_TICK_NS)?;
    let op = match f[3].trim().to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        other => return Err(format!("Type `{other}`: expected Read or Write")),
    };
    Ok(Line::Io { at_ns, req: request(op, num(f[4], "Offset")?, num(f[5], "Size")?)? })
}

/// blkparse's default output (`%D %2c %8s %5T.%9t %5p %2a %3d `): `maj,min cpu seq sec.nsec pid
/// action RWBS sector + nsectors [process]`. Only lines that start with a device number are
/// events; the per-CPU summary at the end is not.
fn blkparse(text: &str, wanted: char) -> Result<Line, String> {
    let f: Vec<&str> = text.split_whitespace().collect();
    let is_device = f.first().and_then(|d| d.split_once(',')).is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok());
    if !is_device {
        return Ok(Line::Other);
    }
    if f.len() < 7 {
        return Err(format!("expected `maj,min cpu seq sec.nsec pid action RWBS ...`, found {} fields", f.len()));
    }
    if f[5] != wanted.to_string() {
        return Ok(Line::Other);
    }
    let (sec, frac) = f[3].split_once('.').unwrap_or((f[3], "0"));
    if frac.len() > 9 {
        return Err(format!("time `{}`: expected seconds.nanoseconds", f[3]));
    }
    let at_ns = num_times(sec, "time", 1_000_000_000)?.checked_add(num_times(frac, "time", 10u64.pow(9 - frac.len() as u32))?).ok_or_else(|| format!("time `{}` is out of range", f[3]))?;
    // RWBS: the first of R, W, D (discard), F (flush) says what the request is.
    let op = match f[6].chars().find(|c| matches!(c, 'R' | 'W' | 'D' | 'F')) {
        Some('R') => Op::Read,
        Some('W') => Op::Write,
        Some('D') => return Ok(Line::Skipped("discard")),
        _ => return Ok(Line::Skipped("flush")),
    };
    let [sector, "+", sectors, ..] = f[7..] else {
        return Err(format!("expected `sector + nsectors` after RWBS `{}`", f[6]));
    };
    let offset_bytes = num_times(sector, "sector", SECTOR_BYTES)?;
    if num::<u64>(sectors, "nsectors")? == 0 {
        return Ok(Line::Skipped("empty"));
    }
    Ok(Line::Io { at_ns, req: request(op, offset_bytes, num_times(sectors, "nsectors", SECTOR_BYTES)?)? })
}

fn open(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    let file = super::open_input(path, super::MAX_TRACE_FILE_BYTES)?;
    Ok(if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    })
}

/// Streams the records of a trace.
struct Reader {
    input: Box<dyn BufRead>,
    parser: LineParser,
    buf: String,
    line: usize,
}

impl Reader {
    fn new(path: &Path, format: Format) -> std::io::Result<Self> {
        Ok(Self { input: open(path)?, parser: LineParser::new(format), buf: String::new(), line: 0 })
    }

    /// The next line's content, or None at the end. Errors carry the line number.
    fn next_line(&mut self) -> Option<Result<Line, (usize, String)>> {
        self.buf.clear();
        match (&mut self.input).take(super::MAX_TRACE_LINE_BYTES).read_line(&mut self.buf) {
            Ok(0) => None,
            Ok(n) if n as u64 == super::MAX_TRACE_LINE_BYTES && !self.buf.ends_with('\n') => {
                Some(Err((self.line + 1, format!("line longer than {} bytes: is this a trace?", super::MAX_TRACE_LINE_BYTES))))
            }
            Ok(_) => {
                self.line += 1;
                Some(self.parser.line(self.line, &self.buf).map_err(|e| (self.line, e)))
            }
            Err(e) => Some(Err((self.line + 1, format!("cannot read: {e}")))),
        }
    }

    /// The next read or write; None at the end (a line that fails here was checked at build time,
    /// so only a file changed since then ends the replay early).
    fn next_io(&mut self) -> Option<(u64, Request)> {
        loop {
            match self.next_line()? {
                Ok(Line::Io { at_ns, req }) => return Some((at_ns, req)),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }
}

/// What the build-time pass found.
struct Summary {
    records: u64,
    first_ns: u64,
    last_ns: u64,
    skipped: Vec<(&'static str, u64)>,
}

/// Checks every line and counts the records. Replayed times (after the first record, times
/// `time_scale`) must stay within the longest duration.
fn scan(path: &Path, format: Format, time_scale: f64) -> Result<Summary, String> {
    let mut r = Reader::new(path, format).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    let mut s = Summary { records: 0, first_ns: 0, last_ns: 0, skipped: vec![] };
    while let Some(line) = r.next_line() {
        match line.map_err(|(n, e)| at_line(path, n, e))? {
            Line::Io { at_ns, .. } => {
                if s.records == 0 {
                    s.first_ns = at_ns;
                }
                if at_ns.saturating_sub(s.first_ns) as f64 * time_scale > DURATION.max() as f64 {
                    return Err(at_line(path, r.line, format!("this record replays more than {} after the first one, the longest duration sanlab simulates", DURATION.max_text())));
                }
                s.last_ns = s.last_ns.max(at_ns);
                s.records += 1;
            }
            Line::Skipped(what) => match s.skipped.iter_mut().find(|(w, _)| *w == what) {
                Some((_, n)) => *n += 1,
                None => s.skipped.push((what, 1)),
            },
            Line::Other => {}
        }
    }
    if s.records == 0 {
        return Err(format!("{}: no read or write records to replay", path.display()));
    }
    Ok(s)
}

struct Trace {
    path: PathBuf,
    format: Format,
    open_loop: bool,
    depth: u32,
    time_scale: f64,
    first_ns: u64,
    reader: Option<Reader>,
    /// Open replay: requests whose arrival was scheduled and that wait to be issued.
    pending: VecDeque<Request>,
    options: Vec<(String, String)>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Workload>> {
    let path = spec.path("file", "trace file, relative to the scenario file (.gz is read gzipped)")?;
    let format = spec.choice("format", &FORMATS, None, "fio_iolog (v2 or v3), msr_csv (MSR Cambridge), blkparse (default text output)")?;
    let mode = spec.choice("mode", &["open", "closed"], Some("open"), "open: issue at the timestamps; closed: keep depth outstanding, ignoring them")?;
    let depth = spec.int("depth", Some(64), 1, 65_536, "closed: requests kept outstanding; open: at most this many, later arrivals wait")?;
    let time_scale = spec.float("time_scale", 1.0, 1e-6, 1e6, "multiplies the timestamps: 0.5 replays twice as fast")?;
    let action = spec.choice("action", &BLK_ACTIONS, Some("Q"), "blkparse: the event to replay (Q queued, as fio's blktrace replay; D issued to the driver; C completed)")?;
    if spec.is_describing() {
        return Ok(Box::new(Trace { path: PathBuf::new(), format: Format::FioIolog, open_loop: true, depth: 1, time_scale: 1.0, first_ns: 0, reader: None, pending: VecDeque::new(), options: vec![] }));
    }
    let path = path.ok_or_else(|| spec.error("file", "is required: the trace file, e.g. \"traces/web.csv.gz\""))?;
    let format = match format {
        "fio_iolog" => Format::FioIolog,
        "msr_csv" => Format::MsrCsv,
        _ => Format::Blkparse { action: action.chars().next().expect("one letter") },
    };
    if spec.has("action") && !matches!(format, Format::Blkparse { .. }) {
        return Err(spec.error("action", "applies to format = \"blkparse\" only"));
    }
    let s = scan(&path, format, time_scale).map_err(|e| spec.error("file", e))?;
    let mut options = vec![
        ("file".to_string(), path.display().to_string()),
        ("records".to_string(), s.records.to_string()),
        ("trace_span".to_string(), format!("{:.6}s", (s.last_ns - s.first_ns) as f64 / 1e9)),
        ("mode".to_string(), mode.to_string()),
    ];
    if !s.skipped.is_empty() {
        let list: Vec<String> = s.skipped.iter().map(|(w, n)| format!("{n} {w}")).collect();
        options.push(("skipped".to_string(), list.join(", ")));
    }
    Ok(Box::new(Trace { path, format, open_loop: mode == "open", depth: depth as u32, time_scale, first_ns: s.first_ns, reader: None, pending: VecDeque::new(), options }))
}

impl Trace {
    fn read(&mut self) -> Option<(u64, Request)> {
        if self.reader.is_none() {
            self.reader = Some(Reader::new(&self.path, self.format).ok()?);
        }
        self.reader.as_mut()?.next_io()
    }
}

impl Workload for Trace {
    fn next(&mut self, _rng: &mut RngStream) -> Option<Request> {
        self.pending.pop_front().or_else(|| self.read().map(|(_, r)| r))
    }

    fn pacing(&self) -> Pacing {
        if self.open_loop {
            Pacing::Timed { depth: self.depth }
        } else {
            Pacing::Closed { depth: self.depth }
        }
    }

    fn runtime_ns(&self) -> Option<u64> {
        None
    }

    fn next_arrival_ns(&mut self, _now_ns: u64, _rng: &mut RngStream) -> Option<u64> {
        let (at_ns, req) = self.read()?;
        self.pending.push_back(req);
        Some((at_ns.saturating_sub(self.first_ns) as f64 * self.time_scale).round() as u64)
    }

    fn instances(&self) -> Vec<Instance> {
        let fresh = Trace { path: self.path.clone(), reader: None, pending: VecDeque::new(), options: self.options.clone(), ..*self };
        vec![Instance { suffix: None, workload: Box::new(fresh), after: vec![] }]
    }

    fn options(&self) -> Vec<(String, String)> {
        self.options.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(format: Format, text: &str) -> Result<Vec<Line>, String> {
        let mut p = LineParser::new(format);
        text.lines().enumerate().map(|(i, l)| p.line(i + 1, l)).collect()
    }

    #[test]
    fn iolog_v2_accumulates_waits_and_v3_reads_timestamps() {
        let v2 = lines(Format::FioIolog, "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 4096 8192\n/dev/sdb wait 50 0\n/dev/sdb wait 2000 0\n/dev/sdb write 0 4096\n/dev/sdb trim 0 4096\n").unwrap();
        assert_eq!(v2[3], Line::Io { at_ns: 0, req: Request { op: Op::Read, size_bytes: 8192, offset_bytes: 4096 } });
        assert_eq!(v2[6], Line::Io { at_ns: 2_000_000, req: Request { op: Op::Write, size_bytes: 4096, offset_bytes: 0 } }, "waits below 100 us are discarded");
        assert_eq!(v2[7], Line::Skipped("trim"));
        let v3 = lines(Format::FioIolog, "fio version 3 iolog\n150 /dev/sdb read 0 4096\n").unwrap();
        assert_eq!(v3[1], Line::Io { at_ns: 150_000, req: Request { op: Op::Read, size_bytes: 4096, offset_bytes: 0 } });
        assert!(lines(Format::FioIolog, "fio version 1 iolog\n").unwrap_err().contains("expected the header"));
        assert!(lines(Format::FioIolog, "fio version 2 iolog\n/dev/sdb rite 0 4096\n").unwrap_err().contains("unknown action `rite`"));
    }

    #[test]
    fn msr_and_blkparse() {
        let m = lines(Format::MsrCsv, "128166372003061629,web,0,Read,7014609920,24576,41286\n").unwrap();
        assert_eq!(m[0], Line::Io { at_ns: 12_816_637_200_306_162_900, req: Request { op: Op::Read, size_bytes: 24576, offset_bytes: 7_014_609_920 } });
        assert!(lines(Format::MsrCsv, "1,web,0,Erase,0,512,1\n").unwrap_err().contains("Type `erase`"));
        let b = lines(Format::Blkparse { action: 'Q' }, "  8,64  11  2949  33.779662409 90790  Q  WS 7614344 + 24 [fio]\n  8,64 11 2950 33.779662500 90790 D W 7614344 + 24 [fio]\nCPU11 (8,64):\n 8,0 0 3 0.5 1 Q FWS [kworker]\n").unwrap();
        assert_eq!(b[0], Line::Io { at_ns: 33_779_662_409, req: Request { op: Op::Write, size_bytes: 12288, offset_bytes: 7_614_344 * 512 } });
        assert_eq!(b[1], Line::Other, "only Q events are replayed by default");
        assert_eq!(b[2], Line::Other, "summary lines are not events");
        assert_eq!(b[3], Line::Skipped("flush"));
    }
}
