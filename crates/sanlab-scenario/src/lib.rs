//! Scenario files: load a TOML file, pick a variant, apply `--set` overrides, build the topology
//! strictly, and run it. Every user-input error is a [`ScenarioError`] naming the file, the
//! location inside it and what was expected.

mod topology;
pub mod overrides;
mod parallel;
mod run_parts;
mod pilots;
mod vdbench_runs;
mod variant_limits;

use sanlab_model::report::RunReport;
use sanlab_spec::names::{claim_file_name, escaped};
use sanlab_spec::{did_you_mean, SpecError};
use sanlab_workload::read_text;
use sanlab_des::RunControl;
use sanlab_model::topology::Topology;
use std::num::{NonZeroU32, NonZeroUsize};
use sanlab_model::World;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::Path;
use toml::{Table, Value};

pub use topology::SCHEMA_VERSION;
pub use parallel::{VariantControl, VariantRuns, VariantState};
use pilots::cost::MemoryBound;
pub use pilots::cost::{MachineMemory, RunCost, VariantCost};
pub use pilots::injector::{InjectorPoint, InjectorReport};

/// One clear message for the user: file, location, problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

pub struct Variant {
    pub name: String,
    pub description: String,
    sets: Vec<(String, Value)>,
}

/// A loaded scenario file.
pub struct Scenario {
    pub file: String,
    pub name: String,
    pub description: String,
    pub sha256: String,
    pub variants: Vec<Variant>,
    root: Table,
    replaced: Vec<ReplacedList>,
    /// Whether the scenario without its variants' overrides is a run of its own to check.
    runs_as_written: bool,
}

/// Overrides given on the command line.
#[derive(Default, Clone)]
pub struct Overrides {
    pub sets: Vec<String>,
    pub seed: Option<u64>,
    pub duration: Option<String>,
}

/// Which independent replications of each variant a run makes: `count` of them from `first` on
/// (0-based). Replication r runs with the variant's seed + r, so replication 0 is the run as
/// written and every variant of a replication shares its seed offset (common random numbers).
#[derive(Clone, Copy, Debug)]
pub struct Replications {
    pub first: u32,
    pub count: NonZeroU32,
}

impl Default for Replications {
    fn default() -> Self {
        Self { first: 0, count: NonZeroU32::MIN }
    }
}

impl Replications {
    /// The replication indices, in the order they run.
    pub fn indices(self) -> std::ops::Range<u32> {
        self.first..self.first.saturating_add(self.count.get())
    }

    /// Whether this is more than the one run as written (then progress names each replication).
    pub fn several(self) -> bool {
        self.first > 0 || self.count.get() > 1
    }
}

fn in_variant(v: Option<&Variant>, e: ScenarioError) -> ScenarioError {
    match v {
        Some(v) => ScenarioError(format!("{} (in variant `{}`)", e.0, v.name)),
        None => e,
    }
}

fn located(file: &str, e: SpecError) -> ScenarioError {
    if e.location.is_empty() {
        ScenarioError(format!("{file}: {}", e.message))
    } else {
        ScenarioError(format!("{file}: {}: {}", e.location, e.message))
    }
}

/// Line and column of a byte offset, for TOML syntax errors.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

fn parse_toml(file: &str, text: &str) -> Result<Table, ScenarioError> {
    text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|s| line_col(text, s.start)).map(|(l, c)| format!("line {l}, column {c}: ")).unwrap_or_default();
        ScenarioError(format!("{file}: {at}invalid TOML: {}", e.message()))
    })
}

/// A list of this file's that replaced its base's: lists are not merged, so an error in one
/// names the base whose entries were dropped.
struct ReplacedList {
    key: String,
    base_file: String,
    base_len: usize,
}

impl ReplacedList {
    fn note(&self, location: &str) -> Option<String> {
        let within = location.strip_prefix(&self.key).is_some_and(|rest| rest.is_empty() || rest.starts_with(['[', '.']));
        within.then(|| {
            let entries = if self.base_len == 1 { "its 1 entry".to_string() } else { format!("its {} entries", self.base_len) };
            format!(" (this file's `{}` replaces the list of base `{}` and {entries}: lists are not merged with a base's; repeat the entries you need)", self.key, self.base_file)
        })
    }
}

