//! fio job options (axboe/fio HOWTO): rw, rwmixread, bs, bssplit, iodepth, numjobs, rate_iops,
//! rate_process, runtime, size, offset. Offsets are block-aligned; random offsets are uniform over
//! `[offset, offset + size)` (fio's `random_distribution=random`).

use super::{Instance, Pacing, Request, Workload};
use crate::io::Op;
use crate::spec::{parse_size_bytes, Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Workload> = Kind { name: "fio", summary: "fio job options (rw, bs, bssplit, iodepth, rate_iops, ...)", build };

const RW: [&str; 6] = ["read", "write", "randread", "randwrite", "rw", "randrw"];

#[derive(Clone)]
struct FioJob {
    rw: &'static str,
    read_pct: u32,
    /// (size, cumulative weight out of 100) for bssplit; one entry for a plain bs.
    sizes: Vec<(u32, u32)>,
    iodepth: u32,
    numjobs: u32,
    rate_iops: Option<f64>,
    poisson: bool,
    runtime_ns: Option<u64>,
    size_bytes: u64,
    offset_bytes: u64,
    next_seq_offset: u64,
    options: Vec<(String, String)>,
}

fn parse_bssplit(s: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut out = vec![];
    let mut total = 0;
    for part in s.split(':') {
        let (size, pct) = part.split_once('/').ok_or_else(|| format!("bssplit entry `{part}`: expected size/percent, e.g. \"4k/60:64k/40\""))?;
        let size = parse_size_bytes(size)?;
        let pct: u32 = pct.trim().parse().map_err(|_| format!("bssplit entry `{part}`: percent `{pct}` is not a whole number"))?;
        total += pct;
        out.push((size as u32, total));
    }
    if total != 100 {
        return Err(format!("bssplit percentages add up to {total}, expected 100"));
    }
    Ok(out)
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Workload>> {
    let rw = spec.choice("rw", &RW, Some("read"), "read, write, randread, randwrite, rw, randrw")?;
    let rwmixread = spec.int("rwmixread", Some(50), 0, 100, "percent reads for rw/randrw")?;
    let bs = spec.size_bytes("bs", Some((4096, "4k")), "block size")?;
    let bssplit = spec.opt_string("bssplit", "block size mix, e.g. \"4k/60:64k/40\" (overrides bs)")?;
    let iodepth = spec.int("iodepth", Some(1), 1, 65_536, "requests kept outstanding")?;
    let numjobs = spec.int("numjobs", Some(1), 1, 4_096, "identical clones of this job")?;
    let rate_iops = spec.float("rate_iops", 0.0, 0.0, 1e9, "open-loop arrival rate; 0 = closed loop at iodepth")?;
    let rate_process = spec.choice("rate_process", &["linear", "poisson"], Some("linear"), "arrival spacing when rate_iops is set")?;
    let runtime = spec.duration_ns("runtime", Some((0, "run duration")), "stop issuing after this long")?;
    let size = spec.size_bytes("size", Some((1 << 30, "1GiB")), "region the job addresses")?;
    let offset = spec.size_bytes("offset", Some((0, "0")), "start of the region")?;
    if spec.is_describing() {
        return Ok(Box::new(empty_job()));
    }
    if bs == 0 || bs > u64::from(u32::MAX) {
        return Err(spec.error("bs", "must be between 1 byte and 4 GiB"));
    }
    let sizes = match &bssplit {
        Some(s) => parse_bssplit(s).map_err(|e| spec.error("bssplit", e))?,
        None => vec![(bs as u32, 100)],
    };
    let largest = sizes.iter().map(|s| u64::from(s.0)).max().unwrap_or(bs);
    if size < largest {
        return Err(spec.error("size", format!("{size} bytes is smaller than the block size {largest}")));
    }
    let mut options = vec![("rw".to_string(), rw.to_string())];
    for key in ["rwmixread", "bs", "bssplit", "iodepth", "numjobs", "rate_iops", "rate_process", "runtime", "size", "offset"] {
        if let Some(v) = spec_value(spec, key) {
            options.push((key.to_string(), v));
        }
    }
    let read_pct = match rw {
        "read" | "randread" => 100,
        "write" | "randwrite" => 0,
        _ => rwmixread as u32,
    };
    Ok(Box::new(FioJob {
        rw,
        read_pct,
        sizes,
        iodepth: iodepth as u32,
        numjobs: numjobs as u32,
        rate_iops: (rate_iops > 0.0).then_some(rate_iops),
        poisson: rate_process == "poisson",
        runtime_ns: (runtime > 0).then_some(runtime),
        size_bytes: size,
        offset_bytes: offset,
        next_seq_offset: 0,
        options,
    }))
}

fn spec_value(spec: &Spec, key: &str) -> Option<String> {
    spec.raw_display(key)
}

fn empty_job() -> FioJob {
    FioJob { rw: "read", read_pct: 100, sizes: vec![(4096, 100)], iodepth: 1, numjobs: 1, rate_iops: None, poisson: false, runtime_ns: None, size_bytes: 1 << 30, offset_bytes: 0, next_seq_offset: 0, options: vec![] }
}

impl Workload for FioJob {
    fn next(&mut self, rng: &mut RngStream) -> Request {
        let op = if self.read_pct == 100 || (self.read_pct > 0 && rng.below(100) < u64::from(self.read_pct)) { Op::Read } else { Op::Write };
        let size_bytes = if self.sizes.len() == 1 {
            self.sizes[0].0
        } else {
            let r = rng.below(100) as u32;
            self.sizes.iter().find(|(_, cum)| r < *cum).map_or(self.sizes[0].0, |s| s.0)
        };
        let blocks = (self.size_bytes / u64::from(size_bytes)).max(1);
        let offset = if self.rw.starts_with("rand") {
            rng.below(blocks) * u64::from(size_bytes)
        } else {
            let o = self.next_seq_offset;
            self.next_seq_offset = (o + u64::from(size_bytes)) % (blocks * u64::from(size_bytes));
            o
        };
        Request { op, size_bytes, offset_bytes: self.offset_bytes + offset }
    }

    fn pacing(&self) -> Pacing {
        match self.rate_iops {
            None => Pacing::Closed { depth: self.iodepth },
            Some(rate_iops) => Pacing::Open { depth: self.iodepth, rate_iops, poisson: self.poisson },
        }
    }

    fn runtime_ns(&self) -> Option<u64> {
        self.runtime_ns
    }

    fn instances(&self) -> Vec<Instance> {
        (0..self.numjobs)
            .map(|c| Instance { suffix: (self.numjobs > 1).then(|| c.to_string()), workload: Box::new(self.clone()) as Box<dyn Workload> })
            .collect()
    }

    fn options(&self) -> Vec<(String, String)> {
        self.options.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(src: &str) -> SpecResult<Box<dyn Workload>> {
        let t: toml::Table = src.parse().unwrap();
        build(&Spec::new(&t, "vm[0].job[0]"))
    }

    #[test]
    fn random_writes_are_aligned_and_in_range() {
        let mut j = job("rw = \"randwrite\"\nbs = \"32k\"\nsize = \"1MiB\"\noffset = \"1MiB\"").unwrap();
        let mut rng = RngStream::new(1, "t");
        for _ in 0..1000 {
            let r = j.next(&mut rng);
            assert_eq!(r.op, Op::Write);
            assert_eq!(r.offset_bytes % 32768, 0);
            assert!((1 << 20..2 << 20).contains(&r.offset_bytes));
        }
    }

    #[test]
    fn sequential_wraps_and_mix_follows_rwmixread() {
        let mut j = job("rw = \"rw\"\nrwmixread = 70\nbs = \"4k\"\nsize = \"8k\"").unwrap();
        let mut rng = RngStream::new(1, "t");
        let reqs: Vec<Request> = (0..10_000).map(|_| j.next(&mut rng)).collect();
        assert_eq!(reqs[0].offset_bytes, 0);
        assert_eq!(reqs[1].offset_bytes, 4096);
        assert_eq!(reqs[2].offset_bytes, 0);
        let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
        assert!((6_800..7_200).contains(&reads), "{reads}");
    }

    #[test]
    fn bssplit_and_errors() {
        let mut j = job("bssplit = \"4k/75:64k/25\"").unwrap();
        let mut rng = RngStream::new(3, "t");
        let big = (0..10_000).filter(|_| j.next(&mut rng).size_bytes == 65536).count();
        assert!((2_300..2_700).contains(&big), "{big}");
        assert!(job("bssplit = \"4k/70:64k/20\"").err().unwrap().message.contains("add up to 90"));
        let e = job("rw = \"randwirte\"").err().unwrap();
        assert!(e.message.contains("did you mean `randwrite`"), "{}", e.message);
        assert_eq!(job("iodepth = 0").err().unwrap().location, "vm[0].job[0].iodepth");
    }

    #[test]
    fn pacing() {
        assert_eq!(job("iodepth = 32").unwrap().pacing(), Pacing::Closed { depth: 32 });
        assert_eq!(
            job("rate_iops = 500\nrate_process = \"poisson\"\niodepth = 8").unwrap().pacing(),
            Pacing::Open { depth: 8, rate_iops: 500.0, poisson: true }
        );
    }
}
