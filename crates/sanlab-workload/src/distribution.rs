//! fio's `random_distribution`: which block of a region a random request goes to.
//!
//! The generators follow fio's own (axboe/fio lib/zipf.c, lib/gauss.c, io_u.c
//! `__get_next_rand_offset_zoned*`), written anew: zipf, pareto and normal draw a block number,
//! scatter it over the region with fio's 64-bit golden-ratio hash, then rotate it by a random (or
//! the given) centre. So their hot blocks are spread over the region, as in fio, not packed at its
//! start. Zoned distributions send a share of requests to each zone, uniformly inside it.

use sanlab_spec::number::{finite, whole_percent};
use sanlab_des::RngStream;

/// fio caps the zeta sum at 10M terms (lib/zipf.c `ZIPF_MAX_GEN`): precision drops slightly
/// beyond it, and so does build time.
const ZIPF_MAX_TERMS: u64 = 10_000_000;
/// fio's `__hash_u64` multiplier (hash.h `GOLDEN_RATIO_64`).
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio's defaults when no parameter is given (fio.h `FIO_DEF_ZIPF`, `FIO_DEF_PARETO`).
const DEFAULT_ZIPF_THETA: f64 = 1.1;
const DEFAULT_PARETO_H: f64 = 0.2;
/// fio's normal distribution averages 12 uniform draws (lib/gauss.c `GAUSS_ITERS`).
const GAUSS_ITERS: u64 = 12;

/// A parsed `random_distribution`, before it knows the region's size.
#[derive(Clone, Debug, PartialEq)]
pub enum DistributionSpec {
    Uniform,
    Zipf { theta: f64, center: Option<f64> },
    Pareto { h: f64, center: Option<f64> },
    Normal { dev_pct: f64, center: Option<f64> },
    /// (access percent, region percent) per zone.
    Zoned(Vec<(u32, f64)>),
    /// (access percent, zone size in bytes) per zone.
    ZonedAbs(Vec<(u32, u64)>),
}

/// Splits "name:a:b" parameters of zipf, pareto and normal into a value and an optional centre.
fn value_and_center(name: &str, params: &[&str], default: f64) -> Result<(f64, Option<f64>), String> {
    let num = |s: &str, what: &str| finite(s).map_err(|e| format!("{name}: {what} {e}"));
    let value = match params.first() {
        Some(s) if !s.trim().is_empty() => num(s, "parameter")?,
        _ => default,
    };
    let center = match params.get(1) {
        Some(s) => {
            let c = num(s, "centre")?;
            if !(0.0..=1.0).contains(&c) {
                return Err(format!("{name}: centre {c} is out of range: expected 0..=1"));
            }
            Some(c)
        }
        None => None,
    };
    if params.len() > 2 {
        return Err(format!("{name}: expected at most a parameter and a centre, e.g. \"{name}:1.2:0.25\""));
    }
    Ok((value, center))
}

/// Zone list "60/10:30/20:10/" (fio `split_parse_ddir`): a blank share is what the others leave,
/// divided evenly among the blanks.
fn zones<T: Copy>(name: &str, list: &str, size: impl Fn(&str) -> Result<Option<T>, String>, fill: impl Fn(&[Option<T>]) -> Vec<T>) -> Result<Vec<(u32, T)>, String> {
    let mut access: Vec<Option<u32>> = vec![];
    let mut sizes: Vec<Option<T>> = vec![];
    for entry in list.split(':') {
        let (a, s) = entry.split_once('/').ok_or_else(|| format!("{name} zone `{entry}`: expected access%/range, e.g. \"60/10\""))?;
        access.push(match a.trim() {
            "" => None,
            a => Some(whole_percent(a).map_err(|e| format!("{name} zone `{entry}`: access {e}"))?),
        });
        sizes.push(size(s.trim()).map_err(|e| format!("{name} zone `{entry}`: {e}"))?);
    }
    if access.len() > 256 {
        return Err(format!("{name}: {} zones, fio allows at most 256", access.len()));
    }
    let given: u32 = access.iter().flatten().sum();
    let blanks = access.iter().filter(|a| a.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(format!("{name}: access percentages add up to {given}, expected 100"));
    }
    let access: Vec<u32> = access.iter().map(|a| a.unwrap_or_else(|| (100 - given) / blanks.max(1))).collect();
    let total: u32 = access.iter().sum();
    if total != 100 {
        return Err(format!("{name}: access percentages add up to {total} once the blanks are filled, expected 100"));
    }
    Ok(access.into_iter().zip(fill(&sizes)).collect())
}

