//! Workloads: what a VM asks of its disk. Each kind generates the next request's shape and says
//! how requests are paced (closed loop at a depth, or open arrivals at a rate).

mod fio;

use crate::io::Op;
use crate::spec::{Kind, KindDoc};
use sanlab_des::RngStream;

/// Shape of the next request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub op: Op,
    pub size_bytes: u32,
    pub offset_bytes: u64,
}

/// How a job issues requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// Keep `depth` requests outstanding; the next is issued when one completes.
    Closed { depth: u32 },
    /// Requests arrive at `rate_iops` (evenly spaced, or Poisson); at most `depth` outstanding, the
    /// rest wait in the job's backlog (fio's behaviour when it falls behind its rate).
    Open { depth: u32, rate_iops: f64, poisson: bool },
    /// Requests arrive when the workload says ([`Workload::next_arrival_ns`], e.g. a trace's
    /// timestamps); at most `depth` outstanding, the rest wait in the backlog.
    Timed { depth: u32 },
}

/// One job instance a workload expands into: its name suffix (None keeps the job's name) and state.
pub struct Instance {
    pub suffix: Option<String>,
    pub workload: Box<dyn Workload>,
}

/// A workload kind. One instance per job (fio's `numjobs` clones a job).
pub trait Workload {
    fn next(&mut self, rng: &mut RngStream) -> Request;
    fn pacing(&self) -> Pacing;
    /// Simulated time after which the job stops issuing (fio `runtime`), if any.
    fn runtime_ns(&self) -> Option<u64>;
    /// The job instances to run: fio's `numjobs` clones, or every job of a job file.
    fn instances(&self) -> Vec<Instance>;
    /// With [`Pacing::Timed`]: absolute time of the next arrival at or after `now_ns`, or None
    /// when the workload has no more requests.
    fn next_arrival_ns(&mut self, _now_ns: u64, _rng: &mut RngStream) -> Option<u64> {
        None
    }
    /// The job's options as the user would write them (for fio-compatible output).
    fn options(&self) -> Vec<(String, String)>;
}

pub static REGISTRY: &[Kind<dyn Workload>] = &[fio::KIND];

pub fn kinds() -> Vec<KindDoc> {
    crate::spec::describe_kinds("workload", REGISTRY)
}
