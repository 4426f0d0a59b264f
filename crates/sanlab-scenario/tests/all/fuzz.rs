//! Fuzzing the parsers: the scenarios under scenarios/examples and tests/data/fuzz_seeds and the
//! job files, parameter files and traces under tests/data, mutated (bytes cut, repeated or
//! replaced by tokens that broke parsers before: NaN, huge numbers, non-ASCII, separators; whole
//! values replaced by values that were once believed, hung or aborted: zero and tiny periods,
//! booleans for numbers, rates near zero), must each give Ok or one error line, never a panic,
//! within a bounded time (a watchdog thread catches hangs).
//!
//! `cargo test` runs a fixed budget (`FUZZ_CASES` inputs per corpus, 150 by default); `make fuzz`
//! runs for `FUZZ_SECONDS` (from round `FUZZ_FIRST_ROUND`, 0 by default). A failing input is saved under tests/data/fuzz/ (`<corpus>-<hash>`),
//! and `fuzz_regressions_stay_fixed` replays every saved input.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use sanlab_des::RngStream;
use sanlab_spec::{build_kind, Spec};
use sanlab_workload::REGISTRY;
use sanlab_scenario::{Overrides, Scenario};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Tokens spliced into inputs: each broke a parser once, or sits at a boundary.
const TOKENS: &[&str] = &[
    "nan", "inf", "-1", "0", "0.5", "1e400", "1e-300", "18446744073709551616", "4294967296", "99999999999999999999999h", "1ns", "65536",
    "é", "*", "\n", "[", "]", "=", ",", ":", "/", "%", "(", ")", "\"", "", "global", "include ", "${X}", "0x", "zipf:", "zoned:",
];
/// Values put in place of a whole value (after a `=`): each is a class of input that was once
/// silently believed, hung or aborted (docs/robustness.md, round 3): a zero or tiny period, a
/// boolean or a schema version where a number belongs, rates near zero, times past the run,
/// control characters in a name, a path out of the folder.
const VALUES: &[&str] = &[
    "\"0s\"", "\"1ns\"", "\"2us\"", "\"1000s\"", "0", "1", "2", "-1", "true", "false", "1e-300", "1e300", "18446744073709551615",
    "\"\\u001b]0;title\\u0007\"", "\"../../../../etc/passwd\"", "[]", "{}", "\"\"",
];
/// Longest time one input may take (parse, validate and a short run); the watchdog saves a
/// slower one and ends the process.
const MAX_INPUT_TIME: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One corpus: its seed files and how an input is checked.
struct Corpus {
    name: &'static str,
    files: Vec<PathBuf>,
    check: fn(&Path, &[u8]) -> Checked,
}

/// What a checked input gave: `Ok` with what happened to it (`accepted`, or `rejected: ` and its
/// one-line error), or `Err` with the failure.
type Checked = Result<String, String>;

