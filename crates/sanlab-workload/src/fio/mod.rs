//! fio job options (axboe/fio HOWTO.rst at f5344384, and the code named beside each quirk). One
//! option reader serves the `fio` kind (options in the scenario) and `fio_file` (job files read as
//! they are): both collect option texts, then [`FioJob::from_options`] turns them into a job.
//!
//! What the two differ in is [`Dialect`]: sizes in a scenario follow sanlab's units (KiB = 1024,
//! KB = 1000) and a scenario job runs for the whole run by default; a job file follows fio, whose
//! `kb_base=1024` makes k and KB 1024 but KiB 1000, whose jobs stop after `size` bytes unless
//! `time_based`, and whose default engine (psync) keeps one request outstanding whatever `iodepth`.

mod file;
mod flow;
mod lfsr;
mod options;
mod random_map;
mod rates;
mod steer;
mod sync;

pub use steer::{FioFindings, JobError, LatencyFound, SteadyFound};
pub use sync::SyncSchedule;
pub(crate) use file::KIND as FILE_KIND;
pub(crate) use options::{coverage as option_coverage, kinds as option_kinds};

use crate::distribution::{Distribution, DistributionSpec};
pub(crate) use options::{lookup, unknown_option, Effect};
use options::{ASYNC_ENGINES, NON_BLOCK_ENGINES, OPTIONS, SYNC_ENGINES};
use flow::{Flow, FlowShare};
use random_map::RandomMaps;
use steer::Steering;
use crate::{Completion, ExitRule, ExitWhat, Instance, Pacing, RateSampling, Request, Steer, Workload};
use crate::Op;
use sanlab_spec::number::{self, finite, whole_percent, DURATION, SIZE};
use sanlab_spec::{did_you_mean, parse_size_bytes, Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Workload> = Kind {
    name: "fio",
    summary: "fio job options in the scenario (rw, bs, bssplit, iodepth, rate_iops, random_distribution, thinktime, ...)",
    build,
};

/// Option texts by canonical name; the last one given wins, as in fio.
#[derive(Default, Clone, Debug)]
pub(crate) struct OptionValues(Vec<(&'static str, String)>);

impl OptionValues {
    pub fn set(&mut self, name: &'static str, value: String) {
        self.0.retain(|(n, _)| *n != name);
        self.0.push((name, value));
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Options from (name, text) pairs, in order (tests).
    #[cfg(test)]
    pub fn of(opts: &[(&'static str, &str)]) -> Self {
        let mut v = Self::default();
        for (name, text) in opts {
            v.set(name, text.to_string());
        }
        v
    }

    /// The position at which `name` was last given (its order among the options).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|(n, _)| *n == name)
    }
}

/// An option whose value cannot be used, and why.
#[derive(Debug)]
pub(crate) struct OptionError {
    pub option: &'static str,
    pub message: String,
}

pub(crate) fn err(option: &'static str, message: impl Into<String>) -> OptionError {
    OptionError { option, message: message.into() }
}

/// Where the options were written, which decides units and defaults (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dialect {
    Scenario,
    JobFile { device_size_bytes: u64 },
}

/// Reads sizes and durations in a dialect.
pub(crate) struct Units {
    pub(crate) dialect: Dialect,
    /// fio `kb_base`: 1024 (fio's default compatibility mode) or 1000.
    pub(crate) kb_base: u64,
}

impl Units {
    pub(crate) fn size(&self, s: &str) -> Result<u64, String> {
        match self.dialect {
            Dialect::Scenario => parse_size_bytes(s),
            Dialect::JobFile { device_size_bytes } => match parse_fio_size(s, self.kb_base)? {
                FioSize::Bytes(b) => Ok(b),
                FioSize::Percent(p) => Ok((device_size_bytes as f64 * p / 100.0) as u64),
            },
        }
    }

    fn block_size(&self, s: &str) -> Result<u32, String> {
        let b = self.size(s)?;
        u32::try_from(b).ok().filter(|b| *b > 0).ok_or_else(|| format!("block size `{s}` must be between 1 byte and 4 GiB"))
    }
}

enum FioSize {
    Bytes(u64),
    Percent(f64),
}

/// fio's integer with a unit (parse.c `__get_mult_bytes`, case-insensitive): with kb_base=1024,
/// k/kb mean 1024 and kib means 1000 — the opposite of the standards, kept by fio "to provide
/// compatibility with old scripts"; with kb_base=1000 it is the other way round.
fn parse_fio_size(s: &str, kb_base: u64) -> Result<FioSize, String> {
    let t = s.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t, 10),
    };
    let end = digits.find(|c: char| !(c.is_ascii_hexdigit() && radix == 16 || c.is_ascii_digit() || c == '.')).unwrap_or(digits.len());
    let (num, unit) = digits.split_at(end);
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    let n: f64 = if radix == 16 { u64::from_str_radix(num, 16).map(|v| v as f64).map_err(|_| format!("`{s}` is not a number"))? } else { finite(num)? };
    let unit = unit.trim().to_ascii_lowercase();
    if unit == "%" {
        if !(0.0..=100.0).contains(&n) {
            return Err(format!("`{s}`: a percentage must be 0..=100"));
        }
        return Ok(FioSize::Percent(n));
    }
    let (iec, other) = if kb_base == 1000 { (1024u64, 1000u64) } else { (1000, 1024) };
    let (power, base) = match unit.as_str() {
        "" | "b" => (0, 1),
        "k" | "kb" => (1, other),
        "m" | "mb" => (2, other),
        "g" | "gb" => (3, other),
        "t" | "tb" => (4, other),
        "p" | "pb" => (5, other),
        "kib" | "ki" => (1, iec),
        "mib" | "mi" => (2, iec),
        "gib" | "gi" => (3, iec),
        "tib" | "ti" => (4, iec),
        "pib" | "pi" => (5, iec),
        _ => {
            const UNITS: [&str; 13] = ["b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "%"];
            return Err(format!("`{s}` has an unknown size suffix `{unit}`: expected one of {} (e.g. \"4k\"){}", UNITS.join(", "), did_you_mean(&unit, UNITS)));
        }
    };
    Ok(FioSize::Bytes(SIZE.whole(s, n * (base as f64).powi(power))?))
}

/// A duration; a bare number is in `bare_unit_ns` (fio: seconds, microseconds for thinktime).
/// Accepts fio's suffixes (us/usec, ms/msec, s, m = minutes, h, d) and sanlab's (ns, µs, min).
pub(crate) fn parse_duration(s: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let t = s.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    let n = finite(num)?;
    const UNITS: [(&str, f64); 13] = [
        ("ns", 1.0), ("us", 1e3), ("usec", 1e3), ("µs", 1e3), ("ms", 1e6), ("msec", 1e6), ("s", 1e9), ("sec", 1e9),
        ("m", 60e9), ("min", 60e9), ("h", 3600e9), ("d", 86_400e9), ("", 0.0),
    ];
    let unit = unit.trim().to_lowercase();
    let scale = match UNITS.iter().find(|(u, _)| *u == unit) {
        Some(("", _)) => bare_unit_ns as f64,
        Some((_, scale)) => *scale,
        None => {
            let names: Vec<&str> = UNITS[..12].iter().map(|u| u.0).collect();
            return Err(format!("`{s}` has an unknown time unit `{unit}`: expected one of {}{}", names.join(", "), did_you_mean(&unit, names.iter().copied())));
        }
    };
    DURATION.whole(s, n * scale)
}

/// A bandwidth cap must be 0 (none) or at least 1 byte/s, as fio's integer rates are.
fn at_least_one(text: &str, r: f64) -> Result<f64, String> {
    if r != 0.0 && r < 1.0 {
        return Err(format!("rate `{text}` is below 1: expected 0 (no cap) or at least 1 (nearest valid: 1)"));
    }
    Ok(r)
}

pub(crate) fn parse_int(option: &'static str, s: &str, min: i64, max: i64) -> Result<i64, OptionError> {
    let n: i64 = s.trim().parse().map_err(|_| err(option, format!("`{s}` is not a whole number")))?;
    if n < min || n > max {
        let nearest = if n < min { min } else { max };
        return Err(err(option, format!("{n} is out of range: expected {min}..={max} (nearest valid: {nearest})")));
    }
    Ok(n)
}

pub(crate) fn parse_bool(option: &'static str, s: &str) -> Result<bool, OptionError> {
    match s.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(err(option, format!("`{other}` is not a boolean: expected 1 or 0"))),
    }
}

/// A per-direction option ("read,write[,trim]"): a value without a trailing comma also applies
/// to the directions after it (HOWTO `blocksize`). Blank means the default.
pub(crate) fn per_direction(s: &str) -> [Option<&str>; 2] {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let pick = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let read = pick(0);
    let write = if parts.len() == 1 { read } else { pick(1) };
    [read, write]
}

/// Block sizes of one direction.
#[derive(Clone, Debug, PartialEq)]
enum BlockSizes {
    Fixed(u32),
    /// fio `bsrange`: min + U x max, rounded down to a multiple of min, at most max (io_u.c
    /// `get_next_buflen`): uniform over the multiples of min when max is one.
    Range { min: u32, max: u32 },
    /// (size, cumulative percent) for bssplit.
    Split(Vec<(u32, u32)>),
}

impl BlockSizes {
    fn min(&self) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(s) => s.iter().map(|e| e.0).min().unwrap_or(4096),
        }
    }

    fn max(&self) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(s) => s.iter().map(|e| e.0).max().unwrap_or(4096),
        }
    }

    /// The mean of [`BlockSizes::draw`], exactly (for a bandwidth cap in bytes/s).
    fn mean_bytes(&self) -> f64 {
        match self {
            Self::Fixed(b) => f64::from(*b),
            // raw is uniform on [min, min + max); each multiple v of min takes raw in [v, v + min),
            // and everything from max on gives max.
            Self::Range { min, max } => {
                let (min, max) = (f64::from(*min), f64::from(*max));
                let mut sum = 0.0;
                let mut v = min;
                while v < max {
                    sum += v * (v + min).min(max) - v * v;
                    v += min;
                }
                (sum + max * (min + max - max.max(min))) / max
            }
            Self::Split(s) => {
                let mut prev = 0;
                s.iter().map(|&(size, cum)| { let share = cum - prev; prev = cum; f64::from(size) * f64::from(share) / 100.0 }).sum()
            }
        }
    }

    fn draw(&self, rng: &mut RngStream) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, max } => {
                let raw = u64::from(*min) + (f64::from(*max) * rng.uniform()) as u64;
                (raw - raw % u64::from(*min)).min(u64::from(*max)) as u32
            }
            Self::Split(s) => {
                let r = rng.below(100) as u32;
                s.iter().find(|(_, cum)| r < *cum).map_or(s[s.len() - 1].0, |e| e.0)
            }
        }
    }
}

