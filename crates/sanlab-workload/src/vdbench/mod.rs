//! vdbench block workloads: storage definitions (sd=), workload definitions (wd=) and run
//! definitions (rd=), from a parameter file (`vdbench_file.rs`) or the same keywords inline.
//! Semantics follow vdbench 5.04.06 (docs/references.md, checked against
//! Vdb/*.java): keywords may be abbreviated as vdbench allows ("keyword".startsWith(given), in
//! vdbench's own order), `xx=default` sets the defaults of the entries after it.
//!
//! Each SD of the run becomes one job instance: `threads` outstanding (iorate=max) or open
//! arrivals at the WDs' rates, each request drawn from one of the SD's workloads (WD x SD,
//! vdbench's "workload generator") by its skew or rate. With `priority=`, each workload has its
//! own arrivals and the SD's threads serve the highest priority first ([`Shared`]). Every SD
//! addresses the VM's one virtual disk from its offset on.

mod parm;

use parm::{names, numbers, read_items, values, Files, Item};
use crate::{Instance, JobSet, Pacing, Request, Workload};
use crate::Op;
use sanlab_spec::number::{checked, finite, rate_iops, DURATION, SIZE};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use sanlab_des::{RngStream, NS_PER_S};

pub const KIND: Kind<dyn Workload> = Kind { name: "vdbench", summary: "vdbench: a parameter file (sd/wd/rd: xfersize, rdpct, seekpct, rhpct, hitarea, hotband, ...) or the same keys inline", build };

/// vdbench's SD defaults (SD_entry: `hitarea = 1024*1024`, `threads = 8`) and RD defaults
/// (RD_entry: `elapsed = 30`, `interval = 1`).
const DEFAULT_HITAREA_BYTES: u64 = 1 << 20;
const DEFAULT_THREADS: u32 = 8;
const DEFAULT_ELAPSED_S: u64 = 30;
const DEFAULT_INTERVAL_S: u64 = 1;
/// vdbench's transfer sizes must be multiples of a sector (WD_entry.parseXfersize).
const SECTOR_BYTES: u64 = 512;

/// Keywords in the order vdbench tries them, which decides what an abbreviation means.
const SD_KEYWORDS: [&str; 18] = ["host", "hd", "lun", "count", "size", "threads", "hitarea", "offset", "align", "kstat", "instance", "replay", "journal", "resetlun", "resetbus", "openflags", "range", "streams"];
const WD_KEYWORDS: [&str; 20] = ["skew", "xfersize", "readpct", "rdpct", "writepct", "wrpct", "range", "hotband", "seekpct", "stride", "priority", "iorate", "rhpct", "whpct", "host", "hd", "openflags", "user", "threads", "streams"];
/// RD keywords (RD_entry.readParms): the `for` loops and the workload keys that make loops
/// (For_loop.checkForLoop) come after `pause` and before `distribution`.
const RD_KEYWORDS: [&str; 55] = [
    "iorate", "maxdata", "maxdataread", "maxdatawritten", "curve", "stopcurve", "elapsed", "interval", "warmup", "replay", "pause",
    "forxfersize", "forthreads", "forrdpct", "forrhpct", "forwhpct", "forseekpct", "forhitarea", "forcompratio", "forcompression", "fordepth", "forwidth", "forfiles", "forsizes", "fortotalsize", "forwss", "forworkingsetsize", "foroperations",
    "xfersize", "threads", "rdpct", "rhpct", "whpct", "seekpct", "hitarea", "compratio", "compression", "depth", "width", "files", "sizes", "totalsize", "wss", "workingsetsize",
    "distribution", "startcmd", "start_cmd", "endcmd", "end_cmd", "fwd", "fwdrate", "operations", "format", "openflags", "mount",
];
/// General parameters (MiscParms.scan), in vdbench's order.
const GENERAL_KEYWORDS: [&str; 42] = [
    "compratio", "compressionseed", "port", "pattern", "data_errors", "dataerrors", "swat", "validate", "journal", "startcmd", "start_cmd", "endcmd", "end_cmd", "heartbeat_error",
    "debug", "unix2windows", "formatxfersize", "create_anchors", "formatsds", "report", "report_run_totals", "histogram", "psrset", "auxreport", "monitor", "concatenatesds",
    "messagescan", "abort_failed_skew", "misc", "pattern_buffer", "showlba", "loop", "compression", "dedupratio", "dedupunit", "dedupsets", "deduphotsets", "dedupflipflop", "dedup",
    "fsd", "fwd", "rg",
];
/// SD, WD and RD keywords accepted without effect: how files are opened (sanlab has no host
/// cache for `openflags` to bypass), statistics sources, commands and pauses between runs, and
/// data compressibility (sanlab moves no data).
const ENTRY_IGNORED: [&str; 11] = ["openflags", "kstat", "instance", "pause", "startcmd", "start_cmd", "endcmd", "end_cmd", "compratio", "compression", "forcompratio"];
/// vdbench's curve points when `curve=` is not given (RD_entry.insertCurveRuns).
const DEFAULT_CURVE_PCT: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];

/// The first keyword of `list` that `given` abbreviates.
fn resolve(given: &str, list: &[&'static str]) -> Option<&'static str> {
    list.iter().find(|k| k.starts_with(given)).copied()
}

fn unknown(entry: &str, given: &str, list: &[&str]) -> String {
    format!("{entry}: unknown keyword `{given}`; expected one of {}{}", list.join(", "), did_you_mean(given, list.iter().copied()))
}

fn unmodelled(keyword: &str, why: &str) -> String {
    format!("`{keyword}=` is a vdbench keyword sanlab cannot model: {why}")
}

/// A vdbench number (Vdb_scan.not_numeric): k, m, g, t are powers of 1024, a trailing b is
/// allowed (kb, mb), h is hours; for elapsed, interval, pause and warmup m means minutes.
fn number(keyword: &str, s: &str) -> Result<f64, String> {
    let n = if s.parse::<f64>().is_ok() { finite(s) } else { suffixed(keyword, s) };
    n.map_err(|e| format!("{keyword}={e}"))
}

/// A number with one of vdbench's suffixes.
fn suffixed(keyword: &str, s: &str) -> Result<f64, String> {
    let lower = s.to_ascii_lowercase();
    let body = if lower.len() > 2 { lower.strip_suffix('b').unwrap_or(&lower) } else { &lower };
    let minutes = ["el", "in", "pa", "wa"].iter().any(|p| keyword.starts_with(p));
    let (front, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1024.0),
        Some('m') if minutes => (&body[..body.len() - 1], 60.0),
        Some('m') => (&body[..body.len() - 1], 1024.0 * 1024.0),
        Some('g') => (&body[..body.len() - 1], 1024.0f64.powi(3)),
        Some('t') => (&body[..body.len() - 1], 1024.0f64.powi(4)),
        Some('h') => (&body[..body.len() - 1], 3600.0),
        _ => ("", 0.0),
    };
    let n = finite(front).map_err(|_| format!("`{s}` is not a vdbench number (k, m, g, t are powers of 1024, e.g. 4k, 1m)"))?;
    checked(s, n * mult)
}

fn single<'a>(keyword: &str, value: &'a str) -> Result<&'a str, String> {
    match values(value)[..] {
        [one] => Ok(one),
        _ => Err(format!("{keyword}=`{value}`: expected one value")),
    }
}

fn percent(keyword: &str, value: &str) -> Result<f64, String> {
    let p = number(keyword, single(keyword, value)?)?;
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("{keyword}={p} is out of range: expected 0..=100"));
    }
    Ok(p)
}

fn bytes(keyword: &str, value: &str) -> Result<u64, String> {
    let b = number(keyword, single(keyword, value)?)?;
    // vdbench truncates a fractional byte count.
    SIZE.whole(value, b.trunc()).map_err(|e| format!("{keyword}={e}"))
}

/// Whole seconds, as vdbench keeps `elapsed`, `interval` and `warmup` (RD_entry: `(long)` of the
/// number, so 1.5 is 1).
fn seconds(keyword: &str, value: &str) -> Result<u64, String> {
    let s = number(keyword, single(keyword, value)?)?;
    if s < 0.0 {
        return Err(format!("{keyword}={value} must be 0 or positive"));
    }
    DURATION.whole(value, s * 1e9).map_err(|e| format!("{keyword}={e}"))?;
    Ok(s.trunc() as u64)
}

fn pair(keyword: &str, value: &str) -> Result<(f64, f64), String> {
    match values(value)[..] {
        [a, b] => {
            let (lo, hi) = (number(keyword, a)?, number(keyword, b)?);
            if lo < 0.0 {
                return Err(format!("{keyword}=`{value}`: the beginning must not be negative"));
            }
            Ok((lo, hi))
        }
        _ => Err(format!("{keyword}=`{value}`: expected a beginning and an ending, e.g. {keyword}=(10,20)")),
    }
}

/// Where an entry was defined (file, line), for messages; None for inline keys.
type At = Option<(usize, usize)>;

#[derive(Clone, Debug)]
struct Sd {
    name: String,
    at: At,
    size_bytes: Option<u64>,
    threads: u32,
    hitarea_bytes: u64,
    offset_bytes: u64,
    range: Option<(f64, f64)>,
    /// Random offsets are multiples of this (vdbench `align=`; default the transfer size).
    align_bytes: Option<u64>,
    /// A run's `forhitarea=` keeps the hit area even without rhpct or whpct, so misses avoid it
    /// (For_loop.useForOverrides).
    hitarea_forced: bool,
}

impl Sd {
    fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
        match keyword {
            "size" => self.size_bytes = Some(bytes(keyword, value)?),
            "threads" => self.threads = number(keyword, single(keyword, value)?).ok().filter(|t| (1.0..=65_536.0).contains(t)).ok_or_else(|| format!("threads={value}: expected 1..=65536"))? as u32,
            "hitarea" => self.hitarea_bytes = bytes(keyword, value)?,
            "offset" => {
                self.offset_bytes = bytes(keyword, value)?;
                if !self.offset_bytes.is_multiple_of(SECTOR_BYTES) {
                    return Err(format!("offset={value} must be a multiple of 512 bytes (vdbench)"));
                }
            }
            "range" => self.range = Some(pair(keyword, value)?),
            "align" => {
                let a = bytes(keyword, value)?;
                if a == 0 || !a.is_multiple_of(SECTOR_BYTES) {
                    return Err(format!("align={value} must be a positive multiple of 512 bytes (vdbench)"));
                }
                self.align_bytes = Some(a);
            }
            // Where the SD lives and how it is opened: the VM's virtual disk, here.
            "host" | "hd" | "lun" | "kstat" | "instance" | "openflags" => {}
            "count" => return Err(unmodelled(keyword, "several files or LUNs per SD are not modelled: the SD is the VM's virtual disk")),
            "replay" => return Err(unmodelled(keyword, "replay a trace with kind = \"trace\"")),
            "journal" => return Err(unmodelled(keyword, "journals belong to data validation, which is not modelled")),
            "resetlun" | "resetbus" => return Err(unmodelled(keyword, "SCSI resets are not modelled")),
            _ => return Err(unmodelled(keyword, "streams= is a WD keyword since vdbench 5.03, and streams are not modelled")),
        }
        Ok(())
    }
}

