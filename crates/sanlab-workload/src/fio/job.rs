//! A fio job ([`FioJob`]): what its options make of it — read by [`FioJob::from_options`], one
//! function per group of options (rw and mix, region, offsets, pacing, passes, exits, clones; block
//! sizes and verify in their own files) — and the requests it draws (io_u.c `get_next_offset`,
//! `get_next_seq_offset`; backend.c `handle_thinktime`) behind the [`Workload`] face.

use super::block_sizes;
use super::flow::{Flow, FlowShare};
use super::lfsr;
use super::options::{lookup, Effect, ASYNC_ENGINES, NON_BLOCK_ENGINES, SYNC_ENGINES};
use super::random_map::RandomMaps;
use super::region::{offsets, passes, region, Direction, JobFiles, Offsets, Passes, Region, Zones};
use super::rates;
use super::steer::Steering;
use crate::findings::FioFindings;
use super::sync;
use super::values::{at_least_one, err, parse_int, per_direction, Dialect, OptionError, OptionValues, Reader, Units};
use super::verify::Verify;
use crate::face::{Completion, Instance, JobSource, Request, Steer, Workload};
use crate::plan::Pacing;
use crate::plan::{ExitRule, ExitWhat, JobPlan, RateSampling, SyncSchedule};
use crate::face::Op;
use sanlab_spec::number::{self, finite, SIZE};
use sanlab_spec::did_you_mean;
use sanlab_des::RngStream;

/// A fio job: request shapes, pacing and stop conditions, and the state of one clone.
///
/// `repr(C)` keeps the fields in the order written: first what every request reads or writes (its
/// draw, its end checks, whether it steers), in the job's first three cache lines, with the
/// options few jobs use boxed behind a pointer there; then its directions, a line each; then the
/// rest. At thousands of jobs each is visited once per thousands of other requests, long after
/// its lines left the cache, so each line a request touches is a trip to memory
/// (docs/performance.md, "Speed at scale").
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub(crate) struct FioJob {
    issued_bytes: u64,
    issued_ios: u64,
    issued_since_think: u64,
    read_pct: f64,
    offset_bytes: u64,
    size_bytes: u64,
    /// rw suffix of a random mode: requests per random offset.
    rw_nr: u64,
    /// rw suffix of a sequential mode: bytes skipped after each request; negative goes backwards.
    seq_add_bytes: i64,
    /// Without time_based: stop after this many bytes.
    limit_bytes: Option<u64>,
    limit_ios: Option<u64>,
    /// fio `percentage_random` per direction (random modes only): at each new random offset, the
    /// request goes to a random block with this probability, else continues sequentially.
    perc_random: [u64; 2],
    verify: Option<Box<Verify>>,
    /// Set only with `perc_random` below 100 and without time_based; it then replaces
    /// `limit_bytes`.
    passes: Option<Box<Passes>>,
    zones: Option<Box<Zones>>,
    files: Option<Box<JobFiles>>,
    /// fio `random_generator=lfsr`: random offsets in units of this many bytes from a cycle over
    /// the region's blocks, made at the first random offset (from the job's stream).
    lfsr: Option<Box<(u64, Option<lfsr::BlockCycle>)>>,
    /// fio's random map (job files and command lines without `norandommap`), one per file.
    random_map: Option<Box<RandomMaps>>,
    /// fio `flow`: the job's share of the I/O of the jobs with its flow_id.
    flow: Option<Box<FlowShare>>,
    /// fio latency_target, steadystate, rate_min and max_latency; None when it uses none of them.
    steering: Option<Box<Steering>>,
    think_ns: u64,
    random: bool,
    time_based: bool,
    dirs: [Direction; 2],
    depth: u32,
    numjobs: u32,
    offset_increment_bytes: u64,
    rate_iops: Option<f64>,
    poisson: bool,
    /// A pause was asked for; the next completion's issue time is when issuing resumed.
    resuming: bool,
    start_ns: u64,
    ramp_ns: u64,
    runtime_ns: Option<u64>,
    /// None when only thinktime_iotime paces the pauses (fio skips the blocks check then).
    think_blocks: Option<u64>,
    /// fio `thinktime_iotime`: think after issuing for this long.
    think_iotime_ns: Option<u64>,
    /// When the current stretch of issuing began (the job's start, or the end of its last pause).
    issuing_since_ns: u64,
    options: Vec<(String, String)>,
    /// How fio would sample its bandwidth and IOPS (see [`Workload::rate_sampling`]).
    rates: [RateSampling; 2],
    /// Its own `exitall`, `exitall_on_error` and `exit_what`, and its exit rule once its file is
    /// read (see [`FioJob::set_exit`]).
    pub(crate) exitall: bool,
    exit_on_error: bool,
    exit_what: ExitWhat,
    pub(crate) exit: Option<ExitRule>,
    sync: Option<SyncSchedule>,
    /// Its place in its job file or command line (see [`Workload::fio_place`]).
    place: Option<crate::plan::FioPlace>,
    /// Options given that have no effect on the model (see [`Workload::ignored`]).
    pub(crate) ignored: Vec<&'static str>,
}

