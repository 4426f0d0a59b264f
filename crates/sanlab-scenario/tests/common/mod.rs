use sanlab_scenario::{run_file, Overrides, RunResult, VariantResult};
use std::path::PathBuf;

pub fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

pub fn run(path: &str, variants: &[&str], o: Overrides) -> RunResult {
    let v: Vec<String> = variants.iter().map(|s| s.to_string()).collect();
    let r = run_file(&repo(path), &v, &o, None).unwrap_or_else(|e| panic!("{e}"));
    for v in &r.variants {
        assert_conserved(v);
    }
    r
}

/// No I/O lost: issued = completed + in flight for every component.
pub fn assert_conserved(v: &VariantResult) {
    for c in &v.report.conservation {
        assert!(c.holds(), "variant {}: {:?}", v.name, c);
    }
}
