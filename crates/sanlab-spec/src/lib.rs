//! Strict reading of one table of scenario values, with units, ranges and located errors.
//!
//! Every kind's builder reads its parameters through a [`Spec`]. The same calls also document the
//! kind: in describe mode the reader returns defaults and records each parameter's name, type,
//! default and doc line, which is what `sanlab kinds` prints. A parameter is therefore declared in
//! exactly one place.

pub mod names;
pub mod number;

use number::{checked, finite, DURATION, SIZE};
use serde::Serialize;
use std::cell::RefCell;
use toml::{Table, Value};

/// The shortest service time an array may have: 1 µs. Below it no storage answers (an array's
/// DRAM hit is 10-50 µs, the fastest SSDs about 10 µs), and a closed loop around it costs millions
/// of events per simulated millisecond (a fuzzed 1 ns read service took minutes for 5 ms).
pub const MIN_SERVICE_NS: u64 = 1_000;

/// A user-input error: where it is (`host[0].multipath.psp.iops`) and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    pub location: String,
    pub message: String,
}

impl SpecError {
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Self { location: location.into(), message: message.into() }
    }
}

pub type SpecResult<T> = Result<T, SpecError>;

/// One documented parameter of a kind.
#[derive(Serialize, Clone, Debug)]
pub struct ParamDoc {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub default: String,
    pub doc: &'static str,
}

/// The closest of `choices` to `word`, if it is close enough to be a likely typo.
/// A word that begins exactly one choice (`alua` of `alua_rr`) is taken as that choice cut short.
pub fn closest<'a>(word: &str, choices: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let choices: Vec<&str> = choices.into_iter().collect();
    let typo = choices
        .iter()
        .map(|c| (strsim::damerau_levenshtein(&word, &c.to_lowercase()), *c))
        .filter(|(d, c)| *d <= 1.max(c.len() / 3) && *d < word.len().max(c.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c);
    let mut begun = choices.iter().filter(|c| word.len() >= 2 && c.to_lowercase().starts_with(&word));
    typo.or_else(|| match (begun.next(), begun.next()) {
        (Some(c), None) => Some(*c),
        _ => None,
    })
}

/// "; did you mean `x`?" or "".
pub fn did_you_mean<'a>(word: &str, choices: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, choices).map(|c| format!("; did you mean `{c}`?")).unwrap_or_default()
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

static EMPTY: std::sync::LazyLock<Table> = std::sync::LazyLock::new(Table::new);

/// Reader over one table. Call [`Spec::finish`] once every parameter has been read: keys nobody
/// asked for are errors.
pub struct Spec<'a> {
    table: &'a Table,
    location: String,
    used: RefCell<Vec<String>>,
    describe: Option<RefCell<Vec<ParamDoc>>>,
    /// Folder that relative file names (job files, traces) are resolved against.
    base_dir: std::path::PathBuf,
    /// Run seed and entity (`array/a`) that random parameters derive their streams from.
    streams: (u64, String),
    /// A kind table written as its kind's name alone (`psp = "rr"`): the name, read as `kind`.
    kind_name: Option<&'a Value>,
}

impl<'a> Spec<'a> {
    pub fn new(table: &'a Table, location: impl Into<String>) -> Self {
        let location = location.into();
        Self { table, streams: (0, location.clone()), location, used: RefCell::new(vec![]), describe: None, base_dir: ".".into(), kind_name: None }
    }

    /// Random parameters read here and in sub-tables draw from streams of `entity` under `run_seed`.
    pub fn with_streams(mut self, run_seed: u64, entity: impl Into<String>) -> Self {
        self.streams = (run_seed, entity.into());
        self
    }

