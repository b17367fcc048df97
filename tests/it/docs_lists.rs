//! The docs' lists stay complete: every data type the module registers, every command
//! family, ACL category, INFO prefix, fuzz target, workspace crate, core module and
//! `src/api/` file is named where README.md (Layout), docs/architecture.md and
//! docs/operations.md list them. The truth comes from the code (the families' table, the
//! `redis_module!` data types and their names in `src/types.rs`, `fuzz/Cargo.toml`, the
//! workspace members, the folders), so a new family fails here until the pages name it.
//! Also: upgrading.md's encodings table is this build's, and benchmarks.md names every bench
//! harness. (Links and the licence: `docs_links.rs`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text of `markdown` from the heading line `heading` to the next heading of the same
/// or a higher level.
pub fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let start = markdown
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?}"))
        + 1;
    let body = &markdown[start + heading.len()..];
    let (mut at, mut in_block, mut end) = (0, false, body.len());
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !in_block && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            end = at;
            break;
        }
        at += line.len() + 1;
    }
    &markdown[start..start + heading.len() + end]
}

/// The first fenced block of `markdown`.
fn first_block(markdown: &str) -> &str {
    let start = markdown.find("```").expect("a fenced block") + 3;
    let end = markdown[start..].find("```").expect("its end") + start;
    &markdown[start..end]
}

