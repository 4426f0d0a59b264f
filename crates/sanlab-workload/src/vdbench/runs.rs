//! vdbench's runs: a parameter file's RDs expanded into runs (their `for` loops and curve points,
//! RD_entry.buildNewRdListForWd, For_loop.for_get) in vdbench's order, and one run assembled into
//! its SDs' jobs (skews, rates, priorities, concatenated SDs, streams, maxdata).

use super::entries::{parse_items, Parm};
use super::generator::{Context, Generator, Interval, MaxData, SdJob, Shared};
use super::keywords::{matches, what_size, At, ForKey, IoRate, Rd, Sd, Seek, Wd, Xfer, SEEK_EOF};
use super::parm::{read_items, Vars};
use sanlab_spec::number::rate_iops;
use sanlab_spec::did_you_mean;
use sanlab_des::NS_PER_S;

/// One WD on one SD of a run, as [`assemble`] collects them.
struct Gen {
    sd: usize,
    generator: Generator,
    /// Its skew, or rate, among the SD's generators.
    weight: f64,
    /// Its priority class, in a run with priorities.
    class: Option<Class>,
}

/// A workload's priority on an SD and its own arrivals.
struct Class {
    rank: u32,
    wd: String,
    /// None: `iorate=max` without a rate of its own, a request always waiting.
    rate_iops: Option<f64>,
}

/// WD_entry.checkPriorities and FifoList.countPriorities on a run's workloads: a WD with its own
/// iorate needs a priority; once one WD has a priority every WD has its own, they run 1, 2, …
/// without a gap, and WDs with their own iorate come before those without. Whether the run has
/// priorities.
fn check_priorities(wds: &[&Wd], place: &dyn Fn(At, String) -> String, at_rd: &dyn Fn(String) -> String) -> Result<bool, String> {
    if let Some(w) = wds.iter().find(|w| w.iorate > 0.0 && w.priority.is_none()) {
        return Err(place(w.at, format!("wd={}: iorate= needs priority= too (vdbench): a workload with its own rate is served by priority, 1 first", w.name)));
    }
    if wds.iter().all(|w| w.priority.is_none()) {
        return Ok(false);
    }
    let mut ranked: Vec<(u32, &str, bool)> = vec![];
    for w in wds {
        let Some(rank) = w.priority else {
            return Err(at_rd(format!("wd={} has no priority=: once a workload of the run has one, every workload needs its own (vdbench)", w.name)));
        };
        ranked.push((rank, &w.name, w.iorate > 0.0));
    }
    ranked.sort();
    let list = ranked.iter().map(|(r, w, _)| format!("wd={w}: {r}")).collect::<Vec<_>>().join(", ");
    if let Some(pair) = ranked.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(at_rd(format!("wd={} and wd={} have the same priority={}: each workload needs its own (vdbench)", pair[0].1, pair[1].1, pair[0].0)));
    }
    if ranked.iter().enumerate().any(|(i, (r, _, _))| *r as usize != i + 1) {
        return Err(at_rd(format!("the priorities of its workloads ({list}) must run 1, 2, … {} without a gap (vdbench)", ranked.len())));
    }
    if let (Some(paced), Some(free)) = (ranked.iter().rev().find(|r| r.2), ranked.iter().find(|r| !r.2)) {
        if paced.0 > free.0 {
            return Err(at_rd(format!("wd={} has iorate= and priority={}, below wd={} without iorate= at priority={}: workloads with their own iorate need the higher priorities, i.e. the lower numbers (vdbench)", paced.1, paced.0, free.1, free.0)));
        }
    }
    Ok(true)
}

/// One run of a parameter file: an RD with one value of each of its loops, or one point of its
/// curve (RD_entry.buildNewRdListForWd, For_loop.for_get).
#[derive(Clone, Debug)]
pub(super) struct RunPlan {
    rd: usize,
    /// As vdbench names it: the RD's name, `_(10%)` for a curve point, then its loops' values
    /// as vdbench's "For loops:" shows them, e.g. `rd1 xfersize=4k threads=8`.
    name: String,
    values: Vec<(ForKey, f64)>,
    /// A curve point: its percent of the max run's rate, and that run's name.
    curve: Option<(f64, String)>,
}

