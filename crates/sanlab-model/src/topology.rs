//! The built system a run simulates: every component resolved to indices, every parameter
//! validated. The scenario crate builds it from a file; tests can build it directly.

use crate::array::{cache::ReadCache, cores::Cores, qos::QosParams, replication::Replication, Backend};
use crate::host::flow_control::FlowControl;
use crate::host::device_queue::DeviceQueue;
use crate::fabric::Link;
use crate::multipath::{Alua, PathSelector};
use sanlab_workload::{JobPlan, Workload};

pub struct RunConfig {
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub seed: u64,
    pub sample_interval_ns: u64,
}

pub struct HostConfig {
    pub name: String,
    pub adapter_queue_depth: u32,
    /// Disk.DiskMaxIOSize: requests above it are split before the device queue.
    pub disk_max_io_size_bytes: u64,
    /// The adapter's own limit (iSCSI MaxIoSizeKB): split below the device queue.
    pub adapter_max_io_size_bytes: u64,
    pub qfull_retry_ns: u64,
    pub failover: crate::host::failover::Failover,
}

pub struct ArrayConfig {
    pub name: String,
    pub backend: Box<Backend>,
    pub cores: Option<Cores>,
    pub cache: Option<ReadCache>,
    pub max_outstanding: Option<u32>,
    /// Storage controllers (their front-end ports carry the paths; `cores` has as many).
    pub controllers: u32,
}

pub struct VolumeConfig {
    pub name: String,
    /// Index into `Topology::replications` when the volume is replicated active-active.
    pub replication: Option<usize>,
    pub qos: Option<QosParams>,
    /// Host-level flow control (PARDA, SIOC) of every host's device for this volume.
    pub flow_control: Option<Box<dyn FlowControl>>,
}

pub struct PathConfig {
    pub name: String,
    pub link: usize,
    pub array: usize,
    pub alua: Alua,
    /// The host adapter it leaves from (`vmhba0`).
    pub adapter: String,
    /// The array controller (0-based) and front-end port (`ctrl1.fc1`) it reaches.
    pub controller: u32,
    pub port: String,
}

/// A device the host sees: a VMFS volume's LUN, or a vVol protocol endpoint.
pub struct DeviceConfig {
    pub name: String,
    pub host: usize,
    pub label: String,
    /// The device queue with its scheduler; its worlds are the VMs' disks.
    pub queue: DeviceQueue,
    pub psp: Box<dyn PathSelector>,
    pub paths: Vec<PathConfig>,
}

pub struct VmConfig {
    pub name: String,
    pub host: usize,
    pub device: usize,
    pub volume: usize,
    /// The VM's world number on its device's queue.
    pub world: u32,
    /// Disk shares (they make the host's β under flow control).
    pub shares: u32,
    pub disk_queue_depth: u32,
    pub adapter_queue_depth: u32,
}

pub struct JobConfig {
    pub name: String,
    pub vm: usize,
    pub workload: Box<dyn Workload>,
    pub plan: JobPlan,
    /// Jobs (indices into the topology's jobs) that must finish before this one starts.
    pub after: Vec<usize>,
    /// The workload entry the job comes from (the index of its first job): fio's `exitall` ends
    /// only jobs of the same file or command line.
    pub set: usize,
    /// The name of that entry (`[[vm.job]]`'s name), which names its fio document.
    pub entry: String,
}

pub struct Topology {
    pub run: RunConfig,
    pub hosts: Vec<HostConfig>,
    pub arrays: Vec<ArrayConfig>,
    pub replications: Vec<Replication>,
    pub volumes: Vec<VolumeConfig>,
    /// Host-to-array links the paths run over.
    pub links: Vec<Link>,
    pub devices: Vec<DeviceConfig>,
    pub vms: Vec<VmConfig>,
    pub jobs: Vec<JobConfig>,
    pub faults: Vec<FaultConfig>,
}

/// An `[[event]]` with its target resolved.
pub struct FaultConfig {
    pub fault: crate::fault::Fault,
    /// What it names, for the report: "path local-0", "controller local/ctrl1".
    pub target: String,
    /// The links of the paths it acts on (all of the target's paths, of every host).
    pub links: Vec<usize>,
    pub array: Option<usize>,
    pub controller: Option<u32>,
    pub replication: Option<usize>,
    pub volume: Option<usize>,
}

/// Most requests all jobs together may keep outstanding (the engine holds each in its request
/// slab, about 160 bytes): 4 Mi, about 600 MB.
pub const MAX_OUTSTANDING: u64 = 1 << 22;
/// Largest time series a run may record: 1 GiB.
pub const MAX_SERIES_BYTES: u64 = 1 << 30;
/// Series per entity, at most (a device has six: IOPS, MB/s, latency, DQLEN, ACTV, QUED; and its
/// reads and writes apart, counted on their own).
const MAX_SERIES_PER_ENTITY: u64 = 6;
/// A device's series of its reads and writes apart (four each, for esxtop's per-direction
/// counters; the engine's `by_direction.rs` checks its table against this).
pub const DEVICE_DIRECTION_SERIES: u64 = 8;
/// Bytes per sample of one series (`f32`), and per sample of the shared time column.
const SERIES_SAMPLE_BYTES: u64 = 4;
const TIME_SAMPLE_BYTES: u64 = 8;

