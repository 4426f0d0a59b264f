//! Faults on paths and the host's reaction. A path's link goes down and comes back, or its
//! latency changes, at the times of the `[[event]]` tables. A frame sent on a down link is lost;
//! the host aborts the command when it learns of the loss (at once if it knows the path is dead,
//! at the fabric's notice, else at its command timeout), frees its adapter slot, and retries it on
//! the path its PSP picks. Frames already on the wire when a link goes down still arrive.

use super::{pack, Ev, World};
use crate::io::{Stage, NONE};
use crate::multipath::PspEvent;
use crate::noise::Delay;
use sanlab_des::SimTime;

/// What a fault does to its link.
pub(super) enum Change {
    Down { notice: bool },
    /// Latencies (out, in) swapped into the link's directions when the fault starts, and back.
    Latency([Delay; 2]),
}

pub(super) struct FaultRun {
    pub link: usize,
    pub at_ns: SimTime,
    pub until_ns: Option<SimTime>,
    pub every_ns: Option<SimTime>,
    pub change: Change,
}

/// A link's health, and what the host of its paths knows of it.
pub(super) struct LinkHealth {
    pub up: bool,
    /// The last failure or return was reported to the host (RSCN), or was silent.
    pub notice: bool,
    pub down_ns: SimTime,
    /// The host's path checker probes this link (its paths were found dead without notice).
    pub checking: bool,
    /// The host whose paths run over the link (its failover timings apply).
    pub host: usize,
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
        let l = f.link;
        match &mut self.faults[k].change {
            Change::Down { notice } => {
                let h = &mut self.health[l];
                h.up = !start;
                h.notice = *notice;
                if start {
                    h.down_ns = now;
                }
                if *notice {
                    self.q.schedule_at(now + self.hosts[h.host].failover.notice_ns, pack(Ev::LinkNotice, l as u32));
                }
            }
            Change::Latency(delays) => {
                for (dir, d) in self.links[l].dirs.iter_mut().zip(delays) {
                    std::mem::swap(&mut dir.latency, d);
                }
            }
        }
    }

    /// The fabric told the host of link `l`'s state (RSCN).
    #[cold]
    pub(super) fn link_notice(&mut self, l: usize) {
        self.set_paths(l, self.health[l].up);
    }

    /// The path checker probes link `l`: its paths come back when it is up, else it probes again.
    #[cold]
    pub(super) fn path_check(&mut self, l: usize) {
        if self.health[l].up {
            self.health[l].checking = false;
            self.set_paths(l, true);
        } else {
            let at = self.q.now() + self.hosts[self.health[l].host].failover.path_check_ns;
            self.q.schedule_at(at, pack(Ev::PathCheck, l as u32));
        }
    }

    /// Marks every device path over link `l` alive or dead, logging each change.
    #[cold]
    fn set_paths(&mut self, l: usize, up: bool) {
        let now = self.q.now();
        for dev in &mut self.devices {
            for (p, path) in dev.paths.iter().enumerate() {
                if path.link == l && dev.states[p].up != up {
                    dev.states[p].up = up;
                    dev.psp_log.push(PspEvent { t_ns: now, event: if up { "path alive" } else { "path dead" }.into(), paths: vec![p] });
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
        if !(h.notice && h.up) {
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
        self.devices[d].retried += 1;
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
    /// usable path (all paths down) it waits for the next path check; returns false then.
    pub(super) fn place(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let dev = &mut self.devices[r.device as usize];
        for (state, path) in dev.states.iter_mut().zip(&dev.paths) {
            state.controller_outstanding = self.link_outstanding[path.link];
        }
        let Some(p) = dev.psp.select(now, r.size_bytes, &dev.states, &mut dev.psp_log) else {
            self.q.schedule_at(now + self.hosts[dev.host].failover.path_check_ns, pack(Ev::Redispatch, io));
            return false;
        };
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
}
