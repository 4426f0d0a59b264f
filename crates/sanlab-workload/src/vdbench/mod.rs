//! vdbench block workloads: storage definitions (sd=), workload definitions (wd=) and run
//! definitions (rd=), from a parameter file (`parm.rs`) or the same keywords inline.
//! Semantics follow vdbench 5.04.06 (docs/references.md, checked against
//! Vdb/*.java): keywords may be abbreviated as vdbench allows ("keyword".startsWith(given), in
//! vdbench's own order), `xx=default` sets the defaults of the entries after it.
//!
//! Each SD of the run becomes one job instance: `threads` outstanding (iorate=max) or open
//! arrivals at the WDs' rates, each request drawn from one of the SD's workloads (WD x SD,
//! vdbench's "workload generator") by its skew or rate. With `priority=`, each workload has its
//! own arrivals and the SD's threads serve the highest priority first ([`Shared`]). Every SD
//! addresses the VM's one virtual disk from its offset on.
//!
//! Files, from the floor up: `parm.rs` (the parameter file's lines and values), `keywords.rs`
//! (keyword tables, vdbench's numbers, the SD, WD and RD entries), `entries.rs` (items sorted into
//! entries), `generator.rs` (the request generator and an SD's job), `runs.rs` (run expansion and
//! assembly), this file (the kind: inline keys or a file).

mod entries;
mod generator;
mod keywords;
mod parm;
mod runs;

pub use runs::{runs, runs_with_vars, VdbenchRun};

use entries::{default_rd, default_sd, default_wd, parse_items, Parm};
use keywords::{At, IoRate};
use parm::{read_items, Vars};
use runs::{assemble, pick, plan};
use crate::face::{JobSet, JobSource};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<dyn JobSource> = Kind { name: "vdbench", summary: "vdbench: a parameter file (sd/wd/rd: xfersize, rdpct, seekpct, rhpct, hitarea, hotband, ...) or the same keys inline", build };

/// Keys of the inline form: (vdbench keyword, entry, type, default, doc).
const INLINE: [(&str, char, &str, &str, &str); 14] = [
    ("xfersize", 'w', "size or list", "4k", "inline: transfer size, a distribution \"(4k,50,8k,50)\", or \"(min,max,align)\" (k, m, g are powers of 1024)"),
    ("rdpct", 'w', "percent", "100", "inline: percent reads"),
    ("seekpct", 'w', "percent or word", "100", "inline: percent random; sequential, random, or eof (sequential, then stop)"),
    ("rhpct", 'w', "percent", "0", "inline: percent of reads sent to the hit area"),
    ("whpct", 'w', "percent", "0", "inline: percent of writes sent to the hit area"),
    ("hotband", 'w', "range", "none", "inline: \"(lo,hi)\" percent of the SD, misses skewed to its start by vdbench's HotBand generator"),
    ("range", 'w', "range", "none", "inline: \"(lo,hi)\" percent of the SD (over 200: bytes)"),
    ("hitarea", 's', "size", "1m", "inline: the hit area at the start of the SD; misses avoid it"),
    ("threads", 's', "integer", "8", "inline: requests outstanding at most (all of them with iorate = \"max\")"),
    ("iorate", 'r', "max or IOPS", "max", "inline: max = closed loop at threads; a number = open arrivals at that rate"),
    ("elapsed", 'r', "seconds", "30", "inline: run length in whole seconds, a multiple of interval; the job stops after it"),
    ("interval", 'r', "seconds", "1", "inline: reporting interval of vdbench's summary lines, whole seconds (0: min(elapsed/2, 60)); the first is left out of the job's statistics"),
    ("warmup", 'r', "seconds", "interval", "inline: whole seconds, a multiple of interval, left out of the job's statistics"),
    ("distribution", 'r', "choice", "exponential", "inline: inter-arrival times with a numeric iorate: exponential, uniform, deterministic"),
];

/// The job's `vars`: values for its parameter file's `$name` variables, each as text.
pub fn vars(spec: &Spec) -> SpecResult<Vec<(String, String)>> {
    let table = spec.table("vars", "values of the parameter file's variables, as vdbench takes name=value from its command line: vars = { threads = 8 } replaces `$threads` (and `!threads`)")?;
    let mut out = vec![];
    for (name, _) in table.entries() {
        let value = table.scalar_text(name, "text", "", "a variable's value, replacing `$name` as text")?.unwrap_or_default();
        if name.is_empty() {
            return Err(table.error(name, "a variable needs a name: `$` alone would replace every `$` of the file"));
        }
        // vdbench replaces until none is left: a value holding its own variable never ends.
        if value.contains(&format!("${name}")) || value.contains(&format!("!{name}")) {
            return Err(table.error(name, format!("`{value}` holds `${name}` itself, which vdbench would replace forever")));
        }
        out.push((name.to_string(), value));
    }
    Ok(out)
}

