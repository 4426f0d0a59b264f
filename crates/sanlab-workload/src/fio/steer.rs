//! fio jobs that steer by what they see (axboe/fio at f5344384): the search for the deepest queue
//! that meets a latency target (io_u.c `lat_target_check` and the functions beside it), the stop
//! on a steady state (steadystate.c), and the stops on a missed minimum rate (backend.c
//! `check_min_rate`) and on a latency above `max_latency` (io_u.c `lat_fatal`). fio runs the first and last in its I/O loop after completions, as sanlab
//! does; the steady-state check runs in fio's helper thread every check interval, and sanlab
//! takes each interval's sample at the first completion after it ends. Clocks count from the
//! job's measured start (after startdelay and ramp_time), where fio resets its statistics.

use super::values::{err, parse_bool, parse_duration, parse_int, per_direction, OptionError, OptionValues, Units};
use crate::face::{Completion, Steer};
use crate::findings::{FioFindings, JobError, LatencyFound, SteadyFound};
use crate::face::Op;
use sanlab_spec::number::finite;
use sanlab_spec::did_you_mean;

/// fio's error numbers for a job it ends (Linux errno values, as fio's JSON `error` gives them).
const EIO: i32 = 5;
const ETIMEDOUT: i32 = 110;

/// The steering parts a job asked for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Steering {
    latency: Option<LatencySearch>,
    steady: Option<SteadyState>,
    rate_min: Option<RateMin>,
    /// fio `max_latency` per direction (0: none): a later completion ends the job with ETIMEDOUT.
    max_latency_ns: [u64; 2],
    error: Option<JobError>,
    /// When the job's statistics last restarted, on the parts' clock.
    remeasured_at_ns: u64,
}

impl Steering {
    pub(crate) fn from_options(v: &OptionValues, units: &Units, iodepth: u32) -> Result<Steering, OptionError> {
        let mut max_latency_ns = [0; 2];
        if let Some(t) = v.get("max_latency") {
            for (d, s) in per_direction(t).iter().enumerate() {
                if let Some(s) = s {
                    // Bare numbers are microseconds (HOWTO `max_latency`).
                    max_latency_ns[d] = parse_duration(s, 1_000).map_err(|e| err("max_latency", e))?;
                }
            }
        }
        Ok(Steering {
            latency: LatencySearch::from_options(v, iodepth)?,
            steady: SteadyState::from_options(v, units)?,
            rate_min: RateMin::from_options(v, units)?,
            max_latency_ns,
            error: None,
            remeasured_at_ns: 0,
        })
    }

    /// Whether the job asked for any part: else a completion changes nothing.
    pub(crate) fn steers(&self) -> bool {
        self.latency.is_some() || self.steady.is_some() || self.rate_min.is_some() || self.max_latency_ns != [0; 2]
    }

    /// The depth the job starts at: 1 while fio searches (io_u.c `lat_target_init`).
    pub(crate) fn start_depth(&self, iodepth: u32) -> u32 {
        if self.latency.is_some() {
            1
        } else {
            iodepth
        }
    }

    pub(crate) fn completed(&mut self, c: &Completion) -> Steer {
        if self.error.is_some() {
            return Steer::Keep;
        }
        // The parts keep the clock of the job's first measured start; the engine's restarts
        // at a Remeasure.
        let c = &Completion { since_ns: c.since_ns + self.remeasured_at_ns, ..*c };
        let stop = |at_ns: u64, s: &Self| Steer::Stop { since_ns: at_ns - s.remeasured_at_ns };
        let max_ns = self.max_latency_ns[usize::from(c.op == Op::Write)];
        if max_ns > 0 && c.latency_ns > max_ns {
            self.error = Some(JobError { errno: ETIMEDOUT, message: format!("max latency exceeded: {} us above the max_latency of {} us", c.latency_ns / 1_000, max_ns / 1_000) });
            return stop(c.since_ns, self);
        }
        if let Some(e) = self.rate_min.as_mut().and_then(|r| r.completed(c)) {
            self.error = Some(e);
            return stop(c.since_ns, self);
        }
        if let Some(at_ns) = self.steady.as_mut().and_then(|s| s.completed(c)) {
            return stop(at_ns, self);
        }
        match self.latency.as_mut().map(|l| l.completed(c)) {
            Some(Err(e)) => {
                self.error = Some(e);
                stop(c.since_ns, self)
            }
            Some(Ok(Steer::Stop { since_ns })) => stop(since_ns, self),
            Some(Ok(Steer::Remeasure)) => {
                self.remeasured_at_ns = c.since_ns;
                Steer::Remeasure
            }
            Some(Ok(steer)) => steer,
            None => Steer::Keep,
        }
    }

