//! ioping (github.com/koct9i/ioping): one small request at a time, one per interval. ioping waits
//! for each request, so the next one goes out at the later of "interval after the previous was
//! issued" and "the previous completed". Offsets are random, size-aligned, inside the working set
//! (ioping `-S`, 1 MiB by default for a directory target such as `ioping -c 100 .`).

use crate::face::{Instance, JobSource, Request, Workload};
use crate::plan::Pacing;
use crate::plan::JobPlan;
use crate::face::Op;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn JobSource> = Kind { name: "ioping", summary: "ioping: one outstanding request per interval (latency probe)", build };

#[derive(Clone)]
struct Ioping {
    op: Op,
    size_bytes: u32,
    interval_ns: u64,
    work_blocks: u64,
    count: Option<u64>,
    issued: u64,
    options: Vec<(String, String)>,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn JobSource>> {
    let interval_ns = spec.duration_ns("interval", Some((1_000_000_000, "1s")), "time between requests (ioping -i)")?;
    let size = spec.size_bytes("size", Some((4096, "4k")), "request size (ioping -s)")?;
    let work = spec.size_bytes("work_size", Some((1 << 20, "1MiB")), "working set the offsets fall in (ioping -S)")?;
    let count = spec.int("count", Some(0), 0, i64::MAX, "stop after this many requests (ioping -c); 0 = until the run ends")?;
    let rw = spec.choice("rw", &["read", "write"], Some("read"), "read, or write (ioping -W)")?;
    if size == 0 || size > u64::from(u32::MAX) {
        return Err(spec.error("size", "must be between 1 byte and 4 GiB"));
    }
    if work < size {
        return Err(spec.error("work_size", format!("{work} bytes is smaller than size ({size} bytes)")));
    }
    if interval_ns == 0 && !spec.is_describing() {
        return Err(spec.error("interval", "must be positive, e.g. \"1s\""));
    }
    let mut options = vec![("interval".to_string(), format!("{interval_ns}ns")), ("size".to_string(), size.to_string()), ("rw".to_string(), rw.to_string())];
    if count > 0 {
        options.push(("count".to_string(), count.to_string()));
    }
    Ok(Box::new(Ioping {
        op: if rw == "read" { Op::Read } else { Op::Write },
        size_bytes: size as u32,
        interval_ns,
        work_blocks: work / size,
        count: (count > 0).then_some(count as u64),
        issued: 0,
        options,
    }))
}

impl JobSource for Ioping {
    fn instances(&self) -> Vec<Instance> {
        vec![Instance { suffix: None, plan: JobPlan::new(Pacing::Closed { depth: 1 }, self.options.clone()), workload: Box::new(self.clone()), after: vec![] }]
    }
}

impl Workload for Ioping {
    fn next(&mut self, rng: &mut RngStream) -> Option<Request> {
        if self.count.is_some_and(|c| self.issued >= c) {
            return None;
        }
        self.issued += 1;
        Some(Request { op: self.op, size_bytes: self.size_bytes, offset_bytes: rng.address_below(self.work_blocks) * u64::from(self.size_bytes) })
    }

    fn think_ns(&mut self, issued_ns: u64, now_ns: u64) -> Option<u64> {
        Some(self.interval_ns.saturating_sub(now_ns - issued_ns))
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    fn ioping(src: &str) -> SpecResult<Box<dyn JobSource>> {
        let t: toml::Table = src.parse().unwrap();
        let spec = Spec::new(&t, "vm[0].job[0]");
        let w = build(&spec)?;
        spec.finish()?;
        Ok(w)
    }

    #[test]
    fn waits_for_the_later_of_interval_and_completion() {
        let job = ioping("interval = \"100ms\"\ncount = 2").unwrap().instances().remove(0);
        assert_eq!(job.plan.pacing, Pacing::Closed { depth: 1 });
        let mut w = job.workload;
        // Fast request: the rest of the interval. Slow request: at once.
        assert_eq!(w.think_ns(0, 2_000_000), Some(98_000_000));
        assert_eq!(w.think_ns(0, 300_000_000), Some(0));
        let mut rng = RngStream::new(1, "t");
        let r = w.next(&mut rng).unwrap();
        assert_eq!((r.op, r.size_bytes), (Op::Read, 4096));
        assert!(r.offset_bytes < 1 << 20 && r.offset_bytes.is_multiple_of(4096));
        assert!(w.next(&mut rng).is_some());
        assert!(w.next(&mut rng).is_none(), "count = 2");
        assert!(ioping("size = \"2MiB\"").err().unwrap().message.contains("smaller than size"));
    }
}
