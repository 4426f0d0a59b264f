//! ESXi-like: fair share between worlds (SFQ by shares) plus the scheduler quantum: a world whose
//! requests are sequential (within Disk.SectorMaxDiff of the previous one) may issue up to
//! Disk.SchedQuantum consecutive requests before another world gets its turn (VMware, "Advanced
//! VMkernel settings for disk storage", 2012). For random I/O it behaves as `fair_share`.

use super::{DepthRules, Discipline, Sfq, Waiting, WorldQos};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<dyn Discipline> = Kind {
    name: "esxi",
    summary: "ESXi-like: fair share by shares plus the quantum for sequential streams",
    build,
};

const SECTOR_BYTES: u64 = 512;

struct Esxi {
    rules: DepthRules,
    sfq: Sfq,
    quantum: u32,
    sector_max_diff: u64,
    /// The world served last, its consecutive count, and where its last request ended.
    current: Option<(usize, u32, u64)>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Discipline>> {
    let rules = DepthRules::read(spec)?;
    let quantum = spec.int("quantum", Some(8), 1, 64, "Disk.SchedQuantum: consecutive sequential requests from one world")?;
    let sector_max_diff = spec.int("sector_max_diff", Some(2000), 0, 2_000_000, "Disk.SectorMaxDiff: sectors within which a request counts as sequential")?;
    Ok(Box::new(Esxi { rules, sfq: Sfq::new(), quantum: quantum as u32, sector_max_diff: sector_max_diff as u64 * SECTOR_BYTES, current: None }))
}

impl Discipline for Esxi {
    fn add_world(&mut self, q: WorldQos) {
        self.sfq.add_world(q.shares);
    }

    fn enqueue(&mut self, _now: u64, w: Waiting) {
        self.sfq.enqueue(w);
    }

    fn dequeue(&mut self, _now: u64, allowed: &dyn Fn(u32) -> bool) -> Option<Waiting> {
        // Stay with the current world while its quantum lasts and its stream is sequential.
        let stay = self.current.filter(|&(world, count, end)| count < self.quantum && allowed(world as u32) && self.sequential(world, end));
        let world = match stay {
            Some((world, _, _)) => world,
            None => self.sfq.best_world(allowed)?,
        };
        let w = self.sfq.pop_from(world)?;
        let count = match self.current {
            Some((c, n, _)) if c == world => n + 1,
            _ => 1,
        };
        self.current = Some((world, count, w.offset_bytes + u64::from(w.size_bytes)));
        Some(w)
    }

    fn queued(&self) -> usize {
        self.sfq.queued()
    }

    fn depth_rules(&self) -> DepthRules {
        self.rules
    }
}

impl Esxi {
    /// Whether `world`'s next waiting request starts within SectorMaxDiff of `end`.
    fn sequential(&self, world: usize, end: u64) -> bool {
        self.sfq.peek(world).is_some_and(|w| w.offset_bytes.abs_diff(end) <= self.sector_max_diff)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Waiting};

    #[test]
    fn a_sequential_stream_keeps_its_quantum() {
        let mut d = build("esxi", "quantum = 4");
        d.add_world(shares(1000));
        d.add_world(shares(1000));
        // World 0 streams sequentially; world 1 is random.
        for k in 0..8u32 {
            d.enqueue(0, Waiting { io: k, world: 0, size_bytes: 4096, offset_bytes: u64::from(k) * 4096 });
            d.enqueue(0, Waiting { io: 100 + k, world: 1, size_bytes: 4096, offset_bytes: u64::from(k) * 10_000_000 });
        }
        let order = drain(d.as_mut());
        assert_eq!(order[..6], [0, 1, 2, 3, 100, 101]);
    }
}