fn files(dir: &str, ext: &[&str]) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![repo().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if ext.iter().any(|x| p.to_string_lossy().ends_with(x)) && !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn corpora() -> Vec<Corpus> {
    vec![
        Corpus { name: "scenario", files: files("scenarios/examples", &[".toml"]), check: check_scenario },
        // Faults, failover timers, PARDA, mClock: the surfaces robustness round 3 attacked.
        Corpus { name: "semantic", files: files("tests/data/fuzz_seeds", &[".toml"]), check: check_scenario },
        Corpus { name: "fio", files: files("tests/data/fio", &[".fio"]), check: |p, b| check_workload(p, b, "kind = \"fio_file\"") },
        Corpus { name: "vdbench", files: files("tests/data/vdbench", &[".vdb"]), check: |p, b| check_workload(p, b, "kind = \"vdbench\"") },
        Corpus { name: "trace", files: files("tests/data/traces", &[".iolog", ".csv", ".txt"]), check: check_trace },
    ]
}

/// An error must be one line.
fn one_line(e: &str) -> Checked {
    if e.contains('\n') || e.is_empty() { Err(format!("error message not one line: {e:?}")) } else { Ok(format!("rejected: {e}")) }
}

/// A mutated scenario, read as if at its original's path (job files and traces are relative to
/// it): validated as written, as `sanlab validate` does, and when valid each variant run for 5 ms
/// of simulated time without a warm-up. (Validated with the short run instead, an example whose
/// warm-up, 1 s, is longer than the run would stop there, before its arrays and jobs are read.)
fn check_scenario(original: &Path, bytes: &[u8]) -> Checked {
    let text = String::from_utf8_lossy(bytes);
    let file = original.display().to_string();
    let s = match Scenario::from_text(&file, &text) {
        Ok(s) => s,
        Err(e) => return one_line(&e.0),
    };
    if let Err(e) = s.validate(&[], &Overrides::default()) {
        return one_line(&e.0);
    }
    let short = Overrides { duration: Some("5ms".into()), sets: vec!["run.warmup=0s".into()], ..Overrides::default() };
    let mut outcome = "accepted".to_string();
    for v in s.select(&[]).map_err(|e| e.0)? {
        if let Err(e) = s.run(v, &short, None, std::num::NonZeroUsize::MIN) {
            outcome = one_line(&e.0)?;
        }
    }
    Ok(outcome)
}

/// A mutated job or parameter file, written to a temporary file: built, and a few requests
/// drawn from each job.
fn check_workload(original: &Path, bytes: &[u8], kind: &str) -> Checked {
    let path = temp_copy(original, bytes);
    let t: toml::Table = format!("{kind}\nfile = \"{}\"", path.display()).parse().unwrap();
    let built = build_kind(&Spec::new(&t, "job"), REGISTRY, None);
    let result = match built {
        Err(e) => one_line(&e.message),
        Ok(w) => {
            for mut i in w.instances() {
                let mut rng = RngStream::new(1, "fuzz");
                for _ in 0..200 {
                    // Timed workloads queue a request with each arrival; the others ignore it.
                    let _ = i.workload.next_arrival_ns(0, &mut rng);
                    if i.workload.next(&mut rng).is_none() {
                        break;
                    }
                }
            }
            Ok("accepted".to_string())
        }
    };
    let _ = std::fs::remove_file(&path);
    result
}

fn check_trace(original: &Path, bytes: &[u8]) -> Checked {
    let format = match original.extension().and_then(|e| e.to_str()) {
        Some("csv") => "msr_csv",
        Some("txt") => "blkparse",
        _ => "fio_iolog",
    };
    check_workload(original, bytes, &format!("kind = \"trace\"\nformat = \"{format}\""))
}

fn temp_copy(original: &Path, bytes: &[u8]) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = original.file_name().unwrap().to_string_lossy();
    let p = std::env::temp_dir().join(format!("sanlab-fuzz-{}-{}-{name}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// One edit of an input: at a position (a fraction of its length), cut a span, repeat it, or
/// replace it with a token.
#[derive(Clone, Debug)]
enum Edit {
    Cut { at: f64, len: usize },
    Repeat { at: f64, len: usize },
    Token { at: f64, len: usize, token: usize },
    Byte { at: f64, byte: u8 },
    /// Replace the value after the `=` nearest `at` (up to the line's end, a `,` or a `}`) with
    /// one of [`VALUES`].
    Value { at: f64, value: usize },
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0f64, 0..16usize).prop_map(|(at, len)| Edit::Cut { at, len }),
        (0.0..1.0f64, 1..64usize).prop_map(|(at, len)| Edit::Repeat { at, len }),
        (0.0..1.0f64, 0..6usize, 0..TOKENS.len()).prop_map(|(at, len, token)| Edit::Token { at, len, token }),
        (0.0..1.0f64, any::<u8>()).prop_map(|(at, byte)| Edit::Byte { at, byte }),
        (0.0..1.0f64, 0..VALUES.len()).prop_map(|(at, value)| Edit::Value { at, value }),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let pos = |at: f64, len: usize| ((at * len as f64) as usize).min(len);
        match *e {
            Edit::Cut { at, len } => {
                let p = pos(at, bytes.len());
                bytes.drain(p..(p + len).min(bytes.len()));
            }
            Edit::Repeat { at, len } => {
                let p = pos(at, bytes.len());
                let span = bytes[p..(p + len).min(bytes.len())].to_vec();
                bytes.splice(p..p, span);
            }
            Edit::Token { at, len, token } => {
                let p = pos(at, bytes.len());
                bytes.splice(p..(p + len).min(bytes.len()), TOKENS[token].bytes());
            }
            Edit::Byte { at, byte } => {
                let p = pos(at, bytes.len());
                bytes.insert(p, byte);
            }
            Edit::Value { at, value } => {
                let equals: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| **b == b'=').map(|(i, _)| i + 1).collect();
                if let Some(&start) = equals.get(pos(at, equals.len()).min(equals.len().saturating_sub(1))) {
                    let end = bytes[start..].iter().position(|b| matches!(b, b'\n' | b',' | b'}')).map_or(bytes.len(), |n| start + n);
                    bytes.splice(start..end, format!(" {}", VALUES[value]).into_bytes());
                }
            }
        }
    }
    bytes
}

/// Saves a failing input as tests/data/fuzz/<corpus>-<original's stem>-<hash>.<original's extension>.
fn save(corpus: &str, original: &Path, bytes: &[u8]) -> PathBuf {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    let ext = original.extension().map_or(String::new(), |x| format!(".{}", x.to_string_lossy()));
    let stem = original.file_stem().unwrap().to_string_lossy();
    let saved = repo().join(format!("tests/data/fuzz/{corpus}-{stem}-{hash:016x}{ext}"));
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    std::fs::write(&saved, bytes).unwrap();
    saved
}

/// The input being checked (corpus, original, bytes, start), watched for hangs.
type Current = Option<(&'static str, PathBuf, Vec<u8>, Instant)>;
static CURRENT: Mutex<Current> = Mutex::new(None);

/// Starts, once, a thread that saves the input being checked and ends the process when that
/// input takes longer than [`MAX_INPUT_TIME`]: a hang is a failure too.
fn watch_for_hangs() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_secs(1));
            if let Some((corpus, original, bytes, start)) = &*CURRENT.lock().unwrap_or_else(|e| e.into_inner()) {
                if start.elapsed() > MAX_INPUT_TIME {
                    eprintln!("{corpus} corpus: an input took longer than {MAX_INPUT_TIME:?}; saved as {}", save(corpus, original, bytes).display());
                    std::process::exit(1);
                }
            }
        });
    });
}