/// fio `bssplit` for one direction: "4k/10:64k/50:32k/40"; blank shares split what is left.
fn parse_bssplit(s: &str, units: &Units) -> Result<BlockSizes, String> {
    let mut entries = vec![];
    for part in s.split(':') {
        let (size, pct) = part.split_once('/').unwrap_or((part, ""));
        let size = units.block_size(size).map_err(|e| format!("bssplit entry `{part}`: {e}"))?;
        let pct: Option<u32> = match pct.trim() {
            "" => None,
            p => Some(whole_percent(p).map_err(|e| format!("bssplit entry `{part}`: {e}"))?),
        };
        entries.push((size, pct));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(format!("bssplit percentages add up to {given}, expected 100"));
    }
    let mut cum = 0;
    let mut out = vec![];
    for (i, (size, pct)) in entries.iter().enumerate() {
        // Blanks share the remainder; the last blank takes the rounding.
        let share = pct.unwrap_or_else(|| {
            let blank_index = entries[..=i].iter().filter(|e| e.1.is_none()).count() as u32;
            let each = (100 - given) / blanks;
            if blank_index == blanks { 100 - given - each * (blanks - 1) } else { each }
        });
        cum += share;
        out.push((*size, cum));
    }
    Ok(BlockSizes::Split(out))
}

/// fio `bsrange` for one direction: "1k-4k" or "1k:4k"; a larger first value is swapped.
fn parse_bsrange(s: &str, units: &Units) -> Result<BlockSizes, String> {
    let (a, b) = s.split_once(['-', ':']).ok_or_else(|| format!("bsrange `{s}`: expected min-max, e.g. \"4k-64k\""))?;
    let (a, b) = (units.block_size(a)?, units.block_size(b)?);
    Ok(BlockSizes::Range { min: a.min(b), max: a.max(b) })
}

/// One direction's block sizes, offsets and sequential position.
#[derive(Clone, Debug)]
struct Direction {
    sizes: BlockSizes,
    /// Offsets align to this: the direction's smallest block size (fio's default `blockalign`).
    align_bytes: u64,
    offsets: Distribution,
    next_seq_bytes: u64,
    /// rw=randread:N — requests left before the next random offset.
    seq_left: u32,
}

/// Passes over the region of a job that is not time_based and mixes sequential continuations
/// into random offsets (`percentage_random` below 100): fio ends a pass (a loop) when a
/// sequential continuation runs off the region's end (io_u.c `get_next_offset`: "offset >=
/// io_size"; HOWTO `size`, item 5), or after `io_size` bytes, and starts the next pass at the
/// region's start (`fio_file_reset`).
#[derive(Clone, Debug)]
struct Passes {
    /// Bytes per pass (fio `io_size`).
    bytes: u64,
    /// Passes left after this one.
    left: u64,
    /// `issued_bytes` when this pass began.
    start_bytes: u64,
}

/// The reads that fio's `verify` adds to a writing job (backend.c `do_verify`, io_u.c
/// `get_next_verify`): every written block is read back, after every `verify_backlog` writes
/// (interleaved with the writes) and at the end of each loop once the writes are done (fio waits
/// for them first), unless the job is time_based (fio skips the phase when the runtime ends it).
#[derive(Clone, Debug)]
struct Verify {
    /// Read back after this many logged writes, `batch` at a time.
    backlog: Option<(u64, u64)>,
    /// Bytes per loop when each loop ends with a verify phase.
    loop_bytes: Option<u64>,
    /// `issued_bytes` at which the current loop's writes are all issued.
    boundary_bytes: u64,
    /// Written blocks not read back yet: offset within the region, size.
    log: std::collections::VecDeque<(u64, u32)>,
    /// Logged writes since the last backlog batch, and reads of the batch left.
    since_batch: u64,
    batch_left: u64,
    /// The loop's verify phase is reading the log back.
    draining: bool,
    /// Sequential jobs read back by offset (fio's rb-tree); random ones in written order.
    by_offset: bool,
}

impl Verify {
    /// The next read-back, if the job is verifying now.
    fn next_read(&mut self) -> Option<(u64, u32)> {
        if self.batch_left > 0 || self.draining {
            self.batch_left = self.batch_left.saturating_sub(1);
            if let Some(r) = self.log.pop_front() {
                return Some(r);
            }
            self.batch_left = 0;
            self.draining = false;
        }
        None
    }

    /// At the end of a loop's writes: start reading the log back. Returns whether it started.
    fn start_phase(&mut self, issued_bytes: u64) -> bool {
        let Some(lb) = self.loop_bytes.filter(|_| !self.draining && issued_bytes >= self.boundary_bytes) else {
            return false;
        };
        self.boundary_bytes += lb;
        if self.by_offset {
            self.log.make_contiguous().sort_unstable();
        }
        self.draining = !self.log.is_empty();
        self.draining
    }

    fn logged(&mut self, offset: u64, size: u32) {
        self.log.push_back((offset, size));
        if let Some((every, batch)) = self.backlog {
            self.since_batch += 1;
            if self.since_batch >= every {
                self.since_batch = 0;
                self.batch_left = batch;
            }
        }
    }
}

/// fio `zonemode=strided` (io_u.c `setup_strided_zone_mode`): the job works in a zone of
/// `range` bytes until it has transferred `size` bytes there (going round the zone again when
/// `size` exceeds `range`), then moves `range + skip` on, back to the region's start past its end.
#[derive(Clone, Debug)]
struct Zones {
    size: u64,
    range: u64,
    skip: u64,
    /// The current zone's start and the bytes transferred in it.
    start: u64,
    bytes: u64,
}

/// fio `nrfiles` files of `filesize` bytes, laid one after another in the job's region; fio's
/// default `file_service_type=roundrobin` moves to the next file after each request, and each
/// file keeps its own sequential position per direction.
#[derive(Clone, Debug)]
struct JobFiles {
    bytes: u64,
    /// The file of the next request, and every file's next sequential offset per direction.
    next: usize,
    positions: Vec<[u64; 2]>,
}

/// A fio job: request shapes, pacing and stop conditions, and the state of one clone.
#[derive(Clone, Debug)]
pub(crate) struct FioJob {
    dirs: [Direction; 2],
    read_pct: f64,
    random: bool,
    /// fio `percentage_random` per direction (random modes only): at each new random offset, the
    /// request goes to a random block with this probability, else continues sequentially.
    perc_random: [u64; 2],
    /// Set only with `perc_random` below 100 and without time_based; it then replaces
    /// `limit_bytes`.
    passes: Option<Passes>,
    /// rw suffix of a random mode: requests per random offset.
    rw_nr: u64,
    /// rw suffix of a sequential mode: bytes skipped after each request; negative goes backwards.
    seq_add_bytes: i64,
    depth: u32,
    numjobs: u32,
    offset_increment_bytes: u64,
    rate_iops: Option<f64>,
    poisson: bool,
    start_ns: u64,
    ramp_ns: u64,
    runtime_ns: Option<u64>,
    /// Without time_based: stop after this many bytes.
    limit_bytes: Option<u64>,
    limit_ios: Option<u64>,
    think_ns: u64,
    /// None when only thinktime_iotime paces the pauses (fio skips the blocks check then).
    think_blocks: Option<u64>,
    /// fio `thinktime_iotime`: think after issuing for this long.
    think_iotime_ns: Option<u64>,
    /// When the current stretch of issuing began (the job's start, or the end of its last pause).
    issuing_since_ns: u64,
    /// A pause was asked for; the next completion's issue time is when issuing resumed.
    resuming: bool,
    size_bytes: u64,
    offset_bytes: u64,
    issued_bytes: u64,
    issued_ios: u64,
    issued_since_think: u64,
    verify: Option<Verify>,
    zones: Option<Zones>,
    files: Option<JobFiles>,
    /// fio latency_target, steadystate and rate_min.
    steering: Steering,
    /// fio `flow`: the job's share of the I/O of the jobs with its flow_id.
    flow: Option<FlowShare>,
    options: Vec<(String, String)>,
    /// fio `random_generator=lfsr`: random offsets in units of this many bytes from a cycle over
    /// the region's blocks, made at the first random offset (from the job's stream).
    lfsr: Option<(u64, Option<lfsr::BlockCycle>)>,
    /// fio's random map (job files and command lines without `norandommap`), one per file.
    random_map: Option<RandomMaps>,
    time_based: bool,
    /// How fio would sample its bandwidth and IOPS (see [`Workload::rate_sampling`]).
    rates: [RateSampling; 2],
    /// Its own `exitall`, `exitall_on_error` and `exit_what`, and its exit rule once its file is
    /// read (see [`FioJob::set_exit`]).
    pub(crate) exitall: bool,
    exit_on_error: bool,
    exit_what: ExitWhat,
    exit: Option<ExitRule>,
    sync: Option<sync::SyncSchedule>,
    /// Its place in its job file or command line (see [`Workload::fio_place`]).
    place: Option<crate::FioPlace>,
    /// Options given that have no effect on the model (see [`Workload::ignored`]).
    pub(crate) ignored: Vec<&'static str>,
}

