//! Right-skewed, by mean and coefficient of variation: most draws near the median, a long tail.
//! Flash reads behind garbage collection and WAN round trips look like this.

use super::Distribution;
use sanlab_spec::{Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Distribution> = Kind { name: "lognormal", summary: "right-skewed by mean and cv: SSD garbage collection, WAN jitter", build };

/// ln of a draw is normal with these parameters.
struct LogNormal {
    mu: f64,
    sigma: f64,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn Distribution>> {
    let mean = spec.duration_ns("mean", None, "mean duration")?;
    let cv = spec.float("cv", 0.5, 0.0, 100.0, "coefficient of variation: standard deviation / mean")?;
    if mean == 0 {
        return Err(spec.error("mean", "must be positive for a lognormal, e.g. \"50us\""));
    }
    // Moments of the lognormal: mean = exp(mu + sigma²/2), cv² = exp(sigma²) - 1.
    let sigma2 = cv.mul_add(cv, 1.0).ln();
    Ok(Box::new(LogNormal { mu: (mean as f64).ln() - sigma2 / 2.0, sigma: sigma2.sqrt() }))
}

impl Distribution for LogNormal {
    fn draw_ns(&self, rng: &mut RngStream) -> f64 {
        // Box–Muller: one standard normal from two uniforms (1 - u keeps ln away from 0).
        let r = (-2.0 * (1.0 - rng.uniform()).ln()).sqrt();
        let z = r * (std::f64::consts::TAU * rng.uniform()).cos();
        self.sigma.mul_add(z, self.mu).exp()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn mean_and_cv() {
        super::super::tests::assert_moments("kind = \"lognormal\"\nmean = \"50us\"\ncv = 0.5", 400_000, 50_000.0, 0.5);
    }
}
