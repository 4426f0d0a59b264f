//! Block-trace replay: fio iolog v2/v3, MSR Cambridge CSV and blkparse text (formats in
//! docs/references.md, trace formats), SPC, Alibaba and Tencent CSV, bcc biosnoop and binary
//! blktrace (one file each under trace/formats/), optionally gzipped; `format = "auto"` recognises them.
//!
//! The file is read twice, never held: once when the scenario is built, to check every line and
//! count the records, and again, streamed, while the run replays it. Open replay issues each
//! record at its timestamp (relative to the first record, times `time_scale`); closed replay
//! keeps `depth` records outstanding and ignores the timestamps.
//!
//! Files: `record.rs` (the floor: what a line holds, which records are replayed, the field parsers
//! every format shares), `formats/` (one file per format: how its lines or records become
//! requests), `volumes.rs` (one volume per traced disk), this file (the `trace` kind and its keys,
//! recognising a format, reading, scanning and replaying).

use crate::face::{Instance, JobSource, Request, Workload};
use crate::plan::Pacing;
use crate::input::{at_line, MAX_TRACE_LINE_BYTES};
use crate::plan::JobPlan;
use crate::face::Op;
use sanlab_spec::number::DURATION;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

mod formats;
mod record;
pub(crate) mod volumes;

use formats::{alibaba, biosnoop, blkparse, blktrace_bin, fio_iolog, msr, spc, tencent};
use record::{Line, Select, SECTOR_BYTES};

pub const KIND: Kind<dyn JobSource> = Kind { name: "trace", summary: "replay a block trace: fio iolog (v2, v3), MSR Cambridge CSV, blkparse text, SPC, Alibaba and Tencent CSV, bcc biosnoop", build };

const FORMATS: [&str; 9] = ["auto", "fio_iolog", "msr_csv", "blkparse", "blktrace", "spc", "alibaba", "tencent", "biosnoop"];
/// The volume a trace replays onto when `device_size` is not set, unless the trace reaches
/// further: then the volume ends where its furthest record ends.
const DEFAULT_DEVICE_BYTES: u64 = 100 << 30;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    FioIolog,
    MsrCsv,
    Blkparse { action: char },
    /// Binary per-CPU files; the action code of the letter replayed.
    Blktrace { action: u32 },
    Spc,
    Alibaba,
    Tencent,
    Biosnoop,
}

/// Parses a trace line by line, each format in its file; carries what a format reads ahead of
/// its records (fio iolog's version and v2's waits, biosnoop's columns).
#[derive(Clone)]
struct LineParser {
    format: Format,
    iolog: fio_iolog::Iolog,
    select: Select,
    biosnoop: Option<biosnoop::Columns>,
}

impl LineParser {
    fn new(format: Format, select: Select) -> Self {
        Self { format, iolog: fio_iolog::Iolog::default(), select, biosnoop: None }
    }

    fn line(&mut self, number: usize, text: &str) -> Result<Line, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Line::Other);
        }
        let line = match self.format {
            Format::FioIolog => self.iolog.parse(text, &mut self.select),
            Format::MsrCsv => msr::parse(number, text, &mut self.select),
            Format::Blkparse { action } => blkparse::parse(text, action, &mut self.select),
            Format::Blktrace { .. } => Err("binary blktrace records are not lines".to_string()),
            Format::Spc => spc::parse(text, &mut self.select),
            Format::Alibaba => alibaba::parse(text, &mut self.select),
            Format::Tencent => tencent::parse(text, &mut self.select),
            Format::Biosnoop => {
                if biosnoop::is_header(text) {
                    self.biosnoop = Some(biosnoop::header(text)?);
                }
                biosnoop::parse(text, &self.biosnoop, &mut self.select)
            }
        }?;
        self.admit(line)
    }

    /// A parsed record through the selection.
    fn admit(&mut self, line: Line) -> Result<Line, String> {
        match line {
            Line::Io { at_ns, req } => self.select.admit(at_ns, req),
            other => Ok(other),
        }
    }
}

/// Decompressed past this size, a gzipped trace must compress less than [`MAX_GZIP_RATIO`]: 16 MiB.
const GZIP_RATIO_FROM_BYTES: u64 = 16 << 20;
/// Text traces compress 5 to 20 times with gzip; a gzip bomb (zeros, blank lines) about 1,000
/// times, the format's most. Reading a bomb's blank lines up to the size limit would take hours.
const MAX_GZIP_RATIO: u64 = 200;

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

/// A gzipped trace's content, read up to `max_bytes` (the limit of a plain trace) and, past
/// [`GZIP_RATIO_FROM_BYTES`], at most [`MAX_GZIP_RATIO`] times what was read of the file: a gzip
/// bomb (a few MB that inflate to terabytes) ends in an error within seconds.
struct Inflated {
    inner: flate2::read::MultiGzDecoder<Counted<std::fs::File>>,
    bytes: u64,
    max_bytes: u64,
}

