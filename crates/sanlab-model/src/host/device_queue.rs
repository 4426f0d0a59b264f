//! The host device queue (one per LUN or protocol endpoint): a depth that follows ESXi's DSNRO
//! rules, per-world counts, the dispatch discipline, and esxtop's figures (DQLEN, ACTV, QUED).

use super::scheduler::{DepthRules, Discipline, DsnroScope, Waiting, WorldQos};
use sanlab_metrics::TimeWeighted;

/// Adaptive queue depth on QUEUE FULL (Disk.QFullSampleSize, Disk.QFullThreshold); off when
/// `sample_size` is 0, ESXi's default.
#[derive(Clone, Copy, Debug, Default)]
pub struct QfullRules {
    pub sample_size: u32,
    pub threshold: u32,
}

pub struct DeviceQueue {
    lun_depth: u32,
    /// The LUN depth after QFULL throttling (equal to `lun_depth` when not throttled).
    throttled_depth: u32,
    /// Host-level flow control's window (PARDA, SIOC); u32::MAX when uncontrolled.
    window: u32,
    qfull: QfullRules,
    qfull_seen: u32,
    good_seen: u32,
    rules: DepthRules,
    discipline: Box<dyn Discipline>,
    active: u32,
    per_world: Vec<u32>,
    clamped: bool,
    switches: u32,
    consecutive: u32,
    last_world: Option<u32>,
    /// The time of the latest `next` call, for `wake_at`.
    now_ns: u64,
    /// (DQLEN, ACTV, QUED) over time.
    occupancy: TimeWeighted<3>,
}

impl DeviceQueue {
    pub fn new(lun_depth: u32, discipline: Box<dyn Discipline>, qfull: QfullRules) -> Self {
        let rules = discipline.depth_rules();
        Self {
            lun_depth,
            throttled_depth: lun_depth,
            window: u32::MAX,
            qfull,
            qfull_seen: 0,
            good_seen: 0,
            rules,
            discipline,
            active: 0,
            per_world: vec![],
            clamped: false,
            switches: 0,
            consecutive: 0,
            last_world: None,
            now_ns: 0,
            occupancy: TimeWeighted::default(),
        }
    }

    /// Registers a world (a VM disk on this device); returns its number.
    pub fn add_world(&mut self, q: WorldQos) -> u32 {
        self.discipline.add_world(q);
        self.per_world.push(0);
        (self.per_world.len() - 1) as u32
    }

    /// Current device queue depth (esxtop DQLEN).
    pub fn depth(&self) -> u32 {
        let depth = self.throttled_depth.min(self.window);
        if self.clamped && self.rules.scope == DsnroScope::Device { depth.min(self.rules.dsnro) } else { depth }
    }

    /// Flow control sets the window; requests already dispatched beyond it finish normally.
    pub fn set_window(&mut self, now: u64, window: u32) {
        self.account(now);
        self.window = window;
    }

    /// The array answered QUEUE FULL: with adaptive throttling on, every `sample_size` of them
    /// halve the LUN depth (VMware KB 1010922 / Broadcom KB 311232).
    pub fn note_qfull(&mut self, now: u64) {
        if self.qfull.sample_size == 0 {
            return;
        }
        self.qfull_seen += 1;
        if self.qfull_seen >= self.qfull.sample_size {
            self.account(now);
            self.throttled_depth = (self.throttled_depth / 2).max(1);
            self.qfull_seen = 0;
            self.good_seen = 0;
        }
    }

    /// A good completion: while throttled, every `threshold` of them give one slot back.
    fn note_good(&mut self, now: u64) {
        if self.throttled_depth >= self.lun_depth {
            return;
        }
        self.good_seen += 1;
        if self.good_seen >= self.qfull.threshold {
            self.account(now);
            self.throttled_depth += 1;
            self.good_seen = 0;
        }
    }

    pub fn lun_depth(&self) -> u32 {
        self.lun_depth
    }

