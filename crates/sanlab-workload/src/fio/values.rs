//! The floor every fio file stands on: option texts as given ([`OptionValues`]), the error that
//! names an option ([`OptionError`]), the dialect and units they are read in ([`Dialect`],
//! [`Units`]: fio's parse.c `__get_mult_bytes` for job files, sanlab's units for scenarios) and
//! the parsers of fio's numbers, durations, booleans and per-direction values.

use sanlab_spec::number::{finite, DURATION, SIZE};
use sanlab_spec::{did_you_mean, parse_size_bytes};

/// Option texts by canonical name; the last one given wins, as in fio.
#[derive(Default, Clone, Debug)]
pub(crate) struct OptionValues(pub(super) Vec<(&'static str, String)>);

impl OptionValues {
    pub fn set(&mut self, name: &'static str, value: String) {
        self.0.retain(|(n, _)| *n != name);
        self.0.push((name, value));
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Options from (name, text) pairs, in order (tests).
    #[cfg(test)]
    pub fn of(opts: &[(&'static str, &str)]) -> Self {
        let mut v = Self::default();
        for (name, text) in opts {
            v.set(name, text.to_string());
        }
        v
    }

    /// The position at which `name` was last given (its order among the options).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|(n, _)| *n == name)
    }
}

/// An option whose value cannot be used, and why.
#[derive(Debug)]
pub(crate) struct OptionError {
    pub option: &'static str,
    pub message: String,
}

pub(crate) fn err(option: &'static str, message: impl Into<String>) -> OptionError {
    OptionError { option, message: message.into() }
}

/// Where the options were written, which decides units and defaults (see the docs of `fio/mod.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dialect {
    Scenario,
    JobFile { device_size_bytes: u64 },
}

/// Reads sizes and durations in a dialect.
pub(crate) struct Units {
    pub(crate) dialect: Dialect,
    /// fio `kb_base`: 1024 (fio's default compatibility mode) or 1000.
    pub(crate) kb_base: u64,
}

impl Units {
    /// The units of `dialect`, with the options' `kb_base`.
    pub(crate) fn from_options(v: &OptionValues, dialect: Dialect) -> Result<Units, OptionError> {
        let kb_base = match v.get("kb_base").map(str::trim) {
            None | Some("1024") => 1024,
            Some("1000") => 1000,
            Some(other) => return Err(err("kb_base", format!("`{other}`: expected 1024 or 1000"))),
        };
        Ok(Units { dialect, kb_base })
    }

    pub(crate) fn size(&self, s: &str) -> Result<u64, String> {
        match self.dialect {
            Dialect::Scenario => parse_size_bytes(s),
            Dialect::JobFile { device_size_bytes } => match parse_fio_size(s, self.kb_base)? {
                FioSize::Bytes(b) => Ok(b),
                FioSize::Percent(p) => Ok((device_size_bytes as f64 * p / 100.0) as u64),
            },
        }
    }

    pub(crate) fn block_size(&self, s: &str) -> Result<u32, String> {
        let b = self.size(s)?;
        u32::try_from(b).ok().filter(|b| *b > 0).ok_or_else(|| format!("block size `{s}` must be between 1 byte and 4 GiB"))
    }
}

enum FioSize {
    Bytes(u64),
    Percent(f64),
}

/// fio's integer with a unit (parse.c `__get_mult_bytes`, case-insensitive): with kb_base=1024,
/// k/kb mean 1024 and kib means 1000 — the opposite of the standards, kept by fio "to provide
/// compatibility with old scripts"; with kb_base=1000 it is the other way round.
fn parse_fio_size(s: &str, kb_base: u64) -> Result<FioSize, String> {
    let t = s.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t, 10),
    };
    let end = digits.find(|c: char| !(c.is_ascii_hexdigit() && radix == 16 || c.is_ascii_digit() || c == '.')).unwrap_or(digits.len());
    let (num, unit) = digits.split_at(end);
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    let n: f64 = if radix == 16 { u64::from_str_radix(num, 16).map(|v| v as f64).map_err(|_| format!("`{s}` is not a number"))? } else { finite(num)? };
    let unit = unit.trim().to_ascii_lowercase();
    if unit == "%" {
        if !(0.0..=100.0).contains(&n) {
            return Err(format!("`{s}`: a percentage must be 0..=100"));
        }
        return Ok(FioSize::Percent(n));
    }
    let (iec, other) = if kb_base == 1000 { (1024u64, 1000u64) } else { (1000, 1024) };
    let (power, base) = match unit.as_str() {
        "" | "b" => (0, 1),
        // parse.c `__get_mult_bytes`: only a whole "kib" (…"pib") takes the other base; "ki"
        // starts with "k" and so is kb_base's, as "k" is.
        "k" | "kb" | "ki" => (1, other),
        "m" | "mb" | "mi" => (2, other),
        "g" | "gb" | "gi" => (3, other),
        "t" | "tb" | "ti" => (4, other),
        "p" | "pb" | "pi" => (5, other),
        "kib" => (1, iec),
        "mib" => (2, iec),
        "gib" => (3, iec),
        "tib" => (4, iec),
        "pib" => (5, iec),
        _ => {
            const UNITS: [&str; 13] = ["b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "%"];
            return Err(format!("`{s}` has an unknown size suffix `{unit}`: expected one of {} (e.g. \"4k\"){}", UNITS.join(", "), did_you_mean(&unit, UNITS)));
        }
    };
    Ok(FioSize::Bytes(SIZE.whole(s, n * (base as f64).powi(power))?))
}

/// A duration; a bare number is in `bare_unit_ns` (fio: seconds, microseconds for thinktime).
/// Accepts fio's suffixes (us/usec, ms/msec, s, m = minutes, h, d) and sanlab's (ns, µs, min).
pub(crate) fn parse_duration(s: &str, bare_unit_ns: u64) -> Result<u64, String> {
    let t = s.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    let n = finite(num)?;
    const UNITS: [(&str, f64); 13] = [
        ("ns", 1.0), ("us", 1e3), ("usec", 1e3), ("µs", 1e3), ("ms", 1e6), ("msec", 1e6), ("s", 1e9), ("sec", 1e9),
        ("m", 60e9), ("min", 60e9), ("h", 3600e9), ("d", 86_400e9), ("", 0.0),
    ];
    let unit = unit.trim().to_lowercase();
    let scale = match UNITS.iter().find(|(u, _)| *u == unit) {
        Some(("", _)) => bare_unit_ns as f64,
        Some((_, scale)) => *scale,
        None => {
            let names: Vec<&str> = UNITS[..12].iter().map(|u| u.0).collect();
            return Err(format!("`{s}` has an unknown time unit `{unit}`: expected one of {}{}", names.join(", "), did_you_mean(&unit, names.iter().copied())));
        }
    };
    DURATION.whole(s, n * scale)
}

/// A bandwidth cap must be 0 (none) or at least 1 byte/s, as fio's integer rates are.
pub(crate) fn at_least_one(text: &str, r: f64) -> Result<f64, String> {
    if r != 0.0 && r < 1.0 {
        return Err(format!("rate `{text}` is below 1: expected 0 (no cap) or at least 1 (nearest valid: 1)"));
    }
    Ok(r)
}

pub(crate) fn parse_int(option: &'static str, s: &str, min: i64, max: i64) -> Result<i64, OptionError> {
    let n: i64 = s.trim().parse().map_err(|_| err(option, format!("`{s}` is not a whole number")))?;
    if n < min || n > max {
        let nearest = if n < min { min } else { max };
        return Err(err(option, format!("{n} is out of range: expected {min}..={max} (nearest valid: {nearest})")));
    }
    Ok(n)
}

pub(crate) fn parse_bool(option: &'static str, s: &str) -> Result<bool, OptionError> {
    match s.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(err(option, format!("`{other}` is not a boolean: expected 1 or 0"))),
    }
}

/// A per-direction option ("read,write[,trim]"): a value without a trailing comma also applies
/// to the directions after it (HOWTO `blocksize`). Blank means the default.
pub(crate) fn per_direction(s: &str) -> [Option<&str>; 2] {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let pick = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let read = pick(0);
    let write = if parts.len() == 1 { read } else { pick(1) };
    [read, write]
}

/// Option texts read in a dialect's units, each with its default: what every group of options
/// that `FioJob::from_options` reads uses.
pub(crate) struct Reader<'a> {
    pub(crate) v: &'a OptionValues,
    pub(crate) units: Units,
}