/// A run of a vdbench parameter file, for a scenario to run each as a variant.
#[derive(Clone, Debug, PartialEq)]
pub struct VdbenchRun {
    pub name: String,
    /// The RD it belongs to.
    pub rd: String,
    /// A curve point: the name of the max run whose rate it takes a percent of.
    pub curve_max_run: Option<String>,
    /// A curve point of an RD with `stopcurve=`: vdbench stops every later run once a curve
    /// point's response time (ms) is above it (Reporter: "Vdbench terminating because of
    /// requested 'stopcurve='").
    pub stopcurve_ms: Option<f64>,
}

/// Most runs one parameter file may make (each is a variant, simulated on its own).
const MAX_RUNS: usize = 4096;

/// Every run, in the order vdbench runs them: RDs in file order; each RD's loops nested with
/// the first outermost; a curve's points right after its max run.
pub(super) fn plan(p: &Parm, place: &dyn Fn(At, String) -> String) -> Result<Vec<RunPlan>, String> {
    let mut out = vec![];
    for (i, rd) in p.rds.iter().enumerate() {
        let mut loops = rd.fors.clone();
        if rd.iorates.len() > 1 {
            loops.push((ForKey::Iorate, rd.iorates.clone()));
        }
        let per_combo = if rd.iorate == Some(IoRate::Curve) { 1 + rd.curve_pct.len() } else { 1 };
        let count = loops.iter().try_fold(per_combo, |n, (_, l)| n.checked_mul(l.len())).filter(|n| out.len() + n <= MAX_RUNS);
        if count.is_none() {
            return Err(place(rd.at, format!("rd={}: its loops make more than {MAX_RUNS} runs, each simulated on its own: loop over fewer values", rd.name)));
        }
        let mut combos: Vec<Vec<(ForKey, f64)>> = vec![vec![]];
        for (key, list) in &loops {
            combos = combos.iter().flat_map(|c| list.iter().map(move |v| c.iter().copied().chain([(*key, *v)]).collect())).collect();
        }
        for values in combos {
            let shown: Vec<String> = values.iter().map(|(k, v)| format!("{}={}", k.label(), k.show(*v))).collect();
            let named = |base: String| if shown.is_empty() { base } else { format!("{base} {}", shown.join(" ")) };
            let max_name = named(rd.name.clone());
            out.push(RunPlan { rd: i, name: max_name.clone(), values: values.clone(), curve: None });
            if rd.iorate == Some(IoRate::Curve) {
                for pct in &rd.curve_pct {
                    out.push(RunPlan { rd: i, name: named(format!("{}_({}%)", rd.name, pct.trunc())), values: values.clone(), curve: Some((*pct, max_name.clone())) });
                }
            }
        }
    }
    Ok(out)
}

/// The runs of a parameter file without variables.
pub fn runs(path: &std::path::Path) -> Result<Vec<VdbenchRun>, String> {
    runs_with_vars(path, &[])
}

/// The runs of a parameter file with the values of its variables (see `plan` above).
pub fn runs_with_vars(path: &std::path::Path, vars: &[(String, String)]) -> Result<Vec<VdbenchRun>, String> {
    let (files, items) = read_items(path, &mut Vars::new(vars))?;
    let parm = parse_items(&items, &files)?;
    let place = |at: At, msg: String| match at {
        Some((f, l)) => files.at(f, l, msg),
        None => format!("{}: {msg}", path.display()),
    };
    Ok(plan(&parm, &place)?.into_iter().map(|r| VdbenchRun { rd: parm.rds[r.rd].name.clone(), stopcurve_ms: parm.rds[r.rd].stopcurve_ms.filter(|_| r.curve.is_some()), name: r.name, curve_max_run: r.curve.map(|c| c.1) }).collect())
}

