//! A variant whose topology falls into independent parts (`sanlab_model::parts`) runs them on
//! threads of their own, and reports them as one run: the same document, bit for bit, as the
//! whole run on one thread. A workload is not shared between threads, so each thread builds the
//! topology itself and keeps its part.

use crate::{ScenarioError, Scenario, Variant};
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

impl Scenario {
    /// Runs `topology` (resolved from `table`) as `parts`, each on a thread; None when `control`
    /// stopped it. The engine's wall time is the longest part's.
    pub(crate) fn run_parts(&self, table: &Table, v: Option<&Variant>, topology: Topology, parts: &[Part], control: Option<&RunControl>) -> PartRun {
        let controls: Vec<RunControl> = parts.iter().map(|_| RunControl::default()).collect();
        let done = AtomicBool::new(false);
        let runs: Vec<PartRun> = std::thread::scope(|scope| {
            let others: Vec<_> = parts[1..]
                .iter()
                .zip(&controls[1..])
                .map(|(p, c)| scope.spawn(move || self.build_topology(table, v, true).and_then(|(whole, _)| self.run_part(whole, p, v, c))))
                .collect();
            if let Some(control) = control {
                let (controls, done) = (&controls, &done);
                scope.spawn(move || watch(control, controls, done));
            }
            let _finally = Finally { done: &done, controls: &controls };
            let first = self.run_part(topology, &parts[0], v, &controls[0]);
            if first.is_err() {
                controls.iter().for_each(RunControl::cancel);
            }
            let mut runs = vec![first];
            runs.extend(others.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
            runs
        });
        let mut reports = vec![];
        let mut wall_s: f64 = 0.0;
        for (run, p) in runs.into_iter().zip(parts) {
            match run {
                Ok(Some((report, part_wall_s))) => {
                    wall_s = wall_s.max(part_wall_s);
                    reports.push((report, p));
                }
                Ok(None) => return Ok(None),
                // A part's error is the whole's first (a device's path selector in device order).
                Err(e) => {
                    let (whole, _) = self.build_topology(table, v, false)?;
                    self.world(whole, v)?;
                    return Err(e);
                }
            }
        }
        Ok(Some((merge(reports), wall_s)))
    }

    fn run_part(&self, whole: Topology, p: &Part, v: Option<&Variant>, control: &RunControl) -> PartRun {
        let mut world = self.world(whole.into_part(p), v)?;
        let start = Instant::now();
        if !world.run(Some(control)) {
            return Ok(None);
        }
        let wall_s = start.elapsed().as_secs_f64();
        Ok(Some((world.report(), wall_s)))
    }
}

/// Ends the watch when the parts are done, and stops them all when one panicked.
struct Finally<'a> {
    done: &'a AtomicBool,
    controls: &'a [RunControl],
}

impl Drop for Finally<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.controls.iter().for_each(RunControl::cancel);
        }
        self.done.store(true, Ordering::Release);
    }
}

/// Until `done`: the variant's progress is its slowest part's, and its cancel stops every part.
fn watch(control: &RunControl, parts: &[RunControl], done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if control.cancelled() {
            parts.iter().for_each(RunControl::cancel);
        }
        if let Some((sim_ns, end_ns)) = parts.iter().map(RunControl::position).min() {
            control.publish(sim_ns, end_ns);
        }
        std::thread::sleep(WATCH_EVERY);
    }
}
