//! Jobs issue requests: closed loops fill to their depth, open and timed loops schedule arrivals.

use super::{pack, Ev, World};
use crate::io::{Io, Op};
use sanlab_workload::Pacing;
use sanlab_des::SimTime;
use sanlab_des::RngStream;
use sanlab_metrics::IoStats;
use sanlab_workload::{Completion, JobPlan, Steer, Workload};

/// The workload stage's state: the jobs. Other stages ask it which VM a job runs on; the report
/// reads the jobs.
pub(super) struct WorkloadStage {
    jobs: Vec<Job>,
}

impl WorkloadStage {
    pub(super) fn new(jobs: Vec<Job>) -> Self {
        Self { jobs }
    }

    /// The VM job `j` runs on.
    #[inline]
    pub(super) fn vm_of(&self, j: usize) -> usize {
        self.jobs[j].vm
    }

    /// Every job, for the report.
    pub(super) fn jobs(&self) -> &[Job] {
        &self.jobs
    }
}

/// A running job. `repr(C)` keeps the fields in the order written: what every arrival, issue and
/// completion reads or writes first, in the job's first cache lines (its histograms after them),
/// the rest after; at thousands of jobs each line a request touches is a trip to memory (see
/// `FioJob`'s layout, and docs/performance.md, "Speed at scale").
#[repr(C, align(64))]
pub(crate) struct Job {
    pub workload: Box<dyn Workload>,
    pub rng: RngStream,
    pub stop_ns: SimTime,
    /// Completions from this time on count in the job's statistics (run warmup, fio ramp_time).
    pub measured_from_ns: SimTime,
    /// Its plan's pacing, here beside the rest an arrival reads.
    pub pacing: Pacing,
    pub vm: usize,
    pub depth: u32,
    pub outstanding: u32,
    pub issued: u64,
    pub completed: u64,
    /// Open-loop arrivals that found the job at its depth and wait to be issued.
    pub backlog: u64,
    /// Closed loop: the pause the job takes once its outstanding requests complete (thinking).
    pub pause_ns: Option<u64>,
    /// fio `fsync` and its kin: where the job's sync schedule stands (it starts as its plan's).
    pub sync: Option<sanlab_workload::SyncSchedule>,
    /// fio's bandwidth and IOPS samples and submission depths.
    pub rates: super::rates::JobRates,
    pub read: IoStats,
    pub write: IoStats,
    /// Its fixed facts (start, runtime, what it reports; the engine reads its pacing from `pacing`).
    pub plan: JobPlan,
    pub name: String,
    /// Requests that failed (the job stopped at the first).
    pub failed: u64,
    /// Jobs not yet finished that this one waits for (fio `stonewall`, `wait_for`); it starts
    /// when the count reaches zero.
    pub waiting: u32,
    /// Jobs waiting for this one.
    pub waiters: Vec<u32>,
    pub set: usize,
    /// The name of its workload entry, which names its fio document.
    pub entry: String,
    /// Started (its wait is over), ended by another's exit, finished (stopped, nothing in flight).
    pub started: bool,
    pub terminated: bool,
    pub finished: bool,
}

impl World {
    /// The run starts: every job that waits for none starts now.
    pub(super) fn start_jobs(&mut self) {
        for j in 0..self.workload.jobs.len() {
            if self.workload.jobs[j].waiting == 0 {
                self.start_job(j, false);
            }
        }
    }

    /// A job starts: at the run's start, or `released` when the jobs it waited for have
    /// finished; its startdelay, ramp and runtime then count from now.
    pub(super) fn start_job(&mut self, j: usize, released: bool) {
        let now = self.q.now();
        self.workload.jobs[j].started = true;
        if self.workload.jobs[j].terminated {
            // Ended by another job's exitall before it started: it does not run.
            self.workload.jobs[j].stop_ns = now;
            return self.maybe_finished(j);
        }
        let start = now + self.workload.jobs[j].plan.start_ns;
        if released {
            let job = &mut self.workload.jobs[j];
            job.stop_ns = job.plan.runtime_ns.map_or(self.end_ns, |r| (now + r).min(self.end_ns));
            job.measured_from_ns = (now + job.plan.measured_from_ns).max(self.warmup_ns);
            job.rates.restart(job.measured_from_ns);
        }
        // A job with waiters or an exit rule is told when its runtime is up, in case nothing of
        // it is in flight.
        let stop = self.workload.jobs[j].stop_ns;
        if (!self.workload.jobs[j].waiters.is_empty() || self.workload.jobs[j].plan.exit_rule.is_some()) && stop < self.end_ns {
            self.q.schedule_at(stop, pack(Ev::JobArrival, j as u32));
        }
        match self.workload.jobs[j].pacing {
            Pacing::Closed { .. } if start == now => self.fill(j),
            Pacing::Closed { .. } | Pacing::Open { .. } => self.q.schedule_at(start, pack(Ev::JobArrival, j as u32)),
            Pacing::Timed { .. } => self.schedule_timed_arrival(j, start),
            Pacing::Shared { .. } => {
                self.schedule_timed_arrival(j, start);
                if start == now {
                    self.fill(j);
                }
            }
        }
    }

