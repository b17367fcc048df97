//! Real clients against redbloom: node-redis 6 (its default RESP3 and `RESP: 2`) and
//! redis-py (protocol=3 and protocol=2) run their bf/cf commands and check the values their
//! documentation promises (tests/clients/); node-redis' own `@redis/bloom` test suite
//! runs through the published package (tests/clients/node/suite.js), and the bloom suites
//! of redis-py and valkey-py run unchanged from their sdists. `make test-deps`
//! (scripts/install-deps.sh --test) installs both at the versions pinned there; when one is
//! missing (a plain `cargo test`), the test installs it the same way
//! (`scripts/install-deps.sh --clients`), or fails saying what to run. Each script exits
//! non-zero on a failed check.

use crate::support::Server;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a client script against a fresh server; fails with its output unless it succeeds,
/// else returns what it printed.
fn run_client(program: &Path, script: &Path, what: &str) -> String {
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
    eprint!("{stdout}");
    stdout.into_owned()
}

/// Each protocol's pass of a filters script prints one `ok` line: both protocols ran.
fn assert_both_protocols_ok(stdout: &str, what: &str) {
    assert_eq!(stdout.matches(": ok").count(), 2, "{what}: {stdout}");
}

/// Makes sure the client libraries are installed: when `installed()` is false, runs
/// `scripts/install-deps.sh --clients` once (both tests share it) and checks again; fails
/// with what to run when that did not help.
fn ensure_installed(what: &str, installed: impl Fn() -> bool) {
    static INSTALL: std::sync::Mutex<Option<Result<(), String>>> = std::sync::Mutex::new(None);
    if installed() {
        return;
    }
    let mut done = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let result = done
        .get_or_insert_with(|| {
            eprintln!("{what} is missing: running scripts/install-deps.sh --clients");
            match Command::new(repo().join("scripts/install-deps.sh"))
                .arg("--clients")
                .current_dir(repo())
                .output()
            {
                Ok(out) if out.status.success() => Ok(()),
                Ok(out) => Err(format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )),
                Err(e) => Err(e.to_string()),
            }
        })
        .clone();
    assert!(
        result.is_ok() && installed(),
        "{what} is not installed and scripts/install-deps.sh --clients could not install it \
         ({}). Run `make test-deps` (scripts/install-deps.sh --test: Node.js, npm, \
         python3-venv, then node-redis and redis-py), then this test again.",
        result
            .err()
            .unwrap_or_else(|| "it ran, but the library is still missing".into())
    );
}

/// tests/clients/node, once node and its node_modules (node-redis with `@redis/bloom`) are there.
fn node_redis_folder() -> PathBuf {
    let folder = repo().join("tests/clients/node");
    ensure_installed("node-redis (tests/clients/node/node_modules)", || {
        folder.join("node_modules/redis").is_dir()
            && folder.join("node_modules/@redis/bloom").is_dir()
            && Command::new("node").arg("--version").output().is_ok()
    });
    folder
}

#[test]
fn node_redis_resp3_and_resp2() {
    let folder = node_redis_folder();
    let stdout = run_client(Path::new("node"), &folder.join("filters.js"), "node-redis");
    assert_both_protocols_ok(&stdout, "node-redis");
}

/// Server-side tests in the spec files of `@redis/bloom` 6.3.1 (packages/bloom/lib/commands/
/// in node-redis' repository): bloom 13, cuckoo 17, count-min-sketch 6, top-k 9, t-digest 22
/// (tests/clients/node/README.md). A new pin in package.json fails the summary check below
/// until its spec is read again and suite/ follows it.
const NODE_REDIS_BLOOM_TESTS: usize = 67;

