//! What a run will cost, estimated before it runs: simulated I/Os, simulator events, engine time
//! and peak memory, and whether this machine has that memory.
//!
//! I/Os and events are measured, not derived from the pacing: a closed loop's rate depends on
//! every queue on the path, which only the simulation knows. Each variant is built as for the run
//! and simulated as a pilot for at most [`PILOT_WALL`] of wall time: a short run, or a run of
//! short variants, is simulated whole and its figures are exact. Otherwise the pilot stops where
//! it got to, and the rest of the run is extrapolated at the rate of the pilot's latter half (after
//! the start-up: empty queues, cold caches, flow control not settled), per second of job time
//! (from each job's start and runtime, so a job that starts late or stops early counts for the time
//! it issues), with the pilot's events per I/O. What the pilot did not reach makes the estimate
//! off: load that changes later (a cache filling, flow control settling, a fault), a job that ends
//! before its runtime (a trace's end, fio `size`). Accuracy on the studies: docs/robustness.md.
//!
//! Pilots run on every core, variants in order. The variants share [`PILOTS_EVENTS`]: each pilot
//! is sized to its share by a first pilot of two samples, so many variants get short pilots, each
//! estimate off by more (a few per cent for a vdbench file's 640 runs, docs/models/vdbench.md),
//! their total by little.

use crate::{Overrides, Scenario, ScenarioError};
use sanlab_des::RunControl;
use sanlab_model::fault::{edges_within, Action, EDGE_ENGINE_BYTES, EDGE_RESULT_BYTES};
use sanlab_model::report::PilotFigures;
use sanlab_model::topology::{human_bytes, memory, series_bytes, FaultConfig, Topology};
use sanlab_model::World;
use serde::Serialize;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Wall time a pilot may take: the engine stops within 65,536 events after that.
const PILOT_WALL: Duration = Duration::from_secs(1);
/// Simulator events the pilots of one estimate share: a pilot runs to its share, sized from a
/// first pilot of [`SIZING_SAMPLES`] samples, or to [`PILOT_WALL`], whichever comes first. A few
/// variants get more events than a pilot runs in its wall time; hundreds (a vdbench parameter
/// file's runs) get fewer each, so validating them takes seconds, not minutes, and their
/// estimates do not depend on the machine's load.
const PILOTS_EVENTS: u64 = 40_000_000;
/// The sizing pilot's samples: the events per simulated second it measures (start-up included)
/// only size the pilot.
const SIZING_SAMPLES: u64 = 2;
/// Samples of a whole pilot: it samples at the run's duration over this (at least every
/// [`PILOT_SAMPLE_MIN_NS`]), so its series stay small.
const PILOT_SAMPLES: u64 = 4096;
/// Fine enough that a pilot of 10,000 VMs, which reaches 2–5 simulated ms in its second, has a
/// latter half of several samples to measure its rate on, past the start-up.
const PILOT_SAMPLE_MIN_NS: u64 = 250_000;
/// The pilot's time series at most: 64 MiB. A run of many entities has fewer samples, and its
/// pilot ends at the last of them.
const PILOT_SERIES_BYTES: u64 = 64 << 20;
/// For tests only: the machine's memory in bytes (total and available) instead of /proc/meminfo.
pub const MEMORY_ENV: &str = "SANLAB_TEST_MEMORY_BYTES";

/// One variant's estimate. `ios`, `events` and `engine_s` are None without a pilot (the engine's
/// state would not fit in the memory available: then `series` is its upper bound), or when no
/// job issued in the pilot but some will later in the run (it stopped at its wall-time limit).
#[derive(Serialize, Clone, Debug)]
pub struct VariantCost {
    pub name: String,
    pub sim_time_s: f64,
    pub ios: Option<u64>,
    pub events: Option<u64>,
    pub engine_s: Option<f64>,
    pub samples: u64,
    pub series: u64,
    /// Entities with statistics, jobs included.
    pub entities: u64,
    pub outstanding: u64,
    /// Independent parts of its topology (groups that share nothing: `sanlab_model::parts`),
    /// which a run puts on cores of their own.
    pub parts: usize,
    /// Edges (starts and ends) of the `[[event]]`s within the run: their events, the engine's
    /// memory and the results' are counted below.
    pub fault_edges: u64,
    /// The engine's state while this variant runs.
    pub engine_bytes: u64,
    /// What the run keeps of this variant until it writes the results.
    pub results_bytes: u64,
    pub pilot_sim_s: f64,
    pub pilot_wall_s: f64,
    pub pilot_ios: u64,
    pub pilot_events: u64,
}

