//! Variants on every core: a run's variants are independent simulations, each with its own seed,
//! so several run at once on worker threads and the document lists them in scenario order
//! whatever finishes first; its figures are those of a run one variant after the other.
//!
//! On several threads variants start longest first (by simulated time, scenario order among
//! equals), so that the last one running is not the longest started late; on one, in scenario
//! order. Two things decide when a variant may start, both checked in that order (a variant that
//! may not start yet holds back those after it):
//! - memory: the variants running, and the results of those done, must fit in the memory the
//!   machine had available when the run began; a variant alone runs whatever its size;
//! - vdbench curves: a curve point's rate is a percent of what its max run reached, and a
//!   `stopcurve=` ends the runs after it, so from the first variant that reads an earlier one's
//!   results on, each variant starts once every variant before it is done; in such a run every
//!   variant starts in scenario order.

use crate::pilots::cost::{machine_memory, MemoryBound};
use crate::vdbench_runs::with_curve_max;
use crate::{Overrides, Replications, Scenario, ScenarioError, Variant, VariantResult};
use sanlab_des::RunControl;
use std::any::Any;
use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Where a variant of the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum VariantState {
    Waiting,
    Running,
    /// Finished, or skipped (a vdbench `stopcurve=` ended its series).
    Done,
    /// Cancelled, or stopped by another variant's error.
    Stopped,
}

impl VariantState {
    pub fn name(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Running => "running",
            Self::Done => "done",
            Self::Stopped => "stopped",
        }
    }
}

/// One variant's progress: its name, its engine's position, its state and its wall time.
#[derive(Default)]
pub struct VariantControl {
    pub name: String,
    pub control: RunControl,
    state: AtomicU8,
    /// Since the run's origin: when the variant started, and how long it took once done.
    started_ns: AtomicU64,
    wall_ns: AtomicU64,
}

const STATES: [VariantState; 4] = [VariantState::Waiting, VariantState::Running, VariantState::Done, VariantState::Stopped];

impl VariantControl {
    pub fn state(&self) -> VariantState {
        STATES[usize::from(self.state.load(Ordering::Acquire))]
    }

    fn set_state(&self, state: VariantState) {
        self.state.store(state as u8, Ordering::Release);
    }
}

/// Watches and steers a run from another thread: each selected variant's progress (in scenario
/// order, once the run has checked the scenario), and a cancel that stops every variant.
pub struct VariantRuns {
    origin: Instant,
    cancelled: AtomicBool,
    variants: Mutex<Arc<[VariantControl]>>,
}

impl Default for VariantRuns {
    fn default() -> Self {
        Self { origin: Instant::now(), cancelled: AtomicBool::new(false), variants: Mutex::new(Arc::from(Vec::new())) }
    }
}

impl VariantRuns {
    /// The variants of the run in progress (none before it has checked the scenario).
    pub fn variants(&self) -> Arc<[VariantControl]> {
        Arc::clone(&lock(&self.variants))
    }

    /// A variant's wall time: so far while it runs, in all once done.
    pub fn wall_ns(&self, v: &VariantControl) -> u64 {
        match v.state() {
            VariantState::Waiting => 0,
            VariantState::Running => (self.origin.elapsed().as_nanos() as u64).saturating_sub(v.started_ns.load(Ordering::Acquire)),
            VariantState::Done | VariantState::Stopped => v.wall_ns.load(Ordering::Acquire),
        }
    }

    /// Stops the run: the variants running stop at their next sample, the others do not start.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        lock(&self.variants).iter().for_each(|v| v.control.cancel());
    }

    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Fresh controls for the variants named, cancelled already if the run was.
    fn begin(&self, names: impl Iterator<Item = String>) -> Arc<[VariantControl]> {
        let mut variants = lock(&self.variants);
        *variants = names.map(|name| VariantControl { name, ..VariantControl::default() }).collect();
        if self.cancelled() {
            variants.iter().for_each(|v| v.control.cancel());
        }
        Arc::clone(&variants)
    }

    fn start(&self, v: &VariantControl) {
        v.started_ns.store(self.origin.elapsed().as_nanos() as u64, Ordering::Release);
        v.set_state(VariantState::Running);
    }

    fn end(&self, v: &VariantControl, state: VariantState) {
        v.wall_ns.store(self.wall_ns(v), Ordering::Release);
        v.set_state(state);
    }
}

