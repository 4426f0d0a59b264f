//! vdbench's request generator: one WD on one SD ([`Generator`]: hits and misses, hotband,
//! seekpct, streams; Vdb/WG_entry.java, HotBand.java), and an SD's job ([`SdJob`]: its workloads
//! picked by skew or rate, or by priority sharing its threads, FifoList.java) behind the
//! [`Workload`] face.

use super::keywords::{Arrivals, Sd, Seek, Wd, Xfer};
use crate::face::{Instance, JobSource, Request, Workload};
use crate::plan::Pacing;
use crate::plan::JobPlan;
use crate::face::Op;
use sanlab_des::{RngStream, NS_PER_S};

/// A byte range of the SD that requests of one kind (hits or misses) fall in.
#[derive(Clone, Debug)]
pub(super) struct Context {
    pub(super) low: u64,
    pub(super) high: u64,
    pub(super) next_seq: Option<u64>,
}

/// HotBand's access curve (Vdb/HotBand.java): cache sizes in MB (1000^2), the cumulative share
/// of accesses within each, and the slope between points, copied as vdbench has them — the last
/// slope included, which is about 40x too small (arrays.md 3.7).
const HOTBAND_MB: [f64; 29] = [
    0.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0, 262144.0, 524288.0, 1048576.0, 2097152.0, 4194304.0,
    8388608.0, 16777216.0, 33554432.0, 67108864.0, 134217728.0, 268435456.0, 536870912.0, 1073741824.0, 10737418240.0,
];
const HOTBAND_CDF: [f64; 29] = [
    0.0, 0.087217, 0.10101, 0.132206, 0.159946, 0.201713, 0.262602, 0.32645, 0.366902, 0.386175, 0.436941, 0.482631, 0.523752, 0.56076, 0.594068, 0.624045, 0.651024, 0.675305,
    0.697159, 0.716827, 0.734528, 0.750459, 0.764797, 0.777701, 0.789314, 0.799767, 0.809174, 0.81764, 1.0,
];
const HOTBAND_SLOPE: [f64; 29] = [
    183.4511752, 1159.945628, 1025.778015, 2307.172362, 3064.644852, 4204.331611, 8019.055699, 25313.90019, 106263.1067, 80683.52498, 179296.7222, 398437.1604, 885415.912,
    1967590.916, 4372424.257, 9716498.348, 21592218.55, 47982707.89, 106628239.8, 236951643.9, 526559208.7, 1170131575.0, 2600292389.0, 5778427530.0, 12840950067.0,
    28535444594.0, 63412099098.0, 1313220630.0, 10737418240.0,
];

/// HotBand.get_rec_index, as vdbench computes it: the offset read off the curve is in KB, but it
/// is divided by the record size in *bytes*, which packs the band 1000x towards its start (about
/// a third of hotband reads land in its first MiB, arrays.md 3.7). Writes are moved on by 1 % of
/// the band (`add_one_pct_to_writes`).
fn hotband_record(band_mb: u64, record_bytes: u64, read: bool, u: f64) -> u64 {
    let i = HOTBAND_CDF.partition_point(|&p| p <= u) - 1;
    let kb_offset = (((u - HOTBAND_CDF[i]) * HOTBAND_SLOPE[i]) + HOTBAND_MB[i]) as u64 * 1000;
    let records = (band_mb * 1_000_000 / record_bytes).max(1);
    let rec = kb_offset / record_bytes + if read { 0 } else { records / 100 };
    rec % records
}

/// One WD on one SD (vdbench's workload generator).
#[derive(Clone, Debug)]
pub(super) struct Generator {
    read_pct: f64,
    xfer: Xfer,
    rhpct: f64,
    whpct: f64,
    seek: Seek,
    hit: Option<Context>,
    miss: Context,
    hotband_mb: Option<u64>,
    align_bytes: Option<u64>,
    stride_bytes: Option<(u64, u64)>,
    wrap: Option<Wrap>,
}

/// A range past 100 %: a request that would run past the SD's end moves back by its size,
/// rounded down to the largest transfer.
#[derive(Clone, Copy, Debug)]
struct Wrap {
    sd_bytes: u64,
    back_bytes: u64,
    sd_offset_bytes: u64,
}

fn chance(rng: &mut RngStream, pct: f64) -> bool {
    pct >= 100.0 || (pct > 0.0 && rng.uniform() * 100.0 < pct)
}