impl Read for Inflated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        let refuse = |m: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidData, m));
        if self.bytes > self.max_bytes {
            return refuse(format!("decompressed, the trace passes {} bytes, the limit for a trace (gzipped or not): is the file a gzip bomb?", self.max_bytes));
        }
        let compressed = self.inner.get_ref().bytes.max(1);
        if self.bytes > GZIP_RATIO_FROM_BYTES && self.bytes / compressed > MAX_GZIP_RATIO {
            return refuse(format!(
                "decompressed, the trace passes {GZIP_RATIO_FROM_BYTES} bytes at {} times the {compressed} bytes read of the file, above the limit of {MAX_GZIP_RATIO} (text traces compress 5 to 20 times): is the file a gzip bomb? If it is a real trace, replay it decompressed (gunzip)",
                self.bytes / compressed
            ));
        }
        Ok(n)
    }
}

/// The trace's text, decompressed when the name ends in `.gz`; at most `max_bytes` either way.
fn open(path: &Path, max_bytes: u64) -> std::io::Result<Box<dyn BufRead>> {
    let file = crate::input::open_input(path, max_bytes)?;
    Ok(if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(Inflated { inner: flate2::read::MultiGzDecoder::new(Counted { inner: file, bytes: 0 }), bytes: 0, max_bytes }))
    } else {
        Box::new(BufReader::new(file))
    })
}

/// Where records come from: lines of text, or blktrace's binary per-CPU files.
enum Source {
    Text(Box<dyn BufRead>),
    /// The files, and the action code replayed.
    Binary(blktrace_bin::Merged, u32),
}

/// Streams the records of a trace.
struct Reader {
    input: Source,
    parser: LineParser,
    buf: String,
    line: usize,
}

impl Reader {
    fn new(path: &Path, parser: &LineParser) -> std::io::Result<Self> {
        Self::with_limit(path, parser, crate::input::MAX_TRACE_FILE_BYTES)
    }

    fn with_limit(path: &Path, parser: &LineParser, max_bytes: u64) -> std::io::Result<Self> {
        let input = match parser.format {
            Format::Blktrace { action } => Source::Binary(blktrace_bin::Merged::open(path, max_bytes)?, action),
            _ => Source::Text(open(path, max_bytes)?),
        };
        Ok(Self { input, parser: parser.clone(), buf: String::new(), line: 0 })
    }