/// Transfer sizes of a WD.
#[derive(Clone, Debug, PartialEq)]
enum Xfer {
    /// (size, cumulative percent): one size, or a distribution `(4k,50,8k,50)`.
    Table(Vec<(u32, f64)>),
    /// `(min,max,align)`: a size between min and max in steps of align.
    Range { min: u32, max: u32, align: u32 },
}

impl Xfer {
    fn parse(value: &str) -> Result<Xfer, String> {
        let nums = values(value).iter().map(|v| number("xfersize", v)).collect::<Result<Vec<f64>, String>>()?;
        let size = |b: f64| -> Result<u32, String> {
            // Checked on the whole bytes vdbench keeps: 0.5 truncates to 0, which is no size.
            if b < 1.0 || b > f64::from(u32::MAX) || !(b as u64).is_multiple_of(SECTOR_BYTES) {
                return Err(format!("xfersize {b} bytes: a transfer size is a positive multiple of 512 bytes"));
            }
            Ok(b as u32)
        };
        match nums[..] {
            [one] => Ok(Xfer::Table(vec![(size(one)?, 100.0)])),
            [min, max, align] => {
                if min >= max {
                    return Err(format!("xfersize=(min,max,align): min {min} must be below max {max}"));
                }
                Ok(Xfer::Range { min: size(min)?, max: size(max)?, align: size(align)? })
            }
            _ if nums.len() % 2 == 0 && !nums.is_empty() => {
                let mut cum = 0.0;
                let mut table = vec![];
                for pair in nums.chunks(2) {
                    cum += pair[1];
                    table.push((size(pair[0])?, cum));
                }
                if cum.round() != 100.0 {
                    return Err(format!("xfersize distribution adds up to {cum}%, expected 100 (vdbench)"));
                }
                Ok(Xfer::Table(table))
            }
            _ => Err(format!("xfersize=`{value}`: expected a size, pairs of size and percent like (4k,50,8k,50), or (min,max,align)")),
        }
    }

    fn max_bytes(&self) -> u64 {
        match self {
            Xfer::Table(t) => t.iter().map(|e| u64::from(e.0)).max().unwrap_or(4096),
            Xfer::Range { max, .. } => u64::from(*max),
        }
    }

    fn draw(&self, rng: &mut RngStream) -> u64 {
        match self {
            Xfer::Table(t) if t.len() == 1 => u64::from(t[0].0),
            Xfer::Table(t) => {
                let u = rng.uniform() * t[t.len() - 1].1;
                u64::from(t.iter().find(|e| u < e.1).unwrap_or(&t[t.len() - 1]).0)
            }
            Xfer::Range { min, max, align } => u64::from(*min) + rng.below(u64::from((max - min) / align) + 1) * u64::from(*align),
        }
    }
}

/// seekpct: percent random, or sequential that stops at the end (`eof`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Seek {
    Percent(f64),
    Eof,
}

#[derive(Clone, Debug)]
struct Wd {
    name: String,
    at: At,
    sds: Vec<String>,
    xfer: Xfer,
    read_pct: f64,
    seek: Seek,
    rhpct: f64,
    whpct: f64,
    range: Option<(f64, f64)>,
    hotband: bool,
    skew: f64,
    iorate: f64,
    /// `stride=(min,max)`: random requests skip forward from the previous one by min plus a
    /// random multiple of the transfer size below max - min (WG_entry.blockBoundarySeek).
    stride_bytes: Option<(u64, u64)>,
    /// With concatenatesds=yes: requests outstanding on the WD's concatenated SD.
    threads: Option<u32>,
    /// `streams=n`: the SD cut into n equal parts, each read or written sequentially by its
    /// share of the SD's threads (StreamContext); 0 without.
    streams: u32,
    /// `priority=n`: 1 is served first by the SD's threads (WD_entry, FifoList).
    priority: Option<u32>,
}

impl Wd {
    fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
        match keyword {
            "sd" => self.sds = names(value)?,
            "skew" => self.skew = percent(keyword, value)?,
            "xfersize" => self.xfer = Xfer::parse(value)?,
            // vdbench keeps whole percents: `wd.readpct = (int) prm.numerics[0]`.
            "readpct" | "rdpct" => self.read_pct = percent(keyword, value)?.trunc(),
            "writepct" | "wrpct" => self.read_pct = 100.0 - percent(keyword, value)?.trunc(),
            "range" => self.range = Some(pair(keyword, value)?),
            "hotband" => {
                self.range = Some(pair(keyword, value)?);
                self.hotband = true;
            }
            "seekpct" => {
                for v in values(value) {
                    let lower = v.to_ascii_lowercase();
                    self.seek = if "sequential".starts_with(&lower) {
                        Seek::Percent(0.0)
                    } else if lower == "eof" {
                        Seek::Eof
                    } else if "random".starts_with(&lower) {
                        Seek::Percent(100.0)
                    } else if "poisson".starts_with(&lower) {
                        return Err(unmodelled(keyword, "seekpct=poisson is not modelled: give a percent, sequential, random or eof"));
                    } else {
                        Seek::Percent(percent(keyword, v)?)
                    };
                }
            }
            "iorate" => self.iorate = rate_iops(value, number(keyword, single(keyword, value)?)?)?,
            "rhpct" => self.rhpct = percent(keyword, value)?,
            "whpct" => self.whpct = percent(keyword, value)?,
            "host" | "hd" | "openflags" => {}
            "stride" => {
                let [lo, hi] = values(value)[..] else {
                    return Err(format!("stride=`{value}`: expected a minimum and a maximum, e.g. stride=(4k,64k)"));
                };
                let (lo, hi) = (bytes(keyword, lo)?, bytes(keyword, hi)?);
                if hi < lo {
                    return Err(format!("stride=`{value}`: the maximum must not be below the minimum (vdbench)"));
                }
                self.stride_bytes = Some((lo, hi));
            }
            // vdbench keeps a whole number (Vdb_scan.getInt) and refuses 0 (WD_entry); its
            // priorities count from 1 (FifoList.countPriorities), so below 1 is refused here.
            "priority" => {
                let n = number(keyword, single(keyword, value)?)?.trunc();
                if !(1.0..=f64::from(u32::MAX)).contains(&n) {
                    return Err(format!("priority={value}: expected a whole number from 1 (served first) up, e.g. priority=1 (vdbench: a workload priority may not be zero)"));
                }
                self.priority = Some(n as u32);
            }
            "user" => return Err(unmodelled(keyword, "user-written generators cannot run in sanlab")),
            "threads" => {
                let t = number(keyword, single(keyword, value)?)?;
                if !(1.0..=65_536.0).contains(&t) {
                    return Err(format!("threads={value}: expected 1..=65536"));
                }
                self.threads = Some(t as u32);
            }
            _ => {
                let n = number(keyword, single(keyword, value)?)?;
                if !(2.0..=65_536.0).contains(&n) {
                    return Err(format!("streams={value}: expected 2..=65536 (vdbench needs at least two streams)"));
                }
                self.streams = n as u32;
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum IoRate {
    Max,
    Rate(f64),
    /// A max run, then runs at percentages of the rate it reached.
    Curve,
}

/// Inter-arrival times with a numeric iorate (RD `distribution`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arrivals {
    Exponential,
    Uniform,
    Deterministic,
}

/// What a `for` loop of an RD varies (For_loop's labels). A workload key given in an RD is a
/// loop too (`xfersize=8k` is `forxfersize=8k`, one value).
#[derive(Clone, Copy, Debug, PartialEq)]
enum ForKey {
    Xfersize,
    Threads,
    Rdpct,
    Rhpct,
    Whpct,
    Seekpct,
    Hitarea,
    /// Data compressibility: runs are made, the I/O is the same (sanlab moves no data).
    Compratio,
    Iorate,
}

impl ForKey {
    fn of(keyword: &str) -> Option<ForKey> {
        Some(match keyword.strip_prefix("for").unwrap_or(keyword) {
            "xfersize" => ForKey::Xfersize,
            "threads" => ForKey::Threads,
            "rdpct" => ForKey::Rdpct,
            "rhpct" => ForKey::Rhpct,
            "whpct" => ForKey::Whpct,
            "seekpct" => ForKey::Seekpct,
            "hitarea" => ForKey::Hitarea,
            "compratio" | "compression" => ForKey::Compratio,
            _ => return None,
        })
    }

    /// The name vdbench shows in "For loops: xfersize=4k threads=8".
    fn label(self) -> &'static str {
        match self {
            ForKey::Xfersize => "xfersize",
            ForKey::Threads => "threads",
            ForKey::Rdpct => "rdpct",
            ForKey::Rhpct => "rhpct",
            ForKey::Whpct => "whpct",
            ForKey::Seekpct => "seekpct",
            ForKey::Hitarea => "hitarea",
            ForKey::Compratio => "compratio",
            ForKey::Iorate => "iorate",
        }
    }

    /// One value, checked as the keyword it replaces.
    fn parse(self, keyword: &str, v: &str) -> Result<f64, String> {
        let n = match self {
            ForKey::Seekpct => match v.to_ascii_lowercase().as_str() {
                w if "sequential".starts_with(w) => 0.0,
                w if "random".starts_with(w) => 100.0,
                "eof" => SEEK_EOF,
                _ => number(keyword, v)?,
            },
            _ => number(keyword, v)?,
        };
        let ok = match self {
            ForKey::Xfersize => n >= 1.0 && n <= f64::from(u32::MAX) && (n.trunc() as u64).is_multiple_of(SECTOR_BYTES),
            ForKey::Threads => (1.0..=65_536.0).contains(&n),
            ForKey::Rdpct | ForKey::Rhpct | ForKey::Whpct => (0.0..=100.0).contains(&n),
            ForKey::Seekpct => n == SEEK_EOF || (0.0..=100.0).contains(&n),
            ForKey::Hitarea => n >= 0.0 && n <= SIZE.max() as f64,
            ForKey::Compratio => n > 0.0,
            ForKey::Iorate => n > 0.0,
        };
        if !ok {
            let expected = match self {
                ForKey::Xfersize => "a positive multiple of 512 bytes",
                ForKey::Threads => "1..=65536",
                ForKey::Rdpct | ForKey::Rhpct | ForKey::Whpct => "0..=100",
                ForKey::Seekpct => "0..=100, sequential, random or eof",
                ForKey::Hitarea => "a size",
                ForKey::Compratio => "a positive ratio",
                ForKey::Iorate => "a positive rate",
            };
            return Err(format!("{keyword}=`{v}`: expected {expected}"));
        }
        if self == ForKey::Iorate {
            rate_iops(v, n)?;
        }
        Ok(n)
    }

    /// The value as vdbench prints it (FileAnchor.whatSize for all but iorate and seekpct).
    fn show(self, n: f64) -> String {
        match self {
            ForKey::Iorate => format!("{}", n.trunc()),
            ForKey::Seekpct if n == SEEK_EOF => "eof".into(),
            _ => what_size(n),
        }
    }
}

/// `seekpct=eof` among a loop's numbers (vdbench's -1).
const SEEK_EOF: f64 = -1.0;

/// vdbench's FileAnchor.whatSize: below 1k a whole number, else three decimals with k, m, g, t
/// or p, `.000` dropped.
fn what_size(n: f64) -> String {
    const UNITS: [(f64, &str); 5] = [(1024.0, "k"), (1048576.0, "m"), (1073741824.0, "g"), (1099511627776.0, "t"), (1125899906842624.0, "p")];
    if n < 1024.0 {
        return format!("{}", n.trunc());
    }
    let (div, unit) = UNITS.iter().rev().find(|(d, _)| n >= *d).copied().unwrap_or(UNITS[0]);
    let text = format!("{:.3}", n / div);
    format!("{}{unit}", text.strip_suffix(".000").unwrap_or(&text))
}

#[derive(Clone, Debug)]
struct Rd {
    name: String,
    at: At,
    wds: Vec<String>,
    /// `sd=` in the RD: the SDs its WDs run on instead of their own (or, without `wd=`, the
    /// latest wd=default runs on them).
    sds: Option<Vec<String>>,
    iorate: Option<IoRate>,
    /// `iorate=(100,200,...)`: a loop after the RD's other loops (RD_entry.parserCleanup).
    iorates: Vec<f64>,
    /// The RD's loops, outermost first; a keyword given again replaces its loop, which moves to
    /// the end (For_loop's constructor).
    fors: Vec<(ForKey, Vec<f64>)>,
    curve_pct: Vec<f64>,
    /// `stopcurve=`: vdbench ends once a curve point's response time is above this (ms).
    stopcurve_ms: Option<f64>,
    elapsed_s: u64,
    /// The reporting interval of vdbench's summary lines; 0 until set means vdbench's default
    /// for it, `min(elapsed/2, 60)` (RD_entry.parserCleanup).
    interval_s: u64,
    warmup_s: Option<u64>,
    arrivals: Arrivals,
    /// `maxdata`, `maxdataread`, `maxdatawritten`: data after which the run stops, besides
    /// `elapsed`; 100 or less is a multiple of the SDs' sizes (CollectSlaveStats.getLimit).
    maxdata: [Option<f64>; 3],
}

impl Rd {
    fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
        if let Some(key) = ForKey::of(keyword) {
            let mut list = numbers(value, &|v| key.parse(keyword, v))?;
            if keyword.contains("compression") {
                // compression= is a percent; vdbench turns it into a ratio (percentageToRatio).
                list = list.iter().map(|p| 100.0 / p).collect();
            }
            if list.is_empty() {
                return Err(format!("{keyword}=`{value}`: expected one or more values"));
            }
            self.fors.retain(|(k, _)| *k != key);
            self.fors.push((key, list));
            return Ok(());
        }
        match keyword {
            "wd" => self.wds = names(value)?,
            "sd" => self.sds = Some(names(value)?),
            "iorate" => {
                self.iorates.clear();
                self.iorate = Some(match values(value)[..] {
                    [v] if v.eq_ignore_ascii_case("max") => IoRate::Max,
                    [v] if v.eq_ignore_ascii_case("curve") => IoRate::Curve,
                    _ => {
                        let rates = numbers(value, &|v| ForKey::Iorate.parse(keyword, v))?;
                        match rates[..] {
                            [] => return Err(format!("iorate=`{value}`: expected max, curve or a rate")),
                            [one] => IoRate::Rate(one),
                            _ => {
                                self.iorates = rates;
                                IoRate::Rate(self.iorates[0])
                            }
                        }
                    }
                })
            }
            "curve" => {
                self.curve_pct = numbers(value, &|v| number(keyword, v).and_then(|p| if p > 0.0 && p <= 1000.0 { Ok(p) } else { Err(format!("curve point `{v}`: expected a percent of the max rate, above 0")) }))?;
                if self.curve_pct.is_empty() {
                    return Err(format!("curve=`{value}`: expected percents of the max rate, e.g. curve=(10,50,90)"));
                }
            }
            "elapsed" => {
                self.elapsed_s = seconds(keyword, value)?;
                if self.elapsed_s == 0 {
                    return Err(format!("elapsed={value}: vdbench keeps whole seconds, which makes 0; expected at least elapsed=1"));
                }
            }
            // 0 (or below 1, which vdbench truncates to 0) asks for vdbench's default.
            "interval" => self.interval_s = seconds(keyword, value)?,
            "warmup" => self.warmup_s = Some(seconds(keyword, value)?),
            "maxdata" | "maxdataread" | "maxdatawritten" => {
                let b = number(keyword, single(keyword, value)?)?;
                if b <= 0.0 {
                    return Err(format!("{keyword}={value}: expected a positive amount of data (100 or less: times the SDs' sizes)"));
                }
                self.maxdata[match keyword { "maxdata" => 0, "maxdataread" => 1, _ => 2 }] = Some(b);
            }
            "distribution" => {
                let v = single(keyword, value)?.to_ascii_lowercase();
                self.arrivals = if "exponential".starts_with(&v) {
                    Arrivals::Exponential
                } else if "uniform".starts_with(&v) {
                    Arrivals::Uniform
                } else if "deterministic".starts_with(&v) {
                    Arrivals::Deterministic
                } else {
                    return Err(format!("distribution=`{v}`: expected exponential, uniform or deterministic (variable and spike are not modelled)"));
                };
            }
            // Around the run or about data contents: no effect on the I/O (listed as ignored).
            "pause" | "startcmd" | "start_cmd" | "endcmd" | "end_cmd" | "openflags" => {}
            "stopcurve" => {
                let ms = number(keyword, single(keyword, value)?)?;
                if ms <= 0.0 {
                    return Err(format!("stopcurve={value}: expected a response time in ms, above 0"));
                }
                self.stopcurve_ms = Some(ms);
            }
            "replay" => return Err(unmodelled(keyword, "replay a trace with kind = \"trace\"")),
            "format" => return Err(unmodelled(keyword, "formatting runs are not modelled")),
            "mount" => return Err(unmodelled(keyword, "mounts are not modelled")),
            _ => return Err(unmodelled(keyword, "file system workloads (fsd/fwd and their for loops) are not modelled: use sd/wd")),
        }
        Ok(())
    }
}