    pub(crate) fn findings(&self) -> Option<FioFindings> {
        let f = FioFindings { error: self.error.clone(), latency_target: self.latency.as_ref().map(LatencySearch::found), steadystate: self.steady.as_ref().map(SteadyState::found) };
        (f != FioFindings::default()).then_some(f)
    }
}

/// fio's latency-target search (io_u.c). It starts at depth 1 and, at the end of each window,
/// doubles the depth while `latency_percentile` of the window's I/Os met the target, then
/// bisects between the last depth that met it (`low`) and the first that did not (`high`).
/// When a step would not change the depth, it runs one more window with fresh statistics and
/// ends the job (unless `latency_run`). At percentile 100, a single late I/O ramps down at once;
/// at depth 1 it ends the job with ETIMEDOUT.
#[derive(Clone, Debug)]
struct LatencySearch {
    target_ns: u64,
    window_us: u64,
    percentile: f64,
    keep_running: bool,
    iodepth: u32,
    depth: u32,
    low: u32,
    high: u32,
    /// Successes in a row at `high - 1` (fio raises `high` after 3).
    stable: u32,
    cycle_start_ns: u64,
    cycle_ios: u64,
    cycle_late: u64,
    final_run: bool,
    /// After a ramp-down, waiting for the requests in flight; the next cycle starts after them.
    /// Our choice: fio completes them inside the ramp-down and may ramp down again for each
    /// late one; sanlab lets them finish uncounted.
    quiescing: bool,
}

impl LatencySearch {
    fn from_options(v: &OptionValues, iodepth: u32) -> Result<Option<LatencySearch>, OptionError> {
        // Bare numbers are microseconds (HOWTO `latency_target`, `latency_window`).
        let Some(target) = v.get("latency_target") else {
            for o in ["latency_window", "latency_percentile", "latency_run"] {
                if v.get(o).is_some() {
                    return Err(err(o, "has no effect without latency_target: add latency_target, e.g. latency_target=10ms"));
                }
            }
            return Ok(None);
        };
        let target_ns = parse_duration(target, 1_000).map_err(|e| err("latency_target", e))?;
        if target_ns == 0 {
            return Err(err("latency_target", "a target of 0 turns the search off in fio: expected a latency above 0, e.g. 10ms"));
        }
        let window_us = v.get("latency_window").map_or(Ok(0), |s| parse_duration(s, 1_000).map_err(|e| err("latency_window", e)))? / 1_000;
        let percentile = match v.get("latency_percentile") {
            None => 100.0,
            Some(s) => {
                let p = finite(s.trim()).map_err(|e| err("latency_percentile", e))?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(err("latency_percentile", format!("{p} is out of range: expected 0..=100 (nearest valid: {})", p.clamp(0.0, 100.0))));
                }
                p
            }
        };
        let keep_running = v.get("latency_run").map_or(Ok(false), |s| parse_bool("latency_run", s))?;
        Ok(Some(LatencySearch {
            target_ns,
            window_us,
            percentile,
            keep_running,
            iodepth,
            depth: 1,
            low: 1,
            high: iodepth,
            stable: 0,
            cycle_start_ns: 0,
            cycle_ios: 0,
            cycle_late: 0,
            final_run: false,
            quiescing: false,
        }))
    }

    fn found(&self) -> LatencyFound {
        LatencyFound { depth: self.depth, target_ns: self.target_ns, window_us: self.window_us, percentile: self.percentile }
    }

    fn new_cycle(&mut self, now_ns: u64) {
        self.cycle_start_ns = now_ns;
        self.cycle_ios = 0;
        self.cycle_late = 0;
    }

    fn completed(&mut self, c: &Completion) -> Result<Steer, JobError> {
        if self.quiescing {
            if c.outstanding == 0 {
                self.quiescing = false;
                self.new_cycle(c.since_ns);
            }
            return Ok(Steer::Keep);
        }
        self.cycle_ios += 1;
        if c.latency_ns > self.target_ns {
            if self.percentile < 100.0 {
                self.cycle_late += 1;
            } else if self.depth == 1 {
                return Err(JobError { errno: ETIMEDOUT, message: format!("max latency exceeded: {} us above the latency_target of {} us at depth 1", c.latency_ns / 1_000, self.target_ns / 1_000) });
            } else {
                return Ok(self.ramp_down(c));
            }
        }
        if (c.since_ns - self.cycle_start_ns) / 1_000 < self.window_us {
            return Ok(Steer::Keep);
        }
        let met = 100.0 * (self.cycle_ios - self.cycle_late) as f64 / self.cycle_ios as f64;
        if met >= self.percentile {
            Ok(self.ramp_up(c))
        } else if self.depth == 1 {
            // fio keeps depth 1 and the cycle going.
            Ok(Steer::Keep)
        } else {
            Ok(self.ramp_down(c))
        }
    }

    fn ramp_down(&mut self, c: &Completion) -> Steer {
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = (self.depth + self.low) / 2;
        self.stable = 0;
        self.quiescing = c.outstanding > 0;
        self.new_cycle(c.since_ns);
        Steer::Depth { depth: self.depth, quiesce: true }
    }

    fn ramp_up(&mut self, c: &Completion) -> Steer {
        let was = self.depth;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        // Doubles until a depth fails, then bisects below the failing one.
        self.depth = if self.high != self.iodepth { (self.depth + self.high) / 2 } else { self.depth * 2 }.min(self.iodepth);
        self.new_cycle(c.since_ns);
        if self.depth != was {
            return Steer::Depth { depth: self.depth, quiesce: false };
        }
        if self.keep_running {
            Steer::Keep
        } else if self.final_run {
            Steer::Stop { since_ns: c.since_ns }
        } else {
            self.final_run = true;
            Steer::Remeasure
        }
    }
}

