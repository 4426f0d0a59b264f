//! Faults: at the times of the `[[event]]` tables links go down and come back, change latency or
//! bandwidth, controllers and arrays fail, the replication link fails (the pair's mediator race),
//! port groups change ALUA state and volumes are lost. What the host does about it is in
//! `recovery`.

use super::{pack, Ev, World};
use crate::multipath::Alua;
use crate::noise::Delay;
use sanlab_des::{RngStream, SimTime};

/// The faults stage's state: the `[[event]]`s as they run, the replication pairs' mirrors, the
/// arrays' refusals of volumes, and the timeline as it happened. The array and the media read a
/// mirror's state, the array and the host's recovery a volume's refusals; the completion of every
/// request tells it its latency; the report reads the timeline.
pub(super) struct FaultStage {
    runs: Vec<FaultRun>,
    /// Per replication pair.
    mirrors: Vec<MirrorHealth>,
    /// Per volume: the arrays that will not serve it now (a mediator race lost, a PDL).
    refusals: Vec<Vec<VolumeRefusal>>,
    /// The fault timeline as it happened, and the longest I/O latency since its last edge.
    log: Vec<FaultEdge>,
    edge_max_latency_ns: u64,
}

impl FaultStage {
    pub(super) fn new(runs: Vec<FaultRun>, mirrors: Vec<MirrorHealth>, volumes: usize) -> Self {
        Self { runs, mirrors, refusals: (0..volumes).map(|_| vec![]).collect(), log: vec![], edge_max_latency_ns: 0 }
    }

    pub(super) fn runs(&self) -> &[FaultRun] {
        &self.runs
    }

    /// The timeline, and the longest I/O latency since its last edge.
    pub(super) fn edges(&self) -> (&[FaultEdge], u64) {
        (&self.log, self.edge_max_latency_ns)
    }

    /// A VM request completed after `latency_ns`: the current edge's longest latency.
    #[inline]
    pub(super) fn note_latency(&mut self, latency_ns: u64) {
        if !self.log.is_empty() {
            self.edge_max_latency_ns = self.edge_max_latency_ns.max(latency_ns);
        }
    }

    /// Pair `rep`'s mirror.
    #[inline]
    pub(super) fn mirror(&self, rep: usize) -> Mirror {
        self.mirrors[rep].state
    }

    /// Whether some array refuses volume `v` now.
    #[inline]
    pub(super) fn refuses(&self, v: usize) -> bool {
        !self.refusals[v].is_empty()
    }

    /// Why array `a` refuses volume `v`, if it does.
    #[cold]
    pub(super) fn refusal(&self, v: usize, a: usize) -> Option<Refusal> {
        self.refusals[v].iter().find(|x| x.array == a).map(|x| x.refusal)
    }

    /// Whether volume `v` is permanently lost on some array.
    #[cold]
    pub(super) fn lost_for_good(&self, v: usize) -> bool {
        self.refusals[v].iter().any(|x| x.refusal == Refusal::Pdl)
    }

    /// A host marked path `p` of device `d` (then in state `alua`) for array `a`'s refusal of
    /// volume `v`: restored when the refusal is lifted.
    #[cold]
    pub(super) fn mark(&mut self, v: usize, a: usize, d: usize, p: usize, alua: Alua) {
        if let Some(x) = self.refusals[v].iter_mut().find(|x| x.array == a) {
            x.marked.push((d, p, alua));
        }
    }
}

/// What a fault does.
pub(crate) enum Change {
    Down { notice: bool },
    /// Latencies (out, in) swapped into the link's directions when the fault starts, and back.
    Latency([Delay; 2]),
    /// Picoseconds per byte (out, in), swapped likewise.
    Bandwidth([u64; 2]),
    Controller { controller: usize, takeover_ns: u64 },
    Array,
    Replication(usize),
    Alua { state: Alua, transition_ns: u64 },
    DeviceLost { volume: usize },
}

