//! The host's reaction to faults (see `faults`). A frame sent on a down link is lost; the
//! host aborts the command when it learns of the loss (at once if it knows the path is dead, at
//! the fabric's notice, else at its command timeout), frees its adapter slot, and retries it on
//! the path its PSP picks. Frames already on the wire when a link goes down still arrive. An array
//! that will not serve a volume answers with a sense code: ALUA unavailable (the host retries
//! elsewhere) or PDL (the command fails; for a VMFS device once every path reported it, for a
//! vVol at once and for that vVol only: the protocol endpoint stays up). With no usable path a command waits for a path until the
//! host's APD timeout, then fails.

use super::faults::Refusal;
use super::{pack, Ev, World};
use crate::host::failover::Reason;
use crate::io::NONE;
use crate::multipath::Alua;
use sanlab_des::SimTime;
use std::collections::VecDeque;

/// The mark of a command the host gave up on at its timeout while the array may still hold it.
const ZOMBIE: u64 = u64::MAX;

/// Every host's SCSI command timer: a command on the wire (from its send to its status, QUEUE FULL
/// or sense) longer than the host's `command_timeout` is aborted, whatever the reason (a lost
/// frame, a slow link, a stalled array): Linux's block-layer timer (`scsi_times_out`, 30 s by
/// default, sd's `SD_TIMEOUT`), ESXi's driver timeout. Lost frames keep their own abort (`lost`);
/// this catches the commands still under way. One deadline queue per host, in send order (the
/// timeout is the host's), with one timer event armed at its head; an entry is stale once its slot
/// answered or was sent again.
/// The recovery stage's state: the requests failing, and the hosts' command timers. Only its own
/// handlers touch it.
#[derive(Default)]
pub(super) struct RecoveryStage {
    /// Requests that failed, with why, until their completion is counted (rarely more than a few).
    failing: Vec<(u32, Reason)>,
    /// The hosts' command timers, and the commands given up on that the array may still answer.
    timers: CommandTimers,
}

#[derive(Default)]
struct CommandTimers {
    /// Per request slot: the send the timer watches (0: none; `ZOMBIE`: given up, its late
    /// answer is dropped).
    sent: Vec<u64>,
    next: u64,
    hosts: Vec<HostTimers>,
}

#[derive(Default)]
struct HostTimers {
    /// (deadline, slot, send), oldest first.
    queue: VecDeque<(SimTime, u32, u64)>,
    /// The earliest timer event scheduled.
    armed_ns: Option<SimTime>,
    /// Length at which stale entries are swept out (twice the live ones at the last sweep).
    sweep_at: usize,
}

// Faults are rare: their handlers stay out of line, so the hot path keeps its inlining.
impl World {
    /// The fabric told the host of link `l`'s state (RSCN).
    #[cold]
    pub(super) fn link_notice(&mut self, l: usize) {
        self.set_paths(l, self.fabric.up(l));
    }

    /// The path checker probes link `l`: its paths come back when it is up, else it probes again.
    #[cold]
    pub(super) fn path_check(&mut self, l: usize) {
        if self.fabric.up(l) {
            self.fabric.stop_checking(l);
            self.set_paths(l, true);
        } else {
            let at = self.q.now() + self.host.failover(self.fabric.health(l).host).path_check_ns;
            self.q.schedule_at(at, pack(Ev::PathCheck, l as u32));
        }
    }

    /// Marks every device path over link `l` alive or dead, logging each change (paths changing
    /// together in one event).
    #[cold]
    fn set_paths(&mut self, l: usize, up: bool) {
        self.host.set_link_paths(l, up, self.q.now());
    }

