//! Real clients against redbloom: node-redis 6 (its default RESP3 and `RESP: 2`) and
//! redis-py (protocol=3 and protocol=2) run their bf/cf commands and check the values their
//! documentation promises (tests/clients/). `make deps` (scripts/install-deps.sh) installs
//! both at the versions pinned there; each script exits non-zero on a failed check.

use crate::support::Server;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a client script against a fresh server; fails with its output unless it succeeds.
fn run_client(program: &Path, script: &Path, what: &str) {
    let server = Server::start();
    let output = Command::new(program)
        .arg(script)
        .current_dir(script.parent().expect("script folder"))
        .env("REDBLOOM_PORT", server.port.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // Each protocol's pass prints one `ok` line: both protocols ran.
    assert_eq!(stdout.matches(": ok").count(), 2, "{what}: {stdout}");
    eprint!("{stdout}");
}

#[test]
fn node_redis_resp3_and_resp2() {
    let folder = repo().join("tests/clients/node");
    assert!(
        folder.join("node_modules/redis").is_dir(),
        "node-redis is not installed: run `make deps` (npm ci in tests/clients/node)"
    );
    run_client(Path::new("node"), &folder.join("filters.js"), "node-redis");
}

#[test]
fn redis_py_protocol_3_and_2() {
    let python = repo().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `make deps` (scripts/install-deps.sh)",
        python.display()
    );
    run_client(
        &python,
        &repo().join("tests/clients/python/filters.py"),
        "redis-py",
    );
}
