//! The event loop: carries each request along the I/O path and back.
//!
//! ```text
//! job → VM disk queue → VM adapter queue → split → device queue → PSP → host adapter queue
//!     → link (command) → array → [write: transfer-ready ← , data → , replicate ⇄ peer] → media
//!     ← link (status / read data) ← … completion travels back the same way
//! ```
//! Events are a kind and a request index packed into a `u64`; the state lives in arenas indexed by
//! plain integers, so the loop neither allocates (once warm) nor calls back into Python.
//!
//! One file per stretch of the path, each with its stage's state (a struct `World` holds as one
//! field, its fields private to the file) and its handlers: `workload` (`WorkloadStage`: jobs;
//! arrivals, issue), `host` (`HostStage`: VMs, hosts, devices and their paths; queues, split, PSP,
//! adapter, flow control), `fabric` (`FabricStage`: links and their health), `array`
//! (`ArrayStage`: arrays' front ends and volumes; QoS, cores, cache), `media` (`MediaStage`: back
//! ends, replication pairs), `faults` (`FaultStage`: the `[[event]]` timeline, mirrors, refusals),
//! `recovery` (`RecoveryStage`: failing requests, command timers; abort, retry, fail), `sampling`
//! (`SamplingStage`: the time series); `completion` (the way back) and `report` (the finished
//! run's figures) hold none. A handler reaches another stage's state only through that stage's
//! narrow methods (`self.host.link_of(d, p)`, `self.faults.mirror(rep)` …), plain calls on plain
//! struct fields: no indirection on the hot path. `build` wires them from a topology.

mod array;
pub(crate) mod build;
pub(crate) mod by_direction;
mod completion;
mod fabric;
mod faults;
mod host;
mod media;
pub(crate) mod rates;
mod recovery;
mod report;
mod sampling;
mod workload;

