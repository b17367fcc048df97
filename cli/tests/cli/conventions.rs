//! The conventions of redis-cli and common CLIs (issue 33): no password ever printed, the
//! password from REDISCLI_AUTH; fast errors that say what happened (connection refused, a
//! server that never answers, a port that is not Redis) within `--timeout`; exit code 2
//! for usage errors and 1 for failures; `--json` errors are JSON, JSON numbers numbers.

use crate::common::{ok, redbloom, url};
use crate::support::server::free_port;
use crate::support::{Reply, Server};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

fn with_env(vars: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(args)
        .env_remove("REDISCLI_AUTH")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

#[test]
fn connection_errors_are_fast_and_named() {
    // Nobody listens.
    let port = free_port();
    let dead = format!("redis://127.0.0.1:{port}/");
    let started = Instant::now();
    let run = redbloom(&["inspect", &dead, "k"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        format!("redbloom: cannot connect to {dead}: connection refused\n")
    );
    assert!(started.elapsed() < Duration::from_secs(3));

    // A port that accepts and never answers: within --timeout.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("redis://127.0.0.1:{}/", silent.local_addr().unwrap().port());
    let held = std::thread::spawn(move || {
        let conns: Vec<_> = silent.incoming().take(1).collect();
        std::thread::sleep(Duration::from_secs(5));
        drop(conns);
    });
    let started = Instant::now();
    let run = redbloom(&["--timeout", "1", "inspect", &silent_url, "k"]);
    let took = started.elapsed();
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        format!(
            "redbloom: cannot connect to {silent_url}: no answer within 1 s (not a Redis server, or it is stuck)\n"
        )
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
    held.join().unwrap();

    // A port that speaks another protocol.
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let http_url = format!("redis://127.0.0.1:{}/", http.local_addr().unwrap().port());
    let server = std::thread::spawn(move || {
        for mut conn in http.incoming().take(1).flatten() {
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let run = redbloom(&["inspect", &http_url, "k"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .starts_with(&format!("redbloom: cannot connect to {http_url}: ")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("not a Redis server"), "{}", run.stderr);
    server.join().unwrap();
}

#[test]
fn passwords_are_never_printed_and_come_from_rediscli_auth() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        conn.call(&["ACL", "SETUSER", "alice", "on", ">hunter2", "~*", "&*", "+@all"]),
        Reply::ok()
    );
    conn.call(&["BF.ADD", "f", "a"]);
    let port = server.port;
    let with_password = |pw: &str| format!("redis://alice:{pw}@127.0.0.1:{port}/");
    let good = with_password("hunter2");
    assert!(ok(&["inspect", &good, "f"]).starts_with("f: bf, 1 items"));
    // A wrong password: the error names the URL with the password hidden.
    let (code, out, err) = with_env(&[], &["inspect", &with_password("s3cret"), "f"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(!err.contains("s3cret"), "{err}");
    assert!(
        err.starts_with(&format!(
            "redbloom: cannot connect to redis://alice:***@127.0.0.1:{port}/: "
        )),
        "{err}"
    );
    // A refused port with a password in its URL.
    let dead = format!("redis://:hunter2@127.0.0.1:{}/", free_port());
    let (_, _, err) = with_env(&[], &["--json", "inspect", &dead, "f"]);
    assert!(!err.contains("hunter2"), "{err}");
    // REDISCLI_AUTH supplies the password a URL leaves out.
    let user_only = format!("redis://alice@127.0.0.1:{port}/");
    let (code, out, err) = with_env(
        &[("REDISCLI_AUTH", "hunter2")],
        &["inspect", &user_only, "f"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("f: bf, 1 items"));
    let (code, _, err) = with_env(
        &[("REDISCLI_AUTH", "nothere")],
        &["inspect", &user_only, "f"],
    );
    assert_eq!(code, Some(1));
    assert!(!err.contains("nothere"), "{err}");
}

#[test]
fn exit_codes_and_json() {
    let server = Server::start();
    let u = url(&server);
    // Usage errors: the parser's and the checks' own, exit 2.
    for args in [
        vec!["load", &u],
        vec!["load", &u, "k", "--capacity", "x"],
        vec!["load", &u, "k", "--capacity", "10"],
        vec!["load", &u, "k", "--capacity", "10", "--error-rate", "2"],
        vec![
            "load",
            &u,
            "k",
            "--capacity",
            "10",
            "--error-rate",
            "0.1",
            "--type",
            "zf",
        ],
        vec![
            "shard",
            "create",
            &u,
            "s",
            "--shards",
            "0",
            "--error-rate",
            "0.1",
            "--capacity",
            "10",
        ],
        vec!["--timeout", "0", "inspect", &u, "k"],
    ] {
        let run = redbloom(&args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert_eq!(
        redbloom(&["load", &u, "k", "--capacity", "10"]).stderr,
        "redbloom: --error-rate is required for bf filters\n"
    );
    // A failure: exit 1; with --json, a JSON object on standard error.
    let run = redbloom(&["inspect", &u, "nope"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (Some(1), "redbloom: no key nope\n")
    );
    let run = redbloom(&["--json", "inspect", &u, "nope"]);
    assert_eq!(run.code, Some(1));
    let error: serde_json::Value = serde_json::from_str(&run.stderr).unwrap();
    assert_eq!(
        error,
        serde_json::json!({"error": {"kind": "failed", "message": "no key nope"}})
    );
    let run = redbloom(&["--json", "load", &u, "k", "--capacity", "10"]);
    assert_eq!(run.code, Some(2));
    let error: serde_json::Value = serde_json::from_str(&run.stderr).unwrap();
    assert_eq!(error["error"]["kind"], "usage");

    // JSON numbers are numbers.
    ok(&[
        "shard",
        "create",
        &u,
        "s",
        "--shards",
        "2",
        "--error-rate",
        "0.01",
        "--capacity",
        "1000",
    ]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "shard", "info", &u, "s"])).unwrap();
    let d = &info["descriptor"];
    assert_eq!(d["capacity"], 1000);
    assert_eq!(d["error_rate"], 0.01);
    assert_eq!(d["shards"], 2);
    assert_eq!(d["version"], 1);
    assert_eq!(d["expansion"], serde_json::Value::Null);
    assert_eq!(d["nonscaling"], false);
    assert_eq!(d["format"], "redbloom-sharded-filter");
}

/// `rediss://` (issue 33): TLS through the redis crate's rustls, against a local server
/// with a certificate generated here, checked against `--tls-ca`; without the CA the
/// certificate is refused. Against Debian's redis-server (the default server): the Redis 8
/// and Valkey builds the other runs use have no TLS.
#[test]
fn rediss_urls_speak_tls() {
    if std::env::var_os("REDBLOOM_SERVER").is_some() {
        eprintln!("rediss_urls_speak_tls: skipped (REDBLOOM_SERVER's build has no TLS)");
        return;
    }
    let dir = crate::support::TempDir::new("tls");
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_string();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        &path("ca.key"),
        "-out",
        &path("ca.crt"),
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        &path("server.key"),
        "-out",
        &path("server.csr"),
    ]);
    std::fs::write(dir.0.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        &path("server.csr"),
        "-CA",
        &path("ca.crt"),
        "-CAkey",
        &path("ca.key"),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        &path("ext.cnf"),
        "-out",
        &path("server.crt"),
    ]);
    let tls_port = free_port().to_string();
    let server = Server::start_with(&[
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &path("server.crt"),
        "--tls-key-file",
        &path("server.key"),
        "--tls-ca-cert-file",
        &path("ca.crt"),
        "--tls-auth-clients",
        "no",
    ]);
    server.raw().call(&["BF.MADD", "f", "a", "b"]);
    let tls = format!("rediss://127.0.0.1:{tls_port}/");
    let ca = path("ca.crt");
    assert!(ok(&["--tls-ca", &ca, "inspect", &tls, "f"]).starts_with("f: bf, 2 items"));
    let file = path("f.snap");
    ok(&["--tls-ca", &ca, "export", &tls, "f", &file]);
    assert_eq!(ok(&["check", &file, "a", "zz"]), "1\n0\n");
    // Not trusted without the CA.
    let run = redbloom(&["inspect", &tls, "f"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .starts_with(&format!("redbloom: cannot connect to {tls}: ")),
        "{}",
        run.stderr
    );
}

/// A command retried over MASTERDOWN (as over CLUSTERDOWN, LOADING, a lost connection) says
/// on standard error what it waits for, within a few seconds (issue 33: it was silent).
#[test]
fn retries_say_what_they_wait_for() {
    let dead = free_port().to_string();
    let replica = Server::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &dead,
        "--replica-serve-stale-data",
        "no",
    ]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["inspect", &url(&replica), "k"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in stderr.lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let line = lines.recv_timeout(Duration::from_secs(5));
    child.kill().unwrap();
    child.wait().unwrap();
    let line = line.expect("no notice within 5 s");
    let expected = format!(
        "redbloom: waiting for 127.0.0.1:{}: MASTERDOWN ",
        replica.port
    );
    assert!(line.starts_with(&expected), "{line}");
    assert!(line.ends_with(" s so far; giving up after 60 s)"), "{line}");
}
