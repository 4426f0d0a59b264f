//! The array's front end: target queue (QUEUE FULL), volume QoS, transfer-ready for writes,
//! then its cores and cache; the status goes back once every step it waits for is done.

use super::faults::Mirror;
use super::{pack, token, untoken, Ev, World};
use crate::fabric::INBOUND;
use crate::io::{Op, NONE};
use crate::array::cache::ReadCache;
use crate::array::cores::Cores;
use crate::array::qos::QosState;
use crate::host::flow_control::WindowLaw;
use crate::report::CoreReport;
use sanlab_des::SimTime;
use sanlab_metrics::{SeriesId, Tally, TimeSeries};

/// An array's front end: its target queue, controllers, cores and cache (its back end is the
/// media stage's).
pub(crate) struct Array {
    pub name: String,
    /// Host commands accepted (`issued`) and answered.
    pub tally: Tally,
    pub cores: Option<Cores>,
    /// Storage controllers; their front-end ports carry the paths.
    pub controllers: u32,
    /// Per core: (iops, util) series, owned requests and busy time at the last sample.
    pub core_series: Vec<[SeriesId; 2]>,
    pub core_last: Vec<(u64, u128)>,
    pub cache: Option<ReadCache>,
    /// Target queue: host commands the array holds at once (`issued - completed`) before
    /// answering QUEUE FULL.
    pub max_outstanding: Option<u32>,
    pub qfull_sent: u64,
    /// Taking over a failed controller's work: new commands wait until then.
    pub hold_until_ns: SimTime,
    /// The whole array has failed.
    pub dead: bool,
}

pub(crate) struct Volume {
    pub name: String,
    pub replication: Option<usize>,
    pub qos: Option<QosState>,
    /// Host-level flow control of the hosts' devices for this volume: its kind and law.
    pub flow: Option<(&'static str, WindowLaw)>,
}

/// The array stage's state: the arrays' front ends and the volumes. Faults fail its controllers
/// and arrays through it; the media and the host ask it of a volume's replication, QoS or flow
/// control; the report reads it.
pub(super) struct ArrayStage {
    arrays: Vec<Array>,
    volumes: Vec<Volume>,
}

impl ArrayStage {
    pub(super) fn new(arrays: Vec<Array>, volumes: Vec<Volume>) -> Self {
        Self { arrays, volumes }
    }

    pub(super) fn arrays(&self) -> &[Array] {
        &self.arrays
    }

    pub(super) fn volumes(&self) -> &[Volume] {
        &self.volumes
    }

    pub(super) fn volume_count(&self) -> usize {
        self.volumes.len()
    }

    /// Volume `v`'s host-level flow control: its kind and law.
    pub(super) fn flow(&self, v: usize) -> Option<(&'static str, WindowLaw)> {
        self.volumes[v].flow
    }

    /// The replication pair volume `v` belongs to, if it is replicated.
    #[inline]
    pub(super) fn replication_of(&self, v: usize) -> Option<usize> {
        self.volumes[v].replication
    }

    /// Volume `v` runs below its QoS minimum (its requests go first at contended media).
    #[inline]
    pub(super) fn qos_below_min(&self, v: usize) -> bool {
        self.volumes[v].qos.as_ref().is_some_and(QosState::below_min)
    }

    pub(super) fn volume_name(&self, v: usize) -> &str {
        &self.volumes[v].name
    }

    pub(super) fn name(&self, a: usize) -> &str {
        &self.arrays[a].name
    }

    pub(super) fn is_dead(&self, a: usize) -> bool {
        self.arrays[a].dead
    }

    /// The whole of array `a` fails (`dead`) or comes back.
    #[cold]
    pub(super) fn set_dead(&mut self, a: usize, dead: bool) {
        self.arrays[a].dead = dead;
    }

    /// Controller `controller` of array `a` fails (`down`) or comes back; a failure holds new
    /// commands until `hold_until_ns`, while the other controller takes its work over.
    #[cold]
    pub(super) fn controller_edge(&mut self, a: usize, controller: usize, down: bool, hold_until_ns: SimTime) {
        let arr = &mut self.arrays[a];
        if let Some(cores) = arr.cores.as_mut() {
            cores.set_down(controller, down);
        }
        if down {
            arr.hold_until_ns = hold_until_ns;
        }
    }

    /// Array `a` drops an exchange it can no longer answer (an aborted command, a refused one).
    #[cold]
    pub(super) fn drop_exchange(&mut self, a: usize) {
        self.arrays[a].tally.failed += 1;
    }