/// `base = "other.toml"`: this file builds on another one. Every key of this file is laid over
/// the other's: tables present in both are merged key by key; anything else (a value, a list,
/// a list of tables such as `[[path]]`) replaces the other's. Its variants are not inherited.
/// The path is relative to this file.
fn with_base(file: &str, mut root: Table, depth: usize, replaced: &mut Vec<ReplacedList>) -> Result<Table, ScenarioError> {
    let Some(base) = root.remove("base") else { return Ok(root) };
    let Value::String(base) = base else { return Err(ScenarioError(format!("{file}: base: expected a file name as a string"))) };
    if depth >= 8 {
        return Err(ScenarioError(format!("{file}: base: more than 8 files deep; is there a cycle?")));
    }
    let path = Path::new(file).parent().unwrap_or(Path::new(".")).join(&base);
    let base_file = path.display().to_string();
    let text = read_text(&path).map_err(|e| ScenarioError(format!("{file}: base: cannot read `{base_file}`: {e}")))?;
    let base_root = parse_toml(&base_file, &text)?;
    check_base_version(&base_file, &base_root)?;
    let mut merged = with_base(&base_file, base_root, depth + 1, replaced)?;
    merged.remove("variant");
    merge_into(&mut merged, root, "", &base_file, replaced);
    Ok(merged)
}

/// A base's own `schema_version`, when it declares one, is checked as the top file's is: the
/// top file's would otherwise replace it, and a base of another version be read as this one.
fn check_base_version(base_file: &str, base: &Table) -> Result<(), ScenarioError> {
    let Some(v) = base.get("schema_version") else { return Ok(()) };
    match v.as_integer() {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(version) => Err(ScenarioError(format!("{base_file}: schema_version: version {version} is not supported: this sanlab reads schema_version = {SCHEMA_VERSION} (in a base file)"))),
        None => Err(ScenarioError(format!("{base_file}: schema_version: expected an integer, found `{v}` (in a base file)"))),
    }
}