/// What a steady-state criterion watches.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Measure {
    Iops,
    Bw,
    /// Mean completion latency (fio 3.41's `lat`, `lat_slope`; steadystate.c at f5344384).
    Lat,
}

/// fio `steadystate` over `ss_dur`: every check interval (1 s) a sample of the job's IOPS,
/// bandwidth and mean latency over that interval; once `ss_dur` of samples is in, the job ends
/// when the window's largest deviation from its mean (`iops`, `bw`, `lat`) or the least-squares
/// slope (`iops_slope`, `bw_slope`, `lat_slope`) is below the limit, in percent of the mean when
/// the limit ends in `%`. Samples start one interval after `ss_ramp`.
#[derive(Clone, Debug)]
struct SteadyState {
    measure: Measure,
    slope: bool,
    percent: bool,
    limit: f64,
    duration_s: u64,
    ramp_ns: u64,
    interval_ns: u64,
    next_check_ns: u64,
    ios: u64,
    bytes: u64,
    latency_ns: u128,
    prev: (u64, u64, u128),
    /// (iops, bytes/s, mean latency in ns) per interval, at most `duration / interval` of them,
    /// oldest first.
    window: std::collections::VecDeque<(u64, u64, u64)>,
    attained: bool,
    criterion: f64,
    max_deviation: f64,
    slope_value: f64,
}

/// A latency limit as fio reads it (parse.c `str_to_decimal` with `get_mult_time`): the leading
/// whole number, times 1000 for ms, 10^6 for s, 6 x 10^7 for m, and so on, and 1 for us, for no
/// unit, for a unit fio does not know (`ns`) and after a fraction (`1.5ms` is 1). fio compares
/// that number with deviations in nanoseconds, so `lat:20us` holds at 20 ns; sanlab does too.
fn fio_time_number(text: &str) -> Result<f64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    let number: f64 = text[..text.len() - digits.len() + len].parse().map_err(|_| format!("latency limit `{text}` does not start with a whole number: expected e.g. lat:20us or lat:5%"))?;
    let unit = digits[len..].to_ascii_lowercase();
    let mult = match unit.as_str() {
        u if !u.starts_with(|c: char| c.is_ascii_alphabetic()) => 1.0,
        u if u.starts_with("us") => 1.0,
        u if u.starts_with("ms") => 1e3,
        "s" => 1e6,
        "m" => 6e7,
        "h" => 3.6e9,
        "d" => 8.64e10,
        _ => 1.0,
    };
    Ok(number * mult)
}