    /// Array `a`'s cores: each one's name, share of the owned requests, utilisation and rate,
    /// over the measured time (`per_s` divides by it).
    pub(super) fn core_reports(&mut self, a: usize, now: SimTime, span_ns: SimTime, per_s: impl Fn(u64) -> f64) -> Vec<CoreReport> {
        self.arrays[a].cores.as_mut().map_or(vec![], |c| {
            let owned = c.owned_measured();
            let total: u64 = owned.iter().sum();
            (0..c.centres.len())
                .map(|k| CoreReport {
                    name: c.name(k),
                    share: if total == 0 { 0.0 } else { owned[k] as f64 / total as f64 },
                    util: Some(c.centres[k].utilisation(now, span_ns)),
                    iops: per_s(owned[k]),
                })
                .collect()
        })
    }

    /// The measured time starts at `now`: cores and QoS count from here.
    pub(super) fn measure_from(&mut self, now: SimTime) {
        for a in &mut self.arrays {
            if let Some(c) = a.cores.as_mut() {
                c.measure_from(now);
            }
        }
        for v in &mut self.volumes {
            if let Some(q) = v.qos.as_mut() {
                q.measure_from();
            }
        }
    }

    /// Every array's and core's figures of the sample interval into `series`; `window` ns long
    /// (`secs` s).
    pub(super) fn sample(&mut self, series: &mut TimeSeries, now: SimTime, window: SimTime, secs: f64) {
        for a in self.arrays.iter_mut() {
            a.tally.sample(series, secs);
            if let Some(cores) = a.cores.as_mut() {
                for (k, centre) in cores.centres.iter_mut().enumerate() {
                    let busy = centre.busy_ns(now);
                    let (owned0, busy0) = a.core_last[k];
                    series.push(a.core_series[k][0], (cores.owned[k] - owned0) as f64 / secs);
                    series.push(a.core_series[k][1], (busy - busy0) as f64 / window.max(1) as f64);
                    a.core_last[k] = (cores.owned[k], busy);
                }
            }
        }
    }
}

impl World {
    pub(super) fn cmd_at_array(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = self.host.array_of(r.device as usize, r.path as usize);
        if self.array.arrays[a].hold_until_ns > now {
            return self.hold(io, self.array.arrays[a].hold_until_ns);
        }
        if self.faults.refuses(r.volume as usize) && self.refuse(io, a) {
            return;
        }
        let arr = &mut self.array.arrays[a];
        if arr.max_outstanding.is_some_and(|m| arr.tally.issued - arr.tally.completed >= u64::from(m)) {
            // Target queue full: the command is refused with QUEUE FULL status.
            arr.qfull_sent += 1;
            return self.over_link(io, INBOUND, 0, Ev::QfullAtHost);
        }
        arr.tally.issued += 1;
        let rm = self.ios.get_mut(io);
        rm.array = a as u32;
        rm.t_array = now;
        rm.from_cache = false;
        let v = r.volume as usize;
        if let Some(qos) = self.array.volumes[v].qos.as_mut() {
            if !qos.arrive(now, io, u64::from(r.size_bytes)) {
                self.arm_qos_timer(v);
                return;
            }
        }
        self.serve_at_array(io);
    }

    /// A QoS-held request may go on.
    pub(super) fn qos_release(&mut self, v: usize) {
        let now = self.q.now();
        let Self { array, ios, .. } = self;
        let qos = array.volumes[v].qos.as_mut().expect("QoS timer of a volume with QoS");
        qos.timer_pending = false;
        if let Some(io) = qos.release(now, |i| u64::from(ios.get(i).size_bytes)) {
            qos.held_ns_sum += u128::from(now - ios.get(io).t_array);
            self.serve_at_array(io);
        }
        self.arm_qos_timer(v);
    }

    fn arm_qos_timer(&mut self, v: usize) {
        let qos = self.array.volumes[v].qos.as_mut().expect("volume with QoS");
        if let (false, Some(at)) = (qos.timer_pending, qos.next_release_ns()) {
            qos.timer_pending = true;
            self.q.schedule_at(at, pack(Ev::QosRelease, v as u32));
        }
    }

    /// The array takes the command on: a read goes to the media, a write asks for its data.
    fn serve_at_array(&mut self, io: u32) {
        let r = *self.ios.get(io);
        let a = r.array as usize;
        match r.op {
            Op::Read => {
                self.ios.get_mut(io).array_pending = 1;
                self.array_work(a, io);
            }
            Op::Write => {
                self.over_link(io, INBOUND, 0, Ev::XferRdyAtHost);
            }
        }
    }

