//! Faults and the host's reaction. At the times of the `[[event]]` tables links go down and come
//! back, change latency or bandwidth, controllers and arrays fail, the replication link fails,
//! port groups change ALUA state and volumes are lost. A frame sent on a down link is lost; the
//! host aborts the command when it learns of the loss (at once if it knows the path is dead, at
//! the fabric's notice, else at its command timeout), frees its adapter slot, and retries it on
//! the path its PSP picks. Frames already on the wire when a link goes down still arrive. An array
//! that will not serve a volume answers with a sense code: ALUA unavailable (the host retries
//! elsewhere) or PDL (the command fails). With no usable path a command waits for a path until the
//! host's APD timeout, then fails.

use super::{pack, Ev, World};
use crate::host::failover::Reason;
use crate::io::{Stage, NONE};
use crate::multipath::{Alua, PspEvent};
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

/// A link's health, and what the host of its paths knows of it.
pub(super) struct LinkHealth {
    /// Faults holding the link down (a port and an adapter may both be down).
    pub down: u32,
    /// The last failure or return was reported to the host (RSCN), or was silent.
    pub notice: bool,
    pub down_ns: SimTime,
    /// The host's path checker probes this link (its paths were found dead without notice).
    pub checking: bool,
    /// The host whose paths run over the link (its failover timings apply).
    pub host: usize,
}