impl FioJob {
    /// Builds a job from option texts (see [`OptionValues`]).
    pub(crate) fn from_options(v: &OptionValues, dialect: Dialect) -> Result<FioJob, OptionError> {
        let scenario = matches!(dialect, Dialect::Scenario);
        let kb_base = match v.get("kb_base").map(str::trim) {
            None | Some("1024") => 1024,
            Some("1000") => 1000,
            Some(other) => return Err(err("kb_base", format!("`{other}`: expected 1024 or 1000"))),
        };
        let units = Units { dialect, kb_base };
        let size_of = |o: &'static str, default: u64| -> Result<u64, OptionError> { v.get(o).map_or(Ok(default), |s| units.size(s).map_err(|e| err(o, e))) };
        let time_of = |o: &'static str, bare_ns: u64| -> Result<u64, OptionError> { v.get(o).map_or(Ok(0), |s| parse_duration(s, bare_ns).map_err(|e| err(o, e))) };
        let int_of = |o: &'static str, default: i64, min: i64, max: i64| v.get(o).map_or(Ok(default), |s| parse_int(o, s, min, max));
        let bool_of = |o: &'static str, default: bool| v.get(o).map_or(Ok(default), |s| parse_bool(o, s));

        // rw and its `:N` suffix.
        let rw_text = v.get("rw").unwrap_or("read").trim();
        let (mode, nr) = rw_text.split_once(':').map_or((rw_text, None), |(m, n)| (m.trim(), Some(n.trim())));
        const MODES: [&str; 7] = ["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"];
        if !MODES.contains(&mode) {
            let hint = if mode.contains("trim") { "; trims are not modelled".to_string() } else { did_you_mean(mode, MODES) };
            return Err(err("rw", format!("unknown rw mode `{mode}`: expected one of read, write, randread, randwrite, rw (readwrite), randrw{hint}")));
        }
        let random = mode.starts_with("rand");
        let (rw_nr, seq_add_bytes) = match nr {
            None => (0, 0),
            Some(n) if random => (parse_int("rw", n, 1, i64::from(u32::MAX))? as u64, 0),
            // `read:-8k` goes backwards (io_u.c `get_next_seq_offset`).
            Some(n) => match n.strip_prefix('-') {
                Some(back) => (0, -(units.size(back).map_err(|e| err("rw", e))? as i64)),
                None => (0, units.size(n).map_err(|e| err("rw", e))? as i64),
            },
        };
        // The later of rwmixread / rwmixwrite wins (HOWTO `rwmixwrite`).
        let mix_read = match (v.position("rwmixread"), v.position("rwmixwrite")) {
            (_, Some(w)) if v.position("rwmixread").is_none_or(|r| w > r) => 100 - int_of("rwmixwrite", 50, 0, 100)?,
            _ => int_of("rwmixread", 50, 0, 100)?,
        };
        let mut read_pct = match mode {
            "read" | "randread" => 100.0,
            "write" | "randwrite" => 0.0,
            _ => mix_read as f64,
        };

        // Block sizes, per direction: bssplit over bsrange over bs.
        let default_bs = BlockSizes::Fixed(4096);
        let mut sizes = [default_bs.clone(), default_bs];
        if let Some(bs) = v.get("bs") {
            for (d, s) in per_direction(bs).iter().enumerate() {
                if let Some(s) = s {
                    sizes[d] = BlockSizes::Fixed(units.block_size(s).map_err(|e| err("bs", e))?);
                }
            }
        }
        if let Some(r) = v.get("bsrange") {
            for (d, s) in per_direction(r).iter().enumerate() {
                if let Some(s) = s {
                    sizes[d] = parse_bsrange(s, &units).map_err(|e| err("bsrange", e))?;
                }
            }
        }
        if let Some(split) = v.get("bssplit") {
            for (d, s) in per_direction(split).iter().enumerate() {
                if let Some(s) = s {
                    sizes[d] = parse_bssplit(s, &units).map_err(|e| err("bssplit", e))?;
                }
            }
        }

        // Region and stop conditions.
        let offset_bytes = size_of("offset", 0)?;
        // Without size, a scenario job addresses 1 GiB; fio addresses the device from offset on.
        let default_size = match dialect {
            Dialect::JobFile { device_size_bytes } => device_size_bytes.saturating_sub(offset_bytes),
            Dialect::Scenario => 1 << 30,
        };
        // nrfiles files of filesize bytes (default size / nrfiles); size defaults to their sum.
        let nrfiles = int_of("nrfiles", 1, 1, 65_536)? as u64;
        let file_bytes = v.get("filesize").map(|s| units.size(s).map_err(|e| err("filesize", e))).transpose()?;
        let default_size = file_bytes.map_or(default_size, |f| f.saturating_mul(nrfiles));
        let size_bytes = size_of("size", default_size)?;
        let file_bytes = file_bytes.unwrap_or(size_bytes / nrfiles);
        if file_bytes.saturating_mul(nrfiles) > size_bytes {
            return Err(err("filesize", format!("{nrfiles} files of {file_bytes} bytes do not fit in size ({size_bytes} bytes): raise size or leave it out")));
        }
        let largest = u64::from(sizes[0].max().max(sizes[1].max()));
        if size_bytes < largest {
            return Err(err("size", format!("{size_bytes} bytes is smaller than the block size {largest}")));
        }
        if seq_add_bytes.unsigned_abs() >= size_bytes {
            return Err(err("rw", format!("a skip of {} bytes does not fit in the job's {size_bytes} bytes: expected less than size", seq_add_bytes.unsigned_abs())));
        }
        let time_based = bool_of("time_based", scenario)?;
        let loops = int_of("loops", 1, 1, i64::from(u32::MAX))? as u64;
        let io_bytes = size_of("io_size", size_bytes)?;
        let number_ios = int_of("number_ios", 0, 0, i64::MAX)? as u64;

        // Offsets.
        let dist_text = v.get("random_distribution").unwrap_or("random");
        let size_bytes_fn = |s: &str| units.size(s);
        let mut specs = [DistributionSpec::Uniform, DistributionSpec::Uniform];
        if dist_text.trim_start().starts_with("zoned") {
            let (name, lists) = dist_text.trim().split_once(':').ok_or_else(|| err("random_distribution", format!("`{dist_text}`: expected zones after a colon, e.g. \"zoned:60/10:40/90\"")))?;
            for (d, list) in per_direction(lists).iter().enumerate() {
                if let Some(list) = list {
                    specs[d] = DistributionSpec::parse(&format!("{name}:{list}"), &size_bytes_fn).map_err(|e| err("random_distribution", e))?;
                }
            }
        } else {
            let one = DistributionSpec::parse(dist_text, &size_bytes_fn).map_err(|e| err("random_distribution", e))?;
            specs = [one.clone(), one];
        }
        // zonemode=strided: random offsets are drawn within a zone of zonerange bytes.
        let zones = match v.get("zonemode").map(str::trim) {
            None | Some("none") => None,
            Some("strided") => {
                let zone_size = size_of("zonesize", 0)?;
                if zone_size == 0 {
                    return Err(err("zonesize", "zonemode=strided needs zonesize, the bytes to transfer in each zone, e.g. zonesize=256m"));
                }
                let range = size_of("zonerange", zone_size)?;
                if range < largest || range > size_bytes {
                    return Err(err("zonerange", format!("{range} bytes: a zone must hold a block ({largest} bytes) and fit in the job's {size_bytes} bytes")));
                }
                Some(Zones { size: zone_size, range, skip: size_of("zoneskip", 0)?, start: 0, bytes: 0 })
            }
            Some("zbd") => return Err(err("zonemode", "zoned block devices (zonemode=zbd) are not modelled: use zonemode=strided or none")),
            Some(other) => return Err(err("zonemode", format!("unknown zonemode `{other}`: expected none, strided or zbd{}", did_you_mean(other, ["none", "strided", "zbd"])))),
        };
        let files = (nrfiles > 1).then(|| JobFiles { bytes: file_bytes, next: 0, positions: vec![[0; 2]; nrfiles as usize] });
        if files.is_some() && (file_bytes < largest || zones.is_some()) {
            return Err(err("nrfiles", format!("files of {file_bytes} bytes must hold a block ({largest} bytes), and files with zonemode are not modelled")));
        }
        let drawn_bytes = zones.as_ref().map_or(files.as_ref().map_or(size_bytes, |f| f.bytes), |z| z.range);
        // fio `blockalign`: the boundary random offsets align to; default the smallest block.
        let mut aligns = [None; 2];
        if let Some(ba) = v.get("blockalign") {
            for (d, s) in per_direction(ba).iter().enumerate() {
                if let Some(s) = s {
                    aligns[d] = Some(u64::from(units.block_size(s).map_err(|e| err("blockalign", e))?));
                }
            }
        }
        let mut dirs: Vec<Direction> = vec![];
        for (d, sizes) in sizes.into_iter().enumerate() {
            let align_bytes = aligns[d].unwrap_or(u64::from(sizes.min()));
            // Reads and writes alike share one build: a zipf table over millions of blocks costs.
            let offsets = match dirs.first() {
                Some(r) if specs[0] == specs[1] && r.align_bytes == align_bytes => r.offsets.clone(),
                _ => specs[d].build(drawn_bytes / align_bytes, align_bytes).map_err(|e| err("random_distribution", e))?,
            };
            dirs.push(Direction { sizes, align_bytes, offsets, next_seq_bytes: 0, seq_left: 0 });
        }
        let dirs: [Direction; 2] = dirs.try_into().expect("two directions");
        // fio `random_generator`: lfsr never repeats a block before all are used; it applies to
        // the uniform distribution only (fio's zipf, pareto, normal and zoned draws ignore it).
        let lfsr = match v.get("random_generator").map(str::trim) {
            None | Some("tausworthe" | "tausworthe64") => None,
            Some("lfsr") if random && specs.iter().all(|s| *s == DistributionSpec::Uniform) => {
                if zones.is_some() || files.is_some() {
                    return Err(err("random_generator", "random_generator=lfsr with zonemode=strided or nrfiles above 1 is not modelled: use tausworthe (the default)"));
                }
                Some((dirs[0].align_bytes.min(dirs[1].align_bytes), None))
            }
            Some("lfsr") => None,
            Some(other) => return Err(err("random_generator", format!("unknown value `{other}`: expected tausworthe, lfsr or tausworthe64{}", did_you_mean(other, ["tausworthe", "lfsr", "tausworthe64"])))),
        };
        // fio keeps its random map for uniform random jobs without norandommap (filesetup.c
        // `init_random_map`); sanlab's own keys draw with replacement, as they always have.
        let random_map = (!scenario && random && lfsr.is_none() && zones.is_none() && specs.iter().all(|s| *s == DistributionSpec::Uniform) && !bool_of("norandommap", false)?)
            .then(|| RandomMaps::new(dirs[0].align_bytes.min(dirs[1].align_bytes), if nrfiles > 1 { file_bytes } else { size_bytes }, nrfiles as usize));

        // Pacing.
        let engine = v.get("ioengine").map(str::trim).unwrap_or(if scenario { "libaio" } else { "psync" });
        let sync = if SYNC_ENGINES.contains(&engine) {
            true
        } else if ASYNC_ENGINES.contains(&engine) {
            false
        } else if NON_BLOCK_ENGINES.contains(&engine) || engine.starts_with("external") {
            return Err(err("ioengine", format!("engine `{engine}` does not do block I/O on a disk, and sanlab simulates block I/O: use a block engine such as libaio, io_uring or psync")));
        } else {
            let all: Vec<&str> = SYNC_ENGINES.iter().chain(ASYNC_ENGINES.iter()).copied().collect();
            return Err(err("ioengine", format!("unknown engine `{engine}`: expected a sync engine ({}) or an async one ({}){}", SYNC_ENGINES.join(", "), ASYNC_ENGINES.join(", "), did_you_mean(engine, all))));
        };
        let iodepth = int_of("iodepth", 1, 1, 65_536)? as u32;
        let mut depth = if sync { 1 } else { iodepth };
        let think_ns = time_of("thinktime", 1_000)?;
        // thinktime_spin is the part of the pause fio spends spinning on the CPU (at most all of
        // it, init.c): the pause is thinktime either way.
        time_of("thinktime_spin", 1_000)?;
        let think_iotime_ns = Some(time_of("thinktime_iotime", 1_000_000_000)?).filter(|t| *t > 0);
        // With thinktime_iotime alone, fio skips the blocks check (backend.c `handle_thinktime`).
        let think_blocks = match v.get("thinktime_blocks") {
            None if think_iotime_ns.is_some() => None,
            _ => Some(int_of("thinktime_blocks", 1, 1, i64::from(u32::MAX))? as u64),
        };
        if think_ns > 0 {
            if let Some(b) = think_blocks {
                depth = depth.min(b as u32);
            }
        }
        let mut rate_iops = None;
        // fio `rate` (bytes/s) wins over `rate_iops` per direction (init.c `setup_rate`); a cap
        // in bytes paces that direction at rate / its mean block size, which is exact for a
        // fixed block size (fio spaces each request by its own size over the rate).
        let rate_text = v.get("rate").map(|t| ("rate", t));
        if let Some((option, text)) = rate_text.or(v.get("rate_iops").map(|t| ("rate_iops", t))) {
            let option: &'static str = option;
            let iops_text = v.get("rate_iops");
            let mut rates = [0.0; 2];
            for d in 0..2 {
                if let Some(s) = iops_text.and_then(|t| per_direction(t)[d]) {
                    rates[d] = finite(s).and_then(|r| number::rate_iops(s, r)).map_err(|e| err("rate_iops", e))?;
                }
                if let Some(s) = rate_text.and_then(|(_, t)| per_direction(t)[d]) {
                    let bytes = units.size(s).map_err(|e| err("rate", e))?;
                    let raw = finite(s.trim()).ok();
                    at_least_one(s, raw.unwrap_or(bytes as f64)).map_err(|e| err("rate", e))?;
                    if bytes > 0 {
                        let mean = dirs[d].sizes.mean_bytes();
                        rates[d] = number::rate_iops(s, bytes as f64 / mean).map_err(|e| err("rate", e))?;
                    }
                }
            }
            let [r, w] = rates;
            rate_iops = if read_pct >= 100.0 {
                Some(r)
            } else if read_pct <= 0.0 {
                Some(w)
            } else if r > 0.0 && w > 0.0 {
                // Each direction is paced on its own (io_u.c `rate_ddir`): together they arrive
                // at r + w, each a read with probability r / (r + w).
                read_pct = 100.0 * r / (r + w);
                Some(r + w)
            } else if r == 0.0 && w == 0.0 {
                None
            } else {
                return Err(err(option, format!("`{text}` paces only one direction of a mixed job; sanlab cannot mix a paced and an unpaced direction: give both rates, e.g. \"500,100\"")));
            }
            .filter(|r| *r > 0.0);
        }
        if rate_iops.is_some() && think_ns > 0 {
            return Err(err("thinktime", "thinktime with rate_iops or rate is not modelled: use one or the other"));
        }
        let poisson = match v.get("rate_process").map(str::trim) {
            None | Some("linear") => false,
            Some("poisson") => true,
            Some(other) => return Err(err("rate_process", format!("unknown value `{other}`: expected linear or poisson{}", did_you_mean(other, ["linear", "poisson"])))),
        };

        let start_ns = time_of("startdelay", 1_000_000_000)?;
        let ramp_ns = time_of("ramp_time", 1_000_000_000)?;
        let runtime = time_of("runtime", 1_000_000_000)?;
        // percentage_random per direction (HOWTO: "as described in blocksize"), 0..=100 as fio's
        // `maxval` allows. Only random modes consult it (io_u.c `get_next_block` calls
        // `should_do_random` under `td_random`); sequential modes accept and ignore it.
        let mut perc_random = [100u64; 2];
        if let Some(text) = v.get("percentage_random") {
            for (d, s) in per_direction(text).iter().enumerate() {
                if let Some(s) = s {
                    perc_random[d] = parse_int("percentage_random", s, 0, 100)? as u64;
                }
            }
        }
        let in_use = [read_pct > 0.0, read_pct < 100.0];
        let mixes_sequential = random && (0..2).any(|d| in_use[d] && perc_random[d] < 100);
        // fio wraps a sequential continuation to the region's start when time_based, or for a
        // mixed job whose io_size exceeds size (io_u.c `get_next_seq_offset`); otherwise it ends
        // the pass.
        let wraps = time_based || (mode == "randrw" && io_bytes > size_bytes);
        // A full random map ends the pass too (io_u.c `get_next_rand_block`).
        let passes = ((mixes_sequential || random_map.is_some()) && !wraps).then_some(Passes { bytes: io_bytes, left: loops - 1, start_bytes: 0 });
        // fio `verify` (any method but 0) with do_verify (default 1), verify_backlog[_batch].
        let verify = match v.get("verify").map(str::trim) {
            None | Some("0") => None,
            Some(_) if read_pct >= 100.0 => {
                return Err(err("verify", format!("a read-only job (rw={mode}) checks data that an earlier run wrote, which sanlab does not model; sanlab models the reads that verify adds to a writing job: drop verify, or make the job write (rw=write, randwrite, rw or randrw)")));
            }
            Some(_) => {
                let backlog = int_of("verify_backlog", 0, 0, i64::MAX)? as u64;
                let batch = int_of("verify_backlog_batch", backlog as i64, 0, i64::MAX)? as u64;
                let at_end = bool_of("do_verify", true)? && !time_based;
                let loop_bytes = at_end.then_some(io_bytes);
                Some(Verify { backlog: (backlog > 0).then_some((backlog, if batch == 0 { backlog } else { batch })), loop_bytes, boundary_bytes: io_bytes, log: Default::default(), since_batch: 0, batch_left: 0, draining: false, by_offset: !random })
            }
        };
        let steering = Steering::from_options(v, &units, depth)?;
        let flow = FlowShare::from_options(v)?;
        if flow.is_some() && rate_iops.is_some() {
            return Err(err("flow", "flow with rate or rate_iops is not modelled: use one or the other"));
        }
        let depth = steering.start_depth(depth);
        let rates = rates::rate_sampling(v, size_of("log_compression", 0)? > 0)?;
        let exitall = bool_of("exitall", false)?;
        let exit_on_error = bool_of("exitall_on_error", false)?;
        let exit_what = match v.get("exit_what").map(str::trim) {
            None | Some("group") => ExitWhat::Group,
            Some("stonewall") => ExitWhat::Stonewall,
            Some("all") => ExitWhat::All,
            Some(other) => return Err(err("exit_what", format!("unknown value `{other}`: expected group, stonewall or all{}", did_you_mean(other, ["group", "stonewall", "all"])))),
        };
        // Group 0 and the job's own options until its file places it (`set_exit`).
        let exit = (exitall || exit_on_error).then_some(ExitRule { group: 0, on_end: exitall, on_error: exit_on_error, what: exit_what });
        let options = v.0.iter().filter(|(n, _)| lookup(n).is_some_and(|o| matches!(o.effect, Effect::Model | Effect::Report))).map(|(n, s)| (n.to_string(), s.clone())).collect();
        let numjobs = int_of("numjobs", 1, 1, 4_096)? as u64;
        let offset_increment_bytes = size_of("offset_increment", 0)?;
        // The last clone's region must end within the largest size (no offset wraps around).
        let last_end = offset_increment_bytes.checked_mul(numjobs - 1).and_then(|o| o.checked_add(offset_bytes)).and_then(|o| o.checked_add(size_bytes));
        if last_end.is_none_or(|e| e > SIZE.max()) {
            let option = if numjobs > 1 && offset_increment_bytes > 0 { "offset_increment" } else { "offset" };
            return Err(err(option, format!("the job's region would end beyond {}: offset + (numjobs - 1) x offset_increment + size must stay within it", SIZE.max_text())));
        }
        Ok(FioJob {
            dirs,
            read_pct,
            random,
            perc_random,
            rw_nr,
            seq_add_bytes,
            depth,
            numjobs: numjobs as u32,
            offset_increment_bytes,
            rate_iops,
            poisson,
            start_ns,
            ramp_ns,
            // fio: ramp_time is lead-in, so it lengthens a given runtime.
            runtime_ns: (runtime > 0).then_some(start_ns + ramp_ns + runtime),
            limit_bytes: (!time_based && passes.is_none()).then_some(io_bytes.saturating_mul(loops)),
            passes,
            limit_ios: (number_ios > 0).then_some(number_ios),
            think_ns,
            think_blocks,
            think_iotime_ns,
            issuing_since_ns: start_ns,
            resuming: false,
            size_bytes,
            offset_bytes,
            issued_bytes: 0,
            issued_ios: 0,
            issued_since_think: 0,
            verify,
            zones,
            files,
            steering,
            flow,
            options,
            lfsr,
            random_map,
            time_based,
            rates,
            exitall,
            exit_on_error,
            exit_what,
            exit,
            sync: sync::SyncSchedule::from_options(v)?,
            place: None,
            ignored: vec![],
        })
    }

