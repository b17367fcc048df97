//! Every `redis.conf` snippet and every shell block in README.md and docs/*.md works as shown
//! (the transcripts are `docs.rs`'s):
//!
//! - A ```` ```conf ```` block is a redis.conf fragment: the server under test (redis-server, or
//!   `REDBLOOM_SERVER`) must start from a file holding it (plus port, bind, dir and logfile
//!   lines of the test), load the module, and report each module config the block sets
//!   (`bf.… value`) with that value in `CONFIG GET`.
//! - A ```` ```sh ```` block runs under `bash -euo pipefail` and must exit 0: `redis-cli` and
//!   `valkey-cli` talk to a fresh server with the module (holding one key of each filter type,
//!   so the scans have something to find); `redis-server` and `valkey-server` start the server
//!   under test with the block's arguments on another free port and succeed once it answers
//!   with the module loaded. `/path/to/libredbloom.so` and `/path/to/target/release/libredbloom.so`
//!   stand for the built module. A block preceded by `<!-- not run: why -->` is skipped (e.g.
//!   `make test`, which runs this test); one preceded by `<!-- continues -->` runs after the
//!   shell block before it, in the same shell (e.g. to use a function that one defines).
//! - No snippet escapes: a block holding a `loadmodule` line must be `conf`, one whose lines
//!   start with `redis-cli`/`redis-server` must be `sh`.

use crate::support::server::free_port;
use crate::support::{cli_binary, module_path, server_binary, Server, TempDir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Block {
    line: usize,
    lang: String,
    skipped: bool,
    continues: bool,
    body: Vec<String>,
}

/// The fenced blocks of a Markdown text (indented fences included), with their language tag.
fn blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(tag) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - lines[i].trim_start().len();
        let marker = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim())
            .unwrap_or("");
        let mut end = i + 1;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        found.push(Block {
            line: i + 1,
            lang: tag.trim().to_string(),
            skipped: marker.starts_with("<!-- not run"),
            continues: marker == "<!-- continues -->",
            body: lines[i + 1..end.min(lines.len())]
                .iter()
                .map(|l| l.get(indent..).unwrap_or(l.trim_start()).to_string())
                .collect(),
        });
        i = end + 1;
    }
    found
}

fn substitute(text: &str) -> String {
    let module = module_path().display().to_string();
    text.replace("/path/to/target/release/libredbloom.so", &module)
        .replace("/path/to/libredbloom.so", &module)
}