    fn account(&mut self, now: u64) {
        let levels = [u64::from(self.depth()), u64::from(self.active), self.discipline.queued() as u64];
        self.occupancy.advance(now, levels);
    }

    /// A request arrives. When nothing waits and a slot is free it is dispatched at once
    /// (returned); otherwise the discipline queues it. The discipline only orders requests that
    /// wait — there is nothing to order otherwise — unless it honours reservations and limits:
    /// then every request is queued (its tags count the world's service) and `next` dispatches it.
    pub fn arrive(&mut self, now: u64, w: Waiting) -> Option<Waiting> {
        self.account(now);
        let world_free = !(self.clamped && self.rules.scope == DsnroScope::World) || self.per_world[w.world as usize] < self.rules.dsnro;
        if self.discipline.queued() == 0 && self.active < self.depth() && world_free && !self.discipline.honours_qos() {
            self.active += 1;
            self.per_world[w.world as usize] += 1;
            self.note_dispatch(w.world);
            return Some(w);
        }
        self.discipline.enqueue(now, w);
        None
    }

    /// The next request to dispatch, if a slot is free and the discipline has one.
    pub fn next(&mut self, now: u64) -> Option<Waiting> {
        self.now_ns = now;
        // Called after every arrival and completion: most of the time nothing waits.
        if self.discipline.queued() == 0 || self.active >= self.depth() {
            return None;
        }
        let world_cap = (self.clamped && self.rules.scope == DsnroScope::World).then_some(self.rules.dsnro);
        let per_world = &self.per_world;
        let w = self.discipline.dequeue(now, &|world| world_cap.is_none_or(|cap| per_world[world as usize] < cap))?;
        self.account(now);
        self.active += 1;
        self.per_world[w.world as usize] += 1;
        self.note_dispatch(w.world);
        Some(w)
    }

    /// After `next` found nothing to dispatch with a slot free: when the discipline holds the
    /// waiting requests back (limits), the time one may go. The engine calls `next` again then;
    /// nothing else would, if no request arrives or completes meanwhile.
    pub fn wake_at(&self) -> Option<u64> {
        if self.discipline.queued() == 0 || self.active >= self.depth() {
            return None;
        }
        self.discipline.next_eligible_ns(self.now_ns)
    }

    /// Whether the discipline enforces reservations and limits (only `mclock` does).
    pub fn honours_qos(&self) -> bool {
        self.discipline.honours_qos()
    }

    /// ESXi's rules: clamp to DSNRO after `vm_switches` switches between worlds; restore full
    /// depth after `seq_reqs` consecutive requests from one world.
    fn note_dispatch(&mut self, world: u32) {
        if self.last_world.is_some_and(|w| w != world) {
            self.switches += 1;
            self.consecutive = 1;
            if !self.clamped && self.switches >= self.rules.vm_switches {
                self.clamped = true;
            }
        } else {
            self.consecutive += 1;
            if self.clamped && self.consecutive >= self.rules.seq_reqs {
                self.clamped = false;
                self.switches = 0;
            }
        }
        self.last_world = Some(world);
    }

    pub fn done(&mut self, now: u64, world: u32) {
        self.account(now);
        self.active -= 1;
        self.per_world[world as usize] -= 1;
        self.note_good(now);
    }

    pub fn active(&self) -> u32 {
        self.active
    }

    pub fn queued(&self) -> usize {
        self.discipline.queued()
    }

    /// Time-averaged (DQLEN, ACTV, QUED) since the last call; starts a new window.
    pub fn take_averages(&mut self, now: u64, window_ns: u64) -> (f64, f64, f64) {
        self.account(now);
        let [dqlen, active, queued] = self.occupancy.take_means(window_ns);
        (dqlen, active, queued)
    }
}

#[cfg(test)]
mod tests {
    use super::super::scheduler::test_util::{build, req, shares};
    use super::*;