impl Generator {
    /// The hit and miss areas of `wd` on `sd` (WG_entry.calculateContext): hits in
    /// `[start, start + hitarea)`, misses after the hit area to the end of the range, both rounded
    /// down to the largest transfer size; block 0 of a LUN is never touched; the SD offset moves
    /// the low ends only. The hit area exists only when rhpct or whpct asks for hits.
    pub(super) fn new(wd: &Wd, sd: &Sd, sd_bytes: u64) -> Result<Generator, String> {
        let max_xfer = wd.xfer.max_bytes();
        let (lo, hi) = wd.range.or(sd.range).unwrap_or((0.0, 100.0));
        if lo >= hi {
            return Err(format!("range=({lo},{hi}): the second value must be higher than the first"));
        }
        // A range past 100 % (up to 200) runs on past the SD's end, where misses wrap to its
        // start (WG_entry.calculateContext: crossing_range_boundary); seekpct=eof ends at 100 %.
        let hi = if hi > 100.0 && hi <= 200.0 && wd.seek == Seek::Eof { 100.0 } else { hi };
        let crossing = hi > 100.0 && hi <= 200.0;
        if crossing && lo < 100.0 && hi < 200.0 && hi - lo >= 100.0 {
            return Err(format!("range=({lo},{hi}) may not span 100 % or more (vdbench): e.g. range=({lo},{})", lo + 99.0));
        }
        let hit_bytes = if wd.rhpct + wd.whpct > 0.0 || sd.hitarea_forced { sd.hitarea_bytes } else { 0 };
        let start = if lo <= 100.0 { (sd_bytes as f64 * lo / 100.0) as u64 } else { lo as u64 };
        let end = if hi <= 200.0 { (sd_bytes as f64 * hi / 100.0) as u64 } else { hi as u64 };
        if end > sd_bytes && !crossing {
            return Err(format!("range ends at byte {end}, beyond the SD's {sd_bytes} bytes"));
        }
        let (mut mlow, mut hlow) = (start + hit_bytes, start);
        let hhigh = hlow + hit_bytes;
        if mlow == 0 {
            mlow = max_xfer;
        }
        if hit_bytes > 0 && hlow == 0 {
            hlow = max_xfer;
        }
        let round = |b: u64| b / max_xfer * max_xfer;
        let miss = Context { low: round(mlow) + sd.offset_bytes, high: round(end), next_seq: None };
        let hit = (hit_bytes > 0).then(|| Context { low: round(hlow) + sd.offset_bytes, high: round(hhigh), next_seq: None });
        if miss.high < miss.low + 2 * max_xfer {
            return Err(format!(
                "after the hit area ({hit_bytes} bytes), the offset and rounding to xfersize {max_xfer}, the SD ({sd_bytes} bytes) has no room for misses: vdbench needs twice the largest xfersize; make the SD larger (the default hitarea is 1m)"
            ));
        }
        if let Some(h) = &hit {
            if h.high < h.low + 2 * max_xfer {
                return Err(format!("hitarea={} bytes must hold twice the largest xfersize ({max_xfer} bytes), after block 0 is left out", sd.hitarea_bytes));
            }
        }
        let hotband_mb = match wd.hotband {
            false => None,
            true => match (miss.high - miss.low) / 1_000_000 {
                0 => return Err("a hotband needs at least 1,000,000 bytes (vdbench)".into()),
                mb => Some(mb),
            },
        };
        let wrap = crossing.then_some(Wrap { sd_bytes, back_bytes: sd_bytes / max_xfer * max_xfer, sd_offset_bytes: sd.offset_bytes });
        Ok(Generator { read_pct: wd.read_pct, xfer: wd.xfer.clone(), rhpct: wd.rhpct, whpct: wd.whpct, seek: wd.seek, hit, miss, hotband_mb, align_bytes: sd.align_bytes, stride_bytes: wd.stride_bytes, wrap })
    }