fn merge_into(under: &mut Table, over: Table, at: &str, base_file: &str, replaced: &mut Vec<ReplacedList>) {
    for (k, v) in over {
        let key = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
        match (under.get_mut(&k), v) {
            (Some(Value::Table(a)), Value::Table(b)) => merge_into(a, b, &key, base_file, replaced),
            (old, v) => {
                if let Some(Value::Array(list)) = old.filter(|_| v.is_array()) {
                    replaced.push(ReplacedList { key, base_file: base_file.to_string(), base_len: list.len() });
                }
                under.insert(k, v);
            }
        }
    }
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = read_text(path).map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::NotFound => " (no such file; check the path, e.g. scenarios/studies/metro_cluster_psp.toml)",
                _ => "",
            };
            ScenarioError(format!("{file}: cannot read the scenario: {e}{hint}"))
        })?;
        Self::from_text(&file, &text)
    }

    pub fn from_text(file: &str, text: &str) -> Result<Self, ScenarioError> {
        let mut replaced = vec![];
        let root = with_base(file, parse_toml(file, text)?, 0, &mut replaced)?;
        let spec_err = |e| located(file, e);
        let top = sanlab_spec::Spec::new(&root, "");
        let name = top.string("name", None, "").map_err(spec_err)?;
        let description = top.opt_string("description", "").map_err(spec_err)?.unwrap_or_default();
        let mut variants = vec![];
        // Each variant names a folder of the run.
        let mut file_names = std::collections::HashMap::new();
        let written_variants = top.tables("variant", "").map_err(spec_err)?;
        if written_variants.len() > variant_limits::MAX_VARIANTS {
            let message = format!("{} [[variant]], each simulated on its own: expected at most {}", variant_limits::thousands(written_variants.len()), variant_limits::MAX_VARIANTS);
            return Err(spec_err(SpecError::new("variant".to_string(), message)));
        }
        for v in written_variants {
            let vname = v.string("name", None, "variant name").map_err(spec_err)?;
            if variants.iter().any(|x: &Variant| x.name == vname) {
                return Err(spec_err(v.error("name", format!("variant `{}` is defined twice", escaped(&vname)))));
            }
            claim_file_name(&vname, "variants", &mut file_names).map_err(|m| spec_err(v.error("name", m)))?;
            let vdesc = v.opt_string("description", "").map_err(spec_err)?.unwrap_or_default();
            let set = v.table("set", "path = value overrides").map_err(spec_err)?;
            let sets = set.entries().into_iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            v.finish().map_err(spec_err)?;
            variants.push(Variant { name: vname, description: vdesc, sets });
        }
        let written: Vec<String> = variants.iter().map(|v| v.name.clone()).collect();
        let variants = vdbench_runs::expand(file, &root, variants)?;
        // A vdbench file's runs become variants; the scenario as written then picks none of them.
        let runs_as_written = !written.is_empty() && variants.iter().map(|v| &v.name).eq(written.iter());
        let sha256 = format!("{:x}", Sha256::digest(text.as_bytes()));
        Ok(Self { file: file.to_string(), name, description, sha256, variants, root, replaced, runs_as_written })
    }

    /// Variant names to run: the requested ones (checked), else all, else the base scenario.
    pub fn select(&self, requested: &[String]) -> Result<Vec<Option<&Variant>>, ScenarioError> {
        if requested.is_empty() {
            return Ok(if self.variants.is_empty() { vec![None] } else { self.variants.iter().map(Some).collect() });
        }
        requested
            .iter()
            .map(|r| {
                if r == "base" && self.variants.iter().all(|v| v.name != "base") {
                    return Ok(None);
                }
                self.variants.iter().find(|v| &v.name == r).map(Some).ok_or_else(|| {
                    let names: Vec<&str> = self.variants.iter().map(|v| v.name.as_str()).collect();
                    ScenarioError(format!(
                        "{}: no variant named `{r}`: expected one of {}{}",
                        self.file,
                        if names.is_empty() { "base (the file has no [[variant]])".to_string() } else { variant_limits::listed(names.iter().copied()) },
                        did_you_mean(r, names.iter().copied())
                    ))
                })
            })
            .collect()
    }

    /// The scenario table of one variant with the command-line overrides applied.
    pub fn resolve(&self, variant: Option<&Variant>, o: &Overrides) -> Result<Table, ScenarioError> {
        let mut root = self.root.clone();
        root.remove("variant");
        let err = |e| self.located(e);
        if let Some(v) = variant {
            for (k, val) in &v.sets {
                overrides::apply(&mut root, k, val.clone(), &format!("variant `{}`", v.name)).map_err(err)?;
            }
        }
        for s in &o.sets {
            let (k, val) = overrides::parse_assignment(s).map_err(|m| ScenarioError(format!("--set {m}")))?;
            overrides::apply(&mut root, &k, val, "--set").map_err(err)?;
        }
        if let Some(seed) = o.seed {
            let seed = i64::try_from(seed).map_err(|_| ScenarioError(format!("--seed {seed}: expected 0..={}", i64::MAX)))?;
            overrides::apply(&mut root, "run.seed", Value::Integer(seed), "--seed").map_err(err)?;
        }
        if let Some(d) = &o.duration {
            overrides::apply(&mut root, "run.duration", Value::String(d.clone()), "--duration").map_err(err)?;
        }
        sanlab_workload::expand_trace_volumes(&mut root).map_err(err)?;
        Ok(root)
    }

    /// Checks that every selected variant builds, and the scenario as written when it has
    /// variants: a mistake in a value that every variant overrides would otherwise go unseen.
    /// Returns the selection.
    pub fn validate(&self, requested: &[String], o: &Overrides) -> Result<Vec<Option<&Variant>>, ScenarioError> {
        Ok(self.checked(requested, o)?.into_iter().map(|c| c.variant).collect())
    }

    /// Each selected variant's simulated times with the overrides: what `sanlab run --warmup auto`
    /// needs before its pilot.
    pub fn run_times(&self, requested: &[String], o: &Overrides) -> Result<Vec<RunTimes>, ScenarioError> {
        let seconds = |ns: u64| ns as f64 / 1e9;
        let mut times = vec![];
        for v in self.select(requested)? {
            let (topology, _) = self.build_topology(&self.resolve(v, o)?, v, false)?;
            let run = &topology.run;
            times.push(RunTimes {
                variant: v.map_or("base".to_string(), |v| v.name.clone()),
                duration_s: seconds(run.duration_ns),
                warmup_s: seconds(run.warmup_ns),
                sample_interval_s: seconds(run.sample_interval_ns),
            });
        }
        Ok(times)
    }

    /// [`Scenario::validate`]'s selection, each variant with what it may hold in memory and its simulated time.
    fn checked(&self, requested: &[String], o: &Overrides) -> Result<Vec<parallel::Checked<'_>>, ScenarioError> {
        let mut checked = vec![];
        for v in self.select(requested)? {
            let table = self.resolve(v, o)?;
            let (topology, _) = self.build_topology(&table, v, false)?;
            let (memory, duration_ns) = (MemoryBound::of(&topology), topology.run.duration_ns);
            self.world(topology, v)?;
            checked.push(parallel::Checked { variant: v, memory, duration_ns });
        }
        self.check_as_written()?;
        Ok(checked)
    }

    /// Builds the scenario as written, without its variants' overrides or the command line's
    /// (which may address a variant's kind), when its variants are written ones.
    pub(crate) fn check_as_written(&self) -> Result<(), ScenarioError> {
        if !self.runs_as_written {
            return Ok(());
        }
        let as_written = |ScenarioError(m)| ScenarioError(format!("{m} (in the scenario as written, before any variant's `set`)"));
        self.build_world(&self.resolve(None, &Overrides::default()).map_err(as_written)?, None, false).map_err(as_written)?;
        Ok(())
    }

    /// An error at a location of this scenario; when the location lies in a list that replaced
    /// its base's, the message says so.
    fn located(&self, e: SpecError) -> ScenarioError {
        let note = self.replaced.iter().find_map(|r| r.note(&e.location)).unwrap_or_default();
        let ScenarioError(message) = located(&self.file, e);
        ScenarioError(message + &note)
    }

    /// With `measure`, thresholds that SIOC finds by injecting load are measured first (their
    /// runs are skipped when only validating).
    fn build_world(&self, table: &Table, v: Option<&Variant>, measure: bool) -> Result<(World, Vec<InjectorReport>), ScenarioError> {
        let (topology, injected) = self.build_topology(table, v, measure)?;
        Ok((self.world(topology, v)?, injected))
    }

    fn build_topology(&self, table: &Table, v: Option<&Variant>, measure: bool) -> Result<(Topology, Vec<InjectorReport>), ScenarioError> {
        let base_dir = Path::new(&self.file).parent().unwrap_or(Path::new("."));
        let located_here = |e| in_variant(v, self.located(e));
        let mut topology = topology::build(table, base_dir).map_err(located_here)?;
        let injected = if measure { pilots::injector::measure(table, &mut topology, base_dir).map_err(located_here)? } else { vec![] };
        Ok((topology, injected))
    }

    fn world(&self, topology: Topology, v: Option<&Variant>) -> Result<World, ScenarioError> {
        World::new(topology).map_err(|m| in_variant(v, ScenarioError(format!("{}: {m}", self.file))))
    }

    /// The overrides of replication `r` of a variant: its seed (the command line's or the
    /// scenario's) + r; replication 0 is the run as written.
    pub(crate) fn replicated(&self, v: Option<&Variant>, o: &Overrides, r: u32) -> Result<Overrides, ScenarioError> {
        if r == 0 {
            return Ok(o.clone());
        }
        let seed = match o.seed {
            Some(seed) => seed,
            None => run_seed(&self.resolve(v, o)?),
        };
        let replicated = seed.checked_add(u64::from(r)).filter(|s| i64::try_from(*s).is_ok()).ok_or_else(|| {
            ScenarioError(format!("replication {}: the seed {seed} + {r} passes the largest seed, {}; give a smaller --seed", r + 1, i64::MAX))
        })?;
        Ok(Overrides { seed: Some(replicated), ..o.clone() })
    }

    /// The independent parts a variant runs as on up to `threads` threads (one: the whole).
    pub fn parts(&self, v: Option<&Variant>, o: &Overrides, threads: NonZeroUsize) -> Result<Vec<sanlab_model::parts::Part>, ScenarioError> {
        let (topology, _) = self.build_topology(&self.resolve(v, o)?, v, false)?;
        Ok(sanlab_model::parts::parts(&topology, threads.get()))
    }

    /// Runs one variant, its independent parts on up to `threads` threads (`run_parts.rs`);
    /// `None` when `control` stopped it before the end.
    pub fn run(&self, v: Option<&Variant>, o: &Overrides, control: Option<&RunControl>, threads: NonZeroUsize) -> Result<Option<VariantResult>, ScenarioError> {
        let table = self.resolve(v, o)?;
        let (topology, injector) = self.build_topology(&table, v, true)?;
        let seed = run_seed(&table);
        let parts = sanlab_model::parts::parts(&topology, threads.get());
        let run = if parts.len() > 1 { self.run_parts(&table, v, topology, &injector, &parts, control)? } else { self.run_topology(topology, v, control)? };
        let Some((report, wall_s)) = run else { return Ok(None) };
        Ok(Some(VariantResult {
            name: v.map_or("base".to_string(), |v| v.name.clone()),
            description: v.map_or_else(|| self.description.clone(), |v| v.description.clone()),
            seed,
            replication: 0,
            wall_s,
            resolved_toml: toml_text(&table),
            resolved: table,
            injector,
            report,
        }))
    }
}

