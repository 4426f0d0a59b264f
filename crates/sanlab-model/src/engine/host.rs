//! The host's queues: VM disk and adapter queues, the split at the host's max I/O sizes, the
//! device queue and its scheduler, the PSP's path choice, the host adapter queue, and host-level
//! flow control (the device window each period).

use super::{pack, Device, Ev, World};
use crate::host::scheduler::Waiting;
use crate::io::Stage;

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