    /// Resolves relative file names against `dir` (the scenario file's folder).
    pub fn with_base_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.base_dir = dir.into();
        self
    }

    /// A file name as written in the scenario, resolved against the scenario's folder.
    pub fn path(&self, key: &str, doc: &'static str) -> SpecResult<Option<std::path::PathBuf>> {
        Ok(self.text(key, "file path", Some("none"), doc)?.map(|p| self.base_dir.join(p)))
    }

    /// A reader of a sub-table found at `location`, sharing this one's streams and folder.
    pub fn child(&self, table: &'a Table, location: String) -> Spec<'a> {
        Spec { table, location, used: RefCell::new(vec![]), describe: None, base_dir: self.base_dir.clone(), streams: self.streams.clone(), kind_name: None }
    }

    /// A reader that returns defaults and records what is asked of it.
    pub fn describing() -> Spec<'static> {
        Spec { table: &EMPTY, location: String::new(), used: RefCell::new(vec![]), describe: Some(RefCell::new(vec![])), base_dir: ".".into(), streams: (0, String::new()), kind_name: None }
    }

    pub fn is_describing(&self) -> bool {
        self.describe.is_some()
    }

    pub fn into_docs(self) -> Vec<ParamDoc> {
        self.describe.map(RefCell::into_inner).unwrap_or_default()
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn at(&self, key: &str) -> String {
        if self.location.is_empty() { key.to_string() } else { format!("{}.{key}", self.location) }
    }

    pub fn error(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError::new(self.at(key), message)
    }

    /// Records a parameter read (for unused-key checks and, when describing, for `sanlab kinds`).
    pub fn note(&self, key: &str, ty: &'static str, default: String, doc: &'static str) {
        if let Some(d) = &self.describe {
            d.borrow_mut().push(ParamDoc { name: key.to_string(), ty, default, doc });
        }
        self.used.borrow_mut().push(key.to_string());
    }

    /// The value as written, for echoing options back (fio-compatible output).
    pub fn raw_display(&self, key: &str) -> Option<String> {
        self.raw(key).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// Every key and value of the table (for free-form tables such as a variant's `set`).
    pub fn entries(&self) -> Vec<(&'a str, &'a Value)> {
        self.table.iter().map(|(k, v)| (k.as_str(), v)).collect()
    }

    pub fn has(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    /// The value written at `key`, unchecked.
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.kind_name.filter(|_| key == "kind").or_else(|| self.table.get(key))
    }

    /// The error for a value of the wrong type at `key`.
    pub fn mistyped(&self, key: &str, expected: &str, v: &Value) -> SpecError {
        self.error(key, format!("expected {expected}, found {} `{v}`", type_name(v)))
    }

    /// Integer parameter within `min..=max`; `None` default means required.
    pub fn int(&self, key: &str, default: Option<i64>, min: i64, max: i64, doc: &'static str) -> SpecResult<i64> {
        let dflt = default.map_or("required".to_string(), |d| d.to_string());
        self.note(key, "integer", dflt, doc);
        if self.is_describing() {
            return Ok(default.unwrap_or(min));
        }
        let v = match (self.raw(key), default) {
            (None, Some(d)) => return Ok(d),
            (None, None) => return Err(self.error(key, "is required: expected an integer")),
            (Some(v), _) => v,
        };
        let n = v.as_integer().ok_or_else(|| self.mistyped(key, "an integer", v))?;
        if n < min || n > max {
            let hint = if n < min { min } else { max };
            return Err(self.error(key, format!("{n} is out of range: expected {min}..={max} (nearest valid: {hint})")));
        }
        Ok(n)
    }

    pub fn float(&self, key: &str, default: f64, min: f64, max: f64, doc: &'static str) -> SpecResult<f64> {
        self.note(key, "float", default.to_string(), doc);
        let Some(v) = self.raw(key).filter(|_| !self.is_describing()) else { return Ok(default) };
        let x = match v {
            Value::Float(f) => *f,
            Value::Integer(i) => *i as f64,
            _ => return Err(self.mistyped(key, "a number", v)),
        };
        if x.is_nan() {
            return Err(self.error(key, format!("NaN is not a number: expected {min}..={max}")));
        }
        if !(min..=max).contains(&x) {
            return Err(self.error(key, format!("{x} is out of range: expected {min}..={max} (nearest valid: {})", x.clamp(min, max))));
        }
        Ok(x)
    }

    /// An IOPS rate: 0 (the default: none), or [`number::MIN_RATE_IOPS`] (one I/O in the longest
    /// duration, 365 days) to `max`, as fio's `rate_iops` and vdbench's `iorate` are read: a
    /// lower rate (`1e-300`) spaces its I/Os further apart than any run lasts.
    pub fn rate_iops(&self, key: &str, max: f64, doc: &'static str) -> SpecResult<f64> {
        let r = self.float(key, 0.0, 0.0, max, doc)?;
        if r > 0.0 && r < number::MIN_RATE_IOPS {
            let min = number::MIN_RATE_IOPS;
            return Err(self.error(key, format!("{r:e} IOPS is out of range: expected 0 or {min:.3e}..={max} IOPS (nearest valid: {min:.3e}; a lower rate spaces its I/Os more than {} apart)", DURATION.max_text())));
        }
        Ok(r)
    }

    pub fn boolean(&self, key: &str, default: bool, doc: &'static str) -> SpecResult<bool> {
        self.note(key, "boolean", default.to_string(), doc);
        let Some(v) = self.raw(key).filter(|_| !self.is_describing()) else { return Ok(default) };
        match v {
            Value::Boolean(b) => Ok(*b),
            // esxcli spells useANO as 0/1.
            Value::Integer(0) => Ok(false),
            Value::Integer(1) => Ok(true),
            _ => Err(self.mistyped(key, "true or false (or 0/1)", v)),
        }
    }

    fn text(&self, key: &str, ty: &'static str, default: Option<&str>, doc: &'static str) -> SpecResult<Option<&'a str>> {
        self.note(key, ty, default.unwrap_or("required").to_string(), doc);
        if self.is_describing() {
            return Ok(None);
        }
        match self.raw(key) {
            None if default.is_none() => Err(self.error(key, format!("is required: expected {ty}"))),
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.mistyped(key, &format!("{ty} as a string"), v)),
        }
    }

    /// A string or a number, as text: for kinds whose own format parses the value (fio options,
    /// vdbench keywords), so `iodepth = 32` and `bs = "4k"` read alike. Booleans read as 1 / 0.
    pub fn scalar_text(&self, key: &str, ty: &'static str, default: &str, doc: &'static str) -> SpecResult<Option<String>> {
        self.note(key, ty, default.to_string(), doc);
        match self.raw(key).filter(|_| !self.is_describing()) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Integer(i)) => Ok(Some(i.to_string())),
            Some(Value::Float(f)) => Ok(Some(f.to_string())),
            Some(Value::Boolean(b)) => Ok(Some(if *b { "1" } else { "0" }.to_string())),
            Some(v) => Err(self.mistyped(key, &format!("{ty} as a string or a number"), v)),
        }
    }

    pub fn string(&self, key: &str, default: Option<&str>, doc: &'static str) -> SpecResult<String> {
        Ok(self.text(key, "string", default, doc)?.or(default).unwrap_or("").to_string())
    }

    pub fn opt_string(&self, key: &str, doc: &'static str) -> SpecResult<Option<String>> {
        Ok(self.text(key, "string", Some("none"), doc)?.map(str::to_string))
    }

    /// One of `choices`; anything else is an error naming the closest choice.
    pub fn choice(&self, key: &str, choices: &[&'static str], default: Option<&'static str>, doc: &'static str) -> SpecResult<&'static str> {
        let Some(s) = self.text(key, "choice", default, doc)? else {
            return Ok(default.unwrap_or(choices[0]));
        };
        choices.iter().copied().find(|c| *c == s).ok_or_else(|| {
            self.error(key, format!("unknown value `{s}`: expected one of {}{}", choices.join(", "), did_you_mean(s, choices.iter().copied())))
        })
    }

    fn unit_value<T>(&self, key: &str, ty: &'static str, default: Option<(T, &str)>, doc: &'static str, parse: fn(&str) -> Result<T, String>) -> SpecResult<T>
    where
        T: Copy + Default,
    {
        let dflt = default.as_ref().map(|(_, s)| *s);
        match self.text(key, ty, dflt, doc)? {
            Some(s) => parse(s).map_err(|e| self.error(key, e)),
            None => Ok(default.map(|(v, _)| v).unwrap_or_default()),
        }
    }

    /// A duration with a unit, e.g. "50us", "1.5ms", "3min".
    pub fn duration_ns(&self, key: &str, default: Option<(u64, &str)>, doc: &'static str) -> SpecResult<u64> {
        self.unit_value(key, "duration", default, doc, parse_duration_ns)
    }

    /// A duration, or `"never"` (`u64::MAX`): a timeout that may be switched off.
    pub fn duration_or_never_ns(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<u64> {
        if self.raw(key).and_then(Value::as_str) == Some("never") && !self.is_describing() {
            self.note(key, "duration or \"never\"", default.1.to_string(), doc);
            return Ok(u64::MAX);
        }
        self.duration_ns(key, Some(default), doc)
    }

    /// A service time without a distribution: a positive duration (see [`Spec::service`]).
    pub fn service_ns(&self, key: &str, default: (u64, &str), doc: &'static str) -> SpecResult<u64> {
        let ns = self.duration_ns(key, Some(default), doc)?;
        if ns < MIN_SERVICE_NS && !self.is_describing() {
            return Err(self.takes_no_time(key));
        }
        Ok(ns)
    }

    /// The error for a service time below [`MIN_SERVICE_NS`] (see `service_ns`).
    pub fn takes_no_time(&self, key: &str) -> SpecError {
        self.error(
            key,
            "must be at least 1us: no storage answers a command faster (an array's DRAM hit takes 10-50 us, the fastest SSDs about 10 us), and a closed loop around a faster service simulates millions of I/Os per simulated millisecond, or at zero, forever at one instant (nearest valid: \"1us\")",
        )
    }

    /// The seed and stream name (`<entity>/<key>`) a random parameter read at `key` draws from.
    pub fn stream_of(&self, key: &str) -> (u64, String) {
        let (seed, entity) = &self.streams;
        (*seed, format!("{entity}/{key}"))
    }

    /// A size with a unit, e.g. "32KiB", "4k", "1MiB".
    pub fn size_bytes(&self, key: &str, default: Option<(u64, &str)>, doc: &'static str) -> SpecResult<u64> {
        self.unit_value(key, "size", default, doc, parse_size_bytes)
    }

    /// A bandwidth with a unit, e.g. "16Gb/s" (bits) or "1.5GB/s" (bytes); returns bits per second.
    pub fn bandwidth_bps(&self, key: &str, default: Option<(f64, &str)>, doc: &'static str) -> SpecResult<f64> {
        self.unit_value(key, "bandwidth", default, doc, parse_bandwidth_bps)
    }

    /// A sub-table; absent means empty.
    pub fn table(&self, key: &str, doc: &'static str) -> SpecResult<Spec<'a>> {
        self.note(key, "table", "{}".into(), doc);
        let loc = self.at(key);
        match self.raw(key).filter(|_| !self.is_describing()) {
            None => Ok(self.child(&EMPTY, loc)),
            Some(Value::Table(t)) => Ok(self.child(t, loc)),
            Some(v) => Err(self.mistyped(key, "a table", v)),
        }
    }

    /// A model's table (`{ kind = "rr", iops = 1 }`), or its kind's name alone (`"rr"`) for the
    /// kind at its defaults; absent means empty.
    pub fn kind_table(&self, key: &str, doc: &'static str) -> SpecResult<Spec<'a>> {
        match self.raw(key).filter(|_| !self.is_describing()) {
            Some(name @ Value::String(_)) => {
                self.note(key, "table", "{}".into(), doc);
                Ok(Spec { kind_name: Some(name), ..self.child(&EMPTY, self.at(key)) })
            }
            Some(v) if !v.is_table() => Err(self.mistyped(key, "a table or a kind name", v)),
            _ => self.table(key, doc),
        }
    }

    /// An array of tables (`[[key]]`); absent means empty.
    pub fn tables(&self, key: &str, doc: &'static str) -> SpecResult<Vec<Spec<'a>>> {
        self.note(key, "array of tables", "[]".into(), doc);
        match self.raw(key).filter(|_| !self.is_describing()) {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Table(t) => Ok(self.child(t, format!("{}[{i}]", self.at(key)))),
                    _ => Err(SpecError::new(format!("{}[{i}]", self.at(key)), format!("expected a table, found {}", type_name(v)))),
                })
                .collect(),
            Some(v) => Err(self.mistyped(key, "an array of tables", v)),
        }
    }

    /// An array of `[integer, number]` pairs (e.g. a cost curve `[[4096, 100], ...]`); absent means empty.
    pub fn tables_or_pairs(&self, key: &str, doc: &'static str) -> SpecResult<Vec<(u64, f64)>> {
        self.note(key, "array of [size, value] pairs", "[]".into(), doc);
        let Some(v) = self.raw(key).filter(|_| !self.is_describing()) else { return Ok(vec![]) };
        let Value::Array(items) = v else { return Err(self.mistyped(key, "an array of [size, value] pairs", v)) };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let bad = || SpecError::new(format!("{}[{i}]", self.at(key)), format!("expected [size_bytes, value], e.g. [4096, 100], found `{item}`"));
                let Value::Array(pair) = item else { return Err(bad()) };
                match pair.as_slice() {
                    [Value::Integer(size), value] if *size > 0 => {
                        let x = value.as_float().or_else(|| value.as_integer().map(|n| n as f64)).ok_or_else(bad)?;
                        let x = checked(&value.to_string(), x).map_err(|e| SpecError::new(format!("{}[{i}]", self.at(key)), e))?;
                        Ok((*size as u64, x))
                    }
                    _ => Err(bad()),
                }
            })
            .collect()
    }

    /// An array of strings; absent means empty.
    pub fn strings(&self, key: &str, doc: &'static str) -> SpecResult<Vec<String>> {
        self.note(key, "array of strings", "[]".into(), doc);
        match self.raw(key).filter(|_| !self.is_describing()) {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| v.as_str().map(str::to_string).ok_or_else(|| SpecError::new(format!("{}[{i}]", self.at(key)), format!("expected a string, found {}", type_name(v)))))
                .collect(),
            Some(v) => Err(self.mistyped(key, "an array of strings", v)),
        }
    }

    /// Rejects keys that no read asked for, naming the closest known key.
    pub fn finish(&self) -> SpecResult<()> {
        if self.is_describing() {
            return Ok(());
        }
        let used = self.used.borrow();
        for key in self.table.keys() {
            if !used.iter().any(|u| u == key) {
                let known: Vec<&str> = used.iter().map(String::as_str).collect();
                return Err(self.error(
                    key,
                    format!("unknown key `{key}`; expected one of: {}{}", known.join(", "), did_you_mean(key, known.iter().copied())),
                ));
            }
        }
        Ok(())
    }
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() {
        return Err(format!("`{s}` does not start with a number"));
    }
    Ok((finite(&num.replace('_', ""))?, unit.trim()))
}