    /// The next offset in `d`, relative to the region's start; None when a sequential
    /// continuation runs off the region's end and that ends the pass (see [`Passes`]).
    fn offset(&mut self, d: usize, size: u64, file: usize, rng: &mut RngStream) -> Option<u64> {
        if let Some(z) = self.zones.as_mut() {
            if z.bytes >= z.size {
                z.bytes = 0;
                z.start += z.range + z.skip;
                if z.start >= self.size_bytes {
                    z.start = 0;
                }
                self.dirs[d].next_seq_bytes = z.start;
            }
            if self.dirs[d].next_seq_bytes >= z.start + z.range {
                self.dirs[d].next_seq_bytes = z.start;
            }
            z.bytes += size;
            let (start, range) = (z.start, z.range);
            let dir = &mut self.dirs[d];
            let offset = if self.random { start + (dir.offsets.block(rng) * dir.align_bytes).min(range - size) / dir.align_bytes * dir.align_bytes } else { dir.next_seq_bytes };
            let offset = if offset + size > self.size_bytes { start } else { offset };
            dir.next_seq_bytes = offset + size;
            return Some(offset);
        }
        let size_bytes = self.files.as_ref().map_or(self.size_bytes, |f| f.bytes);
        let dir = &mut self.dirs[d];
        let mut random_now = self.random && dir.seq_left == 0;
        if random_now {
            dir.seq_left = self.rw_nr.saturating_sub(1) as u32;
            // fio `should_do_random`: random when a draw in 1..=100 is at most the percentage;
            // at 100 there is no draw, so fully random jobs draw exactly as before.
            let pct = self.perc_random[d];
            if pct < 100 && rng.address_below(100) >= pct {
                random_now = false;
            }
        } else if self.random {
            dir.seq_left -= 1;
        }
        // Sequential: from where this direction's previous request ended (fio `last_pos[ddir]`,
        // set by random and sequential requests alike).
        let offset = match self.lfsr.as_mut() {
            Some((unit, cycle)) if random_now => {
                let cycle = cycle.get_or_insert_with(|| lfsr::BlockCycle::new((size_bytes / *unit).max(1), rng));
                cycle.next() * *unit / dir.align_bytes * dir.align_bytes
            }
            _ if random_now => match self.random_map.as_mut() {
                // A used block moves to the next free one; a full map ends the pass, or starts
                // over when time_based.
                Some(maps) => {
                    let unit = maps.unit_bytes;
                    let map = maps.of(file);
                    let mut free = map.free_from(dir.offsets.block(rng) * dir.align_bytes / unit);
                    if free.is_none() && self.time_based {
                        map.clear();
                        free = map.free_from(dir.offsets.block(rng) * dir.align_bytes / unit);
                    }
                    free? * unit
                }
                None => dir.offsets.block(rng) * dir.align_bytes,
            },
            _ => dir.next_seq_bytes,
        };
        // A request that would run past the end wraps to the start (sequential) or is pulled back
        // inside the region (the last random block of a larger request).
        let offset = if offset + size > size_bytes {
            if random_now && self.random_map.is_some() {
                // The random map cuts the request at the region's end instead.
                offset
            } else if random_now {
                (size_bytes - size) / dir.align_bytes * dir.align_bytes
            } else if self.passes.is_some() {
                return None;
            } else {
                0
            }
        } else {
            offset
        };
        // fio adds the skip to where the request ended; going back past the start wraps to the
        // end of the region (io_u.c `get_next_seq_offset`).
        let add = if self.random { 0 } else { self.seq_add_bytes };
        let next = i128::from(offset + size) + i128::from(add);
        dir.next_seq_bytes = if next < 0 { (i128::from(size_bytes) + i128::from(add)) as u64 } else { next as u64 };
        Some(offset)
    }

