//! fio job files read as they are (HOWTO "Job file format", init.c `__parse_jobs_ini`):
//! `[job]` sections; `[global]` sets defaults for the jobs *below* it, and there may be several;
//! `include file` pulls options into the current section (nested includes allowed, included files
//! hold no sections); `${VAR}` expands from the environment (to nothing when unset, as in fio);
//! lines whose first non-blank character is `;` or `#` are comments; options may be bare flags.
//!
//! Each job becomes job instances through the same option reader as the `fio` kind, with fio's
//! own units and defaults (see `fio.rs`).

use super::job::FioJob;
use super::options::{lookup, own_option, unknown_option, Effect};
use super::values::{Dialect, OptionValues};
use crate::face::{JobSet, JobSource};
use crate::input::at_line;
use crate::plan::FioPlace;
use sanlab_spec::names::{escaped, file_name};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use std::path::{Path, PathBuf};

pub const KIND: Kind<dyn JobSource> = Kind { name: "fio_file", summary: "fio job files read as they are: global sections, several jobs, include, ${VAR}, numjobs", build };

/// Include chains longer than this are taken for a loop.
pub(super) const MAX_INCLUDE_DEPTH: usize = 16;
/// Longest line of a job file or an include: fio reads each line into a buffer of
/// `OPT_LEN_MAX` (8192) bytes (parse.h) and would read the rest of a longer one as another line.
const MAX_LINE_BYTES: usize = 8192;
/// Most characters of a line a message shows.
const SHOWN_CHARS: usize = 60;
/// Longest word taken for an option's name (fio's longest is 29 characters).
const MAX_OPTION_NAME_CHARS: usize = 64;
/// fio's reserved keywords depend on the machine fio runs on (HOWTO "Reserved keywords").
const MACHINE_KEYWORDS: [&str; 3] = ["$ncpus", "$mb_memory", "$pagesize"];

/// One option line: canonical option name, value, and where it was written.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) name: &'static str,
    pub(super) value: String,
    file: usize,
    line: usize,
    /// `${VAR}`s in the line that were not set (fio expands them to nothing).
    unset_vars: Vec<String>,
    /// Given without a value (a flag): fio leaves it out of its `global options`.
    bare: bool,
}

#[derive(Debug)]
pub(super) struct JobSection {
    /// Unique in its file (a repeated section name gets `-2`, `-3`, ...).
    pub(super) name: String,
    /// As written: fio's `jobname`.
    pub(super) section: String,
    pub(super) file: usize,
    pub(super) line: usize,
    /// The globals above it, then its own options, in order.
    pub(super) entries: Vec<Entry>,
    /// How many of `entries` are globals.
    pub(super) globals: usize,
}

/// The files read (the job file and its includes), for naming them in messages; or, for a
/// command line, its arguments (an entry's `line` is then the argument's number).
#[derive(Default, Debug)]
pub(super) struct Files(pub(super) Vec<PathBuf>, pub(super) Option<Vec<String>>);

impl Files {
    fn add(&mut self, p: PathBuf) -> usize {
        self.0.push(p);
        self.0.len() - 1
    }

    pub(super) fn at(&self, file: usize, line: usize, msg: impl std::fmt::Display) -> String {
        match &self.1 {
            Some(args) => format!("cmdline argument {line} `{}`: {msg}", excerpt(&args[line - 1])),
            None => at_line(&self.0[file], line, msg),
        }
    }
}

/// Replaces `${VAR}` with the environment's value (fio `fio_option_dup_subs`), returning the
/// names that were unset.
fn expand_env(s: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut unset = vec![];
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let Some(len) = rest[i + 2..].find('}') else { break };
        out.push_str(&rest[..i]);
        let var = &rest[i + 2..i + 2 + len];
        match std::env::var(var) {
            Ok(v) => out.push_str(&v),
            Err(_) => unset.push(var.to_string()),
        }
        rest = &rest[i + 3 + len..];
    }
    out.push_str(rest);
    (out, unset)
}