impl DistributionSpec {
    /// Parses one direction's `random_distribution`; `size_bytes` reads a zoned_abs size.
    pub fn parse(s: &str, size_bytes: &dyn Fn(&str) -> Result<u64, String>) -> Result<Self, String> {
        let s = s.trim();
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let params: Vec<&str> = if rest.is_empty() { vec![] } else { rest.split(':').collect() };
        match name {
            "random" if rest.is_empty() => Ok(Self::Uniform),
            "zipf" => {
                let (theta, center) = value_and_center(name, &params, DEFAULT_ZIPF_THETA)?;
                if theta <= 0.0 || theta == 1.0 {
                    return Err(format!("zipf: theta {theta} is out of range: expected > 0 and not 1 (fio: \"zipf theta must different than 1.0\")"));
                }
                Ok(Self::Zipf { theta, center })
            }
            "pareto" => {
                let (h, center) = value_and_center(name, &params, DEFAULT_PARETO_H)?;
                if h <= 0.0 || h >= 1.0 {
                    return Err(format!("pareto: h {h} is out of range: expected 0 < h < 1"));
                }
                Ok(Self::Pareto { h, center })
            }
            "normal" | "gauss" => {
                let (dev_pct, center) = value_and_center(name, &params, 0.0)?;
                if !(0.0..100.0).contains(&dev_pct) {
                    return Err(format!("normal: deviation {dev_pct} is out of range: expected 0 <= dev < 100"));
                }
                Ok(Self::Normal { dev_pct, center })
            }
            "zoned" => {
                let parsed = zones(
                    name,
                    rest,
                    |p| match p {
                        "" => Ok(None),
                        p => match finite(p) {
                            Ok(r) if (0.0..=100.0).contains(&r) => Ok(Some(r)),
                            Ok(r) => Err(format!("range percent {r} is out of range: expected 0..=100")),
                            Err(e) => Err(format!("range percent {e}")),
                        },
                    },
                    |sizes| {
                        let given: f64 = sizes.iter().flatten().sum();
                        let blanks = sizes.iter().filter(|s| s.is_none()).count().max(1) as f64;
                        sizes.iter().map(|s| s.unwrap_or((100.0 - given) / blanks)).collect()
                    },
                )?;
                let total: f64 = parsed.iter().map(|z| z.1).sum();
                if total > 100.0 + 1e-9 {
                    return Err(format!("zoned: range percentages add up to {total}, at most 100"));
                }
                Ok(Self::Zoned(parsed))
            }
            "zoned_abs" => {
                let parsed = zones(name, rest, |p| if p.is_empty() { Err("a zoned_abs zone needs a size, e.g. \"60/20G\"".into()) } else { size_bytes(p).map(Some) }, |sizes| sizes.iter().flatten().copied().collect())?;
                Ok(Self::ZonedAbs(parsed))
            }
            "sequence" => Err("`sequence` distributions are not modelled: use zoned or zoned_abs".into()),
            _ => Err(format!(
                "unknown distribution `{s}`: expected random, zipf:θ[:centre], pareto:h[:centre], normal:dev[:centre], zoned:access/range:..., zoned_abs:access/size:...{}",
                sanlab_spec::did_you_mean(name, ["random", "zipf", "pareto", "normal", "zoned", "zoned_abs"])
            )),
        }
    }