    /// The next request, or None at the end of a seekpct=eof run; with a range past 100 %, one
    /// running past the SD's end wraps (WG_entry's crossing_range_boundary).
    pub(super) fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        loop {
            let mut r = self.draw(rng)?;
            let Some(w) = self.wrap else { return Some(r) };
            let rel = r.offset_bytes - w.sd_offset_bytes;
            if rel + u64::from(r.size_bytes) <= w.sd_bytes {
                return Some(r);
            }
            // Back by the SD's size; one that lands on block 0 is drawn again, as vdbench does.
            let back = rel.saturating_sub(w.back_bytes);
            if back > 0 {
                r.offset_bytes = back + w.sd_offset_bytes;
                return Some(r);
            }
        }
    }

    /// One request as drawn (WG_task.createNormalIO's order: read, size, hit, random, offset),
    /// before a range past 100 % wraps it.
    pub(super) fn draw(&mut self, rng: &mut RngStream) -> Option<Request> {
        let read = chance(rng, self.read_pct);
        let mut size = self.xfer.draw(rng);
        let hit = chance(rng, if read { self.rhpct } else { self.whpct }) && self.hit.is_some();
        let random = match self.seek {
            Seek::Eof => false,
            Seek::Percent(p) => chance(rng, p),
        };
        let hotband = self.hotband_mb.filter(|_| !hit);
        let ctx = if hit { self.hit.as_mut().expect("checked") } else { &mut self.miss };
        let offset = if random {
            let o = match (hotband, self.stride_bytes) {
                // Stride: the first at the start, then forward from the previous, back to the
                // start past the end.
                (None, Some((min, max))) => match ctx.next_seq {
                    None => ctx.low,
                    Some(prev) => {
                        let step = (max - min) / size;
                        let o = prev + min + ((rng.address_uniform() * step as f64) as u64) * size;
                        if o + size > ctx.high { ctx.low } else { o }
                    }
                },
                (Some(mb), _) => ctx.low + hotband_record(mb, size, read, rng.address_uniform()) * size,
                // align=: any multiple of it that leaves room for the request.
                (None, None) => match self.align_bytes {
                    Some(a) => ctx.low + rng.address_below((ctx.high - ctx.low).saturating_sub(size) / a + 1) * a,
                    None => ctx.low + rng.address_below((ctx.high - ctx.low) / size) * size,
                },
            };
            // vdbench remembers where a random request ended, for a later sequential one.
            ctx.next_seq = Some(o + size);
            o
        } else {
            let mut next = ctx.next_seq.unwrap_or(ctx.low);
            if next + size > ctx.high {
                if ctx.high > next {
                    // A short block closes off the area (WG_entry.wg_get_next_seq).
                    size = ctx.high - next;
                } else if self.seek == Seek::Eof {
                    return None;
                } else {
                    next = ctx.low;
                }
            }
            ctx.next_seq = Some(next + size);
            next
        };
        Some(Request { op: if read { Op::Read } else { Op::Write }, size_bytes: size as u32, offset_bytes: offset })
    }
}

/// `maxdata=`: the run's SDs stop once this much data (all, read, written) was asked for. vdbench
/// checks at the end of each interval and stops after the next one; here every SD stops at the
/// request that reaches the limit.
#[derive(Debug)]
pub(super) struct MaxData {
    pub(super) limit_bytes: [Option<u64>; 3],
    pub(super) done_bytes: std::cell::Cell<[u64; 3]>,
}

impl MaxData {
    pub(super) fn reached(&self) -> bool {
        let done = self.done_bytes.get();
        self.limit_bytes.iter().zip(done).any(|(l, d)| l.is_some_and(|l| d >= l))
    }

    pub(super) fn add(&self, r: &Request) {
        let mut done = self.done_bytes.get();
        done[0] += u64::from(r.size_bytes);
        done[if r.op == Op::Read { 1 } else { 2 }] += u64::from(r.size_bytes);
        self.done_bytes.set(done);
    }
}

/// The run's reporting interval (`interval=`), for its summary lines, and where it was given.
#[derive(Clone, Debug)]
pub(super) struct Interval {
    pub(super) ns: u64,
    /// The scenario key to blame: `file`, or `interval` for the inline form.
    pub(super) key: &'static str,
    /// "file:line: rd=name" of the run.
    pub(super) at: String,
}

/// An SD's threads shared by workloads with `priority=` (FifoList): each generator has its own
/// arrivals, which wait for a thread; a free thread serves the highest-priority waiting request
/// (generators are ordered by priority), else the highest-priority `iorate=max` workload, which
/// always has one waiting.
#[derive(Clone, Debug)]
pub(super) struct Shared {
    /// Per generator: its arrival rate, None for an `iorate=max` workload.
    pub(super) rates: Vec<Option<f64>>,
    /// Per paced generator: its next arrival, once drawn.
    pub(super) next_ns: Vec<Option<u64>>,
    /// Per generator: arrivals waiting for a thread.
    pub(super) waiting: Vec<u64>,
    /// The generator whose arrival [`Workload::next_arrival_ns`] announced last.
    pub(super) announced: Option<usize>,
}