/// A line as a message shows it: control characters escaped, at most [`SHOWN_CHARS`].
fn excerpt(line: &str) -> String {
    let shown = escaped(&line.chars().take(SHOWN_CHARS).collect::<String>());
    if line.chars().nth(SHOWN_CHARS).is_some() { format!("{shown}…") } else { shown }
}

/// Whether `key` can be an option's name (letters, digits, `_`, `-`): a line whose key is not
/// is not a job file's, and messages do not show it (an `include` of /etc/passwd printed its
/// first line).
fn option_shaped(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_OPTION_NAME_CHARS && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// The message for a line that is no job file's: its length, not its text.
fn not_a_job_file_line(t: &str) -> String {
    format!("not a line of a fio job file ({} bytes, not shown): expected `[section]`, `option=value`, `option` or `include file`", t.len())
}

/// The key of an option line (before `=`).
fn line_key(t: &str) -> &str {
    t.split_once('=').map_or(t, |(k, _)| k).trim()
}

/// A line longer than fio reads is an error naming its length, not its text.
fn check_length(raw: &str, file: usize, line: usize, files: &Files) -> Result<(), String> {
    if raw.len() > MAX_LINE_BYTES {
        return Err(files.at(file, line, format!("a line of {} bytes (not shown): expected at most {MAX_LINE_BYTES}, the longest line fio reads (OPT_LEN_MAX)", raw.len())));
    }
    Ok(())
}

/// Reads the option lines of an included file into `sink`, following its includes.
fn read_options(text: &str, file: usize, files: &mut Files, depth: usize, sink: &mut Vec<Entry>) -> Result<(), String> {
    for (n, raw) in text.lines().enumerate() {
        check_length(raw, file, n + 1, files)?;
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        if t.starts_with('[') {
            return Err(files.at(file, n + 1, format!("`{}`: included files may not contain sections (fio: \"No new sections in included files\")", excerpt(t))));
        }
        option_line(t, file, n + 1, files, depth, sink)?;
    }
    Ok(())
}

/// One option line (or an `include`) of the current section.
pub(super) fn option_line(t: &str, file: usize, line: usize, files: &mut Files, depth: usize, sink: &mut Vec<Entry>) -> Result<(), String> {
    if let Some(name) = t.strip_prefix("include").filter(|r| r.starts_with(char::is_whitespace)).map(str::trim) {
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(files.at(file, line, format!("include `{name}`: includes nest more than {MAX_INCLUDE_DEPTH} deep (a loop?)")));
        }
        // Relative names are relative to the including file, as fio falls back to.
        let dir = files.0[file].parent().unwrap_or(Path::new(".")).to_path_buf();
        let path = dir.join(name);
        let text = crate::input::read_text(&path).map_err(|e| files.at(file, line, format!("include `{name}`: cannot read {}: {e}", path.display())))?;
        let included = files.add(path);
        return read_options(&text, included, files, depth + 1, sink);
    }
    let (expanded, unset_vars) = expand_env(t);
    if let Some(k) = MACHINE_KEYWORDS.iter().find(|k| expanded.contains(*k)) {
        return Err(files.at(file, line, format!("`{k}` depends on the machine fio runs on: write the number instead")));
    }
    // A `;` or `#` after a blank starts a comment: fio would read it into the value.
    let body = match expanded.find([';', '#']).filter(|&i| i > 0 && expanded[..i].ends_with(char::is_whitespace)) {
        Some(i) => expanded[..i].trim_end(),
        None => expanded.as_str(),
    };
    let (key, value) = match body.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (body.trim(), None),
    };
    if !option_shaped(key) {
        return Err(files.at(file, line, not_a_job_file_line(t)));
    }
    if own_option(key).is_some() && lookup(key).is_none() {
        return Err(files.at(file, line, format!("`{key}` is an option of fio's command line, not of a job section (fio: \"Bad option\"): remove it from the file")));
    }
    let Some(option) = lookup(key).filter(|o| o.effect != Effect::Unmodelled) else {
        // An engine's own option (spdk_bdev's spdk_json_conf, an external engine's): the engine
        // is what sanlab cannot run, so the error names it.
        if let Some(engine) = sink.iter().rev().find(|e| e.name == "ioengine").map(|e| e.value.trim().to_string()) {
            if let Err(why) = super::job::engine_is_sync(&engine) {
                return Err(files.at(file, line, format!("`{key}` is an option of ioengine={engine}: {why}")));
            }
        }
        return Err(files.at(file, line, unknown_option(key)));
    };
    let bare = value.is_none();
    let value = match value {
        Some(v) => v.to_string(),
        // A bare option is a flag set to 1 (fio bool options); others need their value.
        None if matches!(option.effect, Effect::Ignored | Effect::Report) || matches!(option.ty, "boolean" | "flag") => "1".to_string(),
        None => return Err(files.at(file, line, format!("option `{key}` needs a value, e.g. `{key}=...`"))),
    };
    sink.push(Entry { name: option.name, value, file, line, unset_vars, bare });
    Ok(())
}