    /// The generator over `blocks` blocks of `block_bytes` each.
    pub fn build(&self, blocks: u64, block_bytes: u64) -> Result<Distribution, String> {
        let blocks = blocks.max(1);
        let scatter = |center: Option<f64>, kind| Distribution::Scattered { kind, blocks, rotate: center.map(|c| (blocks as f64 * c) as u64) };
        Ok(match self {
            Self::Uniform => Distribution::Uniform { blocks },
            Self::Zipf { theta, center } => {
                let zetan: f64 = (1..=blocks.min(ZIPF_MAX_TERMS)).map(|i| (i as f64).powf(-theta)).sum();
                scatter(*center, Scatter::Zipf { theta: *theta, zetan })
            }
            Self::Pareto { h, center } => scatter(*center, Scatter::Pareto { power: h.ln() / (1.0 - h).ln() }),
            Self::Normal { dev_pct, center } => {
                let stddev = if *dev_pct == 0.0 { 0 } else { ((blocks as f64 * dev_pct / 100.0).ceil() as u64).min(blocks / 2) };
                // lib/gauss.c: the centre shifts by blocks × (centre − 0.5); none means no shift.
                let shift = center.map_or(0, |c| (blocks as f64 * (c - 0.5)) as i64);
                Distribution::Scattered { kind: Scatter::Normal { stddev }, blocks, rotate: Some(shift.rem_euclid(blocks as i64) as u64) }
            }
            Self::Zoned(z) => {
                let mut out = vec![];
                let (mut start_pct, mut cum) = (0.0, 0);
                for &(access, range_pct) in z {
                    cum += access;
                    let start = (start_pct * blocks as f64 / 100.0) as u64;
                    let len = (range_pct * blocks as f64 / 100.0) as u64;
                    out.push(Zone { cum_access: cum, start_block: start, blocks: len.max(1) });
                    start_pct += range_pct;
                }
                Distribution::Zoned(out)
            }
            Self::ZonedAbs(z) => {
                let mut out = vec![];
                let (mut start, mut cum) = (0, 0);
                for &(access, size) in z {
                    cum += access;
                    let len = size / block_bytes.max(1);
                    out.push(Zone { cum_access: cum, start_block: start, blocks: len.max(1) });
                    // Each zone is at most 1 EiB: checked zone by zone, the sum cannot overflow.
                    start += len;
                    if start > blocks {
                        let covered: u128 = z.iter().map(|&(_, size)| u128::from(size / block_bytes.max(1) * block_bytes)).sum();
                        return Err(format!("zoned_abs zones cover {covered} bytes, more than the job's region of {} bytes (fio: \"zoned_abs sizes exceed file size\")", blocks * block_bytes));
                    }
                }
                Distribution::Zoned(out)
            }
        })
    }
}

#[derive(Clone, Debug)]
pub struct Zone {
    /// Cumulative access percent up to and including this zone (1..=100).
    cum_access: u32,
    start_block: u64,
    blocks: u64,
}

#[derive(Clone, Debug)]
pub enum Scatter {
    Zipf { theta: f64, zetan: f64 },
    Pareto { power: f64 },
    Normal { stddev: u64 },
}

/// A block-number generator for one direction of one job.
#[derive(Clone, Debug)]
pub enum Distribution {
    Uniform { blocks: u64 },
    /// Draw, hash, rotate. `rotate` is None until the first draw picks a random one (fio draws it
    /// from the job's seed when no centre is given).
    Scattered { kind: Scatter, blocks: u64, rotate: Option<u64> },
    Zoned(Vec<Zone>),
}

impl Distribution {
    /// A block index in `[0, blocks)`.
    pub fn block(&mut self, rng: &mut RngStream) -> u64 {
        match self {
            Self::Uniform { blocks } => rng.address_below(*blocks),
            Self::Scattered { kind, blocks, rotate } => {
                let n = *blocks;
                let rotate = *rotate.get_or_insert_with(|| rng.address_below(n));
                let raw = match kind {
                    Scatter::Zipf { theta, zetan } => zipf_rank(*theta, *zetan, n, rng.address_uniform()),
                    Scatter::Pareto { power } => ((n - 1) as f64 * rng.address_uniform().powf(*power)) as u64,
                    Scatter::Normal { stddev } => gauss(n, *stddev, rng),
                };
                (raw.wrapping_mul(GOLDEN_RATIO_64) % n + rotate) % n
            }
            Self::Zoned(zones) => {
                let v = 1 + rng.address_below(100) as u32;
                let z = zones.iter().find(|z| v <= z.cum_access).unwrap_or(&zones[zones.len() - 1]);
                z.start_block + rng.address_below(z.blocks)
            }
        }
    }
}

/// Zero-based rank from Gray et al.'s zipf generator, as fio's `zipf_next` computes it.
fn zipf_rank(theta: f64, zetan: f64, n: u64, u: f64) -> u64 {
    let alpha = 1.0 / (1.0 - theta);
    let zeta2 = 1.0 + 0.5f64.powf(theta);
    let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    let uz = u * zetan;
    let rank = if uz < 1.0 {
        1
    } else if uz < 1.0 + 0.5f64.powf(theta) {
        2
    } else {
        1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
    };
    rank - 1
}