/// A resolved scenario's `[run] seed` (1 when not given).
fn run_seed(table: &Table) -> u64 {
    table.get("run").and_then(|r| r.get("seed")).and_then(Value::as_integer).unwrap_or(1) as u64
}

/// The text `toml::to_string` gives, in one pass: it inserts each table into one growing string,
/// quadratic in the tables (0.8 s at 10,000 VMs); the buffer's `Display` writes the same text.
fn toml_text(table: &Table) -> String {
    let mut buffer = toml::ser::Buffer::new();
    match table.serialize(toml::ser::Serializer::new(&mut buffer)) {
        Ok(_) => buffer.to_string(),
        Err(_) => String::new(),
    }
}

/// A variant's simulated times: the run, its warm-up and its time series' interval.
#[derive(Serialize)]
pub struct RunTimes {
    pub variant: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub sample_interval_s: f64,
}

#[derive(Serialize)]
pub struct VariantResult {
    pub name: String,
    pub description: String,
    pub seed: u64,
    /// Which replication of the variant this is (0: the run as written; set by the run that
    /// makes replications).
    pub replication: u32,
    /// Engine run time only (no parsing, no reporting).
    pub wall_s: f64,
    pub resolved_toml: String,
    /// The same scenario as data, for readers that would otherwise parse the TOML again (at
    /// 10,000 VMs Python's TOML parser takes seconds; its JSON parser, milliseconds).
    pub resolved: Table,
    /// SIOC automatic thresholds measured before the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub injector: Vec<InjectorReport>,
    #[serde(flatten)]
    pub report: RunReport,
}

