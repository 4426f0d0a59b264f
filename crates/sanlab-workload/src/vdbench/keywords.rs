//! vdbench's keywords (vdbench 5.04.06, Vdb/SD_entry.java, WD_entry.java, RD_entry.java,
//! MiscParms.java, For_loop.java): the SD, WD, RD and general keyword tables in vdbench's order
//! (which decides what an abbreviation means), vdbench's numbers, and the three kinds of entries
//! (`Sd`, `Wd`, `Rd`) with the parsing of each of their keywords.

use super::parm::{names, numbers, values};
use sanlab_spec::number::{checked, finite, rate_iops, DURATION, SIZE};
use sanlab_spec::did_you_mean;
use sanlab_des::RngStream;

/// vdbench's SD defaults (SD_entry: `hitarea = 1024*1024`, `threads = 8`) and RD defaults
/// (RD_entry: `elapsed = 30`, `interval = 1`).
pub(super) const DEFAULT_HITAREA_BYTES: u64 = 1 << 20;
pub(super) const DEFAULT_THREADS: u32 = 8;
pub(super) const DEFAULT_ELAPSED_S: u64 = 30;
pub(super) const DEFAULT_INTERVAL_S: u64 = 1;
/// vdbench's transfer sizes must be multiples of a sector (WD_entry.parseXfersize).
const SECTOR_BYTES: u64 = 512;

/// Keywords in the order vdbench tries them, which decides what an abbreviation means.
pub(super) const SD_KEYWORDS: [&str; 18] = ["host", "hd", "lun", "count", "size", "threads", "hitarea", "offset", "align", "kstat", "instance", "replay", "journal", "resetlun", "resetbus", "openflags", "range", "streams"];
pub(super) const WD_KEYWORDS: [&str; 20] = ["skew", "xfersize", "readpct", "rdpct", "writepct", "wrpct", "range", "hotband", "seekpct", "stride", "priority", "iorate", "rhpct", "whpct", "host", "hd", "openflags", "user", "threads", "streams"];
/// RD keywords (RD_entry.readParms): the `for` loops and the workload keys that make loops
/// (For_loop.checkForLoop) come after `pause` and before `distribution`.
pub(super) const RD_KEYWORDS: [&str; 55] = [
    "iorate", "maxdata", "maxdataread", "maxdatawritten", "curve", "stopcurve", "elapsed", "interval", "warmup", "replay", "pause",
    "forxfersize", "forthreads", "forrdpct", "forrhpct", "forwhpct", "forseekpct", "forhitarea", "forcompratio", "forcompression", "fordepth", "forwidth", "forfiles", "forsizes", "fortotalsize", "forwss", "forworkingsetsize", "foroperations",
    "xfersize", "threads", "rdpct", "rhpct", "whpct", "seekpct", "hitarea", "compratio", "compression", "depth", "width", "files", "sizes", "totalsize", "wss", "workingsetsize",
    "distribution", "startcmd", "start_cmd", "endcmd", "end_cmd", "fwd", "fwdrate", "operations", "format", "openflags", "mount",
];
/// General parameters (MiscParms.scan), in vdbench's order.
pub(super) const GENERAL_KEYWORDS: [&str; 42] = [
    "compratio", "compressionseed", "port", "pattern", "data_errors", "dataerrors", "swat", "validate", "journal", "startcmd", "start_cmd", "endcmd", "end_cmd", "heartbeat_error",
    "debug", "unix2windows", "formatxfersize", "create_anchors", "formatsds", "report", "report_run_totals", "histogram", "psrset", "auxreport", "monitor", "concatenatesds",
    "messagescan", "abort_failed_skew", "misc", "pattern_buffer", "showlba", "loop", "compression", "dedupratio", "dedupunit", "dedupsets", "deduphotsets", "dedupflipflop", "dedup",
    "fsd", "fwd", "rg",
];
/// SD, WD and RD keywords accepted without effect: how files are opened (sanlab has no host
/// cache for `openflags` to bypass), statistics sources, commands and pauses between runs, and
/// data compressibility (sanlab moves no data).
pub(super) const ENTRY_IGNORED: [&str; 11] = ["openflags", "kstat", "instance", "pause", "startcmd", "start_cmd", "endcmd", "end_cmd", "compratio", "compression", "forcompratio"];
/// vdbench's curve points when `curve=` is not given (RD_entry.insertCurveRuns).
pub(super) const DEFAULT_CURVE_PCT: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];