impl SteadyState {
    fn from_options(v: &OptionValues, units: &Units) -> Result<Option<SteadyState>, OptionError> {
        // Bare numbers are seconds (HOWTO `steadystate_duration`, `steadystate_ramp_time`).
        let seconds = |o: &'static str| v.get(o).map_or(Ok(0), |s| parse_duration(s, 1_000_000_000).map_err(|e| err(o, e)));
        let duration_ns = seconds("steadystate_duration")?;
        if duration_ns == 0 {
            // fio checks nothing without a duration.
            return Ok(None);
        }
        let interval_ns = match v.get("steadystate_check_interval") {
            None => 1_000_000_000,
            Some(s) => parse_duration(s, 1_000_000_000).map_err(|e| err("steadystate_check_interval", e))?,
        };
        if interval_ns < 1_000_000 || interval_ns % 1_000_000 != 0 {
            return Err(err("steadystate_check_interval", "expected a whole number of milliseconds, at least 1 (nearest valid: 1s)"));
        }
        let intervals = duration_ns / interval_ns;
        let text = v.get("steadystate").unwrap_or("iops_slope:0.01%").trim();
        let (name, limit) = text.split_once(':').ok_or_else(|| err("steadystate", format!("`{text}` has no limit: expected criterion:limit, e.g. iops_slope:0.1%")))?;
        const NAMES: [&str; 6] = ["iops", "iops_slope", "bw", "bw_slope", "lat", "lat_slope"];
        let (measure, slope) = match name.trim() {
            "iops" => (Measure::Iops, false),
            "iops_slope" => (Measure::Iops, true),
            "bw" => (Measure::Bw, false),
            "bw_slope" => (Measure::Bw, true),
            "lat" => (Measure::Lat, false),
            "lat_slope" => (Measure::Lat, true),
            other => return Err(err("steadystate", format!("unknown criterion `{other}`: expected one of {}{}", NAMES.join(", "), did_you_mean(other, NAMES)))),
        };
        let (limit, percent) = match limit.trim().strip_suffix('%') {
            Some(p) => (finite(p.trim()).map_err(|e| err("steadystate", e))?, true),
            // A bandwidth limit reads as a size per second (fio `str_to_decimal` with kb_base).
            None if measure == Measure::Bw => (units.size(limit).map_err(|e| err("steadystate", e))? as f64, false),
            None if measure == Measure::Lat => (fio_time_number(limit.trim()).map_err(|e| err("steadystate", e))?, false),
            None => (finite(limit.trim()).map_err(|e| err("steadystate", e))?, false),
        };
        if limit < 0.0 {
            return Err(err("steadystate", format!("limit {limit} is below 0: expected 0 or more (nearest valid: 0)")));
        }
        if intervals < if slope { 2 } else { 1 } {
            return Err(err("steadystate_duration", format!("{} s holds {intervals} check intervals: a slope needs at least 2, a deviation 1 (nearest valid: {} s)", duration_ns / 1_000_000_000, 2 * interval_ns / 1_000_000_000)));
        }
        Ok(Some(SteadyState {
            measure,
            slope,
            percent,
            limit,
            duration_s: duration_ns / 1_000_000_000,
            ramp_ns: seconds("steadystate_ramp_time")?,
            interval_ns,
            next_check_ns: interval_ns,
            ios: 0,
            bytes: 0,
            latency_ns: 0,
            prev: (0, 0, 0),
            window: Default::default(),
            attained: false,
            criterion: 0.0,
            max_deviation: 0.0,
            slope_value: 0.0,
        }))
    }

    fn intervals(&self) -> usize {
        (self.duration_s * 1_000_000_000 / self.interval_ns) as usize
    }

    /// Takes the samples of every interval ended before this completion; returns when the job
    /// reached its steady state.
    fn completed(&mut self, c: &Completion) -> Option<u64> {
        while self.next_check_ns <= c.since_ns {
            let at = self.next_check_ns;
            self.next_check_ns += self.interval_ns;
            if self.check(at) {
                self.attained = true;
                return Some(at);
            }
        }
        self.ios += 1;
        self.bytes += u64::from(c.size_bytes);
        self.latency_ns += u128::from(c.latency_ns);
        None
    }