/// vdbench's rate for a curve point (RD_entry.set_iorate): whole IOPS times the whole percent,
/// rounded up to a multiple of 100 above 1000 IOPS, else of 10.
fn curve_rate(max_iops: f64, pct: f64) -> f64 {
    let rate = (max_iops.trunc() as i64) * (pct.trunc() as i64) / 100;
    (if rate > 1000 { (rate + 99) / 100 * 100 } else { (rate + 9) / 10 * 10 }) as f64
}

/// The run named `name` (a run's full name, or an RD with one run), or the only run.
pub(super) fn pick<'a>(runs: &'a [RunPlan], p: &Parm, name: Option<&str>, place: &dyn Fn(At, String) -> String) -> Result<&'a RunPlan, String> {
    let list = |rs: &[&RunPlan]| rs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ");
    let plain = runs.len() == p.rds.len();
    match name {
        Some(n) => {
            if let Some(r) = runs.iter().find(|r| r.name == n) {
                return Ok(r);
            }
            let of_rd: Vec<&RunPlan> = runs.iter().filter(|r| p.rds[r.rd].name == n).collect();
            if of_rd.is_empty() {
                let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
                return Err(place(None, format!("no run `{n}` (runs: {}){}", names.join(", "), did_you_mean(n, names.iter().copied()))));
            }
            Err(place(p.rds[of_rd[0].rd].at, format!("rd={n} makes {} runs ({}): a scenario runs each as a variant; pick one with rd = \"...\"", of_rd.len(), list(&of_rd))))
        }
        None => match runs {
            [one] => Ok(one),
            [] => Err(place(None, "no run definition: add one, e.g. rd=run1,wd=wd1,iorate=max,elapsed=60".into())),
            many => Err(place(None, format!("{} {} ({}): pick one with rd = \"...\"", many.len(), if plain { "run definitions" } else { "runs" }, list(&many.iter().collect::<Vec<_>>())))),
        },
    }
}

/// The parts of `sd` that `streams=` cuts it into (StreamContext): equal, whole transfer sizes,
/// each without its first block (vdbench keeps block 0 of a LUN clear, and does so in every
/// stream).
fn stream_areas(w: &Wd, sd: &Sd, sd_bytes: u64) -> Result<Vec<Context>, String> {
    let n = w.streams;
    if !sd.threads.is_multiple_of(n) {
        let lower = sd.threads / n * n;
        let nearest = if lower > 0 { format!("threads={lower} or threads={}", lower + n) } else { format!("threads={n}") };
        return Err(format!("threads={} must be a multiple of streams={n}, each stream getting the same threads (vdbench): e.g. {nearest}", sd.threads));
    }
    let max_xfer = w.xfer.max_bytes();
    let size = sd_bytes / u64::from(n) / max_xfer * max_xfer;
    if size < 2 * max_xfer {
        return Err(format!("streams={n} leave each stream {size} bytes of the SD's {sd_bytes}, less than two transfers of {max_xfer} bytes: use fewer streams or a larger SD"));
    }
    Ok((0..u64::from(n)).map(|k| Context { low: sd.offset_bytes + k * size + max_xfer, high: sd.offset_bytes + (k + 1) * size, next_seq: None }).collect())
}

/// The RD's `interval=`, or vdbench's default for it, `min(elapsed/2, 60)` (at least 1).
fn reporting_interval_s(rd: &Rd) -> u64 {
    match rd.interval_s {
        0 => (rd.elapsed_s / 2).clamp(1, 60),
        s => s,
    }
}

