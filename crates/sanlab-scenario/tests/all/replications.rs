//! Replications: each variant run again with its seed + r, replication by replication; the first
//! is the run as written, the others are the runs `--seed` would give, for any number of threads.
use crate::common::{assert_conserved, repo, write_scenario};
use sanlab_scenario::{Overrides, Replications, RunResult, Scenario, VariantResult};
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};

const SERIES: &str = "scenarios/examples/vdbench_series.toml";

/// The noise example (every stage random) for 2 s, with two variants to pair.
fn noise() -> PathBuf {
    let text = std::fs::read_to_string(repo("scenarios/examples/noise.toml")).unwrap();
    let cdf = repo("scenarios/examples/cdf/ssd_read.csv");
    let text = text.replace("cdf/ssd_read.csv", &cdf.display().to_string()).replace("duration = \"10s\"", "duration = \"2s\"");
    write_scenario(&(text + "\n[[variant]]\nname = \"rr1\"\nset = {}\n[[variant]]\nname = \"rr100\"\nset = { \"host[0].multipath.psp.iops\" = 100 }\n"))
}

fn replicated(path: &Path, o: &Overrides, first: u32, count: u32, jobs: usize) -> RunResult {
    let s = Scenario::load(path).unwrap();
    let replications = Replications { first, count: NonZeroU32::new(count).unwrap() };
    let r = s.run_variants(&[], o, None, NonZeroUsize::new(jobs).unwrap(), replications).unwrap_or_else(|e| panic!("{e}"));
    r.variants.iter().for_each(assert_conserved);
    r
}

/// A variant's figures as text: equal texts are equal figures, bit for bit.
fn figures(v: &VariantResult) -> String {
    serde_json::to_string(&v.report).unwrap()
}

#[test]
fn replication_r_is_the_run_with_the_seed_plus_r() {
    let noise = noise();
    let plain = replicated(&noise, &Overrides::default(), 0, 1, 1);
    let three = replicated(&noise, &Overrides::default(), 0, 3, 2);
    let per = plain.variants.len();
    assert!(per >= 2, "the example has variants to pair");
    assert_eq!(three.variants.len(), 3 * per);
    for (i, v) in three.variants.iter().enumerate() {
        let (r, k) = (i / per, i % per);
        assert_eq!((v.replication as usize, v.name.as_str()), (r, plain.variants[k].name.as_str()));
        assert_eq!(v.seed, plain.variants[k].seed + r as u64);
        let alone = replicated(&noise, &Overrides { seed: Some(v.seed), ..Overrides::default() }, 0, 1, 1);
        assert_eq!(figures(v), figures(&alone.variants[k]), "{} #{}", v.name, r + 1);
    }
    // Seeds differ, so do the figures: replications are not copies.
    assert_ne!(figures(&three.variants[0]), figures(&three.variants[per]));
    // A later batch of replications is the same runs as one long batch.
    let later = replicated(&noise, &Overrides::default(), 2, 1, 1);
    assert_eq!(later.variants.iter().map(figures).collect::<Vec<_>>(), three.variants[2 * per..].iter().map(figures).collect::<Vec<_>>());
}

#[test]
fn a_seed_beyond_the_largest_is_refused() {
    let s = Scenario::load(&noise()).unwrap();
    let o = Overrides { seed: Some(i64::MAX as u64), ..Overrides::default() };
    let replications = Replications { first: 0, count: NonZeroU32::new(2).unwrap() };
    let e = s.run_variants(&[], &o, None, NonZeroUsize::MIN, replications).err().expect("an error");
    assert!(e.0.contains("replication 2: the seed 9223372036854775807 + 1 passes the largest seed"), "{e}");
}

#[test]
fn each_replication_of_a_curve_reads_its_own_max_run() {
    let r = replicated(&repo(SERIES), &Overrides::default(), 0, 2, 2);
    let per = r.variants.len() / 2;
    for replication in r.variants.chunks(per) {
        let max = replication.iter().find(|v| v.name == "curve xfersize=8k").unwrap();
        let half = replication.iter().find(|v| v.name == "curve_(50%) xfersize=8k").unwrap();
        let max_iops: f64 = max.report.jobs.iter().map(|j| j.read.iops + j.write.iops).sum();
        let rate = ((max_iops as i64 * 50 / 100 + 99) / 100 * 100) as f64;
        assert_eq!(half.report.jobs[0].options["iorate"], format!("{rate}"), "replication {}", half.replication + 1);
    }
}