/// A parsed parameter file (or inline keys): its definitions, in order.
struct Parm {
    sds: Vec<Sd>,
    wds: Vec<Wd>,
    rds: Vec<Rd>,
    /// The latest wd=default: what an RD with `sd=` and no `wd=` runs.
    default_wd: Wd,
    /// Keywords accepted without effect, each once, in the order first seen.
    ignored: Vec<&'static str>,
    /// concatenatesds=yes: each WD runs on one SD made of its SDs end to end.
    concatenate: bool,
}

fn default_sd() -> Sd {
    Sd { name: "default".into(), at: None, size_bytes: None, threads: DEFAULT_THREADS, hitarea_bytes: DEFAULT_HITAREA_BYTES, offset_bytes: 0, range: None, align_bytes: None, hitarea_forced: false }
}

fn default_wd() -> Wd {
    Wd { name: "default".into(), at: None, sds: vec![], xfer: Xfer::Table(vec![(4096, 100.0)]), read_pct: 100.0, seek: Seek::Percent(100.0), rhpct: 0.0, whpct: 0.0, range: None, hotband: false, skew: 0.0, iorate: 0.0, stride_bytes: None, threads: None, streams: 0, priority: None }
}

fn default_rd() -> Rd {
    Rd {
        name: "default".into(),
        at: None,
        wds: vec![],
        sds: None,
        iorate: None,
        iorates: vec![],
        fors: vec![],
        curve_pct: DEFAULT_CURVE_PCT.to_vec(),
        stopcurve_ms: None,
        elapsed_s: DEFAULT_ELAPSED_S,
        interval_s: DEFAULT_INTERVAL_S,
        warmup_s: None,
        arrivals: Arrivals::Exponential,
        maxdata: [None; 3],
    }
}

/// Which entry the keywords go to. `None` in an entry means its `default`.
enum Section {
    General,
    Host,
    Sd(Option<usize>),
    Wd(Option<usize>),
    Rd(Option<usize>),
}

/// Starts a new entry named `name`, or selects the defaults (`xx=default`); names are unique.
fn start<T: Clone>(list: &mut Vec<T>, default: &T, name: &str, at: At, what: &str, name_of: fn(&T) -> &str, init: fn(&mut T, String, At)) -> Result<Option<usize>, String> {
    if name == "default" {
        return Ok(None);
    }
    if list.iter().any(|e| name_of(e) == name) {
        return Err(format!("{what}={name} is defined twice"));
    }
    let mut e = default.clone();
    init(&mut e, name.to_string(), at);
    list.push(e);
    Ok(Some(list.len() - 1))
}

