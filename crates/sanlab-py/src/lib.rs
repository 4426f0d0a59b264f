//! `sanlab._core`: the engine as three functions returning JSON text. The GIL is released while
//! the engine runs; no Python runs inside the event loop.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use sanlab_spec::names;
use sanlab_scenario::{Overrides, Replications, Scenario, ScenarioError, VariantRuns};
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

create_exception!(_core, ScenarioError_, PyException, "A scenario or its overrides are invalid; the message says where and why.");

create_exception!(_core, InternalError, PyException, "A bug in sanlab (a Rust panic): the message says where; please report it with the input.");

fn to_py(e: ScenarioError) -> PyErr {
    ScenarioError_::new_err(e.0)
}

/// Where and why the last panic happened, recorded by the panic hook: on any thread, as a run's
/// variants run on worker threads (a panic there is resumed on the caller's).
static PANIC: Mutex<Option<String>> = Mutex::new(None);

fn last_panic() -> std::sync::MutexGuard<'static, Option<String>> {
    PANIC.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f`; a panic becomes InternalError with the panic's place and message on one line (the
/// last line of defence: panics on user input are bugs to fix, and the fuzz tests fail on them).
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        let what = last_panic().take().unwrap_or_else(|| "a panic".to_string());
        Err(InternalError::new_err(what.replace('\n', " ")))
    })
}

/// Watches a run from another thread: each variant's state, simulated time and wall time, and
/// a way to stop the run.
#[pyclass(frozen)]
struct Progress(Arc<VariantRuns>);

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Self(Arc::new(VariantRuns::default()))
    }

    /// Each selected variant in scenario order, once the run has checked the scenario: its name,
    /// its state (`waiting`, `running`, `done` or `stopped`), simulated seconds reached and to run
    /// (0 until its engine starts), and wall seconds (so far while it runs).
    fn variants(&self) -> Vec<(String, &'static str, f64, f64, f64)> {
        let runs = &self.0;
        runs.variants()
            .iter()
            .map(|v| {
                let (sim_ns, end_ns) = v.control.position();
                (v.name.clone(), v.state().name(), sim_ns as f64 / 1e9, end_ns as f64 / 1e9, runs.wall_ns(v) as f64 / 1e9)
            })
            .collect()
    }

    /// Asks the run to stop: the variants running stop at their next sample, no other starts;
    /// those already finished are returned.
    fn cancel(&self) {
        self.0.cancel();
    }
}

/// Threads a run may use by default: the cores this process may run on.
#[pyfunction]
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Runs the scenario's selected variants (all when `variants` is None or empty), up to `jobs` at
/// once; returns JSON, the same for any `jobs`. With `progress`, the run publishes each
/// variant's progress there and can be cancelled through it. With `replications`, each variant
/// runs that many times from replication `first_replication` on (replication r with its seed + r).
#[pyfunction]
#[pyo3(signature = (path, variants=None, sets=vec![], seed=None, duration=None, progress=None, jobs=1, replications=1, first_replication=0))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    path: PathBuf,
    variants: Option<Vec<String>>,
    sets: Vec<String>,
    seed: Option<u64>,
    duration: Option<String>,
    progress: Option<Py<Progress>>,
    jobs: usize,
    replications: u32,
    first_replication: u32,
) -> PyResult<String> {
    let jobs = NonZeroUsize::new(jobs).ok_or_else(|| ScenarioError_::new_err("jobs: expected at least 1 variant at once, got 0; the nearest is 1"))?;
    let count = NonZeroU32::new(replications).ok_or_else(|| ScenarioError_::new_err("replications: expected at least 1, got 0; the nearest is 1"))?;
    let replications = Replications { first: first_replication, count };
    let o = Overrides { sets, seed, duration };
    let variants = variants.unwrap_or_default();
    let control = progress.map(|p| Arc::clone(&p.get().0));
    // Read once: a scenario error is raised here, before the GIL is released; the scenario
    // loaded is the one that runs.
    let s = Scenario::load(&path).map_err(to_py)?;
    let result = py.detach(|| guarded(|| s.run_variants(&variants, &o, control.as_deref(), jobs, replications).map_err(to_py)))?;
    serde_json::to_string(&result).map_err(|e| PyException::new_err(format!("serialising results: {e}")))
}

/// Checks the scenario (every variant, with the overrides) without running; returns JSON. With
/// `cost`, also what running it costs (`"cost"`: I/Os, events, engine time, peak memory and the
/// machine's memory), measured by a short pilot of each variant.
#[pyfunction]
#[pyo3(signature = (path, sets=vec![], variants=None, cost=false))]
fn validate(py: Python<'_>, path: PathBuf, sets: Vec<String>, variants: Option<Vec<String>>, cost: bool) -> PyResult<String> {
    let s = guarded(|| Scenario::load(&path).map_err(to_py))?;
    let o = Overrides { sets, ..Overrides::default() };
    let requested = variants.unwrap_or_default();
    // What `run` would run: a file without [[variant]] runs one variant, `base`.
    let names: Vec<&str> = if s.variants.is_empty() { vec!["base"] } else { s.variants.iter().map(|v| v.name.as_str()).collect() };
    let mut checked = serde_json::json!({"scenario": s.name, "variants": names});
    if cost {
        // The pilots run the engine: without the GIL, as `run` does.
        let estimate = py.detach(|| guarded(|| s.cost(&requested, &o).map_err(to_py)))?;
        checked["cost"] = serde_json::to_value(&estimate).map_err(|e| PyException::new_err(format!("serialising the estimate: {e}")))?;
    } else {
        guarded(|| s.validate(&requested, &o).map_err(to_py))?;
    }
    Ok(checked.to_string())
}

/// Each selected variant's simulated times (duration, warm-up, sample interval, in seconds) with
/// the overrides, as JSON; raises ScenarioError as `validate` does.
#[pyfunction]
#[pyo3(signature = (path, sets=vec![], variants=None))]
fn run_times(path: PathBuf, sets: Vec<String>, variants: Option<Vec<String>>) -> PyResult<String> {
    let s = guarded(|| Scenario::load(&path).map_err(to_py))?;
    let o = Overrides { sets, ..Overrides::default() };
    let times = guarded(|| s.run_times(&variants.unwrap_or_default(), &o).map_err(to_py))?;
    serde_json::to_string(&times).map_err(|e| PyException::new_err(format!("serialising the times: {e}")))
}

/// The file name a variant, job or scenario name becomes in a run folder (one rule for Rust and
/// Python); a name that gives none, or a too long one, raises ScenarioError.
#[pyfunction]
fn file_name(name: &str) -> PyResult<String> {
    names::file_name(name).map_err(ScenarioError_::new_err)
}

/// Every model kind with its parameters, as JSON.
#[pyfunction]
fn kinds() -> String {
    serde_json::to_string(&sanlab_model::all_kinds()).expect("kind docs serialise")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run_times, m)?)?;
    m.add_function(wrap_pyfunction!(kinds, m)?)?;
    m.add_function(wrap_pyfunction!(file_name, m)?)?;
    m.add_function(wrap_pyfunction!(cores, m)?)?;
    m.add_class::<Progress>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError_>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    // A panic is reported once, by `guarded`, as InternalError (PyO3 reports the others).
    std::panic::set_hook(Box::new(|info| {
        *last_panic() = Some(info.to_string());
    }));
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