    /// Starts the next pass over the region (fio's next loop), or returns false after the last.
    fn next_pass(&mut self) -> bool {
        let Some(p) = self.passes.as_mut().filter(|p| p.left > 0) else {
            return false;
        };
        p.left -= 1;
        p.start_bytes = self.issued_bytes;
        for dir in &mut self.dirs {
            dir.next_seq_bytes = 0;
        }
        if let Some(maps) = self.random_map.as_mut() {
            maps.clear();
        }
        true
    }
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Workload>> {
    let cmdline = spec.opt_string("cmdline", "a fio command line, e.g. \"fio --name=w --ioengine=libaio --iodepth=8 --rw=randwrite --bs=512k\"; read with fio's units and defaults, instead of the keys below")?;
    if let Some(text) = cmdline {
        let device_size_bytes = spec.size_bytes("device_size", Some((100 << 30, "100GiB")), "with cmdline: disk size for jobs without --size and for sizes in percent")?;
        return Ok(Box::new(file::cmdline_jobs(&text, device_size_bytes).map_err(|e| spec.error("cmdline", e))?));
    }
    let mut values = OptionValues::default();
    for o in OPTIONS.iter().filter(|o| o.scenario) {
        if let Some(text) = spec.scalar_text(o.name, o.ty, o.default, o.doc)? {
            values.set(o.name, text);
        }
    }
    if spec.is_describing() {
        return Ok(Box::new(FioJob::from_options(&OptionValues::default(), Dialect::Scenario).expect("defaults are valid")));
    }
    let job = FioJob::from_options(&values, Dialect::Scenario).map_err(|e| spec.error(e.option, e.message))?;
    Ok(Box::new(job))
}

impl FioJob {
    /// Places the job in its file: its reporting group, whether any job of the file sets
    /// `exitall` (fio's flag is global to the run: every job's end then ends others), and whether
    /// any sets `exitall` or `exitall_on_error` (then every job of the file needs its rule, for its
    /// group at least).
    pub(crate) fn set_exit(&mut self, group: u32, any_exitall: bool, any_rule: bool) {
        // The job's exit_what applies when another job sets exitall too.
        self.exit = any_rule.then_some(ExitRule { group, on_end: any_exitall, on_error: self.exit_on_error, what: self.exit_what });
    }

    pub(crate) fn set_place(&mut self, place: crate::FioPlace) {
        self.place = Some(place);
    }

    /// Joins the flow of the jobs with the same flow_id in one file (`flows` by flow_id).
    pub(crate) fn join_flow(&mut self, flows: &mut std::collections::BTreeMap<u32, std::rc::Rc<Flow>>) {
        if let Some(f) = self.flow.as_mut() {
            f.join(flows);
        }
    }

    fn draw_next(&mut self, rng: &mut RngStream) -> Option<Request> {
        if let Some(v) = self.verify.as_mut() {
            if let Some((offset, size_bytes)) = v.next_read().or_else(|| v.start_phase(self.issued_bytes).then(|| v.next_read()).flatten()) {
                return Some(Request { op: Op::Read, size_bytes, offset_bytes: self.offset_bytes + offset });
            }
        }
        if self.limit_bytes.is_some_and(|l| self.issued_bytes >= l) || self.limit_ios.is_some_and(|l| self.issued_ios >= l) {
            return None;
        }
        if self.passes.as_ref().is_some_and(|p| self.issued_bytes - p.start_bytes >= p.bytes) && !self.next_pass() {
            return None;
        }
        let (op, size_bytes, offset) = loop {
            let op = if self.read_pct >= 100.0 || (self.read_pct > 0.0 && rng.uniform() * 100.0 < self.read_pct) { Op::Read } else { Op::Write };
            let d = usize::from(op == Op::Write);
            let size_bytes = self.dirs[d].sizes.draw(rng);
            // With several files: this file's position in, the next file's turn after.
            let file = self.files.as_mut().map(|f| {
                let k = f.next;
                f.next = (k + 1) % f.positions.len();
                (k, f.bytes, f.positions[k][d])
            });
            if let Some((_, _, pos)) = file {
                self.dirs[d].next_seq_bytes = pos;
            }
            let got = self.offset(d, u64::from(size_bytes), file.map_or(0, |f| f.0), rng);
            let mut size_bytes = size_bytes;
            if let (Some(o), Some(maps)) = (got, self.random_map.as_mut()) {
                let unit = maps.unit_bytes;
                // fio cuts a request short at the first block already used (io_u.c `mark_random_map`).
                let marked = maps.of(file.map_or(0, |f| f.0)).mark(o / unit, u64::from(size_bytes).div_ceil(unit));
                if marked > 0 && marked * unit < u64::from(size_bytes) {
                    size_bytes = (marked * unit) as u32;
                }
            }
            let got = match (file, self.files.as_mut()) {
                (Some((k, bytes, _)), Some(f)) => {
                    f.positions[k][d] = self.dirs[d].next_seq_bytes;
                    got.map(|o| k as u64 * bytes + o)
                }
                _ => got,
            };
            match got {
                Some(offset) => break (op, size_bytes, offset),
                // The pass ended; fio draws the next request afresh in the next loop.
                None if self.next_pass() => continue,
                None => return None,
            }
        };
        self.issued_bytes += u64::from(size_bytes);
        self.issued_ios += 1;
        self.issued_since_think += 1;
        if let Some(v) = self.verify.as_mut().filter(|_| op == Op::Write) {
            v.logged(offset, size_bytes);
        }
        Some(Request { op, size_bytes, offset_bytes: self.offset_bytes + offset })
    }
}

impl Workload for FioJob {
    fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        let r = self.draw_next(rng);
        if let Some(f) = self.flow.as_mut() {
            if r.is_some() {
                f.issued();
            } else {
                f.done();
            }
        }
        r
    }

