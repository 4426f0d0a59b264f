//! Helpers shared by the integration tests.

mod claims;
pub use claims::claim;

use sanlab_scenario::{Overrides, RunResult, Scenario, VariantResult};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

pub fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

pub fn run(path: &str, variants: &[&str], o: Overrides) -> RunResult {
    let v: Vec<String> = variants.iter().map(|s| s.to_string()).collect();
    run_path(&repo(path), &v, &o)
}

/// The one place the tests run a scenario: as written, or as the replication
/// SANLAB_CLAIMS_SEED_OFFSET names when the claims' intervals are recorded (`claims.rs`).
fn run_path(path: &Path, variants: &[String], o: &Overrides) -> RunResult {
    let r = Scenario::load(path)
        .and_then(|s| s.run_variants(variants, o, None, NonZeroUsize::MIN, claims::replication()))
        .unwrap_or_else(|e| panic!("{e}"));
    for v in &r.variants {
        assert_conserved(v);
        claims::ran(v);
    }
    r
}

/// No I/O lost: issued = completed + in flight for every component.
pub fn assert_conserved(v: &VariantResult) {
    for c in &v.report.conservation {
        assert!(c.holds(), "variant {}: {:?}", v.name, c);
    }
}

/// Overrides applying `--set` assignments.
pub fn with_sets(sets: &[&str]) -> Overrides {
    Overrides { sets: sets.iter().map(|s| s.to_string()).collect(), ..Overrides::default() }
}

/// Runs the only variant of a scenario given as text, with `--set` assignments; checks that no
/// I/O is lost.
pub fn run_text(text: &str, sets: &[&str]) -> VariantResult {
    run_path(&write_scenario(text), &[], &with_sets(sets)).variants.into_iter().next().expect("one variant")
}

/// Writes `text` to a fresh scenario file in the temp folder and returns its path.
pub fn write_scenario(text: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = std::env::temp_dir().join(format!("sanlab-test-{}-{}.toml", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&p, text).unwrap();
    p
}

/// A scenario on the shared one-VM base (`tests/data/scenarios/one_vm.toml`: one host, one flash
/// array `a`, volume `lun` on one path, VM `vm` with an ideal adapter) with `changes` laid over
/// it: tables merge key by key, an array of tables such as `[[vm]]` or `[[array]]` replaces the
/// base's whole.
pub fn on_one_vm(changes: &str) -> String {
    format!("base = {:?}\n{changes}", repo("tests/data/scenarios/one_vm.toml").display().to_string())
}
