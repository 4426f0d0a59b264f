//! What a run reports: per VM, job, path, device and array, the PSP's decisions, the
//! conservation check, and the time series. Serialised as the `--json` document. The schema
//! only: `engine/report.rs` fills it from a finished run.

use sanlab_metrics::{LatencyMs, LatencyNs, TimeSeries};
use serde::Serialize;

#[derive(Serialize)]
pub struct VmReport {
    pub name: String,
    pub host: String,
    pub issued: u64,
    pub completed: u64,
    pub in_flight: u64,
    pub iops: f64,
    pub mbps: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_ms: LatencyMs,
    pub failed: u64,
    pub failed_by_reason: FailedByReason,
    /// Commands of its requests aborted or refused and sent again.
    pub retried: u64,
    /// Its virtual disk's and virtual adapter's queue occupancy over the measured time.
    pub disk_queue: QueueReport,
    pub adapter_queue: QueueReport,
    /// Where its mean latency is spent: `vm_queues + kavg + davg` is `lat_ms.mean`.
    pub stages_ms: StagesMs,
}

/// A VM's mean latency by where its requests spent it, per measured completion: in the VM's own
/// queues (virtual disk and adapter) before the host's device queue, in the device queue
/// (esxtop's KAVG) and past it (DAVG), which is the time outside the array (links, adapter,
/// QUEUE FULL retries: `fabric`) and in it, from the command's arrival to its status (`array`):
/// its front end (a QoS hold, a write's data transfer), its cores, then its cache or media (and a
/// replica's acknowledgement).
#[derive(Serialize)]
pub struct StagesMs {
    pub vm_queues: f64,
    pub kavg: f64,
    pub davg: f64,
    pub fabric: f64,
    pub array: f64,
    pub array_front_end: f64,
    pub array_cores: f64,
    pub array_cache: f64,
    pub array_media: f64,
}

/// Failed I/Os by why: no path (the host does not queue), APD timeout, PDL.
#[derive(Serialize)]
pub struct FailedByReason {
    pub no_path: u64,
    pub apd_timeout: u64,
    pub pdl: u64,
}

impl From<[u64; 3]> for FailedByReason {
    fn from([no_path, apd_timeout, pdl]: [u64; 3]) -> Self {
        Self { no_path, apd_timeout, pdl }
    }
}

/// One edge of the fault timeline: an event starting or ending, or a mediator's decision.
#[derive(Serialize)]
pub struct FaultReport {
    pub t_s: f64,
    pub kind: &'static str,
    pub phase: &'static str,
    pub target: String,
    /// The device paths it acts on.
    pub paths: Vec<String>,
    pub detail: String,
    /// Longest VM I/O latency of the I/Os completing from this edge to the next (or the run's end).
    pub max_io_latency_ms: f64,
}

/// One direction of a job, shaped like fio's per-direction JSON.
#[derive(Serialize)]
pub struct DirectionReport {
    pub total_ios: u64,
    pub io_bytes: u64,
    pub runtime_ms: f64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencyNs,
    /// fio's bandwidth samples (KiB/s) and IOPS samples over the job's averaging windows.
    pub bw_samples: RateReport,
    pub iops_samples: RateReport,
}

/// One direction's samples: bandwidth in KiB/s, IOPS in I/Os per second, as fio's JSON has them
/// (`bw_min`, `bw_max`, `bw_mean`, `bw_dev`, `bw_samples`; `iops_*` likewise, `dev` there is
/// `iops_stddev`). All zero without samples.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct RateReport {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
    pub samples: u64,
}

#[derive(Serialize)]
pub struct JobReport {
    pub name: String,
    pub vm: String,
    pub options: std::collections::BTreeMap<String, String>,
    /// fio options the job gave that have no effect on the model.
    pub ignored: Vec<&'static str>,
    pub read: DirectionReport,
    pub write: DirectionReport,
    /// What a fio job found (latency_target's depth, steadystate) or why it ended early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<sanlab_workload::FioFindings>,
    /// Measured submissions by the job's depth after each, in fio's `iodepth_level` buckets
    /// (1, 2, 4, 8, 16, 32, >=64).
    pub iodepth_level: [u64; 7],
    /// Measured syncs of a job that syncs between writes (fio `fsync`, `fdatasync`,
    /// `sync_file_range`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syncs: Option<SyncCounts>,
    /// The workload entry (`[[vm.job]]`) the job comes from: one fio invocation, one fio document.
    pub entry: String,
    /// When the job stopped issuing, from the run's start (fio's `elapsed` is its invocation's
    /// last end).
    pub end_ms: f64,
    /// Its place in its fio job file or command line (section name, reporting group, options).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_place: Option<sanlab_workload::FioPlace>,
    /// How the engine paced it: what it ran, not what the job asked (a fio job on a synchronous
    /// engine runs at depth 1 whatever its `iodepth`).
    pub pacing: JobPacing,
}