/// Reads a job file into its job sections.
/// A job file or command line read: its files, its job sections, and every global option in it.
pub(super) type Parsed = (Files, Vec<JobSection>, Vec<Entry>);

fn read_job_file(path: &Path) -> Result<Parsed, String> {
    let mut files = Files::default();
    let text = crate::input::read_text(path).map_err(|e| format!("cannot read fio job file {}: {e}", path.display()))?;
    let file = files.add(path.to_path_buf());
    let mut globals: Vec<Entry> = vec![];
    let mut jobs: Vec<JobSection> = vec![];
    // Where options go: None before the first section, Some(None) in a global section.
    let mut current: Option<Option<usize>> = None;
    for (n, raw) in text.lines().enumerate() {
        check_length(raw, file, n + 1, &files)?;
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        if t.starts_with('[') {
            let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')).map(str::trim) else {
                return Err(files.at(file, n + 1, format!("unterminated section header `{}`: expected `[name]`", excerpt(t))));
            };
            if name.is_empty() {
                return Err(files.at(file, n + 1, "empty section name `[]`"));
            }
            // The section names a job, and so a file of the run folder.
            file_name(name).map_err(|e| files.at(file, n + 1, format!("section {e}")))?;
            // fio takes any section whose name starts with "global" as global (strncmp(name, "global", 6)).
            if name.starts_with("global") {
                current = Some(None);
            } else {
                let mut unique = name.to_string();
                let mut k = 1;
                while jobs.iter().any(|j| j.name == unique) {
                    k += 1;
                    unique = format!("{name}-{k}");
                }
                jobs.push(JobSection { name: unique, section: name.to_string(), file, line: n + 1, entries: globals.clone(), globals: globals.len() });
                current = Some(Some(jobs.len() - 1));
            }
            continue;
        }
        let sink = match current {
            None if !option_shaped(line_key(t)) => return Err(files.at(file, n + 1, not_a_job_file_line(t))),
            None => return Err(files.at(file, n + 1, format!("option `{}` is outside of a [job] section", excerpt(t)))),
            Some(None) => &mut globals,
            Some(Some(j)) => &mut jobs[j].entries,
        };
        option_line(t, file, n + 1, &mut files, 0, sink)?;
    }
    if jobs.is_empty() {
        return Err(format!("{}: no job sections: add one, e.g. `[job1]`", path.display()));
    }
    Ok((files, jobs, globals))
}

/// The last entry of `name` in a section.
fn last<'s>(section: &'s JobSection, name: &str) -> Option<&'s Entry> {
    section.entries.iter().rev().find(|e| e.name == name)
}

