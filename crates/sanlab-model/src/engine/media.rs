//! The array's back end and replication: service-centre media or a disk group, and for a
//! replicated volume the copy to the peer array and its acknowledgement.

use super::faults::Mirror;
use super::{pack, token, untoken, Ev, World, DISK_BITS};
use crate::array::Backend;
use crate::array::qos::QosState;
use crate::io::Io;

impl World {
    pub(super) fn start_media(&mut self, a: usize, io: u32, peer: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        match &mut self.arrays[a].backend {
            Backend::Servers { centre, .. } => {
                // Volumes running below their QoS minimum are served first when the media is contended.
                let priority = !peer && self.volumes[r.volume as usize].qos.as_ref().is_some_and(QosState::below_min);
                if centre.arrive(now, token(io, peer), priority) {
                    self.schedule_media_done(a, io, peer);
                }
            }
            Backend::Disks(group) => {
                group.submit(now, token(io, peer), r.op, r.offset_bytes, r.size_bytes, &mut self.disk_out);
                self.apply_disk_out(a);
            }
        }
    }

    fn schedule_media_done(&mut self, a: usize, io: u32, peer: bool) {
        let r = self.ios.get(io);
        let (op, size) = (r.op, r.size_bytes);
        let arr = &mut self.arrays[a];
        let Backend::Servers { media, .. } = &mut arr.backend else { unreachable!("only service centres time requests themselves") };
        let service = media.service_ns(op, size, &mut arr.rng);
        let ev = if peer { Ev::PeerMediaDone } else { Ev::MediaDone };
        self.q.schedule_in(service, pack(ev, io));
    }

    /// A disk of array `a` finished an operation.
    pub(super) fn disk_done(&mut self, index: u32) {
        let (a, disk) = ((index >> DISK_BITS) as usize, index & ((1 << DISK_BITS) - 1));
        let Backend::Disks(group) = &mut self.arrays[a].backend else { unreachable!("disk events come from disk groups") };
        group.disk_done(self.q.now(), disk, &mut self.disk_out);
        self.apply_disk_out(a);
    }

    /// Arms the disk group's timers and schedules the requests it finished.
    fn apply_disk_out(&mut self, a: usize) {
        for &(at, disk) in &self.disk_out.timers {
            self.q.schedule_at(at, pack(Ev::DiskDone, ((a as u32) << DISK_BITS) | disk));
        }
        for &(at, t) in &self.disk_out.done {
            let (io, peer) = untoken(t);
            self.q.schedule_at(at, pack(if peer { Ev::PeerMediaDone } else { Ev::MediaDone }, io));
        }
        self.disk_out.timers.clear();
        self.disk_out.done.clear();
    }

    /// For a request to a replicated volume: the replication pair, the receiving array's peer,
    /// and the link direction towards the peer.
    pub(super) fn peer(&self, r: &Io) -> Option<(usize, usize, usize)> {
        let rep = self.volumes[r.volume as usize].replication?;
        let (peer, dir) = self.replications[rep].peer_of(r.array as usize);
        Some((rep, peer, dir))
    }

    pub(super) fn repl_at_peer(&mut self, io: u32) {
        let (_, peer, _) = self.peer(self.ios.get(io)).expect("replicated");
        self.start_media(peer, io, true);
    }

    pub(super) fn media_done(&mut self, io: u32, peer: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        let replica = if peer { self.peer(&r) } else { None };
        let a = replica.map_or(r.array as usize, |(_, p, _)| p);
        if let Backend::Servers { centre, .. } = &mut self.arrays[a].backend {
            if let Some(next) = centre.depart(now) {
                let (io, peer) = untoken(next);
                self.schedule_media_done(a, io, peer);
            }
        }
        if let Some((rep, _, dir_to_peer)) = replica {
            self.arrays[a].replicated_ios += 1;
            if self.mirrors[rep].state != Mirror::Healthy {
                return self.stall(rep, io);
            }
            let at = self.replications[rep].link.dirs[1 - dir_to_peer].send(now, 0);
            self.q.schedule_at(at, pack(Ev::ReplAckAtOrigin, io));
        } else {
            self.array_step_done(io);
        }
    }
}
