//! Faults: at the times of the `[[event]]` tables links go down and come back, change latency or
//! bandwidth, controllers and arrays fail, the replication link fails (the pair's mediator race),
//! port groups change ALUA state and volumes are lost. What the host does about it is in
//! `recovery`.

use super::host::log_path_event;
use super::{pack, Ev, World};
use crate::multipath::Alua;
use crate::noise::Delay;
use sanlab_des::{RngStream, SimTime};

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
pub(crate) struct VolumeRefusal {
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
        let f = &self.faults[k];
        if let (false, Some(every), Some(until)) = (start, f.every_ns, f.until_ns) {
            // The next time, unless it would start when the run ends.
            let next_ns = now - (until - f.at_ns) + every;
            if next_ns < self.end_ns {
                self.q.schedule_at(next_ns, pack(Ev::FaultStart, k as u32));
                self.q.schedule_at(now + every, pack(Ev::FaultEnd, k as u32));
            }
        }
        let links = std::mem::take(&mut self.faults[k].links);
        let mut detail = String::new();
        match &mut self.faults[k].change {
            Change::Down { notice } => {
                let notice = *notice;
                detail = if notice { "with notice" } else { "silent" }.into();
                self.links_down(&links, start, notice);
            }
            Change::Latency(delays) => {
                for &l in &links {
                    for (dir, d) in self.links[l].dirs.iter_mut().zip(delays.iter_mut()) {
                        std::mem::swap(&mut dir.latency, d);
                    }
                }
            }
            Change::Bandwidth(ps) => {
                for &l in &links {
                    for (dir, p) in self.links[l].dirs.iter_mut().zip(ps.iter_mut()) {
                        dir.swap_bandwidth(p);
                    }
                }
            }
            &mut Change::Controller { controller, takeover_ns } => {
                let a = self.faults[k].array.expect("a controller's array");
                if let Some(cores) = self.arrays[a].cores.as_mut() {
                    cores.set_down(controller, start);
                }
                if start {
                    self.arrays[a].hold_until_ns = now + takeover_ns;
                    detail = format!("takeover {} s", takeover_ns as f64 / 1e9);
                }
                self.links_down(&links, start, true);
            }
            Change::Array => {
                let a = self.faults[k].array.expect("an array");
                self.arrays[a].dead = start;
                self.links_down(&links, start, true);
                for rep in 0..self.replications.len() {
                    if self.replications[rep].arrays.contains(&a) {
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
                    self.faults[k].touched = touched;
                    if transition_ns > 0 {
                        self.q.schedule_at(now + transition_ns, pack(Ev::AluaSettle, k as u32));
                    }
                } else {
                    let touched = std::mem::take(&mut self.faults[k].touched);
                    self.set_paths_alua(touched);
                }
            }
            &mut Change::DeviceLost { volume } => {
                let a = self.faults[k].array.expect("an array");
                if start {
                    self.volumes[volume].refusals.push(VolumeRefusal { array: a, refusal: Refusal::Pdl, marked: vec![] });
                } else {
                    self.lift_refusal(volume, a);
                }
            }
        }
        self.faults[k].links = links;
        self.note_edge(k, if start { "start" } else { "end" }, detail);
    }

    /// Records an edge of the timeline; the previous edge's window of I/O latency closes.
    #[cold]
    pub(super) fn note_edge(&mut self, fault: usize, phase: &'static str, detail: String) {
        if let Some(last) = self.fault_log.last_mut() {
            last.max_latency_ns = self.edge_max_latency_ns;
        }
        self.edge_max_latency_ns = 0;
        self.fault_log.push(FaultEdge { t_ns: self.q.now(), fault, phase, detail, max_latency_ns: 0 });
    }

    /// Links go down (`down`) or come back; with `notice` the hosts hear of it after their
    /// notice delay.
    #[cold]
    fn links_down(&mut self, links: &[usize], down: bool, notice: bool) {
        let now = self.q.now();
        for &l in links {
            let h = &mut self.health[l];
            if down {
                h.down += 1;
                h.down_ns = now;
            } else {
                h.down -= 1;
            }
            h.notice = notice;
            if notice {
                self.q.schedule_at(now + self.hosts[h.host].failover.notice_ns, pack(Ev::LinkNotice, l as u32));
            }
        }
    }

    /// The state `alua` on every device path over `links`; returns what each was.
    #[cold]
    fn set_alua(&mut self, links: &[usize], alua: Alua) -> Vec<(usize, usize, Alua)> {
        let mut was = vec![];
        for (d, dev) in self.devices.iter().enumerate() {
            for (p, link) in dev.path_links.iter().enumerate() {
                if links.contains(link) {
                    was.push((d, p, dev.states[p].alua));
                }
            }
        }
        self.set_paths_alua(was.iter().map(|&(d, p, _)| (d, p, alua)));
        was
    }

