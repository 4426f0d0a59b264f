//! What a run will cost, estimated before it runs: simulated I/Os, simulator events, engine time
//! and peak memory, and whether this machine has that memory.
//!
//! I/Os and events are measured, not derived from the pacing: a closed loop's rate depends on
//! every queue on the path, which only the simulation knows. Each variant is built as for the run
//! and simulated for a pilot: its first second after the first job starts (less when the run is
//! shorter, or when the pilot takes more than [`PILOT_WALL`]). The pilot's I/Os and events are
//! scaled by job time (the run's job-seconds over the pilot's, from each job's start and runtime),
//! so a job that starts late or stops early counts for the time it issues. What the pilot cannot
//! see makes the estimate off: load that changes later (flow control settling, a fault), a job
//! that ends before its runtime (a trace's end, fio `size`). Accuracy on the studies:
//! docs/robustness.md.

use crate::{Overrides, Scenario, ScenarioError};
use sanlab_des::RunControl;
use sanlab_model::topology::{human_bytes, memory};
use serde::Serialize;
use std::ops::Range;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Simulated time of the pilot, from the first job's start.
const PILOT_NS: u64 = 1_000_000_000;
/// The pilot's sample interval at most: how often it checks its wall time.
const PILOT_SAMPLE_NS: u64 = 10_000_000;
/// Wall time a pilot may take; a slower one stops and is scaled from the time it reached.
const PILOT_WALL: Duration = Duration::from_secs(2);
/// For tests only: the machine's memory in bytes (total and available) instead of /proc/meminfo.
pub const MEMORY_ENV: &str = "SANLAB_TEST_MEMORY_BYTES";
/// Bytes of a time-series sample: one `f32` per series and the shared `u64` time.
const SERIES_SAMPLE_BYTES: u64 = 4;
const TIME_SAMPLE_BYTES: u64 = 8;

/// One variant's estimate. `ios`, `events` and `engine_s` are None when the pilot reached no
/// job's start (it stopped at its wall-time limit before).
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
    /// The engine's state while this variant runs.
    pub engine_bytes: u64,
    /// What the run keeps of this variant until it writes the results.
    pub results_bytes: u64,
    pub pilot_sim_s: f64,
    pub pilot_wall_s: f64,
    pub pilot_ios: u64,
    pub pilot_events: u64,
}