    /// The next line's content, or None at the end. Errors carry the line number.
    fn next_line(&mut self) -> Option<Result<Line, (usize, String)>> {
        let input = match &mut self.input {
            Source::Text(input) => input,
            Source::Binary(merged, action) => {
                let line = merged.next(*action, &mut self.parser.select)?;
                self.line = merged.record;
                let n = self.line;
                return Some(line.and_then(|l| self.parser.admit(l)).map_err(|e| (n, format!("record {n} (of the CPU files merged by time): {e}"))));
            }
        };
        self.buf.clear();
        match input.take(MAX_TRACE_LINE_BYTES).read_line(&mut self.buf) {
            Ok(0) => None,
            Ok(n) if n as u64 == MAX_TRACE_LINE_BYTES && !self.buf.ends_with('\n') => {
                Some(Err((self.line + 1, format!("line longer than {} bytes: is this a trace?", MAX_TRACE_LINE_BYTES))))
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
    /// Records earlier than one before them: how many, the first's line (or binary record) and
    /// the most one is earlier, in trace ns.
    back: Option<(u64, usize, u64)>,
    /// A binary blktrace file that ends inside a record.
    cut: Option<blktrace_bin::Cut>,
    /// Where the furthest record ends.
    end_bytes: u64,
}

impl Summary {
    /// What the replay does not do as the file is written, for the job's options: records out of
    /// time order (replayed in file order, each no earlier than the latest before it, as the
    /// trace is streamed, never held or sorted) and a binary file cut inside a record.
    /// Out-of-order records matter only when the timestamps pace the replay (`timed`).
    fn notes(&self, binary: bool, timed: bool) -> Vec<(String, String)> {
        let mut out = vec![];
        if let (Some((n, line, back_ns)), true) = (self.back, timed) {
            let at = if binary { "record" } else { "line" };
            out.push(("out_of_order".to_string(), format!("{n} records earlier than one before them (the first at {at} {line}, up to {:.6}s earlier): replayed in file order, each at the time of the latest record before it", back_ns as f64 / 1e9)));
        }
        if let Some(c) = &self.cut {
            out.push(("cut".to_string(), format!("{} ends inside a record at byte offset {} ({} of its {} bytes): that partial record is not replayed", c.path.display(), c.offset, c.bytes, c.record_bytes)));
        }
        out
    }
}

/// Checks every line and counts the records. Replayed times (after the first record, times
/// `time_scale`) must stay within the longest duration.
fn scan(path: &Path, parser: &LineParser, time_scale: f64) -> Result<Summary, String> {
    let mut r = Reader::new(path, parser).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    let mut s = Summary { records: 0, first_ns: 0, last_ns: 0, skipped: vec![], back: None, cut: None, end_bytes: 0 };
    while let Some(line) = r.next_line() {
        match line.map_err(|(n, e)| at_line(path, n, e))? {
            Line::Io { at_ns, req } => {
                s.end_bytes = s.end_bytes.max(req.offset_bytes + u64::from(req.size_bytes));
                if s.records == 0 {
                    s.first_ns = at_ns;
                    s.last_ns = at_ns;
                }
                if at_ns < s.last_ns {
                    let (n, _, most) = s.back.get_or_insert((0, r.line, 0));
                    *n += 1;
                    *most = (*most).max(s.last_ns - at_ns);
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
    if let Source::Binary(merged, _) = &r.input {
        s.cut = merged.cut.clone();
    }
    if s.records == 0 {
        let select = &r.parser.select;
        if let (false, Some(disk)) = (select.mapped.is_empty(), &select.disk) {
            let which = select.host.as_ref().map_or(disk.clone(), |h| format!("{h}/{disk}"));
            return Err(format!("{}: `volumes` maps disk `{which}`, which has no read or write records in the file: check the disk's id (mapped: {})", path.display(), select.mapped.join(", ")));
        }
        return Err(format!("{}: no read or write records to replay", path.display()));
    }
    if let [a, b, ..] = &r.parser.select.seen[..] {
        if parser.format == Format::FioIolog {
            return Err(format!("{}: reads and writes of several files ({a}, {b}, ...): replaying them onto one volume mixes their offsets; select one with disk = \"{a}\", or map each onto its volume with volumes = {{ \"{a}\" = \"<volume>\", \"{b}\" = \"<volume>\" }}", path.display()));
        }
        let key = if matches!(parser.format, Format::MsrCsv) { "host and disk (e.g. host = \"web\", disk = \"0\")" } else { "disk" };
        return Err(format!("{}: records of several disks ({a}, {b}, ...): replaying them onto one volume mixes their offsets; select one with {key}", path.display()));
    }
    Ok(s)
}

struct Trace {
    path: PathBuf,
    parser: LineParser,
    open_loop: bool,
    /// Open replay at this rate instead of the timestamps.
    rate_iops: Option<f64>,
    arrivals: u64,
    depth: u32,
    time_scale: f64,
    first_ns: u64,
    reader: Option<Reader>,
    /// Open replay: requests whose arrival was scheduled and that wait to be issued.
    pending: VecDeque<Request>,
    options: Vec<(String, String)>,
}

/// The format a trace's first lines are written in, tried in this order (`format = "auto"`).
fn detect(path: &Path) -> Result<&'static str, String> {
    let mut input = open(path, crate::input::MAX_TRACE_FILE_BYTES).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    // blktrace's binary records start with their magic, in either byte order.
    let head = input.fill_buf().map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    if let Some(m) = head.get(..4) {
        let (le, be) = (u32::from_le_bytes(m.try_into().expect("4 bytes")), u32::from_be_bytes(m.try_into().expect("4 bytes")));
        if le & 0xffff_ff00 == 0x6561_7400 || be & 0xffff_ff00 == 0x6561_7400 {
            return Ok("blktrace");
        }
    }
    // Five lines at most, each within the longest line a trace may have.
    let lines: Vec<String> = input.take(5 * MAX_TRACE_LINE_BYTES).lines().map_while(Result::ok).map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).take(5).collect();
    let fields = |l: &str| l.split(',').map(str::trim).map(str::to_string).collect::<Vec<_>>();
    type Test<'c> = (&'static str, &'c dyn Fn(&str) -> bool);
    let tried: [Test; 7] = [
        ("fio_iolog", &|l| l.starts_with("fio version ")),
        ("biosnoop", &|l| biosnoop::is_header(l)),
        // An event line, or the column header some blkparse scripts print first (`#Maj,Mn CPU SeqNo ...`).
        ("blkparse", &|l| l.starts_with("#Maj,Mn ") || l.split_whitespace().next().and_then(|d| d.split_once(',')).is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())),
        ("msr_csv", &|l| {
            let f = fields(l);
            f.len() == 7 && (f[0].eq_ignore_ascii_case("timestamp") || f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write"))
        }),
        ("alibaba", &|l| {
            let f = fields(l);
            f.len() == 5 && (f[1] == "R" || f[1] == "W")
        }),
        ("tencent", &|l| {
            let f = fields(l);
            f.len() == 5 && (f[3] == "0" || f[3] == "1") && f[0].parse::<u64>().is_ok()
        }),
        ("spc", &|l| {
            let f = fields(l);
            f.len() >= 5 && matches!(f[3].as_str(), "r" | "R" | "w" | "W")
        }),
    ];
    let first = lines.first().ok_or_else(|| format!("{}: empty: no trace to recognise", path.display()))?;
    tried.iter().find(|(_, test)| test(first)).map(|(name, _)| *name).ok_or_else(|| {
        let names: Vec<&str> = tried.iter().map(|t| t.0).collect();
        at_line(path, 1, format!("`{first}` is none of the trace formats sanlab reads (tried blktrace, {}): give format = \"...\"", names.join(", ")))
    })
}

/// blkparse and blktrace with `action` unset replay Q events, as fio does; a file without any (a
/// trace taken with `blktrace -a issue`, which records only D and C) is replayed at its D events.
/// The trace is streamed, never held, so a first look reads it up to its first Q event: the
/// whole file only when it has none. Other formats are returned as they are.
fn unless_unqueued(path: &Path, format: Format) -> Result<Format, String> {
    let issued = match format {
        Format::Blkparse { .. } => Format::Blkparse { action: 'D' },
        Format::Blktrace { .. } => Format::Blktrace { action: blktrace_bin::action_code('D').expect("D has an action code") },
        other => return Ok(other),
    };
    let look = LineParser::new(format, Select { device_bytes: u64::MAX, ..Select::default() });
    let mut r = Reader::new(path, &look).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    // Any line but another event's is a Q event (an unreadable one too: the scan reports it).
    while let Some(line) = r.next_line() {
        if !matches!(line, Ok(Line::Other)) {
            return Ok(format);
        }
    }
    Ok(issued)
}

fn build(spec: &Spec) -> SpecResult<Box<dyn JobSource>> {
    let path = spec.path("file", "trace file, relative to the scenario file (.gz is read gzipped)")?;
    let format = spec.choice("format", &FORMATS, Some("auto"), "auto (recognised from the first line), fio_iolog (v2 or v3), msr_csv (MSR Cambridge), blkparse (default text output), spc (UMass), alibaba, tencent, biosnoop (bcc)")?;
    let mode = spec.choice("mode", &["open", "closed"], Some("open"), "open: issue at the timestamps; closed: keep depth outstanding, ignoring them")?;
    let depth = spec.int("depth", Some(64), 1, 65_536, "closed: requests kept outstanding; open: at most this many, later arrivals wait")?;
    let time_scale = spec.float("time_scale", 1.0, 1e-6, 1e6, "multiplies the timestamps: 0.5 replays twice as fast")?;
    let iops_scale = spec.float("iops_scale", 1.0, 1e-6, 1e6, "replays at this many times the trace's rate, by compressing time (2: twice the IOPS); not with time_scale")?;
    let rate = spec.rate_iops("rate_iops", 1e9, "open: arrivals evenly spaced at this rate instead of the timestamps (0: the timestamps)")?;
    let action = spec.choice("action", &blkparse::ACTIONS, Some("Q"), "blkparse: the event to replay (Q queued, as fio's blktrace replay; D issued to the driver; C completed; any of blkparse's letters)")?;
    let disk = spec.opt_string("disk", "the disk to replay from a trace of several: MSR DiskNumber, SPC ASU, Alibaba device_id, Tencent VolumeID, biosnoop DISK, blkparse maj,min, fio iolog file name")?;
    let host = spec.opt_string("host", "msr_csv: the Hostname to replay")?;
    let volumes = spec.table("volumes", "each disk of the trace onto its own volume, { \"0\" = \"vol_a\", \"1\" = \"vol_b\" } (disk ids as `disk` takes them; MSR: DiskNumber, or Hostname/DiskNumber for a file of several hosts): the scenario makes the VM one VM per disk, <vm>.<disk>, each on its volume; a record of an unmapped disk is an error")?;
    let mapped: Vec<String> = volumes.entries().into_iter().map(|(k, _)| k.to_string()).collect();
    let ops = spec.choice("ops", &["all", "reads", "writes"], Some("all"), "replay reads only or writes only")?;
    let from_ns = spec.duration_ns("from", Some((0, "0s")), "start of the replayed window, after the first record")?;
    let to_ns = spec.duration_or_never_ns("to", (u64::MAX, "end"), "end of the replayed window, after the first record")?;
    let device_bytes = spec.size_bytes("device_size", Some((DEFAULT_DEVICE_BYTES, "100GiB, or the end of the trace's furthest record when further (without offset_wrap)")), "the volume's size: a record ending beyond it is an error, or wraps with offset_wrap")?;
    let offset_wrap = spec.boolean("offset_wrap", false, "wrap offsets beyond device_size onto the volume instead of stopping with an error")?;
    if spec.is_describing() {
        let parser = LineParser::new(Format::FioIolog, Select::default());
        return Ok(Box::new(Trace { path: PathBuf::new(), parser, open_loop: true, rate_iops: None, arrivals: 0, depth: 1, time_scale: 1.0, first_ns: 0, reader: None, pending: VecDeque::new(), options: vec![] }));
    }
    let path = path.ok_or_else(|| spec.error("file", "is required: the trace file, e.g. \"traces/web.csv.gz\""))?;
    if spec.has("iops_scale") && spec.has("time_scale") {
        return Err(spec.error("iops_scale", "and time_scale both compress time: give one (iops_scale = N is time_scale = 1/N)"));
    }
    if to_ns <= from_ns {
        return Err(spec.error("to", "must be after `from`"));
    }
    if device_bytes < SECTOR_BYTES {
        return Err(spec.error("device_size", "must hold at least one 512-byte sector"));
    }
    let auto = format == "auto";
    let format = if auto { detect(&path).map_err(|e| spec.error("format", e))? } else { format };
    let format = match format {
        "fio_iolog" => Format::FioIolog,
        "msr_csv" => Format::MsrCsv,
        "spc" => Format::Spc,
        "alibaba" => Format::Alibaba,
        "tencent" => Format::Tencent,
        "biosnoop" => Format::Biosnoop,
        "blktrace" => Format::Blktrace { action: blktrace_bin::action_code(action.chars().next().expect("one letter")).ok_or_else(|| spec.error("action", format!("`{action}` has no binary action code: expected one of Q, M, F, G, S, R, D, C, P, U, T, I, X, B, A")))? },
        _ => Format::Blkparse { action: action.chars().next().expect("one letter") },
    };
    if spec.has("action") && !matches!(format, Format::Blkparse { .. } | Format::Blktrace { .. }) {
        return Err(spec.error("action", "applies to format = \"blkparse\" or \"blktrace\" only"));
    }
    let queued = format;
    let format = if spec.has("action") { format } else { unless_unqueued(&path, format).map_err(|e| spec.error("file", e))? };
    if host.is_some() && format != Format::MsrCsv {
        return Err(spec.error("host", "applies to format = \"msr_csv\" only (other formats name disks: use disk; a `volumes` key `a/b` is read as MSR's Hostname/DiskNumber unless it starts with `/` or the job gives format = \"fio_iolog\")"));
    }
    let open_loop = mode == "open";
    if rate > 0.0 && !open_loop {
        return Err(spec.error("rate_iops", "applies to mode = \"open\" only: closed replay keeps depth outstanding"));
    }
    let time_scale = if spec.has("iops_scale") { 1.0 / iops_scale } else { time_scale };
    let op = match ops {
        "reads" => Some(Op::Read),
        "writes" => Some(Op::Write),
        _ => None,
    };
    if !mapped.is_empty() && disk.is_none() {
        return Err(spec.error("volumes", "is expanded by the scenario into one VM per disk, each replaying its disk: give the job a VM of its own in a scenario"));
    }
    // Without device_size (and without wrapping), no record is beyond the volume: it covers them.
    let sized = spec.has("device_size") || offset_wrap;
    let scanned_bytes = if sized { device_bytes } else { u64::MAX };
    let select = Select { disk, host, mapped, op, from_ns, to_ns: (to_ns != u64::MAX).then_some(to_ns), device_bytes: scanned_bytes, offset_wrap, ..Select::default() };
    let mut parser = LineParser::new(format, select);
    let s = scan(&path, &parser, time_scale).map_err(|e| spec.error("file", e))?;
    if !sized {
        parser.select.device_bytes = s.end_bytes.max(device_bytes);
    }
    if open_loop && rate == 0.0 && s.records > 1 && s.last_ns == s.first_ns {
        return Err(spec.error(
            "file",
            format!("{}: its {} records all have the same time (no timing), so open replay would issue them at once: replay with mode = \"closed\" (depth outstanding) or give rate_iops", path.display(), s.records),
        ));
    }
    let mut options = vec![
        ("file".to_string(), path.display().to_string()),
        ("records".to_string(), s.records.to_string()),
        ("trace_span".to_string(), format!("{:.6}s", (s.last_ns - s.first_ns) as f64 / 1e9)),
        ("mode".to_string(), mode.to_string()),
    ];
    if auto {
        options.push(("format".to_string(), format_name(format).to_string()));
    }
    if !s.skipped.is_empty() {
        let list: Vec<String> = s.skipped.iter().map(|(w, n)| format!("{n} {w}")).collect();
        options.push(("skipped".to_string(), list.join(", ")));
    }
    if format != queued {
        options.push(("action".to_string(), "D (issued to the driver): the file has no Q (queued) event, as a trace taken with blktrace -a issue; set action to replay another event".to_string()));
    }
    if s.end_bytes > device_bytes && !sized {
        options.push(("device_size".to_string(), format!("{} bytes ({:.1} GiB): device_size is not set and the trace's furthest record ends there, beyond the default {} GiB", s.end_bytes, s.end_bytes as f64 / (1u64 << 30) as f64, DEFAULT_DEVICE_BYTES >> 30)));
    }
    options.extend(s.notes(matches!(format, Format::Blktrace { .. }), open_loop && rate == 0.0));
    let rate_iops = (rate > 0.0).then_some(rate);
    Ok(Box::new(Trace { path, parser, open_loop, rate_iops, arrivals: 0, depth: depth as u32, time_scale, first_ns: s.first_ns, reader: None, pending: VecDeque::new(), options }))
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::FioIolog => "fio_iolog",
        Format::MsrCsv => "msr_csv",
        Format::Blkparse { .. } => "blkparse",
        Format::Blktrace { .. } => "blktrace",
        Format::Spc => "spc",
        Format::Alibaba => "alibaba",
        Format::Tencent => "tencent",
        Format::Biosnoop => "biosnoop",
    }
}

impl Trace {
    fn read(&mut self) -> Option<(u64, Request)> {
        if self.reader.is_none() {
            self.reader = Some(Reader::new(&self.path, &self.parser).ok()?);
        }
        self.reader.as_mut()?.next_io()
    }
}

impl JobSource for Trace {
    fn instances(&self) -> Vec<Instance> {
        let fresh = Trace { path: self.path.clone(), parser: self.parser.clone(), reader: None, pending: VecDeque::new(), options: self.options.clone(), arrivals: 0, ..*self };
        let pacing = if self.open_loop { Pacing::Timed { depth: self.depth } } else { Pacing::Closed { depth: self.depth } };
        vec![Instance { suffix: None, plan: JobPlan::new(pacing, self.options.clone()), workload: Box::new(fresh), after: vec![] }]
    }
}

impl Workload for Trace {
    fn next(&mut self, _rng: &mut RngStream) -> Option<Request> {
        self.pending.pop_front().or_else(|| self.read().map(|(_, r)| r))
    }

    fn next_arrival_ns(&mut self, _now_ns: u64, _rng: &mut RngStream) -> Option<u64> {
        let (at_ns, req) = self.read()?;
        self.pending.push_back(req);
        if let Some(rate) = self.rate_iops {
            self.arrivals += 1;
            return Some(((self.arrivals - 1) as f64 * 1e9 / rate).round() as u64);
        }
        Some((at_ns.saturating_sub(self.first_ns) as f64 * self.time_scale).round() as u64)
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(format: Format, text: &str) -> Result<Vec<Line>, String> {
        let mut p = LineParser::new(format, Select { device_bytes: u64::MAX, ..Select::default() });
        text.lines().enumerate().map(|(i, l)| p.line(i + 1, l)).collect()
    }

    /// A gzip file of `members` copies of one member holding `member_bytes` of `byte`: a bomb
    /// that takes no time to make (gzip readers read concatenated members as one stream).
    pub(crate) fn gzip_bomb(name: &str, byte: u8, member_bytes: usize, members: usize) -> PathBuf {
        use flate2::{write::GzEncoder, Compression};
        use std::io::Write;
        let mut member = GzEncoder::new(vec![], Compression::best());
        member.write_all(&vec![byte; member_bytes]).unwrap();
        let member = member.finish().unwrap();
        let path = std::env::temp_dir().join(format!("sanlab-{}-{name}.gz", std::process::id()));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for _ in 0..members {
            file.write_all(&member).unwrap();
        }
        file.flush().unwrap();
        path
    }

    #[test]
    fn a_gzipped_trace_stops_at_the_limit_of_a_plain_one() {
        // 64 MiB of blank lines (valid, skipped) in 64 kB: read up to an 8 MiB limit.
        let max_bytes = 8 << 20;
        let path = gzip_bomb("blank-lines", b'\n', 1 << 20, 64);
        let mut r = Reader::with_limit(&path, &LineParser::new(Format::FioIolog, Select::default()), max_bytes).unwrap();
        let error = std::iter::from_fn(|| r.next_line()).find_map(Result::err).expect("an error at the limit");
        let message = at_line(&path, error.0, error.1);
        std::fs::remove_file(&path).unwrap();
        assert!(message.starts_with(&format!("{}:", path.display())), "names the file: {message}");
        assert!(message.contains(&format!("passes {max_bytes} bytes, the limit for a trace")), "{message}");
        assert!(r.line as u64 <= max_bytes, "stopped at the limit, line {}", r.line);
    }

    #[test]
    fn gzip_bombs_end_in_one_error_within_seconds() {
        // 10 GiB of zeros in 10 MB: the first line passes the longest line.
        let zeros = gzip_bomb("zeros", 0, 1 << 20, 10 << 10);
        let started = std::time::Instant::now();
        let msr = LineParser::new(Format::MsrCsv, Select::default());
        let message = scan(&zeros, &msr, 1.0).err().expect("an error");
        assert_eq!(message, format!("{}:1: line longer than {MAX_TRACE_LINE_BYTES} bytes: is this a trace?", zeros.display()));
        std::fs::remove_file(&zeros).unwrap();
        // 1 GiB of blank lines in 1 MB: refused at the compression ratio, after 16 MiB.
        let blank = gzip_bomb("blank", b'\n', 1 << 20, 1 << 10);
        let message = scan(&blank, &msr, 1.0).err().expect("an error");
        std::fs::remove_file(&blank).unwrap();
        assert!(message.starts_with(&format!("{}:", blank.display())), "names the file: {message}");
        assert!(message.contains(&format!("above the limit of {MAX_GZIP_RATIO}")) && message.contains("gzip bomb"), "{message}");
        assert!(started.elapsed().as_secs() < 20, "took {:?}", started.elapsed());
    }

    /// A folder of its own under the temp dir for one test's files.
    fn folder(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sanlab-trace-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The trace job `keys` builds in `dir`: its options, or its error.
    fn built(dir: &Path, keys: &str) -> Result<Vec<(String, String)>, String> {
        let t: toml::Table = keys.parse().unwrap();
        let source = build(&Spec::new(&t, "job").with_base_dir(dir.to_path_buf())).map_err(|e| format!("{}: {}", e.location, e.message))?;
        Ok(source.instances().remove(0).plan.options)
    }

    fn option<'o>(options: &'o [(String, String)], key: &str) -> Option<&'o str> {
        options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    #[test]
    fn records_out_of_time_order_are_replayed_in_file_order_and_said_so() {
        // Every format the same way: a record earlier than one before it is replayed at that
        // one's time (it was, silently); the job's options count them and name the first.
        let d = folder("order");
        std::fs::write(d.join("v3.iolog"), "fio version 3 iolog\n100 /dev/sdb read 0 4096\n300 /dev/sdb read 4096 4096\n200 /dev/sdb read 8192 4096\n50 /dev/sdb read 0 4096\n400 /dev/sdb read 0 4096\n").unwrap();
        std::fs::write(d.join("msr.csv"), "1000,web,0,Read,0,4096,1\n3000,web,0,Read,0,4096,1\n2000,web,0,Write,0,4096,1\n").unwrap();
        let iolog = built(&d, "file = \"v3.iolog\"").unwrap();
        assert_eq!(option(&iolog, "out_of_order"), Some("2 records earlier than one before them (the first at line 4, up to 0.000250s earlier): replayed in file order, each at the time of the latest record before it"));
        let msr = built(&d, "file = \"msr.csv\"").unwrap();
        assert_eq!(option(&msr, "out_of_order"), Some("1 records earlier than one before them (the first at line 3, up to 0.000100s earlier): replayed in file order, each at the time of the latest record before it"));
        // Without the timestamps pacing the replay, the order does not matter: nothing to say.
        assert_eq!(option(&built(&d, "file = \"v3.iolog\"\nmode = \"closed\"").unwrap(), "out_of_order"), None);
        assert_eq!(option(&built(&d, "file = \"v3.iolog\"\nrate_iops = 100").unwrap(), "out_of_order"), None);
        // In order, nothing either.
        assert_eq!(option(&built(Path::new(env!("CARGO_MANIFEST_DIR")), "file = \"../../tests/data/traces/v3.iolog\"").unwrap(), "out_of_order"), None);
    }

    #[test]
    fn a_binary_blktrace_cut_inside_a_record_says_where() {
        // A copy of the two CPU files with the second cut 24 bytes into its third record: the
        // partial record was dropped silently; the job's options now name the file and offset.
        let d = folder("cut");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces/blktrace");
        std::fs::copy(data.join("sdb.blktrace.0"), d.join("sdb.blktrace.0")).unwrap();
        let whole = std::fs::read(data.join("sdb.blktrace.1")).unwrap();
        assert_eq!(whole.len(), 144, "three records of 48 bytes");
        std::fs::write(d.join("sdb.blktrace.1"), &whole[..120]).unwrap();
        let options = built(&d, "file = \"sdb.blktrace.0\"").unwrap();
        let cut = d.join("sdb.blktrace.1");
        assert_eq!(option(&options, "cut"), Some(format!("{} ends inside a record at byte offset 96 (24 of its 48 bytes): that partial record is not replayed", cut.display()).as_str()));
        assert_eq!(option(&options, "records"), Some("3"), "the whole records are replayed");
        // A payload cut short is a partial record too.
        let mut with_payload = whole[..48].to_vec();
        with_payload[46] = 16; // pdu_len = 16 (little-endian), of which 4 bytes follow
        with_payload.extend_from_slice(&[0; 4]);
        std::fs::write(d.join("sdb.blktrace.1"), &with_payload).unwrap();
        let options = built(&d, "file = \"sdb.blktrace.0\"").unwrap();
        assert_eq!(option(&options, "cut"), Some(format!("{} ends inside a record at byte offset 0 (52 of its 64 bytes): that partial record is not replayed", cut.display()).as_str()));
        std::fs::copy(data.join("sdb.blktrace.1"), d.join("sdb.blktrace.1")).unwrap();
        assert_eq!(option(&built(&d, "file = \"sdb.blktrace.0\"").unwrap(), "cut"), None);
    }

    #[test]
    fn binary_cpu_files_without_q_records_replay_their_d_records() {
        // The CPU files with their Q records (action code 1) dropped, as blktrace -a issue
        // -a complete writes them: replayed at D, said so, as blkparse's text.
        let d = folder("unqueued");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces/blktrace");
        let mut dropped = 0;
        for cpu in ["sdb.blktrace.0", "sdb.blktrace.1"] {
            let bytes = std::fs::read(data.join(cpu)).unwrap();
            let (mut at, mut kept) = (0, vec![]);
            while at < bytes.len() {
                let end = at + 48 + usize::from(u16::from_le_bytes([bytes[at + 46], bytes[at + 47]]));
                if u32::from_le_bytes(bytes[at + 28..at + 32].try_into().unwrap()) & 0xffff != 1 {
                    kept.extend_from_slice(&bytes[at..end]);
                } else {
                    dropped += 1;
                }
                at = end;
            }
            std::fs::write(d.join(cpu), kept).unwrap();
        }
        assert!(dropped > 0);
        let options = built(&d, "file = \"sdb.blktrace.0\"").unwrap();
        assert!(option(&options, "action").is_some_and(|a| a.starts_with("D (issued to the driver)")), "{options:?}");
        let issued = built(Path::new(env!("CARGO_MANIFEST_DIR")), "file = \"../../tests/data/traces/blktrace/sdb.blktrace.0\"\naction = \"D\"").unwrap();
        assert_eq!(option(&options, "records"), option(&issued, "records"));
        assert_eq!(option(&issued, "action"), None, "given, the action is kept");
    }

    #[test]
    fn a_fio_iolog_of_several_files_picks_or_maps_them_as_other_formats_do() {
        // Two files were mixed onto one volume; now as every format of several disks.
        let d = folder("iolog-files");
        std::fs::write(d.join("two.iolog"), "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdc add\n100 /dev/sdb read 0 4096\n200 /dev/sdc write 0 4096\n300 /dev/sdb read 4096 4096\n").unwrap();
        let e = built(&d, "file = \"two.iolog\"").unwrap_err();
        assert!(e.ends_with("two.iolog: reads and writes of several files (/dev/sdb, /dev/sdc, ...): replaying them onto one volume mixes their offsets; select one with disk = \"/dev/sdb\", or map each onto its volume with volumes = { \"/dev/sdb\" = \"<volume>\", \"/dev/sdc\" = \"<volume>\" }"), "{e}");
        let sdb = built(&d, "file = \"two.iolog\"\ndisk = \"/dev/sdb\"").unwrap();
        assert_eq!((option(&sdb, "records"), option(&sdb, "skipped")), (Some("2"), Some("1 other files")));
        let e = built(&d, "file = \"two.iolog\"\ndisk = \"/dev/sdd\"").unwrap_err();
        assert!(e.ends_with("no read or write records to replay"), "{e}");
        // One file, as before.
        let one = built(Path::new(env!("CARGO_MANIFEST_DIR")), "file = \"../../tests/data/traces/v2.iolog\"").unwrap();
        assert_eq!(option(&one, "records"), Some("4"));
    }

    #[test]
    fn biosnoop_rows_without_a_disk_are_skipped() {
        // bcc issue 370: a request whose issuer biosnoop missed prints `?`, PID 0, no DISK and
        // SECTOR 0 (not read): its bytes have no place on a disk.
        let header = "TIME(s)        COMM           PID    DISK    T  SECTOR    BYTES   LAT(ms)\n";
        let b = lines(Format::Biosnoop, &format!("{header}0.000000000    dd             24852  sda     W  26236512  8192       3.00\n0.000000000    ?              0              R  0         8          2.00\n")).unwrap();
        assert_eq!((&b[1], &b[2]), (&Line::Io { at_ns: 0, req: Request { op: Op::Write, size_bytes: 8192, offset_bytes: 26_236_512 * 512 } }, &Line::Skipped("no disk")));
        // A COMM with a blank is one field more, read from the right as the rest.
        let b = lines(Format::Biosnoop, &format!("{header}1.5 DOM Worker 77 sda RA 64 4096 0.10\n")).unwrap();
        assert_eq!(b[1], Line::Io { at_ns: 1_500_000_000, req: Request { op: Op::Read, size_bytes: 4096, offset_bytes: 64 * 512 } });
        // One field fewer is an empty DISK only: here the PID is missing.
        let e = lines(Format::Biosnoop, &format!("{header}1.5 dd sda W 64 4096 0.10\n")).unwrap_err();
        assert_eq!(e, "expected 8 whitespace-separated fields as the header names (one fewer when DISK is empty), found 7 with DISK `sda`");
    }
}
