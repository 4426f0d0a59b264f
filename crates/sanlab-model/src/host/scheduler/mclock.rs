//! mClock (Gulati, Merchant, Varman, "mClock: Handling Throughput Variability for Hypervisor IO
//! Scheduling", OSDI 2010), ESXi's host scheduler since 5.5 (Disk.SchedulerWithReservation = 1).
//! Each world has a reservation r (IOPS it is guaranteed), a limit l (IOPS it may not exceed) and
//! shares w (its proportion of the rest).
//!
//! Every request gets three tags when it arrives, spaced by its cost: R = max(R_prev + cost/r, now),
//! L = max(L_prev + cost/l, now), P = max(P_prev + cost/w, now); an unset r gives R = +∞ (never
//! due), an unset l gives L = −∞ (never limited). Each dispatch takes
//! 1. constraint phase: the smallest R tag, if it is due (R ≤ now);
//! 2. otherwise weight phase: the smallest P tag among requests within their limit (L ≤ now). The
//!    world's pending R tags then drop by cost/r (the paper's step; ceph/dmclock
//!    `dmclock_server.h` `reduce_reservation_tags`), so R tags count reservation-phase service only
//!    and service won by shares does not push a world's reservation into the future.
//!
//! A world whose queue was empty starts its P tags no lower than the lowest P tag among the worlds
//! with waiting requests (the paper's tag adjustment for idle clients; dmclock's `prop_delta`): it
//! brings no credit from its idle time. It never moves below its own last tag either: a world
//! whose requests are all at the device has an empty queue without being idle, and jumping back
//! to the others' tags would win it every tie. Limits are not
//! work-conserving: a request over its limit waits with slots free, and `next_eligible_ns` says
//! until when.
//!
//! Cost of a request (`cost`): ESXi's, ceil(size / `cost_unit`), Disk.SchedCostUnit, 32 KiB by
//! default (4 KiB–256 KiB): ESXi counts a 64 KiB I/O as 2 against an IOPS limit (Broadcom KB
//! 385258); or the paper's (`cost = "size"`), 1 + size / (T_m × B_peak), T_m the mechanical delay
//! an I/O pays whatever its size and B_peak the peak transfer rate (§4 of the paper). Their defaults
//! are ours: a 15K drive's average seek and half turn (3.5 + 2 ms) and its sustained media rate
//! (100 MB/s), the drive the disk group models.
//!
//! Ours: the weight is shares / 1000 (Disk.SharesNormal = weight 1, like the paper's weights 1, 2,
//! 3), so a backlogged world's P tags run ahead of real time. With the raw shares (1 ms per unit at
//! 1000) they fall behind it whenever a world is served fewer than `shares` units a second, and the
//! clamp to `now` turns the weight phase into arrival order (the caveat in Ceph's mClock docs). Also
//! ours: a world's first tags are `now`; ties go to the lower world; a request over its limit always
//! waits (dmclock's `AtLimit::Wait`); Disk.IdleCredit and Disk.SchedReservationBurst are not
//! modelled.

use super::{DepthRules, Discipline, Waiting, WorldQos};
use sanlab_spec::{Kind, Spec, SpecResult};
use std::collections::VecDeque;

pub const KIND: Kind<dyn Discipline> = Kind {
    name: "mclock",
    summary: "mClock (ESXi 5.5+): per-VM reservation, limit and shares",
    build,
};

const NS_PER_S: f64 = 1e9;
/// Shares that make weight 1 (Disk.SharesNormal).
const SHARES_PER_WEIGHT: f64 = 1000.0;
/// Disk.SchedCostUnit's range.
const COST_UNIT_BYTES: std::ops::RangeInclusive<u64> = 4096..=262_144;

/// A request's tags, in ns of simulated time (P: weighted time, ahead of it).
#[derive(Clone, Copy)]
struct Tags {
    reservation: f64,
    proportion: f64,
    limit: f64,
}

struct Tagged {
    tags: Tags,
    cost: f64,
    w: Waiting,
}