/// Sorts the items of a parameter file into SDs, WDs and RDs (vdbench reads general parameters,
/// then hd=, sd=, wd=, rd=, in that order).
fn parse_items(items: &[Item], files: &Files) -> Result<Parm, String> {
    let (mut dsd, mut dwd, mut drd) = (default_sd(), default_wd(), default_rd());
    let mut p = Parm { sds: vec![], wds: vec![], rds: vec![], default_wd: default_wd(), ignored: vec![], concatenate: false };
    let ignore = |ignored: &mut Vec<&'static str>, kw: &'static str| {
        if !ignored.contains(&kw) {
            ignored.push(kw);
        }
    };
    let mut section = Section::General;
    for item in items {
        let at = Some((item.file, item.line));
        let fail = |msg: String| files.at(item.file, item.line, msg);
        let name = || single(&item.keyword, &item.value).map(str::to_string).map_err(fail);
        let k = item.keyword.as_str();
        if matches!(k, "fsd" | "fwd" | "fwdrate") {
            return Err(fail(unmodelled(k, "file system workloads (fsd/fwd) are not modelled: use sd/wd")));
        }
        if k == "rg" {
            return Err(fail(unmodelled(k, "replay groups are not modelled: replay a trace with kind = \"trace\"")));
        }
        section = match (&section, k) {
            (Section::General | Section::Host, "hd" | "host") => Section::Host,
            (Section::General | Section::Host | Section::Sd(_), "sd") => Section::Sd(start(&mut p.sds, &dsd, &name()?, at, "sd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (Section::Sd(_) | Section::Wd(_), "wd") => Section::Wd(start(&mut p.wds, &dwd, &name()?, at, "wd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (_, "rd") => Section::Rd(start(&mut p.rds, &drd, &name()?, at, "rd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (Section::General, "wd") => return Err(fail("wd= before any sd=: vdbench reads sd= first".into())),
            (Section::Host, _) => continue,
            (Section::General, _) => {
                let kw = resolve(k, &GENERAL_KEYWORDS).ok_or_else(|| fail(unknown("general parameters", k, &GENERAL_KEYWORDS)))?;
                match kw {
                    "validate" | "journal" => return Err(fail(unmodelled(kw, "data validation is not modelled"))),
                    "concatenatesds" => {
                        p.concatenate = match single(kw, &item.value).map_err(fail)?.to_ascii_lowercase() {
                            v if v.starts_with('y') => true,
                            v if v.starts_with('n') => false,
                            v => return Err(fail(format!("concatenatesds=`{v}`: expected yes or no"))),
                        };
                        continue;
                    }
                    "loop" => return Err(fail(unmodelled(kw, "repeating every run is not modelled: run the scenario again with another --seed, or sweep seeds"))),
                    "fsd" | "fwd" => return Err(fail(unmodelled(kw, "file system workloads (fsd/fwd) are not modelled: use sd/wd"))),
                    "rg" => return Err(fail(unmodelled(kw, "replay groups are not modelled: replay a trace with kind = \"trace\""))),
                    // The others leave the I/O sanlab simulates as it is (data patterns, reporting,
                    // monitoring, commands around the runs): accepted and listed once as ignored.
                    _ => {
                        ignore(&mut p.ignored, kw);
                        continue;
                    }
                }
            }
            (Section::Sd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.sds[*i],
                    None => &mut dsd,
                };
                let kw = resolve(k, &SD_KEYWORDS).ok_or_else(|| fail(unknown(&format!("sd={}", target.name), k, &SD_KEYWORDS)))?;
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                let entry = format!("sd={}", target.name);
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
            (Section::Wd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.wds[*i],
                    None => &mut dwd,
                };
                let kw = if k == "sd" { "sd" } else { resolve(k, &WD_KEYWORDS).ok_or_else(|| fail(unknown(&format!("wd={}", target.name), k, &WD_KEYWORDS)))? };
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                let entry = format!("wd={}", target.name);
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
            (Section::Rd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.rds[*i],
                    None => &mut drd,
                };
                let entry = format!("rd={}", target.name);
                let kw = match k {
                    "wd" => "wd",
                    "sd" => "sd",
                    _ => resolve(k, &RD_KEYWORDS).ok_or_else(|| fail(unknown(&entry, k, &RD_KEYWORDS)))?,
                };
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
        };
    }
    // WD_entry.checkParameters: a WD's own rate replaces its share of the run's rate.
    if let Some(w) = p.wds.iter().find(|w| w.skew != 0.0 && w.iorate != 0.0) {
        let msg = format!("wd={}: iorate= and skew= are mutually exclusive (vdbench): a workload gets its own rate or a share of the run's", w.name);
        return Err(match w.at {
            Some((f, l)) => files.at(f, l, msg),
            None => msg,
        });
    }
    p.default_wd = dwd;
    Ok(p)
}

/// vdbench's `*` wildcards in names (common.simple_wildcard).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        // Every suffix after `head`, cut at character boundaries (names need not be ASCII).
        Some((head, tail)) => name.strip_prefix(head).is_some_and(|rest| rest.char_indices().map(|(i, _)| i).chain([rest.len()]).any(|i| matches(tail, &rest[i..]))),
    }
}

/// A byte range of the SD that requests of one kind (hits or misses) fall in.
#[derive(Clone, Debug)]
struct Context {
    low: u64,
    high: u64,
    next_seq: Option<u64>,
}

/// HotBand's access curve (Vdb/HotBand.java): cache sizes in MB (1000^2), the cumulative share
/// of accesses within each, and the slope between points, copied as vdbench has them — the last
/// slope included, which is about 40x too small (arrays.md 3.7).
const HOTBAND_MB: [f64; 29] = [
    0.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0, 262144.0, 524288.0, 1048576.0, 2097152.0, 4194304.0,
    8388608.0, 16777216.0, 33554432.0, 67108864.0, 134217728.0, 268435456.0, 536870912.0, 1073741824.0, 10737418240.0,
];
const HOTBAND_CDF: [f64; 29] = [
    0.0, 0.087217, 0.10101, 0.132206, 0.159946, 0.201713, 0.262602, 0.32645, 0.366902, 0.386175, 0.436941, 0.482631, 0.523752, 0.56076, 0.594068, 0.624045, 0.651024, 0.675305,
    0.697159, 0.716827, 0.734528, 0.750459, 0.764797, 0.777701, 0.789314, 0.799767, 0.809174, 0.81764, 1.0,
];
const HOTBAND_SLOPE: [f64; 29] = [
    183.4511752, 1159.945628, 1025.778015, 2307.172362, 3064.644852, 4204.331611, 8019.055699, 25313.90019, 106263.1067, 80683.52498, 179296.7222, 398437.1604, 885415.912,
    1967590.916, 4372424.257, 9716498.348, 21592218.55, 47982707.89, 106628239.8, 236951643.9, 526559208.7, 1170131575.0, 2600292389.0, 5778427530.0, 12840950067.0,
    28535444594.0, 63412099098.0, 1313220630.0, 10737418240.0,
];

/// HotBand.get_rec_index, as vdbench computes it: the offset read off the curve is in KB, but it
/// is divided by the record size in *bytes*, which packs the band 1000x towards its start (about
/// a third of hotband reads land in its first MiB, arrays.md 3.7). Writes are moved on by 1 % of
/// the band (`add_one_pct_to_writes`).
fn hotband_record(band_mb: u64, record_bytes: u64, read: bool, u: f64) -> u64 {
    let i = HOTBAND_CDF.partition_point(|&p| p <= u) - 1;
    let kb_offset = (((u - HOTBAND_CDF[i]) * HOTBAND_SLOPE[i]) + HOTBAND_MB[i]) as u64 * 1000;
    let records = (band_mb * 1_000_000 / record_bytes).max(1);
    let rec = kb_offset / record_bytes + if read { 0 } else { records / 100 };
    rec % records
}

/// One WD on one SD (vdbench's workload generator).
#[derive(Clone, Debug)]
struct Generator {
    read_pct: f64,
    xfer: Xfer,
    rhpct: f64,
    whpct: f64,
    seek: Seek,
    hit: Option<Context>,
    miss: Context,
    hotband_mb: Option<u64>,
    align_bytes: Option<u64>,
    stride_bytes: Option<(u64, u64)>,
    wrap: Option<Wrap>,
}

/// A range past 100 %: a request that would run past the SD's end moves back by its size,
/// rounded down to the largest transfer.
#[derive(Clone, Copy, Debug)]
struct Wrap {
    sd_bytes: u64,
    back_bytes: u64,
    sd_offset_bytes: u64,
}

fn chance(rng: &mut RngStream, pct: f64) -> bool {
    pct >= 100.0 || (pct > 0.0 && rng.uniform() * 100.0 < pct)
}

impl Generator {
    /// The hit and miss areas of `wd` on `sd` (WG_entry.calculateContext): hits in
    /// `[start, start + hitarea)`, misses after the hit area to the end of the range, both rounded
    /// down to the largest transfer size; block 0 of a LUN is never touched; the SD offset moves
    /// the low ends only. The hit area exists only when rhpct or whpct asks for hits.
    fn new(wd: &Wd, sd: &Sd, sd_bytes: u64) -> Result<Generator, String> {
        let max_xfer = wd.xfer.max_bytes();
        let (lo, hi) = wd.range.or(sd.range).unwrap_or((0.0, 100.0));
        if lo >= hi {
            return Err(format!("range=({lo},{hi}): the second value must be higher than the first"));
        }
        // A range past 100 % (up to 200) runs on past the SD's end, where misses wrap to its
        // start (WG_entry.calculateContext: crossing_range_boundary); seekpct=eof ends at 100 %.
        let hi = if hi > 100.0 && hi <= 200.0 && wd.seek == Seek::Eof { 100.0 } else { hi };
        let crossing = hi > 100.0 && hi <= 200.0;
        if crossing && lo < 100.0 && hi < 200.0 && hi - lo >= 100.0 {
            return Err(format!("range=({lo},{hi}) may not span 100 % or more (vdbench): e.g. range=({lo},{})", lo + 99.0));
        }
        let hit_bytes = if wd.rhpct + wd.whpct > 0.0 || sd.hitarea_forced { sd.hitarea_bytes } else { 0 };
        let start = if lo <= 100.0 { (sd_bytes as f64 * lo / 100.0) as u64 } else { lo as u64 };
        let end = if hi <= 200.0 { (sd_bytes as f64 * hi / 100.0) as u64 } else { hi as u64 };
        if end > sd_bytes && !crossing {
            return Err(format!("range ends at byte {end}, beyond the SD's {sd_bytes} bytes"));
        }
        let (mut mlow, mut hlow) = (start + hit_bytes, start);
        let hhigh = hlow + hit_bytes;
        if mlow == 0 {
            mlow = max_xfer;
        }
        if hit_bytes > 0 && hlow == 0 {
            hlow = max_xfer;
        }
        let round = |b: u64| b / max_xfer * max_xfer;
        let miss = Context { low: round(mlow) + sd.offset_bytes, high: round(end), next_seq: None };
        let hit = (hit_bytes > 0).then(|| Context { low: round(hlow) + sd.offset_bytes, high: round(hhigh), next_seq: None });
        if miss.high < miss.low + 2 * max_xfer {
            return Err(format!(
                "after the hit area ({hit_bytes} bytes), the offset and rounding to xfersize {max_xfer}, the SD ({sd_bytes} bytes) has no room for misses: vdbench needs twice the largest xfersize; make the SD larger (the default hitarea is 1m)"
            ));
        }
        if let Some(h) = &hit {
            if h.high < h.low + 2 * max_xfer {
                return Err(format!("hitarea={} bytes must hold twice the largest xfersize ({max_xfer} bytes), after block 0 is left out", sd.hitarea_bytes));
            }
        }
        let hotband_mb = match wd.hotband {
            false => None,
            true => match (miss.high - miss.low) / 1_000_000 {
                0 => return Err("a hotband needs at least 1,000,000 bytes (vdbench)".into()),
                mb => Some(mb),
            },
        };
        let wrap = crossing.then_some(Wrap { sd_bytes, back_bytes: sd_bytes / max_xfer * max_xfer, sd_offset_bytes: sd.offset_bytes });
        Ok(Generator { read_pct: wd.read_pct, xfer: wd.xfer.clone(), rhpct: wd.rhpct, whpct: wd.whpct, seek: wd.seek, hit, miss, hotband_mb, align_bytes: sd.align_bytes, stride_bytes: wd.stride_bytes, wrap })
    }

    /// The next request, or None at the end of a seekpct=eof run; with a range past 100 %, one
    /// running past the SD's end wraps (WG_entry's crossing_range_boundary).
    fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        loop {
            let mut r = self.draw(rng)?;
            let Some(w) = self.wrap else { return Some(r) };
            let rel = r.offset_bytes - w.sd_offset_bytes;
            if rel + u64::from(r.size_bytes) <= w.sd_bytes {
                return Some(r);
            }
            // Back by the SD's size; one that lands on block 0 is drawn again, as vdbench does.
            let back = rel.saturating_sub(w.back_bytes);
            if back > 0 {
                r.offset_bytes = back + w.sd_offset_bytes;
                return Some(r);
            }
        }
    }

    /// One request as drawn (WG_task.createNormalIO's order: read, size, hit, random, offset),
    /// before a range past 100 % wraps it.
    fn draw(&mut self, rng: &mut RngStream) -> Option<Request> {
        let read = chance(rng, self.read_pct);
        let mut size = self.xfer.draw(rng);
        let hit = chance(rng, if read { self.rhpct } else { self.whpct }) && self.hit.is_some();
        let random = match self.seek {
            Seek::Eof => false,
            Seek::Percent(p) => chance(rng, p),
        };
        let hotband = self.hotband_mb.filter(|_| !hit);
        let ctx = if hit { self.hit.as_mut().expect("checked") } else { &mut self.miss };
        let offset = if random {
            let o = match (hotband, self.stride_bytes) {
                // Stride: the first at the start, then forward from the previous, back to the
                // start past the end.
                (None, Some((min, max))) => match ctx.next_seq {
                    None => ctx.low,
                    Some(prev) => {
                        let step = (max - min) / size;
                        let o = prev + min + ((rng.address_uniform() * step as f64) as u64) * size;
                        if o + size > ctx.high { ctx.low } else { o }
                    }
                },
                (Some(mb), _) => ctx.low + hotband_record(mb, size, read, rng.address_uniform()) * size,
                // align=: any multiple of it that leaves room for the request.
                (None, None) => match self.align_bytes {
                    Some(a) => ctx.low + rng.address_below((ctx.high - ctx.low).saturating_sub(size) / a + 1) * a,
                    None => ctx.low + rng.address_below((ctx.high - ctx.low) / size) * size,
                },
            };
            // vdbench remembers where a random request ended, for a later sequential one.
            ctx.next_seq = Some(o + size);
            o
        } else {
            let mut next = ctx.next_seq.unwrap_or(ctx.low);
            if next + size > ctx.high {
                if ctx.high > next {
                    // A short block closes off the area (WG_entry.wg_get_next_seq).
                    size = ctx.high - next;
                } else if self.seek == Seek::Eof {
                    return None;
                } else {
                    next = ctx.low;
                }
            }
            ctx.next_seq = Some(next + size);
            next
        };
        Some(Request { op: if read { Op::Read } else { Op::Write }, size_bytes: size as u32, offset_bytes: offset })
    }
}

/// `maxdata=`: the run's SDs stop once this much data (all, read, written) was asked for. vdbench
/// checks at the end of each interval and stops after the next one; here every SD stops at the
/// request that reaches the limit.
#[derive(Debug)]
struct MaxData {
    limit_bytes: [Option<u64>; 3],
    done_bytes: std::cell::Cell<[u64; 3]>,
}

impl MaxData {
    fn reached(&self) -> bool {
        let done = self.done_bytes.get();
        self.limit_bytes.iter().zip(done).any(|(l, d)| l.is_some_and(|l| d >= l))
    }

    fn add(&self, r: &Request) {
        let mut done = self.done_bytes.get();
        done[0] += u64::from(r.size_bytes);
        done[if r.op == Op::Read { 1 } else { 2 }] += u64::from(r.size_bytes);
        self.done_bytes.set(done);
    }
}

/// The run's reporting interval (`interval=`), for its summary lines, and where it was given.
#[derive(Clone, Debug)]
struct Interval {
    ns: u64,
    /// The scenario key to blame: `file`, or `interval` for the inline form.
    key: &'static str,
    /// "file:line: rd=name" of the run.
    at: String,
}

/// One WD on one SD of a run, as [`assemble`] collects them.
struct Gen {
    sd: usize,
    generator: Generator,
    /// Its skew, or rate, among the SD's generators.
    weight: f64,
    /// Its priority class, in a run with priorities.
    class: Option<Class>,
}

/// A workload's priority on an SD and its own arrivals.
struct Class {
    rank: u32,
    wd: String,
    /// None: `iorate=max` without a rate of its own, a request always waiting.
    rate_iops: Option<f64>,
}

/// An SD's threads shared by workloads with `priority=` (FifoList): each generator has its own
/// arrivals, which wait for a thread; a free thread serves the highest-priority waiting request
/// (generators are ordered by priority), else the highest-priority `iorate=max` workload, which
/// always has one waiting.
#[derive(Clone, Debug)]
struct Shared {
    /// Per generator: its arrival rate, None for an `iorate=max` workload.
    rates: Vec<Option<f64>>,
    /// Per paced generator: its next arrival, once drawn.
    next_ns: Vec<Option<u64>>,
    /// Per generator: arrivals waiting for a thread.
    waiting: Vec<u64>,
    /// The generator whose arrival [`Workload::next_arrival_ns`] announced last.
    announced: Option<usize>,
}

impl Shared {
    /// The generator of the next request: the highest-priority waiting arrival, else the
    /// highest-priority `iorate=max` workload.
    fn pick(&mut self) -> usize {
        if let Some(g) = self.waiting.iter().position(|&n| n > 0) {
            self.waiting[g] -= 1;
            return g;
        }
        // The engine issues only for an arrival or, with iorate=max workloads, for a free thread.
        self.rates.iter().position(Option::is_none).unwrap_or(0)
    }

    /// The announced arrival has come (at `now_ns`): it waits for a thread. Then the next
    /// arrival of any generator, each drawing its own gaps.
    fn next_arrival_ns(&mut self, now_ns: u64, rng: &mut RngStream, arrivals: Arrivals) -> Option<u64> {
        let gap = |rate: f64, rng: &mut RngStream| {
            let mean_ns = 1e9 / rate;
            let gap = match arrivals {
                Arrivals::Exponential => rng.exponential(mean_ns),
                Arrivals::Uniform => 2.0 * mean_ns * rng.uniform(),
                Arrivals::Deterministic => mean_ns,
            };
            (gap.round() as u64).max(1)
        };
        if let Some(g) = self.announced.take() {
            self.waiting[g] += 1;
            let rate = self.rates[g].unwrap_or(0.0);
            self.next_ns[g] = Some(now_ns + gap(rate, rng));
        }
        for g in 0..self.rates.len() {
            if let (None, Some(rate)) = (self.next_ns[g], self.rates[g].filter(|r| *r > 0.0)) {
                self.next_ns[g] = Some(now_ns + gap(rate, rng));
            }
        }
        // The earliest; the higher priority on a tie.
        let (g, at) = self.next_ns.iter().enumerate().filter_map(|(g, t)| t.map(|t| (g, t))).min_by_key(|&(g, t)| (t, g))?;
        self.announced = Some(g);
        Some(at)
    }
}

/// WD_entry.checkPriorities and FifoList.countPriorities on a run's workloads: a WD with its own
/// iorate needs a priority; once one WD has a priority every WD has its own, they run 1, 2, …
/// without a gap, and WDs with their own iorate come before those without. Whether the run has
/// priorities.
fn check_priorities(wds: &[&Wd], place: &dyn Fn(At, String) -> String, at_rd: &dyn Fn(String) -> String) -> Result<bool, String> {
    if let Some(w) = wds.iter().find(|w| w.iorate > 0.0 && w.priority.is_none()) {
        return Err(place(w.at, format!("wd={}: iorate= needs priority= too (vdbench): a workload with its own rate is served by priority, 1 first", w.name)));
    }
    if wds.iter().all(|w| w.priority.is_none()) {
        return Ok(false);
    }
    let mut ranked: Vec<(u32, &str, bool)> = vec![];
    for w in wds {
        let Some(rank) = w.priority else {
            return Err(at_rd(format!("wd={} has no priority=: once a workload of the run has one, every workload needs its own (vdbench)", w.name)));
        };
        ranked.push((rank, &w.name, w.iorate > 0.0));
    }
    ranked.sort();
    let list = ranked.iter().map(|(r, w, _)| format!("wd={w}: {r}")).collect::<Vec<_>>().join(", ");
    if let Some(pair) = ranked.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(at_rd(format!("wd={} and wd={} have the same priority={}: each workload needs its own (vdbench)", pair[0].1, pair[1].1, pair[0].0)));
    }
    if ranked.iter().enumerate().any(|(i, (r, _, _))| *r as usize != i + 1) {
        return Err(at_rd(format!("the priorities of its workloads ({list}) must run 1, 2, … {} without a gap (vdbench)", ranked.len())));
    }
    if let (Some(paced), Some(free)) = (ranked.iter().rev().find(|r| r.2), ranked.iter().find(|r| !r.2)) {
        if paced.0 > free.0 {
            return Err(at_rd(format!("wd={} has iorate= and priority={}, below wd={} without iorate= at priority={}: workloads with their own iorate need the higher priorities, i.e. the lower numbers (vdbench)", paced.1, paced.0, free.1, free.0)));
        }
    }
    Ok(true)
}

