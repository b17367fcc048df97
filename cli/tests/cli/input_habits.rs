//! Issue 43, item 9: blank input lines are skipped by the commands that add items and
//! answered by those that ask; Ctrl-C while the input is still being read stops with a
//! message (and exit 130, nothing written); the build's progress bar counts items as the
//! filter is built.

use crate::common::{ok, url};
use crate::support::background::wait_until;
use crate::support::{Server, TempDir};
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn blank_lines_are_skipped_by_adds_and_answered_by_asks() {
    let server = Server::start();
    let u = url(&server);
    let dir = TempDir::new("blank-lines");
    let file = dir.0.join("items.txt");
    std::fs::write(&file, "a\n\nb\r\n\n\nc\n\n").unwrap();
    let f = file.to_str().unwrap();
    let loaded = ok(&[
        "load",
        &u,
        "k",
        "--error-rate",
        "0.001",
        "--capacity",
        "100",
        "--file",
        f,
    ]);
    assert!(loaded.starts_with("loaded k: 3 items, "), "{loaded}");
    assert_eq!(server.raw().call(&["BF.EXISTS", "k", ""]).int(), 0);
    let snap = dir.0.join("k.snap");
    ok(&["export", &u, "k", snap.to_str().unwrap()]);
    // Asked: one answer per line, the blank ones too (0: never added).
    assert_eq!(
        ok(&["check", snap.to_str().unwrap(), "--file", f]),
        "1\n0\n1\n0\n0\n1\n0\n"
    );
    // A static filter's load skips them as well.
    let loaded = ok(&[
        "load",
        &u,
        "st",
        "--type",
        "static",
        "--error-rate",
        "0.01",
        "--file",
        f,
    ]);
    assert!(loaded.starts_with("loaded st: 3 items, "), "{loaded}");
}

#[test]
fn ctrl_c_while_reading_the_input_stops_with_a_message() {
    let server = Server::start();
    let u = url(&server);
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args([
            "load",
            &u,
            "k",
            "--error-rate",
            "0.01",
            "--capacity",
            "1000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "a\nb").unwrap();
    stdin.flush().unwrap();
    // The temporary reservation made and deleted: the load now reads its input.
    wait_until("the reservation deleted", || {
        server
            .raw()
            .call(&["INFO", "commandstats"])
            .text()
            .contains("cmdstat_del:calls=")
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(output.status.code(), Some(130));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "redbloom: stopped by SIGINT while reading the input, after 2 lines\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(server.raw().call(&["EXISTS", "k"]).int(), 0);
}

/// On a terminal (a pseudo-terminal from `script`), the build's bar counts the items built
/// so far, not 0 until the end.
#[test]
fn the_build_bar_counts_items_as_they_are_built() {
    let server = Server::start();
    let u = url(&server);
    let dir = TempDir::new("build-bar");
    let file = dir.0.join("items.txt");
    let text: String = (0..1_000_000).map(|i| format!("item:{i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let command = format!(
        "{} load {u} k --error-rate 0.01 --capacity 1000000 --file {}",
        env!("CARGO_BIN_EXE_redbloom"),
        file.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("run script");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{screen}");
    assert!(screen.contains("loaded k: 1000000 items"), "{screen}");
    // Some drawing of the bar shows a count of items built before the end (before issue
    // 43 it showed 0 until the whole read was built, then the total).
    let counts: Vec<u64> = screen
        .split("build: ")
        .skip(1)
        .filter_map(|rest| rest.split(" items").next())
        .filter_map(|n| n.replace(',', "").parse().ok())
        .collect();
    assert!(
        counts.iter().any(|&n| n > 0 && n < 1_000_000),
        "{counts:?}: {screen:?}"
    );
}