/// fio's job order (HOWTO `stonewall`, `wait_for`): per section, the sections whose jobs must
/// finish before its jobs start. A stonewall job waits for every job above it; `wait_for=name`
/// for every clone of that job, which fio requires to be defined above (no forward references,
/// so no loops).
fn ordering(sections: &[JobSection], files: &Files) -> Result<Vec<Vec<usize>>, String> {
    let mut after = vec![];
    for (i, s) in sections.iter().enumerate() {
        let mut waits = vec![];
        if last(s, "stonewall").is_some_and(|e| !matches!(e.value.trim(), "0" | "false" | "no" | "off")) {
            waits.extend(0..i);
        }
        if let Some(e) = last(s, "wait_for") {
            let name = e.value.trim();
            match sections[..i].iter().position(|p| p.name == name) {
                Some(p) => waits.push(p),
                None if sections[i..].iter().any(|p| p.name == name) => {
                    let what = if s.name == name { "itself".to_string() } else { format!("job `{name}`, defined below it") };
                    return Err(files.at(e.file, e.line, format!("job `{}`: wait_for=`{name}` waits for {what}; fio waits only for jobs defined above (no forward references), so the jobs would wait for each other forever: wait for a job above, or move `{name}` above `{}`", s.name, s.name)));
                }
                None => {
                    let names = sections[..i].iter().map(|p| p.name.as_str());
                    return Err(files.at(e.file, e.line, format!("job `{}`: wait_for=`{name}`: no job of that name above this one{}", s.name, did_you_mean(name, names))));
                }
            }
        }
        waits.sort_unstable();
        waits.dedup();
        after.push(waits);
    }
    Ok(after)
}

/// Builds the sections picked (all when `picked` is empty) into a job set with fio's order; a
/// wait for a job that was not picked is dropped, as that job does not run.
pub(super) fn job_set(sections: &[JobSection], globals: &[Entry], files: &Files, picked: &[String], device_size_bytes: u64) -> Result<JobSet, String> {
    let after = ordering(sections, files)?;
    let chosen: Vec<usize> = (0..sections.len()).filter(|&i| picked.is_empty() || picked.contains(&sections[i].name)).collect();
    let mut set = JobSet::default();
    let mut flows = std::collections::BTreeMap::new();
    let mut built = vec![];
    for &i in &chosen {
        let mut job = build_job(&sections[i], files, device_size_bytes)?;
        job.join_flow(&mut flows);
        built.push(job);
    }
    // fio's reporting groups (init.c): a stonewall or new_group job after the first starts one.
    let any_exitall = built.iter().any(|j| j.exitall);
    let any_rule = built.iter().any(|j| j.exit.is_some());
    let mut group = 0;
    let global_options = given(globals);
    for (k, (&i, mut job)) in chosen.iter().zip(built).enumerate() {
        let starts_group = ["stonewall", "new_group"].iter().any(|o| last(&sections[i], o).is_some_and(|e| !matches!(e.value.trim(), "0" | "false" | "no" | "off")));
        if starts_group && k > 0 {
            group += 1;
        }
        job.set_exit(group, any_exitall, any_rule);
        let s = &sections[i];
        let mut job_options = given(&s.entries[s.globals..]);
        // On a command line `--name` is one of the job's options, and fio lists it.
        if files.1.is_some() {
            job_options.insert(0, ("name".into(), s.name.clone()));
        }
        job.set_place(FioPlace { name: s.section.clone(), group, global_options: global_options.clone(), job_options });
        set.jobs.push((sections[i].name.clone(), Box::new(job) as Box<dyn JobSource>));
        set.after.push(after[i].iter().filter_map(|p| chosen.iter().position(|c| c == p)).collect());
    }
    Ok(set)
}

/// Options given with a value, as written (the last of a repeated one), as fio's JSON lists them.
fn given(entries: &[Entry]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    for e in entries.iter().filter(|e| !e.bare) {
        out.retain(|(n, _)| n != e.name);
        out.push((e.name.to_string(), e.value.clone()));
    }
    out
}