/// One SD of a run: its generators, how requests are picked among them, and pacing.
#[derive(Clone, Debug)]
struct SdJob {
    generators: Vec<Generator>,
    /// Cumulative weights (skew, or rate) of the generators.
    cum_weights: Vec<f64>,
    /// With priorities: the generators' own arrivals sharing the SD's threads.
    shared: Option<Shared>,
    threads: u32,
    rate_iops: Option<f64>,
    arrivals: Arrivals,
    runtime_ns: u64,
    measured_from_ns: u64,
    interval: Interval,
    /// Shared by the run's SDs.
    maxdata: Option<std::rc::Rc<MaxData>>,
    /// `streams=`: the SD's parts, one job instance each ([`Workload::instances`]).
    streams: Vec<Context>,
    /// An instance's stream: every request goes to its next block, whatever the workload's
    /// seekpct (IO_task.processSingleIO overrides the address).
    stream: Option<Context>,
    options: Vec<(String, String)>,
}

impl Workload for SdJob {
    fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        if self.maxdata.as_ref().is_some_and(|m| m.reached()) {
            return None;
        }
        let g = if let Some(sh) = &mut self.shared {
            sh.pick()
        } else if self.generators.len() == 1 {
            0
        } else {
            let u = rng.uniform() * self.cum_weights[self.cum_weights.len() - 1];
            self.cum_weights.iter().position(|c| u < *c).unwrap_or(self.generators.len() - 1)
        };
        let mut r = self.generators[g].next(rng)?;
        if let Some(area) = &mut self.stream {
            // StreamContext.getNextSequentialLba: no short block at the end, back to the start
            // (or the end of the run with seekpct=eof).
            let size = u64::from(r.size_bytes);
            let mut next = area.next_seq.unwrap_or(area.low);
            if next + size > area.high {
                if self.generators[g].seek == Seek::Eof {
                    return None;
                }
                next = area.low;
            }
            area.next_seq = Some(next + size);
            r.offset_bytes = next;
        }
        if let Some(m) = &self.maxdata {
            m.add(&r);
        }
        Some(r)
    }

    fn pacing(&self) -> Pacing {
        if let Some(sh) = &self.shared {
            return match (sh.rates.iter().any(Option::is_some), sh.rates.iter().any(Option::is_none)) {
                (true, true) => Pacing::Shared { depth: self.threads },
                (true, false) => Pacing::Timed { depth: self.threads },
                (false, _) => Pacing::Closed { depth: self.threads },
            };
        }
        match self.rate_iops {
            None => Pacing::Closed { depth: self.threads },
            Some(_) => Pacing::Timed { depth: self.threads },
        }
    }

    fn runtime_ns(&self) -> Option<u64> {
        Some(self.runtime_ns)
    }

    fn measured_from_ns(&self) -> u64 {
        self.measured_from_ns
    }

    /// Arrivals at the SD's rate, spaced as RD `distribution` says (exponential by default;
    /// uniform on [0, 2 x mean]; deterministic).
    fn next_arrival_ns(&mut self, now_ns: u64, rng: &mut RngStream) -> Option<u64> {
        if let Some(sh) = &mut self.shared {
            return sh.next_arrival_ns(now_ns, rng, self.arrivals);
        }
        let mean_ns = 1e9 / self.rate_iops?;
        let gap = match self.arrivals {
            Arrivals::Exponential => rng.exponential(mean_ns),
            Arrivals::Uniform => 2.0 * mean_ns * rng.uniform(),
            Arrivals::Deterministic => mean_ns,
        };
        Some(now_ns + (gap.round() as u64).max(1))
    }

    /// One instance, or one per stream with its share of the threads (and of the rate: our
    /// choice, as vdbench's threads take paced requests from one queue and each stream has as
    /// many threads).
    fn instances(&self) -> Vec<Instance> {
        if self.streams.is_empty() {
            return vec![Instance { suffix: None, workload: Box::new(self.clone()), after: vec![] }];
        }
        let n = self.streams.len();
        self.streams
            .iter()
            .enumerate()
            .map(|(k, area)| {
                let shared = self.shared.clone().map(|sh| Shared { rates: sh.rates.iter().map(|r| r.map(|r| r / n as f64)).collect(), ..sh });
                let job = SdJob { threads: self.threads / n as u32, rate_iops: self.rate_iops.map(|r| r / n as f64), shared, streams: vec![], stream: Some(area.clone()), ..self.clone() };
                Instance { suffix: Some(format!("stream{k}")), workload: Box::new(job), after: vec![] }
            })
            .collect()
    }

    fn options(&self) -> Vec<(String, String)> {
        self.options.clone()
    }

    /// vdbench's summary lines add up whole samples of the time series, so the interval must be
    /// a multiple of the sample interval.
    fn check_sampling(&self, sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        let Interval { ns, key, at } = &self.interval;
        if ns % sample_interval_ns == 0 {
            return Ok(());
        }
        // The nearest interval that is whole seconds (as vdbench keeps it) and whole samples.
        let gcd = |mut a: u64, mut b: u64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let step_ns = (sample_interval_ns / gcd(sample_interval_ns, NS_PER_S)).saturating_mul(NS_PER_S);
        let nearest_s = ((*ns as f64 / step_ns as f64).round().max(1.0) as u64).saturating_mul(step_ns) / NS_PER_S;
        Err((
            key,
            format!(
                "{at}: interval={} cannot be reported: its summary lines add up samples of the time series, taken every {}ms (run.sample_interval); set run.sample_interval to a divisor of it (\"1s\" always is), or interval= to a whole multiple of the sample interval, e.g. interval={nearest_s}",
                ns / NS_PER_S,
                sample_interval_ns as f64 / 1e6
            ),
        ))
    }
}