impl Shared {
    /// The generator of the next request: the highest-priority waiting arrival, else the
    /// highest-priority `iorate=max` workload.
    pub(super) fn pick(&mut self) -> usize {
        if let Some(g) = self.waiting.iter().position(|&n| n > 0) {
            self.waiting[g] -= 1;
            return g;
        }
        // The engine issues only for an arrival or, with iorate=max workloads, for a free thread.
        self.rates.iter().position(Option::is_none).unwrap_or(0)
    }

    /// The announced arrival has come (at `now_ns`): it waits for a thread. Then the next
    /// arrival of any generator, each drawing its own gaps.
    fn next_arrival_ns(&mut self, now_ns: u64, rng: &mut RngStream, arrivals: Arrivals) -> Option<u64> {
        let gap = |rate: f64, rng: &mut RngStream| {
            let mean_ns = 1e9 / rate;
            let gap = match arrivals {
                Arrivals::Exponential => rng.exponential(mean_ns),
                Arrivals::Uniform => 2.0 * mean_ns * rng.uniform(),
                Arrivals::Deterministic => mean_ns,
            };
            (gap.round() as u64).max(1)
        };
        if let Some(g) = self.announced.take() {
            self.waiting[g] += 1;
            let rate = self.rates[g].unwrap_or(0.0);
            self.next_ns[g] = Some(now_ns + gap(rate, rng));
        }
        for g in 0..self.rates.len() {
            if let (None, Some(rate)) = (self.next_ns[g], self.rates[g].filter(|r| *r > 0.0)) {
                self.next_ns[g] = Some(now_ns + gap(rate, rng));
            }
        }
        // The earliest; the higher priority on a tie.
        let (g, at) = self.next_ns.iter().enumerate().filter_map(|(g, t)| t.map(|t| (g, t))).min_by_key(|&(g, t)| (t, g))?;
        self.announced = Some(g);
        Some(at)
    }
}

/// One SD of a run: its generators, how requests are picked among them, and pacing.
#[derive(Clone, Debug)]
pub(super) struct SdJob {
    pub(super) generators: Vec<Generator>,
    /// Cumulative weights (skew, or rate) of the generators.
    pub(super) cum_weights: Vec<f64>,
    /// With priorities: the generators' own arrivals sharing the SD's threads.
    pub(super) shared: Option<Shared>,
    pub(super) threads: u32,
    pub(super) rate_iops: Option<f64>,
    pub(super) arrivals: Arrivals,
    pub(super) runtime_ns: u64,
    pub(super) measured_from_ns: u64,
    pub(super) interval: Interval,
    /// Shared by the run's SDs.
    pub(super) maxdata: Option<std::rc::Rc<MaxData>>,
    /// `streams=`: the SD's parts, one job instance each ([`Workload::instances`]).
    pub(super) streams: Vec<Context>,
    /// An instance's stream: every request goes to its next block, whatever the workload's
    /// seekpct (IO_task.processSingleIO overrides the address).
    pub(super) stream: Option<Context>,
    pub(super) options: Vec<(String, String)>,
}

impl JobSource for SdJob {
    /// One instance, or one per stream with its share of the threads (and of the rate: our
    /// choice, as vdbench's threads take paced requests from one queue and each stream has as
    /// many threads).
    fn instances(&self) -> Vec<Instance> {
        if self.streams.is_empty() {
            return vec![Instance { suffix: None, plan: self.plan(), workload: Box::new(self.clone()), after: vec![] }];
        }
        let n = self.streams.len();
        self.streams
            .iter()
            .enumerate()
            .map(|(k, area)| {
                let shared = self.shared.clone().map(|sh| Shared { rates: sh.rates.iter().map(|r| r.map(|r| r / n as f64)).collect(), ..sh });
                let job = SdJob { threads: self.threads / n as u32, rate_iops: self.rate_iops.map(|r| r / n as f64), shared, streams: vec![], stream: Some(area.clone()), ..self.clone() };
                Instance { suffix: Some(format!("stream{k}")), plan: job.plan(), workload: Box::new(job), after: vec![] }
            })
            .collect()
    }