impl Reader<'_> {
    pub(crate) fn size_of(&self, o: &'static str, default: u64) -> Result<u64, OptionError> {
        self.v.get(o).map_or(Ok(default), |s| self.units.size(s).map_err(|e| err(o, e)))
    }

    pub(crate) fn time_of(&self, o: &'static str, bare_ns: u64) -> Result<u64, OptionError> {
        self.v.get(o).map_or(Ok(0), |s| parse_duration(s, bare_ns).map_err(|e| err(o, e)))
    }

    pub(crate) fn int_of(&self, o: &'static str, default: i64, min: i64, max: i64) -> Result<i64, OptionError> {
        self.v.get(o).map_or(Ok(default), |s| parse_int(o, s, min, max))
    }

    pub(crate) fn bool_of(&self, o: &'static str, default: bool) -> Result<bool, OptionError> {
        self.v.get(o).map_or(Ok(default), |s| parse_bool(o, s))
    }

    /// Whether the options come from a scenario (sanlab's defaults) rather than fio.
    pub(crate) fn scenario(&self) -> bool {
        matches!(self.units.dialect, Dialect::Scenario)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_units_follow_kb_base() {
        let b = |s, kb| match parse_fio_size(s, kb).unwrap() {
            FioSize::Bytes(b) => b,
            FioSize::Percent(_) => panic!(),
        };
        assert_eq!(b("4k", 1024), 4096);
        assert_eq!(b("4KB", 1024), 4096);
        assert_eq!(b("1MiB", 1024), 1_000_000, "fio's compatibility mode: IEC prefixes mean powers of 10");
        assert_eq!(b("1MiB", 1000), 1_048_576);
        assert_eq!(b("1m", 1000), 1_000_000);
        assert_eq!(b("4ki", 1024), 4096, "only a whole kib takes the other base");
        assert_eq!(b("1Gi", 1000), 1_000_000_000);
        assert_eq!(b("0x1000", 1024), 4096);
        assert!(parse_fio_size("4kx", 1024).err().unwrap().contains("unknown size suffix `kx`"));
        assert_eq!(parse_duration("10m", 1), Ok(600_000_000_000));
        assert_eq!(parse_duration("250", 1_000), Ok(250_000));
        assert_eq!(parse_duration("2msec", 1), Ok(2_000_000));
    }
}