/// The memory this process may use: the machine's (/proc/meminfo, or [`MEMORY_ENV`] in tests),
/// within its cgroup's limit and its address-space limit when they are lower.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct MachineMemory {
    pub total_bytes: u64,
    pub available_bytes: u64,
    /// What bounds the figures when it is not the machine: the cgroup's `memory.max` (a container,
    /// a systemd slice) or `RLIMIT_AS` (`ulimit -v`), as `sanlab validate` names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<&'static str>,
}

impl MachineMemory {
    /// These figures within a limit of `limit_bytes` of which `used_bytes` are in use, when that
    /// is lower; `what` names the limit.
    fn within(self, limit_bytes: u64, used_bytes: u64, what: &'static str) -> Self {
        let left = limit_bytes.saturating_sub(used_bytes);
        if left >= self.available_bytes && limit_bytes >= self.total_bytes {
            return self;
        }
        Self {
            total_bytes: self.total_bytes.min(limit_bytes),
            available_bytes: self.available_bytes.min(left),
            limited_by: Some(what),
        }
    }
}

/// The estimate for the selected variants, run one after the other by one process.
#[derive(Serialize, Clone, Debug)]
pub struct RunCost {
    pub variants: Vec<VariantCost>,
    /// Each variant's share of [`PILOTS_EVENTS`]: its pilot stops there, or at [`PILOT_WALL`].
    pub pilot_events: u64,
    /// Pilots run at once, each on a thread.
    pub pilot_threads: usize,
    pub ios: Option<u64>,
    pub events: Option<u64>,
    pub engine_s: Option<f64>,
    pub peak_memory_bytes: u64,
    /// None where the machine's memory cannot be read (not Linux).
    pub machine: Option<MachineMemory>,
    /// Set when the peak is above the machine's memory, total or available now.
    pub warning: Option<String>,
}

/// Job time within `[0, end_ns)`, summed over the jobs' windows.
fn active_ns(windows: &[Range<u64>], end_ns: u64) -> u128 {
    windows.iter().map(|w| u128::from(w.end.min(end_ns).saturating_sub(w.start))).sum()
}

/// Edges of the faults within `[0, end_ns)`, and the engine events they make: each edge one, and
/// one per link for the notice the fabric sends the host (a link down with notice, a
/// controller's or array's ports). A flapping path's edges go on whatever the I/Os do, so they
/// are counted, not extrapolated from the pilot's events per I/O.
struct EdgeTimes {
    at_ns: u64,
    until_ns: Option<u64>,
    every_ns: Option<u64>,
    events_per_edge: u64,
}

fn edge_times(faults: &[FaultConfig]) -> Vec<EdgeTimes> {
    faults
        .iter()
        .map(|f| {
            let notice = matches!(f.fault.action, Action::Down { notice: true } | Action::ControllerDown { .. } | Action::ArrayDown);
            EdgeTimes { at_ns: f.fault.at_ns, until_ns: f.fault.until_ns, every_ns: f.fault.every_ns, events_per_edge: 1 + if notice { f.links.len() as u64 } else { 0 } }
        })
        .collect()
}

fn fault_edges(faults: &[EdgeTimes], end_ns: u64) -> (u64, u64) {
    faults.iter().fold((0, 0), |(edges, events), f| {
        let n = edges_within(f.at_ns, f.until_ns, f.every_ns, end_ns);
        (edges.saturating_add(n), events.saturating_add(n.saturating_mul(f.events_per_edge)))
    })
}

