//! The host's queues: VM disk and adapter queues, the split at the host's max I/O sizes, the
//! device queue and its scheduler, the PSP's path choice, the host adapter queue, and host-level
//! flow control (the device window each period).

use super::{pack, Ev, World};
use crate::host::scheduler::Waiting;
use crate::io::{Io, Op, Stage, NONE};
use crate::host::device_queue::DeviceQueue;
use crate::host::failover::{Failover, Reason};
use crate::host::flow_control::WindowState;
use crate::host::SlotQueue;
use crate::multipath::{Alua, PathSelector, PathState, PspEvent};
use sanlab_des::SimTime;
use crate::report::QueueReport;
use sanlab_metrics::{IoSeries, IoStats, SeriesId, Tally, TimeSeries};

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
    /// Summed over measured completions: time before the device queue (the VM's own queues),
    /// in it (KAVG), past it outside the array, and in the array's front end, cores, cache and
    /// media (those five together DAVG), which add up to each request's latency.
    pub stage_ns_sums: [u128; 7],
}

pub(crate) struct Path {
    pub name: String,
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
    pub psp: Box<dyn PathSelector>,
    pub states: Vec<PathState>,
    /// The link of each path, apart from the paths' figures: read for every command and frame,
    /// so a device's few links share one cache line.
    pub path_links: Vec<usize>,
    /// The PSP reads each path's controller load (`PathSelector::reads_controller_load`).
    pub psp_reads_load: bool,
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
    fn carry(&mut self, p: usize, size_bytes: u32, link_outstanding: &mut [u32], on: bool) {
        let (state, link) = (&mut self.states[p], &mut link_outstanding[self.path_links[p]]);
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

/// The host stage's state: the VMs, the hosts, their devices and paths, and the requests in
/// flight per link that the path selectors read. Other stages ask it for a path's link or array,
/// a host's failover timings, or tell it of a completion, a failure, a retry or a path's new
/// state; the report reads its entities.
pub(super) struct HostStage {
    vms: Vec<Vm>,
    hosts: Vec<Host>,
    devices: Vec<Device>,
    /// I/Os in flight per link, over every device's paths on it.
    link_outstanding: Vec<u32>,
}

impl HostStage {
    pub(super) fn new(vms: Vec<Vm>, hosts: Vec<Host>, devices: Vec<Device>, links: usize) -> Self {
        Self { vms, hosts, devices, link_outstanding: vec![0; links] }
    }

    /// The measured time starts at `now`: the VM and adapter queues' occupancy counts from here
    /// (the device queues' means take only the measured sample windows).
    pub(super) fn measure_from(&mut self, now: SimTime) {
        for v in &mut self.vms {
            v.disk_q.take_averages(now, 1);
            v.adapter_q.take_averages(now, 1);
        }
        for h in &mut self.hosts {
            h.adapter_q.take_averages(now, 1);
        }
    }

    /// Each VM's (disk queue, adapter queue) and each host's adapter queue over `span_ns` up to
    /// `now`, the measured time: call once, at the end.
    pub(super) fn queue_reports(&mut self, now: SimTime, span_ns: SimTime) -> (Vec<[QueueReport; 2]>, Vec<QueueReport>) {
        let report = |q: &mut SlotQueue| {
            let (actv_mean, qued_mean) = q.take_averages(now, span_ns);
            QueueReport { depth: q.capacity, actv_mean, qued_mean }
        };
        let vms = self.vms.iter_mut().map(|v| [report(&mut v.disk_q), report(&mut v.adapter_q)]).collect();
        let hosts = self.hosts.iter_mut().map(|h| report(&mut h.adapter_q)).collect();
        (vms, hosts)
    }

    pub(super) fn vms(&self) -> &[Vm] {
        &self.vms
    }

    pub(super) fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub(super) fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The link path `p` of device `d` runs over.
    #[inline]
    pub(super) fn link_of(&self, d: usize, p: usize) -> usize {
        self.devices[d].path_links[p]
    }

    /// The array path `p` of device `d` reaches.
    #[inline]
    pub(super) fn array_of(&self, d: usize, p: usize) -> usize {
        self.devices[d].paths[p].array
    }

    /// The host device `d` belongs to.
    #[inline]
    pub(super) fn host_of(&self, d: usize) -> usize {
        self.devices[d].host
    }

    /// Host `h`'s failover timings.
    #[inline]
    pub(super) fn failover(&self, h: usize) -> &Failover {
        &self.hosts[h].failover
    }

    pub(super) fn path_state(&self, d: usize, p: usize) -> PathState {
        self.devices[d].states[p]
    }

    /// What device `d` is: a volume's name, or its protocol endpoint's.
    pub(super) fn device_label(&self, d: usize) -> &str {
        &self.devices[d].label
    }

    /// Whether any path of device `d` can carry I/O.
    pub(super) fn any_path_carries_io(&self, d: usize) -> bool {
        self.devices[d].states.iter().any(|s| s.carries_io())
    }

    /// A command of device `d` left its host's adapter queue (answered, aborted, refused): the
    /// next waiting command, which takes the slot.
    #[inline]
    pub(super) fn adapter_leave(&mut self, d: usize, now: SimTime) -> Option<u32> {
        self.hosts[self.devices[d].host].adapter_q.leave(now)
    }

    /// Device `d` got QUEUE FULL (its adaptive depth hears of it); returns its host's wait before
    /// resending.
    pub(super) fn note_qfull(&mut self, d: usize, now: SimTime) -> u64 {
        let dev = &mut self.devices[d];
        dev.q.note_qfull(now);
        dev.qfull_seen += 1;
        self.hosts[dev.host].qfull_retry_ns
    }

    /// Device-level request `r` is back: its device slot and path are freed, the path, device
    /// and flow-control figures record it, and the PSP hears its latency.
    #[inline]
    pub(super) fn device_done(&mut self, r: &Io, now: SimTime, measured: bool) {
        let p = r.path as usize;
        let dev = &mut self.devices[r.device as usize];
        dev.carry(p, r.size_bytes, &mut self.link_outstanding, false);
        dev.paths[p].tally.done(now - r.t_dispatch, r.size_bytes, measured);
        dev.psp.on_complete(now, p, now - r.t_dispatch, r.size_bytes);
        dev.tally.done(now - r.t_device, r.size_bytes, measured);
        dev.by_direction.done(r.op, r.size_bytes, now - r.t_device, now - r.t_dispatch);
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
    }

    /// Device-level request `r` failed: its path (if it had one) and device count it, and its
    /// device slot is freed.
    #[cold]
    pub(super) fn device_failed(&mut self, r: &Io, reason: Reason, now: SimTime) {
        let dev = &mut self.devices[r.device as usize];
        if r.path != NONE {
            dev.carry(r.path as usize, r.size_bytes, &mut self.link_outstanding, false);
            dev.paths[r.path as usize].tally.failed += 1;
        }
        dev.tally.failed += 1;
        dev.failed_by_reason[reason as usize] += 1;
        dev.q.done(now, r.world);
    }

    /// VM request `r` of VM `vm` completed at `now`: the VM and its host record it.
    #[inline]
    pub(super) fn vm_done(&mut self, vm: usize, r: &Io, now: SimTime, measured: bool) {
        let latency_ns = now - r.t_issue;
        let v = &mut self.vms[vm];
        v.tally.done(latency_ns, r.size_bytes, measured);
        self.hosts[v.host].stats.record(latency_ns, u64::from(r.size_bytes), measured);
        if measured {
            match r.op {
                Op::Read => v.reads += 1,
                Op::Write => v.writes += 1,
            }
            let [front_end, cores, media] = r.array_ns;
            let in_array = front_end + cores + media;
            debug_assert!(r.t_issue <= r.t_device && r.t_device <= r.t_dispatch && in_array <= now - r.t_dispatch);
            let before_device = r.t_device - r.t_issue;
            let in_device_queue = r.t_dispatch - r.t_device;
            let outside_array = latency_ns - before_device - in_device_queue - in_array;
            let (cache, media) = if r.from_cache { (media, 0) } else { (0, media) };
            for (sum, ns) in v.stage_ns_sums.iter_mut().zip([before_device, in_device_queue, outside_array, front_end, cores, cache, media]) {
                *sum += u128::from(ns);
            }
        }
    }

    /// A VM request of VM `vm` failed.
    #[cold]
    pub(super) fn vm_failed(&mut self, vm: usize, reason: Reason) {
        let v = &mut self.vms[vm];
        v.tally.failed += 1;
        v.failed_by_reason[reason as usize] += 1;
    }

    /// A command of VM `vm` on path `p` of device `d` goes again: each counts it retried.
    #[cold]
    pub(super) fn count_retry(&mut self, d: usize, p: usize, vm: usize) {
        self.devices[d].retried += 1;
        self.devices[d].paths[p].retried += 1;
        self.vms[vm].retried += 1;
    }

    /// Since when device `d` has had no path to carry its requests (from `now` if it had one).
    #[cold]
    pub(super) fn no_path_since(&mut self, d: usize, now: SimTime) -> SimTime {
        *self.devices[d].no_path_since_ns.get_or_insert(now)
    }

    /// Marks every device path over link `l` alive or dead, logging each change (paths changing
    /// together in one event).
    #[cold]
    pub(super) fn set_link_paths(&mut self, l: usize, up: bool, now: SimTime) {
        let event = if up { "path alive" } else { "path dead" };
        for dev in &mut self.devices {
            for (p, &link) in dev.path_links.iter().enumerate() {
                if link == l && dev.states[p].up != up {
                    dev.states[p].up = up;
                    log_path_event(&mut dev.psp_log, now, event, p);
                }
            }
        }
    }

    /// Path `p` of device `d` comes alive or dies, logged as `event`.
    #[cold]
    pub(super) fn set_path_up(&mut self, d: usize, p: usize, up: bool, now: SimTime, event: &str) {
        self.devices[d].states[p].up = up;
        log_path_event(&mut self.devices[d].psp_log, now, event, p);
    }

    /// Every (device, path) over one of `links`, with its ALUA state.
    #[cold]
    pub(super) fn paths_over(&self, links: &[usize]) -> Vec<(usize, usize, Alua)> {
        let mut found = vec![];
        for (d, dev) in self.devices.iter().enumerate() {
            for (p, link) in dev.path_links.iter().enumerate() {
                if links.contains(link) {
                    found.push((d, p, dev.states[p].alua));
                }
            }
        }
        found
    }

    /// Path `p` of device `d` takes ALUA state `alua`, logged when it changes.
    #[cold]
    pub(super) fn set_alua(&mut self, d: usize, p: usize, alua: Alua, now: SimTime) {
        let dev = &mut self.devices[d];
        if dev.states[p].alua == alua {
            return;
        }
        dev.states[p].alua = alua;
        log_path_event(&mut dev.psp_log, now, &format!("ALUA {}", alua.name()), p);
    }

    /// Every VM's, host's and device's figures of the sample interval into `series`; `window`
    /// ns long (`secs` s), `measured` past the warm-up.
    pub(super) fn sample(&mut self, series: &mut TimeSeries, now: SimTime, window: SimTime, secs: f64, measured: bool) {
        let Self { vms, hosts, devices, .. } = self;
        for v in vms.iter_mut() {
            v.tally.sample(series, secs);
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
        for d in devices.iter_mut() {
            d.tally.sample(series, secs);
            for p in &mut d.paths {
                p.tally.sample(series, secs);
            }
            let (dqlen, actv, qued) = d.q.take_averages(now, window);
            // The report's means take the measured windows only (one straddling the warm-up's
            // end counts whole).
            if measured {
                d.dqlen_sum += dqlen;
                d.actv_sum += actv;
                d.qued_sum += qued;
                d.windows += 1;
            }
            for (id, x) in d.queue_series.into_iter().zip([dqlen, actv, qued]) {
                series.push(id, x);
            }
            d.by_direction.sample(series, secs);
        }
    }
}

/// Logs `event` on path `p`, joining the previous entry when it is the same event at the same time.
fn log_path_event(log: &mut Vec<PspEvent>, t_ns: SimTime, event: &str, p: usize) {
    match log.last_mut() {
        Some(last) if last.t_ns == t_ns && last.event == event => last.paths.push(p),
        _ => log.push(PspEvent { t_ns, event: event.into(), paths: vec![p] }),
    }
}

impl World {
    fn vm_of(&self, io: u32) -> usize {
        self.workload.vm_of(self.ios.get(io).job as usize)
    }

    /// A job issues `request` on VM `vm`: it takes the VM's volume and world, and enters the
    /// VM's virtual disk queue.
    pub(super) fn enter_vm(&mut self, vm: usize, mut request: Io) {
        let now = self.q.now();
        let v = &mut self.host.vms[vm];
        request.volume = v.volume as u32;
        request.world = v.world;
        let io = self.ios.insert(request);
        v.tally.issued += 1;
        if v.disk_q.enter(now, io) {
            self.enter_vm_adapter(io);
        }
    }

    fn enter_vm_adapter(&mut self, io: u32) {
        let vm = self.vm_of(io);
        if self.host.vms[vm].adapter_q.enter(self.q.now(), io) {
            self.split(io);
        }
    }

    /// A request of VM `vm` is done: its virtual adapter and disk slots go to the requests
    /// waiting for them.
    pub(super) fn free_vm_slots(&mut self, vm: usize) {
        let now = self.q.now();
        if let Some(next) = self.host.vms[vm].adapter_q.leave(now) {
            self.split(next);
        }
        if let Some(next) = self.host.vms[vm].disk_q.leave(now) {
            self.enter_vm_adapter(next);
        }
    }

    /// Cuts a request at Disk.DiskMaxIOSize; each piece enters the device queue.
    fn split(&mut self, io: u32) {
        let vm = self.vm_of(io);
        let device = self.host.vms[vm].device;
        let max = self.host.hosts[self.host.devices[device].host].disk_max_io_size_bytes;
        self.ios.get_mut(io).device = device as u32;
        self.cut(io, max, false, Self::enter_device);
    }

    /// Cuts `io` into pieces of at most `max_bytes` (children that inherit its place on the path)
    /// and hands each to `next`; a request that fits goes to `next` whole. `wire` marks pieces cut
    /// below the device queue.
    fn cut(&mut self, io: u32, max_bytes: u64, wire: bool, next: fn(&mut Self, u32)) {
        // Most requests fit: copy the request only to cut it.
        if u64::from(self.ios.get(io).size_bytes) <= max_bytes {
            return next(self, io);
        }
        let r = *self.ios.get(io);
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

    /// A piece `cut` made is back: it goes, and `whole` takes the parent once its last piece is back.
    pub(super) fn piece_done(&mut self, io: u32, parent: u32, whole: fn(&mut Self, u32)) {
        self.ios.remove(io);
        let p = self.ios.get_mut(parent);
        p.children_left -= 1;
        if p.children_left == 0 {
            whole(self, parent);
        }
    }

    fn enter_device(&mut self, io: u32) {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let r = self.ios.get_mut(io);
        r.stage = Stage::Device;
        r.t_device = now;
        let waiting = Waiting { io, world: r.world, size_bytes: r.size_bytes, offset_bytes: r.offset_bytes };
        let dev = &mut self.host.devices[d];
        dev.tally.issued += 1;
        if let Some(flow) = dev.flow.as_mut() {
            flow.world_busy[waiting.world as usize] = true;
        }
        match dev.q.arrive(now, waiting) {
            Some(w) => self.dispatch(w.io),
            // Queued; a world-capped device may still let another world's request through.
            None => self.pump_device(d),
        }
    }

    /// Dispatches what the device's scheduler lets through.
    pub(super) fn pump_device(&mut self, d: usize) {
        let now = self.q.now();
        while let Some(w) = self.host.devices[d].q.next(now) {
            self.dispatch(w.io);
        }
        // A scheduler holding requests back (mClock limits) says when the next may go.
        if let Some(at) = self.host.devices[d].q.wake_at() {
            let dev = &mut self.host.devices[d];
            if dev.wake_armed_ns.is_none_or(|armed| at < armed) {
                dev.wake_armed_ns = Some(at);
                self.q.schedule_at(at, pack(Ev::DeviceWake, d as u32));
            }
        }
    }

    /// The wake-up armed for device `d` is due: its scheduler may let requests through.
    pub(super) fn device_wake(&mut self, d: usize) {
        let dev = &mut self.host.devices[d];
        if dev.wake_armed_ns == Some(self.q.now()) {
            dev.wake_armed_ns = None;
        }
        self.pump_device(d);
    }

    /// The device has a slot for `io`: the PSP picks its path (`place`); the request is cut at the adapter's
    /// max I/O size and each piece waits for the host adapter.
    pub(super) fn dispatch(&mut self, io: u32) {
        if !self.place(io) {
            return;
        }
        let host = self.host.devices[self.ios.get(io).device as usize].host;
        let max = self.host.hosts[host].adapter_max_io_size_bytes;
        self.cut(io, max, true, Self::enter_adapter);
    }

    /// Puts `io` (a device-level request or a piece of one) on the path the PSP picks; the
    /// device-level request moves there, and the path it leaves counts it failed over. With no
    /// usable path it waits (`no_path`); returns false then.
    pub(super) fn place(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let HostStage { devices, link_outstanding, .. } = &mut self.host;
        let dev = &mut devices[r.device as usize];
        if dev.psp_reads_load {
            for (state, &link) in dev.states.iter_mut().zip(&dev.path_links) {
                state.controller_outstanding = link_outstanding[link];
            }
        }
        let Some(p) = dev.psp.select(now, r.size_bytes, &dev.states, &mut dev.psp_log) else {
            return self.no_path(io);
        };
        if dev.no_path_since_ns.is_some() {
            dev.no_path_since_ns = None;
        }
        let owner = if r.wire { r.parent } else { io };
        let (old, owner_bytes) = (self.ios.get(owner).path, self.ios.get(owner).size_bytes);
        if old as usize != p {
            if old != NONE {
                dev.carry(old as usize, owner_bytes, link_outstanding, false);
                dev.paths[old as usize].tally.failed += 1;
            }
            dev.carry(p, owner_bytes, link_outstanding, true);
            dev.paths[p].tally.issued += 1;
            let o = self.ios.get_mut(owner);
            o.path = p as u32;
            o.link = dev.path_links[p] as u32;
            o.stage = Stage::Path;
            o.t_dispatch = now;
        }
        let c = self.ios.get_mut(io);
        c.path = p as u32;
        c.link = dev.path_links[p] as u32;
        c.t_dispatch = now;
        true
    }

    pub(super) fn enter_adapter(&mut self, io: u32) {
        let host = self.host.devices[self.ios.get(io).device as usize].host;
        if self.host.hosts[host].adapter_q.enter(self.q.now(), io) {
            self.send_command(io);
        }
    }

    // ---- host-level flow control ---------------------------------------------------------

    /// End of a flow-control period of volume `v`: every host's device for it publishes its mean
    /// device latency and I/O count, reads the I/O-weighted average of all of them (PARDA's
    /// shared file), and updates its window.
    pub(super) fn flow_period(&mut self, v: usize) {
        let now = self.q.now();
        let of_volume = |d: &Device| d.flow.as_ref().is_some_and(|f| f.volume == v);
        let (sum_ns, ios) = self.host.devices.iter().filter(|d| of_volume(d)).filter_map(|d| d.flow.as_ref()).fold((0u128, 0u64), |(s, n), f| (s + f.period_latency_ns_sum, n + f.period_ios));
        for d in 0..self.host.devices.len() {
            if !of_volume(&self.host.devices[d]) {
                continue;
            }
            let dev = &mut self.host.devices[d];
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
        let (_, law) = self.array.flow(v).expect("volume with flow control");
        self.q.schedule_in(law.period_ns, pack(Ev::FlowPeriod, v as u32));
    }

    /// The run starts: each volume with host-level flow control arms its first period.
    pub(super) fn arm_flow_periods(&mut self) {
        for v in 0..self.array.volume_count() {
            if let Some((_, law)) = self.array.flow(v) {
                self.q.schedule_at(law.period_ns, pack(Ev::FlowPeriod, v as u32));
            }
        }
    }
}
