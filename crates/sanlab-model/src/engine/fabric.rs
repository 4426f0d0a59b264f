//! The links between host and array: the command, write data and every answer cross the link of
//! the request's path.

use super::{pack, Ev, World};
use crate::fabric::OUTBOUND;

impl World {
    /// Sends a frame of `io` (`bytes` of data, 0 for control) over its path's link in direction
    /// `dir`; `ev` fires when it arrives.
    #[inline]
    pub(super) fn over_link(&mut self, io: u32, dir: usize, bytes: u64, ev: Ev) {
        let r = self.ios.get(io);
        let link = self.devices[r.device as usize].paths[r.path as usize].link;
        if !self.health[link].up() {
            return self.lost(io, link);
        }
        let at = self.links[link].dirs[dir].send(self.q.now(), bytes);
        self.q.schedule_at(at, pack(ev, io));
    }

    pub(super) fn send_command(&mut self, io: u32) {
        self.over_link(io, OUTBOUND, 0, Ev::CmdAtArray);
    }

    pub(super) fn xfer_rdy_at_host(&mut self, io: u32) {
        let bytes = u64::from(self.ios.get(io).size_bytes);
        self.over_link(io, OUTBOUND, bytes, Ev::DataAtArray);
    }
}