/// One run of a parameter file: an RD with one value of each of its loops, or one point of its
/// curve (RD_entry.buildNewRdListForWd, For_loop.for_get).
#[derive(Clone, Debug)]
struct RunPlan {
    rd: usize,
    /// As vdbench names it: the RD's name, `_(10%)` for a curve point, then its loops' values
    /// as vdbench's "For loops:" shows them, e.g. `rd1 xfersize=4k threads=8`.
    name: String,
    values: Vec<(ForKey, f64)>,
    /// A curve point: its percent of the max run's rate, and that run's name.
    curve: Option<(f64, String)>,
}

/// A run of a vdbench parameter file, for a scenario to run each as a variant.
#[derive(Clone, Debug, PartialEq)]
pub struct VdbenchRun {
    pub name: String,
    /// The RD it belongs to.
    pub rd: String,
    /// A curve point: the name of the max run whose rate it takes a percent of.
    pub curve_max_run: Option<String>,
    /// A curve point of an RD with `stopcurve=`: vdbench stops every later run once a curve
    /// point's response time (ms) is above it (Reporter: "Vdbench terminating because of
    /// requested 'stopcurve='").
    pub stopcurve_ms: Option<f64>,
}

/// Most runs one parameter file may make (each is a variant, simulated on its own).
const MAX_RUNS: usize = 4096;

/// Every run, in the order vdbench runs them: RDs in file order; each RD's loops nested with
/// the first outermost; a curve's points right after its max run.
fn plan(p: &Parm, place: &dyn Fn(At, String) -> String) -> Result<Vec<RunPlan>, String> {
    let mut out = vec![];
    for (i, rd) in p.rds.iter().enumerate() {
        let mut loops = rd.fors.clone();
        if rd.iorates.len() > 1 {
            loops.push((ForKey::Iorate, rd.iorates.clone()));
        }
        let per_combo = if rd.iorate == Some(IoRate::Curve) { 1 + rd.curve_pct.len() } else { 1 };
        let count = loops.iter().try_fold(per_combo, |n, (_, l)| n.checked_mul(l.len())).filter(|n| out.len() + n <= MAX_RUNS);
        if count.is_none() {
            return Err(place(rd.at, format!("rd={}: its loops make more than {MAX_RUNS} runs, each simulated on its own: loop over fewer values", rd.name)));
        }
        let mut combos: Vec<Vec<(ForKey, f64)>> = vec![vec![]];
        for (key, list) in &loops {
            combos = combos.iter().flat_map(|c| list.iter().map(move |v| c.iter().copied().chain([(*key, *v)]).collect())).collect();
        }
        for values in combos {
            let shown: Vec<String> = values.iter().map(|(k, v)| format!("{}={}", k.label(), k.show(*v))).collect();
            let named = |base: String| if shown.is_empty() { base } else { format!("{base} {}", shown.join(" ")) };
            let max_name = named(rd.name.clone());
            out.push(RunPlan { rd: i, name: max_name.clone(), values: values.clone(), curve: None });
            if rd.iorate == Some(IoRate::Curve) {
                for pct in &rd.curve_pct {
                    out.push(RunPlan { rd: i, name: named(format!("{}_({}%)", rd.name, pct.trunc())), values: values.clone(), curve: Some((*pct, max_name.clone())) });
                }
            }
        }
    }
    Ok(out)
}

/// The runs of a parameter file (see [`plan`]).
pub fn runs(path: &std::path::Path) -> Result<Vec<VdbenchRun>, String> {
    let (files, items) = read_items(path)?;
    let parm = parse_items(&items, &files)?;
    let place = |at: At, msg: String| match at {
        Some((f, l)) => files.at(f, l, msg),
        None => format!("{}: {msg}", path.display()),
    };
    Ok(plan(&parm, &place)?.into_iter().map(|r| VdbenchRun { rd: parm.rds[r.rd].name.clone(), stopcurve_ms: parm.rds[r.rd].stopcurve_ms.filter(|_| r.curve.is_some()), name: r.name, curve_max_run: r.curve.map(|c| c.1) }).collect())
}

/// vdbench's rate for a curve point (RD_entry.set_iorate): whole IOPS times the whole percent,
/// rounded up to a multiple of 100 above 1000 IOPS, else of 10.
fn curve_rate(max_iops: f64, pct: f64) -> f64 {
    let rate = (max_iops.trunc() as i64) * (pct.trunc() as i64) / 100;
    (if rate > 1000 { (rate + 99) / 100 * 100 } else { (rate + 9) / 10 * 10 }) as f64
}

/// The run named `name` (a run's full name, or an RD with one run), or the only run.
fn pick<'a>(runs: &'a [RunPlan], p: &Parm, name: Option<&str>, place: &dyn Fn(At, String) -> String) -> Result<&'a RunPlan, String> {
    let list = |rs: &[&RunPlan]| rs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ");
    let plain = runs.len() == p.rds.len();
    match name {
        Some(n) => {
            if let Some(r) = runs.iter().find(|r| r.name == n) {
                return Ok(r);
            }
            let of_rd: Vec<&RunPlan> = runs.iter().filter(|r| p.rds[r.rd].name == n).collect();
            if of_rd.is_empty() {
                let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
                return Err(place(None, format!("no run `{n}` (runs: {}){}", names.join(", "), did_you_mean(n, names.iter().copied()))));
            }
            Err(place(p.rds[of_rd[0].rd].at, format!("rd={n} makes {} runs ({}): a scenario runs each as a variant; pick one with rd = \"...\"", of_rd.len(), list(&of_rd))))
        }
        None => match runs {
            [one] => Ok(one),
            [] => Err(place(None, "no run definition: add one, e.g. rd=run1,wd=wd1,iorate=max,elapsed=60".into())),
            many => Err(place(None, format!("{} {} ({}): pick one with rd = \"...\"", many.len(), if plain { "run definitions" } else { "runs" }, list(&many.iter().collect::<Vec<_>>())))),
        },
    }
}

/// The parts of `sd` that `streams=` cuts it into (StreamContext): equal, whole transfer sizes,
/// each without its first block (vdbench keeps block 0 of a LUN clear, and does so in every
/// stream).
fn stream_areas(w: &Wd, sd: &Sd, sd_bytes: u64) -> Result<Vec<Context>, String> {
    let n = w.streams;
    if !sd.threads.is_multiple_of(n) {
        let lower = sd.threads / n * n;
        let nearest = if lower > 0 { format!("threads={lower} or threads={}", lower + n) } else { format!("threads={n}") };
        return Err(format!("threads={} must be a multiple of streams={n}, each stream getting the same threads (vdbench): e.g. {nearest}", sd.threads));
    }
    let max_xfer = w.xfer.max_bytes();
    let size = sd_bytes / u64::from(n) / max_xfer * max_xfer;
    if size < 2 * max_xfer {
        return Err(format!("streams={n} leave each stream {size} bytes of the SD's {sd_bytes}, less than two transfers of {max_xfer} bytes: use fewer streams or a larger SD"));
    }
    Ok((0..u64::from(n)).map(|k| Context { low: sd.offset_bytes + k * size + max_xfer, high: sd.offset_bytes + (k + 1) * size, next_seq: None }).collect())
}