/// Builds one job section into a fio job; option errors name the line that set the option.
fn build_job(section: &JobSection, files: &Files, device_size_bytes: u64) -> Result<FioJob, String> {
    let mut values = OptionValues::default();
    for e in section.entries.iter().filter(|e| lookup(e.name).is_some_and(|o| matches!(o.effect, Effect::Model | Effect::Report))) {
        values.set(e.name, e.value.clone());
    }
    let mut ignored: Vec<&'static str> = section.entries.iter().filter(|e| lookup(e.name).is_some_and(|o| o.effect == Effect::Ignored)).map(|e| e.name).collect();
    ignored.sort_unstable();
    ignored.dedup();
    let mut job = FioJob::from_options(&values, Dialect::JobFile { device_size_bytes }).map_err(|e| match section.entries.iter().rev().find(|x| x.name == e.option) {
        Some(x) => {
            let unset = x.unset_vars.iter().map(|v| format!(" (${{{v}}} is not set, so it expanded to nothing)")).collect::<String>();
            files.at(x.file, x.line, format!("job `{}`: option `{}`: {}{unset}", section.name, e.option, e.message))
        }
        None => files.at(section.file, section.line, format!("job `{}`: option `{}`: {}", section.name, e.option, e.message)),
    })?;
    job.ignored = ignored;
    Ok(job)
}