impl FioJob {
    /// Builds a job from option texts (see [`OptionValues`]), one group of options after another
    /// (the order decides which error is reported first).
    pub(crate) fn from_options(v: &OptionValues, dialect: Dialect) -> Result<FioJob, OptionError> {
        let opts = Reader { v, units: Units::from_options(v, dialect)? };
        let Mix { mode, random, rw_nr, seq_add_bytes, read_pct } = rw_and_mix(&opts)?;
        let sizes = block_sizes::from_options(v, &opts.units)?;
        let region = region(&opts, &sizes, seq_add_bytes)?;
        let Offsets { dirs, zones, files, lfsr, random_map } = offsets(&opts, random, &region, sizes)?;
        let Pace { depth, think_ns, think_blocks, think_iotime_ns, rate_iops, poisson, read_pct } = pacing(&opts, &dirs, read_pct)?;

        let start_ns = opts.time_of("startdelay", 1_000_000_000)?;
        let ramp_ns = opts.time_of("ramp_time", 1_000_000_000)?;
        let runtime = opts.time_of("runtime", 1_000_000_000)?;
        let (perc_random, passes) = passes(&opts, mode, random, read_pct, &region, &random_map)?;
        let Region { offset_bytes, size_bytes, time_based, loops, io_bytes, number_ios, .. } = region;
        let verify = Verify::from_options(&opts, mode, read_pct, random, time_based, io_bytes)?;
        let steering = Steering::from_options(v, &opts.units, depth)?;
        let flow = FlowShare::from_options(v)?;
        if flow.is_some() && rate_iops.is_some() {
            return Err(err("flow", "flow with rate or rate_iops is not modelled: use one or the other"));
        }
        let depth = steering.start_depth(depth);
        let rates = rates::rate_sampling(v, opts.size_of("log_compression", 0)? > 0)?;
        let (exitall, exit_on_error, exit_what, exit) = exits(&opts)?;
        let options = v.0.iter().filter(|(n, _)| lookup(n).is_some_and(|o| matches!(o.effect, Effect::Model | Effect::Report))).map(|(n, s)| (n.to_string(), s.clone())).collect();
        let (numjobs, offset_increment_bytes) = clones(&opts, offset_bytes, size_bytes)?;
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
            passes: passes.map(Box::new),
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
            verify: verify.map(Box::new),
            zones: zones.map(Box::new),
            files: files.map(Box::new),
            steering: steering.steers().then(|| Box::new(steering)),
            flow: flow.map(Box::new),
            options,
            lfsr: lfsr.map(Box::new),
            random_map: random_map.map(Box::new),
            time_based,
            rates,
            exitall,
            exit_on_error,
            exit_what,
            exit,
            sync: sync::schedule(v)?,
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
        let offset = match self.lfsr.as_deref_mut() {
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

/// A job's rw mode and read/write mix.
struct Mix<'a> {
    mode: &'a str,
    random: bool,
    /// rw suffix: requests per random offset (random modes), bytes skipped after each request
    /// (sequential modes).
    rw_nr: u64,
    seq_add_bytes: i64,
    read_pct: f64,
}

/// rw with its `:N` suffix, and rwmixread / rwmixwrite.
fn rw_and_mix<'a>(opts: &Reader<'a>) -> Result<Mix<'a>, OptionError> {
    let (v, units) = (opts.v, &opts.units);
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
        (_, Some(w)) if v.position("rwmixread").is_none_or(|r| w > r) => 100 - opts.int_of("rwmixwrite", 50, 0, 100)?,
        _ => opts.int_of("rwmixread", 50, 0, 100)?,
    };
    let read_pct = match mode {
        "read" | "randread" => 100.0,
        "write" | "randwrite" => 0.0,
        _ => mix_read as f64,
    };
    Ok(Mix { mode, random, rw_nr, seq_add_bytes, read_pct })
}

