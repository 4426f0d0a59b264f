//! The figures sanlab claims (tests/data/claims.toml, printed as docs/validation.md's table): a
//! test measures a figure and `claim` checks it against the claim's target and tolerance, and
//! that the figure the page gives as ours is still what the run gives.
//!
//! Recording (offline, not part of the suite): SANLAB_CLAIMS_RECORD=FILE appends `id measured`
//! lines, with ` exact` when no run of the test had anything random in it (`seed_matters` false),
//! for `docs/validation_table.py --update FILE` or `--intervals FILE...`. SANLAB_CLAIMS_SEED_OFFSET=R
//! runs every scenario as its replication R (its seed + R, as `sanlab run --replications` does).

use super::repo;
use sanlab_scenario::{Replications, VariantResult};
use std::cell::Cell;
use std::num::NonZeroU32;
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

/// The replication every run of the tests makes: 0, the run as written, unless
/// SANLAB_CLAIMS_SEED_OFFSET says otherwise.
pub fn replication() -> Replications {
    Replications { first: seed_offset(), count: NonZeroU32::MIN }
}

fn seed_offset() -> u32 {
    match std::env::var("SANLAB_CLAIMS_SEED_OFFSET") {
        Ok(text) => text.trim().parse().unwrap_or_else(|_| panic!("SANLAB_CLAIMS_SEED_OFFSET={text}: expected a whole number of seeds to add, 0 or more")),
        Err(_) => 0,
    }
}

thread_local! {
    /// Whether a run of this test drew anything random (libtest runs each test on its own thread).
    static SEED_MATTERS: Cell<bool> = const { Cell::new(false) };
}

/// Notes a finished run: a claim measured after a run whose seed matters is not exact.
pub fn ran(v: &VariantResult) {
    SEED_MATTERS.with(|m| m.set(m.get() || v.report.seed_matters));
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
    let offset = seed_offset();
    let record = std::env::var("SANLAB_CLAIMS_RECORD").ok();
    if offset > 0 {
        // Another seed than the page's: only its figure is wanted, checks belong to the page's seed.
        let record = record.unwrap_or_else(|| panic!("SANLAB_CLAIMS_SEED_OFFSET={offset} without SANLAB_CLAIMS_RECORD=FILE: nothing would be recorded"));
        return write_record(&record, id, measured);
    }
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
    // Recording replaces the check of `ours` (after a change meant to move the figures).
    if let Some(record) = record {
        return write_record(&record, id, measured);
    }
    let ours = number(entry, id, "ours");
    assert!(
        (measured / ours - 1.0).abs() <= OURS_ROUNDING,
        "{id} ({figure}): the run gives {measured}, the page says {ours}: record the figures (SANLAB_CLAIMS_RECORD=FILE cargo test ...), then `.venv/bin/python docs/validation_table.py --update FILE`"
    );
}

/// Appends `id measured` (and ` exact`) to FILE in one write: the tests run on several threads.
fn write_record(record: &str, id: &str, measured: f64) {
    use std::io::Write;
    let exact = if SEED_MATTERS.with(Cell::get) { "" } else { " exact" };
    let line = format!("{id} {measured:?}{exact}\n");
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(record).unwrap_or_else(|e| panic!("{record}: {e}"));
    file.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("{record}: {e}"));
}