/// A mutex's data, also after a panic elsewhere (every panic is caught and reported).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The memory the machine has available now (Linux's MemAvailable, see [`machine_memory`]);
/// None elsewhere, and then memory does not limit how many variants run at once.
pub fn available_memory_bytes() -> Option<u64> {
    machine_memory().map(|m| m.available_bytes)
}

/// Whether the next variant fits: the memory committed (variants running, and the results of
/// those done) with the variant's own under the budget, or nothing running.
#[derive(Debug)]
pub struct Admission {
    budget_bytes: Option<u64>,
    committed_bytes: u64,
    running: usize,
}

impl Admission {
    pub fn new(budget_bytes: Option<u64>) -> Self {
        Self { budget_bytes, committed_bytes: 0, running: 0 }
    }

    pub fn admits(&self, m: MemoryBound) -> bool {
        self.running == 0 || self.budget_bytes.is_none_or(|b| self.committed_bytes.saturating_add(m.total()) <= b)
    }

    pub fn start(&mut self, m: MemoryBound) {
        self.running += 1;
        self.committed_bytes = self.committed_bytes.saturating_add(m.total());
    }

    /// A variant ended: its engine's state is freed, its results too unless `kept`.
    pub fn end(&mut self, m: MemoryBound, kept: bool) {
        self.running -= 1;
        let freed = if kept { m.engine_bytes } else { m.total() };
        self.committed_bytes = self.committed_bytes.saturating_sub(freed);
    }
}

enum Outcome {
    Done(Box<VariantResult>),
    /// A vdbench `stopcurve=` ended its series: not run, as vdbench does not run it.
    Skipped,
    Cancelled,
    Failed(ScenarioError),
    Panicked(Box<dyn Any + Send>),
}

/// The run's shared state, under one lock.
struct Shared {
    /// The next variant to start: variants start in scenario order.
    next: usize,
    admission: Admission,
    /// The results of the variants done from the first on, in order, up to the first still
    /// running: what a curve point reads, as a run of one variant after the other has them.
    ordered: Vec<VariantResult>,
    ordered_through: usize,
    /// Outcomes after that first variant still running.
    later: BTreeMap<usize, Outcome>,
    /// The run was cancelled: start no more.
    stop: bool,
    /// The first run in scenario order that failed: only runs before it start from then on, so
    /// that an error of theirs comes first, as in a run of one variant after the other.
    failed_at: Option<usize>,
}

impl Shared {
    fn record(&mut self, k: usize, outcome: Outcome) {
        self.later.insert(k, outcome);
        while let Some(outcome) = self.later.remove(&self.ordered_through) {
            match outcome {
                Outcome::Done(r) => self.ordered.push(*r),
                Outcome::Skipped => {}
                other => {
                    self.later.insert(self.ordered_through, other);
                    return;
                }
            }
            self.ordered_through += 1;
        }
    }
}

/// A variant checked to run: what it may hold in memory, and its simulated time.
#[derive(Clone, Copy)]
pub(crate) struct Checked<'a> {
    pub variant: Option<&'a Variant>,
    pub memory: MemoryBound,
    pub duration_ns: u64,
}