fn cli(port: u16, args: &[&str]) -> Option<String> {
    let output = Command::new(cli_binary())
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Starts the server under test from `snippet` as its config file; the problem, if any.
fn check_conf(snippet: &[String]) -> Option<String> {
    let dir = TempDir::new("conf");
    let port = free_port();
    let conf = format!(
        "{}\nport {port}\nbind 127.0.0.1\nsave \"\"\ndir {}\nlogfile server.log\n",
        substitute(&snippet.join("\n")),
        dir.0.display()
    );
    let file = dir.0.join("snippet.conf");
    std::fs::write(&file, conf).unwrap();
    let mut child = Command::new(server_binary())
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server binary");
    let log = || std::fs::read_to_string(dir.0.join("server.log")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut problem = None;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            problem = Some(format!("the server exited ({status}); log:\n{}", log()));
            break;
        }
        if cli(port, &["MODULE", "LIST"]).is_some_and(|l| l.lines().any(|l| l == "bf")) {
            break;
        }
        if Instant::now() > deadline {
            problem = Some(format!("the server did not start; log:\n{}", log()));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if problem.is_none() {
        for line in snippet.iter().map(|l| l.trim()) {
            let mut words = line.split_whitespace();
            let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            if !name.starts_with("bf.") {
                continue;
            }
            let got = cli(port, &["CONFIG", "GET", name]).unwrap_or_default();
            if got.lines().nth(1) != Some(value) {
                problem = Some(format!("CONFIG GET {name} answered {got:?}, not {value}"));
                break;
            }
        }
    }
    if child.try_wait().ok().flatten().is_none() {
        let _ = cli(port, &["SHUTDOWN", "NOSAVE"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
    }
    let _ = child.wait();
    problem
}

/// What a shell block's `redis-cli`, `valkey-cli`, `redis-server` and `valkey-server` mean.
/// Inside the functions every binary is called through `command` (the binaries' names are
/// the functions' names: a plain call would recurse).
const SHELL_PRELUDE: &str = r#"
redis-cli() { command "$DOC_CLI" -h 127.0.0.1 -p "$DOC_PORT" "$@"; }
valkey-cli() { redis-cli "$@"; }
doc_server() {
  command "$DOC_SERVER" "$@" --port "$DOC_PORT2" --bind 127.0.0.1 --save "" --dir "$DOC_DIR" \
    --logfile server2.log >/dev/null 2>&1 &
  local pid=$! i
  for i in $(seq 1 600); do
    if command "$DOC_CLI" -h 127.0.0.1 -p "$DOC_PORT2" MODULE LIST 2>/dev/null | grep -qx bf; then
      command "$DOC_CLI" -h 127.0.0.1 -p "$DOC_PORT2" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
      wait "$pid" || true
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "server $* did not start:" >&2
      cat "$DOC_DIR/server2.log" >&2 || true
      return 1
    fi
    sleep 0.05
  done
  kill "$pid"
  echo "server $* did not start in 30 s" >&2
  return 1
}
redis-server() { doc_server "$@"; }
valkey-server() { doc_server "$@"; }
"#;

/// Runs a shell block against `server`; the problem, if any.
fn check_shell(server: &Server, body: &[String]) -> Option<String> {
    let dir = TempDir::new("sh");
    let script = format!("{SHELL_PRELUDE}\n{}\n", substitute(&body.join("\n")));
    // `timeout`: a block that hangs fails instead of holding the test.
    let output = Command::new("timeout")
        .args(["120", "bash", "-euo", "pipefail", "-c", &script])
        .current_dir(&dir.0)
        .env("DOC_CLI", cli_binary())
        .env("DOC_SERVER", server_binary())
        .env("DOC_PORT", server.port.to_string())
        .env("DOC_PORT2", free_port().to_string())
        .env("DOC_DIR", &dir.0)
        .output()
        .expect("run bash");
    (!output.status.success()).then(|| {
        format!(
            "exited with {}\n--- stdout\n{}--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn looks_like(body: &[String], starts: &[&str]) -> bool {
    body.iter()
        .any(|l| starts.iter().any(|s| l.trim_start().starts_with(s)))
}

#[test]
fn block_reader() {
    let found = blocks(
        "a\n```conf\nbf.x 1\n```\n<!-- not run: loops -->\n```sh\nmake run\n```\n* item\n\n  ```\n  MULTI\n  ```\n",
    );
    assert_eq!(found.len(), 3);
    assert_eq!((found[0].line, found[0].lang.as_str()), (2, "conf"));
    assert_eq!(found[0].body, vec!["bf.x 1".to_string()]);
    assert!(found[1].skipped && found[1].lang == "sh" && !found[0].skipped);
    assert_eq!(found[2].body, vec!["MULTI".to_string()]);
}

#[test]
fn shell_blocks_fail_when_a_command_fails() {
    let server = Server::start();
    assert!(check_shell(&server, &["redis-cli PING".to_string()]).is_none());
    assert!(check_shell(&server, &["redis-cli --scan --type RBcountBF".to_string()]).is_some());
    assert!(check_shell(
        &server,
        &["redis-server --loadmodule /nonexistent.so".to_string()]
    )
    .is_some());
    assert!(check_conf(&["loadmodule /path/to/libredbloom.so".to_string()]).is_none());
    assert!(
        check_conf(&[
            "bf.bf-error-rate 0.001    # a comment".to_string(),
            "loadmodule /path/to/libredbloom.so".to_string()
        ])
        .is_some()
            || server_binary() != "redis-server",
        "Redis 7.0 refuses a config line with a trailing comment"
    );
}

#[test]
fn every_conf_snippet_and_shell_block_in_the_docs_works() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    let (mut confs, mut shells) = (0, 0);
    for file in crate::docs::doc_files() {
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let markdown = std::fs::read_to_string(&file).unwrap();
        let mut server: Option<Server> = None;
        let mut previous_shell: Vec<String> = Vec::new();
        for block in blocks(&markdown) {
            let at = format!("{name}:{} (```{})", block.line, block.lang);
            match block.lang.as_str() {
                "conf" => {
                    confs += 1;
                    if let Some(problem) = check_conf(&block.body) {
                        failures.push(format!("{at}: {problem}"));
                    }
                }
                "sh" | "bash" | "shell" if !block.skipped => {
                    shells += 1;
                    let server = server.get_or_insert_with(|| {
                        let server = Server::start();
                        for command in [
                            "BF.ADD bf x",
                            "CF.ADD cf x",
                            "CBF.ADD cbf x",
                            "WBF.RESERVE wbf 0.01 100",
                        ] {
                            let args: Vec<&str> = command.split(' ').collect();
                            cli(server.port, &args).expect(command);
                        }
                        server
                    });
                    let mut body = if block.continues {
                        previous_shell.clone()
                    } else {
                        Vec::new()
                    };
                    body.extend(block.body.iter().cloned());
                    if let Some(problem) = check_shell(server, &body) {
                        failures.push(format!("{at}: {problem}"));
                    }
                    previous_shell = body;
                }
                "sh" | "bash" | "shell" => {}
                _ if looks_like(&block.body, &["loadmodule "]) => {
                    failures.push(format!("{at}: a redis.conf snippet must be ```conf"))
                }
                _ if looks_like(
                    &block.body,
                    &[
                        "redis-cli ",
                        "redis-server --",
                        "valkey-cli ",
                        "valkey-server --",
                    ],
                ) =>
                {
                    failures.push(format!("{at}: shell commands must be ```sh"))
                }
                _ => {}
            }
        }
    }
    assert!(confs >= 2, "only {confs} conf snippets found");
    assert!(shells >= 3, "only {shells} shell blocks found");
    assert!(
        failures.is_empty(),
        "{} of {} snippets fail:\n\n{}",
        failures.len(),
        confs + shells,
        failures.join("\n\n")
    );
    println!("{confs} conf snippets and {shells} shell blocks checked");
}