/// The machine's memory, from /proc/meminfo (or [`MEMORY_ENV`] in tests).
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct MachineMemory {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

/// The estimate for the selected variants, run one after the other by one process.
#[derive(Serialize, Clone, Debug)]
pub struct RunCost {
    pub variants: Vec<VariantCost>,
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

/// `pilot` scaled by `factor`, rounded.
fn scaled(pilot: u64, factor: f64) -> u64 {
    (pilot as f64 * factor).round() as u64
}

impl Scenario {
    /// Checks every selected variant, as [`Scenario::validate`] does, and estimates what running
    /// them costs.
    pub fn cost(&self, requested: &[String], o: &Overrides) -> Result<RunCost, ScenarioError> {
        let variants = self.select(requested)?.into_iter().map(|v| self.variant_cost(v, o)).collect::<Result<Vec<_>, _>>()?;
        let sum = |f: fn(&VariantCost) -> Option<u64>| variants.iter().map(f).sum::<Option<u64>>();
        let engine_max = variants.iter().map(|v| v.engine_bytes).max().unwrap_or(0);
        let results: u64 = variants.iter().map(|v| v.results_bytes).sum();
        let peak_memory_bytes = memory::peak_bytes(engine_max, results);
        let machine = machine_memory();
        let warning = machine.and_then(|m| memory_warning(peak_memory_bytes, results, engine_max, m));
        Ok(RunCost {
            ios: sum(|v| v.ios),
            events: sum(|v| v.events),
            engine_s: variants.iter().map(|v| v.engine_s).sum(),
            peak_memory_bytes,
            machine,
            warning,
            variants,
        })
    }

    fn variant_cost(&self, v: Option<&super::Variant>, o: &Overrides) -> Result<VariantCost, ScenarioError> {
        let table = self.resolve(v, o)?;
        let (mut topology, _) = self.build_topology(&table, v, false)?;
        let cost = topology.cost();
        let run = &topology.run;
        let duration_ns = run.duration_ns;
        let windows = topology.job_windows_ns();
        let entities = cost.entities + topology.jobs.len() as u64;
        topology.run.duration_ns = windows.iter().map(|w| w.start).min().unwrap_or(0).saturating_add(PILOT_NS).min(duration_ns);
        topology.run.warmup_ns = 0;
        topology.run.sample_interval_ns = topology.run.sample_interval_ns.min(PILOT_SAMPLE_NS);
        let mut world = self.world(topology, v)?;

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
        let pilot_wall_s = start.elapsed().as_secs_f64();
        let reached_ns = world.now();
        let report = world.report();
        let series = report.timeseries.series_count() as u64;
        let pilot_samples = report.timeseries.samples() as u64;

        let (run_active, pilot_active) = (active_ns(&windows, duration_ns), active_ns(&windows, reached_ns));
        let factor = match (run_active, pilot_active) {
            (0, _) => Some(0.0),
            (_, 0) => None,
            (run, pilot) => Some(run as f64 / pilot as f64),
        };
        // Sample events follow the run's interval, not the pilot's.
        let events = factor.map(|f| scaled(report.events.saturating_sub(pilot_samples), f).saturating_add(cost.samples));
        let engine_s = events.filter(|_| report.events > 0).map(|e| pilot_wall_s * e as f64 / report.events as f64);
        let series_bytes = cost.samples.saturating_mul(series.saturating_mul(SERIES_SAMPLE_BYTES).saturating_add(TIME_SAMPLE_BYTES));
        Ok(VariantCost {
            name: v.map_or("base".to_string(), |v| v.name.clone()),
            sim_time_s: duration_ns as f64 / 1e9,
            ios: factor.map(|f| scaled(report.ios, f)),
            events,
            engine_s,
            samples: cost.samples,
            series,
            entities,
            outstanding: cost.outstanding,
            engine_bytes: memory::engine_bytes(entities, cost.outstanding, series_bytes),
            results_bytes: memory::results_bytes(cost.samples.saturating_mul(series)),
            pilot_sim_s: reached_ns as f64 / 1e9,
            pilot_wall_s,
            pilot_ios: report.ios,
            pilot_events: report.events,
        })
    }
}

/// The machine's memory: [`MEMORY_ENV`] when set (tests), else Linux's /proc/meminfo; None
/// elsewhere.
fn machine_memory() -> Option<MachineMemory> {
    if let Some(bytes) = std::env::var(MEMORY_ENV).ok().and_then(|v| v.trim().parse().ok()) {
        return Some(MachineMemory { total_bytes: bytes, available_bytes: bytes });
    }
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// MemTotal and MemAvailable (kernel 3.14 and later) of /proc/meminfo's text, in bytes.
fn parse_meminfo(text: &str) -> Option<MachineMemory> {
    let field = |name: &str| {
        let line = text.lines().find(|l| l.split(':').next() == Some(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    };
    Some(MachineMemory { total_bytes: field("MemTotal")?, available_bytes: field("MemAvailable")? })
}

/// A warning when `peak` is above the machine's memory, with what to change.
fn memory_warning(peak: u64, results: u64, engine: u64, m: MachineMemory) -> Option<String> {
    let (than, what) = if peak > m.total_bytes {
        ("more than this machine has", human_bytes(m.total_bytes))
    } else if peak > m.available_bytes {
        ("more than this machine has available now", format!("{} of {}", human_bytes(m.available_bytes), human_bytes(m.total_bytes)))
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
        assert_eq!(m, MachineMemory { total_bytes: 24_684_092 * 1024, available_bytes: 24_007_256 * 1024 });
        assert_eq!(parse_meminfo("MemTotal: 10 kB\n"), None, "no MemAvailable (a kernel before 3.14)");
        assert_eq!(parse_meminfo("MemTotal: x kB\nMemAvailable: 1 kB\n"), None);
    }

    #[test]
    fn warns_above_the_total_and_above_what_is_available() {
        let m = MachineMemory { total_bytes: 16_000_000_000, available_bytes: 4_000_000_000 };
        assert_eq!(memory_warning(3_000_000_000, 0, 0, m), None);
        let now = memory_warning(5_000_000_000, 4_000_000_000, 0, m).unwrap();
        assert!(now.contains("5.0 GB") && now.contains("available now (4.0 GB of 16.0 GB)") && now.contains("sample_interval"), "{now}");
        let never = memory_warning(20_000_000_000, 0, 19_000_000_000, m).unwrap();
        assert!(never.contains("more than this machine has (16.0 GB)") && never.contains("iodepth"), "{never}");
        let small = MachineMemory { total_bytes: 100_000_000, available_bytes: 100_000_000 };
        assert!(memory_warning(memory::PROCESS_BYTES, 0, 0, small).unwrap().contains("sanlab itself"));
    }
}