/// The first keyword of `list` that `given` abbreviates.
pub(super) fn resolve(given: &str, list: &[&'static str]) -> Option<&'static str> {
    list.iter().find(|k| k.starts_with(given)).copied()
}

pub(super) fn unknown(entry: &str, given: &str, list: &[&str]) -> String {
    format!("{entry}: unknown keyword `{given}`; expected one of {}{}", list.join(", "), did_you_mean(given, list.iter().copied()))
}

pub(super) fn unmodelled(keyword: &str, why: &str) -> String {
    format!("`{keyword}=` is a vdbench keyword sanlab cannot model: {why}")
}

/// A vdbench number (Vdb_scan.not_numeric): k, m, g, t are powers of 1024, a trailing b is
/// allowed (kb, mb), h is hours; for elapsed, interval, pause and warmup m means minutes.
pub(super) fn number(keyword: &str, s: &str) -> Result<f64, String> {
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

pub(super) fn single<'a>(keyword: &str, value: &'a str) -> Result<&'a str, String> {
    match values(value)[..] {
        [one] => Ok(one),
        _ => Err(format!("{keyword}=`{value}`: expected one value")),
    }
}

pub(super) fn percent(keyword: &str, value: &str) -> Result<f64, String> {
    let p = number(keyword, single(keyword, value)?)?;
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("{keyword}={p} is out of range: expected 0..=100"));
    }
    Ok(p)
}

pub(super) fn bytes(keyword: &str, value: &str) -> Result<u64, String> {
    let b = number(keyword, single(keyword, value)?)?;
    // vdbench truncates a fractional byte count.
    SIZE.whole(value, b.trunc()).map_err(|e| format!("{keyword}={e}"))
}

/// Whole seconds, as vdbench keeps `elapsed`, `interval` and `warmup` (RD_entry: `(long)` of the
/// number, so 1.5 is 1).
pub(super) fn seconds(keyword: &str, value: &str) -> Result<u64, String> {
    let s = number(keyword, single(keyword, value)?)?;
    if s < 0.0 {
        return Err(format!("{keyword}={value} must be 0 or positive"));
    }
    DURATION.whole(value, s * 1e9).map_err(|e| format!("{keyword}={e}"))?;
    Ok(s.trunc() as u64)
}

