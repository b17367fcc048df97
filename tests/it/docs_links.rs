//! Every relative link of README.md and docs/ names a file that exists (and, with a
//! `#fragment`, a heading of it), and LICENSE is the licence the crates declare.

use crate::docs_lists::{read, root, section};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut in_block = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The `(target)` of every `](target)` in `markdown`.
fn link_targets(markdown: &str) -> Vec<&str> {
    markdown
        .match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &markdown[at + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    assert_eq!(
        anchor(" The client and the CLI (`client/`, `cli/`)"),
        "the-client-and-the-cli-client-cli"
    );
    assert_eq!(
        anchor(" RSS and used_memory of reserved filters"),
        "rss-and-used_memory-of-reserved-filters"
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in crate::docs::doc_files() {
        let markdown = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for target in link_targets(&markdown) {
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let linked: PathBuf = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let name = file.strip_prefix(root()).unwrap().display().to_string();
            if !linked.exists() {
                broken.push(format!("{name}: ({target}): no such file"));
                continue;
            }
            if !fragment.is_empty() && linked.extension().is_some_and(|x| x == "md") {
                let text = std::fs::read_to_string(&linked).unwrap();
                if !anchors(&text).contains(fragment) {
                    broken.push(format!("{name}: ({target}): no such heading"));
                }
            }
        }
    }
    assert!(checked >= 40, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_licence_is_the_one_the_crates_declare() {
    let licence = read("LICENSE");
    assert!(
        licence.starts_with("BSD 3-Clause License\n\nCopyright (c) 2026, the redbloom authors\n")
    );
    assert!(licence.contains("3. Neither the name of the copyright holder"));
    for member in [
        "Cargo.toml",
        "core/Cargo.toml",
        "client/Cargo.toml",
        "cli/Cargo.toml",
    ] {
        assert!(
            read(member).contains("\nlicense = \"BSD-3-Clause\"\n"),
            "{member} declares another licence"
        );
    }
    assert!(section(&read("README.md"), "## Licence").contains("[LICENSE](LICENSE)"));
}
