//! fio command lines (`fio --name=a --rw=randread ...`), read as fio's `parse_cmd_line` reads
//! them (init.c): getopt_long_only over fio's own options (`l_opts`) and every job option, so a
//! long option may take one dash (`-rw=randread`) and fio's own options have a letter (`-o out`).

use super::file::{job_set, option_line, Entry, Files, JobSection, Parsed, MAX_INCLUDE_DEPTH};
use crate::face::JobSet;
use super::options::{lookup, own_option, Argument, OwnOption, Use, FLAGS, OWN_OPTIONS};
use sanlab_spec::names::file_name;
use std::path::PathBuf;

/// Splits a command line into words as a POSIX shell does: blanks separate, '...' is literal,
/// "..." keeps blanks and honours \" \\ \$, a backslash escapes the next character (and joins
/// lines). An unbalanced quote is an error naming where it opened.
fn shell_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = vec![];
    let mut word: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                words.extend(word.take());
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, n)) => word.get_or_insert_with(String::new).push(n),
                None => return Err("the command line ends with a lone backslash: remove it or escape it as \\\\".into()),
            },
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        None => return Err(format!("unbalanced {c} quote opened at character {}: close it with a matching {c}", i + 1)),
                        Some((_, q)) if q == c => break,
                        Some((_, '\\')) if c == '"' => match chars.next() {
                            Some((_, n @ ('"' | '\\' | '$' | '`'))) => w.push(n),
                            Some((_, '\n')) => {}
                            Some((_, n)) => {
                                w.push('\\');
                                w.push(n);
                            }
                            None => return Err(format!("unbalanced {c} quote opened at character {}: close it with a matching {c}", i + 1)),
                        },
                        Some((_, q)) => w.push(q),
                    }
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}