/// A job's pacing as the engine runs it (its plan's `Pacing`): `{"kind": "closed", "depth": 1}`;
/// an open loop adds its rate and whether its arrivals are Poisson.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobPacing {
    /// `depth` requests kept outstanding, the next issued when one completes.
    Closed { depth: u32 },
    /// Arrivals at `rate_iops` (evenly spaced, or Poisson), at most `depth` outstanding.
    Open { depth: u32, rate_iops: f64, poisson: bool },
    /// Arrivals when the workload says (a trace's timestamps), at most `depth` outstanding.
    Timed { depth: u32 },
    /// Timed arrivals, and the free slots kept busy as in a closed loop (vdbench's `priority=`).
    Shared { depth: u32 },
}

/// A job's syncs by kind; each ended in the guest at once (see `sanlab-workload`'s `fio/sync.rs`).
#[derive(Serialize)]
pub struct SyncCounts {
    pub fsync: u64,
    pub fdatasync: u64,
    pub sync_file_range: u64,
}

/// A host: what its VMs saw, what its devices saw, and its flow control when it has one.
#[derive(Serialize)]
pub struct HostReport {
    pub name: String,
    pub vms: u32,
    pub iops: f64,
    pub mbps: f64,
    /// VM-observed latency of all the host's VMs.
    pub lat_ms: LatencyMs,
    /// Mean time from dispatch to completion of the host's device requests (its DAVG).
    pub device_lat_ms: f64,
    pub flow_control: Option<FlowControlReport>,
    pub window: Option<WindowReport>,
    /// Its storage adapter's queue (all its devices' commands on the wire) over the measured time.
    pub adapter_queue: QueueReport,
}

/// A queue of `depth` slots: time-averaged slots in use (esxtop's ACTV) and requests waiting for
/// one (QUED), over the measured time.
#[derive(Serialize, Clone, Copy, Debug, Default)]
pub struct QueueReport {
    pub depth: u32,
    pub actv_mean: f64,
    pub qued_mean: f64,
}

/// A link between host and array (named as its path) or between replicating arrays: each
/// direction's transmitter busy share and data rate over the measured time.
#[derive(Serialize)]
pub struct LinkReport {
    pub name: String,
    /// "path" or "replication".
    pub kind: &'static str,
    /// Host to array (or the pair's first array to its second), and back.
    pub outbound: LinkDirectionReport,
    pub inbound: LinkDirectionReport,
}

#[derive(Serialize)]
pub struct LinkDirectionReport {
    /// Fraction of the measured time the transmitter was sending data.
    pub busy: f64,
    pub mbps: f64,
}

#[derive(Serialize)]
pub struct FlowControlReport {
    pub kind: &'static str,
    pub latency_threshold_ms: f64,
    /// β at the end of the run (Σ shares of busy VMs / share_unit).
    pub beta: f64,
    /// L(t) at the end of the run.
    pub latency_estimate_ms: f64,
}

/// The host's window (sum over its controlled devices), over the measured samples.
#[derive(Serialize)]
pub struct WindowReport {
    #[serde(rename = "final")]
    pub last: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Serialize)]
pub struct PathReport {
    pub name: String,
    pub host: String,
    pub array: String,
    pub device: String,
    pub alua: &'static str,
    pub state: &'static str,
    pub ios: u64,
    pub iops: f64,
    pub share: f64,
    pub mbps: f64,
    pub lat_ms: LatencyMs,
    /// Requests moved to another path after this one died, or failed on it.
    pub failed_over: u64,
    /// Commands aborted or refused on this path and sent again.
    pub retried: u64,
    /// The host adapter it leaves from, the array controller and port it reaches.
    pub adapter: String,
    pub controller: String,
    pub port: String,
    /// Its device's index in the run (how parts run apart are put back in order).
    #[serde(skip)]
    pub device_index: usize,
}

