//! The event loop: carries each request along the I/O path and back.
//!
//! ```text
//! job → VM disk queue → VM adapter queue → split → device queue → PSP → host adapter queue
//!     → link (command) → array → [write: transfer-ready ← , data → , replicate ⇄ peer] → media
//!     ← link (status / read data) ← … completion travels back the same way
//! ```
//! Events are a kind and a request index packed into a `u64`; the state lives in arenas indexed by
//! plain integers, so the loop neither allocates (once warm) nor calls back into Python.

use crate::array::disk_group::DiskOut;
use crate::array::Backend;
use crate::fabric::{INBOUND, OUTBOUND};
use crate::array::cache::ReadCache;
use crate::array::cores::Cores;
use crate::array::qos::QosState;
use crate::host::device_queue::DeviceQueue;
use crate::host::flow_control::{WindowLaw, WindowState};
use crate::host::scheduler::Waiting;
use crate::host::SlotQueue;
use crate::io::{Io, Op, Slab, Stage, NONE};
use crate::multipath::{PathState, PspEvent};
use crate::topology::Topology;
use crate::workload::{Pacing, Workload};
use sanlab_des::{EventQueue, RngStream, RunControl, SimTime};
use sanlab_metrics::{IoSeries, IoStats, SeriesId, TimeSeries};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Ev {
    JobArrival,
    CmdAtArray,
    XferRdyAtHost,
    DataAtArray,
    MediaDone,
    ReplAtPeer,
    PeerMediaDone,
    ReplAckAtOrigin,
    StatusAtHost,
    Sample,
    QosRelease,
    OwnerCoreDone,
    DataCoreDone,
    CacheHitDone,
    QfullAtHost,
    Retry,
    DiskDone,
    FlowPeriod,
    DeviceWake,
}

const EVENTS: [Ev; 19] = [
    Ev::JobArrival, Ev::CmdAtArray, Ev::XferRdyAtHost, Ev::DataAtArray, Ev::MediaDone,
    Ev::ReplAtPeer, Ev::PeerMediaDone, Ev::ReplAckAtOrigin, Ev::StatusAtHost, Ev::Sample, Ev::QosRelease,
    Ev::OwnerCoreDone, Ev::DataCoreDone, Ev::CacheHitDone, Ev::QfullAtHost, Ev::Retry, Ev::DiskDone,
    Ev::FlowPeriod, Ev::DeviceWake,
];

/// A disk of an array, as one event index: array in the high bits.
const DISK_BITS: u32 = 20;

#[inline]
fn pack(ev: Ev, index: u32) -> u64 {
    (u64::from(index) << 8) | ev as u64
}

#[inline]
fn unpack(p: u64) -> (Ev, u32) {
    (EVENTS[(p & 0xff) as usize], (p >> 8) as u32)
}

/// A service-centre token: the request and one flag (the peer's copy of a replicated write at
/// the media; the data stage at the cores).
#[inline]
fn token(io: u32, flag: bool) -> u64 {
    (u64::from(io) << 1) | u64::from(flag)
}

#[inline]
fn untoken(t: u64) -> (u32, bool) {
    ((t >> 1) as u32, t & 1 == 1)
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
    pub stats: IoStats,
    pub issued: u64,
    pub completed: u64,
    pub series: IoSeries,
    pub reads: u64,
    pub writes: u64,
}

pub(crate) struct Path {
    pub name: String,
    pub link: usize,
    pub array: usize,
    pub stats: IoStats,
    pub issued: u64,
    pub completed: u64,
    pub series: IoSeries,
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
    pub stats: IoStats,
    pub issued: u64,
    pub completed: u64,
    pub series: IoSeries,
    pub psp_log: Vec<PspEvent>,
    /// DQLEN, ACTV and QUED, as esxtop names them.
    pub queue_series: [SeriesId; 3],
    pub dqlen_sum: f64,
    pub actv_sum: f64,
    pub qued_sum: f64,
    pub windows: u64,
    /// Summed time in the kernel queue (KAVG) and on the path (DAVG), over measured completions.
    pub kernel_ns_sum: u128,
    pub device_ns_sum: u128,
    pub qfull_seen: u64,
    pub flow: Option<DeviceFlow>,
    /// When the scheduler holds requests back (mClock limits): the wake-up already armed.
    pub wake_armed_ns: Option<SimTime>,
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
    pub stats: IoStats,
    pub received: u64,
    pub completed: u64,
    pub replicated_ios: u64,
    pub series: IoSeries,
    pub cores: Option<Cores>,
    /// Per core: (iops, util) series, owned requests and busy time at the last sample.
    pub core_series: Vec<[SeriesId; 2]>,
    pub core_last: Vec<(u64, u128)>,
    pub cache: Option<ReadCache>,
    /// Target queue: host commands the array holds at once (`received - completed`) before
    /// answering QUEUE FULL.
    pub max_outstanding: Option<u32>,
    pub qfull_sent: u64,
}