/// The VMs' I/Os per nanosecond of job time over the latter half of the pilot, from their IOPS
/// series (one value per sample interval); over the whole pilot when that half holds fewer than
/// two samples. None when no job issued in that time.
fn late_rate(pilot: &PilotFigures, windows: &[Range<u64>], reached_ns: u64) -> Option<f64> {
    // (start, I/Os) of each sample interval, summed over the VMs.
    let mut intervals: Vec<(u64, f64)> = vec![];
    let iops = pilot.timeseries.by_entity("iops");
    let times_ns = pilot.timeseries.times_ns();
    for vm in &pilot.vms {
        let points = iops.get(format!("vm/{vm}").as_str()).copied().unwrap_or_default();
        let mut from_ns = 0;
        for (k, (&to_ns, &value)) in times_ns.iter().zip(points).enumerate() {
            let ios = f64::from(value) * (to_ns - from_ns) as f64 / 1e9;
            match intervals.get_mut(k) {
                Some(i) => i.1 += ios,
                None => intervals.push((from_ns, ios)),
            }
            from_ns = to_ns;
        }
    }
    let late: Vec<_> = intervals.iter().filter(|i| i.0 >= reached_ns / 2).collect();
    let (from_ns, ios) = if late.len() >= 2 { (late[0].0, late.iter().map(|i| i.1).sum()) } else { (0, pilot.ios as f64) };
    let job_ns = active_ns(windows, reached_ns) - active_ns(windows, from_ns);
    (job_ns > 0).then(|| ios / job_ns as f64)
}

impl Scenario {
    /// Checks every selected variant, as [`Scenario::validate`] does, and estimates what running
    /// them costs.
    pub fn cost(&self, requested: &[String], o: &Overrides) -> Result<RunCost, ScenarioError> {
        let machine = machine_memory();
        let selected = self.select(requested)?;
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(selected.len()).max(1);
        let pilot_events = PILOTS_EVENTS / selected.len().max(1) as u64;
        let variants = self.variant_costs(&selected, o, machine, threads, pilot_events)?;
        self.check_as_written()?;
        let sum = |f: fn(&VariantCost) -> Option<u64>| variants.iter().map(f).sum::<Option<u64>>();
        let engine_max = variants.iter().map(|v| v.engine_bytes).max().unwrap_or(0);
        let results: u64 = variants.iter().map(|v| v.results_bytes).sum();
        let peak_memory_bytes = memory::peak_bytes(engine_max, results);
        let warning = machine.and_then(|m| memory_warning(peak_memory_bytes, results, engine_max, m));
        Ok(RunCost {
            pilot_events,
            pilot_threads: threads,
            ios: sum(|v| v.ios),
            events: sum(|v| v.events),
            engine_s: variants.iter().map(|v| v.engine_s).sum(),
            peak_memory_bytes,
            machine,
            warning,
            variants,
        })
    }

