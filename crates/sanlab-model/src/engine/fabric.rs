//! The links between host and array: the command, write data and every answer cross the link of
//! the request's path.

use super::{pack, Ev, World};
use crate::fabric::{Link, OUTBOUND};
use crate::noise::Delay;
use crate::report::LinkReport;
use sanlab_des::SimTime;

/// The fabric stage's state: the links and their health. Faults change a link's latency,
/// bandwidth or state through it; the host's recovery reads what it knows of a link.
pub(super) struct FabricStage {
    links: Vec<Link>,
    /// Per link: faults holding it down (a port and an adapter may both be down). Apart from the
    /// rest of its health, so that every frame's check reads a dense array that stays in cache.
    down: Vec<u32>,
    /// Per link.
    health: Vec<LinkHealth>,
}

impl FabricStage {
    pub(super) fn new(links: Vec<Link>, health: Vec<LinkHealth>) -> Self {
        Self { down: vec![0; links.len()], links, health }
    }

    /// Whether link `l` is up: no fault holds it down.
    #[inline]
    pub(super) fn up(&self, l: usize) -> bool {
        self.down[l] == 0
    }

    /// The measured time starts: every link's bytes and busy time count from here.
    pub(super) fn measure_from(&mut self) {
        for l in &mut self.links {
            l.measure_from();
        }
    }

    /// Each host-to-array link over the measured time, `span_ns` long.
    pub(super) fn link_reports(&self, span_ns: SimTime) -> Vec<LinkReport> {
        self.links.iter().map(|l| l.report("path", span_ns)).collect()
    }

    /// Link `l`'s health.
    #[inline]
    pub(super) fn health(&self, l: usize) -> &LinkHealth {
        &self.health[l]
    }

    /// Link `l` goes down (`down`) or comes back, at `now`, reported to the host (`notice`) or
    /// silently; returns the host of its paths.
    #[cold]
    pub(super) fn link_edge(&mut self, l: usize, down: bool, notice: bool, now: SimTime) -> usize {
        let h = &mut self.health[l];
        if down {
            self.down[l] += 1;
            h.down_ns = now;
        } else {
            self.down[l] -= 1;
        }
        h.notice = notice;
        h.host
    }

    /// The host's path checker starts probing link `l`; false when it already does.
    #[cold]
    pub(super) fn start_checking(&mut self, l: usize) -> bool {
        !std::mem::replace(&mut self.health[l].checking, true)
    }

    /// The path checker found link `l` up and stops probing it.
    #[cold]
    pub(super) fn stop_checking(&mut self, l: usize) {
        self.health[l].checking = false;
    }

    /// Swaps link `l`'s latencies (out, in) with `delays`: a latency fault starts or ends.
    #[cold]
    pub(super) fn swap_latency(&mut self, l: usize, delays: &mut [Delay; 2]) {
        for (dir, d) in self.links[l].dirs.iter_mut().zip(delays.iter_mut()) {
            std::mem::swap(&mut dir.latency, d);
        }
    }

    /// Swaps link `l`'s picoseconds per byte (out, in) with `ps`: a bandwidth fault starts or ends.
    #[cold]
    pub(super) fn swap_bandwidth(&mut self, l: usize, ps: &mut [u64; 2]) {
        for (dir, p) in self.links[l].dirs.iter_mut().zip(ps.iter_mut()) {
            dir.swap_bandwidth(p);
        }
    }
}

/// A link's health beyond being up or down, and what the host of its paths knows of it.
pub(super) struct LinkHealth {
    /// The last failure or return was reported to the host (RSCN), or was silent.
    pub notice: bool,
    pub down_ns: SimTime,
    /// The host's path checker probes this link (its paths were found dead without notice).
    pub checking: bool,
    /// The host whose paths run over the link (its failover timings apply).
    pub host: usize,
}

impl World {
    /// Sends a frame of `io` (`bytes` of data, 0 for control) over its path's link in direction
    /// `dir`; `ev` fires when it arrives.
    #[inline]
    pub(super) fn over_link(&mut self, io: u32, dir: usize, bytes: u64, ev: Ev) {
        let link = self.ios.get(io).link as usize;
        if !self.fabric.up(link) {
            return self.lost(io, link);
        }
        let at = self.fabric.links[link].dirs[dir].send(self.q.now(), bytes);
        self.q.schedule_at(at, pack(ev, io));
    }

    pub(super) fn send_command(&mut self, io: u32) {
        self.start_command_timer(io);
        self.over_link(io, OUTBOUND, 0, Ev::CmdAtArray);
    }

    pub(super) fn xfer_rdy_at_host(&mut self, io: u32) {
        let bytes = u64::from(self.ios.get(io).size_bytes);
        self.over_link(io, OUTBOUND, bytes, Ev::DataAtArray);
    }
}
