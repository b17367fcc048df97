//! Issue 43: what a newcomer must be able to trust. No password is echoed back whether or
//! not the URL parses; `--timeout` bounds connecting, authenticating and the first reply
//! together (a server stopped with SIGSTOP); URLs that do not parse are usage errors in
//! plain words; `host:port` needs no scheme.

use crate::common::{redbloom, url};
use crate::support::{Reply, Server};
use std::process::Command;
use std::time::{Duration, Instant};

/// A server whose default user needs `password`.
fn with_password(password: &str) -> Server {
    let server = Server::start();
    let set = ["CONFIG", "SET", "requirepass", password];
    assert_eq!(server.raw().call(&set), Reply::ok());
    server
}

/// Sends `signal` to the process `pid` (a server this test started).
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[test]
fn no_password_is_echoed_whether_or_not_the_url_parses() {
    let server = with_password("s3cret");
    let port = server.port;
    let cases = [
        (
            format!(":s3cret@127.0.0.1:{port}"),
            None,
            format!(":***@127.0.0.1:{port}"),
        ),
        (
            format!("redis:/:s3cret@127.0.0.1:{port}"),
            Some(2),
            format!("redis:/:***@127.0.0.1:{port}"),
        ),
        (
            format!("redis://:s3cret@127.0.0.1:{port}x/"),
            Some(2),
            format!("redis://:***@127.0.0.1:{port}x/"),
        ),
        (
            format!("redis://al:wrong-s3cret@127.0.0.1:{port}/"),
            Some(1),
            format!("redis://al:***@127.0.0.1:{port}/"),
        ),
    ];
    for (given, code, shown) in cases {
        for json in [false, true] {
            let mut args = vec!["inspect", given.as_str(), "k"];
            if json {
                args.insert(0, "--json");
            }
            let run = redbloom(&args);
            assert!(!run.stderr.contains("s3cret"), "{given}: {}", run.stderr);
            if let Some(code) = code {
                assert_eq!(run.code, Some(code), "{given}: {}", run.stderr);
                assert!(run.stderr.contains(&shown), "{given}: {}", run.stderr);
            }
        }
    }
    // The parser's own errors echo arguments: masked too.
    let run = redbloom(&["inspect", "-p", ":s3cret@1", "k"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .starts_with("error: invalid value ':***@1' for '--port <PORT>'"),
        "{}",
        run.stderr
    );
    // `:s3cret@host:port` is host:port with a password: it connects (the key is missing).
    let run = redbloom(&["inspect", &format!(":s3cret@127.0.0.1:{port}"), "k"]);
    assert_eq!(run.stderr, "redbloom: no key k\n");
}

#[test]
fn urls_that_do_not_parse_are_usage_errors_in_plain_words() {
    let run = redbloom(&["inspect", "redis:/:pw@127.0.0.1:1", "k"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "redbloom: redis:/:***@127.0.0.1:1: Missing hostname (expected a redis:// URL or host:port)\n"
    );
    let server = with_password("right");
    let run = redbloom(&[
        "inspect",
        &format!("redis://:wrong@127.0.0.1:{}/", server.port),
        "k",
    ]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        format!(
            "redbloom: cannot connect to redis://:***@127.0.0.1:{}/: authentication failed (wrong user name or password)\n",
            server.port
        )
    );
    // host:port, no scheme.
    let plain = Server::start();
    let run = redbloom(&["inspect", &format!("127.0.0.1:{}", plain.port), "k"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "redbloom: no key k\n");
    let _ = url(&plain);
}

/// The whole of connect + AUTH + first reply within `--timeout`, against a server that
/// accepts connections (the kernel does) but never answers: stopped with SIGSTOP.
#[test]
fn timeout_bounds_the_whole_wait_on_a_stopped_server() {
    for password in [None, Some("s3cret")] {
        let server = match password {
            Some(p) => with_password(p),
            None => Server::start(),
        };
        let target = match password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/", server.port),
            None => format!("redis://127.0.0.1:{}/", server.port),
        };
        signal(server.pid(), "STOP");
        let started = Instant::now();
        let run = redbloom(&["--timeout", "2", "inspect", &target, "k"]);
        let took = started.elapsed();
        signal(server.pid(), "CONT");
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert_eq!(
            run.stderr,
            format!(
                "redbloom: cannot connect to {}: no answer within 2 s (not a Redis server, or it is stuck)\n",
                redbloom_client::mask_url(&target)
            )
        );
        // Before issue 43 this took 4 s (6 s with a password): one timeout per step.
        assert!(took < Duration::from_millis(3500), "{password:?}: {took:?}");
    }
}
