//! The world built from a topology: every stage's runtime state, wired in one place. Each entity's
//! series are registered here in a fixed order (hosts, arrays, devices and their paths, host flow
//! control, VMs), which is the order of the run's time series.

use super::array::{Array, ArrayStage, Volume};
use super::fabric::{FabricStage, LinkHealth};
use super::faults::{Change, FaultRun, FaultStage, Mirror, MirrorHealth};
use super::host::{Device, DeviceFlow, Host, HostFlow, HostStage, Path, Vm};
use super::media::{Media, MediaStage};
use super::sampling::SamplingStage;
use super::workload::{Job, WorkloadStage};
use super::World;
use crate::array::qos::QosState;
use crate::fault::Action;
use crate::host::flow_control::WindowState;
use crate::host::SlotQueue;
use crate::io::Slab;
use crate::multipath::PathState;
use crate::topology::{ArrayConfig, DeviceConfig, FaultConfig, HostConfig, JobConfig, Topology, VmConfig};
use sanlab_des::{EventQueue, RngStream, SimTime};
use sanlab_metrics::{IoSeries, IoStats, Tally, TimeSeries};

/// The steps of [`World::new`] that register series, in their order. A series' owner is the
/// index of its entity in its step (the VM whose device made its host's flow-control series),
/// so that parts run apart merge into the whole's order (`crate::parts`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum SeriesStep {
    Host,
    Array,
    Device,
    HostFlow,
    Vm,
}

pub(crate) const SERIES_STEPS: [SeriesStep; 5] = [SeriesStep::Host, SeriesStep::Array, SeriesStep::Device, SeriesStep::HostFlow, SeriesStep::Vm];

/// `series`, with what it registers next owned by entity `index` of `step`.
fn owned(series: &mut TimeSeries, step: SeriesStep, index: usize) -> &mut TimeSeries {
    series.set_owner(step as u8, index);
    series
}