struct World {
    /// Tag spacing per cost unit, ns; `None` for an unset reservation or limit.
    reservation_step_ns: Option<f64>,
    proportion_step_ns: f64,
    limit_step_ns: Option<f64>,
    /// The tags of the world's latest request.
    last: Tags,
    waiting: VecDeque<Tagged>,
}

/// How an I/O's size counts against reservations, limits and shares.
enum CostModel {
    /// ESXi: ceil(size / cost unit), at least 1.
    Units { bytes: u64 },
    /// The mClock paper: 1 + size / (T_m × B_peak).
    Size { bytes_per_request: f64 },
}

impl CostModel {
    #[inline]
    fn cost(&self, size_bytes: u32) -> f64 {
        match *self {
            CostModel::Units { bytes } => u64::from(size_bytes).div_ceil(bytes).max(1) as f64,
            CostModel::Size { bytes_per_request } => 1.0 + f64::from(size_bytes) / bytes_per_request,
        }
    }
}

struct MClock {
    rules: DepthRules,
    cost: CostModel,
    worlds: Vec<World>,
    queued: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Discipline>> {
    let rules = DepthRules::read(spec)?;
    let model = spec.choice("cost", &["esxi", "size"], Some("esxi"), "how an I/O's size counts against reservations, limits and shares: esxi (ceil(size / cost_unit)) or size (the mClock paper's 1 + size / (mechanical_delay x peak_bandwidth))")?;
    let cost_unit_bytes = spec.size_bytes("cost_unit", Some((32_768, "32KiB")), "Disk.SchedCostUnit: with cost = esxi an I/O costs ceil(size / cost_unit)")?;
    if !COST_UNIT_BYTES.contains(&cost_unit_bytes) {
        let nearest = cost_unit_bytes.clamp(*COST_UNIT_BYTES.start(), *COST_UNIT_BYTES.end());
        return Err(spec.error("cost_unit", format!("{cost_unit_bytes} bytes is out of range: expected 4KiB..=256KiB (nearest valid: {nearest})")));
    }
    let mechanical_ns = spec.duration_ns("mechanical_delay", Some((5_500_000, "5.5ms")), "with cost = size: T_m, the positioning time an I/O pays whatever its size (ours: a 15K drive's seek and half turn)")?;
    let peak_bps = spec.bandwidth_bps("peak_bandwidth", Some((8e8, "100MB/s")), "with cost = size: B_peak, the peak transfer rate (ours: a 15K drive's media rate)")?;
    let cost = match model {
        "size" => {
            if spec.has("cost_unit") {
                return Err(spec.error("cost_unit", "is ESXi's cost (cost = \"esxi\"); with cost = \"size\" an I/O costs 1 + size / (mechanical_delay x peak_bandwidth): remove it"));
            }
            let bytes_per_request = mechanical_ns as f64 / 1e9 * peak_bps / 8.0;
            if bytes_per_request.is_nan() || bytes_per_request < 1.0 {
                return Err(spec.error("mechanical_delay", format!("with peak_bandwidth, makes {bytes_per_request} bytes per request: expected at least 1 byte (a positive delay and bandwidth, e.g. \"5.5ms\" and \"100MB/s\")")));
            }
            CostModel::Size { bytes_per_request }
        }
        _ => {
            for key in ["mechanical_delay", "peak_bandwidth"] {
                if spec.has(key) {
                    return Err(spec.error(key, "applies to the paper's cost model: set cost = \"size\", or remove it"));
                }
            }
            CostModel::Units { bytes: cost_unit_bytes }
        }
    };
    Ok(Box::new(MClock { rules, cost, worlds: vec![], queued: 0 }))
}

impl MClock {
    /// The lowest P tag among worlds with waiting requests (their heads: tags grow along a queue).
    fn lowest_proportion(&self) -> Option<f64> {
        self.worlds.iter().filter_map(|w| w.waiting.front()).map(|h| h.tags.proportion).min_by(f64::total_cmp)
    }

