//! The host I/O scheduler in front of each device queue: which waiting request (of which VM, a
//! "world") gets the next free device slot, and how deep the device queue is (DQLEN).
//!
//! The depth rules are ESXi's and shared by every discipline (`DepthRules`): the device runs at the
//! LUN queue depth while one world uses it, and is clamped to `dsnro`
//! (Disk.SchedNumReqOutstanding) once worlds compete — after `qcontrol_vm_switches` switches
//! between worlds; full depth returns after `qcontrol_seq_reqs` consecutive requests from one world.
//! The discipline is a kind: `fifo`, `fair_share` (start-time fair queuing by shares), `esxi`
//! (fair share plus the scheduler quantum for sequential streams) or `mclock` (reservations,
//! limits and shares: the ESXi scheduler since 5.5). Only `mclock` honours a world's reservation
//! and limit; the scenario builder rejects them with the other kinds.

mod esxi;
mod fair_share;
mod fifo;
mod mclock;

use sanlab_spec::{Kind, KindDoc, Spec, SpecResult};

/// A request waiting for a device slot.
#[derive(Clone, Copy, Debug)]
pub struct Waiting {
    pub io: u32,
    pub world: u32,
    pub size_bytes: u32,
    pub offset_bytes: u64,
}

/// A world's I/O controls (VM disk shares, reservation and limit). Reservation and limit are in
/// IOPS, each I/O counted in the discipline's cost units; 0.0 means not set.
#[derive(Clone, Copy, Debug)]
pub struct WorldQos {
    pub shares: u32,
    pub reservation_iops: f64,
    pub limit_iops: f64,
}

/// Orders the requests waiting for a device slot. `now` is simulated time in ns.
pub trait Discipline {
    /// Registers a world with its controls; worlds are numbered from 0 in call order.
    fn add_world(&mut self, q: WorldQos);
    fn enqueue(&mut self, now: u64, w: Waiting);
    /// The next request to dispatch at `now` among those whose world `allowed` accepts.
    fn dequeue(&mut self, now: u64, allowed: &dyn Fn(u32) -> bool) -> Option<Waiting>;
    /// When queued requests are held back at `now` (over their limit): the earliest later time
    /// one of them may go. Disciplines that never hold a request back have none.
    fn next_eligible_ns(&self, _now: u64) -> Option<u64> {
        None
    }
    /// Whether reservations and limits are enforced. Such a discipline sees every request — none
    /// may skip it through the device queue's fast path — because its tags count all service.
    fn honours_qos(&self) -> bool {
        false
    }
    fn queued(&self) -> usize;
    /// The depth rules this discipline was configured with.
    fn depth_rules(&self) -> DepthRules;
}

/// Where DSNRO applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsnroScope {
    /// The whole device queue shrinks to DSNRO (esxtop's DQLEN drops to it, as Baker 2019 saw).
    Device,
    /// Each world may have at most DSNRO requests outstanding; the device keeps its depth.
    World,
}

#[derive(Clone, Copy, Debug)]
pub struct DepthRules {
    pub dsnro: u32,
    pub scope: DsnroScope,
    pub vm_switches: u32,
    pub seq_reqs: u32,
}

impl DepthRules {
    /// Read by every discipline kind, so the depth rules are declared once.
    pub fn read(spec: &Spec) -> SpecResult<Self> {
        let dsnro = spec.int("dsnro", Some(32), 1, 4096, "Disk.SchedNumReqOutstanding: outstanding requests with competing worlds")?;
        let scope = spec.choice("dsnro_scope", &["device", "world"], Some("device"), "clamp the device queue (device) or each world (world)")?;
        let vm_switches = spec.int("qcontrol_vm_switches", Some(6), 0, 2048, "Disk.SchedQControlVMSwitches: world switches before clamping to dsnro")?;
        let seq_reqs = spec.int("qcontrol_seq_reqs", Some(128), 0, 2048, "Disk.SchedQControlSeqReqs: consecutive requests of one world that restore full depth")?;
        Ok(Self {
            dsnro: dsnro as u32,
            scope: if scope == "device" { DsnroScope::Device } else { DsnroScope::World },
            vm_switches: vm_switches as u32,
            seq_reqs: seq_reqs as u32,
        })
    }
}