    /// vdbench's summary lines add up whole samples of the time series, so the interval must be
    /// a multiple of the sample interval.
    fn check_sampling(&self, sample_interval_ns: u64) -> Result<(), (&'static str, String)> {
        let Interval { ns, key, at } = &self.interval;
        if ns % sample_interval_ns == 0 {
            return Ok(());
        }
        // The nearest interval that is whole seconds (as vdbench keeps it) and whole samples.
        let gcd = |mut a: u64, mut b: u64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let step_ns = (sample_interval_ns / gcd(sample_interval_ns, NS_PER_S)).saturating_mul(NS_PER_S);
        let nearest_s = ((*ns as f64 / step_ns as f64).round().max(1.0) as u64).saturating_mul(step_ns) / NS_PER_S;
        Err((
            key,
            format!(
                "{at}: interval={} cannot be reported: its summary lines add up samples of the time series, taken every {}ms (run.sample_interval); set run.sample_interval to a divisor of it (\"1s\" always is), or interval= to a whole multiple of the sample interval, e.g. interval={nearest_s}",
                ns / NS_PER_S,
                sample_interval_ns as f64 / 1e6
            ),
        ))
    }
}

impl SdJob {
    fn plan(&self) -> JobPlan {
        JobPlan { runtime_ns: Some(self.runtime_ns), measured_from_ns: self.measured_from_ns, ..JobPlan::new(self.pacing(), self.options.clone()) }
    }

    fn pacing(&self) -> Pacing {
        if let Some(sh) = &self.shared {
            return match (sh.rates.iter().any(Option::is_some), sh.rates.iter().any(Option::is_none)) {
                (true, true) => Pacing::Shared { depth: self.threads },
                (true, false) => Pacing::Timed { depth: self.threads },
                (false, _) => Pacing::Closed { depth: self.threads },
            };
        }
        match self.rate_iops {
            None => Pacing::Closed { depth: self.threads },
            Some(_) => Pacing::Timed { depth: self.threads },
        }
    }

}

impl Workload for SdJob {
    fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        if self.maxdata.as_ref().is_some_and(|m| m.reached()) {
            return None;
        }
        let g = if let Some(sh) = &mut self.shared {
            sh.pick()
        } else if self.generators.len() == 1 {
            0
        } else {
            let u = rng.uniform() * self.cum_weights[self.cum_weights.len() - 1];
            self.cum_weights.iter().position(|c| u < *c).unwrap_or(self.generators.len() - 1)
        };
        let mut r = self.generators[g].next(rng)?;
        if let Some(area) = &mut self.stream {
            // StreamContext.getNextSequentialLba: no short block at the end, back to the start
            // (or the end of the run with seekpct=eof).
            let size = u64::from(r.size_bytes);
            let mut next = area.next_seq.unwrap_or(area.low);
            if next + size > area.high {
                if self.generators[g].seek == Seek::Eof {
                    return None;
                }
                next = area.low;
            }
            area.next_seq = Some(next + size);
            r.offset_bytes = next;
        }
        if let Some(m) = &self.maxdata {
            m.add(&r);
        }
        Some(r)
    }

    /// Arrivals at the SD's rate, spaced as RD `distribution` says (exponential by default;
    /// uniform on [0, 2 x mean]; deterministic).
    fn next_arrival_ns(&mut self, now_ns: u64, rng: &mut RngStream) -> Option<u64> {
        if let Some(sh) = &mut self.shared {
            return sh.next_arrival_ns(now_ns, rng, self.arrivals);
        }
        let mean_ns = 1e9 / self.rate_iops?;
        let gap = match self.arrivals {
            Arrivals::Exponential => rng.exponential(mean_ns),
            Arrivals::Uniform => 2.0 * mean_ns * rng.uniform(),
            Arrivals::Deterministic => mean_ns,
        };
        Some(now_ns + (gap.round() as u64).max(1))
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotband_packs_a_third_of_reads_into_the_first_mib() {
        // arrays.md 3.7: with 8 KiB records, about 33 % of hotband reads hit the first 1 MiB and
        // about 8.8 % the first 2 records, whatever the band size.
        let mut rng = RngStream::new(3, "hb");
        let n = 200_000;
        let recs: Vec<u64> = (0..n).map(|_| hotband_record(100_000, 8192, true, rng.uniform())).collect();
        let first_mib = recs.iter().filter(|r| **r < 128).count() as f64 / n as f64;
        let first_two = recs.iter().filter(|r| **r < 2).count() as f64 / n as f64;
        assert!((0.30..0.36).contains(&first_mib), "{first_mib}");
        assert!((0.075..0.10).contains(&first_two), "{first_two}");
        // Writes start 1 % of the band further on.
        assert_eq!(hotband_record(100_000, 8192, false, 0.0), 100_000 * 1_000_000 / 8192 / 100);
    }
}
