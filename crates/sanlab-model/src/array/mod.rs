//! Storage arrays: front-end ports receive commands from the fabric; the back end serves reads
//! and acknowledges writes; a replicated volume's writes are mirrored to the peer array
//! (`replication.rs`). The back end is a kind (`media = { kind = ... }`): `flash`, a service centre
//! with `servers` parallel slots and a FIFO queue in front of them, or `disk_group`, spinning disks
//! in a RAID group behind a write-back cache (`disk_group/`).

pub mod cache;
pub mod cores;
pub mod disk_group;
mod flash;
pub mod qos;
pub mod replication;

use crate::io::Op;
use sanlab_spec::{Kind, KindDoc};
use sanlab_des::RngStream;
use sanlab_metrics::{Baseline, TimeWeighted};
use std::collections::VecDeque;

/// How long a server of a service-centre back end takes to serve one request.
pub trait Media {
    fn service_ns(&mut self, op: Op, size_bytes: u32, rng: &mut RngStream) -> u64;
}

/// What serves the requests that pass the array's cores and read cache.
pub enum Backend {
    /// Parallel servers with a FIFO queue; each request's time comes from the media model.
    Servers { media: Box<dyn Media>, centre: ServiceCentre },
    /// Disks in a RAID group behind a write-back cache; they schedule their own operations.
    Disks(Box<disk_group::DiskGroup>),
}

impl Backend {
    /// Mean fraction of the servers (or disks) busy over the measured time, `span_ns` up to `now`.
    pub fn utilisation(&mut self, now: u64, span_ns: u64) -> f64 {
        match self {
            Backend::Servers { centre, .. } => centre.utilisation(now, span_ns),
            Backend::Disks(g) => g.utilisation(now, span_ns),
        }
    }

    /// The measured time starts at `now` (the warm-up's end).
    pub fn measure_from(&mut self, now: u64) {
        match self {
            Backend::Servers { centre, .. } => centre.measure_from(now),
            Backend::Disks(g) => g.measure_from(now),
        }
    }
}

const DISK_GROUP: Kind<Backend> = Kind {
    name: "disk_group",
    summary: "spinning disks in RAID-5 (or RAID-0) behind a write-back cache: seek, rotation, per-disk queues",
    build: |spec| Ok(Box::new(Backend::Disks(Box::new(disk_group::DiskGroup::from_spec(spec)?)))),
};

pub static MEDIA: &[Kind<Backend>] = &[flash::KIND, DISK_GROUP];

pub fn kinds() -> Vec<KindDoc> {
    sanlab_spec::describe_kinds("media", MEDIA)
}

/// Parallel servers with two FIFO queues (priority first); entries are opaque `u64` tokens of the
/// engine. The priority class serves volumes running below their QoS minimum.
pub struct ServiceCentre {
    servers: u32,
    busy_servers: u32,
    priority: VecDeque<u64>,
    waiting: VecDeque<u64>,
    busy: TimeWeighted<1>,
    busy_at_start: Baseline<u128>,
}

impl ServiceCentre {
    pub fn new(servers: u32) -> Self {
        Self { servers, busy_servers: 0, priority: VecDeque::new(), waiting: VecDeque::with_capacity(64), busy: TimeWeighted::default(), busy_at_start: Baseline::default() }
    }

    fn account(&mut self, now: u64) {
        self.busy.advance(now, [u64::from(self.busy_servers)]);
    }

    /// Takes a server if one is free; otherwise queues `token` (in the priority class if
    /// `priority`) and returns false.
    #[inline]
    pub fn arrive(&mut self, now: u64, token: u64, priority: bool) -> bool {
        if self.busy_servers < self.servers {
            self.account(now);
            self.busy_servers += 1;
            true
        } else {
            if priority { self.priority.push_back(token) } else { self.waiting.push_back(token) }
            false
        }
    }

    /// Frees a server; returns the next waiting token, which now holds that server.
    #[inline]
    pub fn depart(&mut self, now: u64) -> Option<u64> {
        let next = self.priority.pop_front().or_else(|| self.waiting.pop_front());
        if next.is_none() {
            self.account(now);
            self.busy_servers -= 1;
        }
        next
    }

    pub fn queued(&self) -> usize {
        self.priority.len() + self.waiting.len()
    }

    /// Busy server-time so far, ns (for utilisation over a window).
    pub fn busy_ns(&mut self, now: u64) -> u128 {
        self.account(now);
        self.busy.area()[0]
    }

    /// The measured time starts at `now`: utilisation counts from here.
    pub fn measure_from(&mut self, now: u64) {
        let busy = self.busy_ns(now);
        self.busy_at_start.set(busy);
    }

    /// Mean busy servers over the measured time, `span_ns` up to `now`, divided by the server
    /// count.
    pub fn utilisation(&mut self, now: u64, span_ns: u64) -> f64 {
        let busy_ns = self.busy_ns(now);
        let busy = self.busy_at_start.since(busy_ns);
        if span_ns == 0 { 0.0 } else { busy as f64 / span_ns as f64 / f64::from(self.servers) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_centre_queues_beyond_its_servers() {
        let mut c = ServiceCentre::new(2);
        assert!(c.arrive(0, 1, false));
        assert!(c.arrive(0, 2, false));
        assert!(!c.arrive(0, 3, false));
        assert!(!c.arrive(0, 4, true));
        assert_eq!(c.queued(), 2);
        assert_eq!(c.depart(10), Some(4), "priority class first");
        assert_eq!(c.depart(10), Some(3));
        assert_eq!(c.depart(10), None);
        assert_eq!(c.depart(20), None);
        // Two busy until 10 ns, then one until 20 ns.
        assert!((c.utilisation(20, 20) - 0.75).abs() < 1e-9);
    }
}
