//! A job's fixed facts, plain data: how it is paced, when it runs, what it reports, and the few
//! schedules the engine keeps for it (fio's rate sampling, exit rules, syncs).

/// How a job issues requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// Keep `depth` requests outstanding; the next is issued when one completes (after
    /// [`Workload::think_ns`](crate::Workload::think_ns), if the workload thinks).
    Closed { depth: u32 },
    /// Requests arrive at `rate_iops` (evenly spaced, or Poisson); at most `depth` outstanding, the
    /// rest wait in the job's backlog (fio's behaviour when it falls behind its rate).
    Open { depth: u32, rate_iops: f64, poisson: bool },
    /// Requests arrive when the workload says ([`Workload::next_arrival_ns`](crate::Workload::next_arrival_ns), e.g. a trace's
    /// timestamps); at most `depth` outstanding, the rest wait in the backlog.
    Timed { depth: u32 },
    /// Arrivals as with [`Pacing::Timed`], and the slots they leave free kept busy as in a closed
    /// loop: every issue asks [`Workload::next`](crate::Workload::next), which serves a waiting arrival first (vdbench
    /// workloads with `priority=` sharing an SD's threads: paced workloads first, `iorate=max`
    /// ones taking the rest). Its closed loop starts with the job, or at its first arrival when
    /// the job starts after the run's start.
    Shared { depth: u32 },
}

impl Pacing {
    /// Requests the job keeps outstanding at most.
    pub fn depth(&self) -> u32 {
        match *self {
            Pacing::Closed { depth } | Pacing::Open { depth, .. } | Pacing::Timed { depth } | Pacing::Shared { depth } => depth,
        }
    }
}

/// A job's fixed facts: read when the run is built, when the job starts and when it is reported,
/// never in the event loop's hot path.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    pub pacing: Pacing,
    /// Simulated time after which the job stops issuing (fio `runtime`), if any.
    pub runtime_ns: Option<u64>,
    /// When the job issues (or its arrivals start): fio `startdelay`.
    pub start_ns: u64,
    /// Completions before this time are left out of the job's own statistics (fio `ramp_time`,
    /// vdbench `warmup`); the run's `warmup` applies to every statistic as well.
    pub measured_from_ns: u64,
    /// The byte range of the disk the job addresses, when it is fixed (fio's offset and size).
    pub region_bytes: Option<std::ops::Range<u64>>,
    /// The job's options as the user would write them (for fio-compatible output).
    pub options: Vec<(String, String)>,
    /// Options the job's file gave that have no effect on the model (fio's logging, CPU
    /// placement, engine tuning, ...), listed once per run as "ignored: ...".
    pub ignored: Vec<&'static str>,
    /// How the job's bandwidth and IOPS are sampled for fio's `bw_*` and `iops_*` figures
    /// (`[bandwidth, iops]`).
    pub rate_sampling: [RateSampling; 2],
    /// Whether the job's end ends other jobs of its file (fio `exitall`, `exit_what`,
    /// `exitall_on_error`).
    pub exit_rule: Option<ExitRule>,
    /// When the job syncs between its writes (fio `fsync`, `fdatasync`, `sync_file_range`).
    pub sync_schedule: Option<SyncSchedule>,
    /// Memory the workload's own state may grow to (fio's random map), for the run's estimate.
    pub state_bytes: u64,
    /// Where a job of a fio job file or command line sits in it, for fio's JSON.
    pub fio_place: Option<FioPlace>,
}

impl JobPlan {
    /// A job paced so, with these options, running the whole run from its start and measured from
    /// it; every other fact at its default (fio's 500 ms rate windows, no exit rule, no syncs).
    pub fn new(pacing: Pacing, options: Vec<(String, String)>) -> Self {
        Self {
            pacing,
            runtime_ns: None,
            start_ns: 0,
            measured_from_ns: 0,
            region_bytes: None,
            options,
            ignored: vec![],
            rate_sampling: [RateSampling::DEFAULT; 2],
            exit_rule: None,
            sync_schedule: None,
            state_bytes: 0,
            fio_place: None,
        }
    }
}