fn unit_error(s: &str, unit: &str, units: &[&str], example: &str) -> String {
    format!("`{s}` has unknown unit `{unit}`: expected one of {} (e.g. \"{example}\"){}", units.join(", "), did_you_mean(unit, units.iter().copied()))
}

pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let (n, unit) = split_number(s)?;
    const UNITS: [(&str, f64); 7] = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("min", 60e9), ("h", 3600e9)];
    let Some((_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(unit_error(s, unit, &UNITS.map(|u| u.0), "50us"));
    };
    DURATION.whole(s, n * scale)
}

/// A duration as a scenario writes it, in the largest unit that keeps it whole ("2s", "250ms").
pub fn format_duration(ns: u64) -> String {
    let (unit, scale) = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)].into_iter().find(|(_, scale)| ns > 0 && ns.is_multiple_of(*scale)).unwrap_or(("ns", 1));
    format!("{}{unit}", ns / scale)
}

pub fn parse_size_bytes(s: &str) -> Result<u64, String> {
    let (n, unit) = split_number(s)?;
    // Binary whatever the spelling (`32k`, `32KB`, `32KiB`), as fio (kb_base=1024, its default)
    // and vdbench read block sizes; a decimal size is written in bytes.
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1u64,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        // fio reads p too; sizes end at 1 EiB (SIZE), so a petabyte disk's trace fits.
        "p" | "pb" | "pib" => 1 << 50,
        _ => return Err(unit_error(s, unit, &["B", "k", "KB", "KiB", "m", "MB", "MiB", "g", "GB", "GiB", "t", "TB", "TiB", "p", "PB", "PiB"], "32KiB")),
    };
    SIZE.whole(s, n * scale as f64)
}

