//! Comparing a command's output with what a doc's transcript shows (tests/it/docs.rs, and
//! the CLI's docs test).

/// Whether a command's `actual` output lines are what a doc shows (`expected`): a line
/// `...` stands for any number of lines, a line ending in `...` or `..."` for any line
/// with that prefix, and trailing spaces do not count.
pub fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            let Some((line, actual_rest)) = actual.split_first() else {
                return false;
            };
            let line_matches = if let Some(prefix) = first.strip_suffix("...\"") {
                line.starts_with(prefix)
            } else if let Some(prefix) = first.strip_suffix("...") {
                line.starts_with(prefix.trim_end())
            } else {
                line.trim_end() == first.trim_end()
            };
            line_matches && matches(rest, actual_rest)
        }
    }
}