fn build(spec: &Spec) -> SpecResult<Box<dyn JobSource>> {
    let file = spec.path("file", "vdbench parameter file, relative to the scenario file; without it, the keys marked inline describe one sd, wd and rd")?;
    let vars = vars(spec)?;
    let rd = spec.opt_string("rd", "the run to run: an rd name, or a run of its for loops or curve as results name it (\"rd1 xfersize=4k\", \"rd1_(50%)\"); a scenario runs every run of the file as a variant when this is not given")?;
    let curve_max = spec.float("curve_max_iops", 0.0, 0.0, 1e12, "a curve point's max run rate: sanlab sets it from the max run's result (0: not known yet)")?;
    let device_bytes = spec.size_bytes("device_size", Some((100 << 30, "100GiB")), "size of an SD without size= (vdbench would read the LUN's size)")?;
    let mut inline = vec![];
    for (key, entry, ty, default, doc) in INLINE {
        if let Some(v) = spec.scalar_text(key, ty, default, doc)? {
            inline.push((key, entry, v));
        }
    }
    if spec.is_describing() {
        return Ok(Box::new(JobSet::default()));
    }
    let jobs = match file {
        Some(path) => {
            if let Some((key, ..)) = inline.first() {
                return Err(spec.error(key, format!("`{key}` belongs in the parameter file when `file` is given")));
            }
            let mut vars = Vars::new(&vars);
            let (files, items) = read_items(&path, &mut vars).map_err(|e| spec.error("file", e))?;
            if let Some(name) = vars.unused().first() {
                return Err(spec.error(&format!("vars.{name}"), format!("{} has no `${name}` (nor `!{name}`): vdbench stops on a value it does not use (\"Unused parameter substitution\"); remove it, or write `${name}` where it goes", path.display())));
            }
            let parm = parse_items(&items, &files).map_err(|e| spec.error("file", e))?;
            let place = |at: At, msg: String| match at {
                Some((f, l)) => files.at(f, l, msg),
                None => format!("{}: {msg}", path.display()),
            };
            let runs = plan(&parm, &place).map_err(|e| spec.error("file", e))?;
            let run = pick(&runs, &parm, rd.as_deref(), &place).map_err(|e| spec.error(if rd.is_some() { "rd" } else { "file" }, e))?;
            assemble(&parm, run, (curve_max > 0.0).then_some(curve_max), device_bytes, &place).map_err(|e| spec.error("file", e))?
        }
        None => {
            if rd.is_some() {
                return Err(spec.error("rd", "picks a run of a parameter file: give `file` too, or drop `rd`"));
            }
            if let Some((name, _)) = vars.first() {
                return Err(spec.error(&format!("vars.{name}"), "replaces `$name` in a parameter file: give `file` too, or drop `vars`"));
            }
            let mut parm = Parm { sds: vec![default_sd()], wds: vec![default_wd()], rds: vec![default_rd()], default_wd: default_wd(), ignored: vec![], concatenate: false };
            (parm.sds[0].name, parm.wds[0].name, parm.rds[0].name) = ("sd1".into(), "wd1".into(), "rd1".into());
            (parm.wds[0].sds, parm.rds[0].wds, parm.rds[0].iorate) = (vec!["sd1".into()], vec!["wd1".into()], Some(IoRate::Max));
            for (key, entry, value) in &inline {
                let set = match entry {
                    's' => parm.sds[0].set(key, value),
                    'w' => parm.wds[0].set(key, value),
                    _ => parm.rds[0].set(key, value),
                };
                set.map_err(|e| spec.error(key, e))?;
            }
            let key = inline.first().map_or("kind", |i| i.0);
            let runs = plan(&parm, &|_, msg| msg).map_err(|e| spec.error(key, e))?;
            let run = pick(&runs, &parm, None, &|_, msg| msg).map_err(|e| spec.error(key, e))?;
            assemble(&parm, run, None, device_bytes, &|_, msg| msg).map_err(|e| spec.error(key, e))?
        }
    };
    Ok(Box::new(JobSet { jobs: jobs.into_iter().map(|(name, job)| (name, Box::new(job) as Box<dyn JobSource>)).collect(), after: vec![] }))
}