fn build(spec: &Spec) -> SpecResult<Box<dyn JobSource>> {
    let path = spec.path("file", "fio job file, relative to the scenario file")?;
    let picked = spec.strings("jobs", "run only these jobs (section names); default: every job")?;
    let device_size_bytes = spec.size_bytes("device_size", Some((100 << 30, "100GiB")), "disk size for jobs without size= and for sizes in percent (fio would ask the device)")?;
    if spec.is_describing() {
        return Ok(Box::new(JobSet::default()));
    }
    let path = path.ok_or_else(|| spec.error("file", "is required: the fio job file, e.g. \"jobs/oltp.fio\""))?;
    let (files, sections, globals) = read_job_file(&path).map_err(|e| spec.error("file", e))?;
    let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    for p in &picked {
        if !names.contains(&p.as_str()) {
            return Err(spec.error("jobs", format!("{} has no job `{p}` (jobs: {}){}", path.display(), names.join(", "), did_you_mean(p, names.iter().copied()))));
        }
    }
    Ok(Box::new(job_set(&sections, &globals, &files, &picked, device_size_bytes).map_err(|e| spec.error("file", e))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sanlab-fio-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn profile_options_are_accepted_as_fio_accepts_them() {
        // fio's own examples/steadystate.fio sets the tiobench profile's `threads` in [global].
        let d = tmpdir("profile");
        let p = write(&d, "ss.fio", "[global]\nthreads=1\n[j]\nrw=read\nload=1\n");
        let (_, jobs, _) = read_job_file(&p).unwrap();
        assert_eq!(jobs.len(), 1);
        let p = write(&d, "typo.fio", "[global]\nthreadz=1\n[j]\nrw=read\n");
        assert!(read_job_file(&p).unwrap_err().contains("typo.fio:2: unknown fio option `threadz`"));
    }

    #[test]
    fn globals_apply_below_only_and_includes_nest() {
        let d = tmpdir("scope");
        write(&d, "common.fio", "; shared settings\niodepth=8\ninclude deeper.fio\n");
        write(&d, "deeper.fio", "ioengine=libaio\n");
        let p = write(&d, "jobs.fio", "[first]\nrw=randread\n\n[global]\nbs=8k\ninclude common.fio\n\n[second]\n# a comment\nrw=randwrite\n");
        let (_, jobs, _) = read_job_file(&p).unwrap();
        assert_eq!(jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["first", "second"]);
        assert_eq!(jobs[0].entries.iter().map(|e| e.name).collect::<Vec<_>>(), ["rw"]);
        assert_eq!(jobs[1].entries.iter().map(|e| (e.name, e.value.as_str())).collect::<Vec<_>>(), [("bs", "8k"), ("iodepth", "8"), ("ioengine", "libaio"), ("rw", "randwrite")]);
    }

    #[test]
    fn errors_show_no_text_of_a_file_that_is_no_job_file() {
        // `include=/etc/passwd` printed its first line. Includes are read wherever they are, as
        // fio reads them; a line that is not a job file's is named by its number and length.
        let outside = tmpdir("outside-secret");
        let secret = write(&outside, "passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n");
        let d = tmpdir("include-secret");
        let p = write(&d, "jobs.fio", &format!("[j]\nrw=read\ninclude {}\n", secret.display()));
        let e = read_job_file(&p).unwrap_err();
        assert_eq!(e, format!("{}:1: not a line of a fio job file (31 bytes, not shown): expected `[section]`, `option=value`, `option` or `include file`", secret.display()));
        // The same file given as the job file itself.
        let e = read_job_file(&secret).unwrap_err();
        assert!(e.ends_with("passwd:1: not a line of a fio job file (31 bytes, not shown): expected `[section]`, `option=value`, `option` or `include file`"), "{e}");
        // An option's line outside a section is still shown (a job file's), bounded and escaped.
        let p = write(&d, "long.fio", &format!("bs=\u{1b}[2J{}\n[j]\n", "4".repeat(5000)));
        let e = read_job_file(&p).unwrap_err();
        assert!(e.ends_with(&format!("long.fio:1: option `bs=\\u{{1b}}[2J{}…` is outside of a [job] section", "4".repeat(53))), "{e}");
        // fio reads lines of at most 8192 bytes; a longer one is named by its length.
        let p = write(&d, "huge.fio", &format!("[j]\nrw=read\nbs={}\n", "x".repeat(10_000)));
        assert!(read_job_file(&p).unwrap_err().ends_with("huge.fio:3: a line of 10003 bytes (not shown): expected at most 8192, the longest line fio reads (OPT_LEN_MAX)"));
        let p = write(&d, "header.fio", &format!("[j{}\n", "y".repeat(1000)));
        assert!(read_job_file(&p).unwrap_err().ends_with(&format!("header.fio:1: unterminated section header `[j{}…`: expected `[name]`", "y".repeat(58))));
        // A job file's typo keeps its name and suggestion.
        let p = write(&d, "typo.fio", "[j]\nrw=read\niodepht=4\n");
        assert!(read_job_file(&p).unwrap_err().ends_with("typo.fio:3: unknown fio option `iodepht`; did you mean `iodepth`?"));
    }

    #[test]
    fn env_expansion_flags_and_errors() {
        assert_eq!(expand_env("size=${SANLAB_TEST_UNSET_VAR}m"), ("size=m".to_string(), vec!["SANLAB_TEST_UNSET_VAR".to_string()]));
        let d = tmpdir("errors");
        let p = write(&d, "a.fio", "[j]\ntime_based\nbs\n");
        assert!(read_job_file(&p).unwrap_err().ends_with("a.fio:3: option `bs` needs a value, e.g. `bs=...`"));
        let p = write(&d, "b.fio", "rw=read\n[j]\n");
        assert!(read_job_file(&p).unwrap_err().ends_with("b.fio:1: option `rw=read` is outside of a [job] section"));
        let p = write(&d, "c.fio", "[j]\nnumjobs=$ncpus\n");
        assert!(read_job_file(&p).unwrap_err().contains("c.fio:2: `$ncpus` depends on the machine"));
    }

    #[test]
    fn the_option_table_names_every_option_once() {
        use super::super::options::{coverage, OPTIONS};
        let mut names: Vec<&str> = OPTIONS.iter().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied())).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a name or alias twice");
        let [model, ignored, unmodelled] = coverage();
        assert_eq!(model + ignored + unmodelled, OPTIONS.len());
        // A few of fio's everyday options, one of each effect.
        for (name, effect) in [("timeout", Effect::Model), ("write_lat_log", Effect::Report), ("num_range", Effect::Unmodelled), ("hipri", Effect::Ignored)] {
            assert_eq!(lookup(name).map(|o| o.effect), Some(effect), "{name}");
        }
        assert_eq!(unknown_option("num_range"), "fio option `num_range` cannot be modelled: trims are not modelled");
    }
}
