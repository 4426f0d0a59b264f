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
//! One file per stretch of the path, each with the runtime state it owns and its handlers:
//! `workload` (jobs: arrivals, issue), `host` (VMs, hosts, devices and their paths: queues, split,
//! PSP, adapter, flow control), `fabric` (links and their health), `array` (arrays and volumes:
//! front end, QoS, cores, cache), `media` (back end, replication), `completion` (the way back),
//! `faults` (the `[[event]]` timeline), `recovery` (abort, retry, fail), `sampling` (time
//! series), `report` (the finished run's figures); `build` wires them from a topology.

mod array;
mod build;
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

use array::{Array, Volume};
use host::{Device, Host, Vm};
use workload::Job;

use crate::array::disk_group::DiskOut;
use crate::io::Slab;
use sanlab_des::{EventQueue, RunControl, SimTime};
use sanlab_metrics::TimeSeries;

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

pub struct World {
    pub(crate) q: EventQueue,
    pub(crate) ios: Slab,
    pub(crate) jobs: Vec<Job>,
    pub(crate) vms: Vec<Vm>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) devices: Vec<Device>,
    pub(crate) links: Vec<crate::fabric::Link>,
    /// I/Os in flight per link, over every device's paths on it.
    pub(crate) link_outstanding: Vec<u32>,
    pub(crate) arrays: Vec<Array>,
    pub(crate) volumes: Vec<Volume>,
    pub(crate) replications: Vec<crate::array::replication::Replication>,
    pub(crate) series: TimeSeries,
    pub(crate) end_ns: SimTime,
    pub(crate) warmup_ns: SimTime,
    pub(crate) sample_ns: SimTime,
    pub(crate) last_sample_ns: SimTime,
    /// Reused buffer for what a disk group asks of the engine.
    disk_out: DiskOut,
    pub(crate) faults: Vec<faults::FaultRun>,
    /// Per link.
    health: Vec<fabric::LinkHealth>,
    /// Per replication pair.
    mirrors: Vec<faults::MirrorHealth>,
    /// Requests that failed, with why, until their completion is counted (rarely more than a few).
    failing: Vec<(u32, crate::host::failover::Reason)>,
    /// The fault timeline as it happened, and the longest I/O latency since its last edge.
    pub(crate) fault_log: Vec<faults::FaultEdge>,
    pub(crate) edge_max_latency_ns: u64,
    /// Random draws the run made that may shape its timing (see `sanlab_des::timing_draws`).
    pub(crate) timing_draws: u64,
    /// The hosts' command timers, and the commands given up on that the array may still answer.
    timers: recovery::CommandTimers,
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
        for j in 0..self.jobs.len() {
            if self.jobs[j].waiting == 0 {
                self.start_job(j, false);
            }
        }
        if self.sample_ns > 0 {
            self.q.schedule_at(self.sample_ns.min(self.end_ns), pack(Ev::Sample, 0));
        }
        for (v, volume) in self.volumes.iter().enumerate() {
            if let Some((_, law)) = volume.flow {
                self.q.schedule_at(law.period_ns, pack(Ev::FlowPeriod, v as u32));
            }
        }
        for (k, f) in self.faults.iter().enumerate() {
            self.q.schedule_at(f.at_ns, pack(Ev::FaultStart, k as u32));
            if let Some(until) = f.until_ns {
                self.q.schedule_at(until, pack(Ev::FaultEnd, k as u32));
            }
        }
        while let Some(p) = self.q.pop_until(self.end_ns) {
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
                Ev::DeviceWake => {
                    let d = i as usize;
                    if self.devices[d].wake_armed_ns == Some(self.q.now()) {
                        self.devices[d].wake_armed_ns = None;
                    }
                    self.pump_device(d);
                }
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
        self.q.advance_to(self.end_ns);
        true
    }

    pub fn events(&self) -> u64 {
        self.q.events_processed()
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

}