pub(crate) struct FaultRun {
    pub kind: &'static str,
    pub target: String,
    /// The links of the paths it acts on.
    pub links: Vec<usize>,
    pub array: Option<usize>,
    pub at_ns: SimTime,
    pub until_ns: Option<SimTime>,
    pub every_ns: Option<SimTime>,
    pub change: Change,
    /// Device paths whose ALUA state it changed, with the state to restore: (device, path, state).
    pub touched: Vec<(usize, usize, Alua)>,
}

/// An active-active pair's mirror.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mirror {
    Healthy,
    /// The link is gone and both arrays race to the mediator: writes wait.
    Electing,
    /// The winner serves alone; the loser refuses the pair's volumes.
    Split { winner: usize },
}

pub(super) struct MirrorHealth {
    pub state: Mirror,
    /// Faults holding the mirror broken (its link down, one of its arrays down).
    pub broken_by: u32,
    /// Writes whose copy to the peer (or its acknowledgement) waits for the race.
    pub stalled: Vec<u32>,
    /// Decides the race when no array is preferred.
    pub mediator: RngStream,
}

/// Why an array will not serve a volume.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The loser of a mediator race: ALUA state unavailable, the host moves to other paths.
    Unavailable,
    /// Permanent device loss: the command fails.
    Pdl,
}

/// An array not serving a volume, and the device paths hosts marked for it (to restore).
struct VolumeRefusal {
    pub array: usize,
    pub refusal: Refusal,
    pub marked: Vec<(usize, usize, Alua)>,
}

/// One edge of the fault timeline, for the report.
pub(crate) struct FaultEdge {
    pub t_ns: SimTime,
    pub fault: usize,
    pub phase: &'static str,
    pub detail: String,
    /// Longest VM I/O latency of the I/Os completing from this edge to the next (or the end).
    pub max_latency_ns: u64,
}

// Faults are rare: their handlers stay out of line, so the hot path keeps its inlining.
impl World {
    /// A fault starts (`start`) or is undone; a repeating one is then armed for its next time.
    #[cold]
    pub(super) fn fault_edge(&mut self, k: usize, start: bool) {
        let now = self.q.now();
        let f = &self.faults.runs[k];
        if let (false, Some(every), Some(until)) = (start, f.every_ns, f.until_ns) {
            // The next time, unless it would start when the run ends.
            let next_ns = now - (until - f.at_ns) + every;
            if next_ns < self.end_ns {
                self.q.schedule_at(next_ns, pack(Ev::FaultStart, k as u32));
                self.q.schedule_at(now + every, pack(Ev::FaultEnd, k as u32));
            }
        }
        let links = std::mem::take(&mut self.faults.runs[k].links);
        let mut detail = String::new();
        match &mut self.faults.runs[k].change {
            Change::Down { notice } => {
                let notice = *notice;
                detail = if notice { "with notice" } else { "silent" }.into();
                self.links_down(&links, start, notice);
            }
            Change::Latency(delays) => {
                for &l in &links {
                    self.fabric.swap_latency(l, delays);
                }
            }
            Change::Bandwidth(ps) => {
                for &l in &links {
                    self.fabric.swap_bandwidth(l, ps);
                }
            }
            &mut Change::Controller { controller, takeover_ns } => {
                let a = self.faults.runs[k].array.expect("a controller's array");
                self.array.controller_edge(a, controller, start, now + takeover_ns);
                if start {
                    detail = format!("takeover {} s", takeover_ns as f64 / 1e9);
                }
                self.links_down(&links, start, true);
            }
            Change::Array => {
                let a = self.faults.runs[k].array.expect("an array");
                self.array.set_dead(a, start);
                self.links_down(&links, start, true);
                for rep in 0..self.media.replication_count() {
                    if self.media.replication(rep).arrays.contains(&a) {
                        self.mirror_edge(rep, start);
                    }
                }
            }
            &mut Change::Replication(rep) => self.mirror_edge(rep, start),
            &mut Change::Alua { state, transition_ns } => {
                detail = state.name().into();
                if start {
                    let first = if transition_ns > 0 { Alua::Transitioning } else { state };
                    let touched = self.set_alua(&links, first);
                    self.faults.runs[k].touched = touched;
                    if transition_ns > 0 {
                        self.q.schedule_at(now + transition_ns, pack(Ev::AluaSettle, k as u32));
                    }
                } else {
                    let touched = std::mem::take(&mut self.faults.runs[k].touched);
                    self.set_paths_alua(touched);
                }
            }
            &mut Change::DeviceLost { volume } => {
                let a = self.faults.runs[k].array.expect("an array");
                if start {
                    self.faults.refusals[volume].push(VolumeRefusal { array: a, refusal: Refusal::Pdl, marked: vec![] });
                } else {
                    self.lift_refusal(volume, a);
                }
            }
        }
        self.faults.runs[k].links = links;
        self.note_edge(k, if start { "start" } else { "end" }, detail);
    }

