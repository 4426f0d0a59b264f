//! Proportional share between worlds by their shares (start-time fair queuing).

use super::{DepthRules, Discipline, Sfq, Waiting, WorldQos};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<dyn Discipline> = Kind { name: "fair_share", summary: "start-time fair queuing between VMs by their shares", build };

struct FairShare {
    rules: DepthRules,
    sfq: Sfq,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Discipline>> {
    Ok(Box::new(FairShare { rules: DepthRules::read(spec)?, sfq: Sfq::new() }))
}

impl Discipline for FairShare {
    fn add_world(&mut self, q: WorldQos) {
        self.sfq.add_world(q.shares);
    }

    fn enqueue(&mut self, _now: u64, w: Waiting) {
        self.sfq.enqueue(w);
    }

    fn dequeue(&mut self, _now: u64, allowed: &dyn Fn(u32) -> bool) -> Option<Waiting> {
        let world = self.sfq.best_world(allowed)?;
        self.sfq.pop_from(world)
    }

    fn queued(&self) -> usize {
        self.sfq.queued()
    }

    fn depth_rules(&self) -> DepthRules {
        self.rules
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn a_newcomer_does_not_wait_behind_a_backlog() {
        let mut d = build("fair_share", "");
        d.add_world(shares(1000));
        d.add_world(shares(1000));
        for io in 0..10 {
            d.enqueue(0, req(io, 0));
        }
        d.enqueue(0, req(100, 1));
        let order = drain(d.as_mut());
        assert_eq!(order[..2], [0, 100]);
    }

    #[test]
    fn service_follows_shares() {
        let mut d = build("fair_share", "");
        d.add_world(shares(2000));
        d.add_world(shares(1000));
        for io in 0..300 {
            d.enqueue(0, req(io, io % 2));
        }
        let first: Vec<u32> = drain(d.as_mut()).into_iter().take(90).collect();
        let heavy = first.iter().filter(|io| *io % 2 == 0).count();
        assert_eq!(heavy, 60, "2:1 shares give 2:1 service while both are backlogged");
    }
}