/// How a job issues its requests.
struct Pace {
    depth: u32,
    think_ns: u64,
    think_blocks: Option<u64>,
    think_iotime_ns: Option<u64>,
    rate_iops: Option<f64>,
    poisson: bool,
    /// The read share, which per-direction rates set.
    read_pct: f64,
}

/// Whether a block engine issues one request at a time (sync) or many (async); an engine that
/// does no block I/O on a disk, or that sanlab does not know, is the error.
pub(super) fn engine_is_sync(engine: &str) -> Result<bool, String> {
    if SYNC_ENGINES.contains(&engine) {
        Ok(true)
    } else if ASYNC_ENGINES.contains(&engine) {
        Ok(false)
    } else if NON_BLOCK_ENGINES.contains(&engine) || engine.starts_with("external") {
        Err(format!("engine `{engine}` does not do block I/O on a disk, and sanlab simulates block I/O: use a block engine such as libaio, io_uring or psync"))
    } else {
        let all: Vec<&str> = SYNC_ENGINES.iter().chain(ASYNC_ENGINES.iter()).copied().collect();
        Err(format!("unknown engine `{engine}`: expected a sync engine ({}) or an async one ({}){}", SYNC_ENGINES.join(", "), ASYNC_ENGINES.join(", "), did_you_mean(engine, all)))
    }
}

