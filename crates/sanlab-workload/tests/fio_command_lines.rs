//! fio command lines as published (tests/data/fio/cmdlines, sources in its SOURCES.md), read by
//! the `fio` kind's `cmdline` as a user pastes them: each gives the jobs fio would run.

use sanlab_des::RngStream;
use sanlab_spec::{build_kind, Spec};
use sanlab_workload::{Instance, Op, Pacing, REGISTRY};
use std::path::PathBuf;

fn cmdline_jobs(file: &str) -> Vec<Instance> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fio/cmdlines").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut t = toml::Table::new();
    t.insert("kind".into(), toml::Value::String("fio".into()));
    t.insert("cmdline".into(), toml::Value::String(text));
    let source = build_kind(&Spec::new(&t, "vm[0].job[0]"), REGISTRY, None).unwrap_or_else(|e| panic!("{file}: {}", e.message));
    source.instances()
}

/// (jobs, pacing, block size, share of writes over 200 requests of the first job)
fn shape(file: &str) -> (usize, Pacing, u32, f64) {
    let mut jobs = cmdline_jobs(file);
    let n = jobs.len();
    let pacing = jobs[0].plan.pacing;
    let mut rng = RngStream::new(1, "cmdline");
    let requests: Vec<_> = (0..200).map_while(|_| jobs[0].workload.next(&mut rng)).collect();
    let writes = requests.iter().filter(|r| r.op == Op::Write).count() as f64 / requests.len() as f64;
    (n, pacing, requests[0].size_bytes, writes)
}

#[test]
fn published_command_lines_run_the_jobs_fio_would() {
    // One dash per option (getopt_long_only), psync: one request at a time per job.
    assert_eq!(shape("rcmp_rchfs.sh"), (10, Pacing::Closed { depth: 1 }, 16 << 10, 1.0));
    // Windows: windowsaio keeps iodepth outstanding; output options change nothing simulated.
    assert_eq!(shape("windows_osv_random_write.bat"), (2, Pacing::Closed { depth: 16 }, 1 << 20, 1.0));
    assert_eq!(shape("gists_busy.sh"), (16, Pacing::Closed { depth: 16 }, 64 << 10, 1.0));
    // `sudo fio` and one option per continued line.
    assert_eq!(shape("bdbm_seqw.sh"), (1, Pacing::Closed { depth: 128 }, 4 << 10, 1.0));
}

#[test]
fn what_a_published_command_line_sets_without_effect_is_listed() {
    let jobs = cmdline_jobs("windows_osv_random_write.bat");
    for ignored in ["filename", "directory"] {
        assert!(jobs[0].plan.ignored.contains(&ignored), "{ignored} not in {:?}", jobs[0].plan.ignored);
    }
}