/// Checks one input; a panic, a message of several lines or a hang is a failure, and the input
/// is saved under tests/data/fuzz/.
fn run_one(corpus: &Corpus, original: &Path, bytes: &[u8]) -> Checked {
    watch_for_hangs();
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some((corpus.name, original.to_path_buf(), bytes.to_vec(), Instant::now()));
    let outcome = catch_unwind(AssertUnwindSafe(|| (corpus.check)(original, bytes))).unwrap_or_else(|p| {
        let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        Err(format!("panic: {what}"))
    });
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
    outcome.map_err(|e| format!("{e} (input saved as {})", save(corpus.name, original, bytes).display()))
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn fuzz_corpora() {
    let budget = env_u64("FUZZ_SECONDS").map(Duration::from_secs);
    let cases = env_u64("FUZZ_CASES").unwrap_or(150) as u32;
    let start = Instant::now();
    let mut total = 0u64;
    // `FUZZ_FIRST_ROUND` lets several processes fuzz different inputs side by side.
    let mut round = env_u64("FUZZ_FIRST_ROUND").unwrap_or(0);
    // Inputs accepted (parsed, and for scenarios run) per corpus: the rest were rejected.
    let accepted: Vec<std::sync::atomic::AtomicU64> = corpora().iter().map(|_| 0.into()).collect();
    loop {
        for (c, corpus) in corpora().into_iter().enumerate() {
            // Every round and corpus its own inputs (a round's number in full: inputs never recur).
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&round.to_le_bytes());
            seed[8] = c as u8;
            let config = Config { cases, failure_persistence: None, max_shrink_iters: 0, ..Config::default() };
            let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
            let inputs = (0..corpus.files.len(), proptest::collection::vec(edit_strategy(), 1..6));
            let result = runner.run(&inputs, |(f, edits)| {
                let original = &corpus.files[f];
                let bytes = apply(std::fs::read(original).unwrap(), &edits);
                let outcome = run_one(&corpus, original, &bytes).map_err(TestCaseError::fail)?;
                if outcome == "accepted" {
                    accepted[c].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            });
            total += u64::from(cases);
            if let Err(e) = result {
                panic!("{} corpus: {e}", corpus.name);
            }
        }
        round += 1;
        if budget.is_none_or(|b| start.elapsed() >= b) {
            break;
        }
    }
    let accepted: Vec<String> = corpora().iter().zip(&accepted).map(|(c, n)| format!("{} {}", c.name, n.load(std::sync::atomic::Ordering::Relaxed))).collect();
    eprintln!("fuzzed {total} inputs in {:.0?}; accepted, per corpus of {}: {}", start.elapsed(), total / accepted.len() as u64, accepted.join(", "));
}

/// Replays every input saved under tests/data/fuzz/ (regressions of bugs fixed before; its
/// README.md says where each came from). Every other file there must be an input this test
/// replays: named `<corpus>-<original's stem>-<hash>.<original's extension>` after a file of that
/// corpus. An input that names no corpus or no existing original fails rather than being skipped,
/// so the count replayed is the count saved.
#[test]
fn fuzz_regressions_stay_fixed() {
    let dir = repo().join("tests/data/fuzz");
    let mut saved: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the saved regression inputs are part of the repository)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    saved.sort();
    let corpora = corpora();
    let mut replayed = 0;
    for saved in &saved {
        let name = saved.file_name().unwrap().to_string_lossy().to_string();
        let corpus = corpora
            .iter()
            .find(|c| name.starts_with(&format!("{}-", c.name)))
            .unwrap_or_else(|| panic!("{name}: names no corpus (expected one of {:?} then `-`)", corpora.iter().map(|c| c.name).collect::<Vec<_>>()));
        // The original (for its extension and folder) is named between the corpus and the hash,
        // and has the saved input's extension.
        let (stem, rest) = name[corpus.name.len() + 1..].rsplit_once('-').unwrap_or_else(|| panic!("{name}: no `-<hash>` after the original's name"));
        let ext = rest.split_once('.').map(|(_, x)| x);
        let original = corpus
            .files
            .iter()
            .find(|f| f.file_stem().is_some_and(|s| s == stem) && f.extension().and_then(|x| x.to_str()) == ext)
            .unwrap_or_else(|| panic!("{name}: the {} corpus has no file `{stem}` with extension {ext:?} (renamed? rename the input after its original)", corpus.name));
        let outcome = run_one(corpus, original, &std::fs::read(saved).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {outcome}");
        replayed += 1;
    }
    assert!(replayed > 0, "no input replayed from {}", dir.display());
    assert_eq!(replayed, saved.len(), "inputs replayed, of the files in {}", dir.display());
}
