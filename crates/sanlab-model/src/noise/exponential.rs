//! Memoryless waits around a mean (cv = 1): queueing behind independent cross traffic, as in a
//! busy switch port or a shared controller.

use super::Distribution;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Distribution> = Kind { name: "exponential", summary: "memoryless around a mean (cv = 1): queueing behind cross traffic", build };

struct Exponential {
    mean_ns: f64,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Distribution>> {
    let mean = spec.duration_ns("mean", None, "mean duration")?;
    Ok(Box::new(Exponential { mean_ns: mean as f64 }))
}

impl Distribution for Exponential {
    fn draw_ns(&self, rng: &mut RngStream) -> f64 {
        rng.exponential(self.mean_ns)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn mean_and_cv() {
        super::super::tests::assert_moments("kind = \"exponential\"\nmean = \"100us\"", 200_000, 100_000.0, 1.0);
    }
}