    fn check(&mut self, at_ns: u64) -> bool {
        let interval_ms = self.interval_ns / 1_000_000;
        // fio scales the interval's counts by the time since its last check over the interval.
        let per_s = |delta: u64| interval_ms * delta / (interval_ms * interval_ms / 1_000).max(1);
        // The interval's mean latency, truncated to whole ns as fio stores it (0 without I/O).
        let ios = self.ios - self.prev.0;
        let lat = if ios > 0 { ((self.latency_ns - self.prev.2) / u128::from(ios)) as u64 } else { 0 };
        let sample = (per_s(ios), per_s(self.bytes - self.prev.1), lat);
        self.prev = (self.ios, self.bytes, self.latency_ns);
        if at_ns < self.ramp_ns + self.interval_ns && self.ramp_ns > 0 {
            return false;
        }
        let n = self.intervals();
        self.window.push_back(sample);
        if self.window.len() > n {
            self.window.pop_front();
        }
        if self.window.len() < n {
            return false;
        }
        let ys: Vec<f64> = self
            .window
            .iter()
            .map(|&(iops, bw, lat)| match self.measure {
                Measure::Iops => iops,
                Measure::Bw => bw,
                Measure::Lat => lat,
            } as f64)
            .collect();
        let mean = ys.iter().sum::<f64>() / n as f64;
        let value = if self.slope {
            let nf = n as f64;
            let (sum_x, sum_x_sq) = (nf * (nf - 1.0) / 2.0, (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0);
            let sum_xy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
            self.slope_value = (sum_xy - sum_x * mean) / (sum_x_sq - sum_x * sum_x / nf);
            self.slope_value.abs()
        } else {
            self.max_deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.max_deviation
        };
        self.criterion = if self.percent { 100.0 * value / mean } else { value };
        self.criterion < self.limit
    }

    fn found(&self) -> SteadyFound {
        let name = match (self.measure, self.slope) {
            (Measure::Iops, false) => "iops",
            (Measure::Iops, true) => "iops_slope",
            (Measure::Bw, false) => "bw",
            (Measure::Bw, true) => "bw_slope",
            (Measure::Lat, false) => "lat",
            (Measure::Lat, true) => "lat_slope",
        };
        let pct = if self.percent { "%" } else { "" };
        // fio lists a full window; intervals not sampled yet are 0.
        let mut samples: Vec<(u64, u64, u64)> = self.window.iter().copied().collect();
        samples.resize(self.intervals(), (0, 0, 0));
        SteadyFound {
            ss: format!("{name}:{:.6}{pct}", self.limit),
            duration_s: self.duration_s,
            attained: self.attained,
            criterion: self.criterion,
            percent: self.percent,
            max_deviation: self.max_deviation,
            slope: self.slope_value,
            bw_bytes_per_s: samples.iter().map(|s| s.1).collect(),
            iops: samples.iter().map(|s| s.0).collect(),
            lat_ns: (self.measure == Measure::Lat).then(|| samples.iter().map(|s| s.2).collect()),
        }
    }
}

/// fio `rate_min` (bytes/s) or `rate_iops_min`, per direction, over `rate_cycle` ms: after a
/// 2 s settle, each direction that has completed I/O compares what completed over the last
/// cycle with the minimum, and a miss ends the job with EIO.
#[derive(Clone, Debug)]
struct RateMin {
    min_bytes_per_s: [u64; 2],
    min_iops: [u64; 2],
    cycle_ms: u64,
    done: [(u64, u64); 2],
    /// Per direction: the last check's time (ms) and counts (bytes, ios).
    last: [Option<(u64, u64, u64)>; 2],
}

impl RateMin {
    fn from_options(v: &OptionValues, units: &Units) -> Result<Option<RateMin>, OptionError> {
        let per_dir = |o: &'static str, read: &dyn Fn(&str) -> Result<u64, String>| -> Result<[u64; 2], OptionError> {
            let mut out = [0; 2];
            if let Some(t) = v.get(o) {
                for (d, s) in per_direction(t).iter().enumerate() {
                    if let Some(s) = s {
                        out[d] = read(s).map_err(|e| err(o, e))?;
                    }
                }
            }
            Ok(out)
        };
        let min_bytes_per_s = per_dir("rate_min", &|s| units.size(s))?;
        let min_iops = per_dir("rate_iops_min", &|s| s.trim().parse::<u32>().map(u64::from).map_err(|_| format!("`{s}` is not a whole number of IOPS")))?;
        if min_bytes_per_s == [0; 2] && min_iops == [0; 2] {
            return Ok(None);
        }
        if min_bytes_per_s != [0; 2] && min_iops != [0; 2] {
            return Err(err("rate_iops_min", "rate_min and rate_iops_min cannot both be set (fio: mutually exclusive): keep one"));
        }
        // A minimum above the job's own cap can never be met (fio init.c).
        let caps = per_dir("rate", &|s| units.size(s))?;
        let iops_caps = per_dir("rate_iops", &|s| finite(s.trim()).map(|r| r as u64))?;
        for d in 0..2 {
            if caps[d] > 0 && caps[d] < min_bytes_per_s[d] {
                return Err(err("rate_min", format!("{} bytes/s exceeds the rate cap of {} bytes/s: expected at most the cap (nearest valid: {})", min_bytes_per_s[d], caps[d], caps[d])));
            }
            if iops_caps[d] > 0 && iops_caps[d] < min_iops[d] {
                return Err(err("rate_iops_min", format!("{} IOPS exceeds rate_iops {}: expected at most the cap (nearest valid: {})", min_iops[d], iops_caps[d], iops_caps[d])));
            }
        }
        let cycle_ms = v.get("rate_cycle").map_or(Ok(1_000), |s| parse_int("rate_cycle", s, 1, i64::from(u32::MAX)))? as u64;
        Ok(Some(RateMin { min_bytes_per_s, min_iops, cycle_ms, done: [(0, 0); 2], last: [None; 2] }))
    }

