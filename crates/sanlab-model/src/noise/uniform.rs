//! Evenly spread between two bounds: a bounded jitter with no tail, such as a rotating disk's
//! position or a polling interval.

use super::Distribution;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Distribution> = Kind { name: "uniform", summary: "evenly spread between min and max: bounded jitter", build };

struct Uniform {
    min_ns: f64,
    width_ns: f64,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Distribution>> {
    let min = spec.duration_ns("min", None, "smallest duration")?;
    let max = spec.duration_ns("max", None, "largest duration")?;
    if min > max {
        return Err(spec.error("min", format!("{min} ns is above max ({max} ns): expected min <= max (nearest valid: {max} ns)")));
    }
    Ok(Box::new(Uniform { min_ns: min as f64, width_ns: (max - min) as f64 }))
}

impl Distribution for Uniform {
    fn draw_ns(&self, rng: &mut RngStream) -> f64 {
        self.width_ns.mul_add(rng.uniform(), self.min_ns)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn mean_and_cv() {
        // Uniform on [a, b]: mean (a + b) / 2, sd (b - a) / √12.
        super::super::tests::assert_moments("kind = \"uniform\"\nmin = \"10us\"\nmax = \"30us\"", 200_000, 20_000.0, 1.0 / 12f64.sqrt());
    }
}
