//! The runtime entities along the path, and the world built from a topology.

use super::failover::{Change, FaultRun, LinkHealth, Mirror, MirrorHealth, VolumeRefusal};
use super::World;
use crate::array::cache::ReadCache;
use crate::array::cores::Cores;
use crate::array::disk_group::DiskOut;
use crate::array::qos::QosState;
use crate::array::Backend;
use crate::fault::Action;
use crate::host::device_queue::DeviceQueue;
use crate::host::failover::Failover;
use crate::host::flow_control::{WindowLaw, WindowState};
use crate::host::SlotQueue;
use crate::io::Slab;
use crate::multipath::{PathState, PspEvent};
use crate::topology::Topology;
use sanlab_workload::Workload;
use sanlab_des::{EventQueue, RngStream, SimTime};
use sanlab_metrics::{Conservation, IoSeries, IoStats, SeriesId, TimeSeries};

/// What every entity that requests pass through counts: requests taken on, finished, and given
/// up (moved off a dead path, an exchange the array dropped), their latency and throughput, and
/// its IOPS/MB/s/latency series.
pub(crate) struct Tally {
    pub issued: u64,
    pub completed: u64,
    pub failed: u64,
    pub stats: IoStats,
    pub series: IoSeries,
}

impl Tally {
    fn new(series: &mut TimeSeries, entity: &str, own_histogram: bool) -> Self {
        let stats = if own_histogram { IoStats::new() } else { IoStats::without_histogram() };
        Self { issued: 0, completed: 0, failed: 0, stats, series: IoSeries::new(series, entity) }
    }

    #[inline]
    pub fn done(&mut self, latency_ns: u64, size_bytes: u32, measured: bool) {
        self.completed += 1;
        self.stats.record(latency_ns, u64::from(size_bytes), measured);
    }

    /// Pushes the interval's figures and starts the next interval.
    pub fn sample(&mut self, series: &mut TimeSeries, window_s: f64) {
        self.series.sample(series, &mut self.stats, window_s);
    }

    /// Checks the counters against `in_flight`, the requests actually alive in the component.
    pub fn conservation(&self, component: String, in_flight: u64) -> Conservation {
        Conservation { component, issued: self.issued, completed: self.completed, failed: self.failed, in_flight }
    }
}

pub(crate) struct Job {
    pub name: String,
    pub vm: usize,
    pub workload: Box<dyn Workload>,
    pub rng: RngStream,
    pub depth: u32,
    pub outstanding: u32,
    pub issued: u64,
    pub completed: u64,
    /// Open-loop arrivals that found the job at its depth and wait to be issued.
    pub backlog: u64,
    pub stop_ns: SimTime,
    /// Completions from this time on count in the job's statistics (run warmup, fio ramp_time).
    pub measured_from_ns: SimTime,
    /// Closed loop: the pause the job takes once its outstanding requests complete (thinking).
    pub pause_ns: Option<u64>,
    pub read: IoStats,
    pub write: IoStats,
    /// Requests that failed (the job stopped at the first).
    pub failed: u64,
    /// Jobs not yet finished that this one waits for (fio `stonewall`, `wait_for`); it starts
    /// when the count reaches zero.
    pub waiting: u32,
    /// Jobs waiting for this one.
    pub waiters: Vec<u32>,
    /// fio's bandwidth and IOPS samples and submission depths.
    pub rates: super::rates::JobRates,
    /// fio `exitall` / `exitall_on_error`: the job's end ends others of its `set` (see
    /// [`sanlab_workload::ExitRule`]).
    pub exit: Option<sanlab_workload::ExitRule>,
    /// fio `fsync` and its kin: when the job syncs between writes (see `sanlab-workload`'s `fio/sync.rs`).
    pub sync: Option<sanlab_workload::SyncSchedule>,
    pub set: usize,
    /// The name of its workload entry, which names its fio document.
    pub entry: String,
    /// Started (its wait is over), ended by another's exit, finished (stopped, nothing in flight).
    pub started: bool,
    pub terminated: bool,
    pub finished: bool,
}