use crate::io::Slab;
use sanlab_des::{EventQueue, RunControl, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Ev {
    JobArrival,
    CmdAtArray,
    XferRdyAtHost,
    DataAtArray,
    MediaDone,
    ReplAtPeer,
    PeerMediaDone,
    ReplAckAtOrigin,
    StatusAtHost,
    Sample,
    QosRelease,
    OwnerCoreDone,
    DataCoreDone,
    CacheHitDone,
    QfullAtHost,
    Retry,
    DiskDone,
    FlowPeriod,
    DeviceWake,
    FaultStart,
    FaultEnd,
    LinkNotice,
    PathCheck,
    Abort,
    Redispatch,
    Failed,
    RefusedAtHost,
    AluaSettle,
    MirrorDecided,
    CommandTimer,
}

const EVENTS: [Ev; 30] = [
    Ev::JobArrival, Ev::CmdAtArray, Ev::XferRdyAtHost, Ev::DataAtArray, Ev::MediaDone,
    Ev::ReplAtPeer, Ev::PeerMediaDone, Ev::ReplAckAtOrigin, Ev::StatusAtHost, Ev::Sample, Ev::QosRelease,
    Ev::OwnerCoreDone, Ev::DataCoreDone, Ev::CacheHitDone, Ev::QfullAtHost, Ev::Retry, Ev::DiskDone,
    Ev::FlowPeriod, Ev::DeviceWake, Ev::FaultStart, Ev::FaultEnd, Ev::LinkNotice, Ev::PathCheck, Ev::Abort,
    Ev::Redispatch, Ev::Failed, Ev::RefusedAtHost, Ev::AluaSettle, Ev::MirrorDecided, Ev::CommandTimer,
];

/// A disk of an array, as one event index: array in the high bits.
const DISK_BITS: u32 = 20;
/// Events between two looks at a run control's cancel flag outside sample events.
const CANCEL_CHECK_EVENTS: u64 = 1 << 16;

#[inline]
fn pack(ev: Ev, index: u32) -> u64 {
    (u64::from(index) << 8) | ev as u64
}

#[inline]
fn unpack(p: u64) -> (Ev, u32) {
    (EVENTS[(p & 0xff) as usize], (p >> 8) as u32)
}

/// A service-centre token: the request and one flag (the peer's copy of a replicated write at
/// the media; the data stage at the cores).
#[inline]
fn token(io: u32, flag: bool) -> u64 {
    (u64::from(io) << 1) | u64::from(flag)
}

#[inline]
fn untoken(t: u64) -> (u32, bool) {
    ((t >> 1) as u32, t & 1 == 1)
}

/// The running model: the clock and the requests in flight, which every stage shares, and each
/// stage's own state, declared in the stage's file. A handler names the stages it touches
/// (`self.host`, `self.array` …); a stage's fields are private to its file, and another stage
/// asks it through a narrow method.
pub struct World {
    q: EventQueue,
    ios: Slab,
    end_ns: SimTime,
    warmup_ns: SimTime,
    /// Random draws the run made that may shape its timing (see `sanlab_des::timing_draws`).
    timing_draws: u64,
    workload: workload::WorkloadStage,
    host: host::HostStage,
    fabric: fabric::FabricStage,
    array: array::ArrayStage,
    media: media::MediaStage,
    faults: faults::FaultStage,
    recovery: recovery::RecoveryStage,
    sampling: sampling::SamplingStage,
}

impl World {
    /// Runs to the end of the scenario's duration, or until `control` asks to stop (checked at
    /// each sample and every [`CANCEL_CHECK_EVENTS`] events). Requests still in flight at the end stay counted as in flight. Returns false
    /// when stopped early.
    pub fn run(&mut self, control: Option<&RunControl>) -> bool {
        let draws_before = sanlab_des::timing_draws();
        let finished = self.run_events(control);
        self.timing_draws += sanlab_des::timing_draws() - draws_before;
        finished
    }

    fn run_events(&mut self, control: Option<&RunControl>) -> bool {
        self.start_jobs();
        self.arm_sampling();
        self.arm_flow_periods();
        self.arm_faults();
        // Every event before the warm-up's end, then the measured time's baselines, then the rest
        // (events leave in the same order either way).
        if self.warmup_ns > 0 {
            if !self.run_until(self.warmup_ns - 1, control) {
                return false;
            }
            self.q.advance_to(self.warmup_ns);
        }
        self.measure_from(self.warmup_ns);
        if !self.run_until(self.end_ns, control) {
            return false;
        }
        self.q.advance_to(self.end_ns);
        true
    }

    /// The measured time starts at `now` (the warm-up's end): utilisations, queue occupancies,
    /// link and QoS figures count from here, as completions do.
    fn measure_from(&mut self, now: SimTime) {
        self.host.measure_from(now);
        self.fabric.measure_from();
        self.array.measure_from(now);
        self.media.measure_from(now);
    }

    /// Handles every event due at or before `until`; false when stopped early.
    fn run_until(&mut self, until: SimTime, control: Option<&RunControl>) -> bool {
        while let Some(p) = self.q.pop_until(until) {
            let (ev, i) = unpack(p);
            match ev {
                Ev::JobArrival => self.job_arrival(i as usize),
                Ev::CmdAtArray => self.cmd_at_array(i),
                // An answer to a command the host aborted at its timeout is dropped.
                Ev::XferRdyAtHost => {
                    if self.answer_at_host(i, false) {
                        self.xfer_rdy_at_host(i)
                    }
                }
                Ev::DataAtArray => self.data_at_array(i),
                Ev::MediaDone => self.media_done(i, false),
                Ev::ReplAtPeer => self.repl_at_peer(i),
                Ev::PeerMediaDone => self.media_done(i, true),
                Ev::ReplAckAtOrigin => self.array_step_done(i),
                Ev::StatusAtHost => {
                    if self.answer_at_host(i, true) {
                        self.status_at_host(i)
                    }
                }
                Ev::QosRelease => self.qos_release(i as usize),
                Ev::OwnerCoreDone => self.core_done(i, false),
                Ev::DataCoreDone => self.core_done(i, true),
                Ev::CacheHitDone => self.array_step_done(i),
                Ev::QfullAtHost => {
                    if self.answer_at_host(i, true) {
                        self.qfull_at_host(i)
                    }
                }
                Ev::Retry => self.enter_adapter(i),
                Ev::DiskDone => self.disk_done(i),
                Ev::FlowPeriod => self.flow_period(i as usize),
                Ev::FaultStart => self.fault_edge(i as usize, true),
                Ev::FaultEnd => self.fault_edge(i as usize, false),
                Ev::LinkNotice => self.link_notice(i as usize),
                Ev::PathCheck => self.path_check(i as usize),
                Ev::Abort => self.abort(i),
                Ev::Redispatch => self.redispatch(i),
                Ev::Failed => self.failed(i),
                Ev::RefusedAtHost => {
                    if self.answer_at_host(i, true) {
                        self.refused_at_host(i)
                    }
                }
                Ev::AluaSettle => self.alua_settle(i as usize),
                Ev::MirrorDecided => self.mirror_decided(i as usize),
                Ev::CommandTimer => self.command_timer(i as usize),
                Ev::DeviceWake => self.device_wake(i as usize),
                Ev::Sample => {
                    self.sample();
                    if let Some(c) = control {
                        c.publish(self.q.now(), self.end_ns);
                        if c.cancelled() {
                            return false;
                        }
                    }
                }
            }
            // Also between samples, which at 10,000 VMs are millions of events apart: a cancel
            // (Ctrl-C, a cost pilot's wall-time limit) takes effect within 65,536 events.
            if let Some(c) = control {
                if self.q.events_processed().is_multiple_of(CANCEL_CHECK_EVENTS) && c.cancelled() {
                    return false;
                }
            }
        }
        true
    }

    pub fn events(&self) -> u64 {
        self.q.events_processed()
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

}