    fn region_bytes(&self) -> Option<std::ops::Range<u64>> {
        Some(self.offset_bytes..self.offset_bytes + self.size_bytes)
    }

    fn pacing(&self) -> Pacing {
        match self.rate_iops {
            None => Pacing::Closed { depth: self.depth },
            Some(rate_iops) => Pacing::Open { depth: self.depth, rate_iops, poisson: self.poisson },
        }
    }

    fn runtime_ns(&self) -> Option<u64> {
        self.runtime_ns
    }

    fn start_ns(&self) -> u64 {
        self.start_ns
    }

    fn measured_from_ns(&self) -> u64 {
        self.start_ns + self.ramp_ns
    }

    /// fio `thinktime`: after `thinktime_blocks` requests the job stops issuing, waits for them,
    /// then thinks (backend.c `handle_thinktime` quiesces before it sleeps).
    /// With `thinktime_iotime`, also after issuing for that long, whichever comes first.
    fn think_ns(&mut self, issued_ns: u64, now_ns: u64) -> Option<u64> {
        // A loop's writes are all issued: wait for them before reading them back, as fio does.
        if self.verify.as_mut().is_some_and(|v| v.start_phase(self.issued_bytes)) {
            return Some(0);
        }
        if let Some(f) = self.flow.as_mut() {
            // The first completion was issued at the job's start.
            let ends_at_ns = self.runtime_ns.map(|r| issued_ns - self.start_ns + r);
            if let Some(pause) = f.pause_ns(now_ns, now_ns - issued_ns, ends_at_ns) {
                return Some(pause);
            }
        }
        if self.think_ns == 0 {
            return None;
        }
        // After a pause the job refills at once, so the first completion after it was issued
        // when issuing resumed.
        if std::mem::take(&mut self.resuming) {
            self.issuing_since_ns = issued_ns;
        }
        let by_time = self.think_iotime_ns.is_some_and(|t| now_ns - self.issuing_since_ns >= t);
        let by_blocks = self.think_blocks.is_some_and(|b| self.issued_since_think >= b);
        if !(by_time || by_blocks) {
            return None;
        }
        self.issued_since_think = 0;
        self.resuming = true;
        Some(self.think_ns)
    }

    fn instances(&self) -> Vec<Instance> {
        (0..self.numjobs)
            .map(|c| {
                let mut clone = self.clone();
                clone.offset_bytes += u64::from(c) * self.offset_increment_bytes;
                Instance { suffix: (self.numjobs > 1).then(|| c.to_string()), workload: Box::new(clone) as Box<dyn Workload>, after: vec![] }
            })
            .collect()
    }

    fn options(&self) -> Vec<(String, String)> {
        self.options.clone()
    }