pub fn parse_bandwidth_bps(s: &str) -> Result<f64, String> {
    let (n, unit) = split_number(s)?;
    const UNITS: [(&str, f64); 8] = [
        ("Gb/s", 1e9), ("Mb/s", 1e6), ("Kb/s", 1e3), ("GB/s", 8e9), ("MB/s", 8e6), ("GiB/s", 8.0 * 1073741824.0), ("MiB/s", 8.0 * 1048576.0), ("b/s", 1.0),
    ];
    let Some((_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(unit_error(s, unit, &UNITS.map(|u| u.0), "16Gb/s"));
    };
    if n <= 0.0 {
        return Err(format!("`{s}`: a bandwidth must be positive"));
    }
    checked(s, n * scale)
}

/// One entry of a registry: a kind's name, summary and builder.
pub struct Kind<T: ?Sized> {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn(&Spec) -> SpecResult<Box<T>>,
}

// By hand: a derive would ask `T: Copy`, which a trait object is not; the fields are all Copy.
impl<T: ?Sized> Clone for Kind<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Kind<T> {}

/// Documentation of one kind, for `sanlab kinds`.
#[derive(Serialize, Debug)]
pub struct KindDoc {
    pub extension_point: &'static str,
    pub kind: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamDoc>,
    /// The platform whose multipathing offers a path selector (`ESXi NMP`, `Linux dm-multipath` …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<&'static str>,
}

/// Builds the `kind` named in `spec` from `registry` (two-step: kind first, then its parameters).
pub fn build_kind<T: ?Sized>(spec: &Spec, registry: &[Kind<T>], default: Option<&str>) -> SpecResult<Box<T>> {
    let names: Vec<&'static str> = registry.iter().map(|k| k.name).collect();
    spec.note("kind", "choice", default.unwrap_or("required").into(), "which model");
    let kind = match (spec.raw("kind"), default) {
        (Some(Value::String(s)), _) => s.as_str(),
        (Some(v), _) => return Err(spec.mistyped("kind", "a kind name as a string", v)),
        (None, Some(d)) => d,
        (None, None) => return Err(spec.error("kind", format!("is required: expected one of {}", names.join(", ")))),
    };
    let entry = registry.iter().find(|k| k.name == kind).ok_or_else(|| {
        spec.error("kind", format!("unknown kind `{kind}`: expected one of {}{}", names.join(", "), did_you_mean(kind, names.iter().copied())))
    })?;
    let built = (entry.build)(spec)?;
    spec.finish()?;
    Ok(built)
}

/// Documents every kind of a registry.
pub fn describe_kinds<T: ?Sized>(extension_point: &'static str, registry: &[Kind<T>]) -> Vec<KindDoc> {
    registry
        .iter()
        .map(|k| {
            let spec = Spec::describing();
            let _ = (k.build)(&spec);
            KindDoc { extension_point, kind: k.name, summary: k.summary, params: spec.into_docs(), platform: None }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> Table {
        src.parse().unwrap()
    }

    #[test]
    fn a_kind_name_alone_is_its_table_at_the_defaults() {
        let t = table("psp = \"rr\"\nfull = { kind = \"rr\", iops = 1 }\nbad = 3");
        let top = Spec::new(&t, "host[0]");
        let short = top.kind_table("psp", "").unwrap();
        assert_eq!(short.string("kind", None, "").unwrap(), "rr");
        assert_eq!(short.int("iops", Some(1000), 1, i64::MAX, "").unwrap(), 1000, "the kind's default");
        short.finish().unwrap();
        let full = top.kind_table("full", "").unwrap();
        assert_eq!((full.string("kind", None, "").unwrap(), full.int("iops", Some(1000), 1, i64::MAX, "").unwrap()), ("rr".to_string(), 1));
        let e = top.kind_table("bad", "").err().unwrap();
        assert_eq!((e.location.as_str(), e.message.as_str()), ("host[0].bad", "expected a table or a kind name, found an integer `3`"));
    }

    #[test]
    fn closest_takes_typos_and_names_cut_short() {
        let variants = ["rr_iops1", "alua_rr", "latency", "fixed", "mru"];
        assert_eq!(closest("alua", variants), Some("alua_rr"));
        assert_eq!(closest("fixd", variants), Some("fixed"));
        assert_eq!(closest("r", variants), None, "one letter begins too much");
        assert_eq!(closest("lo", ["local-0", "local-1"]), None, "begins two: no guess");
    }

    #[test]
    fn units_parse() {
        assert_eq!(parse_duration_ns("50us"), Ok(50_000));
        assert_eq!(parse_duration_ns("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration_ns("3min"), Ok(180_000_000_000));
        let formatted = [2_000_000_000, 250_000_000, 1_500, 7, 0].map(format_duration);
        assert_eq!(formatted, ["2s", "250ms", "1500ns", "7ns", "0ns"]);
        assert_eq!(parse_size_bytes("32KiB"), Ok(32768));
        assert_eq!(parse_size_bytes("32k"), Ok(32768));
        assert_eq!(parse_size_bytes("1MB"), Ok(1 << 20));
        // Every unit fio reads for a size, to the petabytes of a large disk's trace.
        assert_eq!((parse_size_bytes("2T"), parse_size_bytes("2TB"), parse_size_bytes("3PiB"), parse_size_bytes("1p")), (Ok(2 << 40), Ok(2 << 40), Ok(3 << 50), Ok(1 << 50)));
        assert_eq!((parse_size_bytes("32KB"), parse_size_bytes("32kib"), parse_size_bytes("32000")), (Ok(32_768), Ok(32_768), Ok(32_000)));
        assert_eq!(parse_bandwidth_bps("16Gb/s"), Ok(16e9));
        assert_eq!(parse_bandwidth_bps("1GB/s"), Ok(8e9));
        let e = parse_duration_ns("5mss").unwrap_err();
        assert!(e.contains("did you mean `ms`"), "{e}");
        assert!(parse_size_bytes("KiB").unwrap_err().contains("does not start with a number"));
    }

    #[test]
    fn unknown_keys_and_ranges_are_located() {
        let t = table("iops = 0\nuse_anno = true");
        let s = Spec::new(&t, "host[0].multipath.psp");
        let e = s.int("iops", Some(1000), 1, 10000, "").unwrap_err();
        assert_eq!(e.location, "host[0].multipath.psp.iops");
        assert!(e.message.contains("nearest valid: 1"), "{}", e.message);
        let _ = s.boolean("use_ano", false, "");
        let e = s.finish().unwrap_err();
        assert_eq!(e.location, "host[0].multipath.psp.use_anno");
        assert!(e.message.contains("did you mean `use_ano`"), "{}", e.message);
    }

    #[test]
    fn describe_mode_records_params() {
        let s = Spec::describing();
        let _ = s.int("iops", Some(1000), 1, 10000, "switch after N I/Os");
        let _ = s.duration_ns("eval", Some((3, "3ns")), "period");
        let docs = s.into_docs();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].default, "1000");
        assert_eq!(docs[1].default, "3ns");
    }
}