/// The SD jobs of one run. A curve point without `curve_max_iops` (only when a scenario is
/// validated before its max run) runs as the max run does.
pub(super) fn assemble(p: &Parm, run: &RunPlan, curve_max_iops: Option<f64>, device_bytes: u64, place: &dyn Fn(At, String) -> String) -> Result<Vec<(String, SdJob)>, String> {
    let rd = &p.rds[run.rd];
    let at_rd = |msg: String| place(rd.at, format!("rd={}: {msg}", rd.name));
    let (mut iorate, interval_s) = run_rate(rd, run, curve_max_iops, &at_rd)?;
    let mut wds = run_wds(p, rd, &at_rd)?;
    let mut sds = p.sds.clone();
    for_overrides(run, &mut wds, &mut sds, &mut iorate);
    let sds = concat_sds(p, run, &mut wds, sds, device_bytes, place)?;
    let p = &Parm { sds, wds: vec![], rds: vec![], default_wd: p.default_wd.clone(), ignored: p.ignored.clone(), concatenate: p.concatenate };
    let wds: Vec<&Wd> = wds.iter().collect();
    let prioritized = check_priorities(&wds, place, &at_rd)?;
    let gens = generators(p, &wds, iorate, prioritized, device_bytes, place, &at_rd)?;
    let measured_s = rd.warmup_s.unwrap_or(interval_s);
    let used_bytes: u64 = p.sds.iter().enumerate().filter(|(s, _)| gens.iter().any(|g| g.sd == *s)).map(|(_, sd)| sd.size_bytes.unwrap_or(device_bytes)).sum();
    let maxdata = rd.maxdata.iter().any(Option::is_some).then(|| {
        let limit = |m: Option<f64>| m.map(|m| if m <= 100.0 { (m * used_bytes as f64) as u64 } else { m as u64 });
        std::rc::Rc::new(MaxData { limit_bytes: [limit(rd.maxdata[0]), limit(rd.maxdata[1]), limit(rd.maxdata[2])], done_bytes: Default::default() })
    });
    // vdbench allows streams= only in a run of one workload (RD_entry.finalizeWds).
    let streaming = match wds.iter().find(|w| w.streams > 0) {
        Some(w) if wds.len() > 1 => return Err(place(w.at, format!("wd={}: streams= needs a run of one workload (vdbench), and rd={} runs {}", w.name, rd.name, wds.len()))),
        other => other,
    };
    let mut jobs = vec![];
    for (s, sd) in p.sds.iter().enumerate() {
        let mut mine: Vec<&Gen> = gens.iter().filter(|g| g.sd == s).collect();
        // Highest priority first: a generator's index is its rank among the SD's.
        mine.sort_by_key(|g| g.class.as_ref().map_or(0, |c| c.rank));
        if mine.is_empty() {
            continue;
        }
        let streams = match streaming {
            Some(w) => stream_areas(w, sd, sd.size_bytes.unwrap_or(device_bytes)).map_err(|e| place(w.at, format!("wd={} on sd={}: {e}", w.name, sd.name)))?,
            None => vec![],
        };
        let cum_weights: Vec<f64> = mine.iter().scan(0.0, |c, g| {
            *c += g.weight;
            Some(*c)
        }).collect();
        let total = cum_weights[cum_weights.len() - 1];
        let classes: Vec<&Class> = mine.iter().filter_map(|g| g.class.as_ref()).collect();
        let shared = match classes.len() {
            0 => None,
            _ => {
                let mut rates = vec![];
                for c in &classes {
                    rates.push(match c.rate_iops {
                        Some(r) if r > 0.0 => Some(rate_iops(&r.to_string(), r).map_err(|e| at_rd(format!("the rate of wd={} on sd={}: {e}", c.wd, sd.name)))?),
                        other => other,
                    });
                }
                if rates.iter().all(|r| r.is_some_and(|r| r <= 0.0)) {
                    return Err(at_rd(format!("its iorate leaves no I/O for sd={}", sd.name)));
                }
                Some(Shared { next_ns: vec![None; rates.len()], waiting: vec![0; rates.len()], announced: None, rates })
            }
        };
        let rate_iops = match iorate {
            IoRate::Max | IoRate::Curve => None,
            IoRate::Rate(_) if total <= 0.0 => return Err(at_rd(format!("its iorate leaves no I/O for sd={}", sd.name))),
            IoRate::Rate(_) => Some(rate_iops(&total.to_string(), total).map_err(|e| at_rd(format!("the share of sd={}: {e}", sd.name)))?),
        };
        let mut options = vec![
            ("rd".to_string(), rd.name.clone()),
            ("sd".to_string(), sd.name.clone()),
            ("threads".to_string(), sd.threads.to_string()),
            ("iorate".to_string(), rate_iops.map_or("max".to_string(), |r| format!("{r}"))),
            ("elapsed".to_string(), rd.elapsed_s.to_string()),
            ("interval".to_string(), interval_s.to_string()),
        ];
        if run.name != rd.name {
            options.push(("run".to_string(), run.name.clone()));
        }
        if !streams.is_empty() {
            options.push(("streams".to_string(), streams.len().to_string()));
        }
        if let Some(sh) = &shared {
            // Each workload as `wd:priority:rate`, served in this order.
            let shown: Vec<String> = classes.iter().zip(&sh.rates).map(|(c, r)| format!("{}:{}:{}", c.wd, c.rank, r.map_or("max".to_string(), |r| format!("{r}")))).collect();
            options.push(("priority".to_string(), shown.join(" ")));
        }
        if maxdata.is_some() {
            options.push(("maxdata".to_string(), rd.maxdata.iter().map(|m| m.map_or("-".to_string(), what_size)).collect::<Vec<_>>().join("/")));
        }
        if !p.ignored.is_empty() {
            options.push(("ignored".to_string(), p.ignored.join(", ")));
        }
        jobs.push((
            sd.name.clone(),
            SdJob {
                generators: mine.iter().map(|g| g.generator.clone()).collect(),
                cum_weights,
                shared,
                threads: sd.threads,
                rate_iops,
                arrivals: rd.arrivals,
                // vdbench counts elapsed= from the end of warmup= (its Reporter), so a run with a
                // warm-up lasts warmup + elapsed; without one, its totals leave out the first
                // interval (the "avg_2-N" line) within elapsed.
                runtime_ns: (rd.warmup_s.unwrap_or(0) + rd.elapsed_s) * NS_PER_S,
                measured_from_ns: measured_s * NS_PER_S,
                interval: Interval { ns: interval_s * NS_PER_S, key: if rd.at.is_some() { "file" } else { "interval" }, at: place(rd.at, format!("rd={}", rd.name)) },
                maxdata: maxdata.clone(),
                streams,
                stream: None,
                options,
            },
        ));
    }
    Ok(jobs)
}

