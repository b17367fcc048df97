//! Every redis-cli transcript in README.md and docs/*.md is true: each one is replayed with the
//! real `redis-cli` against a real server with the module, and every reply must read exactly
//! as the Markdown shows it. A doc change is a test change.
//!
//! What counts as a transcript: a fenced block with at least one prompt line
//! (`127.0.0.1:6379> …` or `> …`). A prompt line is a command; the lines after it, up to the
//! next prompt, are its reply as redis-cli prints it. `$ redis-cli -3` (or `$ redis-cli`) in a
//! block switches the protocol for the rest of the block. In a reply, a line `...` stands for
//! any number of lines and a line ending in `...` or `..."` matches any line with that prefix.
//! Each block starts on an empty data set, each file on a fresh server (so CONFIG SET in one
//! file does not leak into the next). A block preceded by `<!-- not a transcript -->` is skipped;
//! one preceded by `<!-- continues -->` goes on with the data of the block before it.
//!
//! And every "COMPAT §n" cited in the code, the tests and the benchmarks names a section of
//! docs/compat.md.

use crate::support::doc_match::matches;
use crate::support::Server;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    expected: Vec<String>,
}

#[derive(Debug)]
struct Transcript {
    line: usize,
    resp3: bool,
    continues: bool,
    steps: Vec<Step>,
}

fn prompt_command(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("> ") {
        return Some(rest);
    }
    let (host, rest) = line.split_once("> ")?;
    let host = host.split('[').next().unwrap_or(host);
    let (ip, port) = host.split_once(':')?;
    (ip == "127.0.0.1" && port.chars().all(|c| c.is_ascii_digit())).then_some(rest)
}

/// The transcripts of one Markdown text.
fn transcripts(markdown: &str) -> Vec<Transcript> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("```") {
            i += 1;
            continue;
        }
        let opened = i;
        let marker = lines[..opened]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim());
        let skipped = marker == Some("<!-- not a transcript -->");
        let continues = marker == Some("<!-- continues -->");
        let mut end = opened + 1;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        let body = &lines[opened + 1..end.min(lines.len())];
        i = end + 1;
        if skipped || !body.iter().any(|l| prompt_command(l).is_some()) {
            continue;
        }
        let mut transcript = Transcript {
            line: opened + 1,
            resp3: false,
            continues,
            steps: Vec::new(),
        };
        for (n, text) in body.iter().enumerate() {
            if let Some(options) = text.strip_prefix("$ redis-cli") {
                assert!(
                    transcript.steps.is_empty(),
                    "line {}: `$ redis-cli` must open the block",
                    opened + 2 + n
                );
                transcript.resp3 = options.split_whitespace().any(|o| o == "-3");
            } else if let Some(command) = prompt_command(text) {
                transcript.steps.push(Step {
                    line: opened + 2 + n,
                    command: command.to_string(),
                    expected: Vec::new(),
                });
            } else if let Some(step) = transcript.steps.last_mut() {
                step.expected.push(text.to_string());
            } else {
                assert!(
                    text.trim().is_empty(),
                    "line {}: text before the first prompt of a transcript: {text:?}",
                    opened + 2 + n
                );
            }
        }
        for step in &mut transcript.steps {
            while step.expected.last().is_some_and(|l| l.trim().is_empty()) {
                step.expected.pop();
            }
        }
        found.push(transcript);
    }
    found
}