    /// A frame of `io` went out on down link `l` and is lost: the host will abort the command
    /// (a command it already gave up on is gone).
    #[cold]
    pub(super) fn lost(&mut self, io: u32, l: usize) {
        match self.recovery.timers.sent.get_mut(io as usize) {
            Some(s) if *s == ZOMBIE => return self.drop_zombie(io),
            // Its abort is the one below, not the command timer's.
            Some(s) => *s = 0,
            None => {}
        }
        let now = self.q.now();
        let r = self.ios.get(io);
        let (d, p) = (r.device as usize, r.path as usize);
        let failover = self.host.failover(self.host.host_of(d));
        let h = self.fabric.health(l);
        let at = if !self.host.path_state(d, p).up {
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
        let host = self.host.host_of(d);
        let l = self.host.link_of(d, r.path as usize);
        let (notice, up) = (self.fabric.health(l).notice, self.fabric.up(l));
        if !(notice && up) {
            if !notice && self.fabric.start_checking(l) {
                self.q.schedule_at(now + self.host.failover(host).path_check_ns, pack(Ev::PathCheck, l as u32));
            }
            self.set_paths(l, false);
        }
        if let Some(next) = self.host.adapter_leave(d, now) {
            self.send_command(next);
        }
        if r.array != NONE {
            // The array drops the exchange it can no longer answer.
            self.array.drop_exchange(r.array as usize);
            self.ios.get_mut(io).array = NONE;
        }
        self.retry(io);
    }

    // ---- the command timer ------------------------------------------------------------------

    /// `io` goes on the wire: its host's command timer starts, unless the run ends first.
    #[inline]
    pub(super) fn start_command_timer(&mut self, io: u32) {
        let host = self.host.host_of(self.ios.get(io).device as usize);
        let deadline = self.q.now().saturating_add(self.host.failover(host).command_timeout_ns);
        if deadline < self.end_ns {
            self.watch_command(host, io, deadline);
        }
    }

    fn watch_command(&mut self, host: usize, io: u32, deadline: SimTime) {
        let t = &mut self.recovery.timers;
        t.next += 1;
        let i = io as usize;
        if t.sent.len() <= i {
            t.sent.resize(i + 1, 0);
        }
        t.sent[i] = t.next;
        if t.hosts.len() <= host {
            t.hosts.resize_with(host + 1, HostTimers::default);
        }
        let (sent, h) = (&t.sent, &mut t.hosts[host]);
        while h.queue.front().is_some_and(|&(_, i, s)| sent[i as usize] != s) {
            h.queue.pop_front();
        }
        if h.queue.len() >= h.sweep_at.max(1024) {
            h.queue.retain(|&(_, i, s)| sent[i as usize] == s);
            h.sweep_at = 2 * h.queue.len();
        }
        h.queue.push_back((deadline, io, t.next));
        if h.armed_ns.is_none() {
            h.armed_ns = Some(deadline);
            self.q.schedule_at(deadline, pack(Ev::CommandTimer, host as u32));
        }
    }

    /// An answer for `io` reached its host (`done`: a status, QUEUE FULL or a sense; else a
    /// transfer-ready). False when the host had given up on the command: the answer is dropped
    /// (a write's exchange the array held for its data is dropped with it); else a done
    /// command's timer stops.
    #[inline]
    pub(super) fn answer_at_host(&mut self, io: u32, done: bool) -> bool {
        match self.recovery.timers.sent.get_mut(io as usize) {
            Some(s) if *s == ZOMBIE => {
                self.drop_zombie(io);
                false
            }
            Some(s) if done => {
                *s = 0;
                true
            }
            _ => true,
        }
    }

    #[cold]
    fn drop_zombie(&mut self, io: u32) {
        self.recovery.timers.sent[io as usize] = 0;
        let a = self.ios.get(io).array;
        if a != NONE {
            self.array.drop_exchange(a as usize);
        }
        self.ios.remove(io);
    }

    /// Host `host`'s command timer: the commands past their deadline are aborted.
    #[cold]
    pub(super) fn command_timer(&mut self, host: usize) {
        let now = self.q.now();
        if self.recovery.timers.hosts[host].armed_ns == Some(now) {
            self.recovery.timers.hosts[host].armed_ns = None;
        }
        loop {
            let t = &mut self.recovery.timers;
            let h = &mut t.hosts[host];
            let Some(&(deadline, io, s)) = h.queue.front() else { break };
            if t.sent[io as usize] != s {
                h.queue.pop_front();
                continue;
            }
            if deadline > now {
                break;
            }
            h.queue.pop_front();
            self.command_timed_out(io);
        }
        let h = &mut self.recovery.timers.hosts[host];
        if let Some(&(deadline, ..)) = h.queue.front() {
            if h.armed_ns.is_none_or(|a| deadline < a) {
                h.armed_ns = Some(deadline);
                self.q.schedule_at(deadline, pack(Ev::CommandTimer, host as u32));
            }
        }
    }

    /// `io` was on the wire for the host's command timeout and is aborted: the host fails its path
    /// as dm-multipath does on a timed-out command (the path checker reinstates it at its next
    /// probe of a live link), frees the adapter slot and sends the command again, as a new
    /// command, on the path the PSP picks; it counts as retried. The original may still be inside
    /// the array, which finishes it (or drops a write waiting for its data): its late answer is
    /// dropped at the host, so nothing is counted twice.
    #[cold]
    fn command_timed_out(&mut self, io: u32) {
        let now = self.q.now();
        let mut again = *self.ios.get(io);
        again.array = NONE;
        again.array_pending = 0;
        // The original counts for nobody but the array that may still hold it (see `conservation`).
        let z = self.ios.get_mut(io);
        z.wire = true;
        z.parent = io;
        self.recovery.timers.sent[io as usize] = ZOMBIE;
        let copy = self.ios.insert(again);
        let d = again.device as usize;
        let host = self.host.host_of(d);
        let l = self.host.link_of(d, again.path as usize);
        if self.fabric.start_checking(l) {
            self.q.schedule_at(now + self.host.failover(host).path_check_ns, pack(Ev::PathCheck, l as u32));
        }
        self.set_paths(l, false);
        if let Some(next) = self.host.adapter_leave(d, now) {
            self.send_command(next);
        }
        self.retry(copy);
    }

    /// A command goes again on the path the PSP picks now, counted as retried.
    #[cold]
    fn retry(&mut self, io: u32) {
        let r = self.ios.get(io);
        let (d, p, vm) = (r.device as usize, r.path as usize, self.workload.vm_of(r.job as usize));
        self.host.count_retry(d, p, vm);
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

    /// No path can carry `io` (all paths down): it waits and is tried again at the next path
    /// check, until the device has been without a path for the APD timeout; then it fails.
    #[cold]
    pub(super) fn no_path(&mut self, io: u32) -> bool {
        let now = self.q.now();
        let d = self.ios.get(io).device as usize;
        let failover = *self.host.failover(self.host.host_of(d));
        let apd_timeout_ns = failover.apd_timeout_ns;
        let since = self.host.no_path_since(d, now);
        let expiry = since.saturating_add(apd_timeout_ns);
        let v = self.ios.get(io).volume as usize;
        if self.faults.lost_for_good(v) {
            // Permanent device loss, not all-paths-down: no waiting.
            self.fail(io, Reason::Pdl);
        } else if apd_timeout_ns == 0 {
            self.fail(io, Reason::NoPath);
        } else if now >= expiry {
            self.fail(io, Reason::ApdTimeout);
        } else {
            let check = now + failover.path_check_ns;
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
        if !self.recovery.failing.iter().any(|&(i, _)| i == owner) {
            self.recovery.failing.push((owner, reason));
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
        if self.recovery.failing.is_empty() {
            return None;
        }
        self.take_failure_slow(io)
    }

    #[cold]
    fn take_failure_slow(&mut self, io: u32) -> Option<Reason> {
        let k = self.recovery.failing.iter().position(|&(i, _)| i == io)?;
        Some(self.recovery.failing.swap_remove(k).1)
    }

    /// A device-level request failed: its path and device count it; its VM request fails too.
    #[cold]
    pub(super) fn device_failed(&mut self, io: u32, reason: Reason) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        self.host.device_failed(&r, reason, now);
        self.pump_device(r.device as usize);
        let vm_request = if r.parent == NONE { io } else { r.parent };
        if !self.recovery.failing.iter().any(|&(i, _)| i == vm_request) {
            self.recovery.failing.push((vm_request, reason));
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
        if self.faults.refusal(v, a).is_none() {
            return false;
        }
        let r = self.ios.get_mut(io);
        if r.array != NONE {
            r.array = NONE;
            self.array.drop_exchange(a);
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
        if let Some(next) = self.host.adapter_leave(d, now) {
            self.send_command(next);
        }
        let a = self.host.array_of(d, p);
        let v = r.volume as usize;
        let Some(refusal) = self.faults.refusal(v, a) else { return self.retry(io) };
        let state = self.host.path_state(d, p);
        // A vVol's device is its array's protocol endpoint, shared with the other vVols behind it.
        let behind_pe = self.host.device_label(d) != self.array.volume_name(v);
        match refusal {
            Refusal::Unavailable => {
                if state.alua != Alua::Unavailable {
                    self.faults.mark(v, a, d, p, state.alua);
                    self.set_path_alua(d, p, Alua::Unavailable);
                }
                self.retry(io);
            }
            // A lost vVol: the sense comes for its secondary LUN ID, not for the PE, whose paths
            // stay up for the other vVols; the vVol alone is lost, its command fails at once
            // (every path of the PE would answer the same for it).
            Refusal::Pdl if behind_pe => self.fail(io, Reason::Pdl),
            Refusal::Pdl => {
                if state.up {
                    self.faults.mark(v, a, d, p, state.alua);
                    self.host.set_path_up(d, p, false, now, "path dead (PDL)");
                }
                // The device is lost once no path is left (every path reports PDL); until then
                // the command goes to another path.
                if self.host.any_path_carries_io(d) {
                    self.retry(io);
                } else {
                    self.fail(io, Reason::Pdl);
                }
            }
        }
    }
}
