//! vdbench runs as variants. A parameter file holds a series of runs: its RDs in order, each
//! RD's `for` loops, a curve's points. vdbench runs them one after the other, each measured on
//! its own; sanlab runs each as a variant of the scenario, named as vdbench names the run
//! (`rd1 xfersize=4k threads=8`, `rd1_(50%)`), so the tables, the report and `--json` show them
//! side by side. A variant of the file becomes `variant/run`.
//!
//! A curve point's rate is a percent of what its max run reached: the max run's variant runs
//! first, and its measured IOPS are passed on as the job's `curve_max_iops`.

use crate::variant_limits::{thousands, MAX_VARIANTS};
use crate::{located, overrides, Overrides, Scenario, ScenarioError, Variant, VariantResult};
use sanlab_spec::names::claim_file_name;
use sanlab_spec::Spec;
use sanlab_workload::{vdbench_runs_with_vars, vdbench_vars, VdbenchRun};
use std::path::Path;
use toml::{Table, Value};

/// A vdbench job with a parameter file: where it is, and its runs.
struct VdbenchJob {
    /// `vm[i].job[j]`, for overrides.
    key: String,
    vm: String,
    /// The `rd` the job names, if any.
    rd: Option<String>,
    runs: Vec<VdbenchRun>,
}

/// The vdbench jobs of a resolved scenario table whose file can be read; a file that cannot is
/// left to the build, which reports it in place.
fn vdbench_jobs(file: &str, table: &Table) -> Vec<VdbenchJob> {
    let base_dir = Path::new(file).parent().unwrap_or(Path::new("."));
    let mut out = vec![];
    let vms = table.get("vm").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, vm) in vms.iter().enumerate() {
        let jobs = vm.get("job").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (j, job) in jobs.iter().enumerate() {
            let (Some("vdbench"), Some(path), Some(job_table)) = (job.get("kind").and_then(Value::as_str), job.get("file").and_then(Value::as_str), job.as_table()) else { continue };
            let Ok(vars) = vdbench_vars(&Spec::new(job_table, "")) else { continue };
            let Ok(runs) = vdbench_runs_with_vars(&base_dir.join(path), &vars) else { continue };
            out.push(VdbenchJob {
                key: format!("vm[{i}].job[{j}]"),
                vm: vm.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                rd: job.get("rd").and_then(Value::as_str).map(str::to_string),
                runs,
            });
        }
    }
    out
}

/// The runs a job makes: all of them, or those of the RD it names (none when it names one run).
fn runs_to_expand(job: &VdbenchJob) -> Vec<&VdbenchRun> {
    match &job.rd {
        None => job.runs.iter().collect(),
        Some(rd) if job.runs.iter().any(|r| &r.name == rd) => vec![],
        Some(rd) => job.runs.iter().filter(|r| &r.rd == rd).collect(),
    }
}

/// The scenario's variants with every vdbench job of several runs expanded into one variant
/// per run.
pub(crate) fn expand(file: &str, root: &Table, variants: Vec<Variant>) -> Result<Vec<Variant>, ScenarioError> {
    let bases: Vec<Option<Variant>> = if variants.is_empty() { vec![None] } else { variants.into_iter().map(Some).collect() };
    let written = if bases[0].is_some() { bases.len() } else { 0 };
    let mut out = vec![];
    let mut file_names = std::collections::HashMap::new();
    // Variants made (counted on past the cap, so the message gives the product) and the first
    // job that multiplies them.
    let mut total = 0usize;
    let mut multiplier: Option<(String, usize)> = None;
    for base in bases {
        let mut table = root.clone();
        if let Some(v) = &base {
            for (k, val) in &v.sets {
                overrides::apply(&mut table, k, val.clone(), &format!("variant `{}`", v.name)).map_err(|e| located(file, e))?;
            }
        }
        let jobs = vdbench_jobs(file, &table);
        let mut expanding = jobs.iter().filter(|j| runs_to_expand(j).len() > 1);
        let (Some(job), other) = (expanding.next(), expanding.next()) else {
            total += 1;
            if total > MAX_VARIANTS {
                continue;
            }
            if let Some(v) = base {
                claim_file_name(&v.name, "variants", &mut file_names).map_err(|m| ScenarioError(format!("{file}: {m}")))?;
                out.push(v);
            }
            continue;
        };
        if let Some(other) = other {
            return Err(ScenarioError(format!(
                "{file}: {} and {} are both vdbench jobs of several runs; sanlab runs one series as variants: pick a run of one with rd = \"...\"",
                job.key, other.key
            )));
        }
        let runs = runs_to_expand(job);
        total += runs.len();
        multiplier.get_or_insert((job.key.clone(), runs.len()));
        if total > MAX_VARIANTS {
            continue;
        }
        for run in runs {
            let name = match &base {
                Some(v) => format!("{}/{}", v.name, run.name),
                None => run.name.clone(),
            };
            claim_file_name(&name, "variants", &mut file_names).map_err(|m| ScenarioError(format!("{file}: {m}")))?;
            let mut sets = base.as_ref().map(|v| v.sets.clone()).unwrap_or_default();
            sets.push((format!("{}.rd", job.key), Value::String(run.name.clone())));
            let what = match &run.curve_max_run {
                Some(max) => format!("vdbench run {} (a curve point of {max})", run.name),
                None => format!("vdbench run {}", run.name),
            };
            let description = match &base {
                Some(v) if !v.description.is_empty() => format!("{}; {what}", v.description),
                _ => what,
            };
            out.push(Variant { name, description, sets });
        }
    }
    if total > MAX_VARIANTS {
        let (key, runs) = multiplier.unwrap_or_default();
        let fewer = match written {
            0 => "loop over fewer values".to_string(),
            _ => format!("at most {} [[variant]] of this file's, or pick one RD of the file with rd = \"...\"", (MAX_VARIANTS / runs.max(1)).max(1)),
        };
        return Err(ScenarioError(format!(
            "{file}: variant: {written} [[variant]] times the runs of {key}'s vdbench file ({runs} runs) make {} variants, each simulated on its own: expected at most {MAX_VARIANTS}; {fewer}",
            thousands(total)
        )));
    }
    Ok(out)
}