#[test]
fn node_redis_bloom_suite() {
    let folder = node_redis_folder();
    let stdout = run_client(
        Path::new("node"),
        &folder.join("suite.js"),
        "@redis/bloom suite",
    );
    let all = NODE_REDIS_BLOOM_TESTS;
    let summary =
        format!("@redis/bloom 6.3.1: {all} of {all} passed (RESP3), {all} of {all} (RESP2)");
    assert!(stdout.contains(&summary), "no `{summary}` line:\n{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("pass ")).count(),
        2 * all
    );
    assert!(!stdout.contains("FAIL "), "{stdout}");
}

#[test]
fn redis_py_protocol_3_and_2() {
    let python = repo().join(".venv/bin/python");
    ensure_installed("redis-py (.venv)", || {
        Command::new(&python)
            .args(["-c", "import redis"])
            .output()
            .is_ok_and(|out| out.status.success())
    });
    let stdout = run_client(
        &python,
        &repo().join("tests/clients/python/filters.py"),
        "redis-py",
    );
    assert_both_protocols_ok(&stdout, "redis-py");
}

/// The bloom suites redis-py and valkey-py publish in their source distributions
/// (tests/test_bloom.py and tests/test_asyncio/test_bloom.py, unpacked into
/// .venv/client-suites by scripts/client-suites.sh), run unchanged by pytest against a fresh
/// server, once per protocol. tests/clients/python/suite_plugin.py prints the counts; every
/// test of the suite must pass (`expected`: the suite's size at the pinned version, so a
/// suite that collected less fails too).
fn run_suite(server: &Server, package: &str, url_options: &[&str], expected: usize) {
    let python = repo().join(".venv/bin/python");
    let folder = std::fs::read_dir(repo().join(".venv/client-suites"))
        .ok()
        .and_then(|entries| {
            entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{package}-")))
            })
        });
    ensure_installed(
        &format!("{package}'s bloom suite (.venv/client-suites)"),
        || {
            folder
                .as_ref()
                .is_some_and(|f| f.join("tests/test_bloom.py").is_file())
        },
    );
    let folder = folder.expect("suite folder");
    let urls: Vec<String> = url_options
        .iter()
        .map(|option| format!("{option}={package}://127.0.0.1:{}", server.port))
        .collect();
    for protocol in ["2", "3"] {
        let output = Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-p",
                "suite_plugin",
                "-p",
                "no:cacheprovider",
            ])
            .args(["--suite-package", package, "-o", "asyncio_mode=auto", "-q"])
            .args(["tests/test_bloom.py", "tests/test_asyncio/test_bloom.py"])
            .args(&urls)
            .arg(format!("--protocol={protocol}"))
            .current_dir(&folder)
            .env("PYTHONPATH", repo().join("tests/clients/python"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run pytest: {e}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary = stdout
            .lines()
            .find(|l| l.starts_with(&format!("suite {package} ")))
            .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
        eprintln!("RESP{protocol}: {summary}");
        assert!(
            output.status.success()
                && summary.ends_with(&format!("passed={expected} failed=0 skipped=0 error=0")),
            "{package}'s suite, protocol {protocol}: {summary}\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// redis-py 8.1.0's bloom suite: 73 tests (25 sync, 48 asyncio) × RESP2 and RESP3.
#[test]
fn redis_py_bloom_suite() {
    let server = Server::start();
    // Its module tests connect to --redis-mod-url, its server checks to --redis-url.
    run_suite(&server, "redis", &["--redis-url", "--redis-mod-url"], 73);
}

/// valkey-py 6.1.1's bloom suite: 70 tests (24 sync, 46 asyncio) × RESP2 and RESP3. Its
/// conftest reads `valkey_version` from INFO, so it runs against Valkey (`make
/// test-valkey`); other servers' runs say so and pass.
#[test]
fn valkey_py_bloom_suite() {
    let server = Server::start();
    if !crate::support::is_valkey(&mut server.raw()) {
        eprintln!("valkey-py's bloom suite needs a Valkey server: it runs in `make test-valkey`");
        return;
    }
    run_suite(&server, "valkey", &["--valkey-url"], 70);
}