/// Pacing: ioengine and iodepth, thinktime (with thinktime_spin, _iotime and _blocks), rate or
/// rate_iops per direction, rate_process.
fn pacing(opts: &Reader, dirs: &[Direction; 2], mut read_pct: f64) -> Result<Pace, OptionError> {
    let (v, units) = (opts.v, &opts.units);
    let engine = v.get("ioengine").map(str::trim).unwrap_or(if opts.scenario() { "libaio" } else { "psync" });
    let sync = engine_is_sync(engine).map_err(|why| err("ioengine", why))?;
    let iodepth = opts.int_of("iodepth", 1, 1, 65_536)? as u32;
    let mut depth = if sync { 1 } else { iodepth };
    let think_ns = opts.time_of("thinktime", 1_000)?;
    // thinktime_spin is the part of the pause fio spends spinning on the CPU (at most all of
    // it, init.c): the pause is thinktime either way.
    opts.time_of("thinktime_spin", 1_000)?;
    let think_iotime_ns = Some(opts.time_of("thinktime_iotime", 1_000_000_000)?).filter(|t| *t > 0);
    // With thinktime_iotime alone, fio skips the blocks check (backend.c `handle_thinktime`).
    let think_blocks = match v.get("thinktime_blocks") {
        None if think_iotime_ns.is_some() => None,
        _ => Some(opts.int_of("thinktime_blocks", 1, 1, i64::from(u32::MAX))? as u64),
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
    Ok(Pace { depth, think_ns, think_blocks, think_iotime_ns, rate_iops, poisson, read_pct })
}

/// exitall, exitall_on_error and exit_what: the job's own exit rule.
fn exits(opts: &Reader) -> Result<(bool, bool, ExitWhat, Option<ExitRule>), OptionError> {
    let v = opts.v;
    let exitall = opts.bool_of("exitall", false)?;
    let exit_on_error = opts.bool_of("exitall_on_error", false)?;
    let exit_what = match v.get("exit_what").map(str::trim) {
        None | Some("group") => ExitWhat::Group,
        Some("stonewall") => ExitWhat::Stonewall,
        Some("all") => ExitWhat::All,
        Some(other) => return Err(err("exit_what", format!("unknown value `{other}`: expected group, stonewall or all{}", did_you_mean(other, ["group", "stonewall", "all"])))),
    };
    // Group 0 and the job's own options until its file places it (`set_exit`).
    let exit = (exitall || exit_on_error).then_some(ExitRule { group: 0, on_end: exitall, on_error: exit_on_error, what: exit_what });
    Ok((exitall, exit_on_error, exit_what, exit))
}

/// numjobs and offset_increment: the job's clones, whose regions lie one after another.
fn clones(opts: &Reader, offset_bytes: u64, size_bytes: u64) -> Result<(u64, u64), OptionError> {
    let numjobs = opts.int_of("numjobs", 1, 1, 4_096)? as u64;
    let offset_increment_bytes = opts.size_of("offset_increment", 0)?;
    // The last clone's region must end within the largest size (no offset wraps around).
    let last_end = offset_increment_bytes.checked_mul(numjobs - 1).and_then(|o| o.checked_add(offset_bytes)).and_then(|o| o.checked_add(size_bytes));
    if last_end.is_none_or(|e| e > SIZE.max()) {
        let option = if numjobs > 1 && offset_increment_bytes > 0 { "offset_increment" } else { "offset" };
        return Err(err(option, format!("the job's region would end beyond {}: offset + (numjobs - 1) x offset_increment + size must stay within it", SIZE.max_text())));
    }
    Ok((numjobs, offset_increment_bytes))
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

    pub(crate) fn set_place(&mut self, place: crate::plan::FioPlace) {
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

    fn completed(&mut self, c: &Completion) -> Steer {
        self.steering.as_mut().map_or(Steer::Keep, |s| s.completed(c))
    }

    fn findings(&self) -> Option<FioFindings> {
        self.steering.as_ref().and_then(|s| s.findings())
    }

}

impl JobSource for FioJob {
    fn instances(&self) -> Vec<Instance> {
        (0..self.numjobs)
            .map(|c| {
                let mut clone = self.clone();
                clone.offset_bytes += u64::from(c) * self.offset_increment_bytes;
                Instance { suffix: (self.numjobs > 1).then(|| c.to_string()), plan: clone.plan(), workload: Box::new(clone), after: vec![] }
            })
            .collect()
    }
}

impl FioJob {
    fn plan(&self) -> JobPlan {
        let pacing = match self.rate_iops {
            None => Pacing::Closed { depth: self.depth },
            Some(rate_iops) => Pacing::Open { depth: self.depth, rate_iops, poisson: self.poisson },
        };
        JobPlan {
            runtime_ns: self.runtime_ns,
            start_ns: self.start_ns,
            measured_from_ns: self.start_ns + self.ramp_ns,
            region_bytes: Some(self.offset_bytes..self.offset_bytes + self.size_bytes),
            ignored: self.ignored.clone(),
            rate_sampling: self.rates,
            exit_rule: self.exit,
            sync_schedule: self.sync,
            state_bytes: self.random_map.as_deref().map_or(0, RandomMaps::bytes),
            fio_place: self.place.clone(),
            ..JobPlan::new(pacing, self.options.clone())
        }
    }
}
