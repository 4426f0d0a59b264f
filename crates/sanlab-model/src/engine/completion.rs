//! The way back: status at the host adapter, the device-level request, then the VM request and
//! its job.

use super::{pack, Ev, World};
use crate::io::NONE;

impl World {
    /// QUEUE FULL came back: free the adapter slot, tell the device (adaptive depth), and retry
    /// the command after the host's retry delay.
    pub(super) fn qfull_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        if let Some(next) = self.host.adapter_leave(d, now) {
            self.send_command(next);
        }
        let retry_ns = self.host.note_qfull(d, now);
        self.q.schedule_in(retry_ns, pack(Ev::Retry, io));
    }

    pub(super) fn status_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        if let Some(next) = self.host.adapter_leave(r.device as usize, now) {
            self.send_command(next);
        }
        if r.wire {
            // The device-level request's time in the array is its piece's back last.
            let parent = self.ios.get_mut(r.parent);
            (parent.array_ns, parent.from_cache) = (r.array_ns, r.from_cache);
            self.piece_done(io, r.parent, Self::device_done);
        } else {
            self.device_done(io);
        }
    }

    /// A device-level request is back (all its pieces): free its device slot, record the path
    /// and device figures, and complete the VM request (or its part of it).
    pub(super) fn device_done(&mut self, io: u32) {
        if let Some(reason) = self.take_failure(io) {
            return self.device_failed(io, reason);
        }
        let now = self.q.now();
        let measured = now >= self.warmup_ns;
        let r = *self.ios.get(io);
        self.host.device_done(&r, now, measured);
        self.pump_device(r.device as usize);
        if r.parent == NONE {
            self.complete(io);
        } else {
            // The VM request's stages are those of its piece back last.
            let whole = self.ios.get_mut(r.parent);
            (whole.t_device, whole.t_dispatch, whole.array_ns, whole.from_cache) = (r.t_device, r.t_dispatch, r.array_ns, r.from_cache);
            self.piece_done(io, r.parent, Self::complete);
        }
    }

    /// A VM-level request is done: free its VM queue slots, record it, let the job go on.
    pub(super) fn complete(&mut self, io: u32) {
        let now = self.q.now();
        let measured = now >= self.warmup_ns;
        let r = *self.ios.get(io);
        let failure = self.take_failure(io);
        self.ios.remove(io);
        let j = r.job as usize;
        let vm = self.workload.vm_of(j);
        self.free_vm_slots(vm);
        let latency = now - r.t_issue;
        self.faults.note_latency(latency);
        if let Some(reason) = failure {
            return self.vm_failed(j, vm, reason);
        }
        self.host.vm_done(vm, &r, now, measured);
        self.job_done(j, &r, latency);
    }

    /// A VM request failed: the VM counts it, and its job stops issuing, as fio stops a job at
    /// its first I/O error (continue_on_error = none).
    #[cold]
    fn vm_failed(&mut self, j: usize, vm: usize, reason: crate::host::failover::Reason) {
        self.host.vm_failed(vm, reason);
        self.job_failed(j);
    }
}