    /// Records an edge of the timeline; the previous edge's window of I/O latency closes.
    #[cold]
    fn note_edge(&mut self, fault: usize, phase: &'static str, detail: String) {
        let f = &mut self.faults;
        if let Some(last) = f.log.last_mut() {
            last.max_latency_ns = f.edge_max_latency_ns;
        }
        f.edge_max_latency_ns = 0;
        f.log.push(FaultEdge { t_ns: self.q.now(), fault, phase, detail, max_latency_ns: 0 });
    }

    /// Links go down (`down`) or come back; with `notice` the hosts hear of it after their
    /// notice delay.
    #[cold]
    fn links_down(&mut self, links: &[usize], down: bool, notice: bool) {
        let now = self.q.now();
        for &l in links {
            let host = self.fabric.link_edge(l, down, notice, now);
            if notice {
                self.q.schedule_at(now + self.host.failover(host).notice_ns, pack(Ev::LinkNotice, l as u32));
            }
        }
    }

    /// The state `alua` on every device path over `links`; returns what each was.
    #[cold]
    fn set_alua(&mut self, links: &[usize], alua: Alua) -> Vec<(usize, usize, Alua)> {
        let was = self.host.paths_over(links);
        self.set_paths_alua(was.iter().map(|&(d, p, _)| (d, p, alua)));
        was
    }

    /// Sets each (device, path)'s state, logging one event per device and state.
    #[cold]
    fn set_paths_alua(&mut self, changes: impl IntoIterator<Item = (usize, usize, Alua)>) {
        let now = self.q.now();
        for (d, p, alua) in changes {
            self.host.set_alua(d, p, alua, now);
        }
    }

    #[cold]
    pub(super) fn set_path_alua(&mut self, d: usize, p: usize, alua: Alua) {
        self.set_paths_alua([(d, p, alua)]);
    }

    /// An `alua_state` event's transition is over: its paths take the new state.
    #[cold]
    pub(super) fn alua_settle(&mut self, k: usize) {
        let Change::Alua { state, .. } = self.faults.runs[k].change else { unreachable!("only ALUA events settle") };
        let touched = std::mem::take(&mut self.faults.runs[k].touched);
        self.set_paths_alua(touched.iter().map(|&(d, p, _)| (d, p, state)));
        self.faults.runs[k].touched = touched;
    }


    /// Array `a` serves volume `v` again: the paths hosts marked come back (a PDL path at the
    /// host's next path check: here at once, as the checker's TUR would find it).
    #[cold]
    fn lift_refusal(&mut self, v: usize, a: usize) {
        let Some(k) = self.faults.refusals[v].iter().position(|x| x.array == a) else { return };
        let lifted = self.faults.refusals[v].swap_remove(k);
        for (d, p, alua) in lifted.marked {
            match lifted.refusal {
                Refusal::Unavailable => self.set_path_alua(d, p, alua),
                Refusal::Pdl => self.host.set_path_up(d, p, true, self.q.now(), "path alive"),
            }
        }
    }

