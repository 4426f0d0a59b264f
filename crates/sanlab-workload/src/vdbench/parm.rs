//! vdbench parameter files, read as vdbench reads them (Vdb/Vdb_scan.java, 5.04.06): lines that
//! start with `*`, `#` or `/` are comments and a line starting with `eof` ends the file; a line
//! ends at its first blank outside quotes (so `* notes` may follow a parameter); a line ending in
//! a comma continues on the next; `include=file` reads another file (not nested). Each line holds
//! `keyword=value` items separated by commas, a value may be a list in parentheses, and keywords
//! are case-insensitive. Variables (`$name`, or `!name`) take the values given with the file
//! ([`Vars`]).

use crate::input::at_line;
use sanlab_spec::did_you_mean;
use std::path::{Path, PathBuf};

/// Values for a parameter file's variables, as vdbench takes `name=value` from its command line
/// (`./vdbench -f parm threads=8`; Vdb/InsertHosts.java, 5.04.06): each line read has every
/// `$name` and `!name` replaced by the value, as plain text, before anything else is read from
/// it. vdbench stops on a line that still holds `=$` or `=!` (a variable without a value;
/// `$host` and `!host` excepted, which its multi-host replication fills), and on a value given
/// for a variable no line used.
#[derive(Default)]
pub(crate) struct Vars {
    /// (name, value, used), the longest names first: vdbench replaces in its hash map's order,
    /// so of `$th` and `$threads` either may go first; the longer first is our choice.
    list: Vec<(String, String, bool)>,
}

impl Vars {
    pub fn new(given: &[(String, String)]) -> Vars {
        let mut list: Vec<(String, String, bool)> = given.iter().map(|(n, v)| (n.clone(), v.clone(), false)).collect();
        list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Vars { list }
    }

    /// The line with the variables replaced (InsertHosts.substituteLine).
    fn substitute(&mut self, line: &str) -> String {
        let mut out = line.to_string();
        for (name, value, used) in &mut self.list {
            for mark in ['$', '!'] {
                let var = format!("{mark}{name}");
                if out.contains(&var) {
                    *used = true;
                    out = out.replace(&var, value);
                }
            }
        }
        out
    }

    /// The error for a variable left without a value in `line` (after substitution): one after
    /// `=` as vdbench checks it, or a `$name` anywhere in the parameters (vdbench would pass it
    /// on as text, and fail on it as a number or open a LUN named with a `$`).
    fn unset(&self, line: &str, params: Option<&str>) -> Option<String> {
        if line.contains("$host") || line.contains("!host") {
            return None;
        }
        let after = |text: &str, mark: &str| text.find(mark).map(|i| text[i + mark.len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>());
        let (mark, name) = ["=$", "=!"].iter().find_map(|m| after(line, m).map(|n| (&m[1..], n))).or_else(|| params.and_then(|p| after(p, "$").filter(|n| !n.is_empty()).map(|n| ("$", n))))?;
        let names: Vec<&str> = self.list.iter().map(|v| v.0.as_str()).collect();
        let given = if names.is_empty() { "no vars are given".to_string() } else { format!("vars given: {}", names.join(", ")) };
        Some(format!(
            "`{mark}{name}` has no value ({given}): vdbench takes it from its command line (./vdbench -f file {name}=...); give it in the job's vars, e.g. vars = {{ {name} = \"...\" }}{}",
            did_you_mean(&name, names.iter().copied())
        ))
    }

    /// Variables given that no line used: vdbench stops on them ("Unused parameter substitution").
    pub fn unused(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.list.iter().filter(|v| !v.2).map(|v| v.0.as_str()).collect();
        out.sort_unstable();
        out
    }
}

/// One `keyword=value` of a parameter file, with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    /// Lowercased, as vdbench compares them.
    pub keyword: String,
    pub value: String,
    pub file: usize,
    pub line: usize,
}

/// The files read (the parameter file and its includes), for naming them in messages.
#[derive(Default, Debug)]
pub(crate) struct Files(pub Vec<PathBuf>);

impl Files {
    pub fn at(&self, file: usize, line: usize, msg: impl std::fmt::Display) -> String {
        at_line(&self.0[file], line, msg)
    }
}

/// A line up to its first blank outside quotes, without the quotes; and what followed the blank.
fn cut_at_blank(line: &str) -> (String, &str) {
    let mut out = String::new();
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return (out, line[i..].trim()),
            c => out.push(c),
        }
    }
    (out, "")
}

