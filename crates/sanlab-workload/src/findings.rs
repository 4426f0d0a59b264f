//! What a job found while it ran, or why it ended early: fio's `error`, `latency_target` and
//! `steadystate` results, as fio's JSON reports them (the steering that finds them is
//! `fio/steer.rs`).

use serde::Serialize;

/// Why a job ended with an error, as fio reports it: its `error` number and message.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobError {
    pub errno: i32,
    pub message: String,
}

/// fio `latency_target`: the depth the search ended at, with its settings (fio's JSON
/// `latency_depth`, `latency_target`, `latency_window`, `latency_percentile`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyFound {
    pub depth: u32,
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
}

/// fio `steadystate`: the criterion, whether it held, and the window's samples, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SteadyFound {
    /// fio's criterion text, e.g. "iops_slope:0.010000%".
    pub ss: String,
    pub duration_s: u64,
    pub attained: bool,
    /// The last value computed (percent of the mean when `percent`).
    pub criterion: f64,
    pub percent: bool,
    pub max_deviation: f64,
    pub slope: f64,
    pub bw_bytes_per_s: Vec<u64>,
    pub iops: Vec<u64>,
    /// The intervals' mean latencies, for a latency criterion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_ns: Option<Vec<u64>>,
}

/// What a fio job found while it ran, or why it ended early.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FioFindings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyFound>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyFound>,
}