    /// Each variant's estimate, in order, its pilot run on one of `threads` threads; the error of
    /// the first variant that has one.
    fn variant_costs(&self, selected: &[Option<&crate::Variant>], o: &Overrides, machine: Option<MachineMemory>, threads: usize, pilot_events: u64) -> Result<Vec<VariantCost>, ScenarioError> {
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let done: Mutex<Vec<Option<Result<VariantCost, ScenarioError>>>> = Mutex::new(selected.iter().map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    // Variants are taken in order: once one fails, those before it are all taken.
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(v) = selected.get(i) else { break };
                        let cost = self.variant_cost(*v, o, machine, threads, pilot_events);
                        failed.fetch_or(cost.is_err(), Ordering::Relaxed);
                        done.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(cost);
                    }
                });
            }
        });
        done.into_inner().unwrap_or_else(PoisonError::into_inner).into_iter().map_while(|c| c).collect()
    }

    /// The variant's world for a pilot of `duration_ns`, sampled every `interval_ns`, without
    /// warm-up (the pilot measures every I/O).
    fn pilot_world(&self, table: &toml::Table, v: Option<&crate::Variant>, duration_ns: u64, interval_ns: u64) -> Result<World, ScenarioError> {
        // With SIOC's automatic threshold measured, as the run does: the pilot runs what the run will.
        let (mut topology, _) = self.build_topology(table, v, true)?;
        (topology.run.warmup_ns, topology.run.sample_interval_ns, topology.run.duration_ns) = (0, interval_ns, duration_ns);
        self.world(topology, v)
    }

    fn variant_cost(&self, v: Option<&crate::Variant>, o: &Overrides, machine: Option<MachineMemory>, threads: usize, pilot_events: u64) -> Result<VariantCost, ScenarioError> {
        let table = self.resolve(v, o)?;
        let (topology, _) = self.build_topology(&table, v, true)?;
        let bound = MemoryBound::of(&topology);
        let cost = topology.cost();
        let duration_ns = topology.run.duration_ns;
        let windows = topology.job_windows_ns();
        let entities = cost.entities + topology.jobs.len() as u64;
        let faults = edge_times(&topology.faults);
        let (edges, edge_events) = fault_edges(&faults, duration_ns);
        let edge_bytes = edges.saturating_mul(EDGE_ENGINE_BYTES);
        let estimate = VariantCost {
            name: v.map_or("base".to_string(), |v| v.name.clone()),
            sim_time_s: duration_ns as f64 / 1e9,
            ios: None,
            events: None,
            engine_s: None,
            samples: cost.samples,
            // At most, until the pilot says.
            series: cost.max_series,
            entities,
            outstanding: cost.outstanding,
            parts: sanlab_model::parts::parts(&topology, usize::MAX).len(),
            fault_edges: edges,
            engine_bytes: bound.engine_bytes,
            results_bytes: bound.results_bytes,
            pilot_sim_s: 0.0,
            pilot_wall_s: 0.0,
            pilot_ios: 0,
            pilot_events: 0,
        };
        let edge_results = edges.saturating_mul(EDGE_RESULT_BYTES);
        // The pilot holds the run's requests and histograms: not when they would not fit, beside
        // the pilots of the other threads.
        if machine.is_some_and(|m| memory::peak_bytes(estimate.engine_bytes.saturating_mul(threads as u64), 0) > m.available_bytes) {
            return Ok(estimate);
        }
        let pilot_samples = (PILOT_SERIES_BYTES / series_bytes(1, cost.max_series)).clamp(1, PILOT_SAMPLES);
        let interval_ns = (duration_ns / PILOT_SAMPLES).max(PILOT_SAMPLE_MIN_NS);
        let longest_ns = duration_ns.min(interval_ns.saturating_mul(pilot_samples));
        drop(topology);
        let sizing_ns = longest_ns.min(interval_ns * SIZING_SAMPLES);
        let (mut world, mut pilot_wall_s) = run_pilot(self.pilot_world(&table, v, sizing_ns, interval_ns)?);
        // Its events per simulated ns size the pilot; one that already took its wall time stays.
        let events_per_ns = world.events() as f64 / world.now().max(1) as f64;
        // Whole sample intervals: the rate of a last, partial one would count the I/Os of part
        // of an interval over all of it.
        let pilot_ns = ((pilot_events as f64 / events_per_ns.max(f64::MIN_POSITIVE)) as u64).div_ceil(interval_ns).saturating_mul(interval_ns).clamp(sizing_ns, longest_ns);
        if pilot_ns > world.now() && pilot_wall_s < PILOT_WALL.as_secs_f64() {
            (world, pilot_wall_s) = run_pilot(self.pilot_world(&table, v, pilot_ns, interval_ns)?);
        }
        let reached_ns = world.now();
        let report = world.pilot_figures();
        let series = report.timeseries.series_count() as u64;
        let pilot_samples = report.timeseries.samples() as u64;

        let rest_ns = active_ns(&windows, duration_ns) - active_ns(&windows, reached_ns);
        // Without job time left the pilot was the run: nothing to extrapolate.
        let rate = if rest_ns == 0 { Some(0.0) } else { late_rate(&report, &windows, reached_ns) };
        let ios = rate.map(|r| report.ios.saturating_add((r * rest_ns as f64).round() as u64));
        // Sample events follow the run's interval, and fault edges the events' times: neither is
        // extrapolated per I/O.
        let (_, pilot_edge_events) = fault_edges(&faults, reached_ns);
        let pilot_io_events = report.events.saturating_sub(pilot_samples).saturating_sub(pilot_edge_events);
        let events_per_io = if report.ios == 0 { 0.0 } else { pilot_io_events as f64 / report.ios as f64 };
        let events = ios.map(|n| pilot_io_events.saturating_add(((n - report.ios) as f64 * events_per_io).round() as u64).saturating_add(cost.samples).saturating_add(edge_events));
        Ok(VariantCost {
            ios,
            events,
            engine_s: events.filter(|_| report.events > 0).map(|e| pilot_wall_s * e as f64 / report.events as f64),
            series,
            engine_bytes: memory::engine_bytes(entities, cost.outstanding, series_bytes(cost.samples, series), cost.workload_bytes).saturating_add(edge_bytes),
            results_bytes: memory::results_bytes(cost.samples.saturating_mul(series)).saturating_add(edge_results),
            pilot_sim_s: reached_ns as f64 / 1e9,
            pilot_wall_s,
            pilot_ios: report.ios,
            pilot_events: report.events,
            ..estimate
        })
    }
}

