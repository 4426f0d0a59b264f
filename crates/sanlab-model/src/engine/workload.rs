//! Jobs issue requests: closed loops fill to their depth, open and timed loops schedule arrivals.

use super::{pack, Ev, World};
use crate::io::Io;
use crate::workload::Pacing;
use sanlab_des::SimTime;

impl World {
    pub(super) fn schedule_timed_arrival(&mut self, j: usize, from_ns: SimTime) {
        let job = &mut self.jobs[j];
        if let Some(at) = job.workload.next_arrival_ns(from_ns, &mut job.rng) {
            self.q.schedule_at(at.max(from_ns), pack(Ev::JobArrival, j as u32));
        }
    }

    /// A closed-loop job (re)starts: it issues up to its depth.
    pub(super) fn fill(&mut self, j: usize) {
        self.jobs[j].pause_ns = None;
        while self.jobs[j].outstanding < self.jobs[j].depth && self.q.now() < self.jobs[j].stop_ns {
            self.issue(j);
        }
    }

    pub(super) fn job_arrival(&mut self, j: usize) {
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

    pub(super) fn issue(&mut self, j: usize) {
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
        self.vms[vm].tally.issued += 1;
        if self.vms[vm].disk_q.enter(now, io) {
            self.enter_vm_adapter(io);
        }
    }
}
