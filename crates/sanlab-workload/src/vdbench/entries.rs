//! A parameter file's entries: its items sorted into SDs, WDs and RDs (vdbench reads general
//! parameters, then hd=, sd=, wd=, rd=, in that order; Vdb/Vdbmain.java, `xx=default` sets the
//! defaults of the entries after it), each keyword resolved and set on its entry.

use super::keywords::{resolve, single, unknown, unmodelled, Arrivals, At, Rd, Sd, Seek, Wd, Xfer, DEFAULT_CURVE_PCT, DEFAULT_ELAPSED_S, DEFAULT_HITAREA_BYTES, DEFAULT_INTERVAL_S, DEFAULT_THREADS, ENTRY_IGNORED, GENERAL_KEYWORDS, RD_KEYWORDS, SD_KEYWORDS, WD_KEYWORDS};
use super::parm::{Files, Item};

/// A parsed parameter file (or inline keys): its definitions, in order.
pub(super) struct Parm {
    pub(super) sds: Vec<Sd>,
    pub(super) wds: Vec<Wd>,
    pub(super) rds: Vec<Rd>,
    /// The latest wd=default: what an RD with `sd=` and no `wd=` runs.
    pub(super) default_wd: Wd,
    /// Keywords accepted without effect, each once, in the order first seen.
    pub(super) ignored: Vec<&'static str>,
    /// concatenatesds=yes: each WD runs on one SD made of its SDs end to end.
    pub(super) concatenate: bool,
}

pub(super) fn default_sd() -> Sd {
    Sd { name: "default".into(), at: None, size_bytes: None, threads: DEFAULT_THREADS, hitarea_bytes: DEFAULT_HITAREA_BYTES, offset_bytes: 0, range: None, align_bytes: None, hitarea_forced: false }
}

pub(super) fn default_wd() -> Wd {
    Wd { name: "default".into(), at: None, sds: vec![], xfer: Xfer::Table(vec![(4096, 100.0)]), read_pct: 100.0, seek: Seek::Percent(100.0), rhpct: 0.0, whpct: 0.0, range: None, hotband: false, skew: 0.0, iorate: 0.0, stride_bytes: None, threads: None, streams: 0, priority: None }
}

pub(super) fn default_rd() -> Rd {
    Rd {
        name: "default".into(),
        at: None,
        wds: vec![],
        sds: None,
        iorate: None,
        iorates: vec![],
        fors: vec![],
        curve_pct: DEFAULT_CURVE_PCT.to_vec(),
        stopcurve_ms: None,
        elapsed_s: DEFAULT_ELAPSED_S,
        interval_s: DEFAULT_INTERVAL_S,
        warmup_s: None,
        arrivals: Arrivals::Exponential,
        maxdata: [None; 3],
    }
}

/// Which entry the keywords go to. `None` in an entry means its `default`.
enum Section {
    General,
    Host,
    Sd(Option<usize>),
    Wd(Option<usize>),
    Rd(Option<usize>),
}

/// Starts a new entry named `name`, or selects the defaults (`xx=default`); names are unique.
pub(super) fn start<T: Clone>(list: &mut Vec<T>, default: &T, name: &str, at: At, what: &str, name_of: fn(&T) -> &str, init: fn(&mut T, String, At)) -> Result<Option<usize>, String> {
    if name == "default" {
        return Ok(None);
    }
    if list.iter().any(|e| name_of(e) == name) {
        return Err(format!("{what}={name} is defined twice"));
    }
    let mut e = default.clone();
    init(&mut e, name.to_string(), at);
    list.push(e);
    Ok(Some(list.len() - 1))
}