    /// A job with waiters has stopped issuing: once its last request is back, it has finished,
    /// and the jobs waiting only for it start.
    pub(super) fn maybe_finished(&mut self, j: usize) {
        let job = &self.workload.jobs[j];
        if (job.waiters.is_empty() && job.plan.exit_rule.is_none()) || job.outstanding > 0 || self.q.now() < job.stop_ns {
            return;
        }
        // fio ends the others as the job exits, before the jobs waiting for it start.
        if let Some(rule) = job.plan.exit_rule.filter(|_| !job.finished) {
            self.workload.jobs[j].finished = true;
            let failed = self.workload.jobs[j].failed > 0 || self.workload.jobs[j].workload.findings().is_some_and(|f| f.error.is_some());
            if rule.on_end || (rule.on_error && failed) {
                self.end_others(j, rule);
            }
        }
        let waiters = std::mem::take(&mut self.workload.jobs[j].waiters);
        for &w in &waiters {
            let w = w as usize;
            self.workload.jobs[w].waiting -= 1;
            if self.workload.jobs[w].waiting == 0 {
                self.start_job(w, true);
            }
        }
    }

    /// fio's `exitall`: the jobs of `j`'s file that `rule` names stop issuing now and finish what
    /// they have in flight; those not started yet will not run.
    fn end_others(&mut self, j: usize, rule: sanlab_workload::ExitRule) {
        use sanlab_workload::ExitWhat;
        let now = self.q.now();
        let set = self.workload.jobs[j].set;
        let mut ended = vec![];
        for (k, other) in self.workload.jobs.iter_mut().enumerate() {
            let named = other.set == set
                && match rule.what {
                    ExitWhat::Group => other.plan.exit_rule.is_some_and(|e| e.group == rule.group),
                    ExitWhat::Stonewall => other.started,
                    ExitWhat::All => true,
                };
            if k == j || !named || other.terminated {
                continue;
            }
            other.terminated = true;
            if other.started {
                other.stop_ns = other.stop_ns.min(now);
                ended.push(k);
            }
        }
        for k in ended {
            self.maybe_finished(k);
        }
    }

    pub(super) fn schedule_timed_arrival(&mut self, j: usize, from_ns: SimTime) {
        let job = &mut self.workload.jobs[j];
        if let Some(at) = job.workload.next_arrival_ns(from_ns, &mut job.rng) {
            self.q.schedule_at(at.max(from_ns), pack(Ev::JobArrival, j as u32));
        }
    }

    /// A closed-loop job (re)starts: it issues up to its depth.
    pub(super) fn fill(&mut self, j: usize) {
        self.workload.jobs[j].pause_ns = None;
        while self.workload.jobs[j].outstanding < self.workload.jobs[j].depth && self.q.now() < self.workload.jobs[j].stop_ns {
            self.issue(j);
        }
    }

    pub(super) fn job_arrival(&mut self, j: usize) {
        let now = self.q.now();
        if now >= self.workload.jobs[j].stop_ns {
            return self.maybe_finished(j);
        }
        let pacing = self.workload.jobs[j].pacing;
        match pacing {
            Pacing::Open { rate_iops, poisson, .. } => {
                let mean_ns = 1e9 / rate_iops;
                let gap = if poisson { self.workload.jobs[j].rng.exponential(mean_ns) } else { mean_ns };
                self.q.schedule_in((gap.round() as u64).max(1), pack(Ev::JobArrival, j as u32));
            }
            Pacing::Timed { .. } | Pacing::Shared { .. } => self.schedule_timed_arrival(j, now),
            // A closed-loop job's start, or the end of its pause.
            Pacing::Closed { .. } => return self.fill(j),
        }
        if self.workload.jobs[j].outstanding < self.workload.jobs[j].depth {
            self.issue(j);
            if matches!(pacing, Pacing::Shared { .. }) {
                // A job that started after the run's start fills its closed loop now.
                self.fill(j);
            }
        } else {
            self.workload.jobs[j].backlog += 1;
        }
    }

    pub(super) fn issue(&mut self, j: usize) {
        let now = self.q.now();
        let job = &mut self.workload.jobs[j];
        let Some(r) = job.workload.next(&mut job.rng) else {
            // The workload is done (end of a trace, fio size without time_based): no more issues.
            job.stop_ns = now;
            return self.maybe_finished(j);
        };
        let measured = now >= job.measured_from_ns;
        if let Some(sync) = job.sync.as_mut() {
            // A sync fio issues before this request ends in the guest at once; fio counts it at
            // the depth it brought the job to.
            if let Some(kind) = sync.due(measured).filter(|_| measured) {
                job.rates.synced(kind, job.outstanding + 1);
            }
            sync.issued(r.op == Op::Write);
        }
        job.outstanding += 1;
        job.issued += 1;
        if measured {
            job.rates.issued(job.outstanding);
        }
        let vm = job.vm;
        self.enter_vm(vm, Io::new(r.op, r.size_bytes, r.offset_bytes, j as u32, now));
    }

    /// Job `j`'s request `r` completed after `latency` ns: the job counts it, may steer by it,
    /// and goes on as its pacing says.
    pub(super) fn job_done(&mut self, j: usize, r: &Io, latency: u64) {
        let now = self.q.now();
        let bytes = u64::from(r.size_bytes);
        let job = &mut self.workload.jobs[j];
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
            Op::Read => job.read.record(latency, bytes, job_measured),
            Op::Write => job.write.record(latency, bytes, job_measured),
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
                    job.read = IoStats::new();
                    job.write = IoStats::new();
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
                    while self.workload.jobs[j].backlog > 0 && self.workload.jobs[j].outstanding < self.workload.jobs[j].depth && now < self.workload.jobs[j].stop_ns {
                        self.workload.jobs[j].backlog -= 1;
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

    /// A request of job `j` failed: the job stops issuing, as fio stops a job at its first I/O
    /// error (continue_on_error = none).
    #[cold]
    pub(super) fn job_failed(&mut self, j: usize) {
        let now = self.q.now();
        let job = &mut self.workload.jobs[j];
        job.outstanding -= 1;
        job.failed += 1;
        job.stop_ns = job.stop_ns.min(now);
        self.maybe_finished(j);
    }
}