    /// The allowed world whose head passes `eligible` with the smallest `key`.
    fn smallest(&self, allowed: &dyn Fn(u32) -> bool, eligible: impl Fn(&Tags) -> bool, key: impl Fn(&Tags) -> f64) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, world) in self.worlds.iter().enumerate() {
            let Some(head) = world.waiting.front() else { continue };
            let k = key(&head.tags);
            if eligible(&head.tags) && allowed(i as u32) && best.is_none_or(|(b, _)| k < b) {
                best = Some((k, i));
            }
        }
        best.map(|(_, i)| i)
    }

    fn pop(&mut self, world: usize) -> Tagged {
        self.queued -= 1;
        self.worlds[world].waiting.pop_front().expect("chosen among worlds with a head")
    }
}

impl Discipline for MClock {
    fn add_world(&mut self, q: WorldQos) {
        let step = |iops: f64| (iops > 0.0).then(|| NS_PER_S / iops);
        self.worlds.push(World {
            reservation_step_ns: step(q.reservation_iops),
            proportion_step_ns: NS_PER_S * SHARES_PER_WEIGHT / f64::from(q.shares),
            limit_step_ns: step(q.limit_iops),
            last: Tags { reservation: f64::NEG_INFINITY, proportion: f64::NEG_INFINITY, limit: f64::NEG_INFINITY },
            waiting: VecDeque::new(),
        });
    }

    fn enqueue(&mut self, now: u64, w: Waiting) {
        let t = now as f64;
        let cost = self.cost.cost(w.size_bytes);
        let joins_at = if self.worlds[w.world as usize].waiting.is_empty() { self.lowest_proportion() } else { None };
        let world = &mut self.worlds[w.world as usize];
        let next = |last: f64, step: Option<f64>, unset: f64| step.map_or(unset, |s| (last + cost * s).max(t));
        let tags = Tags {
            reservation: next(world.last.reservation, world.reservation_step_ns, f64::INFINITY),
            proportion: (world.last.proportion + cost * world.proportion_step_ns).max(joins_at.unwrap_or(t)),
            limit: next(world.last.limit, world.limit_step_ns, f64::NEG_INFINITY),
        };
        world.last = tags;
        world.waiting.push_back(Tagged { tags, cost, w });
        self.queued += 1;
    }

    fn dequeue(&mut self, now: u64, allowed: &dyn Fn(u32) -> bool) -> Option<Waiting> {
        let t = now as f64;
        if let Some(world) = self.smallest(allowed, |tags| tags.reservation <= t, |tags| tags.reservation) {
            return Some(self.pop(world).w);
        }
        let world = self.smallest(allowed, |tags| tags.limit <= t, |tags| tags.proportion)?;
        let served = self.pop(world);
        let world = &mut self.worlds[world];
        if let Some(step) = world.reservation_step_ns {
            let credit = served.cost * step;
            world.waiting.iter_mut().for_each(|r| r.tags.reservation -= credit);
            world.last.reservation -= credit;
        }
        Some(served.w)
    }

    /// The earliest time a held head (neither due by its reservation nor within its limit) may go.
    fn next_eligible_ns(&self, now: u64) -> Option<u64> {
        let t = now as f64;
        self.worlds
            .iter()
            .filter_map(|w| w.waiting.front())
            .filter(|h| h.tags.reservation > t && h.tags.limit > t)
            .map(|h| h.tags.reservation.min(h.tags.limit))
            .min_by(f64::total_cmp)
            .map(|ns| ns.ceil() as u64)
    }