impl World {
    /// Builds the runtime state. Fails if a device's PSP rejects its paths (e.g. an unknown
    /// preferred path); the message names the device.
    pub fn new(t: Topology) -> Result<Self, String> {
        let seed = t.run.seed;
        let mut series = TimeSeries::default();
        let mut hosts: Vec<Host> = t.hosts.into_iter().enumerate().map(|(k, h)| host(h, owned(&mut series, SeriesStep::Host, k))).collect();
        let (arrays, media): (Vec<Array>, Vec<Media>) = t.arrays.into_iter().enumerate().map(|(k, a)| array(a, seed, owned(&mut series, SeriesStep::Array, k))).unzip();
        let mut devices = t.devices.into_iter().enumerate().map(|(k, d)| device(d, owned(&mut series, SeriesStep::Device, k))).collect::<Result<Vec<_>, _>>()?;
        let volumes: Vec<Volume> = t
            .volumes
            .into_iter()
            .map(|v| Volume { flow: v.flow_control.map(|f| (f.kind(), *f.law())), name: v.name, replication: v.replication, qos: v.qos.map(QosState::new) })
            .collect();
        flow_control(&t.vms, &volumes, &mut devices, &mut hosts, &mut series);
        // A VM whose jobs measure from the run's warm-up, as it does, records exactly the I/Os of
        // its jobs' reads and writes: its histogram is theirs merged when reported, not kept
        // (a third of a large topology's memory).
        let mut own_histogram = vec![false; t.vms.len()];
        for j in &t.jobs {
            own_histogram[j.vm] |= j.plan.measured_from_ns > 0;
        }
        let vms = t.vms.into_iter().zip(own_histogram).enumerate().map(|(k, (v, own))| vm(v, own, owned(&mut series, SeriesStep::Vm, k))).collect();
        let end_ns = t.run.duration_ns;
        let mut health: Vec<LinkHealth> = t.links.iter().map(|_| LinkHealth { notice: false, down_ns: 0, checking: false, host: 0 }).collect();
        for d in &devices {
            for &link in &d.path_links {
                health[link].host = d.host;
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
        let jobs = t.jobs.into_iter().zip(waiters).map(|(j, waiters)| job(j, waiters, seed, end_ns, t.run.warmup_ns)).collect();
        let volume_count = volumes.len();
        Ok(Self {
            q: EventQueue::new(),
            ios: Slab::default(),
            warmup_ns: t.run.warmup_ns.min(end_ns),
            end_ns,
            timing_draws: 0,
            workload: WorkloadStage::new(jobs),
            host: HostStage::new(vms, hosts, devices, t.links.len()),
            fabric: FabricStage::new(t.links, health),
            array: ArrayStage::new(arrays, volumes),
            media: MediaStage::new(media, t.replications),
            faults: FaultStage::new(faults, mirrors, volume_count),
            recovery: Default::default(),
            sampling: SamplingStage::new(series, t.run.sample_interval_ns),
        })
    }
}

fn host(h: HostConfig, series: &mut TimeSeries) -> Host {
    Host {
        series: IoSeries::new(series, &format!("host/{}", h.name)),
        stats: IoStats::new(),
        flow: None,
        name: h.name,
        adapter_q: SlotQueue::new(h.adapter_queue_depth),
        disk_max_io_size_bytes: h.disk_max_io_size_bytes,
        adapter_max_io_size_bytes: h.adapter_max_io_size_bytes,
        qfull_retry_ns: h.qfull_retry_ns,
        failover: h.failover,
    }
}

/// An array's front end, and its back end (the media stage's).
fn array(a: ArrayConfig, seed: u64, series: &mut TimeSeries) -> (Array, Media) {
    let core_series = a.cores.as_ref().map_or(vec![], |c| (0..c.centres.len()).map(|k| ["iops", "util"].map(|m| series.series(&format!("core/{}/{}", a.name, c.name(k)), m))).collect());
    let core_count = a.cores.as_ref().map_or(0, |c| c.centres.len());
    let media = Media { backend: *a.backend, rng: RngStream::new(seed, &format!("array/{}", a.name)), replicated_ios: 0 };
    let front_end = Array {
        core_series,
        core_last: vec![(0, 0); core_count],
        cores: a.cores,
        controllers: a.controllers,
        cache: a.cache,
        max_outstanding: a.max_outstanding,
        qfull_sent: 0,
        hold_until_ns: 0,
        dead: false,
        tally: Tally::new(series, &format!("array/{}", a.name), true),
        name: a.name,
    };
    (front_end, media)
}

fn device(d: DeviceConfig, series: &mut TimeSeries) -> Result<Device, String> {
    let names: Vec<String> = d.paths.iter().map(|p| p.name.clone()).collect();
    let mut psp = d.psp;
    psp.attach(&names).map_err(|e| format!("device `{}`: {e}", d.name))?;
    Ok(Device {
        states: d.paths.iter().map(|p| PathState::new(p.alua)).collect(),
        path_links: d.paths.iter().map(|p| p.link).collect(),
        psp_reads_load: psp.reads_controller_load(),
        paths: d
            .paths
            .into_iter()
            .map(|p| Path { tally: Tally::new(series, &format!("path/{}", p.name), true), name: p.name, array: p.array, adapter: p.adapter, controller: p.controller, port: p.port, retried: 0 })
            .collect(),
        tally: Tally::new(series, &format!("device/{}", d.name), true),
        queue_series: ["dqlen", "actv", "qued"].map(|m| series.series(&format!("device/{}", d.name), m)),
        by_direction: super::by_direction::ByDirection::new(series, &format!("device/{}", d.name)),
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
    })
}

/// A device of a volume with flow control runs the law for its host; its VMs' shares make β.
fn flow_control(vms: &[VmConfig], volumes: &[Volume], devices: &mut [Device], hosts: &mut [Host], series: &mut TimeSeries) {
    for (k, v) in vms.iter().enumerate() {
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
            let series = owned(series, SeriesStep::HostFlow, k);
            host.flow = Some(HostFlow { series: ["window", "latency_estimate_ms", "beta"].map(|m| series.series(&entity, m)), window_sum: 0.0, window_samples: 0, window_min: f64::INFINITY, window_max: 0.0 });
        }
    }
    for d in devices {
        if let Some(f) = &d.flow {
            d.q.set_window(0, f.state.depth());
        }
    }
}

fn vm(v: VmConfig, own_histogram: bool, series: &mut TimeSeries) -> Vm {
    Vm {
        tally: Tally::new(series, &format!("vm/{}", v.name), own_histogram),
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
        stage_ns_sums: [0; 7],
    }
}

fn job(j: JobConfig, waiters: Vec<u32>, seed: u64, end_ns: SimTime, warmup_ns: SimTime) -> Job {
    let depth = j.plan.pacing.depth();
    let stop_ns = j.plan.runtime_ns.map_or(end_ns, |r| r.min(end_ns));
    let measured_from_ns = j.plan.measured_from_ns.max(warmup_ns);
    let rates = super::rates::JobRates::new(j.plan.rate_sampling, measured_from_ns);
    let sync = j.plan.sync_schedule;
    Job {
        rng: RngStream::new(seed, &format!("job/{}", j.name)),
        name: j.name,
        vm: j.vm,
        workload: j.workload,
        pacing: j.plan.pacing,
        plan: j.plan,
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
        sync,
        set: j.set,
        entry: j.entry,
        started: false,
        terminated: false,
        finished: false,
    }
}

/// The runtime form of an `[[event]]`: a latency change draws from its own streams,
/// `link/<path>/<out|in>/latency/event<k>`.
fn fault_run(k: usize, f: FaultConfig, links: &[crate::fabric::Link], seed: u64) -> FaultRun {
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
