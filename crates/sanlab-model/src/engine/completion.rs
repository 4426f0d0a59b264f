//! The way back: status at the host adapter, the device-level request, then the VM request and
//! its job.

use super::{pack, Ev, World};
use crate::io::{Op, NONE};
use sanlab_workload::{Completion, Pacing, Steer};

impl World {
    /// QUEUE FULL came back: free the adapter slot, tell the device (adaptive depth), and retry
    /// the command after the host's retry delay.
    pub(super) fn qfull_at_host(&mut self, io: u32) {
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

    pub(super) fn status_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let host = self.devices[r.device as usize].host;
        if let Some(next) = self.hosts[host].adapter_q.leave(now) {
            self.send_command(next);
        }
        if r.wire {
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
        let d = r.device as usize;
        let p = r.path as usize;
        let dev = &mut self.devices[d];
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
        self.pump_device(d);
        if r.parent == NONE {
            self.complete(io);
        } else {
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
        let vm = self.jobs[j].vm;
        if let Some(next) = self.vms[vm].adapter_q.leave(now) {
            self.split(next);
        }
        if let Some(next) = self.vms[vm].disk_q.leave(now) {
            self.enter_vm_adapter(next);
        }
        let latency = now - r.t_issue;
        if !self.fault_log.is_empty() {
            self.edge_max_latency_ns = self.edge_max_latency_ns.max(latency);
        }
        if let Some(reason) = failure {
            return self.vm_failed(j, reason);
        }
        let bytes = u64::from(r.size_bytes);
        let v = &mut self.vms[vm];
        v.tally.done(latency, r.size_bytes, measured);
        self.hosts[v.host].stats.record(latency, bytes, measured);
        let job = &mut self.jobs[j];
        job.outstanding -= 1;
        job.completed += 1;
        if let Some(sync) = job.sync.as_mut() {
            sync.completed();
        }
        let job_measured = now >= job.measured_from_ns;
        if job_measured {
            job.rates.done(now, job.stop_ns, r.op, bytes, latency);
        }
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
        // A job that steers by what it sees (fio latency_target, steadystate, rate_min).
        let mut deeper = false;
        if job_measured && now < job.stop_ns {
            let c = Completion { op: r.op, size_bytes: r.size_bytes, latency_ns: latency, since_ns: now - job.measured_from_ns, outstanding: job.outstanding };
            match job.workload.completed(&c) {
                Steer::Keep => {}
                Steer::Depth { depth, quiesce } => {
                    deeper = depth > job.depth;
                    job.depth = depth;
                    if quiesce && matches!(job.pacing, Pacing::Closed { .. }) {
                        job.pause_ns.get_or_insert(0);
                    }
                }
                Steer::Remeasure => {
                    job.measured_from_ns = now;
                    job.read = sanlab_metrics::IoStats::new();
                    job.write = sanlab_metrics::IoStats::new();
                    job.rates.restart(now);
                    if let Some(sync) = job.sync.as_mut() {
                        sync.restart();
                    }
                }
                Steer::Stop { since_ns } => job.stop_ns = job.stop_ns.min(job.measured_from_ns + since_ns),
            }
        }
        if now < job.stop_ns {
            match job.pacing {
                Pacing::Closed { .. } => {
                    if job.pause_ns.is_none() {
                        job.pause_ns = job.workload.think_ns(r.t_issue, now);
                    }
                    match job.pause_ns {
                        None if deeper => self.fill(j),
                        None if job.outstanding < job.depth => self.issue(j),
                        None => {}
                        Some(pause) if job.outstanding == 0 => self.q.schedule_in(pause, pack(Ev::JobArrival, j as u32)),
                        Some(_) => {}
                    }
                }
                Pacing::Open { .. } | Pacing::Timed { .. } if job.backlog > 0 => {
                    // More than one only when a steer deepened the job.
                    while self.jobs[j].backlog > 0 && self.jobs[j].outstanding < self.jobs[j].depth && now < self.jobs[j].stop_ns {
                        self.jobs[j].backlog -= 1;
                        self.issue(j);
                    }
                }
                Pacing::Open { .. } | Pacing::Timed { .. } => {}
                // A free slot: the workload serves a waiting arrival first, else its closed loop.
                Pacing::Shared { .. } => {
                    job.backlog = job.backlog.saturating_sub(1);
                    self.fill(j);
                }
            }
        } else {
            self.maybe_finished(j);
        }
    }

    /// A VM request failed: the VM counts it, and its job stops issuing, as fio stops a job at
    /// its first I/O error (continue_on_error = none).
    #[cold]
    fn vm_failed(&mut self, j: usize, reason: crate::host::failover::Reason) {
        let now = self.q.now();
        let v = &mut self.vms[self.jobs[j].vm];
        v.tally.failed += 1;
        v.failed_by_reason[reason as usize] += 1;
        let job = &mut self.jobs[j];
        job.outstanding -= 1;
        job.failed += 1;
        job.stop_ns = job.stop_ns.min(now);
        self.maybe_finished(j);
    }
}