/// One argument of a command line, as getopt_long_only tells them apart.
enum Word {
    /// `--key[=value]`, or `-key[=value]` when `key` is an option's whole name.
    Long(String, Option<String>),
    /// `-o`, `-ofile`, `-mw`: fio's own one-letter options, each with the text attached to it.
    Short(Vec<(&'static OwnOption, Option<String>)>),
    /// Not an option: fio reads it as a job file.
    Plain,
}

fn word(arg: &str) -> Result<Word, String> {
    let long = |body: &str| match body.split_once('=') {
        Some((key, value)) => Word::Long(key.to_string(), Some(value.to_string())),
        None => Word::Long(body.to_string(), None),
    };
    if let Some(body) = arg.strip_prefix("--") {
        return Ok(long(body));
    }
    let Some(body) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else { return Ok(Word::Plain) };
    let key = body.split('=').next().unwrap_or(body);
    let known = |key: &str| key == "name" || own_option(key).is_some() || lookup(key).is_some();
    let letter = body.chars().next().and_then(|c| OWN_OPTIONS.iter().find(|o| o.short == c));
    if body.chars().count() > 1 && (known(key) || letter.is_none()) {
        return Ok(long(body));
    }
    // Letters without an argument may share a word (`-mw`); one that takes one ends the word.
    let mut options = vec![];
    let mut rest = body;
    while let Some(c) = rest.chars().next() {
        let Some(o) = OWN_OPTIONS.iter().find(|o| o.short == c) else {
            let letters: String = OWN_OPTIONS.iter().map(|o| o.short).collect();
            return Err(format!("`-{c}` is not an option of fio (its one-letter options: {letters}; a job option needs its whole name, e.g. -rw=read)"));
        };
        rest = &rest[c.len_utf8()..];
        if o.argument != Argument::No {
            options.push((o, Some(rest.to_string()).filter(|r| !r.is_empty())));
            break;
        }
        options.push((o, None));
    }
    Ok(Word::Short(options))
}

/// Reads a fio command line into job sections, as fio's `parse_cmd_line` does: options before
/// the first `--name` (or under `--name=global`) apply to every job after them; each `--name`
/// starts a job.
fn read_cmdline(text: &str) -> Result<Parsed, String> {
    let mut args = shell_words(text).map_err(|e| format!("cmdline: {e}"))?;
    // `sudo fio`, `fio`, `/usr/bin/fio`, and on Windows `fio.exe` or `.\fio.exe` (whose
    // backslash the shell reading takes as an escape: `.fio.exe`).
    if args.first().is_some_and(|a| a == "sudo") {
        args.remove(0);
    }
    if args.first().is_some_and(|a| a == "fio" || a.ends_with("/fio") || a.to_ascii_lowercase().ends_with("fio.exe")) {
        args.remove(0);
    }
    let mut files = Files(vec![PathBuf::from("cmdline")], Some(args.clone()));
    let mut globals: Vec<Entry> = vec![];
    let mut jobs: Vec<JobSection> = vec![];
    let mut in_job = false;
    let mut k = 0;
    let mut failures = vec![];
    while k < args.len() {
        let n = k + 1;
        let arg = args[k].clone();
        k += 1;
        let (key, value) = match word(&arg) {
            Err(why) => {
                failures.push((n, why));
                continue;
            }
            Ok(Word::Plain) => {
                failures.push((n, format!("a job file on the command line: read it with kind = \"fio_file\", file = \"{arg}\"")));
                continue;
            }
            Ok(Word::Short(options)) => {
                for (o, value) in options {
                    own_option_use(o, value, &args, &mut k, n, &mut failures);
                }
                continue;
            }
            Ok(Word::Long(key, value)) => match own_option(&key) {
                Some(o) => {
                    own_option_use(o, value, &args, &mut k, n, &mut failures);
                    continue;
                }
                None => (key, value),
            },
        };
        if key == "name" {
            let name = value.clone().or_else(|| args.get(k).cloned()).unwrap_or_default();
            if value.is_none() {
                k += 1;
            }
            if name.starts_with("global") {
                in_job = false;
                continue;
            }
            file_name(&name).map_err(|e| format!("cmdline argument {n} `{arg}`: job {e}"))?;
            jobs.push(JobSection { name: name.clone(), section: name.clone(), file: 0, line: n, entries: globals.clone(), globals: globals.len() });
            in_job = true;
            continue;
        }
        // getopt: a flag takes a value only after `=`; every other option takes the next word,
        // whatever it is (`--bs 4k`, `-direct 0`).
        let value = match value {
            Some(v) => Some(v),
            None if FLAGS.contains(&key.as_str()) => None,
            None if k < args.len() => {
                k += 1;
                Some(args[k - 1].clone())
            }
            None => {
                failures.push((n, format!("`--{key}` needs a value (fio: \"option {key} requires an argument\")")));
                continue;
            }
        };
        let line = match &value {
            Some(v) => format!("{key}={v}"),
            None => key.clone(),
        };
        let sink = if in_job { &mut jobs.last_mut().expect("a job").entries } else { &mut globals };
        option_line(&line, 0, n, &mut files, MAX_INCLUDE_DEPTH, sink)?;
    }
    if let Some((n, why)) = failures.first() {
        return Err(files.at(0, *n, why));
    }
    if jobs.is_empty() {
        return Err("cmdline: no job: add --name=..., as fio needs one".into());
    }
    Ok((files, jobs, globals))
}

/// The jobs of a fio command line (the `fio` kind's `cmdline`), with fio's units and defaults.
pub(crate) fn cmdline_jobs(text: &str, device_size_bytes: u64) -> Result<JobSet, String> {
    let (files, sections, globals) = read_cmdline(text)?;
    job_set(&sections, &globals, &files, &[], device_size_bytes)
}

/// Takes an own option's argument (the next word when it needs one and has none attached) and
/// notes what fio would refuse.
fn own_option_use(o: &OwnOption, value: Option<String>, args: &[String], k: &mut usize, n: usize, failures: &mut Vec<(usize, String)>) {
    match (o.argument, value) {
        (Argument::No, Some(_)) => failures.push((n, format!("`--{}` takes no value", o.long))),
        // getopt takes the next word, whatever it is.
        (Argument::Required, None) if *k < args.len() => *k += 1,
        (Argument::Required, None) => failures.push((n, format!("`--{}` needs a value (fio: \"option requires an argument\")", o.long))),
        _ => {}
    }
    if let Use::Refused(why) = o.effect {
        failures.push((n, format!("`--{}`: {why}", o.long)));
    }
}

#[cfg(test)]
mod tests {
    use crate::face::JobSource;
    use super::*;

    #[test]
    fn command_lines_read_like_job_files() {
        let words = shell_words("fio --name='a b' --rw=\"rand\\\"x\" \\\n --bs 4k").unwrap();
        assert_eq!(words, ["fio", "--name=a b", "--rw=rand\"x", "--bs", "4k"]);
        assert_eq!(shell_words("fio --name='oops").unwrap_err(), "unbalanced ' quote opened at character 12: close it with a matching '");
        // Options before the first --name apply to every job; `--bs 4k` takes the next word.
        let (_, jobs, _) = read_cmdline("fio --ioengine=libaio --direct=1 --name=r --rw=randread --bs 8k --time_based --name=w --rw=write --output-format=json").unwrap();
        assert_eq!(jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["r", "w"]);
        assert_eq!(jobs[0].entries.iter().map(|e| (e.name, e.value.as_str())).collect::<Vec<_>>(), [("ioengine", "libaio"), ("direct", "1"), ("rw", "randread"), ("bs", "8k"), ("time_based", "1")]);
        assert_eq!(jobs[1].entries.iter().map(|e| e.name).collect::<Vec<_>>(), ["ioengine", "direct", "rw"]);
        let set = cmdline_jobs("fio --name=w --ioengine=psync --iodepth=8 --rw=randwrite --bs=512k --filename=/dev/sdb --group_reporting", 1 << 30).unwrap();
        let job = set.instances().remove(0);
        assert_eq!(job.plan.pacing, crate::Pacing::Closed { depth: 1 }, "psync: one request at a time");
        assert_eq!(job.plan.ignored, ["filename"]);
        let e = |c: &str| cmdline_jobs(c, 1 << 30).err().unwrap();
        assert_eq!(e("fio --name=x --iodepht=4"), "cmdline argument 2 `--iodepht=4`: unknown fio option `iodepht`; did you mean `iodepth`?");
        assert_eq!(e("fio jobs.fio"), "cmdline argument 1 `jobs.fio`: a job file on the command line: read it with kind = \"fio_file\", file = \"jobs.fio\"");
        assert!(e("fio --name=x --ioengine=net").contains("engine `net` does not do block I/O on a disk"));
        // An engine's own options are named as the engine's: the engine is the reason.
        assert!(e("fio --name=x --ioengine=spdk_bdev --spdk_json_conf=a.json").starts_with("cmdline argument 3 `--spdk_json_conf=a.json`: `spdk_json_conf` is an option of ioengine=spdk_bdev: unknown engine `spdk_bdev`: expected a sync engine"));
        assert!(e("fio --name=x --ioengine=external:/opt/x.so --x_opt=1").ends_with("`x_opt` is an option of ioengine=external:/opt/x.so: engine `external:/opt/x.so` does not do block I/O on a disk, and sanlab simulates block I/O: use a block engine such as libaio, io_uring or psync"));
        assert_eq!(e("fio --rw=read"), "cmdline: no job: add --name=..., as fio needs one");
        // One dash, as getopt_long_only reads it (and many guides write it), and Windows' fio.exe.
        for line in ["fio -filename=/dev/sdb -direct=1 -iodepth 32 -thread -rw=randread -ioengine=libaio -bs=4k -size=1G -numjobs=2 -runtime=60 -group_reporting -name=t", ".\\fio.exe -name=t -bs=4k -iodepth=32 -rw=randread", "fio.exe --name=t --bs=4k --iodepth=32 --rw=randread"] {
            let (_, jobs, _) = read_cmdline(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let iodepth = jobs[0].entries.iter().find(|e| e.name == "iodepth").map(|e| e.value.as_str());
            assert_eq!((jobs.len(), jobs[0].name.as_str(), iodepth), (1, "t", Some("32")), "{line}");
        }
        assert!(read_cmdline("fio -name=t -thread -rw=randread").unwrap().1[0].entries.iter().any(|e| e.name == "thread"));
        assert!(e("fio --name=\"x").starts_with("cmdline: unbalanced \" quote"));
    }

    #[test]
    fn fios_own_options_take_their_letters_and_arguments_as_getopt_does() {
        let jobs = |c: &str| read_cmdline(c).unwrap_or_else(|e| panic!("{c}: {e}")).1.iter().map(|j| j.name.clone()).collect::<Vec<_>>();
        // `-o out` (the next word is the argument, not a job file), attached `-oout`, bundled
        // flags, long forms with and without `=`; a job option's whole name still reads as long.
        for line in ["fio -o out -rw=write -name=w", "fio -oout.log -name=w", "fio -mw -name=w", "fio --output out --output-format=json+ --name=w", "fio -F json -d io -name=w", "fio -bs=4k -name=w"] {
            assert_eq!(jobs(line), ["w"], "{line}");
        }
        let e = |c: &str| cmdline_jobs(c, 1 << 30).err().unwrap();
        assert_eq!(e("fio -name=t -x"), "cmdline argument 2 `-x`: `--section` needs a value (fio: \"option requires an argument\")");
        assert_eq!(e("fio -x a -name=t"), "cmdline argument 1 `-x`: `--section`: it picks sections of a job file: read the file with kind = \"fio_file\" and `jobs = [...]`");
        assert!(e("fio -q -name=t").starts_with("cmdline argument 1 `-q`: `-q` is not an option of fio (its one-letter options: olbmFf"), "{}", e("fio -q -name=t"));
        assert!(e("fio --version").ends_with("`--version`: fio prints something and exits: it runs no job"));
        assert!(e("fio --client=h1 --name=t").contains("client or server of other machines"));
        assert_eq!(e("fio --minimal=1 --name=t"), "cmdline argument 1 `--minimal=1`: `--minimal` takes no value");
        // Every letter is fio's once, and every long name once.
        let mut letters: Vec<char> = OWN_OPTIONS.iter().map(|o| o.short).collect();
        letters.sort_unstable();
        letters.dedup();
        assert_eq!(letters.len(), OWN_OPTIONS.len());
        // getopt finds fio's own options first; `profile` is also a job option (options.c).
        let both: Vec<&str> = OWN_OPTIONS.iter().filter(|o| lookup(o.long).is_some()).map(|o| o.long).collect();
        assert_eq!(both, ["profile"]);
    }

    #[test]
    fn exit_rules_follow_fios_groups_and_its_global_exitall() {
        use crate::plan::{ExitRule, ExitWhat};
        let rules = |c: &str| cmdline_jobs(c, 1 << 30).unwrap().instances().iter().map(|i| i.plan.exit_rule).collect::<Vec<_>>();
        assert_eq!(rules("fio --name=a --name=b"), [None, None], "no exit options: no rule");
        // exitall in one job acts at every job's end; a stonewall or new_group job starts a group,
        // numjobs clones share their job's.
        let r = rules("fio --name=a --exitall --name=b --numjobs=2 --stonewall --exit_what=all --name=c --new_group --name=d");
        let rule = |group, what| Some(ExitRule { group, on_end: true, on_error: false, what });
        assert_eq!(r, [rule(0, ExitWhat::Group), rule(1, ExitWhat::All), rule(1, ExitWhat::All), rule(2, ExitWhat::Group), rule(2, ExitWhat::Group)]);
        // exitall_on_error alone: only that job acts, the others carry their group.
        let r = rules("fio --name=a --name=b --exitall_on_error --exit_what=stonewall");
        assert_eq!(r, [Some(ExitRule { group: 0, on_end: false, on_error: false, what: ExitWhat::Group }), Some(ExitRule { group: 0, on_end: false, on_error: true, what: ExitWhat::Stonewall })]);
        let e = cmdline_jobs("fio --name=a --exitall --exit_what=groups", 1 << 30).err().unwrap();
        assert_eq!(e, "cmdline argument 3 `--exit_what=groups`: job `a`: option `exit_what`: unknown value `groups`: expected group, stonewall or all; did you mean `group`?");
        let e = cmdline_jobs("fio --name=a --exitall=maybe", 1 << 30).err().unwrap();
        assert!(e.contains("`--exitall=maybe`") && e.contains("`maybe` is not a boolean"), "{e}");
    }
}