/// The RD's `interval=`, or vdbench's default for it, `min(elapsed/2, 60)` (at least 1).
fn reporting_interval_s(rd: &Rd) -> u64 {
    match rd.interval_s {
        0 => (rd.elapsed_s / 2).clamp(1, 60),
        s => s,
    }
}

/// The SD jobs of one run. A curve point without `curve_max_iops` (only when a scenario is
/// validated before its max run) runs as the max run does.
fn assemble(p: &Parm, run: &RunPlan, curve_max_iops: Option<f64>, device_bytes: u64, place: &dyn Fn(At, String) -> String) -> Result<Vec<(String, SdJob)>, String> {
    let rd = &p.rds[run.rd];
    let at_rd = |msg: String| place(rd.at, format!("rd={}: {msg}", rd.name));
    let mut iorate = match rd.iorate.ok_or_else(|| at_rd("no iorate=: give max (closed loop at the SDs' threads), curve or a rate".into()))? {
        IoRate::Curve => IoRate::Max,
        other => other,
    };
    if let (Some((pct, _)), Some(max)) = (&run.curve, curve_max_iops) {
        let r = curve_rate(max, *pct);
        if r < 1.0 {
            return Err(at_rd(format!("the max run reached {max:.1} IOPS, too few for a curve (vdbench: was the run too short to establish a rate?)")));
        }
        iorate = IoRate::Rate(rate_iops(&r.to_string(), r).map_err(|e| at_rd(format!("curve point {pct}%: {e}")))?);
    }
    let (elapsed_s, interval_s) = (rd.elapsed_s, reporting_interval_s(rd));
    if elapsed_s / interval_s < 2 {
        return Err(at_rd(format!("elapsed={elapsed_s} must be at least twice interval={interval_s} (vdbench): e.g. elapsed={} or interval={}", 2 * interval_s, (elapsed_s / 2).max(1))));
    }
    // vdbench reports whole intervals only (RD_entry.parserCleanup).
    for (key, s) in [("elapsed", elapsed_s), ("warmup", rd.warmup_s.unwrap_or(0))] {
        if s % interval_s != 0 {
            let below = s / interval_s * interval_s;
            return Err(at_rd(format!("{key}={s} must be a multiple of interval={interval_s} (vdbench): the nearest are {key}={} and {key}={}", below.max(if key == "elapsed" { 2 * interval_s } else { 0 }), below + interval_s)));
        }
    }
    let mut wds: Vec<Wd> = vec![];
    for pattern in &rd.wds {
        let found: Vec<&Wd> = p.wds.iter().filter(|w| matches(pattern, &w.name)).collect();
        if found.is_empty() {
            let names: Vec<&str> = p.wds.iter().map(|w| w.name.as_str()).collect();
            return Err(at_rd(format!("wd={pattern} matches no workload definition (defined: {}){}", names.join(", "), did_you_mean(pattern, names.iter().copied()))));
        }
        for w in found {
            if !wds.iter().any(|x| x.name == w.name) {
                wds.push(w.clone());
            }
        }
    }
    // SelectWhichWdsToUse: an RD's sd= replaces its WDs' SDs; without wd=, the latest
    // wd=default runs on them, named after the RD.
    if let Some(sds) = &rd.sds {
        if wds.is_empty() {
            wds.push(Wd { name: format!("rd={}", rd.name), at: rd.at, ..p.default_wd.clone() });
        }
        for w in &mut wds {
            w.sds = sds.clone();
        }
    }
    if wds.is_empty() {
        return Err(at_rd("no wd=: name the workloads to run (wd=wd1), or the SDs to run the latest wd=default on (sd=sd1)".into()));
    }
    // The run's loop values override every workload and SD (For_loop.useForOverrides).
    let mut sds = p.sds.clone();
    for (key, v) in &run.values {
        for w in &mut wds {
            match key {
                ForKey::Xfersize => w.xfer = Xfer::Table(vec![(*v as u32, 100.0)]),
                ForKey::Rdpct => w.read_pct = v.trunc(),
                ForKey::Rhpct => w.rhpct = *v,
                ForKey::Whpct => w.whpct = *v,
                ForKey::Seekpct => w.seek = if *v == SEEK_EOF { Seek::Eof } else { Seek::Percent(*v) },
                _ => {}
            }
        }
        for sd in &mut sds {
            match key {
                ForKey::Threads => sd.threads = *v as u32,
                ForKey::Hitarea => (sd.hitarea_bytes, sd.hitarea_forced) = (*v as u64, true),
                _ => {}
            }
        }
        if *key == ForKey::Iorate {
            iorate = IoRate::Rate(*v);
        }
    }
    // ConcatSds: each WD gets one SD, `concat#01`, ..., its SDs end to end in file order, and
    // the WD's threads (or the run's threads=/forthreads=).
    let forthreads = run.values.iter().find(|(k, _)| *k == ForKey::Threads).map(|(_, v)| *v as u32);
    let sds = if p.concatenate {
        let mut concat = vec![];
        for w in &mut wds {
            let parts: Vec<&Sd> = sds.iter().filter(|s| w.sds.iter().any(|pat| matches(pat, &s.name))).collect();
            let Some(first) = parts.first() else {
                return Err(place(w.at, format!("wd={}: sd={} matches no storage definition", w.name, w.sds.join(","))));
            };
            let threads = forthreads.or(w.threads).ok_or_else(|| place(w.at, format!("wd={}: with concatenatesds=yes each WD needs threads= (or the rd's threads= or forthreads=)", w.name)))?;
            let size_bytes = parts.iter().map(|s| s.size_bytes.unwrap_or(device_bytes)).sum();
            let name = format!("concat#{:02}", concat.len() + 1);
            concat.push(Sd { name: name.clone(), size_bytes: Some(size_bytes), threads, offset_bytes: 0, range: None, ..(*first).clone() });
            w.sds = vec![name];
        }
        concat
    } else {
        if let Some(w) = wds.iter().find(|w| w.threads.is_some()) {
            return Err(place(w.at, format!("wd={}: threads= on a WD needs concatenatesds=yes (vdbench); without it, set threads= on the SD", w.name)));
        }
        sds
    };
    let p = &Parm { sds, wds: vec![], rds: vec![], default_wd: p.default_wd.clone(), ignored: p.ignored.clone(), concatenate: p.concatenate };
    let wds: Vec<&Wd> = wds.iter().collect();
    let prioritized = check_priorities(&wds, place, &at_rd)?;
    // HandleSkew.spreadWdSkew: WDs without skew (and without their own iorate) share what the
    // others leave, equally; the total must be 100.
    let given: f64 = wds.iter().filter(|w| w.iorate == 0.0).map(|w| w.skew).sum();
    let unskewed = wds.iter().filter(|w| w.iorate == 0.0 && w.skew == 0.0).count();
    let skew = |w: &Wd| if w.iorate > 0.0 { 0.0 } else if w.skew > 0.0 { w.skew } else { (100.0 - given) / unskewed as f64 };
    if wds.iter().any(|w| w.iorate == 0.0) && (wds.iter().map(|w| skew(w)).sum::<f64>() - 100.0).abs() > 1e-4 {
        return Err(at_rd(format!("the skews of its workloads add up to {given}, expected 100")));
    }
    let fixed: f64 = wds.iter().map(|w| w.iorate).sum();
    // (sd index, generator, weight) for every WD x SD.
    let mut gens: Vec<Gen> = vec![];
    for w in &wds {
        let at_wd = |msg: String| place(w.at, format!("wd={}: {msg}", w.name));
        let sds: Vec<usize> = p.sds.iter().enumerate().filter(|(_, s)| w.sds.iter().any(|pat| matches(pat, &s.name))).map(|(i, _)| i).collect();
        if sds.is_empty() {
            let names: Vec<&str> = p.sds.iter().map(|s| s.name.as_str()).collect();
            return Err(at_wd(format!("sd={} matches no storage definition (defined: {})", w.sds.join(","), names.join(", "))));
        }
        // A WD's skew or rate is split evenly over its SDs (HandleSkew.spreadWgSkew).
        let weight = match iorate {
            IoRate::Max | IoRate::Curve => skew(w),
            IoRate::Rate(_) if w.iorate > 0.0 => w.iorate,
            IoRate::Rate(r) => (r - fixed).max(0.0) * skew(w) / 100.0,
        } / sds.len() as f64;
        for &s in &sds {
            let sd = &p.sds[s];
            let g = Generator::new(w, sd, sd.size_bytes.unwrap_or(device_bytes)).map_err(|e| at_wd(format!("on sd={}: {e}", sd.name)))?;
            // With priorities each workload has its own arrivals: its own rate, its share of
            // the run's rate, or (iorate=max, no rate of its own) every thread it can get.
            let class = w.priority.filter(|_| prioritized).map(|rank| Class {
                rank,
                wd: w.name.clone(),
                rate_iops: match iorate {
                    IoRate::Max | IoRate::Curve if w.iorate == 0.0 => None,
                    IoRate::Max | IoRate::Curve => Some(w.iorate / sds.len() as f64),
                    IoRate::Rate(_) => Some(weight),
                },
            });
            gens.push(Gen { sd: s, generator: g, weight, class });
        }
    }
    let measured_s = rd.warmup_s.unwrap_or(interval_s);
    let used_bytes: u64 = p.sds.iter().enumerate().filter(|(s, _)| gens.iter().any(|g| g.sd == *s)).map(|(_, sd)| sd.size_bytes.unwrap_or(device_bytes)).sum();
    let maxdata = rd.maxdata.iter().any(Option::is_some).then(|| {
        let limit = |m: Option<f64>| m.map(|m| if m <= 100.0 { (m * used_bytes as f64) as u64 } else { m as u64 });
        std::rc::Rc::new(MaxData { limit_bytes: [limit(rd.maxdata[0]), limit(rd.maxdata[1]), limit(rd.maxdata[2])], done_bytes: Default::default() })
    });
    // vdbench allows streams= only in a run of one workload (RD_entry.finalizeWds).
    let streaming = match wds.iter().find(|w| w.streams > 0) {
        Some(w) if wds.len() > 1 => return Err(place(w.at, format!("wd={}: streams= needs a run of one workload (vdbench), and rd={} runs {}", w.name, rd.name, wds.len()))),
        other => other,
    };
    let mut jobs = vec![];
    for (s, sd) in p.sds.iter().enumerate() {
        let mut mine: Vec<&Gen> = gens.iter().filter(|g| g.sd == s).collect();
        // Highest priority first: a generator's index is its rank among the SD's.
        mine.sort_by_key(|g| g.class.as_ref().map_or(0, |c| c.rank));
        if mine.is_empty() {
            continue;
        }
        let streams = match streaming {
            Some(w) => stream_areas(w, sd, sd.size_bytes.unwrap_or(device_bytes)).map_err(|e| place(w.at, format!("wd={} on sd={}: {e}", w.name, sd.name)))?,
            None => vec![],
        };
        let cum_weights: Vec<f64> = mine.iter().scan(0.0, |c, g| {
            *c += g.weight;
            Some(*c)
        }).collect();
        let total = cum_weights[cum_weights.len() - 1];
        let classes: Vec<&Class> = mine.iter().filter_map(|g| g.class.as_ref()).collect();
        let shared = match classes.len() {
            0 => None,
            _ => {
                let mut rates = vec![];
                for c in &classes {
                    rates.push(match c.rate_iops {
                        Some(r) if r > 0.0 => Some(rate_iops(&r.to_string(), r).map_err(|e| at_rd(format!("the rate of wd={} on sd={}: {e}", c.wd, sd.name)))?),
                        other => other,
                    });
                }
                if rates.iter().all(|r| r.is_some_and(|r| r <= 0.0)) {
                    return Err(at_rd(format!("its iorate leaves no I/O for sd={}", sd.name)));
                }
                Some(Shared { next_ns: vec![None; rates.len()], waiting: vec![0; rates.len()], announced: None, rates })
            }
        };
        let rate_iops = match iorate {
            IoRate::Max | IoRate::Curve => None,
            IoRate::Rate(_) if total <= 0.0 => return Err(at_rd(format!("its iorate leaves no I/O for sd={}", sd.name))),
            IoRate::Rate(_) => Some(rate_iops(&total.to_string(), total).map_err(|e| at_rd(format!("the share of sd={}: {e}", sd.name)))?),
        };
        let mut options = vec![
            ("rd".to_string(), rd.name.clone()),
            ("sd".to_string(), sd.name.clone()),
            ("threads".to_string(), sd.threads.to_string()),
            ("iorate".to_string(), rate_iops.map_or("max".to_string(), |r| format!("{r}"))),
            ("elapsed".to_string(), rd.elapsed_s.to_string()),
            ("interval".to_string(), interval_s.to_string()),
        ];
        if run.name != rd.name {
            options.push(("run".to_string(), run.name.clone()));
        }
        if !streams.is_empty() {
            options.push(("streams".to_string(), streams.len().to_string()));
        }
        if let Some(sh) = &shared {
            // Each workload as `wd:priority:rate`, served in this order.
            let shown: Vec<String> = classes.iter().zip(&sh.rates).map(|(c, r)| format!("{}:{}:{}", c.wd, c.rank, r.map_or("max".to_string(), |r| format!("{r}")))).collect();
            options.push(("priority".to_string(), shown.join(" ")));
        }
        if maxdata.is_some() {
            options.push(("maxdata".to_string(), rd.maxdata.iter().map(|m| m.map_or("-".to_string(), what_size)).collect::<Vec<_>>().join("/")));
        }
        if !p.ignored.is_empty() {
            options.push(("ignored".to_string(), p.ignored.join(", ")));
        }
        jobs.push((
            sd.name.clone(),
            SdJob {
                generators: mine.iter().map(|g| g.generator.clone()).collect(),
                cum_weights,
                shared,
                threads: sd.threads,
                rate_iops,
                arrivals: rd.arrivals,
                runtime_ns: rd.elapsed_s * NS_PER_S,
                // vdbench's totals leave out the first interval (its "avg_2-N" line) unless warmup= says otherwise.
                measured_from_ns: measured_s * NS_PER_S,
                interval: Interval { ns: interval_s * NS_PER_S, key: if rd.at.is_some() { "file" } else { "interval" }, at: place(rd.at, format!("rd={}", rd.name)) },
                maxdata: maxdata.clone(),
                streams,
                stream: None,
                options,
            },
        ));
    }
    Ok(jobs)
}