    /// Sets each (device, path)'s state, logging one event per device and state.
    #[cold]
    fn set_paths_alua(&mut self, changes: impl IntoIterator<Item = (usize, usize, Alua)>) {
        let now = self.q.now();
        for (d, p, alua) in changes {
            let dev = &mut self.devices[d];
            if dev.states[p].alua == alua {
                continue;
            }
            dev.states[p].alua = alua;
            log_path_event(&mut dev.psp_log, now, &format!("ALUA {}", alua.name()), p);
        }
    }

    #[cold]
    pub(super) fn set_path_alua(&mut self, d: usize, p: usize, alua: Alua) {
        self.set_paths_alua([(d, p, alua)]);
    }

    /// An `alua_state` event's transition is over: its paths take the new state.
    #[cold]
    pub(super) fn alua_settle(&mut self, k: usize) {
        let Change::Alua { state, .. } = self.faults[k].change else { unreachable!("only ALUA events settle") };
        let touched = std::mem::take(&mut self.faults[k].touched);
        self.set_paths_alua(touched.iter().map(|&(d, p, _)| (d, p, state)));
        self.faults[k].touched = touched;
    }


    /// Array `a` serves volume `v` again: the paths hosts marked come back (a PDL path at the
    /// host's next path check: here at once, as the checker's TUR would find it).
    #[cold]
    fn lift_refusal(&mut self, v: usize, a: usize) {
        let Some(k) = self.volumes[v].refusals.iter().position(|x| x.array == a) else { return };
        let lifted = self.volumes[v].refusals.swap_remove(k);
        for (d, p, alua) in lifted.marked {
            match lifted.refusal {
                Refusal::Unavailable => self.set_path_alua(d, p, alua),
                Refusal::Pdl => {
                    self.devices[d].states[p].up = true;
                    log_path_event(&mut self.devices[d].psp_log, self.q.now(), "path alive", p);
                }
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
        let m = &mut self.mirrors[rep];
        if broken {
            m.broken_by += 1;
            if m.state == Mirror::Healthy {
                m.state = Mirror::Electing;
                let at = self.q.now() + self.replications[rep].election_ns;
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
        let m = &mut self.mirrors[rep];
        // Resynchronised (at once: our simplification): the loser serves the volumes again.
        if let Mirror::Split { winner } = m.state {
            m.state = Mirror::Healthy;
            let loser = self.replications[rep].peer_of(winner).0;
            for v in 0..self.volumes.len() {
                if self.volumes[v].replication == Some(rep) {
                    self.lift_refusal(v, loser);
                }
            }
        }
    }

    /// The mediator race of pair `rep` is decided: the preferred array if it is alive, else a
    /// surviving one, else a draw; the loser refuses the pair's volumes; stalled writes finish.
    #[cold]
    pub(super) fn mirror_decided(&mut self, rep: usize) {
        if self.mirrors[rep].state != Mirror::Electing {
            return;
        }
        let pair = &self.replications[rep];
        let [a, b] = pair.arrays;
        let winner = match (pair.preferred, self.arrays[a].dead, self.arrays[b].dead) {
            (Some(p), _, _) if !self.arrays[p].dead => p,
            (_, true, false) => b,
            (_, false, true) => a,
            _ => {
                if self.mirrors[rep].mediator.uniform() < 0.5 { a } else { b }
            }
        };
        let loser = pair.peer_of(winner).0;
        self.mirrors[rep].state = Mirror::Split { winner };
        for v in 0..self.volumes.len() {
            if self.volumes[v].replication == Some(rep) {
                self.volumes[v].refusals.push(VolumeRefusal { array: loser, refusal: Refusal::Unavailable, marked: vec![] });
            }
        }
        let k = self.faults.iter().position(|f| matches!(f.change, Change::Replication(r) if r == rep)).or_else(|| self.faults.iter().position(|f| matches!(f.change, Change::Array) && f.array.is_some_and(|x| pair.arrays.contains(&x))));
        let detail = format!("{} keeps the volumes, {} stops serving them", self.arrays[winner].name, self.arrays[loser].name);
        self.note_edge(k.unwrap_or(0), "mediator", detail);
        // The peer step of each stalled write is given up: the winner acknowledges from its own
        // copy, the loser refuses (array_step_done checks).
        for io in std::mem::take(&mut self.mirrors[rep].stalled) {
            self.array_step_done(io);
        }
    }

    /// A write's copy to its peer, or the peer's acknowledgement, cannot cross the broken link:
    /// it waits for the race.
    #[cold]
    pub(super) fn stall(&mut self, rep: usize, io: u32) {
        self.mirrors[rep].stalled.push(io);
    }
}
