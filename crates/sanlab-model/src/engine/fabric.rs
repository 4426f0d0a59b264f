//! The links between host and array: the command, write data and every answer cross the link of
//! the request's path.

use super::{pack, Ev, World};
use crate::fabric::OUTBOUND;
use sanlab_des::SimTime;

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

impl World {
    /// Sends a frame of `io` (`bytes` of data, 0 for control) over its path's link in direction
    /// `dir`; `ev` fires when it arrives.
    #[inline]
    pub(super) fn over_link(&mut self, io: u32, dir: usize, bytes: u64, ev: Ev) {
        let r = self.ios.get(io);
        let link = self.devices[r.device as usize].path_links[r.path as usize];
        if !self.health[link].up() {
            return self.lost(io, link);
        }
        let at = self.links[link].dirs[dir].send(self.q.now(), bytes);
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
