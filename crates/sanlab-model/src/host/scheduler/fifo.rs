//! First come, first served across all worlds: no fairness at all.

use super::{DepthRules, Discipline, Waiting, WorldQos};
use sanlab_spec::{Kind, Spec, SpecResult};
use std::collections::VecDeque;

pub const KIND: Kind<dyn Discipline> = Kind { name: "fifo", summary: "one FIFO for every VM: first come, first served", build };

struct Fifo {
    rules: DepthRules,
    waiting: VecDeque<Waiting>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Discipline>> {
    Ok(Box::new(Fifo { rules: DepthRules::read(spec)?, waiting: VecDeque::new() }))
}

impl Discipline for Fifo {
    fn add_world(&mut self, _q: WorldQos) {}

    fn enqueue(&mut self, _now: u64, w: Waiting) {
        self.waiting.push_back(w);
    }

    fn dequeue(&mut self, _now: u64, allowed: &dyn Fn(u32) -> bool) -> Option<Waiting> {
        let i = self.waiting.iter().position(|w| allowed(w.world))?;
        self.waiting.remove(i)
    }

    fn queued(&self) -> usize {
        self.waiting.len()
    }

    fn depth_rules(&self) -> DepthRules {
        self.rules
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn arrival_order() {
        let mut d = build("fifo", "");
        for (io, w) in [(1, 0), (2, 0), (3, 1), (4, 0)] {
            d.enqueue(0, req(io, w));
        }
        assert_eq!(drain(d.as_mut()), vec![1, 2, 3, 4]);
    }
}
