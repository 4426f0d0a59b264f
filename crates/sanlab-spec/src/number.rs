//! Checked numbers from text. Every parser (scenario units, fio, vdbench, traces, distributions)
//! reads its numbers through here, so NaN, infinity and values too large to represent are errors
//! where they are written: never a clamp, a wrap or a saturation.

use sanlab_des::NS_PER_S;

/// A quantity counted in whole base units, with the largest value sanlab accepts.
pub struct Quantity {
    name: &'static str,
    max: u64,
    max_text: &'static str,
}

/// Durations, in nanoseconds: at most 365 days, for a run, a delay or the gap between two
/// arrivals. Sums of a few stay far below `u64::MAX` nanoseconds (584 years).
pub const DURATION: Quantity = Quantity { name: "duration", max: 365 * 86_400 * NS_PER_S, max_text: "365 days" };

/// Sizes and offsets, in bytes: at most 1 EiB (2^60), so an offset plus a size never overflows.
pub const SIZE: Quantity = Quantity { name: "size", max: 1 << 60, max_text: "1 EiB" };

/// The highest arrival rate, and the lowest positive one: one arrival per longest duration.
pub const MAX_RATE_IOPS: f64 = 1e9;
pub const MIN_RATE_IOPS: f64 = NS_PER_S as f64 / DURATION.max as f64;

impl Quantity {
    /// `value` base units (what `text` says), rounded to a whole number.
    pub fn whole(&self, text: &str, value: f64) -> Result<u64, String> {
        let value = checked(text, value)?;
        if value < 0.0 {
            return Err(format!("`{text}`: a {} must not be negative", self.name));
        }
        let rounded = value.round();
        if rounded > self.max as f64 {
            return Err(format!("`{text}` is beyond the largest {} sanlab accepts, {}", self.name, self.max_text));
        }
        Ok(rounded as u64)
    }

    /// The largest value, in base units.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The largest value as the messages spell it ("365 days").
    pub fn max_text(&self) -> &'static str {
        self.max_text
    }
}

/// `value`, computed from `text`, if it is finite.
pub fn checked(text: &str, value: f64) -> Result<f64, String> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("`{text}` is not a finite number"))
    }
}

/// A finite decimal number ("nan", "inf" and "1e999" are errors).
pub fn finite(text: &str) -> Result<f64, String> {
    let value = text.trim().parse::<f64>().map_err(|_| format!("`{text}` is not a number"))?;
    checked(text, value)
}

/// A whole percentage, 0..=100 (zone and block-size shares).
pub fn whole_percent(text: &str) -> Result<u32, String> {
    let p: u32 = text.trim().parse().map_err(|_| format!("percent `{text}` is not a whole number"))?;
    if p > 100 {
        return Err(format!("percent {p} is out of range: expected 0..=100"));
    }
    Ok(p)
}

/// An arrival rate in IOPS: 0 (no pacing) or `MIN_RATE_IOPS..=MAX_RATE_IOPS`. A lower rate
/// would space arrivals further apart than the longest duration.
pub fn rate_iops(text: &str, value: f64) -> Result<f64, String> {
    let r = checked(text, value)?;
    if r == 0.0 || (MIN_RATE_IOPS..=MAX_RATE_IOPS).contains(&r) {
        return Ok(r);
    }
    Err(format!("rate `{text}` is out of range: expected 0 or {MIN_RATE_IOPS:.3e}..={MAX_RATE_IOPS:e} IOPS (a lower rate spaces arrivals more than {} apart)", DURATION.max_text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_unrepresentable_values_are_errors() {
        for text in ["nan", "NaN", "inf", "-infinity", "1e999"] {
            assert!(finite(text).unwrap_err().contains("not a finite number"), "{text}");
        }
        assert_eq!(finite(" 2.5 "), Ok(2.5));
        assert!(DURATION.whole("1e23h", 1e23 * 3600e9).unwrap_err().contains("365 days"));
        assert_eq!(DURATION.whole("365d", 365.0 * 86_400e9), Ok(DURATION.max()));
        assert!(SIZE.whole("2EiB", 2.0 * (1u64 << 60) as f64).unwrap_err().contains("1 EiB"));
        assert!(SIZE.whole("-1", -1.0).unwrap_err().contains("negative"));
        assert_eq!(SIZE.whole("1.4", 1.4), Ok(1));
        assert!(whole_percent("4294967296").is_err());
        assert!(whole_percent("101").unwrap_err().contains("0..=100"));
    }

    #[test]
    fn rates_below_one_arrival_per_longest_duration_are_errors() {
        assert!(rate_iops("1e-300", 1e-300).unwrap_err().contains("365 days"));
        assert!(rate_iops("2e9", 2e9).is_err());
        assert_eq!(rate_iops("0", 0.0), Ok(0.0));
        assert_eq!(rate_iops("1e-7", 1e-7), Ok(1e-7));
    }
}