/// The string literals of `text` (no escapes needed here).
fn literals(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// Where the data types are defined: src/types.rs, and a family's own `value.rs` (the
/// static filter's, src/sf/value.rs).
fn type_sources() -> String {
    let mut text = read("src/types.rs");
    text.push_str(&read("src/sf/value.rs"));
    text.push_str(&read("src/expandable/value.rs"));
    text
}

/// The data types `redis_module!` registers (src/lib.rs) and their names (src/types.rs,
/// src/sf/value.rs).
fn data_types() -> Vec<String> {
    let lib = read("src/lib.rs");
    let types = type_sources();
    let list = lib
        .split_once("data_types: [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("redis_module!'s data_types")
        .0;
    list.split(',')
        .map(str::trim)
        .filter(|ident| !ident.is_empty())
        .map(|ident| {
            let (_, after) = types
                .split_once(&format!("pub static {ident}: RedisType"))
                .unwrap_or_else(|| panic!("{ident} in src/types.rs or src/sf/value.rs"));
            literals(after)[0].to_string()
        })
        .collect()
}

/// Each registered data type's encoding: the `rdb::X_ENCODING` its `RedisType::new` names
/// (src/types.rs, src/sf/value.rs), and that constant's value in the core.
fn encodings() -> Vec<(String, i64)> {
    let types = type_sources();
    let mut core = String::new();
    let mut files = Vec::new();
    collect_rust(&root().join("core/src"), &mut files);
    for file in files {
        core.push_str(&std::fs::read_to_string(file).unwrap());
    }
    data_types()
        .into_iter()
        .map(|name| {
            let (_, after) = types
                .split_once(&format!("\"{name}\""))
                .unwrap_or_else(|| panic!("{name} in src/types.rs or src/sf/value.rs"));
            let constant = after
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .find(|w| w.ends_with("_ENCODING"))
                .unwrap();
            let (_, value) = core
                .split_once(&format!("pub const {constant}: i32 = "))
                .unwrap_or_else(|| panic!("{constant} in core/src"));
            let value = value.split(';').next().unwrap().parse().unwrap();
            (name, value)
        })
        .collect()
}

fn collect_rust(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rust(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn upgrading_md_lists_every_type_with_its_encoding() {
    let page = read("docs/upgrading.md");
    let table = page
        .split_once("<!-- encodings -->")
        .and_then(|(_, rest)| rest.split_once("<!-- /encodings -->"))
        .expect("the encodings table")
        .0;
    let rows: Vec<(String, i64)> = table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (
                cells[0].trim_matches('`').to_string(),
                cells[2].parse().unwrap(),
            )
        })
        .collect();
    let mut expected = encodings();
    assert!(
        expected.contains(&("MBbloom--".to_string(), 4)),
        "{expected:?}"
    );
    let mut rows_sorted = rows.clone();
    rows_sorted.sort();
    expected.sort();
    assert_eq!(rows_sorted, expected, "docs/upgrading.md's encodings table");
}

/// The directories under `dir`.
fn folders(dir: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The `.rs` files of `dir`, without the extension.
fn rust_files(dir: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The `name = "…"` of each `[[bin]]` (or `[package]`) table of a Cargo.toml.
fn toml_names(toml: &str, table: &str) -> Vec<String> {
    toml.split(&format!("\n{table}\n"))
        .skip(1)
        .filter_map(|part| {
            let line = part.lines().find(|l| l.starts_with("name = "))?;
            Some(literals(line)[0].to_string())
        })
        .collect()
}

fn workspace_crates() -> Vec<String> {
    let toml = read("Cargo.toml");
    let members = toml
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("workspace members")
        .0;
    literals(members)
        .into_iter()
        .map(|member| {
            let path = if member == "." {
                "Cargo.toml".to_string()
            } else {
                format!("{member}/Cargo.toml")
            };
            toml_names(&format!("\n{}", read(&path)), "[package]")[0].clone()
        })
        .collect()
}

/// Each `name` must appear in `text` as `format(name)`; the missing ones, as `place: …`.
fn missing(
    place: &str,
    text: &str,
    names: &[String],
    format: impl Fn(&str) -> String,
) -> Vec<String> {
    names
        .iter()
        .map(|name| format(name))
        .filter(|shown| !text.contains(shown.as_str()))
        .map(|shown| format!("{place}: {shown}"))
        .collect()
}

#[test]
fn the_docs_name_every_family_type_category_target_and_crate() {
    let families: Vec<String> = redbloom::FAMILIES
        .iter()
        .map(|f| f.prefix.to_string())
        .collect();
    let family_folders: Vec<String> = redbloom::FAMILIES
        .iter()
        .map(|f| f.folder().to_string())
        .collect();
    let categories: Vec<String> = redbloom::acl_categories()
        .into_iter()
        .map(String::from)
        .collect();
    let info_prefixes: Vec<String> = redbloom::stats::all()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    let types = data_types();
    let fuzz_targets = toml_names(&read("fuzz/Cargo.toml"), "[[bin]]");
    let crates = workspace_crates();
    let core_modules = folders("core/src");
    let api_files: Vec<String> = rust_files("src/api")
        .into_iter()
        .filter(|f| f != "mod")
        .collect();
    let module_folders: Vec<String> = folders("src").into_iter().filter(|f| f != "api").collect();

    // The readers of the truth found what they should (a broken reader would pass vacuously).
    assert_eq!(families.len(), 9, "{families:?}");
    assert_eq!(categories.len(), families.len());
    assert!(types.len() >= 9 && types.contains(&"RBblockBF".to_string()));
    assert_eq!(BTreeSet::from_iter(&fuzz_targets), {
        BTreeSet::from_iter(&rust_files("fuzz/fuzz_targets"))
    });
    assert!(crates.contains(&"redbloom-cli".to_string()) && crates.len() >= 4);
    assert_eq!(BTreeSet::from_iter(&module_folders), {
        BTreeSet::from_iter(&family_folders)
    });
    assert_eq!(
        section(
            "x\n## A\na\n```\n# not a heading\n```\n### B\nb\n## C\nc\n",
            "## A"
        ),
        "## A\na\n```\n# not a heading\n```\n### B\nb\n"
    );

    let readme = read("README.md");
    let layout = section(&readme, "## Layout");
    let architecture = read("docs/architecture.md");
    let diagram = first_block(&architecture);
    let src_table = section(&architecture, "## The module (`src/`)");
    let core_table = section(
        &architecture,
        "## The core (`core/`, crate `redbloom-core`)",
    );
    let tests = section(&architecture, "## Tests");
    let operations = read("docs/operations.md");
    let info = section(&operations, "## INFO");
    let events = section(&operations, "## Keyspace events");
    let acl = section(&operations, "## ACL");
    let persistence = section(&operations, "## Persistence");

    let mut problems = Vec::new();
    problems.extend(missing("README Layout", layout, &family_folders, |f| {
        format!("`{f}/`")
    }));
    problems.extend(missing("README Layout", layout, &core_modules, |m| {
        format!("`{m}`")
    }));
    problems.extend(missing("README Layout", layout, &types, |t| {
        format!("`{t}`")
    }));
    problems.extend(missing("README Layout", layout, &crates, |c| {
        format!("`{c}`")
    }));
    problems.extend(missing(
        "architecture diagram",
        diagram,
        &family_folders,
        |f| format!("{f}/"),
    ));
    problems.extend(missing(
        "architecture diagram",
        diagram,
        &core_modules,
        |m| format!("{m}/"),
    ));
    problems.extend(missing("architecture diagram", diagram, &api_files, |a| {
        a.to_string()
    }));
    problems.extend(missing("architecture diagram", diagram, &crates, |c| {
        c.to_string()
    }));
    problems.extend(missing(
        "architecture src/",
        src_table,
        &family_folders,
        |f| format!("| `{f}/` |"),
    ));
    problems.extend(missing("architecture src/", src_table, &api_files, |a| {
        format!("`{a}.rs`")
    }));
    problems.extend(missing("architecture src/", src_table, &types, |t| {
        format!("`{t}`")
    }));
    problems.extend(missing(
        "architecture core/",
        core_table,
        &core_modules,
        |m| format!("`{m}/"),
    ));
    problems.extend(missing("architecture fuzz", tests, &fuzz_targets, |t| {
        format!("`{t}`")
    }));
    problems.extend(missing("architecture", &architecture, &crates, |c| {
        format!("`{c}`")
    }));
    problems.extend(missing("operations INFO", info, &info_prefixes, |p| {
        format!("bf_{p}_filters:")
    }));
    problems.extend(missing("operations INFO", info, &info_prefixes, |p| {
        format!("`{p}`")
    }));
    problems.extend(missing("operations events", events, &families, |f| {
        format!("`{f}.")
    }));
    problems.extend(missing("operations ACL", acl, &categories, |c| {
        format!("`@{c}`")
    }));
    problems.extend(missing(
        "operations persistence",
        persistence,
        &types,
        |t| format!("`{t}`"),
    ));
    let differences = read("docs/differences.md");
    problems.extend(missing("differences", &differences, &categories, |c| {
        format!("`@{c}`")
    }));
    let lib_docs: String = read("src/lib.rs")
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .collect();
    problems.extend(missing(
        "src/lib.rs docs",
        &lib_docs,
        &family_folders,
        |f| format!("[`{f}`]"),
    ));
    let core_docs: String = read("core/src/lib.rs")
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .collect();
    problems.extend(missing("core docs", &core_docs, &core_modules, |m| {
        format!("[`{m}`]")
    }));
    problems.extend(missing(
        "core/README.md",
        &read("core/README.md"),
        &core_modules,
        |m| format!("(`{m}`)"),
    ));
    assert!(
        problems.is_empty(),
        "names the docs' lists leave out:\n{}",
        problems.join("\n")
    );
}

#[test]
fn benchmarks_md_names_every_bench_harness() {
    let page = read("docs/benchmarks.md");
    let mut benches = Vec::new();
    for (dir, toml) in [
        ("", "Cargo.toml"),
        ("core/", "core/Cargo.toml"),
        ("client/", "client/Cargo.toml"),
        ("cli/", "cli/Cargo.toml"),
    ] {
        for name in toml_names(&read(toml), "[[bench]]") {
            benches.push(format!("{dir}benches/{name}.rs"));
        }
    }
    assert!(benches.len() >= 5, "{benches:?}");
    let missing: Vec<&String> = benches
        .iter()
        .filter(|b| !page.contains(&format!("`{b}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/benchmarks.md does not name {missing:?}"
    );
}
