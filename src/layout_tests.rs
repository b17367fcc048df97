//! The module's layering (docs/architecture.md): the shared infrastructure — `api/` and the
//! files beside `lib.rs` — imports no family; a family registers what the shared code needs
//! (its table, data type, INFO section, key-change hook) through `lib.rs`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every path from `crate::` in `text`, comments left out, with `crate::{a, b}` split.
fn crate_paths(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            paths.extend(inner.split(',').map(|part| part.trim().to_string()));
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            paths.push(rest[..end].to_string());
        }
    }
    paths
}

#[test]
fn shared_code_imports_no_family() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let families: Vec<&str> = crate::FAMILIES
        .iter()
        .map(|family| family.folder())
        .collect();
    assert_eq!(families.len(), 9);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut shared = 0;
    let mut offences = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative.components().next().unwrap().as_os_str();
        let top = top.to_str().unwrap();
        // lib.rs registers the families; this file names them in its own test.
        if families.contains(&top) || ["lib.rs", "layout_tests.rs"].contains(&top) {
            continue;
        }
        shared += 1;
        for path in crate_paths(&std::fs::read_to_string(&file).unwrap()) {
            let first = path.split("::").next().unwrap_or("");
            if families.contains(&first) {
                offences.push(format!("{} uses crate::{path}", relative.display()));
            }
        }
    }
    assert!(shared >= 10, "only {shared} shared files found");
    assert!(offences.is_empty(), "{offences:#?}");
}

#[test]
fn crate_paths_reads_groups_and_skips_comments() {
    let text = "use crate::{sf, api::keys};\n// crate::bf is a comment\nx = crate::cms::f();";
    assert_eq!(crate_paths(text), ["sf", "api::keys", "cms"]);
}
