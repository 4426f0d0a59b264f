//! A variant whose topology falls into independent parts (`sanlab_model::parts`) runs them on
//! threads of their own, and reports them as one run: the same document, bit for bit, as the
//! whole run on one thread. A workload is not shared between threads, so each thread builds the
//! topology itself and keeps its part.

use crate::pilots::injector::InjectorReport;
use crate::{Scenario, ScenarioError, Variant};
use sanlab_des::RunControl;
use sanlab_model::parts::{merge, Part};
use sanlab_model::report::RunReport;
use sanlab_model::topology::Topology;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use toml::Table;

/// How often the progress of the parts is gathered into the variant's, and a cancel passed on.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// One part run: its report and the engine's wall time.
type PartRun = Result<Option<(RunReport, f64)>, ScenarioError>;

/// The number of each kind of entity: a rebuild of the same scenario must match it, else the
/// parts' indices name other entities (a file changed meanwhile).
fn shape(t: &Topology) -> [usize; 8] {
    [t.hosts.len(), t.arrays.len(), t.replications.len(), t.volumes.len(), t.links.len(), t.devices.len(), t.vms.len(), t.jobs.len()]
}

impl Scenario {
    /// Runs `topology` (resolved from `table`, with the SIOC thresholds `injector` measured) as
    /// `parts`, each on a thread; None when `control` stopped it. The engine's wall time is the
    /// longest part's. A part that fails or panics stops the others.
    pub(crate) fn run_parts(&self, table: &Table, v: Option<&Variant>, topology: Topology, injector: &[InjectorReport], parts: &[Part], control: Option<&RunControl>) -> PartRun {
        let controls: Vec<RunControl> = parts.iter().map(|_| RunControl::default()).collect();
        let done = AtomicBool::new(false);
        let whole_shape = shape(&topology);
        let runs: Vec<PartRun> = std::thread::scope(|scope| {
            let controls = &controls;
            let others: Vec<_> = parts[1..]
                .iter()
                .zip(&controls[1..])
                .map(|(p, c)| {
                    scope.spawn(move || {
                        let _stop = StopAllOnPanic(controls);
                        let run = self.rebuilt(table, v, injector, whole_shape).and_then(|whole| self.run_topology(whole.into_part(p), v, Some(c)));
                        if run.is_err() {
                            controls.iter().for_each(RunControl::cancel);
                        }
                        run
                    })
                })
                .collect();
            let watcher = control.map(|control| {
                let done = &done;
                scope.spawn(move || watch(control, controls, done))
            });
            let finished = Finished { done: &done, watcher: watcher.as_ref().map(|w| w.thread().clone()) };
            let first = {
                let _stop = StopAllOnPanic(controls);
                self.run_topology(topology.into_part(&parts[0]), v, Some(&controls[0]))
            };
            if first.is_err() {
                controls.iter().for_each(RunControl::cancel);
            }
            let mut runs = vec![first];
            let joined: Vec<_> = others.into_iter().map(|h| h.join()).collect();
            drop(finished);
            runs.extend(joined.into_iter().map(|j| j.unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
            runs
        });
        // An error first (the others were stopped because of it), then a cancel.
        if let Some(e) = runs.iter().find_map(|r| r.as_ref().err()) {
            // A part's error is the whole's first (a device's path selector, in device order).
            let (whole, _) = self.build_topology(table, v, false)?;
            self.world(whole, v)?;
            return Err(e.clone());
        }
        let mut reports = vec![];
        let mut wall_s: f64 = 0.0;
        for (run, p) in runs.into_iter().zip(parts) {
            let Ok(Some((report, part_wall_s))) = run else { return Ok(None) };
            wall_s = wall_s.max(part_wall_s);
            reports.push((report, p));
        }
        Ok(Some((merge(reports), wall_s)))
    }

    /// The whole topology built again on this thread (a workload is not shared between threads),
    /// with the thresholds the first build measured.
    fn rebuilt(&self, table: &Table, v: Option<&Variant>, injector: &[InjectorReport], whole_shape: [usize; 8]) -> Result<Topology, ScenarioError> {
        let (mut whole, _) = self.build_topology(table, v, false)?;
        if shape(&whole) != whole_shape {
            return Err(ScenarioError(format!("{}: the scenario's files changed while it was being built (another build has other entities); run it again", self.file)));
        }
        crate::pilots::injector::apply(injector, &mut whole);
        Ok(whole)
    }

    /// Runs `t` on this thread: its report and the engine's wall time, None when `control`
    /// stopped it.
    pub(crate) fn run_topology(&self, t: Topology, v: Option<&Variant>, control: Option<&RunControl>) -> PartRun {
        let mut world = self.world(t, v)?;
        let start = Instant::now();
        if !world.run(control) {
            return Ok(None);
        }
        let wall_s = start.elapsed().as_secs_f64();
        Ok(Some((world.report(), wall_s)))
    }
}

/// Ends the watch once every part is joined, or when this thread unwinds from a panic.
struct Finished<'a> {
    done: &'a AtomicBool,
    watcher: Option<std::thread::Thread>,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(w) = &self.watcher {
            w.unpark();
        }
    }
}

/// Stops every part when the thread holding it unwinds from a panic.
struct StopAllOnPanic<'a>(&'a [RunControl]);

impl Drop for StopAllOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.iter().for_each(RunControl::cancel);
        }
    }
}

/// Until `done`: the variant's progress is that of its slowest part among those running (a part
/// still being built has published nothing), and its cancel stops every part.
fn watch(control: &RunControl, parts: &[RunControl], done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if control.cancelled() {
            parts.iter().for_each(RunControl::cancel);
        }
        if let Some((sim_ns, end_ns)) = parts.iter().map(RunControl::position).filter(|&(_, end_ns)| end_ns > 0).min() {
            control.publish(sim_ns, end_ns);
        }
        std::thread::park_timeout(WATCH_EVERY);
    }
}