pub(super) fn pair(keyword: &str, value: &str) -> Result<(f64, f64), String> {
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
pub(super) type At = Option<(usize, usize)>;

#[derive(Clone, Debug)]
pub(super) struct Sd {
    pub(super) name: String,
    pub(super) at: At,
    pub(super) size_bytes: Option<u64>,
    pub(super) threads: u32,
    pub(super) hitarea_bytes: u64,
    pub(super) offset_bytes: u64,
    pub(super) range: Option<(f64, f64)>,
    /// Random offsets are multiples of this (vdbench `align=`; default the transfer size).
    pub(super) align_bytes: Option<u64>,
    /// A run's `forhitarea=` keeps the hit area even without rhpct or whpct, so misses avoid it
    /// (For_loop.useForOverrides).
    pub(super) hitarea_forced: bool,
}

impl Sd {
    pub(super) fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
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
pub(super) enum Xfer {
    /// (size, cumulative percent): one size, or a distribution `(4k,50,8k,50)`.
    Table(Vec<(u32, f64)>),
    /// `(min,max,align)`: a size between min and max in steps of align.
    Range { min: u32, max: u32, align: u32 },
}

impl Xfer {
    pub(super) fn parse(value: &str) -> Result<Xfer, String> {
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

    pub(super) fn max_bytes(&self) -> u64 {
        match self {
            Xfer::Table(t) => t.iter().map(|e| u64::from(e.0)).max().unwrap_or(4096),
            Xfer::Range { max, .. } => u64::from(*max),
        }
    }

    pub(super) fn draw(&self, rng: &mut RngStream) -> u64 {
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
pub(super) enum Seek {
    Percent(f64),
    Eof,
}

#[derive(Clone, Debug)]
pub(super) struct Wd {
    pub(super) name: String,
    pub(super) at: At,
    pub(super) sds: Vec<String>,
    pub(super) xfer: Xfer,
    pub(super) read_pct: f64,
    pub(super) seek: Seek,
    pub(super) rhpct: f64,
    pub(super) whpct: f64,
    pub(super) range: Option<(f64, f64)>,
    pub(super) hotband: bool,
    pub(super) skew: f64,
    pub(super) iorate: f64,
    /// `stride=(min,max)`: random requests skip forward from the previous one by min plus a
    /// random multiple of the transfer size below max - min (WG_entry.blockBoundarySeek).
    pub(super) stride_bytes: Option<(u64, u64)>,
    /// With concatenatesds=yes: requests outstanding on the WD's concatenated SD.
    pub(super) threads: Option<u32>,
    /// `streams=n`: the SD cut into n equal parts, each read or written sequentially by its
    /// share of the SD's threads (StreamContext); 0 without.
    pub(super) streams: u32,
    /// `priority=n`: 1 is served first by the SD's threads (WD_entry, FifoList).
    pub(super) priority: Option<u32>,
}

impl Wd {
    pub(super) fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
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
pub(super) enum IoRate {
    Max,
    Rate(f64),
    /// A max run, then runs at percentages of the rate it reached.
    Curve,
}

/// Inter-arrival times with a numeric iorate (RD `distribution`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Arrivals {
    Exponential,
    Uniform,
    Deterministic,
}

/// What a `for` loop of an RD varies (For_loop's labels). A workload key given in an RD is a
/// loop too (`xfersize=8k` is `forxfersize=8k`, one value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ForKey {
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
    pub(super) fn of(keyword: &str) -> Option<ForKey> {
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
    pub(super) fn label(self) -> &'static str {
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
    pub(super) fn parse(self, keyword: &str, v: &str) -> Result<f64, String> {
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
    pub(super) fn show(self, n: f64) -> String {
        match self {
            ForKey::Iorate => format!("{}", n.trunc()),
            ForKey::Seekpct if n == SEEK_EOF => "eof".into(),
            _ => what_size(n),
        }
    }
}

/// `seekpct=eof` among a loop's numbers (vdbench's -1).
pub(super) const SEEK_EOF: f64 = -1.0;

/// vdbench's FileAnchor.whatSize: below 1k a whole number, else three decimals with k, m, g, t
/// or p, `.000` dropped.
pub(super) fn what_size(n: f64) -> String {
    const UNITS: [(f64, &str); 5] = [(1024.0, "k"), (1048576.0, "m"), (1073741824.0, "g"), (1099511627776.0, "t"), (1125899906842624.0, "p")];
    if n < 1024.0 {
        return format!("{}", n.trunc());
    }
    let (div, unit) = UNITS.iter().rev().find(|(d, _)| n >= *d).copied().unwrap_or(UNITS[0]);
    let text = format!("{:.3}", n / div);
    format!("{}{unit}", text.strip_suffix(".000").unwrap_or(&text))
}

#[derive(Clone, Debug)]
pub(super) struct Rd {
    pub(super) name: String,
    pub(super) at: At,
    pub(super) wds: Vec<String>,
    /// `sd=` in the RD: the SDs its WDs run on instead of their own (or, without `wd=`, the
    /// latest wd=default runs on them).
    pub(super) sds: Option<Vec<String>>,
    pub(super) iorate: Option<IoRate>,
    /// `iorate=(100,200,...)`: a loop after the RD's other loops (RD_entry.parserCleanup).
    pub(super) iorates: Vec<f64>,
    /// The RD's loops, outermost first; a keyword given again replaces its loop, which moves to
    /// the end (For_loop's constructor).
    pub(super) fors: Vec<(ForKey, Vec<f64>)>,
    pub(super) curve_pct: Vec<f64>,
    /// `stopcurve=`: vdbench ends once a curve point's response time is above this (ms).
    pub(super) stopcurve_ms: Option<f64>,
    pub(super) elapsed_s: u64,
    /// The reporting interval of vdbench's summary lines; 0 until set means vdbench's default
    /// for it, `min(elapsed/2, 60)` (RD_entry.parserCleanup).
    pub(super) interval_s: u64,
    pub(super) warmup_s: Option<u64>,
    pub(super) arrivals: Arrivals,
    /// `maxdata`, `maxdataread`, `maxdatawritten`: data after which the run stops, besides
    /// `elapsed`; 100 or less is a multiple of the SDs' sizes (CollectSlaveStats.getLimit).
    pub(super) maxdata: [Option<f64>; 3],
}

impl Rd {
    pub(super) fn set(&mut self, keyword: &'static str, value: &str) -> Result<(), String> {
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

/// vdbench's `*` wildcards in names (common.simple_wildcard).
pub(super) fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        // Every suffix after `head`, cut at character boundaries (names need not be ASCII).
        Some((head, tail)) => name.strip_prefix(head).is_some_and(|rest| rest.char_indices().map(|(i, _)| i).chain([rest.len()]).any(|i| matches(tail, &rest[i..]))),
    }
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
}