    pub(super) fn data_at_array(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = r.array as usize;
        let mut pending = 1;
        if let Some((rep, _, dir)) = self.peer(&r) {
            match self.faults.mirror(rep) {
                Mirror::Healthy => {
                    let at = self.media.send_to_peer(rep, dir, now, u64::from(r.size_bytes));
                    self.q.schedule_at(at, pack(Ev::ReplAtPeer, io));
                    pending += 1;
                }
                // The copy waits for the mediator race.
                Mirror::Electing => {
                    self.stall(rep, io);
                    pending += 1;
                }
                // The winner keeps its own copy only; the loser refuses at the end.
                Mirror::Split { .. } => {}
            }
        }
        self.ios.get_mut(io).array_pending = pending;
        self.array_work(a, io);
    }

    /// The receiving array's own work on a request: its cores (when modelled), then the cache or
    /// the media.
    fn array_work(&mut self, a: usize, io: u32) {
        let now = self.q.now();
        let r = self.ios.get_mut(io);
        r.array_ns[0] = now - r.t_array;
        let Some(cores) = self.array.arrays[a].cores.as_mut() else { return self.after_cores(a, io) };
        let owner = cores.owner(self.ios.get(io).offset_bytes);
        cores.owned[owner] += 1;
        self.core_arrive(a, owner, io, false);
    }

    /// Core tokens: request index and stage (owner or data).
    fn core_arrive(&mut self, a: usize, core: usize, io: u32, data_stage: bool) {
        let now = self.q.now();
        let cores = self.array.arrays[a].cores.as_mut().expect("cores");
        if cores.centres[core].arrive(now, token(io, data_stage), false) {
            self.schedule_core_done(a, io, data_stage);
        }
    }

    fn schedule_core_done(&mut self, a: usize, io: u32, data_stage: bool) {
        let cores = self.array.arrays[a].cores.as_mut().expect("cores");
        let (time, ev) = if data_stage { (cores.data_time.draw_ns(), Ev::DataCoreDone) } else { (cores.owner_time.draw_ns(), Ev::OwnerCoreDone) };
        self.q.schedule_in(time, pack(ev, io));
    }

    pub(super) fn core_done(&mut self, io: u32, data_stage: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let a = r.array as usize;
        let cores = self.array.arrays[a].cores.as_mut().expect("cores");
        let core = if data_stage { cores.data_core(r.offset_bytes) } else { cores.owner(r.offset_bytes) };
        let has_data_stage = !cores.data_time.is_zero();
        if let Some(next) = cores.centres[core].depart(now) {
            let (io, data_stage) = untoken(next);
            self.schedule_core_done(a, io, data_stage);
        }
        if !data_stage && has_data_stage {
            let data_core = self.array.arrays[a].cores.as_ref().expect("cores").data_core(r.offset_bytes);
            self.core_arrive(a, data_core, io, true);
        } else {
            self.after_cores(a, io);
        }
    }

    /// A read that hits the cache is served from it; everything else goes to the media.
    fn after_cores(&mut self, a: usize, io: u32) {
        let now = self.q.now();
        let r = self.ios.get_mut(io);
        r.array_ns[1] = now - r.t_array - r.array_ns[0];
        let r = *r;
        if let Some(cache) = self.array.arrays[a].cache.as_mut() {
            let hit = cache.access(r.offset_bytes, u64::from(r.size_bytes), r.op == Op::Read);
            if hit && r.op == Op::Read {
                let hit_ns = cache.hit.draw_ns();
                self.ios.get_mut(io).from_cache = true;
                self.q.schedule_in(hit_ns, pack(Ev::CacheHitDone, io));
                return;
            }
        }
        self.start_media(a, io, false);
    }

    /// One of the steps the array waits for (local store, peer ack) is done; send status when all are.
    pub(super) fn array_step_done(&mut self, io: u32) {
        let now = self.q.now();
        let r = self.ios.get_mut(io);
        r.array_pending -= 1;
        if r.array_pending > 0 {
            return;
        }
        let r = *r;
        let a = r.array as usize;
        if self.faults.refuses(r.volume as usize) && self.refuse(io, a) {
            return;
        }
        let measured = now >= self.warmup_ns;
        self.array.arrays[a].tally.done(now - r.t_array, r.size_bytes, measured);
        let rm = self.ios.get_mut(io);
        rm.array = NONE;
        rm.array_ns[2] = now - r.t_array - r.array_ns[0] - r.array_ns[1];
        let bytes = if r.op == Op::Read { u64::from(r.size_bytes) } else { 0 };
        self.over_link(io, INBOUND, bytes, Ev::StatusAtHost);
    }
}
