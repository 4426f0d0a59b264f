//! A measured distribution: CDF points from a file, one `value,cumulative_probability` per line
//! (`120us,0.99`), interpolated linearly between points. For latencies recorded on real gear
//! (a switch's port-to-port histogram, an SSD's read latency under garbage collection).

use super::Distribution;
use sanlab_spec::{parse_duration_ns, Kind, Spec, SpecResult};
use sanlab_des::RngStream;

pub const KIND: Kind<dyn Distribution> = Kind { name: "empirical", summary: "CDF points from a file (value,cumulative_probability per line), interpolated", build };

/// (value ns, cumulative probability), both non-decreasing; the last probability is 1.
struct Empirical(Vec<(f64, f64)>);

fn build(spec: &Spec) -> SpecResult<Box<dyn Distribution>> {
    let Some(path) = spec.path("file", "CSV of value,cumulative_probability lines; # starts a comment")? else {
        return Err(spec.error("file", "is required: expected a CSV file of CDF points"));
    };
    let text = std::fs::read_to_string(&path).map_err(|e| spec.error("file", format!("cannot read `{}`: {e}", path.display())))?;
    let points = parse_cdf(&text).map_err(|e| spec.error("file", format!("`{}` is not a CDF: {e}", path.display())))?;
    Ok(Box::new(Empirical(points)))
}

fn parse_cdf(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut points: Vec<(f64, f64)> = vec![];
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |m: String| format!("line {}: {m}", i + 1);
        let (value, p) = line.split_once(',').ok_or_else(|| at(format!("expected value,probability (e.g. `120us,0.99`), found `{line}`")))?;
        let value = parse_duration_ns(value.trim()).map_err(at)? as f64;
        let p: f64 = p.trim().parse().map_err(|_| at(format!("probability `{}` is not a number", p.trim())))?;
        if !(0.0..=1.0).contains(&p) {
            return Err(at(format!("probability {p} is outside 0..=1")));
        }
        if let Some(&(v0, p0)) = points.last() {
            if value < v0 || p < p0 {
                return Err(at("values and probabilities never decrease in a CDF".into()));
            }
        }
        points.push((value, p));
    }
    match points.last() {
        None => Err("no points".into()),
        Some(&(_, p)) if p != 1.0 => Err(format!("the last probability is {p}: expected 1")),
        Some(_) => Ok(points),
    }
}

impl Distribution for Empirical {
    fn draw_ns(&self, rng: &mut RngStream) -> f64 {
        let u = rng.uniform();
        // The first point above u; below the first point's probability sits its value.
        let i = self.0.partition_point(|&(_, p)| p <= u);
        let (v1, p1) = self.0[i];
        let Some(&(v0, p0)) = i.checked_sub(1).map(|k| &self.0[k]) else { return v1 };
        v0 + (v1 - v0) * (u - p0) / (p1 - p0)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_cdf;

    #[test]
    fn mean_and_cv() {
        let file = std::env::temp_dir().join(format!("sanlab-cdf-{}.csv", std::process::id()));
        std::fs::write(&file, "# uniform on 0..100us\n0us,0\n100us,1\n").unwrap();
        // Uniform on 0..100 us: mean 50 us, cv 1/√3.
        super::super::tests::assert_moments(&format!("kind = \"empirical\"\nfile = {:?}", file.display().to_string()), 200_000, 50_000.0, 1.0 / 3f64.sqrt());
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn rejects_what_is_not_a_cdf() {
        assert!(parse_cdf("10us,0.5\n5us,0.7\n20us,1").unwrap_err().starts_with("line 2: values and probabilities never decrease"));
        assert!(parse_cdf("10us,0.5\n20us,0.9").unwrap_err().contains("last probability is 0.9"));
        assert!(parse_cdf("10us,1.5").unwrap_err().contains("outside 0..=1"));
        assert!(parse_cdf("10,1").unwrap_err().contains("unknown unit"));
        assert_eq!(parse_cdf("0us,0.2\n10us,1").unwrap(), vec![(0.0, 0.2), (10_000.0, 1.0)]);
    }
}
