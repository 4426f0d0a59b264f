//! The face the engine sees: a request, how a job is paced, the running job (`Workload`), what a
//! kind builds (`JobSource`) and the instances it expands into, each with its `JobPlan`.

use crate::findings::FioFindings;
use crate::plan::JobPlan;
use sanlab_des::RngStream;

/// A request's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// Shape of the next request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub op: Op,
    pub size_bytes: u32,
    pub offset_bytes: u64,
}

/// One job instance a workload entry expands into: its name suffix (None keeps the job's name),
/// its fixed facts, its state, and the instances (indices among the entry's) that must finish
/// before it starts (fio's `stonewall` and `wait_for`).
pub struct Instance {
    pub suffix: Option<String>,
    pub plan: JobPlan,
    pub workload: Box<dyn Workload>,
    pub after: Vec<usize>,
}

/// A measured completion of one of the job's requests (see [`Workload::completed`]).
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    pub op: Op,
    pub size_bytes: u32,
    pub latency_ns: u64,
    /// Time since the job's measured start (after startdelay and ramp_time, or the run's warmup).
    pub since_ns: u64,
    /// The job's requests still in flight after this one.
    pub outstanding: u32,
}

/// What a job asks of the engine after a completion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Steer {
    Keep,
    /// Keep at most `depth` requests outstanding from now on; with `quiesce`, a closed-loop job
    /// first waits for every request in flight (fio's ramp-down).
    Depth { depth: u32, quiesce: bool },
    /// Restart the job's own statistics now (fio's final latency-target cycle).
    Remeasure,
    /// The job has ended: it stops issuing at `since_ns` (at most the completion's `since_ns`).
    Stop { since_ns: u64 },
}

/// A running job's face to the engine: the next request, the next arrival, what a completion
/// changes. One instance per job (fio's `numjobs` clones a job; a job file or a vdbench run holds
/// several); its fixed facts are its [`JobPlan`].
pub trait Workload {
    /// The next request, or None when the workload has no more (a trace's end, a fio job's
    /// `size` done without `time_based`, vdbench `seekpct=eof`): the job then stops issuing.
    fn next(&mut self, rng: &mut RngStream) -> Option<Request>;
    /// With `Pacing::Timed`: absolute time of the next arrival at or after `now_ns`, or None
    /// when the workload has no more requests.
    fn next_arrival_ns(&mut self, _now_ns: u64, _rng: &mut RngStream) -> Option<u64> {
        None
    }
    /// With `Pacing::Closed`: a request issued at `issued_ns` completed at `now_ns`. `Some(pause)`
    /// makes the job stop issuing, wait until its outstanding requests have completed, wait
    /// `pause` more, then fill up to its depth again (fio `thinktime`, ioping's interval). None
    /// issues the next request at once.
    fn think_ns(&mut self, _issued_ns: u64, _now_ns: u64) -> Option<u64> {
        None
    }
    /// A measured request completed: jobs that steer by what they see (fio `latency_target`,
    /// `steadystate`, `rate_min`) answer with a change.
    fn completed(&mut self, _c: &Completion) -> Steer {
        Steer::Keep
    }
    /// What the job found or why it ended early, for its results.
    fn findings(&self) -> Option<FioFindings> {
        None
    }
}

/// What a workload kind builds from a `[[vm.job]]` table: the job instances it expands into.
pub trait JobSource {
    /// The job instances to run: fio's `numjobs` clones, or every job of a job file.
    fn instances(&self) -> Vec<Instance>;
    /// Whether the job's own output can be made from the run's time series, sampled every
    /// `sample_interval_ns` (vdbench's summary lines at its `interval=`); the error names the
    /// job's key to blame.
    fn check_sampling(&self, _sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// The jobs one file describes (a fio job file's sections, a vdbench run's SDs), by name.
/// [`JobSource::instances`] gives each job's instances, named `job` or `job.clone`.
#[derive(Default)]
pub(crate) struct JobSet {
    pub(crate) jobs: Vec<(String, Box<dyn JobSource>)>,
    /// Per job: the jobs (indices into `jobs`) whose every instance must finish before its
    /// instances start; empty when the set has no ordering.
    pub(crate) after: Vec<Vec<usize>>,
}

impl JobSource for JobSet {
    fn instances(&self) -> Vec<Instance> {
        let mut out: Vec<Instance> = vec![];
        // Per job, the range of its instances in `out`.
        let mut ranges: Vec<std::ops::Range<usize>> = vec![];
        for (k, (name, job)) in self.jobs.iter().enumerate() {
            let after: Vec<usize> = self.after.get(k).into_iter().flatten().flat_map(|&p| ranges[p].clone()).collect();
            let start = out.len();
            for i in job.instances() {
                out.push(Instance { suffix: Some(i.suffix.map_or_else(|| name.clone(), |s| format!("{name}.{s}"))), after: after.clone(), ..i });
            }
            ranges.push(start..out.len());
        }
        out
    }

    fn check_sampling(&self, sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        self.jobs.iter().try_for_each(|(_, j)| j.check_sampling(sample_interval_ns))
    }
}