/// The I/Os and mean response time (ms) of a run's jobs on `vm` in a result.
fn run_figures(result: &VariantResult, vm: &str, run: &str) -> (f64, f64) {
    let jobs = result.report.jobs.iter().filter(|j| j.vm == vm && j.options.get("run").or(j.options.get("rd")).map(String::as_str) == Some(run));
    let (mut iops, mut ios, mut lat_ns) = (0.0, 0.0, 0.0);
    for d in jobs.flat_map(|j| [&j.read, &j.write]) {
        iops += d.iops;
        ios += d.total_ios as f64;
        lat_ns += d.lat_ns.mean * d.total_ios as f64;
    }
    (iops, if ios > 0.0 { lat_ns / ios / 1e6 } else { 0.0 })
}

/// The overrides to run variant `v` with: `o`, and for a curve point the IOPS its max run
/// reached, taken from that run's result (run before it). None when an earlier curve point of
/// the same series went above its `stopcurve=`, which ends vdbench: the variant is not run.
pub(crate) fn with_curve_max(s: &Scenario, v: Option<&Variant>, o: &Overrides, results: &[VariantResult]) -> Result<Option<Overrides>, ScenarioError> {
    let Some(v) = v else { return Ok(Some(o.clone())) };
    let table = s.resolve(Some(v), o)?;
    let mut out = o.clone();
    for job in vdbench_jobs(&s.file, &table) {
        let Some(rd) = &job.rd else { continue };
        let prefix = v.name.strip_suffix(rd.as_str()).unwrap_or_default();
        let stopped = job.runs.iter().take_while(|r| &r.name != rd).any(|r| {
            let Some(stop) = r.stopcurve_ms else { return false };
            results.iter().find(|x| x.name == format!("{prefix}{}", r.name)).is_some_and(|x| run_figures(x, &job.vm, &r.name).1 > stop)
        });
        if stopped {
            return Ok(None);
        }
        let Some(max_run) = job.runs.iter().find(|r| &r.name == rd).and_then(|r| r.curve_max_run.clone()) else { continue };
        let max_variant = format!("{prefix}{max_run}");
        let Some(max) = results.iter().find(|r| r.name == max_variant) else {
            return Err(ScenarioError(format!(
                "{}: variant `{}` is a point of a vdbench curve: its rate is a percent of what `{max_variant}` reaches, so run that variant too, before it",
                s.file, v.name
            )));
        };
        let (iops, _) = run_figures(max, &job.vm, &max_run);
        if iops < 1.0 {
            return Err(ScenarioError(format!("{}: variant `{}`: its curve's max run `{max_variant}` reached {iops:.3} IOPS, too few for a curve (vdbench: was the run too short to establish a rate?)", s.file, v.name)));
        }
        out.sets.push(format!("{}.curve_max_iops={iops:?}", job.key));
    }
    Ok(Some(out))
}