impl LinkHealth {
    #[inline]
    pub fn up(&self) -> bool {
        self.down == 0
    }
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

/// Logs `event` on path `p`, joining the previous entry when it is the same event at the same time.
fn log_path_event(log: &mut Vec<PspEvent>, t_ns: SimTime, event: &str, p: usize) {
    match log.last_mut() {
        Some(last) if last.t_ns == t_ns && last.event == event => last.paths.push(p),
        _ => log.push(PspEvent { t_ns, event: event.into(), paths: vec![p] }),
    }
}

// Faults are rare: their handlers stay out of line, so the hot path keeps its inlining.
impl World {
    /// A fault starts (`start`) or is undone; a repeating one is then armed for its next time.
    #[cold]
    pub(super) fn fault_edge(&mut self, k: usize, start: bool) {
        let now = self.q.now();
        let f = &self.faults[k];
        if let (false, Some(every), Some(until)) = (start, f.every_ns, f.until_ns) {
            self.q.schedule_at(now - (until - f.at_ns) + every, pack(Ev::FaultStart, k as u32));
            self.q.schedule_at(now + every, pack(Ev::FaultEnd, k as u32));
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
                    self.volumes[volume].refusals.push(super::failover::VolumeRefusal { array: a, refusal: Refusal::Pdl, marked: vec![] });
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
            for (p, path) in dev.paths.iter().enumerate() {
                if links.contains(&path.link) {
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
    fn set_path_alua(&mut self, d: usize, p: usize, alua: Alua) {
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

    /// The fabric told the host of link `l`'s state (RSCN).
    #[cold]
    pub(super) fn link_notice(&mut self, l: usize) {
        self.set_paths(l, self.health[l].up());
    }

    /// The path checker probes link `l`: its paths come back when it is up, else it probes again.
    #[cold]
    pub(super) fn path_check(&mut self, l: usize) {
        if self.health[l].up() {
            self.health[l].checking = false;
            self.set_paths(l, true);
        } else {
            let at = self.q.now() + self.hosts[self.health[l].host].failover.path_check_ns;
            self.q.schedule_at(at, pack(Ev::PathCheck, l as u32));
        }
    }

    /// Marks every device path over link `l` alive or dead, logging each change (paths changing
    /// together in one event).
    #[cold]
    fn set_paths(&mut self, l: usize, up: bool) {
        let now = self.q.now();
        let event = if up { "path alive" } else { "path dead" };
        for dev in &mut self.devices {
            for (p, path) in dev.paths.iter().enumerate() {
                if path.link == l && dev.states[p].up != up {
                    dev.states[p].up = up;
                    log_path_event(&mut dev.psp_log, now, event, p);
                }
            }
        }
    }

    /// A frame of `io` went out on down link `l` and is lost: the host will abort the command.
    #[cold]
    pub(super) fn lost(&mut self, io: u32, l: usize) {
        let now = self.q.now();
        let r = self.ios.get(io);
        let dev = &self.devices[r.device as usize];
        let failover = self.hosts[dev.host].failover;
        let h = &self.health[l];
        let at = if !dev.states[r.path as usize].up {
            now
        } else if h.notice {
            h.down_ns + failover.notice_ns
        } else {
            r.t_dispatch + failover.command_timeout_ns
        };
        self.q.schedule_at(at.max(now), pack(Ev::Abort, io));
    }

    /// The host gives up on a lost command: unless told the path is back, it holds the path dead
    /// (a silent failure arms the path checker); the adapter slot and the array's exchange are
    /// freed and the command goes again.
    #[cold]
    pub(super) fn abort(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let d = r.device as usize;
        let host = self.devices[d].host;
        let l = self.devices[d].paths[r.path as usize].link;
        let h = &mut self.health[l];
        if !(h.notice && h.up()) {
            if !h.notice && !h.checking {
                h.checking = true;
                self.q.schedule_at(now + self.hosts[host].failover.path_check_ns, pack(Ev::PathCheck, l as u32));
            }
            self.set_paths(l, false);
        }
        if let Some(next) = self.hosts[host].adapter_q.leave(now) {
            self.send_command(next);
        }
        if r.array != NONE {
            // The array drops the exchange it can no longer answer.
            self.arrays[r.array as usize].tally.failed += 1;
            self.ios.get_mut(io).array = NONE;
        }
        self.retry(io);
    }

    /// A command goes again on the path the PSP picks now, counted as retried.
    #[cold]
    fn retry(&mut self, io: u32) {
        let r = self.ios.get(io);
        let (d, p, vm) = (r.device as usize, r.path as usize, self.jobs[r.job as usize].vm);
        self.devices[d].retried += 1;
        self.devices[d].paths[p].retried += 1;
        self.vms[vm].retried += 1;
        self.redispatch(io);
    }

    /// A command goes again: a lost one, or one that found no usable path.
    #[cold]
    pub(super) fn redispatch(&mut self, io: u32) {
        if self.ios.get(io).path == NONE {
            self.dispatch(io);
        } else if self.place(io) {
            self.enter_adapter(io);
        }
    }

    /// Puts `io` (a device-level request or a piece of one) on the path the PSP picks; the
    /// device-level request moves there, and the path it leaves counts it failed over. With no
    /// usable path it waits (`no_path`); returns false then.
    pub(super) fn place(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let dev = &mut self.devices[r.device as usize];
        for (state, path) in dev.states.iter_mut().zip(&dev.paths) {
            state.controller_outstanding = self.link_outstanding[path.link];
        }
        let Some(p) = dev.psp.select(now, r.size_bytes, &dev.states, &mut dev.psp_log) else {
            return self.no_path(io);
        };
        if dev.no_path_since_ns.is_some() {
            dev.no_path_since_ns = None;
        }
        let owner = if r.wire { r.parent } else { io };
        let (old, owner_bytes) = (self.ios.get(owner).path, self.ios.get(owner).size_bytes);
        if old as usize != p {
            if old != NONE {
                dev.carry(old as usize, owner_bytes, &mut self.link_outstanding, false);
                dev.paths[old as usize].tally.failed += 1;
            }
            dev.carry(p, owner_bytes, &mut self.link_outstanding, true);
            dev.paths[p].tally.issued += 1;
            let o = self.ios.get_mut(owner);
            o.path = p as u32;
            o.stage = Stage::Path;
            o.t_dispatch = now;
        }
        let c = self.ios.get_mut(io);
        c.path = p as u32;
        c.t_dispatch = now;
        true
    }

    /// No path can carry `io` (all paths down): it waits and is tried again at the next path
    /// check, until the device has been without a path for the APD timeout; then it fails.
    #[cold]
    fn no_path(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let apd_timeout_ns = self.hosts[self.devices[d].host].failover.apd_timeout_ns;
        let since = *self.devices[d].no_path_since_ns.get_or_insert(now);
        let expiry = since.saturating_add(apd_timeout_ns);
        let v = self.ios.get(io).volume as usize;
        if self.volumes[v].refusals.iter().any(|x| x.refusal == Refusal::Pdl) {
            // Permanent device loss, not all-paths-down: no waiting.
            self.fail(io, Reason::Pdl);
        } else if apd_timeout_ns == 0 {
            self.fail(io, Reason::NoPath);
        } else if now >= expiry {
            self.fail(io, Reason::ApdTimeout);
        } else {
            let check = now + self.hosts[self.devices[d].host].failover.path_check_ns;
            self.q.schedule_at(check.min(expiry), pack(Ev::Redispatch, io));
        }
        false
    }

    /// `io` (not on the wire) fails: its device-level request and VM request end as failed with
    /// `reason`. Done as an event so a failing queue does not recurse.
    #[cold]
    fn fail(&mut self, io: u32, reason: Reason) {
        let r = self.ios.get(io);
        let owner = if r.wire { r.parent } else { io };
        if !self.failing.iter().any(|&(i, _)| i == owner) {
            self.failing.push((owner, reason));
        }
        self.q.schedule_at(self.q.now(), pack(Ev::Failed, io));
    }

    /// A failed piece or request comes back like a status, marked failed.
    #[cold]
    pub(super) fn failed(&mut self, io: u32) {
        let r = *self.ios.get(io);
        if r.wire {
            self.piece_done(io, r.parent, Self::device_done);
        } else {
            self.device_done(io);
        }
    }

    /// The failure recorded for request `io`, taken off the list.
    #[inline]
    pub(super) fn take_failure(&mut self, io: u32) -> Option<Reason> {
        if self.failing.is_empty() {
            return None;
        }
        self.take_failure_slow(io)
    }

    #[cold]
    fn take_failure_slow(&mut self, io: u32) -> Option<Reason> {
        let k = self.failing.iter().position(|&(i, _)| i == io)?;
        Some(self.failing.swap_remove(k).1)
    }

    /// A device-level request failed: its path and device count it; its VM request fails too.
    #[cold]
    pub(super) fn device_failed(&mut self, io: u32, reason: Reason) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let d = r.device as usize;
        let dev = &mut self.devices[d];
        if r.path != NONE {
            dev.carry(r.path as usize, r.size_bytes, &mut self.link_outstanding, false);
            dev.paths[r.path as usize].tally.failed += 1;
        }
        dev.tally.failed += 1;
        dev.failed_by_reason[reason as usize] += 1;
        dev.q.done(now, r.world);
        self.pump_device(d);
        let vm_request = if r.parent == NONE { io } else { r.parent };
        if !self.failing.iter().any(|&(i, _)| i == vm_request) {
            self.failing.push((vm_request, reason));
        }
        if r.parent == NONE {
            self.complete(io);
        } else {
            self.piece_done(io, r.parent, Self::complete);
        }
    }

    // ---- the array side -------------------------------------------------------------------

    /// Whether array `a` refuses `io`'s volume; if so the command goes back with its sense.
    #[cold]
    pub(super) fn refuse(&mut self, io: u32, a: usize) -> bool {
        let v = self.ios.get(io).volume as usize;
        if !self.volumes[v].refusals.iter().any(|x| x.array == a) {
            return false;
        }
        let r = self.ios.get_mut(io);
        if r.array != NONE {
            r.array = NONE;
            self.arrays[a].tally.failed += 1;
        }
        self.over_link(io, crate::fabric::INBOUND, 0, Ev::RefusedAtHost);
        true
    }

    /// The array's sense for a refused command reached the host: ALUA unavailable marks the path
    /// unavailable for the device and retries elsewhere; PDL marks it dead and fails the command
    /// once the device has no path left.
    #[cold]
    pub(super) fn refused_at_host(&mut self, io: u32) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let (d, p) = (r.device as usize, r.path as usize);
        if let Some(next) = self.hosts[self.devices[d].host].adapter_q.leave(now) {
            self.send_command(next);
        }
        let a = self.devices[d].paths[p].array;
        let v = r.volume as usize;
        let Some(k) = self.volumes[v].refusals.iter().position(|x| x.array == a) else { return self.retry(io) };
        let state = self.devices[d].states[p];
        let refusal = &mut self.volumes[v].refusals[k];
        match refusal.refusal {
            Refusal::Unavailable => {
                if state.alua != Alua::Unavailable {
                    refusal.marked.push((d, p, state.alua));
                    self.set_path_alua(d, p, Alua::Unavailable);
                }
                self.retry(io);
            }
            Refusal::Pdl => {
                if state.up {
                    refusal.marked.push((d, p, state.alua));
                    self.devices[d].states[p].up = false;
                    log_path_event(&mut self.devices[d].psp_log, now, "path dead (PDL)", p);
                }
                // The device is lost once no path is left (every path reports PDL); until then
                // the command goes to another path.
                if self.devices[d].states.iter().any(|s| s.carries_io()) {
                    self.retry(io);
                } else {
                    self.fail(io, Reason::Pdl);
                }
            }
        }
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