pub(crate) struct Volume {
    pub name: String,
    pub replication: Option<usize>,
    pub qos: Option<QosState>,
    /// Host-level flow control of the hosts' devices for this volume: its kind and law.
    pub flow: Option<(&'static str, WindowLaw)>,
}

pub struct World {
    pub(crate) q: EventQueue,
    pub(crate) ios: Slab,
    pub(crate) jobs: Vec<Job>,
    pub(crate) vms: Vec<Vm>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) devices: Vec<Device>,
    pub(crate) links: Vec<crate::fabric::Link>,
    pub(crate) arrays: Vec<Array>,
    pub(crate) volumes: Vec<Volume>,
    pub(crate) replications: Vec<crate::array::replication::Replication>,
    pub(crate) series: TimeSeries,
    pub(crate) end_ns: SimTime,
    pub(crate) warmup_ns: SimTime,
    pub(crate) sample_ns: SimTime,
    pub(crate) last_sample_ns: SimTime,
    /// Reused buffer for what a disk group asks of the engine.
    disk_out: DiskOut,
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
                    cache: a.cache,
                    max_outstanding: a.max_outstanding,
                    qfull_sent: 0,
                    rng: RngStream::new(seed, &format!("array/{}", a.name)),
                    series: IoSeries::new(&mut series, &format!("array/{}", a.name)),
                    name: a.name,
                    backend: *a.backend,
                    stats: IoStats::new(),
                    received: 0,
                    completed: 0,
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
                states: d.paths.iter().map(|p| PathState { alua: p.alua, up: true, outstanding: 0 }).collect(),
                paths: d
                    .paths
                    .into_iter()
                    .map(|p| Path { series: IoSeries::new(&mut series, &format!("path/{}", p.name)), name: p.name, link: p.link, array: p.array, stats: IoStats::new(), issued: 0, completed: 0 })
                    .collect(),
                series: IoSeries::new(&mut series, &format!("device/{}", d.name)),
                queue_series: ["dqlen", "actv", "qued"].map(|m| series.series(&format!("device/{}", d.name), m)),
                name: d.name,
                host: d.host,
                label: d.label,
                q: d.queue,
                psp,
                stats: IoStats::new(),
                issued: 0,
                completed: 0,
                psp_log: vec![],
                dqlen_sum: 0.0,
                actv_sum: 0.0,
                qued_sum: 0.0,
                windows: 0,
                kernel_ns_sum: 0,
                device_ns_sum: 0,
                qfull_seen: 0,
                flow: None,
                wake_armed_ns: None,
            });
        }
        let volumes: Vec<Volume> = t
            .volumes
            .into_iter()
            .map(|v| Volume { flow: v.flow_control.map(|f| (f.kind(), *f.law())), name: v.name, replication: v.replication, qos: v.qos.map(QosState::new) })
            .collect();
        // A device of a volume with flow control runs the law for its host; its VMs' shares make β.
        for v in &t.vms {
            let Some((_, law)) = volumes[v.volume].flow else { continue };
            let dev = &mut devices[v.device];
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
        let vms = t
            .vms
            .into_iter()
            .map(|v| Vm {
                series: IoSeries::new(&mut series, &format!("vm/{}", v.name)),
                name: v.name,
                host: v.host,
                device: v.device,
                volume: v.volume,
                world: v.world,
                disk_q: SlotQueue::new(v.disk_queue_depth),
                adapter_q: SlotQueue::new(v.adapter_queue_depth),
                stats: IoStats::new(),
                issued: 0,
                completed: 0,
                reads: 0,
                writes: 0,
            })
            .collect();
        let end_ns = t.run.duration_ns;
        let jobs = t
            .jobs
            .into_iter()
            .map(|j| {
                let depth = match j.workload.pacing() {
                    Pacing::Closed { depth } | Pacing::Open { depth, .. } | Pacing::Timed { depth } => depth,
                };
                let stop_ns = j.workload.runtime_ns().map_or(end_ns, |r| r.min(end_ns));
                let measured_from_ns = j.workload.measured_from_ns().max(t.run.warmup_ns);
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
                    stop_ns,
                    measured_from_ns,
                    pause_ns: None,
                    read: IoStats::new(),
                    write: IoStats::new(),
                }
            })
            .collect();
        Ok(Self {
            q: EventQueue::new(),
            ios: Slab::default(),
            jobs,
            vms,
            hosts,
            devices,
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
        })
    }

    /// Runs to the end of the scenario's duration, or until `control` asks to stop (checked at
    /// each sample). Requests still in flight at the end stay counted as in flight. Returns false
    /// when stopped early.
    pub fn run(&mut self, control: Option<&RunControl>) -> bool {
        for j in 0..self.jobs.len() {
            let start = self.jobs[j].workload.start_ns();
            match self.jobs[j].workload.pacing() {
                Pacing::Closed { .. } if start == 0 => self.fill(j),
                Pacing::Closed { .. } | Pacing::Open { .. } => self.q.schedule_at(start, pack(Ev::JobArrival, j as u32)),
                Pacing::Timed { .. } => self.schedule_timed_arrival(j, start),
            }
        }
        if self.sample_ns > 0 {
            self.q.schedule_at(self.sample_ns.min(self.end_ns), pack(Ev::Sample, 0));
        }
        for (v, volume) in self.volumes.iter().enumerate() {
            if let Some((_, law)) = volume.flow {
                self.q.schedule_at(law.period_ns, pack(Ev::FlowPeriod, v as u32));
            }
        }
        while let Some(p) = self.q.pop_until(self.end_ns) {
            let (ev, i) = unpack(p);
            match ev {
                Ev::JobArrival => self.job_arrival(i as usize),
                Ev::CmdAtArray => self.cmd_at_array(i),
                Ev::XferRdyAtHost => self.xfer_rdy_at_host(i),
                Ev::DataAtArray => self.data_at_array(i),
                Ev::MediaDone => self.media_done(i, false),
                Ev::ReplAtPeer => self.repl_at_peer(i),
                Ev::PeerMediaDone => self.media_done(i, true),
                Ev::ReplAckAtOrigin => self.array_step_done(i),
                Ev::StatusAtHost => self.status_at_host(i),
                Ev::QosRelease => self.qos_release(i as usize),
                Ev::OwnerCoreDone => self.core_done(i, false),
                Ev::DataCoreDone => self.core_done(i, true),
                Ev::CacheHitDone => self.array_step_done(i),
                Ev::QfullAtHost => self.qfull_at_host(i),
                Ev::Retry => self.enter_adapter(i),
                Ev::DiskDone => self.disk_done(i),
                Ev::FlowPeriod => self.flow_period(i as usize),
                Ev::DeviceWake => {
                    let d = i as usize;
                    if self.devices[d].wake_armed_ns == Some(self.q.now()) {
                        self.devices[d].wake_armed_ns = None;
                    }
                    self.pump_device(d);
                }
                Ev::Sample => {
                    self.sample();
                    if let Some(c) = control {
                        c.publish(self.q.now(), self.end_ns);
                        if c.cancelled() {
                            return false;
                        }
                    }
                }
            }
        }
        self.q.advance_to(self.end_ns);
        true
    }

    pub fn events(&self) -> u64 {
        self.q.events_processed()
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    // ---- workload ------------------------------------------------------------------------

    fn schedule_timed_arrival(&mut self, j: usize, from_ns: SimTime) {
        let job = &mut self.jobs[j];
        if let Some(at) = job.workload.next_arrival_ns(from_ns, &mut job.rng) {
            self.q.schedule_at(at.max(from_ns), pack(Ev::JobArrival, j as u32));
        }
    }

    /// A closed-loop job (re)starts: it issues up to its depth.
    fn fill(&mut self, j: usize) {
        self.jobs[j].pause_ns = None;
        while self.jobs[j].outstanding < self.jobs[j].depth && self.q.now() < self.jobs[j].stop_ns {
            self.issue(j);
        }
    }

    fn job_arrival(&mut self, j: usize) {
        let now = self.q.now();
        if now >= self.jobs[j].stop_ns {
            return;
        }
        match self.jobs[j].workload.pacing() {
            Pacing::Open { rate_iops, poisson, .. } => {
                let mean_ns = 1e9 / rate_iops;
                let gap = if poisson { self.jobs[j].rng.exponential(mean_ns) } else { mean_ns };
                self.q.schedule_in((gap.round() as u64).max(1), pack(Ev::JobArrival, j as u32));
            }
            Pacing::Timed { .. } => self.schedule_timed_arrival(j, now),
            // A closed-loop job's start, or the end of its pause.
            Pacing::Closed { .. } => return self.fill(j),
        }
        if self.jobs[j].outstanding < self.jobs[j].depth {
            self.issue(j);
        } else {
            self.jobs[j].backlog += 1;
        }
    }

    fn issue(&mut self, j: usize) {
        let now = self.q.now();
        let job = &mut self.jobs[j];
        let Some(r) = job.workload.next(&mut job.rng) else {
            // The workload is done (end of a trace, fio size without time_based): no more issues.
            job.stop_ns = now;
            return;
        };
        job.outstanding += 1;
        job.issued += 1;
        let vm = job.vm;
        let mut request = Io::new(r.op, r.size_bytes, r.offset_bytes, j as u32, now);
        request.volume = self.vms[vm].volume as u32;
        request.world = self.vms[vm].world;
        let io = self.ios.insert(request);
        self.vms[vm].issued += 1;
        if self.vms[vm].disk_q.enter(now, io) {
            self.enter_vm_adapter(io);
        }
    }

    // ---- VM and host queues --------------------------------------------------------------

    fn vm_of(&self, io: u32) -> usize {
        self.jobs[self.ios.get(io).job as usize].vm
    }

    fn enter_vm_adapter(&mut self, io: u32) {
        let vm = self.vm_of(io);
        if self.vms[vm].adapter_q.enter(self.q.now(), io) {
            self.split(io);
        }
    }

    /// Cuts a request at Disk.DiskMaxIOSize; each piece enters the device queue.
    fn split(&mut self, io: u32) {
        let vm = self.vm_of(io);
        let device = self.vms[vm].device;
        let max = self.hosts[self.devices[device].host].disk_max_io_size_bytes;
        self.ios.get_mut(io).device = device as u32;
        self.cut(io, max, false, Self::enter_device);
    }

    /// Cuts `io` into pieces of at most `max_bytes` (children that inherit its place on the path)
    /// and hands each to `next`; a request that fits goes to `next` whole. `wire` marks pieces cut
    /// below the device queue.
    fn cut(&mut self, io: u32, max_bytes: u64, wire: bool, next: fn(&mut Self, u32)) {
        let r = *self.ios.get(io);
        if u64::from(r.size_bytes) <= max_bytes {
            return next(self, io);
        }
        let max = max_bytes as u32;
        let pieces = r.size_bytes.div_ceil(max);
        self.ios.get_mut(io).children_left = pieces;
        for k in 0..pieces {
            let mut piece = r;
            piece.size_bytes = max.min(r.size_bytes - k * max);
            piece.offset_bytes = r.offset_bytes + u64::from(k * max);
            piece.parent = io;
            piece.wire = wire;
            piece.children_left = 0;
            let p = self.ios.insert(piece);
            next(self, p);
        }
    }

    fn enter_device(&mut self, io: u32) {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let r = self.ios.get_mut(io);
        r.stage = Stage::Device;
        r.t_device = now;
        let waiting = Waiting { io, world: r.world, size_bytes: r.size_bytes, offset_bytes: r.offset_bytes };
        self.devices[d].issued += 1;
        if let Some(flow) = self.devices[d].flow.as_mut() {
            flow.world_busy[waiting.world as usize] = true;
        }
        match self.devices[d].q.arrive(now, waiting) {
            Some(w) => self.dispatch(w.io),
            // Queued; a world-capped device may still let another world's request through.
            None => self.pump_device(d),
        }
    }

    /// Dispatches what the device's scheduler lets through.
    fn pump_device(&mut self, d: usize) {
        let now = self.q.now();
        while let Some(w) = self.devices[d].q.next(now) {
            self.dispatch(w.io);
        }
        // A scheduler holding requests back (mClock limits) says when the next may go.
        if let Some(at) = self.devices[d].q.wake_at() {
            let dev = &mut self.devices[d];
            if dev.wake_armed_ns.is_none_or(|armed| at < armed) {
                dev.wake_armed_ns = Some(at);
                self.q.schedule_at(at, pack(Ev::DeviceWake, d as u32));
            }
        }
    }

    /// The device has a slot for `io`: the PSP picks its path; the request is cut at the adapter's
    /// max I/O size and each piece waits for the host adapter.
    fn dispatch(&mut self, io: u32) {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let size = self.ios.get(io).size_bytes;
        let dev = &mut self.devices[d];
        let p = dev.psp.select(now, size, &dev.states, &mut dev.psp_log).expect("scenario validation guarantees a usable path");
        dev.states[p].outstanding += 1;
        dev.paths[p].issued += 1;
        let host = dev.host;
        let r = self.ios.get_mut(io);
        r.path = p as u32;
        r.stage = Stage::Path;
        r.t_dispatch = now;
        let max = self.hosts[host].adapter_max_io_size_bytes;
        self.cut(io, max, true, Self::enter_adapter);
    }

    fn enter_adapter(&mut self, io: u32) {
        let host = self.devices[self.ios.get(io).device as usize].host;
        if self.hosts[host].adapter_q.enter(self.q.now(), io) {
            self.send_command(io);
        }
    }

    // ---- fabric and array ----------------------------------------------------------------

    fn path_link(&self, io: u32) -> usize {
        let r = self.ios.get(io);
        self.devices[r.device as usize].paths[r.path as usize].link
    }

    fn send_command(&mut self, io: u32) {
        let now = self.q.now();
        let link = self.path_link(io);
        let at = self.links[link].dirs[OUTBOUND].send(now, 0);
        self.q.schedule_at(at, pack(Ev::CmdAtArray, io));
    }

    fn cmd_at_array(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = self.devices[r.device as usize].paths[r.path as usize].array;
        let arr = &mut self.arrays[a];
        if arr.max_outstanding.is_some_and(|m| arr.received - arr.completed >= u64::from(m)) {
            // Target queue full: the command is refused with QUEUE FULL status.
            arr.qfull_sent += 1;
            let link = self.path_link(io);
            let at = self.links[link].dirs[INBOUND].send(now, 0);
            self.q.schedule_at(at, pack(Ev::QfullAtHost, io));
            return;
        }
        arr.received += 1;
        let rm = self.ios.get_mut(io);
        rm.array = a as u32;
        rm.t_array = now;
        let v = r.volume as usize;
        if let Some(qos) = self.volumes[v].qos.as_mut() {
            if !qos.arrive(now, io, u64::from(r.size_bytes)) {
                self.arm_qos_timer(v);
                return;
            }
        }
        self.serve_at_array(io);
    }

    /// A QoS-held request may go on.
    fn qos_release(&mut self, v: usize) {
        let now = self.q.now();
        let Self { volumes, ios, .. } = self;
        let qos = volumes[v].qos.as_mut().expect("QoS timer of a volume with QoS");
        qos.timer_pending = false;
        if let Some(io) = qos.release(now, |i| u64::from(ios.get(i).size_bytes)) {
            qos.held_ns_sum += u128::from(now - ios.get(io).t_array);
            self.serve_at_array(io);
        }
        self.arm_qos_timer(v);
    }

    fn arm_qos_timer(&mut self, v: usize) {
        let qos = self.volumes[v].qos.as_mut().expect("volume with QoS");
        if let (false, Some(at)) = (qos.timer_pending, qos.next_release_ns()) {
            qos.timer_pending = true;
            self.q.schedule_at(at, pack(Ev::QosRelease, v as u32));
        }
    }

    /// The array takes the command on: a read goes to the media, a write asks for its data.
    fn serve_at_array(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = r.array as usize;
        match r.op {
            Op::Read => {
                self.ios.get_mut(io).array_pending = 1;
                self.array_work(a, io);
            }
            Op::Write => {
                let link = self.path_link(io);
                let at = self.links[link].dirs[INBOUND].send(now, 0);
                self.q.schedule_at(at, pack(Ev::XferRdyAtHost, io));
            }
        }
    }

    fn xfer_rdy_at_host(&mut self, io: u32) {
        let link = self.path_link(io);
        let bytes = u64::from(self.ios.get(io).size_bytes);
        let at = self.links[link].dirs[OUTBOUND].send(self.q.now(), bytes);
        self.q.schedule_at(at, pack(Ev::DataAtArray, io));
    }

    fn data_at_array(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = r.array as usize;
        let mut pending = 1;
        if let Some((rep, _, dir)) = self.peer(&r) {
            let at = self.replications[rep].link.dirs[dir].send(now, u64::from(r.size_bytes));
            self.q.schedule_at(at, pack(Ev::ReplAtPeer, io));
            pending += 1;
        }
        self.ios.get_mut(io).array_pending = pending;
        self.array_work(a, io);
    }

    /// The receiving array's own work on a request: its cores (when modelled), then the cache or
    /// the media.
    fn array_work(&mut self, a: usize, io: u32) {
        let Some(cores) = self.arrays[a].cores.as_mut() else { return self.after_cores(a, io) };
        let owner = cores.owner(self.ios.get(io).offset_bytes);
        cores.owned[owner] += 1;
        self.core_arrive(a, owner, io, false);
    }

    /// Core tokens: request index and stage (owner or data).
    fn core_arrive(&mut self, a: usize, core: usize, io: u32, data_stage: bool) {
        let now = self.q.now();
        let cores = self.arrays[a].cores.as_mut().expect("cores");
        if cores.centres[core].arrive(now, token(io, data_stage), false) {
            self.schedule_core_done(a, io, data_stage);
        }
    }

    fn schedule_core_done(&mut self, a: usize, io: u32, data_stage: bool) {
        let cores = self.arrays[a].cores.as_ref().expect("cores");
        let (time, ev) = if data_stage { (cores.data_time_ns, Ev::DataCoreDone) } else { (cores.owner_time_ns, Ev::OwnerCoreDone) };
        self.q.schedule_in(time, pack(ev, io));
    }

    fn core_done(&mut self, io: u32, data_stage: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = r.array as usize;
        let cores = self.arrays[a].cores.as_mut().expect("cores");
        let core = if data_stage { cores.data_core(r.offset_bytes) } else { cores.owner(r.offset_bytes) };
        let has_data_stage = cores.data_time_ns > 0;
        if let Some(next) = cores.centres[core].depart(now) {
            let (io, data_stage) = untoken(next);
            self.schedule_core_done(a, io, data_stage);
        }
        if !data_stage && has_data_stage {
            let data_core = self.arrays[a].cores.as_ref().expect("cores").data_core(r.offset_bytes);
            self.core_arrive(a, data_core, io, true);
        } else {
            self.after_cores(a, io);
        }
    }

    /// A read that hits the cache is served from it; everything else goes to the media.
    fn after_cores(&mut self, a: usize, io: u32) {
        let r = *self.ios.get(io);
        if let Some(cache) = self.arrays[a].cache.as_mut() {
            let hit = cache.access(r.offset_bytes, u64::from(r.size_bytes), r.op == Op::Read);
            if hit && r.op == Op::Read {
                let hit_ns = cache.hit_ns;
                self.q.schedule_in(hit_ns, pack(Ev::CacheHitDone, io));
                return;
            }
        }
        self.start_media(a, io, false);
    }

    fn start_media(&mut self, a: usize, io: u32, peer: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        match &mut self.arrays[a].backend {
            Backend::Servers { centre, .. } => {
                // Volumes running below their QoS minimum are served first when the media is contended.
                let priority = !peer && self.volumes[r.volume as usize].qos.as_ref().is_some_and(QosState::below_min);
                if centre.arrive(now, token(io, peer), priority) {
                    self.schedule_media_done(a, io, peer);
                }
            }
            Backend::Disks(group) => {
                group.submit(now, token(io, peer), r.op, r.offset_bytes, r.size_bytes, &mut self.disk_out);
                self.apply_disk_out(a);
            }
        }
    }

    fn schedule_media_done(&mut self, a: usize, io: u32, peer: bool) {
        let r = self.ios.get(io);
        let (op, size) = (r.op, r.size_bytes);
        let arr = &mut self.arrays[a];
        let Backend::Servers { media, .. } = &mut arr.backend else { unreachable!("only service centres time requests themselves") };
        let service = media.service_ns(op, size, &mut arr.rng);
        let ev = if peer { Ev::PeerMediaDone } else { Ev::MediaDone };
        self.q.schedule_in(service, pack(ev, io));
    }

    /// A disk of array `a` finished an operation.
    fn disk_done(&mut self, index: u32) {
        let (a, disk) = ((index >> DISK_BITS) as usize, index & ((1 << DISK_BITS) - 1));
        let Backend::Disks(group) = &mut self.arrays[a].backend else { unreachable!("disk events come from disk groups") };
        group.disk_done(self.q.now(), disk, &mut self.disk_out);
        self.apply_disk_out(a);
    }

    /// Arms the disk group's timers and schedules the requests it finished.
    fn apply_disk_out(&mut self, a: usize) {
        for &(at, disk) in &self.disk_out.timers {
            self.q.schedule_at(at, pack(Ev::DiskDone, ((a as u32) << DISK_BITS) | disk));
        }
        for &(at, t) in &self.disk_out.done {
            let (io, peer) = untoken(t);
            self.q.schedule_at(at, pack(if peer { Ev::PeerMediaDone } else { Ev::MediaDone }, io));
        }
        self.disk_out.timers.clear();
        self.disk_out.done.clear();
    }

    /// For a request to a replicated volume: the replication pair, the receiving array's peer,
    /// and the link direction towards the peer.
    fn peer(&self, r: &Io) -> Option<(usize, usize, usize)> {
        let rep = self.volumes[r.volume as usize].replication?;
        let (peer, dir) = self.replications[rep].peer_of(r.array as usize);
        Some((rep, peer, dir))
    }

    fn repl_at_peer(&mut self, io: u32) {
        let (_, peer, _) = self.peer(self.ios.get(io)).expect("replicated");
        self.start_media(peer, io, true);
    }

    fn media_done(&mut self, io: u32, peer: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let replica = if peer { self.peer(&r) } else { None };
        let a = replica.map_or(r.array as usize, |(_, p, _)| p);
        if let Backend::Servers { centre, .. } = &mut self.arrays[a].backend {
            if let Some(next) = centre.depart(now) {
                let (io, peer) = untoken(next);
                self.schedule_media_done(a, io, peer);
            }
        }
        if let Some((rep, _, dir_to_peer)) = replica {
            self.arrays[a].replicated_ios += 1;
            let at = self.replications[rep].link.dirs[1 - dir_to_peer].send(now, 0);
            self.q.schedule_at(at, pack(Ev::ReplAckAtOrigin, io));
        } else {
            self.array_step_done(io);
        }
    }

    /// One of the steps the array waits for (local store, peer ack) is done; send status when all are.
    fn array_step_done(&mut self, io: u32) {
        let now = self.q.now();
        let r = self.ios.get_mut(io);
        r.array_pending -= 1;
        if r.array_pending > 0 {
            return;
        }
        let r = *r;
        let a = r.array as usize;
        let measured = now >= self.warmup_ns;
        self.arrays[a].completed += 1;
        self.arrays[a].stats.record(now - r.t_array, u64::from(r.size_bytes), measured);
        self.ios.get_mut(io).array = NONE;
        let link = self.path_link(io);
        let bytes = if r.op == Op::Read { u64::from(r.size_bytes) } else { 0 };
        let at = self.links[link].dirs[INBOUND].send(now, bytes);
        self.q.schedule_at(at, pack(Ev::StatusAtHost, io));
    }

    // ---- completion ----------------------------------------------------------------------

    /// QUEUE FULL came back: free the adapter slot, tell the device (adaptive depth), and retry
    /// the command after the host's retry delay.
    fn qfull_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let host = self.devices[d].host;
        if let Some(next) = self.hosts[host].adapter_q.leave(now) {
            self.send_command(next);
        }
        self.devices[d].q.note_qfull(now);
        self.devices[d].qfull_seen += 1;
        self.q.schedule_in(self.hosts[host].qfull_retry_ns, pack(Ev::Retry, io));
    }

    fn status_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let host = self.devices[r.device as usize].host;
        if let Some(next) = self.hosts[host].adapter_q.leave(now) {
            self.send_command(next);
        }
        if !r.wire {
            self.device_done(io);
            return;
        }
        self.ios.remove(io);
        let parent = self.ios.get_mut(r.parent);
        parent.children_left -= 1;
        if parent.children_left == 0 {
            self.device_done(r.parent);
        }
    }

    /// A device-level request is back (all its pieces): free its device slot, record the path
    /// and device figures, and complete the VM request (or its part of it).
    fn device_done(&mut self, io: u32) {
        let now = self.q.now();
        let measured = now >= self.warmup_ns;
        let r = *self.ios.get(io);
        let d = r.device as usize;
        let p = r.path as usize;
        let dev = &mut self.devices[d];
        dev.states[p].outstanding -= 1;
        dev.paths[p].completed += 1;
        dev.paths[p].stats.record(now - r.t_dispatch, u64::from(r.size_bytes), measured);
        dev.psp.on_complete(now, p, now - r.t_dispatch, r.size_bytes);
        dev.completed += 1;
        dev.stats.record(now - r.t_device, u64::from(r.size_bytes), measured);
        if measured {
            dev.kernel_ns_sum += u128::from(r.t_dispatch - r.t_device);
            dev.device_ns_sum += u128::from(now - r.t_dispatch);
        }
        if let Some(flow) = dev.flow.as_mut() {
            flow.world_busy[r.world as usize] = true;
            flow.period_latency_ns_sum += u128::from(now - r.t_dispatch);
            flow.period_ios += 1;
        }
        dev.q.done(now, r.world);
        self.pump_device(d);
        if r.parent == NONE {
            self.complete(io);
        } else {
            self.ios.remove(io);
            let parent = self.ios.get_mut(r.parent);
            parent.children_left -= 1;
            if parent.children_left == 0 {
                self.complete(r.parent);
            }
        }
    }

    /// A VM-level request is done: free its VM queue slots, record it, let the job go on.
    fn complete(&mut self, io: u32) {
        let now = self.q.now();
        let measured = now >= self.warmup_ns;
        let r = *self.ios.get(io);
        self.ios.remove(io);
        let j = r.job as usize;
        let vm = self.jobs[j].vm;
        if let Some(next) = self.vms[vm].adapter_q.leave(now) {
            self.split(next);
        }
        if let Some(next) = self.vms[vm].disk_q.leave(now) {
            self.enter_vm_adapter(next);
        }
        let latency = now - r.t_issue;
        let bytes = u64::from(r.size_bytes);
        let v = &mut self.vms[vm];
        v.completed += 1;
        v.stats.record(latency, bytes, measured);
        self.hosts[v.host].stats.record(latency, bytes, measured);
        let job = &mut self.jobs[j];
        job.outstanding -= 1;
        job.completed += 1;
        let job_measured = now >= job.measured_from_ns;
        match r.op {
            Op::Read => {
                job.read.record(latency, bytes, job_measured);
                if measured {
                    v.reads += 1;
                }
            }
            Op::Write => {
                job.write.record(latency, bytes, job_measured);
                if measured {
                    v.writes += 1;
                }
            }
        }
        if now < job.stop_ns {
            match job.workload.pacing() {
                Pacing::Closed { .. } => {
                    if job.pause_ns.is_none() {
                        job.pause_ns = job.workload.think_ns(r.t_issue, now);
                    }
                    match job.pause_ns {
                        None => self.issue(j),
                        Some(pause) if job.outstanding == 0 => self.q.schedule_in(pause, pack(Ev::JobArrival, j as u32)),
                        Some(_) => {}
                    }
                }
                Pacing::Open { .. } | Pacing::Timed { .. } if job.backlog > 0 => {
                    job.backlog -= 1;
                    self.issue(j);
                }
                Pacing::Open { .. } | Pacing::Timed { .. } => {}
            }
        }
    }

    // ---- host-level flow control ---------------------------------------------------------

    /// End of a flow-control period of volume `v`: every host's device for it publishes its mean
    /// device latency and I/O count, reads the I/O-weighted average of all of them (PARDA's
    /// shared file), and updates its window.
    fn flow_period(&mut self, v: usize) {
        let now = self.q.now();
        let of_volume = |d: &Device| d.flow.as_ref().is_some_and(|f| f.volume == v);
        let (sum_ns, ios) = self.devices.iter().filter(|d| of_volume(d)).filter_map(|d| d.flow.as_ref()).fold((0u128, 0u64), |(s, n), f| (s + f.period_latency_ns_sum, n + f.period_ios));
        for d in 0..self.devices.len() {
            if !of_volume(&self.devices[d]) {
                continue;
            }
            let dev = &mut self.devices[d];
            let flow = dev.flow.as_mut().expect("controlled device");
            if ios > 0 {
                let busy_shares: u32 = flow.world_shares.iter().zip(&flow.world_busy).filter(|(_, busy)| **busy).map(|(shares, _)| shares).sum();
                flow.state.update(sum_ns as f64 / ios as f64, f64::from(busy_shares));
                dev.q.set_window(now, flow.state.depth());
            }
            flow.period_latency_ns_sum = 0;
            flow.period_ios = 0;
            flow.world_busy.fill(false);
            self.pump_device(d);
        }
        let (_, law) = self.volumes[v].flow.expect("volume with flow control");
        self.q.schedule_in(law.period_ns, pack(Ev::FlowPeriod, v as u32));
    }

    // ---- time series ---------------------------------------------------------------------

    fn sample(&mut self) {
        let now = self.q.now();
        let window = now - self.last_sample_ns;
        self.last_sample_ns = now;
        let secs = window as f64 / 1e9;
        let measured = now > self.warmup_ns;
        let Self { series, vms, devices, arrays, hosts, .. } = self;
        series.begin_sample(now);
        for v in vms.iter_mut() {
            v.series.sample(series, &mut v.stats, secs);
        }
        for (h, host) in hosts.iter_mut().enumerate() {
            host.series.sample(series, &mut host.stats, secs);
            if let Some(flow) = host.flow.as_mut() {
                // A host with several controlled devices: their windows add up; L is the first one's.
                let controlled = || devices.iter().filter(|d| d.host == h).filter_map(|d| d.flow.as_ref());
                let window: f64 = controlled().map(|f| f64::from(f.state.depth())).sum();
                let estimate_ms = controlled().next().map_or(0.0, |f| f.state.latency_estimate_ns / 1e6);
                let beta: f64 = controlled().map(|f| f.state.beta).sum();
                series.push(flow.series[0], window);
                series.push(flow.series[1], estimate_ms);
                series.push(flow.series[2], beta);
                if measured {
                    flow.window_sum += window;
                    flow.window_samples += 1;
                    flow.window_min = flow.window_min.min(window);
                    flow.window_max = flow.window_max.max(window);
                }
            }
        }
        for a in arrays.iter_mut() {
            a.series.sample(series, &mut a.stats, secs);
            if let Some(cores) = a.cores.as_mut() {
                for (k, centre) in cores.centres.iter_mut().enumerate() {
                    let busy = centre.busy_ns(now);
                    let (owned0, busy0) = a.core_last[k];
                    series.push(a.core_series[k][0], (cores.owned[k] - owned0) as f64 / secs);
                    series.push(a.core_series[k][1], (busy - busy0) as f64 / window.max(1) as f64);
                    a.core_last[k] = (cores.owned[k], busy);
                }
            }
        }
        for d in devices.iter_mut() {
            d.series.sample(series, &mut d.stats, secs);
            for p in &mut d.paths {
                p.series.sample(series, &mut p.stats, secs);
            }
            let (dqlen, actv, qued) = d.q.take_averages(now, window);
            d.dqlen_sum += dqlen;
            d.actv_sum += actv;
            d.qued_sum += qued;
            d.windows += 1;
            for (id, x) in d.queue_series.into_iter().zip([dqlen, actv, qued]) {
                series.push(id, x);
            }
        }
        let next = now + self.sample_ns;
        if next <= self.end_ns {
            self.q.schedule_at(next, pack(Ev::Sample, 0));
        }
    }
}
