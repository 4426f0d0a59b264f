//! Names that become file names in a run folder (the scenario, variants, jobs): one sanitising
//! rule, which the Python side calls too (`sanlab._core.file_name`), checked when the scenario
//! is read so that a run never fails while writing its results.

use std::collections::HashMap;

/// The longest name, in characters (file systems allow 255 bytes; `.json` and the run folder's
/// own names need some).
pub const MAX_NAME_CHARS: usize = 120;

/// The file name for `name`: each run of characters other than ASCII letters, digits, `.`, `_`
/// and `-` becomes one `_`, and leading or trailing dots are dropped. An error when nothing is
/// left or the name is too long.
pub fn file_name(name: &str) -> Result<String, String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!("name `{}…` is {chars} characters long: at most {MAX_NAME_CHARS}, as it becomes a file name", escaped(&name.chars().take(20).collect::<String>())));
    }
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    let out = out.trim_matches('.').to_string();
    if out.is_empty() {
        return Err(format!("name `{}` gives no file name: use letters, digits, `.`, `_` or `-`", escaped(name)));
    }
    Ok(out)
}

/// `name` as messages show it: control characters (a newline, say) escaped, so a message stays
/// one line.
pub fn escaped(name: &str) -> String {
    name.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}

/// Checks that `name` makes a file name distinct from those of `taken` (same kind, same
/// folder; file name to the name that claimed it), and records it.
pub fn claim_file_name(name: &str, what: &str, taken: &mut HashMap<String, String>) -> Result<(), String> {
    let file = file_name(name)?;
    if let Some(other) = taken.get(&file) {
        return Err(format!("{what} `{}` and `{}` would share the file name `{file}`: rename one", escaped(other), escaped(name)));
    }
    taken.insert(file, name.to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_file_names() {
        assert_eq!(file_name("job 1/a").unwrap(), "job_1_a");
        assert_eq!(file_name("a_ b").unwrap(), "a__b", "a run of other characters is one `_`, whatever is next to it");
        assert_eq!(file_name(".hidden.").unwrap(), "hidden");
        assert_eq!(file_name("wdé").unwrap(), "wd_");
        assert!(file_name("..").unwrap_err().contains("gives no file name"));
        assert!(file_name("").is_err());
        assert!(file_name(&"x".repeat(300)).unwrap_err().contains("300 characters long: at most 120"));
        assert_eq!(escaped("a\nb"), "a\\nb");
        let mut taken = HashMap::new();
        claim_file_name("a b", "job", &mut taken).unwrap();
        let e = claim_file_name("a_b", "job", &mut taken).unwrap_err();
        assert_eq!(e, "job `a b` and `a_b` would share the file name `a_b`: rename one");
        claim_file_name("x\ny", "job", &mut taken).unwrap();
        assert_eq!(taken["x_y"], "x\ny");
    }
}