/// Runs a pilot for at most [`PILOT_WALL`]: the world where it stopped, and the wall time it took.
fn run_pilot(mut world: World) -> (World, f64) {
    let control = RunControl::default();
    let (finished, stop) = channel::<()>();
    let start = Instant::now();
    let control = &control;
    std::thread::scope(|s| {
        s.spawn(move || {
            if stop.recv_timeout(PILOT_WALL) == Err(RecvTimeoutError::Timeout) {
                control.cancel();
            }
        });
        world.run(Some(control));
        drop(finished);
    });
    (world, start.elapsed().as_secs_f64())
}

/// What a variant holds in memory at most before its pilot says how many series it records
/// (every entity's): the engine's state while it runs, and its results, which the run keeps until
/// it writes them. `validate` starts from it; `run` decides with it how many variants run at once.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemoryBound {
    pub engine_bytes: u64,
    pub results_bytes: u64,
}

impl MemoryBound {
    pub fn of(topology: &Topology) -> Self {
        let cost = topology.cost();
        let entities = cost.entities + topology.jobs.len() as u64;
        let (edges, _) = fault_edges(&edge_times(&topology.faults), topology.run.duration_ns);
        Self {
            engine_bytes: memory::engine_bytes(entities, cost.outstanding, cost.series_bytes, cost.workload_bytes).saturating_add(edges.saturating_mul(EDGE_ENGINE_BYTES)),
            results_bytes: memory::results_bytes(cost.samples.saturating_mul(cost.max_series)).saturating_add(edges.saturating_mul(EDGE_RESULT_BYTES)),
        }
    }

    pub fn total(self) -> u64 {
        self.engine_bytes.saturating_add(self.results_bytes)
    }
}

/// The machine's memory: [`MEMORY_ENV`] when set (tests), else Linux's /proc/meminfo; None
/// elsewhere.
pub fn machine_memory() -> Option<MachineMemory> {
    if let Some(bytes) = std::env::var(MEMORY_ENV).ok().and_then(|v| v.trim().parse().ok()) {
        return Some(MachineMemory { total_bytes: bytes, available_bytes: bytes, limited_by: None });
    }
    let mut memory = parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)?;
    if let Some((limit, used)) = cgroup_memory() {
        memory = memory.within(limit, used, "the cgroup's memory.max");
    }
    let read = |path| std::fs::read_to_string(path).ok();
    if let (Some(limits), Some(status)) = (read("/proc/self/limits"), read("/proc/self/status")) {
        if let (Some(limit), Some(used)) = (address_space_limit(&limits), vm_size(&status)) {
            memory = memory.within(limit, used, "RLIMIT_AS, ulimit -v");
        }
    }
    Some(memory)
}

/// This process's cgroup memory limit and use, if it has a limit: cgroup v2's `memory.max` and
/// `memory.current`, or v1's `memory.limit_in_bytes` and `memory.usage_in_bytes` (a hybrid
/// system has both hierarchies; the first with a limit is taken).
fn cgroup_memory() -> Option<(u64, u64)> {
    let read = |path: String| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?.trim_end_matches('/'));
        let (limit, used) = if controllers.is_empty() {
            (read(format!("/sys/fs/cgroup{path}/memory.max"))?, read(format!("/sys/fs/cgroup{path}/memory.current"))?)
        } else if controllers.split(',').any(|c| c == "memory") {
            let folder = format!("/sys/fs/cgroup/memory{path}");
            (read(format!("{folder}/memory.limit_in_bytes"))?, read(format!("{folder}/memory.usage_in_bytes"))?)
        } else {
            return None;
        };
        // v2 writes `max` for no limit (not a number); v1 a page-rounded 2^63.
        (limit < 1 << 62).then_some((limit, used))
    })
}

/// The soft `Max address space` of /proc/self/limits, in bytes; None when unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|line| line.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