pub(crate) struct Vm {
    pub name: String,
    pub host: usize,
    pub device: usize,
    pub volume: usize,
    /// Its world number on the device's scheduler.
    pub world: u32,
    pub disk_q: SlotQueue,
    pub adapter_q: SlotQueue,
    pub tally: Tally,
    pub reads: u64,
    pub writes: u64,
    /// Commands of its requests aborted or refused and sent again.
    pub retried: u64,
    pub failed_by_reason: [u64; 3],
}

pub(crate) struct Path {
    pub name: String,
    pub link: usize,
    pub array: usize,
    pub adapter: String,
    pub controller: u32,
    pub port: String,
    pub tally: Tally,
    /// Commands aborted or refused on this path and sent again.
    pub retried: u64,
}

/// A device under host-level flow control: its window, its worlds' shares, and what it measured
/// in the current period.
pub(crate) struct DeviceFlow {
    pub state: WindowState,
    pub volume: usize,
    pub world_shares: Vec<u32>,
    /// Worlds that sent or completed a request in this period (the others are idle: no β).
    pub world_busy: Vec<bool>,
    pub period_latency_ns_sum: u128,
    pub period_ios: u64,
}

pub(crate) struct Device {
    pub name: String,
    pub host: usize,
    /// What the device is: a volume's name, or the protocol endpoint's.
    pub label: String,
    pub q: DeviceQueue,
    pub psp: Box<dyn crate::multipath::PathSelector>,
    pub states: Vec<PathState>,
    pub paths: Vec<Path>,
    pub tally: Tally,
    pub psp_log: Vec<PspEvent>,
    /// DQLEN, ACTV and QUED, as esxtop names them.
    pub queue_series: [SeriesId; 3],
    /// Reads and writes apart, for esxtop's per-direction counters.
    pub by_direction: super::by_direction::ByDirection,
    pub dqlen_sum: f64,
    pub actv_sum: f64,
    pub qued_sum: f64,
    pub windows: u64,
    /// Summed time in the kernel queue (KAVG) and on the path (DAVG), over measured completions.
    pub kernel_ns_sum: u128,
    pub device_ns_sum: u128,
    pub qfull_seen: u64,
    /// Commands aborted on a dead path or refused, and sent again.
    pub retried: u64,
    pub failed_by_reason: [u64; 3],
    /// Since when no path could carry its requests (all paths down), if so.
    pub no_path_since_ns: Option<SimTime>,
    pub flow: Option<DeviceFlow>,
    /// When the scheduler holds requests back (mClock limits): the wake-up already armed.
    pub wake_armed_ns: Option<SimTime>,
}

impl Device {
    /// A device-level request of `size_bytes` goes onto path `p` (`on`) or leaves it: the counts
    /// the path selectors read, per path and per link (`link_outstanding`).
    pub fn carry(&mut self, p: usize, size_bytes: u32, link_outstanding: &mut [u32], on: bool) {
        let (state, link) = (&mut self.states[p], &mut link_outstanding[self.paths[p].link]);
        if on {
            state.outstanding += 1;
            state.outstanding_bytes += u64::from(size_bytes);
            *link += 1;
        } else {
            state.outstanding -= 1;
            state.outstanding_bytes -= u64::from(size_bytes);
            *link -= 1;
        }
    }
}

pub(crate) struct Host {
    pub name: String,
    pub adapter_q: SlotQueue,
    /// Disk.DiskMaxIOSize: split above the device queue (visible to esxtop).
    pub disk_max_io_size_bytes: u64,
    /// The adapter's own limit (software iSCSI MaxIoSizeKB): split below the device queue.
    pub adapter_max_io_size_bytes: u64,
    /// Wait before resending a command refused with QUEUE FULL.
    pub qfull_retry_ns: u64,
    pub failover: Failover,
    /// VM-observed figures of every VM on the host.
    pub stats: IoStats,
    pub series: IoSeries,
    /// With flow control: (window, latency estimate) series and the window's measured statistics.
    pub flow: Option<HostFlow>,
}

