//! `--set PATH=VALUE` and variant `set` tables: a dotted path with indices
//! (`host[0].multipath.psp.iops`) and a TOML value.

use sanlab_spec::SpecError;
use toml::{Table, Value};

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut out = vec![];
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return Err(format!("`{path}` has an empty key; expected e.g. host[0].multipath.psp.iops"));
        }
        out.push(Segment::Key(key.to_string()));
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(|| format!("`{path}`: missing `]`"))?;
            let idx = r[..end].parse().map_err(|_| format!("`{path}`: `{}` is not an index", &r[..end]))?;
            out.push(Segment::Index(idx));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("`{path}`: unexpected `{rest}`"));
        }
    }
    Ok(out)
}

/// Reads the VALUE of `KEY=VALUE` as TOML (`1`, `true`, `"x"`, `{ kind = "rr" }`); anything that
/// is not TOML is taken as a string, so `30s` and `rr` need no quotes.
pub fn parse_value(text: &str) -> Value {
    let text = text.trim();
    match format!("v = {text}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(text.to_string())),
        Err(_) => Value::String(text.to_string()),
    }
}

/// Parses `KEY=VALUE`.
pub fn parse_assignment(s: &str) -> Result<(String, Value), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("`{s}`: expected KEY=VALUE, e.g. host[0].multipath.psp.iops=1"))?;
    Ok((k.trim().to_string(), parse_value(v)))
}

/// Sets `path` in `root` to `value`. Tables along the way are created; an index must exist.
pub fn apply(root: &mut Table, path: &str, value: Value, origin: &str) -> Result<(), SpecError> {
    let err = |m: String| SpecError::new(path.to_string(), format!("{m} (from {origin})"));
    let segs = parse_path(path).map_err(err)?;
    let mut tree = Value::Table(std::mem::take(root));
    let result = set_in(&mut tree, &segs, value, "").map_err(err);
    if let Value::Table(t) = tree {
        *root = t;
    }
    result
}

fn set_in(cur: &mut Value, segs: &[Segment], value: Value, walked: &str) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else { return Ok(()) };
    match seg {
        Segment::Key(k) => {
            let here = if walked.is_empty() { k.clone() } else { format!("{walked}.{k}") };
            // A kind's name alone (`psp = "rr"`) is its table at the defaults: a key set in it
            // makes the table (`{ kind = "rr", iops = 1 }`).
            if let Value::String(kind) = cur {
                *cur = Value::Table(Table::from_iter([("kind".to_string(), Value::String(std::mem::take(kind)))]));
            }
            let Value::Table(t) = cur else { return Err(format!("`{walked}` is not a table")) };
            if rest.is_empty() {
                t.insert(k.clone(), value);
                return Ok(());
            }
            if !t.contains_key(k) {
                if matches!(rest[0], Segment::Index(_)) {
                    return Err(format!("`{here}` does not exist, so it has no entries to index"));
                }
                t.insert(k.clone(), Value::Table(Table::new()));
            }
            set_in(t.get_mut(k).expect("present"), rest, value, &here)
        }
        Segment::Index(n) => {
            let here = format!("{walked}[{n}]");
            let Value::Array(a) = cur else { return Err(format!("`{walked}` is not a list")) };
            let len = a.len();
            let item = a.get_mut(*n).ok_or_else(|| match len {
                0 => format!("index {n} is out of range: `{walked}` is empty"),
                1 => format!("index {n} is out of range: `{walked}` has 1 entry, [0]"),
                _ => format!("index {n} is out of range: `{walked}` has {len} entries, [0] to [{}]", len - 1),
            })?;
            if rest.is_empty() {
                *item = value;
                return Ok(());
            }
            set_in(item, rest, value, &here)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_values_and_creates_tables() {
        let mut t: Table = "[[host]]\nname = \"a\"\n[host.multipath]\npsp = { kind = \"rr\" }".parse().unwrap();
        apply(&mut t, "host[0].multipath.psp.iops", parse_value("1"), "--set").unwrap();
        apply(&mut t, "run.duration", parse_value("30s"), "--set").unwrap();
        assert_eq!(t["host"][0]["multipath"]["psp"]["iops"].as_integer(), Some(1));
        assert_eq!(t["run"]["duration"].as_str(), Some("30s"));
        let e = apply(&mut t, "host[3].name", parse_value("x"), "--set").unwrap_err();
        assert!(e.message.contains("index 3 is out of range: `host` has 1 entry, [0]"), "{}", e.message);
        assert_eq!(t["host"][0]["name"].as_str(), Some("a"), "tree intact after an error");
    }

    #[test]
    fn a_key_set_under_a_kind_name_makes_its_table() {
        let mut t: Table = "[host.multipath]\npsp = \"rr\"".parse().unwrap();
        apply(&mut t, "host.multipath.psp.iops", parse_value("1"), "--set").unwrap();
        assert_eq!(t["host"]["multipath"]["psp"], parse_value("{ kind = \"rr\", iops = 1 }"));
        // A number is no kind name: still an error.
        let mut t: Table = "[run]\nseed = 1".parse().unwrap();
        assert!(apply(&mut t, "run.seed.x", parse_value("1"), "--set").unwrap_err().message.contains("`run.seed` is not a table"));
    }

    #[test]
    fn values_and_assignments() {
        assert_eq!(parse_value("{ kind = \"rr\", iops = 1 }")["iops"].as_integer(), Some(1));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("rr"), Value::String("rr".into()));
        assert!(parse_assignment("novalue").is_err());
        assert!(parse_path("a[x]").is_err());
    }
}
