//! Independent parts of a topology run on threads of their own give the document of one run of
//! the whole, bit for bit (`sanlab_model::parts`, `run_parts.rs`).
use crate::common::{assert_conserved, repo, with_sets, write_scenario};
use sanlab_scenario::{Overrides, Replications, Scenario, VariantResult};
use std::num::NonZeroUsize;
use std::path::Path;

const ESTATE: &str = "tests/data/scenarios/estate_parts.toml";

fn threads(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// The only variant's result, run with `jobs` threads.
fn run(path: &Path, jobs: usize) -> VariantResult {
    run_with(path, jobs, &Overrides::default())
}

fn run_with(path: &Path, jobs: usize, o: &Overrides) -> VariantResult {
    let s = Scenario::load(path).unwrap();
    let r = s.run_variants(&[], o, None, threads(jobs), Replications::default()).unwrap_or_else(|e| panic!("{e}"));
    let v = r.variants.into_iter().next().expect("one variant");
    assert_conserved(&v);
    v
}

/// Everything the document says of a variant but its wall time.
fn document(v: &VariantResult) -> String {
    let mut doc = serde_json::to_value(v).unwrap();
    doc.as_object_mut().unwrap().remove("wall_s");
    serde_json::to_string(&doc).unwrap()
}

fn part_count(path: &Path, most: usize) -> usize {
    Scenario::load(path).unwrap().parts(None, &Overrides::default(), threads(most)).unwrap().len()
}

#[test]
fn three_clusters_run_apart_give_the_whole_run_bit_for_bit() {
    let estate = repo(ESTATE);
    assert_eq!(part_count(&estate, 1), 1);
    assert_eq!(part_count(&estate, 2), 2);
    assert_eq!(part_count(&estate, 8), 3, "three clusters share nothing");
    let whole = run(&estate, 1);
    // Each cluster did its work: PARDA's window moved, the metro pair replicated, the cores and
    // the cache served, the latency selector decided.
    let r = &whole.report;
    assert!(r.vms.iter().all(|v| v.completed > 1_000), "{:?}", r.vms.iter().map(|v| v.completed).collect::<Vec<_>>());
    assert!(r.hosts.iter().filter(|h| h.flow_control.is_some()).count() == 2);
    assert!(r.arrays.iter().any(|a| a.replicated_ios > 0));
    assert!(r.arrays.iter().any(|a| a.cache_hit_ratio.is_some_and(|h| h > 0.0)));
    assert!(!r.psp_events.is_empty());
    assert!(r.timeseries.series_count() > 0);
    let names: Vec<&str> = r.vms.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["c-vm1", "a-vm1", "b-vm", "a-vm2", "c-vm2"], "in the order written");
    for jobs in [2, 3] {
        assert_eq!(document(&run(&estate, jobs)), document(&whole), "{jobs} threads");
    }
}

#[test]
fn sioc_thresholds_measured_once_serve_every_part() {
    // The injector measures cluster C's datastore before the run; C runs on a thread of its own
    // (the second part: A, with as many jobs, comes first), which builds the topology again and
    // takes the thresholds the first build found.
    let estate = repo(ESTATE);
    let sioc = with_sets(&["volume[1].flow_control={ kind = \"sioc\", threshold_mode = \"automatic\" }"]);
    let whole = run_with(&estate, 1, &sioc);
    assert_eq!(whole.injector.len(), 1, "one datastore measured");
    assert!(whole.injector[0].threshold_ms > 0.0);
    assert_eq!(document(&run_with(&estate, 3, &sioc)), document(&whole));
}

#[test]
fn what_joins_two_clusters_makes_them_one_part() {
    let text = std::fs::read_to_string(repo(ESTATE)).unwrap();
    // A path from cluster C's host to cluster A's array joins nothing until a VM there uses it.
    let path = text.replace("[[path]]\nhost = \"a-esx2\"", "[[path]]\nhost = \"c-esx\"\narray = \"a-cx\"\nlink = { latency = \"10us\" }\n\n[[path]]\nhost = \"a-esx2\"");
    assert_ne!(path, text);
    assert_eq!(part_count(&write_scenario(&path), 8), 3);
    let joined = write_scenario(&(path + "\n[[vm]]\nname = \"c-vm3\"\nhost = \"c-esx\"\nvolume = \"a-ds\"\n\n[[vm.job]]\nrw = \"randread\"\nbs = \"4k\"\niodepth = 2\n"));
    assert_eq!(part_count(&joined, 8), 2);
    // A fault event: the whole runs on one thread (a fault's row spans every VM).
    let faulted = write_scenario(&(text + "\n[[event]]\nkind = \"path_down\"\npath = \"b-near-0\"\nat = \"2s\"\nuntil = \"3s\"\n"));
    assert_eq!(part_count(&faulted, 8), 1);
    assert_eq!(document(&run(&joined, 2)), document(&run(&joined, 1)));
}