/// A job's place in its fio job file or command line, as fio's JSON reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FioPlace {
    /// The job's section (or `--name`): fio's `jobname`, which its clones share.
    pub name: String,
    /// Its reporting group: a `stonewall` or `new_group` job after the first starts the next
    /// (init.c).
    pub group: u32,
    /// The options given with a value, as written (the last of a repeated one): fio's
    /// `global options` (the globals above the job) and `job options` (its own).
    pub global_options: Vec<(String, String)>,
    pub job_options: Vec<(String, String)>,
}

/// When a job's end ends others of the same file, as fio does (libfio.c `fio_terminate_threads`,
/// called from backend.c when a job exits; HOWTO `exitall`, `exit_what`, `exitall_on_error`).
/// The others stop issuing at once and finish what they have in flight; jobs ended before they
/// started do not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitRule {
    /// The job's reporting group: fio starts a new one at each `stonewall` or `new_group`.
    pub group: u32,
    /// Some job of the file sets `exitall`: fio then acts at every job's end (the flag is global).
    pub on_end: bool,
    /// The job's `exitall_on_error`: act when it ends in error.
    pub on_error: bool,
    pub what: ExitWhat,
}

/// fio `exit_what`: which jobs an `exitall` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the ending job's group (fio's default).
    Group,
    /// Every job running now, whatever its group; jobs not yet started run later, as they would.
    Stonewall,
    /// Every job, started or not.
    All,
}

/// How fio samples a job's bandwidth or IOPS for its `bw_min/max/mean/dev/samples` and
/// `iops_*` figures (stat.c `__add_samples`, `add_bw_sample`, `add_iops_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSampling {
    /// One sample per direction per window of the job's measured time in which it completed
    /// I/O: the window's bytes (KiB/s) or I/Os per second, in whole units.
    Window { ms: u64 },
    /// One sample per completed I/O: what fio does when the job writes the matching log per I/O
    /// (`write_bw_log` / `write_iops_log` without `log_avg_msec`, or a compressed log).
    PerIo,
}

impl RateSampling {
    /// fio's `bwavgtime` and `iopsavgtime` default: 500 ms.
    pub const DEFAULT: RateSampling = RateSampling::Window { ms: 500 };
}

/// When a job syncs, and where its schedule stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSchedule {
    /// Writes between syncs per kind (`SYNC_KINDS` order); 0 = never.
    every_writes: [u64; 3],
    writes_issued: u64,
    /// fio's `last_was_sync`: set by a sync, cleared by a read or write completing.
    last_was_sync: bool,
    /// Past the job's measured start, where fio's statistics restart (see [`Self::due`]).
    measuring: bool,
}

impl SyncSchedule {
    /// A sync every `every_writes[k]` writes for each kind (fsync, fdatasync, sync_file_range;
    /// 0 = never), or None when the job never syncs.
    pub(crate) fn every(every_writes: [u64; 3]) -> Option<SyncSchedule> {
        (every_writes != [0; 3]).then_some(SyncSchedule { every_writes, writes_issued: 0, last_was_sync: false, measuring: false })
    }

    /// The job is about to issue a request, `measured` once past its measured start: the kind of
    /// sync fio issues first, if one is due (a multiple of a kind's count of writes issued, and no
    /// sync since the last completion). fio counts the writes afresh where its ramp ends
    /// (libfio.c `reset_all_stats` zeroes `io_issues`, `reset_io_counters` `last_was_sync`).
    #[inline]
    pub fn due(&mut self, measured: bool) -> Option<usize> {
        if measured && !self.measuring {
            self.measuring = true;
            self.restart();
        }
        if self.last_was_sync || self.writes_issued == 0 {
            return None;
        }
        let kind = self.every_writes.iter().position(|&n| n > 0 && self.writes_issued.is_multiple_of(n))?;
        self.last_was_sync = true;
        Some(kind)
    }

    /// A request was issued.
    #[inline]
    pub fn issued(&mut self, write: bool) {
        self.writes_issued += u64::from(write);
    }

    /// The job's statistics start over (fio's ramp end, latency_target's final cycle).
    pub fn restart(&mut self) {
        self.writes_issued = 0;
        self.last_was_sync = false;
    }

    /// One of the job's reads or writes completed.
    #[inline]
    pub fn completed(&mut self) {
        self.last_was_sync = false;
    }
}
