//! The figures sanlab claims (tests/data/claims.toml, printed as docs/validation.md's table): a
//! test measures a figure and `claim` checks it against the claim's target and tolerance, and
//! that the figure the page gives as ours is still what the run gives.

use super::repo;
use std::sync::OnceLock;

/// Ours on the page is rounded; a run that moves further than this has changed the model.
const OURS_ROUNDING: f64 = 0.005;

fn claims() -> &'static toml::Table {
    static CLAIMS: OnceLock<toml::Table> = OnceLock::new();
    CLAIMS.get_or_init(|| {
        let path = repo("tests/data/claims.toml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
}

fn number(entry: &toml::Table, id: &str, key: &str) -> f64 {
    match entry.get(key) {
        Some(toml::Value::Float(x)) => *x,
        Some(toml::Value::Integer(n)) => *n as f64,
        other => panic!("tests/data/claims.toml, claim `{id}`: `{key}` should be a number, found {other:?}"),
    }
}

/// Asserts `measured` against claim `id`: within its tolerance of its target (or inside its band),
/// and within rounding of the figure the page gives as ours.
pub fn claim(id: &str, measured: f64) {
    let entry = claims()["claim"]
        .as_array()
        .expect("[[claim]] entries")
        .iter()
        .filter_map(toml::Value::as_table)
        .find(|c| c.get("id").and_then(toml::Value::as_str) == Some(id))
        .unwrap_or_else(|| panic!("tests/data/claims.toml has no claim `{id}`"));
    let figure = entry["figure"].as_str().unwrap_or(id);
    let target = number(entry, id, "target");
    match entry.get("band").and_then(toml::Value::as_array) {
        Some(band) => {
            let (low, high) = (band[0].as_float().expect("band of numbers"), band[1].as_float().expect("band of numbers"));
            assert!((low..=high).contains(&measured), "{id} ({figure}): {measured} outside its band {low}..{high} (target {target})");
        }
        None => {
            let tolerance = number(entry, id, "tolerance");
            let error = measured / target - 1.0;
            assert!(error.abs() <= tolerance, "{id} ({figure}): {measured} is {:+.2} % from {target}, beyond ±{:.1} %", error * 100.0, tolerance * 100.0);
        }
    }
    // SANLAB_CLAIMS_RECORD=FILE: append `id measured` lines for `docs/validation_table.py
    // --update FILE` instead of checking `ours` (after a change meant to move the figures).
    if let Ok(record) = std::env::var("SANLAB_CLAIMS_RECORD") {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&record).unwrap_or_else(|e| panic!("{record}: {e}"));
        writeln!(file, "{id} {measured:?}").unwrap_or_else(|e| panic!("{record}: {e}"));
        return;
    }
    let ours = number(entry, id, "ours");
    assert!(
        (measured / ours - 1.0).abs() <= OURS_ROUNDING,
        "{id} ({figure}): the run gives {measured}, the page says {ours}: record the figures (SANLAB_CLAIMS_RECORD=FILE cargo test ...), then `.venv/bin/python docs/validation_table.py --update FILE`"
    );
}
