//! Streamed input is answered as it comes (issue 33): `tail -f log | redbloom shard exists`
//! answers each line when the input pauses, and `shard exists … | head -1` stops at the
//! closed pipe.

use crate::common::{ok, url};
use crate::support::Server;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn answers_come_when_the_input_pauses_and_stop_at_a_closed_pipe() {
    let server = Server::start();
    let u = url(&server);
    ok(&[
        "shard",
        "create",
        &u,
        "f",
        "--shards",
        "3",
        "--error-rate",
        "0.01",
        "--capacity",
        "1000",
    ]);
    ok(&["shard", "add", &u, "f", "seen:1", "seen:2"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["shard", "exists", &u, "f"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    // Each line is answered while the input stays open (as `tail -f` keeps it).
    for (item, answer) in [("seen:1", "1"), ("never:1", "0"), ("seen:2", "1")] {
        writeln!(stdin, "{item}").unwrap();
        stdin.flush().unwrap();
        let line = lines.recv_timeout(Duration::from_secs(3));
        assert_eq!(
            line.as_deref(),
            Ok(answer),
            "{item}: no answer while the input is open"
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());

    // `| head -1` on an endless input: the command stops once its output is closed.
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["shard", "exists", &u, "f"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut n = 0u64;
        // Until the command is gone (its standard input then breaks).
        while writeln!(stdin, "item:{n}").is_ok() {
            n += 1;
            // Bursts with pauses, as a log grows.
            if n.is_multiple_of(1000) {
                std::thread::sleep(Duration::from_millis(80));
            }
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first == "0\n" || first == "1\n", "{first}");
    drop(stdout);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "shard exists goes on with its output closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    writer.join().unwrap();
}