    #[test]
    fn clamps_to_dsnro_when_worlds_compete_and_recovers() {
        let mut q = DeviceQueue::new(64, build("fifo", "dsnro = 4\nqcontrol_vm_switches = 2\nqcontrol_seq_reqs = 8"), QfullRules::default());
        q.add_world(shares(1000));
        q.add_world(shares(1000));
        assert_eq!(q.depth(), 64);
        // Alternate worlds: two switches clamp the device to 4.
        for (io, w) in [(0, 0), (1, 1), (2, 0)] {
            let d = q.arrive(0, req(io, w)).unwrap();
            q.done(0, d.world);
        }
        assert_eq!(q.depth(), 4);
        let mut got = vec![];
        for io in 0..10 {
            got.extend(q.arrive(0, req(10 + io, 0)).map(|w| w.io));
        }
        assert_eq!(got.len(), 4, "clamped at dsnro");
        for _ in 0..4 {
            q.done(0, 0);
        }
        // Eight consecutive requests from world 0 restore full depth.
        while q.next(0).is_some() {}
        assert_eq!(q.depth(), 64);
        assert_eq!(q.active(), 6);
    }

    #[test]
    fn qfull_halves_the_depth_and_good_completions_restore_it() {
        let mut q = DeviceQueue::new(64, build("fifo", ""), QfullRules { sample_size: 2, threshold: 3 });
        q.add_world(shares(1000));
        q.note_qfull(0);
        assert_eq!(q.depth(), 64);
        q.note_qfull(0);
        assert_eq!(q.depth(), 32);
        for io in 0..6 {
            q.arrive(0, req(io, 0)).unwrap();
            q.done(0, 0);
        }
        assert_eq!(q.depth(), 34, "one slot back per 3 good completions");
    }

    #[test]
    fn world_scope_caps_each_world_not_the_device() {
        let mut q = DeviceQueue::new(64, build("fifo", "dsnro = 2\nqcontrol_vm_switches = 1\ndsnro_scope = \"world\""), QfullRules::default());
        q.add_world(shares(1000));
        q.add_world(shares(1000));
        assert!(q.arrive(0, req(0, 1)).is_some());
        let mut got: Vec<u32> = (1..6).filter_map(|io| q.arrive(0, req(io, 0)).map(|w| w.io)).collect();
        got.extend(q.arrive(0, req(9, 1)).map(|w| w.io));
        got.extend(std::iter::from_fn(|| q.next(0).map(|w| w.io)));
        assert_eq!(got, vec![1, 2, 9], "world 0 capped at 2, world 1 passes");
        assert_eq!(q.depth(), 64);
    }

    #[test]
    fn a_limited_world_waits_with_slots_free_until_wake_at() {
        let mut q = DeviceQueue::new(64, build("mclock", ""), QfullRules::default());
        q.add_world(WorldQos { shares: 1000, reservation_iops: 0.0, limit_iops: 100.0 });
        for io in 0..3 {
            assert!(q.arrive(0, req(io, 0)).is_none(), "no fast path past the limit");
        }
        assert_eq!(q.next(0).map(|w| w.io), Some(0));
        assert!(q.next(0).is_none(), "held by the limit with 63 slots free");
        assert_eq!(q.wake_at(), Some(10_000_000), "100 IOPS: the next one 10 ms later");
        assert!(q.next(9_999_999).is_none());
        assert_eq!(q.next(10_000_000).map(|w| w.io), Some(1));
        assert!(q.next(10_000_000).is_none());
        assert_eq!(q.wake_at(), Some(20_000_000));
    }

    #[test]
    fn other_disciplines_keep_the_fast_path_and_never_wake() {
        for kind in ["fifo", "fair_share", "esxi"] {
            let mut q = DeviceQueue::new(1, build(kind, ""), QfullRules::default());
            q.add_world(shares(1000));
            assert!(q.arrive(0, req(0, 0)).is_some(), "{kind}");
            assert!(q.arrive(0, req(1, 0)).is_none());
            assert_eq!(q.wake_at(), None, "{kind}: no slot free");
            q.done(5, 0);
            assert_eq!(q.next(5).map(|w| w.io), Some(1));
            assert_eq!(q.wake_at(), None, "{kind}: nothing waits");
        }
    }
}