    /// An array taking over a failed controller's work holds new commands until `until_ns`.
    #[cold]
    pub(super) fn hold(&mut self, io: u32, until_ns: SimTime) {
        self.q.schedule_at(until_ns, pack(Ev::CmdAtArray, io));
    }

    // ---- the mirror -----------------------------------------------------------------------

    /// Replication pair `rep` loses its link (or an array) or gets it back.
    #[cold]
    fn mirror_edge(&mut self, rep: usize, broken: bool) {
        let m = &mut self.faults.mirrors[rep];
        if broken {
            m.broken_by += 1;
            if m.state == Mirror::Healthy {
                m.state = Mirror::Electing;
                let at = self.q.now() + self.media.replication(rep).election_ns;
                self.q.schedule_at(at, pack(Ev::MirrorDecided, rep as u32));
            }
            return;
        }
        m.broken_by -= 1;
        if m.broken_by > 0 {
            return;
        }
        if m.state == Mirror::Electing {
            self.mirror_decided(rep);
        }
        let m = &mut self.faults.mirrors[rep];
        // Resynchronised (at once: our simplification): the loser serves the volumes again.
        if let Mirror::Split { winner } = m.state {
            m.state = Mirror::Healthy;
            let loser = self.media.replication(rep).peer_of(winner).0;
            for v in 0..self.array.volume_count() {
                if self.array.replication_of(v) == Some(rep) {
                    self.lift_refusal(v, loser);
                }
            }
        }
    }

    /// The mediator race of pair `rep` is decided: the preferred array if it is alive, else a
    /// surviving one, else a draw; the loser refuses the pair's volumes; stalled writes finish.
    #[cold]
    pub(super) fn mirror_decided(&mut self, rep: usize) {
        if self.faults.mirrors[rep].state != Mirror::Electing {
            return;
        }
        let pair = self.media.replication(rep);
        let [a, b] = pair.arrays;
        let winner = match (pair.preferred, self.array.is_dead(a), self.array.is_dead(b)) {
            (Some(p), _, _) if !self.array.is_dead(p) => p,
            (_, true, false) => b,
            (_, false, true) => a,
            _ => {
                if self.faults.mirrors[rep].mediator.uniform() < 0.5 { a } else { b }
            }
        };
        let loser = pair.peer_of(winner).0;
        let faults = &mut self.faults;
        faults.mirrors[rep].state = Mirror::Split { winner };
        for v in 0..self.array.volume_count() {
            if self.array.replication_of(v) == Some(rep) {
                faults.refusals[v].push(VolumeRefusal { array: loser, refusal: Refusal::Unavailable, marked: vec![] });
            }
        }
        let k = faults.runs.iter().position(|f| matches!(f.change, Change::Replication(r) if r == rep)).or_else(|| faults.runs.iter().position(|f| matches!(f.change, Change::Array) && f.array.is_some_and(|x| pair.arrays.contains(&x))));
        let detail = format!("{} keeps the volumes, {} stops serving them", self.array.name(winner), self.array.name(loser));
        self.note_edge(k.unwrap_or(0), "mediator", detail);
        // The peer step of each stalled write is given up: the winner acknowledges from its own
        // copy, the loser refuses (array_step_done checks).
        for io in std::mem::take(&mut self.faults.mirrors[rep].stalled) {
            self.array_step_done(io);
        }
    }

    /// A write's copy to its peer, or the peer's acknowledgement, cannot cross the broken link:
    /// it waits for the race.
    #[cold]
    pub(super) fn stall(&mut self, rep: usize, io: u32) {
        self.faults.mirrors[rep].stalled.push(io);
    }

    /// The run starts: each `[[event]]` is armed at its start and its end.
    pub(super) fn arm_faults(&mut self) {
        for (k, f) in self.faults.runs.iter().enumerate() {
            self.q.schedule_at(f.at_ns, pack(Ev::FaultStart, k as u32));
            if let Some(until) = f.until_ns {
                self.q.schedule_at(until, pack(Ev::FaultEnd, k as u32));
            }
        }
    }
}