    fn honours_qos(&self) -> bool {
        true
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn depth_rules(&self) -> DepthRules {
        self.rules
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{Discipline, Waiting, WorldQos};

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn qos(shares: u32, reservation_iops: f64, limit_iops: f64) -> WorldQos {
        WorldQos { shares, reservation_iops, limit_iops }
    }

    /// A device that takes one request every `interval_ns` (0: whenever the scheduler lets one go)
    /// for `duration_ns`. World i is backlogged from `joins_ns[i]` on: it keeps 8 requests of
    /// `size_bytes` queued. Returns the worlds in dispatch order.
    fn serve(d: &mut dyn Discipline, joins_ns: &[u64], size_bytes: u32, interval_ns: u64, duration_ns: u64) -> Vec<u32> {
        let arrive = |d: &mut dyn Discipline, now, world| d.enqueue(now, Waiting { io: 0, world, size_bytes, offset_bytes: 0 });
        let mut joined = vec![false; joins_ns.len()];
        let mut order = vec![];
        let mut now = 0;
        while now < duration_ns {
            for (world, &at) in joins_ns.iter().enumerate() {
                if !joined[world] && at <= now {
                    joined[world] = true;
                    (0..8).for_each(|_| arrive(d, now, world as u32));
                }
            }
            match d.dequeue(now, &|_| true) {
                Some(w) => {
                    order.push(w.world);
                    arrive(d, now, w.world);
                    now += interval_ns;
                }
                None => {
                    let next_join = joins_ns.iter().zip(&joined).filter(|(_, j)| !**j).map(|(at, _)| *at).min();
                    match d.next_eligible_ns(now).into_iter().chain(next_join).min() {
                        Some(t) => now = t,
                        None => break,
                    }
                }
            }
        }
        order
    }

    fn count(order: &[u32], world: u32) -> usize {
        order.iter().filter(|w| **w == world).count()
    }

    #[test]
    fn a_limit_caps_a_backlogged_world() {
        let mut d = build("mclock", "");
        d.add_world(qos(1000, 0.0, 100.0));
        let order = serve(d.as_mut(), &[0], 4096, 0, 10 * S);
        assert_eq!(order.len(), 1000, "100 IOPS for 10 s");
        assert_eq!(d.next_eligible_ns(10 * S - 1), Some(10 * S), "the next one waits for its limit tag");
        assert_eq!(d.next_eligible_ns(10 * S), None, "and goes at it");
    }

    #[test]
    fn cost_counts_cost_units_against_the_limit() {
        for (size_bytes, cost_unit, dispatched) in [(65_536, "", 500), (40_960, "", 500), (4096, "", 1000), (65_536, "cost_unit = \"64KiB\"", 1000)] {
            let mut d = build("mclock", cost_unit);
            d.add_world(qos(1000, 0.0, 100.0));
            let order = serve(d.as_mut(), &[0], size_bytes, 0, 10 * S);
            assert_eq!(order.len(), dispatched, "{size_bytes} bytes, {cost_unit:?}");
        }
    }

    #[test]
    fn the_papers_cost_counts_size_over_mechanical_delay_times_peak_bandwidth() {
        // 5 ms x 100 MB/s = 500,000 bytes per request: a 500,000-byte I/O costs 2, 1.5 MB costs 4.
        let model = "cost = \"size\"\nmechanical_delay = \"5ms\"\npeak_bandwidth = \"100MB/s\"";
        for (size_bytes, dispatched) in [(500_000, 500), (1_500_000, 250)] {
            let mut d = build("mclock", model);
            d.add_world(qos(1000, 0.0, 100.0));
            assert_eq!(serve(d.as_mut(), &[0], size_bytes, 0, 10 * S).len(), dispatched, "{size_bytes} bytes");
        }
        let error = |extra: &str| {
            let t: toml::Table = format!("kind = \"mclock\"\n{extra}").parse().unwrap();
            sanlab_spec::build_kind(&sanlab_spec::Spec::new(&t, "scheduler"), super::super::REGISTRY, None).err().expect("an error")
        };
        let e = error("cost_unit = \"64KiB\"\ncost = \"size\"");
        assert_eq!((e.location.as_str(), e.message.contains("remove it")), ("scheduler.cost_unit", true), "{e:?}");
        let e = error("peak_bandwidth = \"1GB/s\"");
        assert_eq!((e.location.as_str(), e.message.contains("cost = \"size\"")), ("scheduler.peak_bandwidth", true), "{e:?}");
    }

    #[test]
    fn a_reservation_holds_under_contention() {
        let mut d = build("mclock", "");
        d.add_world(qos(1000, 700.0, 0.0));
        d.add_world(shares(1000));
        let order = serve(d.as_mut(), &[0, 0], 4096, MS, 10 * S);
        let reserved = count(&order, 0) as f64 / order.len() as f64;
        assert!(reserved >= 0.69, "reserved world got {reserved:.4} of 1000 IOPS");
    }

    #[test]
    fn service_won_by_shares_does_not_cost_the_reservation_later() {
        let mut d = build("mclock", "");
        d.add_world(qos(1000, 600.0, 0.0));
        d.add_world(shares(1000));
        // World 0 runs alone for 5 s at 1000 IOPS, 400 of them by its shares; then world 1 joins.
        let order = serve(d.as_mut(), &[0, 5 * S], 4096, MS, 6 * S);
        let reserved = count(&order[5000..], 0);
        assert!(reserved >= 595, "{reserved} IOPS against a 600 IOPS reservation");
    }

    #[test]
    fn shares_hold_on_a_device_slower_than_the_shares_add_up_to() {
        let mut d = build("mclock", "");
        d.add_world(shares(2000));
        d.add_world(shares(1000));
        // 1000 IOPS: fewer cost units per second than the shares sum to.
        let order = serve(d.as_mut(), &[0, 0], 4096, MS, 10 * S);
        let ratio = count(&order, 0) as f64 / count(&order, 1) as f64;
        assert!((ratio / 2.0 - 1.0).abs() <= 0.02, "2:1 shares gave {ratio:.4}:1");
    }

    #[test]
    fn an_idle_world_joins_at_the_others_tags() {
        let mut d = build("mclock", "");
        d.add_world(shares(1000));
        d.add_world(shares(1000));
        // World 0 runs alone for 5 s (its P tags run 5000 s ahead), then world 1 joins.
        let order = serve(d.as_mut(), &[0, 5 * S], 4096, MS, 6 * S);
        let after = &order[5000..];
        let newcomer = count(after, 1);
        assert!((490..=510).contains(&newcomer), "newcomer got {newcomer} of {}", after.len());
        let longest_run = after.chunk_by(|a, b| a == b).filter(|run| run[0] == 1).map(<[u32]>::len).max();
        assert!(longest_run <= Some(2), "no burst: {longest_run:?}");
    }

    #[test]
    fn a_world_whose_requests_are_at_the_device_is_not_idle() {
        let mut d = build("mclock", "");
        d.add_world(shares(1000));
        d.add_world(shares(1000));
        // Each world keeps one request queued and replaces a dispatched one at once, so the
        // dispatching world's queue is empty when its next request arrives.
        let arrive = |d: &mut dyn Discipline, now, world| d.enqueue(now, Waiting { io: 0, world, size_bytes: 4096, offset_bytes: 0 });
        (0..2).for_each(|world| arrive(d.as_mut(), 0, world));
        let mut order = vec![];
        for k in 0..1000 {
            let world = d.dequeue(k * MS, &|_| true).expect("both backlogged").world;
            order.push(world);
            arrive(d.as_mut(), k * MS, world);
        }
        assert_eq!(count(&order, 1), 500, "equal shares alternate");
    }

    #[test]
    fn cost_unit_follows_disk_sched_cost_unit_range() {
        let t: toml::Table = "kind = \"mclock\"\ncost_unit = \"1KiB\"".parse().unwrap();
        let e = sanlab_spec::build_kind(&sanlab_spec::Spec::new(&t, "scheduler"), super::super::REGISTRY, None).err().unwrap();
        assert_eq!(e.location, "scheduler.cost_unit");
        assert!(e.message.contains("expected 4KiB..=256KiB (nearest valid: 4096)"), "{}", e.message);
    }
}
