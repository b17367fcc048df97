//! docs/cli.md is true: every ```` ```console ```` block is replayed against a real server
//! with the module, and every option of every subcommand's `--help` is named in that
//! subcommand's section of the page.
//!
//! A block's `$ ` lines are commands, run with bash in the block's own directory, with the
//! freshly built `redbloom` first on PATH and `127.0.0.1:6379` standing for the server; the
//! lines up to the next `$ ` are what the command prints (standard output, then standard
//! error), matched as tests/it/docs.rs matches redis-cli's output (`...` for any lines). A
//! last line `(exit N)` is the exit status, otherwise it must be 0. Each block starts in an
//! empty directory on an empty server; one preceded by `<!-- continues -->` goes on in the
//! directory and with the data of the block before it.

use crate::support::doc_match::matches;
use crate::support::{Server, TempDir};
use std::path::Path;
use std::process::Command;

struct Step {
    line: usize,
    command: String,
    expected: Vec<String>,
}

struct Block {
    continues: bool,
    steps: Vec<Step>,
}

fn console_blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```console" {
            i += 1;
            continue;
        }
        let marker = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
        let continues = marker.is_some_and(|l| l.trim() == "<!-- continues -->");
        let mut block = Block {
            continues,
            steps: Vec::new(),
        };
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            if let Some(command) = lines[i].strip_prefix("$ ") {
                block.steps.push(Step {
                    line: i + 1,
                    command: command.to_string(),
                    expected: Vec::new(),
                });
            } else {
                let step = block.steps.last_mut().expect("output before a command");
                step.expected.push(lines[i].to_string());
            }
            i += 1;
        }
        out.push(block);
    }
    out
}

fn exit_status(expected: &mut Vec<String>) -> i32 {
    let status = expected
        .last()
        .and_then(|l| l.strip_prefix("(exit ")?.strip_suffix(')')?.parse().ok());
    if status.is_some() {
        expected.pop();
    }
    status.unwrap_or(0)
}

fn page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md");
    std::fs::read_to_string(path).expect("docs/cli.md")
}

#[test]
fn every_console_block_of_cli_md_is_true() {
    let binary = Path::new(env!("CARGO_BIN_EXE_redbloom"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let server = Server::start();
    let address = format!("127.0.0.1:{}", server.port);
    let mut dir = TempDir::new("cli-docs");
    let mut failures = Vec::new();
    let mut checked = 0;
    for block in console_blocks(&page()) {
        if !block.continues {
            dir = TempDir::new("cli-docs");
            server.raw().call(&["FLUSHALL"]);
        }
        for mut step in block.steps {
            let status = exit_status(&mut step.expected);
            let command = step
                .command
                .replace("127.0.0.1:6379", &address)
                .replace("-p 6379", &format!("-p {}", server.port));
            // Standard error merged into standard output as a terminal shows them: in
            // the order they were written.
            let merged = format!("{{ {command}\n}} 2>&1");
            let output = Command::new("bash")
                .args(["-o", "pipefail", "-c", &merged])
                .current_dir(&dir.0)
                .env("PATH", &path)
                .output()
                .expect("run bash");
            checked += 1;
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            let actual: Vec<&str> = printed.lines().collect();
            let got = output.status.code().unwrap_or(-1);
            if !matches(&step.expected, &actual) || got != status {
                failures.push(format!(
                    "docs/cli.md:{}: `{}`\n  the page shows (exit {status}):\n    {}\n  it printed (exit {got}):\n    {}",
                    step.line,
                    step.command,
                    step.expected.join("\n    "),
                    actual.join("\n    ")
                ));
            }
        }
    }
    assert!(checked >= 15, "only {checked} commands in docs/cli.md");
    assert!(
        failures.is_empty(),
        "{} of {checked} commands differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The subcommands a `--help` lists (clap's `Commands:` section, `help` left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The long options a `--help` lists under `heading` (`--help` and `--version` left out).
fn options_under(help: &str, heading: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            l.split_whitespace()
                .find(|w| w.starts_with("--"))
                .map(|w| w.trim_end_matches(',').to_string())
        })
        .filter(|o| o != "--help" && o != "--version")
        .collect()
}

/// The long options a `--help` lists as the subcommand's own (not the server options).
fn options(help: &str) -> Vec<String> {
    options_under(help, "Options:")
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(args)
        .arg("--help")
        .output()
        .expect("run redbloom --help");
    assert!(output.status.success(), "{args:?} --help");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn cli_md_has_a_section_naming_every_option_of_every_subcommand() {
    let page = page();
    let section = |title: &str| -> Option<String> {
        let start = page.find(&format!("## `{title}`\n"))?;
        let rest = &page[start..];
        let end = rest
            .find('\n')
            .and_then(|eol| rest[eol..].find("\n#").map(|e| eol + e));
        Some(rest[..end.unwrap_or(rest.len())].to_string())
    };
    let mut paths: Vec<Vec<String>> = Vec::new();
    for top in subcommands(&help(&[])) {
        let nested = subcommands(&help(&[&top]));
        if nested.is_empty() {
            paths.push(vec![top]);
        } else {
            paths.extend(nested.into_iter().map(|sub| vec![top.clone(), sub]));
        }
    }
    assert!(paths.len() >= 10, "{paths:?}");
    let mut problems = Vec::new();
    for path in &paths {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let title = format!("redbloom {}", path.join(" "));
        let Some(text) = section(&title) else {
            problems.push(format!("no section `{title}`"));
            continue;
        };
        for option in options(&help(&args)) {
            if option == "--json" {
                continue; // global, in Conventions
            }
            if !text.contains(&format!("`{option}")) && !text.contains(&format!(" {option}")) {
                problems.push(format!("`{title}`: {option} not named"));
            }
        }
    }
    assert!(page.contains("`--json`"), "the global --json");
    // The server options, named once in Conventions.
    let conventions =
        &page[page.find("## Conventions").unwrap()..page.find("## `redbloom").unwrap()];
    let server = options_under(&help(&["inspect"]), "Server options:");
    assert!(server.len() >= 8, "{server:?}");
    for option in server {
        if !conventions.contains(&format!("`{option}"))
            && !conventions.contains(&format!(" / `{option}"))
        {
            problems.push(format!("Conventions: {option} not named"));
        }
    }
    assert!(problems.is_empty(), "docs/cli.md:\n{}", problems.join("\n"));
}