pub static REGISTRY: &[Kind<dyn Discipline>] = &[fifo::KIND, fair_share::KIND, esxi::KIND, mclock::KIND];

pub fn kinds() -> Vec<KindDoc> {
    sanlab_spec::describe_kinds("scheduler", REGISTRY)
}

/// Start-time fair queuing (Goyal, Vin, Cheng, SIGCOMM 1996), the proportional-share scheduler
/// ESXi runs per host (PARDA, FAST '09, §3.3): each request gets a start tag
/// `max(virtual time, the world's last finish tag)` and a finish tag `start + cost / shares`; the
/// waiting request with the smallest start tag goes next and sets the virtual time. Cost is the
/// size in units of Disk.SchedCostUnit (32 KiB), at least 1.
pub(crate) struct Sfq {
    worlds: Vec<SfqWorld>,
    virtual_time: f64,
    queued: usize,
}

struct SfqWorld {
    shares: f64,
    last_finish: f64,
    waiting: std::collections::VecDeque<(f64, Waiting)>,
}

const SCHED_COST_UNIT_BYTES: f64 = 32_768.0;

impl Sfq {
    pub(crate) fn new() -> Self {
        Self { worlds: vec![], virtual_time: 0.0, queued: 0 }
    }

    pub(crate) fn add_world(&mut self, shares: u32) {
        self.worlds.push(SfqWorld { shares: f64::from(shares), last_finish: 0.0, waiting: Default::default() });
    }

    pub(crate) fn enqueue(&mut self, w: Waiting) {
        let world = &mut self.worlds[w.world as usize];
        let start = self.virtual_time.max(world.last_finish);
        let cost = (f64::from(w.size_bytes) / SCHED_COST_UNIT_BYTES).max(1.0);
        world.last_finish = start + cost / world.shares;
        world.waiting.push_back((start, w));
        self.queued += 1;
    }

    /// Index of the world whose head has the smallest start tag, among allowed ones.
    pub(crate) fn best_world(&self, allowed: &dyn Fn(u32) -> bool) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, w) in self.worlds.iter().enumerate() {
            if let Some((start, _)) = w.waiting.front() {
                if allowed(i as u32) && best.is_none_or(|(s, _)| *start < s) {
                    best = Some((*start, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    pub(crate) fn pop_from(&mut self, world: usize) -> Option<Waiting> {
        let (start, w) = self.worlds[world].waiting.pop_front()?;
        self.virtual_time = self.virtual_time.max(start);
        self.queued -= 1;
        Some(w)
    }

    pub(crate) fn peek(&self, world: usize) -> Option<&Waiting> {
        self.worlds[world].waiting.front().map(|(_, w)| w)
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    pub fn build(kind: &str, params: &str) -> Box<dyn Discipline> {
        let t: toml::Table = format!("kind = \"{kind}\"\n{params}").parse().unwrap();
        sanlab_spec::build_kind(&Spec::new(&t, "scheduler"), REGISTRY, None).unwrap()
    }

    pub fn req(io: u32, world: u32) -> Waiting {
        Waiting { io, world, size_bytes: 4096, offset_bytes: u64::from(io) * 1_000_000 }
    }

    /// Shares only: no reservation, no limit.
    pub fn shares(shares: u32) -> WorldQos {
        WorldQos { shares, reservation_iops: 0.0, limit_iops: 0.0 }
    }

    pub fn drain(d: &mut dyn Discipline) -> Vec<u32> {
        std::iter::from_fn(|| d.dequeue(0, &|_| true).map(|w| w.io)).collect()
    }
}
