//! Builds a [`Topology`] from a resolved scenario table, strictly: every section is read through
//! a [`Spec`], every name reference is checked, and unknown keys are errors. One file per part of
//! the scenario, read in this order (errors come in the order a reader meets the sections): `run`,
//! `arrays` (arrays, replication pairs, volumes), `hosts` (hosts, paths), `vms` (VMs, their
//! devices and jobs), `faults` (the event timeline).

mod arrays;
mod faults;
mod hosts;
mod run;
mod vms;

use sanlab_model::topology::{human_bytes, Topology, MAX_OUTSTANDING, MAX_SERIES_BYTES};
use sanlab_spec::names::{escaped, file_name};
use sanlab_spec::{did_you_mean, Spec, SpecError, SpecResult};
use std::collections::HashMap;
use toml::Table;


pub const SCHEMA_VERSION: i64 = 1;

/// Names in definition order, indexed: a scenario may define 10,000 VMs, and a linear search per
/// reference made building one quadratic.
#[derive(Default)]
struct NameList {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl NameList {
    fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn push(&mut self, name: String) {
        self.index.insert(name.clone(), self.names.len());
        self.names.push(name);
    }
}

impl std::ops::Deref for NameList {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.names
    }
}

/// Finds `name` among `names`, or explains which names exist.
fn resolve(spec: &Spec, key: &str, name: &str, what: &str, names: &NameList) -> SpecResult<usize> {
    names.position(name).ok_or_else(|| {
        let list = if names.is_empty() { "none is defined".to_string() } else { format!("defined: {}", names.join(", ")) };
        spec.error(key, format!("no {what} named `{name}` ({list}){}", did_you_mean(name, names.iter().map(String::as_str))))
    })
}

fn unique_name(spec: &Spec, what: &str, names: &NameList) -> SpecResult<String> {
    let name = spec.string("name", None, "unique name")?;
    if name.is_empty() {
        return Err(spec.error("name", "must not be empty"));
    }
    if names.position(&name).is_some() {
        return Err(spec.error("name", format!("{what} `{name}` is defined twice")));
    }
    Ok(name)
}

/// The top-level keys of a scenario, in the order the reader takes them.
const SECTIONS: [&str; 12] = ["schema_version", "name", "description", "variant", "run", "array", "replication", "volume", "host", "path", "vm", "event"];

/// `base_dir` is the scenario file's folder; job files and traces named in it are relative to it.
pub fn build(root: &Table, base_dir: &std::path::Path) -> SpecResult<Topology> {
    // A mistyped section (`[[paths]]`) is named before what its absence breaks elsewhere.
    if let Some(key) = root.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
        return Err(SpecError::new(key.clone(), format!("unknown key `{key}`; expected one of: {}{}", SECTIONS.join(", "), did_you_mean(key, SECTIONS))));
    }
    let top = Spec::new(root, "").with_base_dir(base_dir);
    let version = top.int("schema_version", None, 1, i64::MAX, "scenario format version")?;
    if version != SCHEMA_VERSION {
        return Err(top.error("schema_version", format!("version {version} is not supported: this sanlab reads schema_version = {SCHEMA_VERSION}")));
    }
    file_name(&top.string("name", None, "scenario name")?).map_err(|e| top.error("name", e))?;
    top.opt_string("description", "what the scenario shows")?;
    top.tables("variant", "named overrides, each a `set` table of path = value")?;

    let run = run::read(&top)?;
    let arrays = arrays::arrays(&top, run.seed)?;
    let replications = arrays::replications(&top, &arrays.names, run.seed)?;
    let volumes = arrays::volumes(&top, &arrays.names, &replications)?;
    let hosts = hosts::hosts(&top)?;
    hosts::check_preferred(&arrays.preferred, &hosts.names)?;
    let paths = hosts::paths(&top, &hosts.names, &arrays, run.seed)?;
    let vms::Built { mut devices, psp_at, vms, jobs } = vms::vms(&top, &arrays, &volumes, &hosts, &paths, run.sample_interval_ns)?;
    let hosts::Hosts { configs: host_configs, names: host_names, psp_specs, sched_specs, .. } = hosts;
    hosts::finish_tables(psp_specs, sched_specs, &host_configs, &devices)?;
    vms::name_shared_paths(&mut devices, &paths.links, &host_names);
    vms::attach_policies(&mut devices, &psp_at)?;
    let controllers = arrays.configs.iter().map(|a| a.controllers).collect();
    let names = faults::Names { paths: paths.names, hosts: &host_names, arrays: &arrays.names, volumes: &volumes.names, volume_arrays: &volumes.arrays, controllers };
    let faults = faults::read_faults(&top, &names, &paths.ends, &replications, run.duration_ns)?;
    top.finish()?;
    let topology = Topology { run, hosts: host_configs, arrays: arrays.configs, replications, volumes: volumes.configs, links: paths.links, devices, vms, jobs, faults };
    check_limits(&topology)?;
    Ok(topology)
}

/// Refuses a run whose time series or request slab would exceed its limit, before it starts.
fn check_limits(t: &Topology) -> SpecResult<()> {
    let cost = t.cost();
    if cost.series_bytes > MAX_SERIES_BYTES {
        let per_sample = cost.series_bytes / cost.samples.max(1);
        let min_interval_us = (u128::from(t.run.duration_ns) * u128::from(per_sample)).div_ceil(u128::from(MAX_SERIES_BYTES) * 1_000);
        return Err(SpecError::new(
            "run.sample_interval",
            format!(
                "{} samples of {} entities make about {} of time series, above the limit of {}: use a sample_interval of at least {min_interval_us}us",
                cost.samples,
                cost.entities,
                human_bytes(cost.series_bytes),
                human_bytes(MAX_SERIES_BYTES)
            ),
        ));
    }
    let mut outstanding = 0;
    for job in &t.jobs {
        outstanding += u64::from(job.plan.pacing.depth());
        if outstanding > MAX_OUTSTANDING {
            return Err(SpecError::new(
                format!("vm[{}]", job.vm),
                format!("with job `{}`, the jobs would keep {} requests outstanding (iodepth x numjobs, summed), above the limit of {MAX_OUTSTANDING}: lower iodepth or numjobs", escaped(&job.name), cost.outstanding),
            ));
        }
    }
    Ok(())
}
