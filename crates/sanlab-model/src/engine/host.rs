//! The host's queues: VM disk and adapter queues, the split at the host's max I/O sizes, the
//! device queue and its scheduler, the PSP's path choice, the host adapter queue, and host-level
//! flow control (the device window each period).

use super::{pack, Ev, World};
use crate::host::scheduler::Waiting;
use crate::io::{Stage, NONE};
use crate::host::device_queue::DeviceQueue;
use crate::host::failover::Failover;
use crate::host::flow_control::WindowState;
use crate::host::SlotQueue;
use crate::multipath::{PathSelector, PathState, PspEvent};
use sanlab_des::SimTime;
use sanlab_metrics::{IoSeries, IoStats, SeriesId, Tally};

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
    pub fn carry(&mut self, p: usize, size_bytes: u32, link_outstanding: &mut [u32], on: bool) {
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


/// Logs `event` on path `p`, joining the previous entry when it is the same event at the same time.
pub(super) fn log_path_event(log: &mut Vec<PspEvent>, t_ns: SimTime, event: &str, p: usize) {
    match log.last_mut() {
        Some(last) if last.t_ns == t_ns && last.event == event => last.paths.push(p),
        _ => log.push(PspEvent { t_ns, event: event.into(), paths: vec![p] }),
    }
}

impl World {
    fn vm_of(&self, io: u32) -> usize {
        self.jobs[self.ios.get(io).job as usize].vm
    }

    pub(super) fn enter_vm_adapter(&mut self, io: u32) {
        let vm = self.vm_of(io);
        if self.vms[vm].adapter_q.enter(self.q.now(), io) {
            self.split(io);
        }
    }

    /// Cuts a request at Disk.DiskMaxIOSize; each piece enters the device queue.
    pub(super) fn split(&mut self, io: u32) {
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
        self.devices[d].tally.issued += 1;
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
    pub(super) fn pump_device(&mut self, d: usize) {
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

    /// The device has a slot for `io`: the PSP picks its path (`place`); the request is cut at the adapter's
    /// max I/O size and each piece waits for the host adapter.
    pub(super) fn dispatch(&mut self, io: u32) {
        if !self.place(io) {
            return;
        }
        let host = self.devices[self.ios.get(io).device as usize].host;
        let max = self.hosts[host].adapter_max_io_size_bytes;
        self.cut(io, max, true, Self::enter_adapter);
    }

    /// Puts `io` (a device-level request or a piece of one) on the path the PSP picks; the
    /// device-level request moves there, and the path it leaves counts it failed over. With no
    /// usable path it waits (`no_path`); returns false then.
    pub(super) fn place(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let dev = &mut self.devices[r.device as usize];
        if dev.psp_reads_load {
            for (state, &link) in dev.states.iter_mut().zip(&dev.path_links) {
                state.controller_outstanding = self.link_outstanding[link];
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
                dev.carry(old as usize, owner_bytes, &mut self.link_outstanding, false);
                dev.paths[old as usize].tally.failed += 1;
            }
            dev.carry(p, owner_bytes, &mut self.link_outstanding, true);
            dev.paths[p].tally.issued += 1;
            let o = self.ios.get_mut(owner);
            o.path = p as u32;
            o.stage = Stage::Path;
            o.t_dispatch = now;
        }
        let c = self.ios.get_mut(io);
        c.path = p as u32;
        c.t_dispatch = now;
        true
    }

    pub(super) fn enter_adapter(&mut self, io: u32) {
        let host = self.devices[self.ios.get(io).device as usize].host;
        if self.hosts[host].adapter_q.enter(self.q.now(), io) {
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
}