/// Splits a logical line into items at commas outside parentheses.
fn split_items(text: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// Physical lines of one file that carry parameters: (line number, text up to the first blank),
/// variables replaced. As vdbench reads them (Vdb_scan): every line of the parameter file up to
/// `eof` is substituted and checked, comments too; an included file's comments are dropped
/// first.
fn parameter_lines(text: &str, file: usize, files: &Files, vars: &mut Vars) -> Result<Vec<(usize, String)>, String> {
    let mut out = vec![];
    for (n, raw) in text.lines().enumerate() {
        let comment = |t: &str| t.is_empty() || t.starts_with(['*', '#', '/']);
        if file > 0 && comment(raw.trim()) {
            continue;
        }
        let line = vars.substitute(raw);
        let t = line.trim();
        if t.starts_with("eof") {
            break;
        }
        if comment(t) {
            if let Some(e) = vars.unset(t, None) {
                return Err(files.at(file, n + 1, format!("{e} (vdbench checks comment lines too)")));
            }
            continue;
        }
        let (params, rest) = cut_at_blank(t);
        if let Some(e) = vars.unset(t, Some(&params)) {
            return Err(files.at(file, n + 1, e));
        }
        // vdbench ignores what follows a blank; a parameter there would be lost without a word.
        if rest.contains('=') && !rest.starts_with(['*', '#', '/']) {
            return Err(files.at(file, n + 1, format!("`{rest}` follows a blank, and vdbench ignores everything after the first blank of a line: remove the blank, or start a comment with `*`")));
        }
        out.push((n + 1, params));
    }
    Ok(out)
}

/// Reads a parameter file and its includes into items, in order, with `vars` substituted.
pub(crate) fn read_items(path: &Path, vars: &mut Vars) -> Result<(Files, Vec<Item>), String> {
    let mut files = Files(vec![path.to_path_buf()]);
    let text = crate::input::read_text(path).map_err(|e| format!("cannot read vdbench parameter file {}: {e}", path.display()))?;
    let mut lines = vec![];
    for (n, line) in parameter_lines(&text, 0, &files, vars)? {
        let Some(name) = line.strip_prefix("include=") else {
            lines.push((0, n, line));
            continue;
        };
        // Relative names are relative to the including file (Vdb_scan.readIncludeFile).
        let inc = path.parent().unwrap_or(Path::new(".")).join(name);
        let inc_text = crate::input::read_text(&inc).map_err(|e| files.at(0, n, format!("include={name}: cannot read {}: {e}", inc.display())))?;
        files.0.push(inc);
        let f = files.0.len() - 1;
        for (m, l) in parameter_lines(&inc_text, f, &files, vars)? {
            if l.starts_with("include=") {
                return Err(files.at(f, m, "include= inside an included file: vdbench does not allow nested includes"));
            }
            lines.push((f, m, l));
        }
    }
    // Join lines that end in a comma with the next, then split into items.
    let mut items = vec![];
    let mut pending: Option<(usize, usize, String)> = None;
    for (f, n, line) in lines {
        let (f0, n0, text) = match pending.take() {
            Some((f0, n0, mut acc)) => {
                acc.push_str(&line);
                (f0, n0, acc)
            }
            None => (f, n, line),
        };
        if text.ends_with(',') {
            pending = Some((f0, n0, text));
            continue;
        }
        push_items(&text, f0, n0, &files, &mut items)?;
    }
    if let Some((f, n, text)) = pending {
        push_items(&text, f, n, &files, &mut items)?;
    }
    Ok((files, items))
}

fn push_items(text: &str, file: usize, line: usize, files: &Files, items: &mut Vec<Item>) -> Result<(), String> {
    if text.matches('(').count() != text.matches(')').count() {
        return Err(files.at(file, line, format!("`{text}`: unmatched parenthesis")));
    }
    for item in split_items(text) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(files.at(file, line, format!("`{item}`: expected keyword=value")));
        };
        let keyword = k.trim().to_ascii_lowercase();
        if keyword.len() < 2 {
            return Err(files.at(file, line, format!("`{item}`: a keyword has at least 2 characters (vdbench)")));
        }
        items.push(Item { keyword, value: v.trim().to_string(), file, line });
    }
    Ok(())
}