/// The run's rate (a curve point's from its max run's) and reporting interval, which elapsed= and
/// warmup= must be whole multiples of.
fn run_rate(rd: &Rd, run: &RunPlan, curve_max_iops: Option<f64>, at_rd: &dyn Fn(String) -> String) -> Result<(IoRate, u64), String> {
    let mut iorate = match rd.iorate.ok_or_else(|| at_rd("no iorate=: give max (closed loop at the SDs' threads), curve or a rate".into()))? {
        IoRate::Curve => IoRate::Max,
        other => other,
    };
    if let (Some((pct, _)), Some(max)) = (&run.curve, curve_max_iops) {
        let r = curve_rate(max, *pct);
        if r < 1.0 {
            return Err(at_rd(format!("the max run reached {max:.1} IOPS, too few for a curve (vdbench: was the run too short to establish a rate?)")));
        }
        iorate = IoRate::Rate(rate_iops(&r.to_string(), r).map_err(|e| at_rd(format!("curve point {pct}%: {e}")))?);
    }
    let (elapsed_s, interval_s) = (rd.elapsed_s, reporting_interval_s(rd));
    if elapsed_s / interval_s < 2 {
        return Err(at_rd(format!("elapsed={elapsed_s} must be at least twice interval={interval_s} (vdbench): e.g. elapsed={} or interval={}", 2 * interval_s, (elapsed_s / 2).max(1))));
    }
    // vdbench reports whole intervals only (RD_entry.parserCleanup).
    for (key, s) in [("elapsed", elapsed_s), ("warmup", rd.warmup_s.unwrap_or(0))] {
        if s % interval_s != 0 {
            let below = s / interval_s * interval_s;
            return Err(at_rd(format!("{key}={s} must be a multiple of interval={interval_s} (vdbench): the nearest are {key}={} and {key}={}", below.max(if key == "elapsed" { 2 * interval_s } else { 0 }), below + interval_s)));
        }
    }
    Ok((iorate, interval_s))
}