#[derive(Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub file: String,
    pub scenario_sha256: String,
    pub version: &'static str,
    /// True when the run was stopped early; `variants` holds those that finished.
    pub cancelled: bool,
    pub variants: Vec<VariantResult>,
}

/// Loads and runs a scenario: the selected variants, one after the other. With a `control`,
/// progress is published to it and a cancel keeps the variants that finished.
pub fn run_file(path: &Path, variants: &[String], o: &Overrides, control: Option<&VariantRuns>) -> Result<RunResult, ScenarioError> {
    run_file_parallel(path, variants, o, control, NonZeroUsize::MIN)
}

/// [`run_file`] with up to `jobs` variants at once (see `parallel.rs`): the same document.
pub fn run_file_parallel(path: &Path, variants: &[String], o: &Overrides, control: Option<&VariantRuns>, jobs: NonZeroUsize) -> Result<RunResult, ScenarioError> {
    Scenario::load(path)?.run_variants(variants, o, control, jobs, Replications::default())
}

impl Scenario {
    /// Runs the selected variants (all when `variants` is empty), up to `jobs` at once (see
    /// `parallel.rs`); with a `control`, progress is published to it and a cancel keeps the
    /// variants that finished. The document is the same for any `jobs`; with several
    /// `replications`, it lists each replication's variants in turn.
    pub fn run_variants(&self, variants: &[String], o: &Overrides, control: Option<&VariantRuns>, jobs: NonZeroUsize, replications: Replications) -> Result<RunResult, ScenarioError> {
        // Everything is checked before any time is spent on a run.
        let selected = self.checked(variants, o)?;
        let (results, cancelled) = parallel::run_variants(self, &selected, o, control, jobs, replications)?;
        Ok(RunResult { scenario: self.name.clone(), file: self.file.clone(), scenario_sha256: self.sha256.clone(), version: env!("CARGO_PKG_VERSION"), cancelled, variants: results })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolved_toml_is_the_text_toml_gives() {
        let dirs = ["../../scenarios/studies", "../../scenarios/examples"];
        let files: Vec<_> = dirs.iter().flat_map(|d| std::fs::read_dir(d).unwrap()).map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        assert!(files.len() > 10);
        for f in files {
            let s = Scenario::load(&f).unwrap();
            let table = s.resolve(None, &Overrides::default()).unwrap();
            assert_eq!(toml_text(&table), toml::to_string(&table).unwrap(), "{}", f.display());
        }
    }
}
