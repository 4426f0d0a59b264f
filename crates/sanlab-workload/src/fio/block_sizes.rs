//! A fio job's block sizes, per direction: `bs`, `bsrange` and `bssplit` (HOWTO `blocksize`,
//! `blocksize_range`, `bssplit`; io_u.c `get_next_buflen` draws them).

use super::values::{err, per_direction, OptionError, OptionValues, Units};
use sanlab_spec::number::whole_percent;
use sanlab_des::RngStream;

/// Block sizes of one direction.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum BlockSizes {
    Fixed(u32),
    /// fio `bsrange`: min + U x max, rounded down to a multiple of min, at most max (io_u.c
    /// `get_next_buflen`): uniform over the multiples of min when max is one.
    Range { min: u32, max: u32 },
    /// (size, cumulative percent) for bssplit.
    Split(Vec<(u32, u32)>),
}

impl BlockSizes {
    pub(super) fn min(&self) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(s) => s.iter().map(|e| e.0).min().unwrap_or(4096),
        }
    }

    pub(super) fn max(&self) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(s) => s.iter().map(|e| e.0).max().unwrap_or(4096),
        }
    }

    /// The mean of [`BlockSizes::draw`], exactly (for a bandwidth cap in bytes/s).
    pub(super) fn mean_bytes(&self) -> f64 {
        match self {
            Self::Fixed(b) => f64::from(*b),
            // raw is uniform on [min, min + max); each multiple v of min takes raw in [v, v + min),
            // and everything from max on gives max.
            Self::Range { min, max } => {
                let (min, max) = (f64::from(*min), f64::from(*max));
                let mut sum = 0.0;
                let mut v = min;
                while v < max {
                    sum += v * (v + min).min(max) - v * v;
                    v += min;
                }
                (sum + max * (min + max - max.max(min))) / max
            }
            Self::Split(s) => {
                let mut prev = 0;
                s.iter().map(|&(size, cum)| { let share = cum - prev; prev = cum; f64::from(size) * f64::from(share) / 100.0 }).sum()
            }
        }
    }

    #[inline]
    pub(super) fn draw(&self, rng: &mut RngStream) -> u32 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, max } => {
                let raw = u64::from(*min) + (f64::from(*max) * rng.uniform()) as u64;
                (raw - raw % u64::from(*min)).min(u64::from(*max)) as u32
            }
            Self::Split(s) => {
                let r = rng.below(100) as u32;
                s.iter().find(|(_, cum)| r < *cum).map_or(s[s.len() - 1].0, |e| e.0)
            }
        }
    }
}

/// fio `bssplit` for one direction: "4k/10:64k/50:32k/40"; blank shares split what is left.
fn parse_bssplit(s: &str, units: &Units) -> Result<BlockSizes, String> {
    let mut entries = vec![];
    for part in s.split(':') {
        let (size, pct) = part.split_once('/').unwrap_or((part, ""));
        let size = units.block_size(size).map_err(|e| format!("bssplit entry `{part}`: {e}"))?;
        let pct: Option<u32> = match pct.trim() {
            "" => None,
            p => Some(whole_percent(p).map_err(|e| format!("bssplit entry `{part}`: {e}"))?),
        };
        entries.push((size, pct));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(format!("bssplit percentages add up to {given}, expected 100"));
    }
    let mut cum = 0;
    let mut out = vec![];
    for (i, (size, pct)) in entries.iter().enumerate() {
        // Blanks share the remainder; the last blank takes the rounding.
        let share = pct.unwrap_or_else(|| {
            let blank_index = entries[..=i].iter().filter(|e| e.1.is_none()).count() as u32;
            let each = (100 - given) / blanks;
            if blank_index == blanks { 100 - given - each * (blanks - 1) } else { each }
        });
        cum += share;
        out.push((*size, cum));
    }
    Ok(BlockSizes::Split(out))
}

/// fio `bsrange` for one direction: "1k-4k" or "1k:4k"; a larger first value is swapped.
fn parse_bsrange(s: &str, units: &Units) -> Result<BlockSizes, String> {
    let (a, b) = s.split_once(['-', ':']).ok_or_else(|| format!("bsrange `{s}`: expected min-max, e.g. \"4k-64k\""))?;
    let (a, b) = (units.block_size(a)?, units.block_size(b)?);
    Ok(BlockSizes::Range { min: a.min(b), max: a.max(b) })
}

/// Block sizes, per direction: bssplit over bsrange over bs (4 KiB by default).
pub(super) fn from_options(v: &OptionValues, units: &Units) -> Result<[BlockSizes; 2], OptionError> {
    let default_bs = BlockSizes::Fixed(4096);
    let mut sizes = [default_bs.clone(), default_bs];
    if let Some(bs) = v.get("bs") {
        for (d, s) in per_direction(bs).iter().enumerate() {
            if let Some(s) = s {
                sizes[d] = BlockSizes::Fixed(units.block_size(s).map_err(|e| err("bs", e))?);
            }
        }
    }
    if let Some(r) = v.get("bsrange") {
        for (d, s) in per_direction(r).iter().enumerate() {
            if let Some(s) = s {
                sizes[d] = parse_bsrange(s, units).map_err(|e| err("bsrange", e))?;
            }
        }
    }
    if let Some(split) = v.get("bssplit") {
        for (d, s) in per_direction(split).iter().enumerate() {
            if let Some(s) = s {
                sizes[d] = parse_bssplit(s, units).map_err(|e| err("bssplit", e))?;
            }
        }
    }
    Ok(sizes)
}