/// Keys of the inline form: (vdbench keyword, entry, type, default, doc).
const INLINE: [(&str, char, &str, &str, &str); 14] = [
    ("xfersize", 'w', "size or list", "4k", "inline: transfer size, a distribution \"(4k,50,8k,50)\", or \"(min,max,align)\" (k, m, g are powers of 1024)"),
    ("rdpct", 'w', "percent", "100", "inline: percent reads"),
    ("seekpct", 'w', "percent or word", "100", "inline: percent random; sequential, random, or eof (sequential, then stop)"),
    ("rhpct", 'w', "percent", "0", "inline: percent of reads sent to the hit area"),
    ("whpct", 'w', "percent", "0", "inline: percent of writes sent to the hit area"),
    ("hotband", 'w', "range", "none", "inline: \"(lo,hi)\" percent of the SD, misses skewed to its start by vdbench's HotBand generator"),
    ("range", 'w', "range", "none", "inline: \"(lo,hi)\" percent of the SD (over 200: bytes)"),
    ("hitarea", 's', "size", "1m", "inline: the hit area at the start of the SD; misses avoid it"),
    ("threads", 's', "integer", "8", "inline: requests outstanding at most (all of them with iorate = \"max\")"),
    ("iorate", 'r', "max or IOPS", "max", "inline: max = closed loop at threads; a number = open arrivals at that rate"),
    ("elapsed", 'r', "seconds", "30", "inline: run length in whole seconds, a multiple of interval; the job stops after it"),
    ("interval", 'r', "seconds", "1", "inline: reporting interval of vdbench's summary lines, whole seconds (0: min(elapsed/2, 60)); the first is left out of the job's statistics"),
    ("warmup", 'r', "seconds", "interval", "inline: whole seconds, a multiple of interval, left out of the job's statistics"),
    ("distribution", 'r', "choice", "exponential", "inline: inter-arrival times with a numeric iorate: exponential, uniform, deterministic"),
];

fn build(spec: &Spec) -> SpecResult<Box<dyn Workload>> {
    let file = spec.path("file", "vdbench parameter file, relative to the scenario file; without it, the keys marked inline describe one sd, wd and rd")?;
    let rd = spec.opt_string("rd", "the run to run: an rd name, or a run of its for loops or curve as results name it (\"rd1 xfersize=4k\", \"rd1_(50%)\"); a scenario runs every run of the file as a variant when this is not given")?;
    let curve_max = spec.float("curve_max_iops", 0.0, 0.0, 1e12, "a curve point's max run rate: sanlab sets it from the max run's result (0: not known yet)")?;
    let device_bytes = spec.size_bytes("device_size", Some((100 << 30, "100GiB")), "size of an SD without size= (vdbench would read the LUN's size)")?;
    let mut inline = vec![];
    for (key, entry, ty, default, doc) in INLINE {
        if let Some(v) = spec.scalar_text(key, ty, default, doc)? {
            inline.push((key, entry, v));
        }
    }
    if spec.is_describing() {
        return Ok(Box::new(JobSet::default()));
    }
    let jobs = match file {
        Some(path) => {
            if let Some((key, ..)) = inline.first() {
                return Err(spec.error(key, format!("`{key}` belongs in the parameter file when `file` is given")));
            }
            let (files, items) = read_items(&path).map_err(|e| spec.error("file", e))?;
            let parm = parse_items(&items, &files).map_err(|e| spec.error("file", e))?;
            let place = |at: At, msg: String| match at {
                Some((f, l)) => files.at(f, l, msg),
                None => format!("{}: {msg}", path.display()),
            };
            let runs = plan(&parm, &place).map_err(|e| spec.error("file", e))?;
            let run = pick(&runs, &parm, rd.as_deref(), &place).map_err(|e| spec.error(if rd.is_some() { "rd" } else { "file" }, e))?;
            assemble(&parm, run, (curve_max > 0.0).then_some(curve_max), device_bytes, &place).map_err(|e| spec.error("file", e))?
        }
        None => {
            if rd.is_some() {
                return Err(spec.error("rd", "picks a run of a parameter file: give `file` too, or drop `rd`"));
            }
            let mut parm = Parm { sds: vec![default_sd()], wds: vec![default_wd()], rds: vec![default_rd()], default_wd: default_wd(), ignored: vec![], concatenate: false };
            (parm.sds[0].name, parm.wds[0].name, parm.rds[0].name) = ("sd1".into(), "wd1".into(), "rd1".into());
            (parm.wds[0].sds, parm.rds[0].wds, parm.rds[0].iorate) = (vec!["sd1".into()], vec!["wd1".into()], Some(IoRate::Max));
            for (key, entry, value) in &inline {
                let set = match entry {
                    's' => parm.sds[0].set(key, value),
                    'w' => parm.wds[0].set(key, value),
                    _ => parm.rds[0].set(key, value),
                };
                set.map_err(|e| spec.error(key, e))?;
            }
            let key = inline.first().map_or("kind", |i| i.0);
            let runs = plan(&parm, &|_, msg| msg).map_err(|e| spec.error(key, e))?;
            let run = pick(&runs, &parm, None, &|_, msg| msg).map_err(|e| spec.error(key, e))?;
            assemble(&parm, run, None, device_bytes, &|_, msg| msg).map_err(|e| spec.error(key, e))?
        }
    };
    Ok(Box::new(JobSet { jobs: jobs.into_iter().map(|(name, job)| (name, Box::new(job) as Box<dyn Workload>)).collect(), after: vec![] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_vdbench() {
        assert_eq!(number("xfersize", "4k"), Ok(4096.0));
        assert_eq!(number("hitarea", "1m"), Ok(1048576.0));
        assert_eq!(number("size", "10gb"), Ok(10.0 * 1024f64.powi(3)));
        assert_eq!(number("elapsed", "2m"), Ok(120.0));
        assert_eq!(number("elapsed", "1h"), Ok(3600.0));
        assert!(number("size", "1MiB").unwrap_err().contains("not a vdbench number"));
        assert_eq!(resolve("xf", &WD_KEYWORDS), Some("xfersize"));
        assert_eq!(resolve("re", &WD_KEYWORDS), Some("readpct"));
        assert_eq!(resolve("th", &SD_KEYWORDS), Some("threads"));
        assert_eq!(resolve("hi", &SD_KEYWORDS), Some("hitarea"));
        assert!(matches("sd*", "sd12") && matches("*2", "sd2") && !matches("wd*", "sd1"));
    }

    #[test]
    fn hotband_packs_a_third_of_reads_into_the_first_mib() {
        // arrays.md 3.7: with 8 KiB records, about 33 % of hotband reads hit the first 1 MiB and
        // about 8.8 % the first 2 records, whatever the band size.
        let mut rng = RngStream::new(3, "hb");
        let n = 200_000;
        let recs: Vec<u64> = (0..n).map(|_| hotband_record(100_000, 8192, true, rng.uniform())).collect();
        let first_mib = recs.iter().filter(|r| **r < 128).count() as f64 / n as f64;
        let first_two = recs.iter().filter(|r| **r < 2).count() as f64 / n as f64;
        assert!((0.30..0.36).contains(&first_mib), "{first_mib}");
        assert!((0.075..0.10).contains(&first_two), "{first_two}");
        // Writes start 1 % of the band further on.
        assert_eq!(hotband_record(100_000, 8192, false, 0.0), 100_000 * 1_000_000 / 8192 / 100);
    }
}