/// A device with esxtop's figures: DQLEN, ACTV, QUED (time averages), and KAVG, DAVG, GAVG
/// (mean ms in the kernel queue, on the path, both).
#[derive(Serialize)]
pub struct DeviceReport {
    pub name: String,
    pub host: String,
    pub volume: String,
    pub queue_depth: u32,
    pub ios: u64,
    pub iops: f64,
    pub lat_ms: LatencyMs,
    pub dqlen_mean: f64,
    pub actv_mean: f64,
    pub qued_mean: f64,
    pub kavg_ms: f64,
    pub davg_ms: f64,
    pub gavg_ms: f64,
    /// QUEUE FULL answers received, and the device depth at the end (after QFULL throttling).
    pub qfull: u64,
    pub depth_end: u32,
    /// Commands aborted on a dead path or refused, and sent again.
    pub retried: u64,
    pub failed: u64,
    pub failed_by_reason: FailedByReason,
}

/// A volume's array-side figures; the QoS fields are present when it has QoS.
#[derive(Serialize)]
pub struct VolumeReport {
    pub name: String,
    pub qos: Option<QosReport>,
}

#[derive(Serialize)]
pub struct QosReport {
    pub min: f64,
    pub max: f64,
    pub burst: f64,
    /// Requests released to the media, per second of measured time.
    pub released_iops: f64,
    /// Mean time a request was held by QoS (latency injected), ms.
    pub held_ms_mean: f64,
    /// Requests held at the end of the run.
    pub held_now: usize,
    pub credit_s: f64,
}

/// One core (or controller): the share of the array's requests whose address segment it owns, its
/// utilisation, and those requests per second.
#[derive(Serialize)]
pub struct CoreReport {
    pub name: String,
    pub share: f64,
    /// Busy share of the time; none for a controller of an array without modelled cores.
    pub util: Option<f64>,
    pub iops: f64,
}

#[derive(Serialize)]
pub struct ArrayReport {
    pub name: String,
    pub cores: Vec<CoreReport>,
    pub controllers: Vec<CoreReport>,
    /// Read hits / reads, when the array has a cache.
    pub cache_hit_ratio: Option<f64>,
    /// Commands refused with QUEUE FULL (target queue at `max_outstanding`).
    pub qfull_sent: u64,
    pub iops: f64,
    pub mbps: f64,
    pub host_ios: u64,
    pub replicated_ios: u64,
    pub utilisation: f64,
    pub lat_ms: LatencyMs,
    /// Disk-group back end: back-end operations, stripe writes, cache, per-disk utilisation.
    pub disk_group: Option<crate::array::disk_group::DiskGroupStats>,
}

#[derive(Serialize)]
pub struct PspEventReport {
    pub t_s: f64,
    pub device: String,
    pub event: String,
    pub paths: Vec<String>,
    #[serde(skip)]
    pub device_index: usize,
}

pub use sanlab_metrics::Conservation;

/// A cost pilot's figures (`World::pilot_figures`).
pub struct PilotFigures {
    pub events: u64,
    /// I/Os the VMs completed.
    pub ios: u64,
    /// The VMs' names, in order.
    pub vms: Vec<String>,
    pub timeseries: TimeSeries,
}

#[derive(Serialize)]
pub struct RunReport {
    pub sim_time_s: f64,
    pub measured_s: f64,
    pub events: u64,
    pub ios: u64,
    /// Whether the seed can change the figures: a random draw that may shape timing happened
    /// (noise, a read/write mix, a size, an arrival), or an array looks at where I/Os land
    /// (cores, a cache, disks). When false, every seed gives the same figures.
    pub seed_matters: bool,
    pub hosts: Vec<HostReport>,
    pub vms: Vec<VmReport>,
    pub jobs: Vec<JobReport>,
    pub paths: Vec<PathReport>,
    pub devices: Vec<DeviceReport>,
    pub volumes: Vec<VolumeReport>,
    pub arrays: Vec<ArrayReport>,
    pub psp_events: Vec<PspEventReport>,
    pub links: Vec<LinkReport>,
    pub faults: Vec<FaultReport>,
    pub conservation: Vec<Conservation>,
    pub timeseries: TimeSeries,
}