/// The run's workloads: its wd= patterns matched, or the latest wd=default on its sd=.
fn run_wds(p: &Parm, rd: &Rd, at_rd: &dyn Fn(String) -> String) -> Result<Vec<Wd>, String> {
    let mut wds: Vec<Wd> = vec![];
    for pattern in &rd.wds {
        let found: Vec<&Wd> = p.wds.iter().filter(|w| matches(pattern, &w.name)).collect();
        if found.is_empty() {
            let names: Vec<&str> = p.wds.iter().map(|w| w.name.as_str()).collect();
            return Err(at_rd(format!("wd={pattern} matches no workload definition (defined: {}){}", names.join(", "), did_you_mean(pattern, names.iter().copied()))));
        }
        for w in found {
            if !wds.iter().any(|x| x.name == w.name) {
                wds.push(w.clone());
            }
        }
    }
    // SelectWhichWdsToUse: an RD's sd= replaces its WDs' SDs; without wd=, the latest
    // wd=default runs on them, named after the RD.
    if let Some(sds) = &rd.sds {
        if wds.is_empty() {
            wds.push(Wd { name: format!("rd={}", rd.name), at: rd.at, ..p.default_wd.clone() });
        }
        for w in &mut wds {
            w.sds = sds.clone();
        }
    }
    if wds.is_empty() {
        return Err(at_rd("no wd=: name the workloads to run (wd=wd1), or the SDs to run the latest wd=default on (sd=sd1)".into()));
    }
    Ok(wds)
}

/// The run's loop values override every workload and SD (For_loop.useForOverrides), and the rate.
fn for_overrides(run: &RunPlan, wds: &mut [Wd], sds: &mut [Sd], iorate: &mut IoRate) {
    for (key, v) in &run.values {
        for w in wds.iter_mut() {
            match key {
                ForKey::Xfersize => w.xfer = Xfer::Table(vec![(*v as u32, 100.0)]),
                ForKey::Rdpct => w.read_pct = v.trunc(),
                ForKey::Rhpct => w.rhpct = *v,
                ForKey::Whpct => w.whpct = *v,
                ForKey::Seekpct => w.seek = if *v == SEEK_EOF { Seek::Eof } else { Seek::Percent(*v) },
                _ => {}
            }
        }
        for sd in sds.iter_mut() {
            match key {
                ForKey::Threads => sd.threads = *v as u32,
                ForKey::Hitarea => (sd.hitarea_bytes, sd.hitarea_forced) = (*v as u64, true),
                _ => {}
            }
        }
        if *key == ForKey::Iorate {
            *iorate = IoRate::Rate(*v);
        }
    }
}

/// ConcatSds: each WD gets one SD, `concat#01`, ..., its SDs end to end in file order, and
/// the WD's threads (or the run's threads=/forthreads=); without concatenatesds, the SDs as they are.
fn concat_sds(p: &Parm, run: &RunPlan, wds: &mut [Wd], sds: Vec<Sd>, device_bytes: u64, place: &dyn Fn(At, String) -> String) -> Result<Vec<Sd>, String> {
    let forthreads = run.values.iter().find(|(k, _)| *k == ForKey::Threads).map(|(_, v)| *v as u32);
    let sds = if p.concatenate {
        let mut concat = vec![];
        for w in wds.iter_mut() {
            let parts: Vec<&Sd> = sds.iter().filter(|s| w.sds.iter().any(|pat| matches(pat, &s.name))).collect();
            let Some(first) = parts.first() else {
                return Err(place(w.at, format!("wd={}: sd={} matches no storage definition", w.name, w.sds.join(","))));
            };
            let threads = forthreads.or(w.threads).ok_or_else(|| place(w.at, format!("wd={}: with concatenatesds=yes each WD needs threads= (or the rd's threads= or forthreads=)", w.name)))?;
            let size_bytes = parts.iter().map(|s| s.size_bytes.unwrap_or(device_bytes)).sum();
            let name = format!("concat#{:02}", concat.len() + 1);
            concat.push(Sd { name: name.clone(), size_bytes: Some(size_bytes), threads, offset_bytes: 0, range: None, ..(*first).clone() });
            w.sds = vec![name];
        }
        concat
    } else {
        if let Some(w) = wds.iter().find(|w| w.threads.is_some()) {
            return Err(place(w.at, format!("wd={}: threads= on a WD needs concatenatesds=yes (vdbench); without it, set threads= on the SD", w.name)));
        }
        sds
    };
    Ok(sds)
}