/// The values of a parameter: `(a,b,c)` gives three, anything else one.
pub(crate) fn values(value: &str) -> Vec<&str> {
    let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')).unwrap_or(value);
    inner.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// Most values one range may expand to (vdbench's parser holds 10,240).
const MAX_RANGE_VALUES: usize = 10_240;

/// Names of a list, with vdbench's name ranges expanded (Var_parms.handle_alpha): inside
/// parentheses, `sd1-sd4` is sd1, sd2, sd3, sd4; both ends share the letters before their
/// trailing number, and the number counts up.
pub(crate) fn names(value: &str) -> Result<Vec<String>, String> {
    let parenthesised = value.starts_with('(');
    let mut out = vec![];
    for v in values(value) {
        let Some((a, b)) = v.split_once('-').filter(|_| parenthesised) else {
            out.push(v.to_string());
            continue;
        };
        let split = |s: &str| {
            let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            (s[..s.len() - digits].to_string(), s[s.len() - digits..].parse::<u64>().ok())
        };
        let ((pa, na), (pb, nb)) = (split(a), split(b));
        let (Some(na), Some(nb)) = (na, nb) else {
            return Err(format!("`{v}`: a name range ends in numbers on both sides, e.g. (sd1-sd8)"));
        };
        if pa != pb || na >= nb {
            return Err(format!("`{v}`: a name range keeps its letters and counts up, e.g. ({pa}{na}-{pa}{})", na + 1));
        }
        if nb - na >= MAX_RANGE_VALUES as u64 {
            return Err(format!("`{v}`: more than {MAX_RANGE_VALUES} names"));
        }
        // vdbench reads the numbers as integers: sd01-sd03 gives sd01, sd2, sd3.
        out.push(a.to_string());
        out.extend((na + 1..=nb).map(|n| format!("{pa}{n}")));
    }
    Ok(out)
}

/// Numbers of a list, with vdbench's numeric ranges expanded (Var_parms.handle_num): inside
/// parentheses `lo-hi` is followed by a step, or by `d` to double (halve when counting down):
/// `(1-64,d)` is 1, 2, 4, ..., 64 and `(10-50,10)` is 10, 20, ..., 50.
pub(crate) fn numbers(value: &str, parse: &dyn Fn(&str) -> Result<f64, String>) -> Result<Vec<f64>, String> {
    let parenthesised = value.starts_with('(');
    let list = values(value);
    let mut out: Vec<f64> = vec![];
    let mut i = 0;
    while i < list.len() {
        let v = list[i];
        i += 1;
        let Some((a, b)) = v.split_once('-').filter(|(a, _)| parenthesised && !a.is_empty()) else {
            out.push(parse(v)?);
            continue;
        };
        let (lo, hi) = (parse(a)?, parse(b)?);
        let Some(step) = list.get(i) else {
            return Err(format!("`{v}`: a range is followed by a step or `d` (double), e.g. ({v},d)"));
        };
        i += 1;
        let mut x = lo;
        let more = |x: f64| if step.eq_ignore_ascii_case("d") && lo > hi { x >= hi } else { x <= hi };
        let next: Box<dyn Fn(f64) -> f64> = if step.eq_ignore_ascii_case("d") {
            if lo <= 0.0 {
                return Err(format!("`{v}`: doubling starts above 0"));
            }
            if lo > hi { Box::new(|x| x / 2.0) } else { Box::new(|x| x * 2.0) }
        } else {
            let s = parse(step)?;
            if s <= 0.0 {
                return Err(format!("`{v},{step}`: the step must be positive"));
            }
            Box::new(move |x| x + s)
        };
        while more(x) {
            if out.len() >= MAX_RANGE_VALUES {
                return Err(format!("`{v}`: more than {MAX_RANGE_VALUES} values"));
            }
            out.push(x);
            x = next(x);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_items_continuations_and_comments() {
        let d = std::env::temp_dir().join(format!("sanlab-vdb-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("inc.vdb"), "* shared SD\nsd=sd1,lun=/dev/sdb,threads=4\n").unwrap();
        let p = d.join("a.vdb");
        std::fs::write(&p, "include=inc.vdb\nwd=wd1,sd=sd1,\n  xfersize=(4k,50,8k,50),rdpct=70   * trailing note\nRD=run1,wd=wd1,iorate=max\neof\nrd=ignored,wd=wd1\n").unwrap();
        let (files, items) = read_items(&p, &mut Vars::default()).unwrap();
        let kv: Vec<(&str, &str, usize, usize)> = items.iter().map(|i| (i.keyword.as_str(), i.value.as_str(), i.file, i.line)).collect();
        assert_eq!(
            kv,
            [
                ("sd", "sd1", 1, 2), ("lun", "/dev/sdb", 1, 2), ("threads", "4", 1, 2),
                ("wd", "wd1", 0, 2), ("sd", "sd1", 0, 2), ("xfersize", "(4k,50,8k,50)", 0, 2), ("rdpct", "70", 0, 2),
                ("rd", "run1", 0, 4), ("wd", "wd1", 0, 4), ("iorate", "max", 0, 4),
            ]
        );
        assert_eq!(files.0.len(), 2);
        assert_eq!(values("(4k,50,8k,50)"), ["4k", "50", "8k", "50"]);
        std::fs::write(&p, "sd=sd1, threads=4\n").unwrap();
        assert!(read_items(&p, &mut Vars::default()).unwrap_err().ends_with("a.vdb:1: `threads=4` follows a blank, and vdbench ignores everything after the first blank of a line: remove the blank, or start a comment with `*`"));
        std::fs::write(&p, "sd=sd1,xfersize=(4k,50\n").unwrap();
        assert!(read_items(&p, &mut Vars::default()).unwrap_err().contains("unmatched parenthesis"));
        std::fs::write(&p, "include=missing.vdb\n").unwrap();
        assert_eq!(names("(sd1-sd3,sd9)").unwrap(), ["sd1", "sd2", "sd3", "sd9"]);
        assert_eq!(names("(sd01-sd03)").unwrap(), ["sd01", "sd2", "sd3"], "vdbench counts in integers");
        assert_eq!(names("wd*").unwrap(), ["wd*"]);
        assert!(names("(sd1-wd3)").unwrap_err().contains("keeps its letters and counts up"));
        let num = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
        assert_eq!(numbers("(1-64,d)", &num).unwrap(), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(numbers("(64-16,d)", &num).unwrap(), [64.0, 32.0, 16.0]);
        assert_eq!(numbers("(10-30,10,70)", &num).unwrap(), [10.0, 20.0, 30.0, 70.0]);
        assert!(numbers("(1-64)", &num).unwrap_err().contains("followed by a step or `d`"));
        assert!(read_items(&p, &mut Vars::default()).unwrap_err().contains("a.vdb:1: include=missing.vdb: cannot read"));
    }

    #[test]
    fn variables_are_replaced_as_vdbench_replaces_them() {
        let d = std::env::temp_dir().join(format!("sanlab-vdb-vars-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("v.vdb");
        let given = |pairs: &[(&str, &str)]| Vars::new(&pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>());
        let read = |text: &str, vars: &mut Vars| {
            std::fs::write(&p, text).unwrap();
            read_items(&p, vars).map(|(_, items)| items.into_iter().map(|i| format!("{}={}", i.keyword, i.value)).collect::<Vec<_>>())
        };
        // `!name` as `$name` (for files inside shell scripts); the longer name first; a comment
        // counts as a use; an included file's comments are not read.
        std::fs::write(d.join("inc.vdb"), "* $unused_here\nwd=wd1,sd=sd1,xfersize=$xfer\n").unwrap();
        let mut vars = given(&[("th", "2"), ("threads", "16"), ("xfer", "8k"), ("lun", "/dev/sdb"), ("unused_here", "1")]);
        let items = read("* threads=$threads for this run\nsd=sd1,lun=!lun,threads=$th\ninclude=inc.vdb\nrd=rd1,wd=wd1,forthreads=($threads,$th)\n", &mut vars).unwrap();
        assert_eq!(items, ["sd=sd1", "lun=/dev/sdb", "threads=2", "wd=wd1", "sd=sd1", "xfersize=8k", "rd=rd1", "wd=wd1", "forthreads=(16,2)"]);
        assert_eq!(vars.unused(), ["unused_here"]);
        // Without a value: after `=` (in a comment too, as vdbench checks), or anywhere in the
        // parameters; `$host` is left to vdbench's host replication.
        let e = read("* threads=$threads\n", &mut given(&[])).unwrap_err();
        assert!(e.ends_with("v.vdb:1: `$threads` has no value (no vars are given): vdbench takes it from its command line (./vdbench -f file threads=...); give it in the job's vars, e.g. vars = { threads = \"...\" } (vdbench checks comment lines too)"), "{e}");
        let e = read("sd=sd1\nrd=rd1,forthreads=(1,$thread)\n", &mut given(&[("threads", "8")])).unwrap_err();
        assert!(e.ends_with("v.vdb:2: `$thread` has no value (vars given: threads): vdbench takes it from its command line (./vdbench -f file thread=...); give it in the job's vars, e.g. vars = { thread = \"...\" }; did you mean `threads`?"), "{e}");
        assert_eq!(read("sd=sd_$host,lun=/dev/sdb\n", &mut given(&[])).unwrap(), ["sd=sd_$host", "lun=/dev/sdb"]);
    }
}