/// Bytes of `samples` samples of `series` series: their values and the shared time column.
pub fn series_bytes(samples: u64, series: u64) -> u64 {
    samples.saturating_mul(series.saturating_mul(SERIES_SAMPLE_BYTES).saturating_add(TIME_SAMPLE_BYTES))
}

/// The size of a run, estimated before it starts: what the limits above are checked against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Entities with statistics: hosts, arrays, array cores, paths, devices, VMs.
    pub entities: u64,
    pub samples: u64,
    /// Series the entities record, at most.
    pub max_series: u64,
    pub series_bytes: u64,
    pub outstanding: u64,
    /// What the workloads' own state may grow to (fio's random maps).
    pub workload_bytes: u64,
}

impl Topology {
    /// The run's time series and request slab, from its size.
    pub fn cost(&self) -> Cost {
        let cores: usize = self.arrays.iter().filter_map(|a| a.cores.as_ref()).map(|c| c.centres.len()).sum();
        let paths: usize = self.devices.iter().map(|d| d.paths.len()).sum();
        let entities = (self.hosts.len() + self.arrays.len() + cores + paths + self.devices.len() + self.vms.len()) as u64;
        let samples = self.run.duration_ns / self.run.sample_interval_ns.max(1);
        let max_series = entities.saturating_mul(MAX_SERIES_PER_ENTITY) + self.devices.len() as u64 * DEVICE_DIRECTION_SERIES;
        let series_bytes = series_bytes(samples, max_series);
        let outstanding = self.jobs.iter().map(|j| u64::from(j.plan.pacing.depth())).sum();
        let workload_bytes = self.jobs.iter().map(|j| j.plan.state_bytes).sum();
        Cost { entities, samples, max_series, series_bytes, outstanding, workload_bytes }
    }

    /// When each job issues: from its start (fio `startdelay`) until its runtime, as the engine
    /// runs it (`u64::MAX` without one). A job that stops by itself earlier (a trace's end, fio
    /// `size`) is counted to its window's end.
    pub fn job_windows_ns(&self) -> Vec<std::ops::Range<u64>> {
        self.jobs.iter().map(|j| j.plan.start_ns..j.plan.runtime_ns.unwrap_or(u64::MAX)).collect()
    }
}

/// Peak memory of a `sanlab run` process, from constants measured with `/usr/bin/time -v`
/// (docs/robustness.md, "What a run costs"): the process itself, the engine's state for the
/// variant in progress, and the results of every variant, which the run keeps until it writes
/// them.
pub mod memory {
    /// Python, its libraries (pandas, pyarrow, rich, plotly) and the engine: the intercept of
    /// the peak against the results' rows (metro_cluster_psp `alua_rr` sampled every 1 ms and
    /// every 5 ms: 3.09 GB and 0.77 GB for 4.68 M and 0.94 M rows), within 10 MB of a 2 s run's.
    pub const PROCESS_BYTES: u64 = 195_000_000;
    /// One sample of one series in the results (the slope of those two runs: 635 bytes): 4
    /// bytes in the engine, then JSON text, Python objects (two floats, two strings, four list
    /// slots) and Arrow columns, several alive at once.
    pub const RESULT_ROW_BYTES: u64 = 640;
    /// One request the jobs keep outstanding: its slab entry and its places in the queues (72
    /// bytes measured: 4 Mi outstanding peaked 289 MB above 64 Ki; 24 more since a request
    /// carries its time in the array's three parts: 1 Mi outstanding rose 117 MB, 2026-11-29;
    /// 8 more since it says whether a cache answered it, its size rising 104 → 112 bytes).
    pub const REQUEST_BYTES: u64 = 112;
    /// One entity with statistics (a VM, job, path, device, host, array or core): the touched
    /// part of its latency histograms (2- or 4-byte counts, grown to the latencies seen) and its
    /// structures. Measured on the scale ladder's 10,000-VM rung, 25,380 entities: 850 MB peak
    /// for 60 simulated seconds against 156 MB for 1 ns, 28 kB each.
    pub const ENTITY_BYTES: u64 = 28_000;

    /// The engine's state for one variant.
    pub fn engine_bytes(entities: u64, outstanding: u64, series_bytes: u64, workload_bytes: u64) -> u64 {
        entities.saturating_mul(ENTITY_BYTES).saturating_add(outstanding.saturating_mul(REQUEST_BYTES)).saturating_add(series_bytes).saturating_add(workload_bytes)
    }

    /// What the run keeps of one variant's `rows` (samples x series) until it writes them.
    pub fn results_bytes(rows: u64) -> u64 {
        rows.saturating_mul(RESULT_ROW_BYTES)
    }

    /// The process's peak: the largest variant's engine state, with every variant's results.
    pub fn peak_bytes(engine_bytes_max: u64, results_bytes: u64) -> u64 {
        PROCESS_BYTES.saturating_add(engine_bytes_max).saturating_add(results_bytes)
    }
}

/// `bytes` for messages: "6.3 GB".
pub fn human_bytes(bytes: u64) -> String {
    let (value, unit) = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")].into_iter().find(|(scale, _)| bytes as f64 >= *scale).unwrap_or((1.0, "bytes"));
    format!("{:.1} {unit}", bytes as f64 / value)
}