/// Sorts the items of a parameter file into SDs, WDs and RDs (vdbench reads general parameters,
/// then hd=, sd=, wd=, rd=, in that order).
pub(super) fn parse_items(items: &[Item], files: &Files) -> Result<Parm, String> {
    let (mut dsd, mut dwd, mut drd) = (default_sd(), default_wd(), default_rd());
    let mut p = Parm { sds: vec![], wds: vec![], rds: vec![], default_wd: default_wd(), ignored: vec![], concatenate: false };
    let ignore = |ignored: &mut Vec<&'static str>, kw: &'static str| {
        if !ignored.contains(&kw) {
            ignored.push(kw);
        }
    };
    let mut section = Section::General;
    for item in items {
        let at = Some((item.file, item.line));
        let fail = |msg: String| files.at(item.file, item.line, msg);
        let name = || single(&item.keyword, &item.value).map(str::to_string).map_err(fail);
        let k = item.keyword.as_str();
        if matches!(k, "fsd" | "fwd" | "fwdrate") {
            return Err(fail(unmodelled(k, "file system workloads (fsd/fwd) are not modelled: use sd/wd")));
        }
        if k == "rg" {
            return Err(fail(unmodelled(k, "replay groups are not modelled: replay a trace with kind = \"trace\"")));
        }
        section = match (&section, k) {
            (Section::General | Section::Host, "hd" | "host") => Section::Host,
            (Section::General | Section::Host | Section::Sd(_), "sd") => Section::Sd(start(&mut p.sds, &dsd, &name()?, at, "sd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (Section::Sd(_) | Section::Wd(_), "wd") => Section::Wd(start(&mut p.wds, &dwd, &name()?, at, "wd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (_, "rd") => Section::Rd(start(&mut p.rds, &drd, &name()?, at, "rd", |e| &e.name, |e, n, a| (e.name, e.at) = (n, a)).map_err(fail)?),
            (Section::General, "wd") => return Err(fail("wd= before any sd=: vdbench reads sd= first".into())),
            (Section::Host, _) => continue,
            (Section::General, _) => {
                let kw = resolve(k, &GENERAL_KEYWORDS).ok_or_else(|| fail(unknown("general parameters", k, &GENERAL_KEYWORDS)))?;
                match kw {
                    "validate" | "journal" => return Err(fail(unmodelled(kw, "data validation is not modelled"))),
                    "concatenatesds" => {
                        p.concatenate = match single(kw, &item.value).map_err(fail)?.to_ascii_lowercase() {
                            v if v.starts_with('y') => true,
                            v if v.starts_with('n') => false,
                            v => return Err(fail(format!("concatenatesds=`{v}`: expected yes or no"))),
                        };
                        continue;
                    }
                    "loop" => return Err(fail(unmodelled(kw, "repeating every run is not modelled: run the scenario again with another --seed, or sweep seeds"))),
                    "fsd" | "fwd" => return Err(fail(unmodelled(kw, "file system workloads (fsd/fwd) are not modelled: use sd/wd"))),
                    "rg" => return Err(fail(unmodelled(kw, "replay groups are not modelled: replay a trace with kind = \"trace\""))),
                    // The others leave the I/O sanlab simulates as it is (data patterns, reporting,
                    // monitoring, commands around the runs): accepted and listed once as ignored.
                    _ => {
                        ignore(&mut p.ignored, kw);
                        continue;
                    }
                }
            }
            (Section::Sd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.sds[*i],
                    None => &mut dsd,
                };
                let kw = resolve(k, &SD_KEYWORDS).ok_or_else(|| fail(unknown(&format!("sd={}", target.name), k, &SD_KEYWORDS)))?;
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                let entry = format!("sd={}", target.name);
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
            (Section::Wd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.wds[*i],
                    None => &mut dwd,
                };
                let kw = if k == "sd" { "sd" } else { resolve(k, &WD_KEYWORDS).ok_or_else(|| fail(unknown(&format!("wd={}", target.name), k, &WD_KEYWORDS)))? };
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                let entry = format!("wd={}", target.name);
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
            (Section::Rd(i), _) => {
                let target = match i {
                    Some(i) => &mut p.rds[*i],
                    None => &mut drd,
                };
                let entry = format!("rd={}", target.name);
                let kw = match k {
                    "wd" => "wd",
                    "sd" => "sd",
                    _ => resolve(k, &RD_KEYWORDS).ok_or_else(|| fail(unknown(&entry, k, &RD_KEYWORDS)))?,
                };
                if ENTRY_IGNORED.contains(&kw) {
                    ignore(&mut p.ignored, kw);
                }
                target.set(kw, &item.value).map_err(|e| fail(format!("{entry}: {e}")))?;
                continue;
            }
        };
    }
    // WD_entry.checkParameters: a WD's own rate replaces its share of the run's rate.
    if let Some(w) = p.wds.iter().find(|w| w.skew != 0.0 && w.iorate != 0.0) {
        let msg = format!("wd={}: iorate= and skew= are mutually exclusive (vdbench): a workload gets its own rate or a share of the run's", w.name);
        return Err(match w.at {
            Some((f, l)) => files.at(f, l, msg),
            None => msg,
        });
    }
    p.default_wd = dwd;
    Ok(p)
}