/// `VmSize` of /proc/self/status: the address space this process holds, in bytes.
fn vm_size(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// MemTotal and MemAvailable (kernel 3.14 and later) of /proc/meminfo's text, in bytes.
fn parse_meminfo(text: &str) -> Option<MachineMemory> {
    let field = |name: &str| {
        let line = text.lines().find(|l| l.split(':').next() == Some(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    };
    Some(MachineMemory { total_bytes: field("MemTotal")?, available_bytes: field("MemAvailable")?, limited_by: None })
}

/// A warning when `peak` is above the machine's memory, with what to change.
fn memory_warning(peak: u64, results: u64, engine: u64, m: MachineMemory) -> Option<String> {
    let whose = m.limited_by.map_or_else(|| "this machine has".to_string(), |limit| format!("this process may use under {limit}"));
    let (than, what) = if peak > m.total_bytes {
        (format!("more than {whose}"), human_bytes(m.total_bytes))
    } else if peak > m.available_bytes {
        (format!("more than {whose} available now"), format!("{} of {}", human_bytes(m.available_bytes), human_bytes(m.total_bytes)))
    } else {
        return None;
    };
    let fix = if results >= engine && results >= memory::PROCESS_BYTES {
        "most of it is time series: raise run.sample_interval or shorten run.duration, or run fewer variants at once (--variant)"
    } else if engine >= memory::PROCESS_BYTES {
        "most of it is the engine's state: lower the requests outstanding (iodepth x numjobs) or the number of paths and VMs"
    } else {
        "most of it is sanlab itself (Python and its libraries): free some memory or use a larger machine"
    };
    Some(format!("the run needs about {} of memory at its peak, {than} ({what}): {fix}", human_bytes(peak)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_time_counts_each_window_up_to_the_end() {
        let windows = [0..u64::MAX, 5..8, 20..30];
        assert_eq!(active_ns(&windows, 10), 10 + 3);
        assert_eq!(active_ns(&windows, 25), 25 + 3 + 5);
        assert_eq!(active_ns(&[], 10), 0);
    }

    #[test]
    fn meminfo_gives_total_and_available_in_bytes() {
        let m = parse_meminfo("MemTotal:       24684092 kB\nMemFree:  100 kB\nMemAvailable:   24007256 kB\n").unwrap();
        assert_eq!(m, MachineMemory { total_bytes: 24_684_092 * 1024, available_bytes: 24_007_256 * 1024, limited_by: None });
        assert_eq!(parse_meminfo("MemTotal: 10 kB\n"), None, "no MemAvailable (a kernel before 3.14)");
        assert_eq!(parse_meminfo("MemTotal: x kB\nMemAvailable: 1 kB\n"), None);
    }

    #[test]
    fn a_cgroup_or_address_space_limit_bounds_the_machines_memory() {
        let machine = MachineMemory { total_bytes: 24 << 30, available_bytes: 20 << 30, limited_by: None };
        let container = machine.within(2 << 30, 1 << 30, "the cgroup's memory.max");
        assert_eq!(container, MachineMemory { total_bytes: 2 << 30, available_bytes: 1 << 30, limited_by: Some("the cgroup's memory.max") });
        assert_eq!(machine.within(64 << 30, 1 << 30, "x"), machine, "a limit above the machine's changes nothing");
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \nMax address space         4294967296           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), Some(4 << 30));
        assert_eq!(address_space_limit("Max address space         unlimited            unlimited            bytes\n"), None);
        assert_eq!(vm_size("Name:\tsanlab\nVmSize:\t  204800 kB\n"), Some(200 << 20));
    }

    #[test]
    fn warns_above_the_total_and_above_what_is_available() {
        let m = MachineMemory { total_bytes: 16_000_000_000, available_bytes: 4_000_000_000, limited_by: None };
        assert_eq!(memory_warning(3_000_000_000, 0, 0, m), None);
        let now = memory_warning(5_000_000_000, 4_000_000_000, 0, m).unwrap();
        assert!(now.contains("5.0 GB") && now.contains("available now (4.0 GB of 16.0 GB)") && now.contains("sample_interval"), "{now}");
        let never = memory_warning(20_000_000_000, 0, 19_000_000_000, m).unwrap();
        assert!(never.contains("more than this machine has (16.0 GB)") && never.contains("iodepth"), "{never}");
        let small = MachineMemory { total_bytes: 100_000_000, available_bytes: 100_000_000, limited_by: None };
        assert!(memory_warning(memory::PROCESS_BYTES, 0, 0, small).unwrap().contains("sanlab itself"));
        let container = MachineMemory { limited_by: Some("the cgroup's memory.max"), ..m };
        let said = memory_warning(20_000_000_000, 0, 19_000_000_000, container).unwrap();
        assert!(said.contains("more than this process may use under the cgroup's memory.max (16.0 GB)"), "{said}");
    }
}
