//! How many variants a scenario may make, and how many names an error line lists.
//!
//! Every variant is built by `validate` and simulated on its own by `run`, so their number is
//! bounded as a vdbench parameter file's runs are: a file at that cap with 60 `[[variant]]`s
//! made 245,760 variants (validate never ended, and `--variant nope` printed an 8 MB line).

/// Most variants a scenario makes: its `[[variant]]`s times the runs of a vdbench job's
/// parameter file, or either alone. The same as one parameter file's runs (4096), each a
/// simulation of its own: at a millisecond to build each, validate takes seconds.
pub(crate) const MAX_VARIANTS: usize = 4096;

/// Names shown in an error line that lists the valid ones; the others are counted.
pub(crate) const NAMES_SHOWN: usize = 8;

/// `a, b, c` for a few names, `a, b, ... h and 4,088 more` for many, so a line stays short.
pub(crate) fn listed<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    if names.len() <= NAMES_SHOWN {
        return names.join(", ");
    }
    format!("{} and {} more", names[..NAMES_SHOWN].join(", "), thousands(names.len() - NAMES_SHOWN))
}

/// `245760` as `245,760`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_shows_a_few_names_and_counts_the_rest() {
        let names: Vec<String> = (0..245_760).map(|i| format!("v{i}")).collect();
        let line = listed(names.iter().map(String::as_str));
        assert_eq!(line, "v0, v1, v2, v3, v4, v5, v6, v7 and 245,752 more");
        assert_eq!(listed(["a", "b"]), "a, b");
        assert_eq!(listed((0..8).map(|_| "x")), "x, x, x, x, x, x, x, x");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }
}