/// One command through redis-cli as a user types it (redis-cli splits and unquotes the line).
fn run_cli(port: u16, resp3: bool, command: &str) -> String {
    let mut cli = Command::new(crate::support::cli_binary());
    cli.args(["-h", "127.0.0.1", "-p", &port.to_string(), "--no-raw"]);
    if resp3 {
        cli.arg("-3");
    }
    let mut child = cli
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start redis-cli");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{command}\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().expect("redis-cli output");
    assert!(output.status.success(), "redis-cli failed on {command:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Replays every transcript of `file`; returns (commands checked, mismatches).
fn check_file(file: &Path) -> (usize, Vec<String>) {
    let markdown = std::fs::read_to_string(file).unwrap();
    let found = transcripts(&markdown);
    if found.is_empty() {
        return (0, Vec::new());
    }
    let server = Server::start();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut checked = 0;
    let mut failures = Vec::new();
    for transcript in &found {
        if !transcript.continues {
            run_cli(server.port, false, "FLUSHALL SYNC");
        }
        for step in &transcript.steps {
            let output = run_cli(server.port, transcript.resp3, &step.command);
            let actual: Vec<&str> = output.lines().collect();
            checked += 1;
            if !matches(&step.expected, &actual) {
                failures.push(format!(
                    "{name}:{} (block at line {}): `{}`\n  the doc shows:\n    {}\n  redis-cli printed:\n    {}",
                    step.line,
                    transcript.line,
                    step.command,
                    step.expected.join("\n    "),
                    actual.join("\n    ")
                ));
            }
        }
    }
    (checked, failures)
}

#[test]
fn matcher_rules() {
    let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&lines(&["(integer) 1"]), &["(integer) 1"]));
    assert!(!matches(&lines(&["(integer) 1"]), &["(integer) 0"]));
    assert!(!matches(
        &lines(&["(integer) 1"]),
        &["(integer) 1", "extra"]
    ));
    assert!(matches(
        &lines(&["# bf", "..."]),
        &["# bf", "bf_bf_filters:1", "x"]
    ));
    assert!(matches(&lines(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(!matches(&lines(&["a", "...", "z"]), &["a", "b"]));
    assert!(matches(
        &lines(&["2) \"\\x01...\""]),
        &["2) \"\\x01\\x02\""]
    ));
    let found = transcripts(
        "text\n```text\n$ redis-cli -3\n127.0.0.1:6379> BF.ADD k a\n(true)\n\n> PING\nPONG\n```\n\
         <!-- not a transcript -->\n```\n> BF.ADD k\n```\n```sh\nmake run\n```\n\
         <!-- continues -->\n```\n> BF.CARD k\n(integer) 1\n```\n",
    );
    assert_eq!(found.len(), 2);
    assert!(found[0].resp3);
    assert!(!found[0].continues);
    assert!(found[1].continues && !found[1].resp3);
    assert_eq!(found[0].steps.len(), 2);
    assert_eq!(found[0].steps[0].command, "BF.ADD k a");
    assert_eq!(found[0].steps[0].expected, vec!["(true)".to_string()]);
    assert_eq!(found[0].steps[1].line, 7);
}

#[test]
fn every_transcript_in_the_docs_is_true() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in doc_files() {
        let (n, mut f) = check_file(&file);
        checked += n;
        failures.append(&mut f);
    }
    assert!(
        checked >= 50,
        "only {checked} commands found in the docs' transcripts"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} documented replies differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    println!("{checked} documented commands checked");
}

// ---------------------------------------------------------------------------------------
// COMPAT citations

/// The numbered sections of docs/compat.md: `## 7. …` gives `7`, `### 7.3 …` gives `7.3`.
fn compat_sections(markdown: &str) -> BTreeSet<String> {
    markdown
        .lines()
        .filter_map(|line| {
            let title = line.trim_start_matches('#');
            if title.len() == line.len() || !title.starts_with(' ') {
                return None;
            }
            let number = title.split_whitespace().next()?.trim_end_matches('.');
            let numeric = !number.is_empty()
                && number
                    .split('.')
                    .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
            numeric.then(|| number.to_string())
        })
        .collect()
}

/// The leading section number of `text` (`7.3` of `7.3–7.5)`), and what follows it.
fn section_number(text: &str) -> Option<(String, &str)> {
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    // A sentence may end right after the number: `§4.5.`
    let number = text[..end].trim_end_matches('.');
    (!number.is_empty()).then(|| (number.to_string(), &text[number.len()..]))
}

/// Every section a "COMPAT §…" citation of `source` names, with its line: `§7.3–7.5` names
/// 7.3, 7.4 and 7.5; `§1/§12` names 1 and 12; the `§` may follow on the next comment line.
fn compat_citations(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in source.match_indices("COMPAT") {
        let line = source[..at].matches('\n').count() + 1;
        let mut rest = source[at + "COMPAT".len()..]
            .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '/' | '!' | '*'));
        while let Some((first, after)) = rest.strip_prefix('§').and_then(section_number) {
            rest = after;
            let range_end = rest
                .strip_prefix('–')
                .or_else(|| rest.strip_prefix('-'))
                .and_then(section_number);
            match range_end {
                Some((last, after)) => {
                    rest = after;
                    let (prefix, from) = first.rsplit_once('.').unwrap_or(("", &first));
                    let (last_prefix, to) = last.rsplit_once('.').unwrap_or(("", &last));
                    assert_eq!(prefix, last_prefix, "line {line}: range §{first}–{last}");
                    let (from, to): (u32, u32) = (from.parse().unwrap(), to.parse().unwrap());
                    assert!(from < to, "line {line}: range §{first}–{last}");
                    for n in from..=to {
                        let number = if prefix.is_empty() {
                            n.to_string()
                        } else {
                            format!("{prefix}.{n}")
                        };
                        out.push((line, number));
                    }
                }
                None => out.push((line, first)),
            }
            match rest.trim_start().strip_prefix('/').map(str::trim_start) {
                Some(after) if after.starts_with('§') => rest = after,
                _ => break,
            }
        }
    }
    out
}

/// The text files under `dir` (recursively; installed client packages skipped).
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "node_modules") {
                text_files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_compat_citation_names_a_section_of_compat_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sections = compat_sections(&std::fs::read_to_string(root.join("docs/compat.md")).unwrap());
    // The readers themselves: headings of both levels, every citation shape in use.
    assert_eq!(
        compat_sections("## 7. SCANDUMP\n### 7.3 CF header\n### Flags\n## The decisions\n#x"),
        BTreeSet::from(["7".to_string(), "7.3".to_string()])
    );
    let cited: Vec<String> = compat_citations(
        "(COMPAT §7.3–7.5), COMPAT §1/§12, COMPAT §2 / §10.2; COMPAT §4.5. (COMPAT\n/// §0.5) COMPAT.md",
    )
    .into_iter()
    .map(|(_, number)| number)
    .collect();
    assert_eq!(
        cited,
        ["7.3", "7.4", "7.5", "1", "12", "2", "10.2", "4.5", "0.5"]
    );
    assert!(sections.contains("9") && sections.contains("7.3") && !sections.contains("6"));

    let mut files = Vec::new();
    for dir in ["src", "core/src", "tests", "benches"] {
        text_files(&root.join(dir), &mut files);
    }
    let mut checked = 0;
    let mut unresolved = Vec::new();
    for file in files {
        // Binary fixtures (RDB files) are no citations.
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (line, number) in compat_citations(&text) {
            checked += 1;
            if !sections.contains(&number) {
                let file = file
                    .strip_prefix(root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                unresolved.push(format!("{file}:{line}: COMPAT §{number}"));
            }
        }
    }
    assert!(checked >= 30, "only {checked} COMPAT citations found");
    assert!(
        unresolved.is_empty(),
        "citations without a section in docs/compat.md:\n{}",
        unresolved.join("\n")
    );
    println!("{checked} COMPAT citations resolve");
}
