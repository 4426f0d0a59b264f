//! Storage controllers and their cores, XtremIO style (docbert, "When Testing Tools Attack!"; XtremIO's module descriptions: docs/references.md).
//!
//! The logical address space is cut into fixed-size segments (1 MiB on XtremIO) and each segment
//! belongs to one core: in `controller_major` order the first segment to core 1 of controller 1,
//! the second to core 2 of controller 1, the third to core 1 of controller 2, … (the order the seed
//! describes), in `core_major` order core 1 of every controller first, or by `fingerprint` (a hash
//! of each 4 KiB block, as content-addressed placement spreads data). A request spends `owner_time`
//! on its segment's owner core (XtremIO's C module: address-to-hash metadata) and `data_time` on
//! the core its content's fingerprint selects (the D module), each core serving one request at a
//! time in FIFO order — so one hot segment can hold back the whole array. The split into two
//! stages and their times are our choices; the seed says only that "the LBA split only controls the
//! balancing of one part of the XtremIO request".

use super::ServiceCentre;
use sanlab_metrics::Baseline;
use crate::noise::{Delay, DelaySpec};
use sanlab_spec::{Spec, SpecResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    ControllerMajor,
    CoreMajor,
    Fingerprint,
}

pub struct Cores {
    pub controllers: u32,
    pub per_controller: u32,
    segment_bytes: u64,
    order: Order,
    pub owner_time: Delay,
    /// Zero: requests skip the data stage.
    pub data_time: Delay,
    pub centres: Vec<ServiceCentre>,
    /// Requests whose segment each core owns.
    pub owned: Vec<u64>,
    owned_at_start: Vec<Baseline<u64>>,
    /// Failed controllers: their cores' work goes to the same core of the next live controller.
    down: Vec<bool>,
}

const BLOCK_BYTES: u64 = 4096;

/// SplitMix64 finaliser: a stand-in for a content fingerprint (random data has random hashes).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Cores {
    /// The measured time starts at `now`: busy time and owned requests count from here.
    pub fn measure_from(&mut self, now: u64) {
        for c in &mut self.centres {
            c.measure_from(now);
        }
        for (at_start, &owned) in self.owned_at_start.iter_mut().zip(&self.owned) {
            at_start.set(owned);
        }
    }

    /// Requests each core owned over the measured time.
    pub fn owned_measured(&self) -> Vec<u64> {
        self.owned_at_start.iter().zip(&self.owned).map(|(at_start, &owned)| at_start.since(owned)).collect()
    }

    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let controllers = spec.int("controllers", Some(2), 1, 1024, "storage controllers (2 per XtremIO X-Brick)")?;
        let per_controller = spec.int("cores_per_controller", Some(2), 1, 1024, "cores per controller that own address segments")?;
        let segment = spec.size_bytes("segment", Some((1 << 20, "1MiB")), "address segment each core owns in turn (XtremIO: 1 MiB)")?;
        let order = spec.choice("order", &["controller_major", "core_major", "fingerprint"], Some("controller_major"), "how segments map to cores")?;
        let owner_time = spec.delay("owner_time", (10_000, "10us"), "work on the segment's owner core per request, or its distribution")?;
        let data_time = spec.delay("data_time", (10_000, "10us"), "work on the fingerprint-selected core per request, or its distribution")?;
        spec.finish()?;
        if segment == 0 {
            return Err(spec.error("segment", "must be positive, e.g. \"1MiB\""));
        }
        let n = (controllers * per_controller) as usize;
        let order = match order {
            "controller_major" => Order::ControllerMajor,
            "core_major" => Order::CoreMajor,
            _ => Order::Fingerprint,
        };
        Ok(Self {
            controllers: controllers as u32,
            per_controller: per_controller as u32,
            segment_bytes: segment,
            order,
            owner_time,
            data_time,
            centres: (0..n).map(|_| ServiceCentre::new(1)).collect(),
            owned: vec![0; n],
            owned_at_start: vec![Baseline::default(); n],
            down: vec![false; controllers as usize],
        })
    }

    fn count(&self) -> u64 {
        u64::from(self.controllers * self.per_controller)
    }

    /// Controller `c` (0-based) fails or comes back.
    pub fn set_down(&mut self, c: usize, down: bool) {
        self.down[c] = down;
    }

    /// The core doing `core`'s work: itself, or with its controller down the same core of the
    /// next live controller (all down: itself; the array's ports are gone then anyway).
    fn serving(&self, core: usize) -> usize {
        let p = self.per_controller as usize;
        let (c, k) = (core / p, core % p);
        if !self.down[c] {
            return core;
        }
        let n = self.down.len();
        (1..n).map(|i| (c + i) % n).find(|&alt| !self.down[alt]).map_or(core, |alt| alt * p + k)
    }

    /// The core that serves the segment holding `offset`.
    pub fn owner(&self, offset: u64) -> usize {
        self.serving(self.home(offset))
    }

    /// The core that owns the segment holding `offset` while every controller is up.
    fn home(&self, offset: u64) -> usize {
        let n = self.count();
        let slot = match self.order {
            Order::ControllerMajor => (offset / self.segment_bytes) % n,
            Order::CoreMajor => {
                let k = (offset / self.segment_bytes) % n;
                let c = u64::from(self.controllers);
                // k-th segment: controller k % c, core k / c.
                (k % c) * u64::from(self.per_controller) + k / c
            }
            Order::Fingerprint => mix(offset / BLOCK_BYTES) % n,
        };
        slot as usize
    }

    /// The core the request's content fingerprint selects.
    pub fn data_core(&self, offset: u64) -> usize {
        self.serving((mix((offset / BLOCK_BYTES) ^ 0x5bd1_e995) % self.count()) as usize)
    }

    /// `ctrl<c>.core<k>`, numbered from 1 as the seed does.
    pub fn name(&self, core: usize) -> String {
        let p = self.per_controller as usize;
        format!("ctrl{}.core{}", core / p + 1, core % p + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(src: &str) -> Cores {
        let t: toml::Table = src.parse().unwrap();
        Cores::from_spec(Spec::new(&t, "array[0].cores")).unwrap()
    }

    #[test]
    fn the_seeds_order_and_the_other_two() {
        let mb = 1 << 20;
        let c = cores("controllers = 4\ncores_per_controller = 2");
        let owners: Vec<String> = (0..9).map(|k| c.name(c.owner(k * mb))).collect();
        assert_eq!(owners[..4], ["ctrl1.core1", "ctrl1.core2", "ctrl2.core1", "ctrl2.core2"]);
        assert_eq!(owners[8], "ctrl1.core1", "wraps after 8 segments");
        // Everything inside one segment has one owner.
        assert_eq!(c.owner(3 * mb + 4096), c.owner(3 * mb + mb - 1));
        let c = cores("controllers = 4\ncores_per_controller = 2\norder = \"core_major\"");
        let owners: Vec<String> = (0..5).map(|k| c.name(c.owner(k * mb))).collect();
        assert_eq!(owners, ["ctrl1.core1", "ctrl2.core1", "ctrl3.core1", "ctrl4.core1", "ctrl1.core2"]);
        let c = cores("controllers = 4\ncores_per_controller = 2\norder = \"fingerprint\"");
        let mut hits = [0u32; 8];
        for b in 0..80_000u64 {
            hits[c.owner(b * 4096)] += 1;
        }
        assert!(hits.iter().all(|h| (9_400..10_600).contains(h)), "{hits:?}");
    }
}
