//! The array's back end and replication: service-centre media or a disk group, and for a
//! replicated volume the copy to the peer array and its acknowledgement.

use super::faults::Mirror;
use super::{pack, token, untoken, Ev, World, DISK_BITS};
use crate::array::disk_group::{DiskGroupStats, DiskOut};
use crate::array::replication::Replication;
use crate::array::Backend;
use crate::io::Io;
use crate::report::LinkReport;
use sanlab_des::{RngStream, SimTime};

/// An array's back end.
pub(crate) struct Media {
    pub backend: Backend,
    /// The media's service-time draws.
    pub rng: RngStream,
    /// Peer copies of replicated writes it stored.
    pub replicated_ios: u64,
}

/// The media stage's state: each array's back end, the replication pairs, and the reused buffer
/// of what a disk group asks of the engine. The array stage sends over a pair's link through it;
/// faults read the pairs; the report reads the back ends' figures.
pub(super) struct MediaStage {
    /// Per array.
    media: Vec<Media>,
    replications: Vec<Replication>,
    disk_out: DiskOut,
}

impl MediaStage {
    pub(super) fn new(media: Vec<Media>, replications: Vec<Replication>) -> Self {
        Self { media, replications, disk_out: DiskOut::default() }
    }

    /// Replication pair `rep`.
    pub(super) fn replication(&self, rep: usize) -> &Replication {
        &self.replications[rep]
    }

    /// The measured time starts at `now`: back ends and replication links count from here.
    pub(super) fn measure_from(&mut self, now: SimTime) {
        for m in &mut self.media {
            m.backend.measure_from(now);
        }
        for r in &mut self.replications {
            r.link.measure_from();
        }
    }

    /// Each replication link over the measured time, `span_ns` long.
    pub(super) fn link_reports(&self, span_ns: SimTime) -> Vec<LinkReport> {
        self.replications.iter().map(|r| r.link.report("replication", span_ns)).collect()
    }

    pub(super) fn replication_count(&self) -> usize {
        self.replications.len()
    }

    /// Sends `bytes` over pair `rep`'s link in direction `dir` at `now`; returns when they arrive.
    #[inline]
    pub(super) fn send_to_peer(&mut self, rep: usize, dir: usize, now: SimTime, bytes: u64) -> SimTime {
        self.replications[rep].link.dirs[dir].send(now, bytes)
    }

    /// Whether array `a`'s back end is a disk group (where requests land shapes its timing).
    pub(super) fn has_disks(&self, a: usize) -> bool {
        matches!(self.media[a].backend, Backend::Disks(_))
    }

    pub(super) fn replicated_ios(&self, a: usize) -> u64 {
        self.media[a].replicated_ios
    }

    /// Array `a`'s back-end utilisation over the measured time, `span_ns` up to `now`.
    pub(super) fn utilisation(&mut self, a: usize, now: SimTime, span_ns: SimTime) -> f64 {
        self.media[a].backend.utilisation(now, span_ns)
    }

    /// Array `a`'s disk group's figures over the measured time, `span_ns` up to `now`, when its
    /// back end is one.
    pub(super) fn disk_group_stats(&mut self, a: usize, now: SimTime, span_ns: SimTime) -> Option<DiskGroupStats> {
        match &mut self.media[a].backend {
            Backend::Disks(g) => Some(g.stats(now, span_ns)),
            Backend::Servers { .. } => None,
        }
    }
}

impl World {
    pub(super) fn start_media(&mut self, a: usize, io: u32, peer: bool) {
        let now = self.q.now();
        let r = *self.ios.get(io);
        match &mut self.media.media[a].backend {
            Backend::Servers { centre, .. } => {
                // Volumes running below their QoS minimum are served first when the media is contended.
                let priority = !peer && self.array.qos_below_min(r.volume as usize);
                if centre.arrive(now, token(io, peer), priority) {
                    self.schedule_media_done(a, io, peer);
                }
            }
            Backend::Disks(group) => {
                group.submit(now, token(io, peer), r.op, r.offset_bytes, r.size_bytes, &mut self.media.disk_out);
                self.apply_disk_out(a);
            }
        }
    }

    fn schedule_media_done(&mut self, a: usize, io: u32, peer: bool) {
        let r = self.ios.get(io);
        let (op, size) = (r.op, r.size_bytes);
        let m = &mut self.media.media[a];
        let Backend::Servers { media, .. } = &mut m.backend else { unreachable!("only service centres time requests themselves") };
        let service = media.service_ns(op, size, &mut m.rng);
        let ev = if peer { Ev::PeerMediaDone } else { Ev::MediaDone };
        self.q.schedule_in(service, pack(ev, io));
    }

    /// A disk of array `a` finished an operation.
    pub(super) fn disk_done(&mut self, index: u32) {
        let (a, disk) = ((index >> DISK_BITS) as usize, index & ((1 << DISK_BITS) - 1));
        let MediaStage { media, disk_out, .. } = &mut self.media;
        let Backend::Disks(group) = &mut media[a].backend else { unreachable!("disk events come from disk groups") };
        group.disk_done(self.q.now(), disk, disk_out);
        self.apply_disk_out(a);
    }

    /// Arms the disk group's timers and schedules the requests it finished.
    fn apply_disk_out(&mut self, a: usize) {
        let out = &mut self.media.disk_out;
        for &(at, disk) in &out.timers {
            self.q.schedule_at(at, pack(Ev::DiskDone, ((a as u32) << DISK_BITS) | disk));
        }
        for &(at, t, from_cache) in &out.done {
            let (io, peer) = untoken(t);
            if !peer {
                self.ios.get_mut(io).from_cache = from_cache;
            }
            self.q.schedule_at(at, pack(if peer { Ev::PeerMediaDone } else { Ev::MediaDone }, io));
        }
        out.timers.clear();
        out.done.clear();
    }

    /// For a request to a replicated volume: the replication pair, the receiving array's peer,
    /// and the link direction towards the peer.
    pub(super) fn peer(&self, r: &Io) -> Option<(usize, usize, usize)> {
        let rep = self.array.replication_of(r.volume as usize)?;
        let (peer, dir) = self.media.replications[rep].peer_of(r.array as usize);
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
        if let Backend::Servers { centre, .. } = &mut self.media.media[a].backend {
            if let Some(next) = centre.depart(now) {
                let (io, peer) = untoken(next);
                self.schedule_media_done(a, io, peer);
            }
        }
        if let Some((rep, _, dir_to_peer)) = replica {
            self.media.media[a].replicated_ios += 1;
            if self.faults.mirror(rep) != Mirror::Healthy {
                return self.stall(rep, io);
            }
            let at = self.media.send_to_peer(rep, 1 - dir_to_peer, now, 0);
            self.q.schedule_at(at, pack(Ev::ReplAckAtOrigin, io));
        } else {
            self.array_step_done(io);
        }
    }
}