/// The variants of `selected`, each in every replication of `replications` (replication by
/// replication), run on up to `jobs` threads, the longest simulated time first. Returns the results
/// in that order and whether the run was cancelled (then the results are those of the runs that
/// finished); an error is the first run's in that order, as a run of one variant after the other
/// reports it, and a panic is resumed on this thread.
pub(crate) fn run_variants(
    s: &Scenario,
    selected: &[Checked],
    o: &Overrides,
    control: Option<&VariantRuns>,
    jobs: NonZeroUsize,
    replications: Replications,
) -> Result<(Vec<VariantResult>, bool), ScenarioError> {
    // Each run: a variant's index in `selected` and its replication.
    let runs_of: Vec<(usize, u32)> = replications.indices().flat_map(|r| (0..selected.len()).map(move |k| (k, r))).collect();
    let own = VariantRuns::default();
    let runs = control.unwrap_or(&own);
    let names = runs_of.iter().map(|&(k, r)| {
        let name = selected[k].variant.map_or("base", |v| v.name.as_str());
        if replications.several() { format!("{name} #{}", r + 1) } else { name.to_string() }
    });
    let controls = runs.begin(names);
    // The overrides of each variant before the first that reads an earlier one's results: given
    // no results, a curve point's lookup fails (its max run is missing).
    let mut independent: Vec<Overrides> = vec![];
    for c in selected {
        match with_curve_max(s, c.variant, o, &[]) {
            Ok(Some(with)) => independent.push(with),
            _ => break,
        }
    }
    let first_reader = independent.len();
    // On several threads runs start longest first (scenario order among equals), so that the
    // last core is not left alone with the longest; the results stay in scenario order. In
    // scenario order on one thread, and when a curve point reads an earlier run's results.
    let mut start_order: Vec<usize> = (0..runs_of.len()).collect();
    if jobs.get() > 1 && first_reader == selected.len() {
        start_order.sort_by_key(|&t| std::cmp::Reverse(selected[runs_of[t].0].duration_ns));
    }
    // Cores the runs leave idle go to the independent parts of each run's topology.
    let threads_per_run = NonZeroUsize::new(jobs.get() / runs_of.len().max(1)).unwrap_or(NonZeroUsize::MIN);
    let budget = if jobs.get() > 1 { available_memory_bytes() } else { None };
    let shared = Mutex::new(Shared { next: 0, admission: Admission::new(budget), ordered: vec![], ordered_through: 0, later: BTreeMap::new(), stop: false, failed_at: None });
    let turn = Condvar::new();

    let worker = || loop {
        let mut sh = lock(&shared);
        let t = loop {
            if sh.stop || runs.cancelled() {
                return;
            }
            while start_order.get(sh.next).is_some_and(|&t| sh.failed_at.is_some_and(|f| t > f)) {
                sh.next += 1;
            }
            let Some(&t) = start_order.get(sh.next) else { return };
            let in_turn = runs_of[t].0 < first_reader || sh.ordered_through == t;
            if in_turn && sh.admission.admits(selected[runs_of[t].0].memory) {
                break t;
            }
            sh = turn.wait(sh).unwrap_or_else(|e| e.into_inner());
        };
        let (k, r) = runs_of[t];
        let Checked { variant: v, memory, .. } = selected[k];
        sh.next += 1;
        sh.admission.start(memory);
        runs.start(&controls[t]);
        // A reader of earlier results runs alone, after them: they cannot change meanwhile. It
        // reads its own replication's.
        let with = match independent.get(k) {
            Some(with) => Ok(Ok(Some(with.clone()))),
            None => catch_unwind(AssertUnwindSafe(|| {
                let own = sh.ordered.partition_point(|x| x.replication < r);
                with_curve_max(s, v, o, &sh.ordered[own..])
            })),
        };
        drop(sh);
        let outcome = match with {
            Ok(Ok(Some(with))) => match catch_unwind(AssertUnwindSafe(|| s.replicated(v, &with, r).and_then(|with| s.run(v, &with, Some(&controls[t].control), threads_per_run)))) {
                Ok(Ok(Some(mut result))) => {
                    result.replication = r;
                    Outcome::Done(Box::new(result))
                }
                Ok(Ok(None)) => Outcome::Cancelled,
                Ok(Err(e)) => Outcome::Failed(e),
                Err(panic) => Outcome::Panicked(panic),
            },
            Ok(Ok(None)) => Outcome::Skipped,
            Ok(Err(e)) => Outcome::Failed(e),
            Err(panic) => Outcome::Panicked(panic),
        };
        let (kept, state) = match outcome {
            Outcome::Done(_) => (true, VariantState::Done),
            Outcome::Skipped => (false, VariantState::Done),
            _ => (false, VariantState::Stopped),
        };
        let mut sh = lock(&shared);
        if matches!(outcome, Outcome::Failed(_) | Outcome::Panicked(_)) {
            // The run ends with an error: the runs after this one in scenario order stop, those
            // before it run (one of theirs would come first).
            let failed_at = sh.failed_at.map_or(t, |f| f.min(t));
            sh.failed_at = Some(failed_at);
            controls[failed_at + 1..].iter().for_each(|c| c.control.cancel());
        } else if matches!(outcome, Outcome::Cancelled) && sh.failed_at.is_none() {
            sh.stop = true;
        }
        sh.admission.end(memory, kept);
        sh.record(t, outcome);
        runs.end(&controls[t], state);
        drop(sh);
        turn.notify_all();
    };
    let threads = jobs.get().min(runs_of.len()).max(1);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(worker);
        }
    });

    let sh = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    let cancelled = sh.ordered_through < runs_of.len();
    let mut results = sh.ordered;
    for (_, outcome) in sh.later {
        match outcome {
            Outcome::Done(r) => results.push(*r),
            Outcome::Failed(e) => return Err(e),
            Outcome::Panicked(panic) => resume_unwind(panic),
            Outcome::Skipped | Outcome::Cancelled => {}
        }
    }
    Ok((results, cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    fn bound(engine_gb: u64, results_gb: u64) -> MemoryBound {
        MemoryBound { engine_bytes: engine_gb * GB, results_bytes: results_gb * GB }
    }

    #[test]
    fn variants_start_while_their_sum_fits_the_budget() {
        let mut a = Admission::new(Some(10 * GB));
        let (first, second, third) = (bound(3, 1), bound(4, 1), bound(1, 1));
        assert!(a.admits(first));
        a.start(first);
        assert!(a.admits(second), "4 + 5 GB fit in 10 GB");
        a.start(second);
        assert!(!a.admits(third), "9 + 2 GB do not");
        a.end(first, true);
        assert!(a.admits(third), "the first's engine is freed, its results kept: 6 + 2 GB");
        a.start(third);
        assert!(a.admits(bound(0, 2)), "8 + 2 GB fit, to the byte");
        assert!(!a.admits(bound(0, 3)), "8 + 3 GB do not");
    }

    #[test]
    fn a_variant_larger_than_the_budget_runs_alone() {
        let mut a = Admission::new(Some(10 * GB));
        let huge = bound(20, 5);
        assert!(a.admits(huge), "nothing running: it runs alone, as one variant after the other would");
        a.start(huge);
        assert!(!a.admits(bound(0, 0)), "nothing starts beside it");
        a.end(huge, false);
        assert!(a.admits(bound(1, 0)));
    }

    #[test]
    fn without_a_budget_memory_does_not_limit() {
        let mut a = Admission::new(None);
        for _ in 0..100 {
            assert!(a.admits(bound(1_000, 1_000)));
            a.start(bound(1_000, 1_000));
        }
    }

    #[test]
    fn the_longest_variant_starts_first_and_the_document_keeps_scenario_order() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/scenarios/one_vm.toml")).unwrap();
        let variants = [("short", "10ms"), ("longest", "30ms"), ("middle", "20ms"), ("also_short", "10ms")]
            .map(|(name, d)| format!("\n[[variant]]\nname = \"{name}\"\nset = {{ \"run.duration\" = \"{d}\" }}\n"))
            .concat();
        let s = Scenario::from_text("order.toml", &(text + &variants)).unwrap();
        let runs = VariantRuns::default();
        let r = s.run_variants(&[], &Overrides::default(), Some(&runs), NonZeroUsize::new(2).unwrap(), Replications::default()).unwrap();
        let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["short", "longest", "middle", "also_short"]);
        let controls = runs.variants();
        let mut started: Vec<(u64, &str)> = controls.iter().map(|c| (c.started_ns.load(Ordering::Acquire), c.name.as_str())).collect();
        started.sort_unstable();
        let order: Vec<&str> = started.iter().map(|(_, name)| *name).collect();
        // A run starts under the lock, in the order taken, however the threads are timed.
        assert_eq!(order, ["longest", "middle", "short", "also_short"], "longest first, then scenario order");
    }

    #[test]
    fn the_error_reported_is_the_first_in_scenario_order_whatever_starts_first() {
        // Three replications; a seed plus its replication past i64::MAX fails as the run starts:
        // `a` (short) at its second replication, run 2 in scenario order; `b` (long) at its
        // third, run 5, which starts first on two threads.
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/scenarios/one_vm.toml")).unwrap();
        let max = i64::MAX;
        let variants = format!(
            "\n[[variant]]\nname = \"a\"\nset = {{ \"run.duration\" = \"10ms\", \"run.seed\" = {max} }}\n\n[[variant]]\nname = \"b\"\nset = {{ \"run.duration\" = \"30ms\", \"run.seed\" = {} }}\n",
            max - 1
        );
        let s = Scenario::from_text("errors.toml", &(text + &variants)).unwrap();
        let three = Replications { first: 0, count: std::num::NonZeroU32::new(3).unwrap() };
        let error = |jobs: usize| s.run_variants(&[], &Overrides::default(), None, NonZeroUsize::new(jobs).unwrap(), three).err().expect("a replication fails").0;
        let one = error(1);
        assert!(one.contains(&format!("the seed {max} + 1")), "{one}");
        assert_eq!(error(2), one);
    }

    #[test]
    fn meminfo_gives_the_memory_available() {
        // This machine's, when it is Linux; elsewhere none.
        let available = available_memory_bytes();
        assert_eq!(available.is_some(), std::path::Path::new("/proc/meminfo").exists() || std::env::var(crate::pilots::cost::MEMORY_ENV).is_ok());
        assert!(available.is_none_or(|b| b > 0));
    }
}