    fn ignored(&self) -> Vec<&'static str> {
        self.ignored.clone()
    }

    fn completed(&mut self, c: &Completion) -> Steer {
        self.steering.completed(c)
    }

    fn findings(&self) -> Option<FioFindings> {
        self.steering.findings()
    }

    fn rate_sampling(&self) -> [RateSampling; 2] {
        self.rates
    }

    fn exit_rule(&self) -> Option<ExitRule> {
        self.exit
    }

    fn sync_schedule(&self) -> Option<SyncSchedule> {
        self.sync
    }

    fn state_bytes(&self) -> u64 {
        self.random_map.as_ref().map_or(0, RandomMaps::bytes)
    }

    fn fio_place(&self) -> Option<crate::FioPlace> {
        self.place.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(src: &str) -> SpecResult<Box<dyn Workload>> {
        let t: toml::Table = src.parse().unwrap();
        let spec = Spec::new(&t, "vm[0].job[0]");
        let w = build(&spec)?;
        spec.finish()?;
        Ok(w)
    }

    fn draw(w: &mut Box<dyn Workload>, n: usize) -> Vec<Request> {
        let mut rng = RngStream::new(1, "t");
        (0..n).map_while(|_| w.next(&mut rng)).collect()
    }

    #[test]
    fn random_writes_are_aligned_and_in_range() {
        let mut j = job("rw = \"randwrite\"\nbs = \"32k\"\nsize = \"1MiB\"\noffset = \"1MiB\"").unwrap();
        for r in draw(&mut j, 1000) {
            assert_eq!(r.op, Op::Write);
            assert_eq!(r.offset_bytes % 32768, 0);
            assert!((1 << 20..2 << 20).contains(&r.offset_bytes));
        }
    }

    #[test]
    fn sequential_wraps_per_direction_and_mix_follows_rwmixread() {
        let mut j = job("rw = \"read\"\nbs = \"4k\"\nsize = \"8k\"").unwrap();
        let offs: Vec<u64> = draw(&mut j, 3).iter().map(|r| r.offset_bytes).collect();
        assert_eq!(offs, [0, 4096, 0]);
        let mut j = job("rw = \"rw\"\nrwmixread = 70").unwrap();
        let reqs = draw(&mut j, 10_000);
        let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
        assert!((6_800..7_200).contains(&reads), "{reads}");
        // Reads and writes each go through the region in order, as fio keeps a position per direction.
        let writes: Vec<u64> = reqs.iter().filter(|r| r.op == Op::Write).take(3).map(|r| r.offset_bytes).collect();
        assert_eq!(writes, [0, 4096, 8192]);
    }

    #[test]
    fn block_sizes_per_direction_bsrange_and_bssplit() {
        let mut j = job("rw = \"randrw\"\nbs = \"4k,16k\"").unwrap();
        for r in draw(&mut j, 1000) {
            assert_eq!(r.size_bytes, if r.op == Op::Read { 4096 } else { 16384 });
        }
        let mut j = job("rw = \"randread\"\nbsrange = \"4k-16k\"").unwrap();
        let reqs = draw(&mut j, 40_000);
        for size in [4096, 8192, 12288, 16384] {
            let n = reqs.iter().filter(|r| r.size_bytes == size).count();
            assert!((9_400..10_600).contains(&n), "{size}: {n}");
        }
        assert!(reqs.iter().all(|r| r.offset_bytes % 4096 == 0));
        let mut j = job("bssplit = \"4k/75:64k/\"").unwrap();
        let big = draw(&mut j, 10_000).iter().filter(|r| r.size_bytes == 65536).count();
        assert!((2_300..2_700).contains(&big), "{big}");
        assert!(job("bssplit = \"4k/70:64k/20\"").err().unwrap().message.contains("add up to 90"));
    }

    #[test]
    fn errors_are_located() {
        let e = job("rw = \"randwirte\"").err().unwrap();
        assert!(e.message.contains("did you mean `randwrite`"), "{}", e.message);
        assert_eq!(job("iodepth = 0").err().unwrap().location, "vm[0].job[0].iodepth");
        assert!(job("rw = \"randtrim\"").err().unwrap().message.contains("trims are not modelled"));
        assert_eq!(job("blocksize = \"4k\"").err().unwrap().location, "vm[0].job[0].blocksize");
        assert!(job("ioengine = \"spdk\"").err().unwrap().message.starts_with("unknown engine `spdk`: expected a sync engine"));
        let e = job("ioengine = \"rbd\"").err().unwrap();
        assert_eq!(e.message, "engine `rbd` does not do block I/O on a disk, and sanlab simulates block I/O: use a block engine such as libaio, io_uring or psync");
        assert!(job("thinktime = 10\nrate_iops = 10").err().unwrap().message.contains("thinktime with rate_iops"));
    }

    #[test]
    fn pacing_depth_and_rates() {
        assert_eq!(job("iodepth = 32").unwrap().pacing(), Pacing::Closed { depth: 32 });
        // Every block engine runs: sync ones one request at a time, the others at iodepth.
        for engine in SYNC_ENGINES {
            assert_eq!(job(&format!("iodepth = 32\nioengine = \"{engine}\"")).unwrap().pacing(), Pacing::Closed { depth: 1 }, "{engine}");
        }
        for engine in ASYNC_ENGINES {
            assert_eq!(job(&format!("iodepth = 32\nioengine = \"{engine}\"")).unwrap().pacing(), Pacing::Closed { depth: 32 }, "{engine}");
        }
        assert_eq!(
            job("rate_iops = 500\nrate_process = \"poisson\"\niodepth = 8").unwrap().pacing(),
            Pacing::Open { depth: 8, rate_iops: 500.0, poisson: true }
        );
        // Per-direction rates on a mixed job: both streams, mixed at their rates.
        let mut j = job("rw = \"randrw\"\nrate_iops = \"300,100\"").unwrap();
        assert_eq!(j.pacing(), Pacing::Open { depth: 1, rate_iops: 400.0, poisson: false });
        let reads = draw(&mut j, 10_000).iter().filter(|r| r.op == Op::Read).count();
        assert!((7_300..7_700).contains(&reads), "{reads}");
        assert_eq!(job("rw = \"randread\"\nrate_iops = \"300,100\"").unwrap().pacing(), Pacing::Open { depth: 1, rate_iops: 300.0, poisson: false });
        assert!(job("rw = \"randrw\"\nrate_iops = \",100\"").err().unwrap().message.contains("only one direction"));
    }

    #[test]
    fn times_think_and_limits() {
        let mut j = job("runtime = 30\nramp_time = \"5s\"\nstartdelay = \"500ms\"\nthinktime = 200\nthinktime_blocks = 4\niodepth = 16").unwrap();
        assert_eq!(j.runtime_ns(), Some(35_500_000_000));
        assert_eq!(j.start_ns(), 500_000_000);
        assert_eq!(j.measured_from_ns(), 5_500_000_000);
        assert_eq!(j.pacing(), Pacing::Closed { depth: 4 }, "thinktime_blocks caps the depth");
        let mut rng = RngStream::new(1, "t");
        for _ in 0..3 {
            j.next(&mut rng);
        }
        assert_eq!(j.think_ns(0, 0), None);
        j.next(&mut rng);
        assert_eq!(j.think_ns(0, 0), Some(200_000), "200 us after 4 requests");
        assert_eq!(j.think_ns(0, 0), None);
        // time_based = false stops after io_size x loops bytes, number_ios after that many requests.
        let mut j = job("time_based = false\nsize = \"64k\"\nloops = 2").unwrap();
        assert_eq!(draw(&mut j, 100).len(), 32);
        let mut j = job("number_ios = 7").unwrap();
        assert_eq!(draw(&mut j, 100).len(), 7);
    }

    #[test]
    fn rw_suffix_and_clones() {
        let mut j = job("rw = \"write:4k\"\nbs = \"4k\"").unwrap();
        let offs: Vec<u64> = draw(&mut j, 3).iter().map(|r| r.offset_bytes).collect();
        assert_eq!(offs, [0, 8192, 16384]);
        let mut j = job("rw = \"randread:4\"").unwrap();
        let offs: Vec<u64> = draw(&mut j, 4).iter().map(|r| r.offset_bytes).collect();
        assert_eq!([offs[1] - offs[0], offs[2] - offs[1], offs[3] - offs[2]], [4096; 3]);
        let j = job("numjobs = 3\noffset_increment = \"1MiB\"\nsize = \"1MiB\"\nrw = \"randread\"").unwrap();
        let inst = j.instances();
        assert_eq!(inst.iter().map(|i| i.suffix.clone().unwrap()).collect::<Vec<_>>(), ["0", "1", "2"]);
        let mut third = inst.into_iter().nth(2).unwrap().workload;
        assert!(draw(&mut third, 100).iter().all(|r| (2 << 20..3 << 20).contains(&r.offset_bytes)));
    }

    #[test]
    fn rate_caps_bandwidth_per_direction() {
        // 1 MiB/s of 4k: 256 IOPS; per direction "1m,512k" on a 70/30 mix of 4k reads and 64k writes.
        assert_eq!(job("rate = \"1m\"").unwrap().pacing(), Pacing::Open { depth: 1, rate_iops: 256.0, poisson: false });
        let j = job("rw = \"randrw\"\nbs = \"4k,64k\"\nrate = \"1m,512k\"\nrate_iops = 999").unwrap();
        assert_eq!(j.pacing(), Pacing::Open { depth: 1, rate_iops: 256.0 + 8.0, poisson: false }, "rate wins over rate_iops");
        // A bsrange's mean: 4k..16k in 4k steps, uniform.
        assert_eq!(job("bsrange = \"4k-16k\"\nrate = \"10m\"").unwrap().pacing(), Pacing::Open { depth: 1, rate_iops: 10.0 * 1048576.0 / 10240.0, poisson: false });
        assert_eq!(BlockSizes::Split(vec![(4096, 75), (65536, 100)]).mean_bytes(), 0.75 * 4096.0 + 0.25 * 65536.0);
        let e = job("rate = \"0.5\"").err().unwrap();
        assert_eq!((e.location.as_str(), e.message.as_str()), ("vm[0].job[0].rate", "rate `0.5` is below 1: expected 0 (no cap) or at least 1 (nearest valid: 1)"));
        // rate_iops keeps sanlab's range: one request every 5 s is a rate.
        assert!(job("rate_iops = 0.2").is_ok());
    }

    #[test]
    fn sequential_skips_go_forward_or_backwards_and_blockalign() {
        let offs = |src: &str, n| draw(&mut job(src).unwrap(), n).iter().map(|r| r.offset_bytes).collect::<Vec<u64>>();
        // read:-8k with 4k blocks reads backwards 4k at a time, wrapping to the end (fio's rule).
        assert_eq!(offs("rw = \"read:-8k\"\nsize = \"64k\"", 5), [0, 56 << 10, 52 << 10, 48 << 10, 44 << 10]);
        assert_eq!(offs("rw = \"read:8k\"\nsize = \"64k\"", 6), [0, 12 << 10, 24 << 10, 36 << 10, 48 << 10, 60 << 10]);
        assert!(job("rw = \"read:-64k\"\nsize = \"64k\"").err().unwrap().message.contains("does not fit"));
        // Random 8k requests on a 512-byte boundary.
        let reqs = draw(&mut job("rw = \"randread\"\nbs = \"8k\"\nblockalign = 512\nsize = \"1m\"").unwrap(), 2_000);
        assert!(reqs.iter().all(|r| r.offset_bytes % 512 == 0 && r.offset_bytes + 8192 <= 1 << 20));
        assert!(reqs.iter().any(|r| r.offset_bytes % 8192 != 0));
    }

    #[test]
    fn thinktime_iotime_pauses_after_issuing_for_a_while() {
        // No thinktime_blocks: only time counts (fio skips the blocks check), and the depth stays.
        let mut j = job("thinktime = \"1ms\"\nthinktime_iotime = \"10ms\"\nthinktime_spin = \"200us\"\niodepth = 4").unwrap();
        assert_eq!(j.pacing(), Pacing::Closed { depth: 4 });
        let mut rng = RngStream::new(1, "t");
        j.next(&mut rng);
        assert_eq!(j.think_ns(0, 9_000_000), None);
        assert_eq!(j.think_ns(9_000_000, 10_000_000), Some(1_000_000), "10 ms of issuing");
        // Issuing resumed at 11.5 ms (the job drained, then paused): the next pause is 10 ms later.
        assert_eq!(j.think_ns(11_500_000, 12_000_000), None);
        assert_eq!(j.think_ns(20_000_000, 21_400_000), None);
        assert_eq!(j.think_ns(21_000_000, 21_500_000), Some(1_000_000));
        // With thinktime_blocks too, whichever comes first.
        let mut j = job("thinktime = \"1ms\"\nthinktime_iotime = \"10s\"\nthinktime_blocks = 2").unwrap();
        j.next(&mut rng);
        j.next(&mut rng);
        assert_eq!(j.think_ns(0, 1_000), Some(1_000_000));
    }

    fn file_job(opts: &[(&'static str, &str)]) -> Result<Box<dyn Workload>, OptionError> {
        Ok(Box::new(FioJob::from_options(&OptionValues::of(opts), Dialect::JobFile { device_size_bytes: 1 << 30 })?))
    }

    #[test]
    fn verify_reads_back_what_was_written() {
        let ops = |reqs: &[Request]| reqs.iter().map(|r| if r.op == Op::Read { 'R' } else { 'W' }).collect::<String>();
        // After the writes (and a pause for them to complete), every block is read back.
        let mut j = file_job(&[("rw", "write"), ("size", "16k"), ("verify", "crc32c")]).unwrap();
        let mut rng = RngStream::new(1, "t");
        let writes: Vec<Request> = (0..4).map(|_| j.next(&mut rng).unwrap()).collect();
        assert_eq!(j.think_ns(0, 0), Some(0), "the writes complete before the reads");
        let rest = draw(&mut j, 100);
        assert_eq!(ops(&rest), "RRRR");
        assert_eq!(rest.iter().map(|r| (r.offset_bytes, r.size_bytes)).collect::<Vec<_>>(), writes.iter().map(|r| (r.offset_bytes, r.size_bytes)).collect::<Vec<_>>());
        // verify_backlog interleaves; loops verify after each pass; do_verify=0 keeps only the backlog.
        let mut j = file_job(&[("rw", "randwrite"), ("size", "32k"), ("verify", "md5"), ("verify_backlog", "3")]).unwrap();
        assert_eq!(ops(&draw(&mut j, 100)), "WWWRRRWWWRRRWWRR");
        let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("loops", "2"), ("verify", "md5")]).unwrap();
        assert_eq!(ops(&draw(&mut j, 100)), "WWRRWWRR");
        let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("verify", "md5"), ("do_verify", "0")]).unwrap();
        assert_eq!(ops(&draw(&mut j, 100)), "WW");
        // time_based: fio ends the job at its runtime, before any verify phase.
        let mut j = file_job(&[("rw", "write"), ("size", "8k"), ("time_based", "1"), ("verify", "md5")]).unwrap();
        assert!(draw(&mut j, 100).iter().all(|r| r.op == Op::Write));
        let e = file_job(&[("rw", "randread"), ("verify", "crc32c")]).err().unwrap();
        assert!(e.message.starts_with("a read-only job (rw=randread) checks data that an earlier run wrote"), "{}", e.message);
    }

    /// Requests (after the first) that start where the previous one ended.
    fn continuations(reqs: &[Request]) -> usize {
        reqs.windows(2).filter(|w| w[1].offset_bytes == w[0].offset_bytes + u64::from(w[0].size_bytes)).count()
    }

    #[test]
    fn percentage_random_mixes_sequential_continuations() {
        // 0: fully sequential, wrapping at the region's end (time_based, the scenario default).
        let mut j = job("rw = \"randread\"\nsize = \"64k\"\npercentage_random = 0").unwrap();
        let offs: Vec<u64> = draw(&mut j, 40).iter().map(|r| r.offset_bytes).collect();
        assert_eq!(offs, (0..40).map(|i| i * 4096 % 65536).collect::<Vec<u64>>());
        // 70: about 30 % of requests continue from the previous one (a random block lands there
        // by chance once in 262,144).
        let mut j = job("rw = \"randread\"\npercentage_random = 70").unwrap();
        let seq = continuations(&draw(&mut j, 10_001));
        assert!((2_800..=3_200).contains(&seq), "{seq}");
        // 100 (the default) draws nothing more: the same requests as without the option.
        let mut a = job("rw = \"randrw\"\nbsrange = \"4k-16k\"\nrandom_distribution = \"zipf:1.2\"").unwrap();
        let mut b = job("rw = \"randrw\"\nbsrange = \"4k-16k\"\nrandom_distribution = \"zipf:1.2\"\npercentage_random = 100").unwrap();
        assert_eq!(draw(&mut a, 1_000), draw(&mut b, 1_000));
        // Sequential modes ignore it, as fio does.
        let mut a = job("rw = \"rw\"").unwrap();
        let mut b = job("rw = \"rw\"\npercentage_random = 30").unwrap();
        assert_eq!(draw(&mut a, 1_000), draw(&mut b, 1_000));
    }

    #[test]
    fn percentage_random_per_direction() {
        // Reads fully random, writes fully sequential; each direction continues from its own last request.
        let mut j = job("rw = \"randrw\"\npercentage_random = \"100,0\"").unwrap();
        let reqs = draw(&mut j, 4_000);
        let (reads, writes): (Vec<Request>, Vec<Request>) = reqs.into_iter().partition(|r| r.op == Op::Read);
        assert_eq!(writes.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), (0..writes.len() as u64).map(|i| i * 4096).collect::<Vec<_>>());
        assert!(continuations(&reads) < 5, "{}", continuations(&reads));
        // A single value applies to both directions; "0," leaves writes at the default 100.
        let mut j = job("rw = \"randrw\"\npercentage_random = 0").unwrap();
        let reqs = draw(&mut j, 1_000);
        assert!(reqs.iter().filter(|r| r.op == Op::Read).collect::<Vec<_>>().windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 4096));
        let mut j = job("rw = \"randrw\"\npercentage_random = \"0,\"").unwrap();
        let writes: Vec<Request> = draw(&mut j, 2_000).into_iter().filter(|r| r.op == Op::Write).collect();
        assert!(continuations(&writes) < 5);
    }

    #[test]
    fn percentage_random_without_time_based_ends_the_pass_at_the_region_end() {
        // fio stops a pass when a sequential continuation runs off the end, even before io_size...
        let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\npercentage_random = 0").unwrap();
        assert_eq!(draw(&mut j, 1_000).len(), 16);
        // ...starts the next loop at the region's start...
        let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\nloops = 2\npercentage_random = 0").unwrap();
        let offs: Vec<u64> = draw(&mut j, 1_000).iter().map(|r| r.offset_bytes).collect();
        assert_eq!(offs, (0..32).map(|i| i % 16 * 4096).collect::<Vec<u64>>());
        // ...and wraps instead for a randrw job whose io_size exceeds size.
        let mut j = job("rw = \"randrw\"\ntime_based = false\nsize = \"64k\"\nio_size = \"1MiB\"\npercentage_random = 0").unwrap();
        assert_eq!(draw(&mut j, 1_000).len(), 256);
        // A mix still stops after io_size bytes at most.
        let mut j = job("rw = \"randread\"\ntime_based = false\nsize = \"1MiB\"\npercentage_random = 50").unwrap();
        assert!(draw(&mut j, 1_000).len() <= 256);
    }

    #[test]
    fn the_random_map_covers_every_block_once_per_pass() {
        let blocks = |j: &mut Box<dyn Workload>, n| draw(j, n).iter().map(|r| r.offset_bytes / 4096).collect::<Vec<u64>>();
        let distinct = |b: &[u64]| b.iter().collect::<std::collections::BTreeSet<_>>().len();
        // fio's default: 256 requests cover the 256 blocks of 1 MiB, then the job ends.
        let mut j = file_job(&[("rw", "randwrite"), ("size", "1m")]).unwrap();
        let once = blocks(&mut j, 1000);
        assert_eq!((once.len(), distinct(&once)), (256, 256));
        assert_ne!(once, (0..256).collect::<Vec<u64>>(), "random, not sequential");
        assert_eq!(j.state_bytes(), 32, "one bit per block");
        // time_based: the map starts over once full; loops=2: a second full pass.
        for (opt, drawn) in [(("time_based", "1"), 512), (("loops", "2"), 1000)] {
            let mut j = file_job(&[("rw", "randrw"), ("size", "1m"), opt]).unwrap();
            let twice = blocks(&mut j, drawn);
            assert_eq!(twice.len(), 512);
            assert_eq!((distinct(&twice[..256]), distinct(&twice[256..])), (256, 256), "reads and writes share the map");
        }
        // Mixed block sizes: a request is cut at the first used block, so the pass covers the
        // region exactly.
        let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("bsrange", "4k-64k")]).unwrap();
        let reqs = draw(&mut j, 10_000);
        assert_eq!(reqs.iter().map(|r| u64::from(r.size_bytes)).sum::<u64>(), 1 << 20);
        let mut covered = vec![0u8; 256];
        for r in &reqs {
            for b in r.offset_bytes / 4096..(r.offset_bytes + u64::from(r.size_bytes)) / 4096 {
                covered[b as usize] += 1;
            }
        }
        assert!(covered.iter().all(|&c| c == 1));
        // Non-uniform distributions, zones and sanlab's own keys keep drawing with replacement.
        assert_eq!(file_job(&[("rw", "randread"), ("random_distribution", "zipf:1.2")]).unwrap().state_bytes(), 0);
        assert_eq!(file_job(&[("rw", "randread"), ("zonemode", "strided"), ("zonesize", "64k"), ("zonerange", "1m")]).unwrap().state_bytes(), 0);
        assert_eq!(job("rw = \"randread\"").unwrap().instances()[0].workload.state_bytes(), 0);
    }

    #[test]
    fn lfsr_uses_every_block_once_before_any_repeats() {
        let blocks = |j: &mut Box<dyn Workload>, n| draw(j, n).iter().map(|r| r.offset_bytes / 4096).collect::<Vec<u64>>();
        let distinct = |b: &[u64]| b.iter().collect::<std::collections::BTreeSet<_>>().len();
        // 1 MiB in 4 KiB blocks: without time_based the job does 256 requests, every block once.
        let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("random_generator", "lfsr")]).unwrap();
        let once = blocks(&mut j, 1000);
        assert_eq!((once.len(), distinct(&once)), (256, 256));
        assert_ne!(once, (0..256).collect::<Vec<u64>>(), "random, not sequential");
        // time_based: the cycle starts over once every block has been used.
        let mut j = file_job(&[("rw", "randrw"), ("size", "1m"), ("random_generator", "lfsr"), ("time_based", "1")]).unwrap();
        let twice = blocks(&mut j, 512);
        assert_eq!(distinct(&twice[..256]), 256, "reads and writes share the cycle, as fio's file does");
        assert_eq!(twice[..256], twice[256..]);
        // fio's default generator with norandommap draws with replacement: repeats long before
        // the region is used.
        let mut j = file_job(&[("rw", "randread"), ("size", "1m"), ("random_generator", "tausworthe"), ("norandommap", "1")]).unwrap();
        assert!(distinct(&blocks(&mut j, 1000)) < 200);
        // Non-uniform distributions ignore it, as fio's do; zones and files are not modelled.
        assert!(file_job(&[("rw", "randread"), ("random_generator", "lfsr"), ("random_distribution", "zipf:1.2")]).unwrap().region_bytes().is_some());
        let e = file_job(&[("rw", "randread"), ("random_generator", "lfsr"), ("zonemode", "strided"), ("zonesize", "64k"), ("zonerange", "1m")]).err().unwrap();
        assert!(e.option == "random_generator" && e.message.contains("not modelled"), "{}", e.message);
        let e = file_job(&[("random_generator", "lsfr")]).err().unwrap();
        assert_eq!(e.message, "unknown value `lsfr`: expected tausworthe, lfsr or tausworthe64; did you mean `lfsr`?");
    }

    #[test]
    fn percentage_random_errors_and_job_files() {
        let e = job("rw = \"randread\"\npercentage_random = 120").err().unwrap();
        assert_eq!(e.location, "vm[0].job[0].percentage_random");
        assert!(e.message.contains("120 is out of range: expected 0..=100 (nearest valid: 100)"), "{}", e.message);
        let e = job("percentage_random = \"50,-5\"").err().unwrap();
        assert!(e.message.contains("-5 is out of range: expected 0..=100 (nearest valid: 0)"), "{}", e.message);
        assert!(job("percentage_random = \"half\"").err().unwrap().message.contains("`half` is not a whole number"));
        // Job files read the same option table.
        assert!(lookup("percentage_random").is_some_and(|o| o.effect == Effect::Model));
        let mut v = OptionValues::of(&[("rw", "randwrite"), ("size", "64k"), ("percentage_random", "50,0")]);
        let mut j: Box<dyn Workload> = Box::new(FioJob::from_options(&v, Dialect::JobFile { device_size_bytes: 1 << 30 }).unwrap());
        assert_eq!(draw(&mut j, 100).iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), (0..16).map(|i| i * 4096).collect::<Vec<u64>>());
        v.set("percentage_random", "101".into());
        assert_eq!(FioJob::from_options(&v, Dialect::JobFile { device_size_bytes: 1 << 30 }).err().unwrap().option, "percentage_random");
    }

    #[test]
    fn fio_units_follow_kb_base() {
        let b = |s, kb| match parse_fio_size(s, kb).unwrap() {
            FioSize::Bytes(b) => b,
            FioSize::Percent(_) => panic!(),
        };
        assert_eq!(b("4k", 1024), 4096);
        assert_eq!(b("4KB", 1024), 4096);
        assert_eq!(b("1MiB", 1024), 1_000_000, "fio's compatibility mode: IEC prefixes mean powers of 10");
        assert_eq!(b("1MiB", 1000), 1_048_576);
        assert_eq!(b("1m", 1000), 1_000_000);
        assert_eq!(b("0x1000", 1024), 4096);
        assert!(parse_fio_size("4kx", 1024).err().unwrap().contains("unknown size suffix `kx`"));
        assert_eq!(parse_duration("10m", 1), Ok(600_000_000_000));
        assert_eq!(parse_duration("250", 1_000), Ok(250_000));
        assert_eq!(parse_duration("2msec", 1), Ok(2_000_000));
    }
}