pub(crate) struct HostFlow {
    /// window, latency_estimate_ms, beta.
    pub series: [SeriesId; 3],
    pub window_sum: f64,
    pub window_samples: u64,
    pub window_min: f64,
    pub window_max: f64,
}

pub(crate) struct Array {
    pub name: String,
    pub backend: Backend,
    pub rng: RngStream,
    /// Host commands accepted (`issued`) and answered.
    pub tally: Tally,
    pub replicated_ios: u64,
    pub cores: Option<Cores>,
    /// Storage controllers; their front-end ports carry the paths.
    pub controllers: u32,
    /// Per core: (iops, util) series, owned requests and busy time at the last sample.
    pub core_series: Vec<[SeriesId; 2]>,
    pub core_last: Vec<(u64, u128)>,
    pub cache: Option<ReadCache>,
    /// Target queue: host commands the array holds at once (`issued - completed`) before
    /// answering QUEUE FULL.
    pub max_outstanding: Option<u32>,
    pub qfull_sent: u64,
    /// Taking over a failed controller's work: new commands wait until then.
    pub hold_until_ns: SimTime,
    /// The whole array has failed.
    pub dead: bool,
}

pub(crate) struct Volume {
    pub name: String,
    pub replication: Option<usize>,
    pub qos: Option<QosState>,
    /// Host-level flow control of the hosts' devices for this volume: its kind and law.
    pub flow: Option<(&'static str, WindowLaw)>,
    /// Arrays that will not serve it now (a mediator race lost, a PDL).
    pub refusals: Vec<VolumeRefusal>,
}

impl World {
    /// Builds the runtime state. Fails if a device's PSP rejects its paths (e.g. an unknown
    /// preferred path); the message names the device.
    pub fn new(t: Topology) -> Result<Self, String> {
        let seed = t.run.seed;
        let mut series = TimeSeries::default();
        let mut hosts: Vec<Host> = t
            .hosts
            .into_iter()
            .map(|h| Host {
                series: IoSeries::new(&mut series, &format!("host/{}", h.name)),
                stats: IoStats::new(),
                flow: None,
                name: h.name,
                adapter_q: SlotQueue::new(h.adapter_queue_depth),
                disk_max_io_size_bytes: h.disk_max_io_size_bytes,
                adapter_max_io_size_bytes: h.adapter_max_io_size_bytes,
                qfull_retry_ns: h.qfull_retry_ns,
                failover: h.failover,
            })
            .collect();
        let arrays = t
            .arrays
            .into_iter()
            .map(|a| {
                let core_series = a.cores.as_ref().map_or(vec![], |c| {
                    (0..c.centres.len()).map(|k| ["iops", "util"].map(|m| series.series(&format!("core/{}/{}", a.name, c.name(k)), m))).collect()
                });
                let core_count = a.cores.as_ref().map_or(0, |c| c.centres.len());
                Array {
                    core_series,
                    core_last: vec![(0, 0); core_count],
                    cores: a.cores,
                    controllers: a.controllers,
                    cache: a.cache,
                    max_outstanding: a.max_outstanding,
                    qfull_sent: 0,
                    hold_until_ns: 0,
                    dead: false,
                    rng: RngStream::new(seed, &format!("array/{}", a.name)),
                    tally: Tally::new(&mut series, &format!("array/{}", a.name), true),
                    name: a.name,
                    backend: *a.backend,
                    replicated_ios: 0,
                }
            })
            .collect();
        let mut devices = vec![];
        for d in t.devices {
            let names: Vec<String> = d.paths.iter().map(|p| p.name.clone()).collect();
            let mut psp = d.psp;
            psp.attach(&names).map_err(|e| format!("device `{}`: {e}", d.name))?;
            devices.push(Device {
                states: d.paths.iter().map(|p| PathState::new(p.alua)).collect(),
                paths: d
                    .paths
                    .into_iter()
                    .map(|p| Path { tally: Tally::new(&mut series, &format!("path/{}", p.name), true), name: p.name, link: p.link, array: p.array, adapter: p.adapter, controller: p.controller, port: p.port, retried: 0 })
                    .collect(),
                tally: Tally::new(&mut series, &format!("device/{}", d.name), true),
                queue_series: ["dqlen", "actv", "qued"].map(|m| series.series(&format!("device/{}", d.name), m)),
                by_direction: super::by_direction::ByDirection::new(&mut series, &format!("device/{}", d.name)),
                name: d.name,
                host: d.host,
                label: d.label,
                q: d.queue,
                psp,
                psp_log: vec![],
                dqlen_sum: 0.0,
                actv_sum: 0.0,
                qued_sum: 0.0,
                windows: 0,
                kernel_ns_sum: 0,
                device_ns_sum: 0,
                qfull_seen: 0,
                retried: 0,
                failed_by_reason: [0; 3],
                no_path_since_ns: None,
                flow: None,
                wake_armed_ns: None,
            });
        }
        let volumes: Vec<Volume> = t
            .volumes
            .into_iter()
            .map(|v| Volume { flow: v.flow_control.map(|f| (f.kind(), *f.law())), name: v.name, replication: v.replication, qos: v.qos.map(QosState::new), refusals: vec![] })
            .collect();
        // A device of a volume with flow control runs the law for its host; its VMs' shares make β.
        for v in &t.vms {
            let Some((_, law)) = volumes[v.volume].flow else { continue };
            let dev = &mut devices[v.device];
            let law = law.within_depth(dev.q.lun_depth());
            let flow = dev.flow.get_or_insert_with(|| DeviceFlow { state: WindowState::new(law), volume: v.volume, world_shares: vec![], world_busy: vec![], period_latency_ns_sum: 0, period_ios: 0 });
            let world = v.world as usize;
            if flow.world_shares.len() <= world {
                flow.world_shares.resize(world + 1, 0);
                flow.world_busy.resize(world + 1, false);
            }
            flow.world_shares[world] = v.shares;
            let host = &mut hosts[v.host];
            if host.flow.is_none() {
                let entity = format!("host/{}", host.name);
                host.flow = Some(HostFlow { series: ["window", "latency_estimate_ms", "beta"].map(|m| series.series(&entity, m)), window_sum: 0.0, window_samples: 0, window_min: f64::INFINITY, window_max: 0.0 });
            }
        }
        for d in &mut devices {
            if let Some(f) = &d.flow {
                d.q.set_window(0, f.state.depth());
            }
        }
        // A VM whose jobs measure from the run's warm-up, as it does, records exactly the I/Os of
        // its jobs' reads and writes: its histogram is theirs merged when reported, not kept
        // (a third of a large topology's memory).
        let mut own_histogram = vec![false; t.vms.len()];
        for j in &t.jobs {
            own_histogram[j.vm] |= j.workload.measured_from_ns() > 0;
        }
        let vms = t
            .vms
            .into_iter()
            .zip(own_histogram)
            .map(|(v, own_histogram)| Vm {
                tally: Tally::new(&mut series, &format!("vm/{}", v.name), own_histogram),
                name: v.name,
                host: v.host,
                device: v.device,
                volume: v.volume,
                world: v.world,
                disk_q: SlotQueue::new(v.disk_queue_depth),
                adapter_q: SlotQueue::new(v.adapter_queue_depth),
                reads: 0,
                writes: 0,
                retried: 0,
                failed_by_reason: [0; 3],
            })
            .collect();
        let end_ns = t.run.duration_ns;
        let mut health: Vec<LinkHealth> = t.links.iter().map(|_| LinkHealth { down: 0, notice: false, down_ns: 0, checking: false, host: 0 }).collect();
        for d in &devices {
            for p in &d.paths {
                health[p.link].host = d.host;
            }
        }
        let faults = t.faults.into_iter().enumerate().map(|(k, f)| fault_run(k, f, &t.links, seed)).collect();
        let mirrors = t.replications.iter().map(|r| MirrorHealth { state: Mirror::Healthy, broken_by: 0, stalled: vec![], mediator: RngStream::new(seed, &format!("replication/{}/mediator", r.link.name)) }).collect();
        let mut waiters: Vec<Vec<u32>> = vec![vec![]; t.jobs.len()];
        for (k, j) in t.jobs.iter().enumerate() {
            for &a in &j.after {
                waiters[a].push(k as u32);
            }
        }
        let jobs = t
            .jobs
            .into_iter()
            .zip(waiters)
            .map(|(j, waiters)| {
                let depth = j.workload.pacing().depth();
                let stop_ns = j.workload.runtime_ns().map_or(end_ns, |r| r.min(end_ns));
                let measured_from_ns = j.workload.measured_from_ns().max(t.run.warmup_ns);
                let rates = super::rates::JobRates::new(j.workload.rate_sampling(), measured_from_ns);
                let exit = j.workload.exit_rule();
                let sync = j.workload.sync_schedule();
                Job {
                    rng: RngStream::new(seed, &format!("job/{}", j.name)),
                    name: j.name,
                    vm: j.vm,
                    workload: j.workload,
                    depth,
                    outstanding: 0,
                    issued: 0,
                    completed: 0,
                    backlog: 0,
                    // A job that waits has not run until it starts (see `World::start_job`).
                    stop_ns: if j.after.is_empty() { stop_ns } else { 0 },
                    measured_from_ns,
                    pause_ns: None,
                    read: IoStats::new(),
                    write: IoStats::new(),
                    failed: 0,
                    waiting: j.after.len() as u32,
                    waiters,
                    rates,
                    exit,
                    sync,
                    set: j.set,
                    entry: j.entry,
                    started: false,
                    terminated: false,
                    finished: false,
                }
            })
            .collect();
        Ok(Self {
            timing_draws: 0,
            q: EventQueue::new(),
            ios: Slab::default(),
            jobs,
            vms,
            hosts,
            devices,
            link_outstanding: vec![0; t.links.len()],
            links: t.links,
            arrays,
            volumes,
            replications: t.replications,
            series,
            end_ns,
            warmup_ns: t.run.warmup_ns.min(end_ns),
            sample_ns: t.run.sample_interval_ns,
            last_sample_ns: 0,
            disk_out: DiskOut::default(),
            faults,
            health,
            mirrors,
            failing: vec![],
            fault_log: vec![],
            edge_max_latency_ns: 0,
        })
    }
}

/// The runtime form of an `[[event]]`: a latency change draws from its own streams,
/// `link/<path>/<out|in>/latency/event<k>`.
fn fault_run(k: usize, f: crate::topology::FaultConfig, links: &[crate::fabric::Link], seed: u64) -> FaultRun {
    let kind = f.fault.kind();
    let change = match f.fault.action {
        Action::Down { notice } => Change::Down { notice },
        Action::Latency(p) => {
            let name = &links[f.links[0]].name;
            Change::Latency(["out", "in"].map(|d| p.stream(seed, &format!("link/{name}/{d}/latency/event{k}"))))
        }
        Action::Bandwidth(bps) => Change::Bandwidth([crate::fabric::ps_per_byte(Some(bps)); 2]),
        Action::ControllerDown { takeover_ns } => Change::Controller { controller: f.controller.expect("a controller") as usize, takeover_ns },
        Action::ArrayDown => Change::Array,
        Action::ReplicationDown => Change::Replication(f.replication.expect("a pair")),
        Action::AluaState { state, transition_ns } => Change::Alua { state, transition_ns },
        Action::DeviceLost => Change::DeviceLost { volume: f.volume.expect("a volume") },
    };
    FaultRun { kind, target: f.target, links: f.links, array: f.array, at_ns: f.fault.at_ns, until_ns: f.fault.until_ns, every_ns: f.fault.every_ns, change, touched: vec![] }
}
