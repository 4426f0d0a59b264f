//! All-flash media: writes are acknowledged once in NVRAM (`write_latency`), reads are served
//! from flash (`read_latency`); both plus `size / bandwidth` when a bandwidth is given. Service
//! times are fixed or exponentially distributed around those means (for M/D/1 and M/M/1 checks).
//! Either latency may itself be a distribution (`noise`): SSD garbage collection, NVRAM mirroring.

use super::{Backend, Media, ServiceCentre};
use crate::io::Op;
use crate::noise::{Delay, DelaySpec};
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<Backend> = Kind { name: "flash", summary: "NVRAM write ack, flash read service", build };

struct Flash {
    read: Delay,
    write: Delay,
    ns_per_byte: f64,
    exponential: bool,
}

fn build(spec: &Spec) -> SpecResult<Box<Backend>> {
    let read = spec.service("read_latency", (150_000, "150us"), "mean flash read service time, or its distribution")?;
    let write = spec.service("write_latency", (20_000, "20us"), "mean NVRAM write acknowledgement time, or its distribution")?;
    let bandwidth = spec.bandwidth_bps("bandwidth", Some((0.0, "unlimited")), "per-request transfer rate inside the array")?;
    let distribution = spec.choice("distribution", &["fixed", "exponential"], Some("fixed"), "service time distribution")?;
    let servers = spec.int("servers", Some(64), 1, 1_000_000, "requests in service at once")?;
    let media = Flash {
        read,
        write,
        ns_per_byte: if bandwidth > 0.0 { 8e9 / bandwidth } else { 0.0 },
        exponential: distribution == "exponential",
    };
    Ok(Box::new(Backend::Servers { media: Box::new(media), centre: ServiceCentre::new(servers as u32) }))
}

impl Media for Flash {
    #[inline]
    fn service_ns(&mut self, op: Op, size_bytes: u32, rng: &mut RngStream) -> u64 {
        let base = match op {
            Op::Read => self.read.draw_ns(),
            Op::Write => self.write.draw_ns(),
        } as f64;
        let mean = base + self.ns_per_byte * f64::from(size_bytes);
        let t = if self.exponential { rng.exponential(mean) } else { mean };
        t.round() as u64
    }
}