/// Every WD x SD of the run as a generator with its weight (skew, or rate) and priority class.
fn generators(p: &Parm, wds: &[&Wd], iorate: IoRate, prioritized: bool, device_bytes: u64, place: &dyn Fn(At, String) -> String, at_rd: &dyn Fn(String) -> String) -> Result<Vec<Gen>, String> {
    // HandleSkew.spreadWdSkew: WDs without skew (and without their own iorate) share what the
    // others leave, equally; the total must be 100.
    let given: f64 = wds.iter().filter(|w| w.iorate == 0.0).map(|w| w.skew).sum();
    let unskewed = wds.iter().filter(|w| w.iorate == 0.0 && w.skew == 0.0).count();
    let skew = |w: &Wd| if w.iorate > 0.0 { 0.0 } else if w.skew > 0.0 { w.skew } else { (100.0 - given) / unskewed as f64 };
    if wds.iter().any(|w| w.iorate == 0.0) && (wds.iter().map(|w| skew(w)).sum::<f64>() - 100.0).abs() > 1e-4 {
        return Err(at_rd(format!("the skews of its workloads add up to {given}, expected 100")));
    }
    let fixed: f64 = wds.iter().map(|w| w.iorate).sum();
    // (sd index, generator, weight) for every WD x SD.
    let mut gens: Vec<Gen> = vec![];
    for w in wds {
        let at_wd = |msg: String| place(w.at, format!("wd={}: {msg}", w.name));
        let sds: Vec<usize> = p.sds.iter().enumerate().filter(|(_, s)| w.sds.iter().any(|pat| matches(pat, &s.name))).map(|(i, _)| i).collect();
        if sds.is_empty() {
            let names: Vec<&str> = p.sds.iter().map(|s| s.name.as_str()).collect();
            return Err(at_wd(format!("sd={} matches no storage definition (defined: {})", w.sds.join(","), names.join(", "))));
        }
        // A WD's skew or rate is split evenly over its SDs (HandleSkew.spreadWgSkew).
        let weight = match iorate {
            IoRate::Max | IoRate::Curve => skew(w),
            IoRate::Rate(_) if w.iorate > 0.0 => w.iorate,
            IoRate::Rate(r) => (r - fixed).max(0.0) * skew(w) / 100.0,
        } / sds.len() as f64;
        for &s in &sds {
            let sd = &p.sds[s];
            let g = Generator::new(w, sd, sd.size_bytes.unwrap_or(device_bytes)).map_err(|e| at_wd(format!("on sd={}: {e}", sd.name)))?;
            // With priorities each workload has its own arrivals: its own rate, its share of
            // the run's rate, or (iorate=max, no rate of its own) every thread it can get.
            let class = w.priority.filter(|_| prioritized).map(|rank| Class {
                rank,
                wd: w.name.clone(),
                rate_iops: match iorate {
                    IoRate::Max | IoRate::Curve if w.iorate == 0.0 => None,
                    IoRate::Max | IoRate::Curve => Some(w.iorate / sds.len() as f64),
                    IoRate::Rate(_) => Some(weight),
                },
            });
            gens.push(Gen { sd: s, generator: g, weight, class });
        }
    }
    Ok(gens)
}