    fn completed(&mut self, c: &Completion) -> Option<JobError> {
        let d = usize::from(c.op == Op::Write);
        self.done[d].0 += u64::from(c.size_bytes);
        self.done[d].1 += 1;
        let now_ms = c.since_ns / 1_000_000;
        if now_ms < 2_000 {
            return None;
        }
        for d in 0..2 {
            let (bytes, ios) = self.done[d];
            if bytes == 0 || (self.min_bytes_per_s[d] == 0 && self.min_iops[d] == 0) {
                continue;
            }
            if let Some((at_ms, last_bytes, last_ios)) = self.last[d] {
                let spent_ms = now_ms - at_ms;
                if spent_ms < self.cycle_ms || spent_ms == 0 {
                    continue;
                }
                let dir = ["read", "write"][d];
                if self.min_bytes_per_s[d] > 0 {
                    let got = (bytes - last_bytes) * 1_000 / spent_ms;
                    if got < self.min_bytes_per_s[d] {
                        return Some(JobError { errno: EIO, message: format!("rate_min={}B/s not met for {dir}s, got {got}B/s", self.min_bytes_per_s[d]) });
                    }
                } else {
                    let got = (ios - last_ios) * 1_000 / spent_ms;
                    if got < self.min_iops[d] {
                        return Some(JobError { errno: EIO, message: format!("rate_iops_min={} not met for {dir}s, got {got} IOPS", self.min_iops[d]) });
                    }
                }
            }
            self.last[d] = Some((now_ms, bytes, ios));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::values::Dialect;
    use super::*;

    fn steering(opts: &[(&'static str, &str)]) -> Result<Steering, OptionError> {
        Steering::from_options(&OptionValues::of(opts), &Units { dialect: Dialect::JobFile { device_size_bytes: 1 << 30 }, kb_base: 1024 }, 32)
    }

    #[test]
    fn latency_search_doubles_then_bisects() {
        // A device taking depth x 100 us, one completion every 100 us; target 450 us.
        let mut s = steering(&[("latency_target", "450"), ("latency_window", "10ms")]).unwrap();
        let (mut depth, mut t, mut depths) = (s.start_depth(32), 0, vec![]);
        loop {
            t += 100_000;
            let c = Completion { op: Op::Read, size_bytes: 4096, latency_ns: u64::from(depth) * 100_000, since_ns: t, outstanding: 0 };
            match s.completed(&c) {
                Steer::Depth { depth: d, .. } => {
                    depth = d;
                    depths.push(d);
                }
                Steer::Stop { .. } => break,
                Steer::Remeasure => t = 0,
                Steer::Keep => {}
            }
        }
        assert_eq!(depths, [2, 4, 8, 6, 5, 4]);
        assert_eq!(s.findings().unwrap().latency_target.unwrap().depth, 4);
    }

    #[test]
    fn below_percentile_100_late_ios_count_until_the_window_ends() {
        let mut s = steering(&[("latency_target", "450us"), ("latency_window", "1ms"), ("latency_percentile", "95")]).unwrap();
        let mut at = |t_us: u64, latency_us: u64| s.completed(&Completion { op: Op::Write, size_bytes: 4096, latency_ns: latency_us * 1_000, since_ns: t_us * 1_000, outstanding: 0 });
        assert_eq!(at(1_000, 100), Steer::Depth { depth: 2, quiesce: false });
        // One late I/O in ten: no ramp-down at once; at the window's end 90 % is below 95 %.
        assert_eq!(at(1_100, 900), Steer::Keep);
        for k in 2..10 {
            assert_eq!(at(1_000 + k * 100, 100), Steer::Keep);
        }
        assert_eq!(at(2_000, 100), Steer::Depth { depth: 1, quiesce: true });
    }

    #[test]
    fn max_latency_per_direction_ends_the_job() {
        let mut s = steering(&[("max_latency", ",2ms")]).unwrap();
        let mut at = |op, latency_ns| s.completed(&Completion { op, size_bytes: 4096, latency_ns, since_ns: 5_000, outstanding: 0 });
        assert_eq!(at(Op::Read, 9_000_000), Steer::Keep, "no limit on reads");
        assert_eq!(at(Op::Write, 2_000_000), Steer::Keep);
        assert_eq!(at(Op::Write, 2_000_001), Steer::Stop { since_ns: 5_000 });
        assert_eq!(s.findings().unwrap().error.unwrap().errno, ETIMEDOUT);
    }

    #[test]
    fn a_latency_criterion_watches_each_intervals_mean_latency() {
        // 1,000 reads per second at 100 us, then at 300 us from 2 s on: the deviation over 3 s
        // holds once the step has left the window; fio's JSON lists the intervals' means.
        let mut s = steering(&[("steadystate", "lat:1%"), ("steadystate_duration", "3")]).unwrap();
        let mut stopped = None;
        for k in 1..=8_000u64 {
            let latency_ns = if k < 2_000 { 100_000 } else { 300_000 };
            let c = Completion { op: Op::Read, size_bytes: 4096, latency_ns, since_ns: k * 1_000_000, outstanding: 0 };
            if let Steer::Stop { since_ns } = s.completed(&c) {
                stopped = Some(since_ns);
                break;
            }
        }
        assert_eq!(stopped, Some(5_000_000_000));
        let found = s.findings().unwrap().steadystate.unwrap();
        assert_eq!((found.ss.as_str(), found.attained), ("lat:1.000000%", true));
        assert_eq!(found.lat_ns, Some(vec![300_000; 3]));
        // A slope needs two intervals; an absolute limit is fio's time in microseconds, compared
        // with nanoseconds as fio compares it.
        let slope = steering(&[("steadystate", "lat_slope:20us"), ("steadystate_duration", "2")]).unwrap();
        assert_eq!(slope.steady.as_ref().map(|s| (s.limit, s.slope, s.percent)), Some((20.0, true, false)));
        let limits: Vec<f64> = ["20", "2ms", "1s", "500ns", "1.5ms"].iter().map(|t| fio_time_number(t).unwrap()).collect();
        assert_eq!(limits, [20.0, 2000.0, 1e6, 500.0, 1.0]);
        assert!(fio_time_number("ms").unwrap_err().contains("does not start with a whole number"));
    }

    #[test]
    fn bad_steering_options() {
        let e = |opts| steering(opts).err().unwrap();
        assert_eq!(e(&[("latency_window", "1s")]).option, "latency_window");
        assert!(e(&[("latency_target", "1ms"), ("latency_percentile", "120")]).message.contains("expected 0..=100 (nearest valid: 100)"));
        assert!(e(&[("steadystate", "iosp:1%"), ("steadystate_duration", "10")]).message.contains("did you mean `iops`"));
        assert!(e(&[("steadystate", "iops_slope:1%"), ("steadystate_duration", "1")]).message.contains("a slope needs at least 2"));
        assert_eq!(e(&[("rate_min", "1m"), ("rate_iops_min", "10")]).option, "rate_iops_min");
        assert!(e(&[("rate_iops", "100"), ("rate_iops_min", "200")]).message.contains("nearest valid: 100"));
        // Without a duration, steadystate does nothing (as in fio).
        assert!(steering(&[("steadystate", "iops:1%")]).unwrap().findings().is_none());
    }
}