/// fio's `gauss_next` before hashing: the mean of 12 uniform draws on [0, n], plus a uniform
/// jitter of width `stddev`, pulled back inside the region.
fn gauss(n: u64, stddev: u64, rng: &mut RngStream) -> u64 {
    let sum: u64 = (0..GAUSS_ITERS).map(|_| rng.address_below(n + 1)).sum();
    let mean = sum.div_ceil(GAUSS_ITERS);
    if stddev == 0 {
        return mean;
    }
    let mut dev = (stddev as f64 * rng.address_uniform()) as i64 - (stddev / 2) as i64;
    while mean as i64 + dev >= n as i64 {
        dev /= 2;
    }
    (mean as i64 + dev).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Result<u64, String> {
        sanlab_spec::parse_size_bytes(s)
    }

    fn counts(spec: &str, blocks: u64, draws: usize) -> Vec<u64> {
        let mut d = DistributionSpec::parse(spec, &bytes).unwrap().build(blocks, 4096).unwrap();
        let mut rng = RngStream::new(5, "dist");
        let mut c = vec![0; blocks as usize];
        for _ in 0..draws {
            c[d.block(&mut rng) as usize] += 1;
        }
        c
    }

    #[test]
    fn zipf_hottest_block_matches_theory() {
        // P(rank 1) = 1 / zeta(n, theta); n = 1000, theta = 1.2.
        let zetan: f64 = (1..=1000).map(|i| (i as f64).powf(-1.2)).sum();
        let c = counts("zipf:1.2", 1000, 200_000);
        let top = *c.iter().max().unwrap() as f64 / 200_000.0;
        assert!((top - 1.0 / zetan).abs() < 0.01, "{top} vs {}", 1.0 / zetan);
        // Rank 2 has 2^-theta of rank 1's share.
        let mut sorted = c.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let second = sorted[1] as f64 / 200_000.0;
        assert!((second - 0.5f64.powf(1.2) / zetan).abs() < 0.01, "second rank {second}");
    }

    #[test]
    fn pareto_concentrates_and_centre_is_fixed() {
        let c = counts("pareto:0.2:0", 1000, 100_000);
        let mut sorted = c.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top_10pct: u64 = sorted[..100].iter().sum();
        // h = 0.2: about 80 % of accesses go to 20 % of blocks; the top 10 % take well over half.
        assert!(top_10pct > 60_000, "{top_10pct}");
        // Rank 0 hashes to 0, and centre 0 does not rotate: block 0 is the hottest.
        assert_eq!(c.iter().enumerate().max_by_key(|(_, n)| **n).unwrap().0, 0);
    }

    #[test]
    fn zoned_sends_shares_to_ranges() {
        let c = counts("zoned:60/10:30/20:10/", 1000, 100_000);
        let first: u64 = c[..100].iter().sum();
        let second: u64 = c[100..300].iter().sum();
        let rest: u64 = c[300..].iter().sum();
        assert!((58_000..62_000).contains(&first), "{first}");
        assert!((28_000..32_000).contains(&second), "{second}");
        assert!((9_000..11_000).contains(&rest), "{rest}");
    }

    #[test]
    fn zoned_abs_and_normal() {
        // 75 % of accesses in the first 1 MiB (256 blocks of 4 KiB) of a 4 MiB region.
        let c = counts("zoned_abs:75/1MiB:25/3MiB", 1024, 100_000);
        let hot: u64 = c[..256].iter().sum();
        assert!((73_500..76_500).contains(&hot), "{hot}");
        let c = counts("normal:10", 1000, 50_000);
        assert_eq!(c.iter().sum::<u64>(), 50_000);
        assert!(*c.iter().max().unwrap() > 3 * 50, "normal has hot blocks");
    }

    #[test]
    fn bad_specs_say_why() {
        let e = |s| DistributionSpec::parse(s, &bytes).unwrap_err();
        assert!(e("zipf:1").contains("not 1"));
        assert!(e("pareto:1.5").contains("0 < h < 1"));
        assert!(e("zoned:60/10:30/20").contains("add up to 90"));
        assert!(e("zipff:1.2").contains("did you mean `zipf`"));
        assert!(DistributionSpec::parse("zoned_abs:50/1MiB:50/8MiB", &bytes).unwrap().build(1024, 4096).unwrap_err().contains("exceed"));
    }
}
