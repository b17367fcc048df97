//! Loads are all or nothing (issue 33): SIGINT / SIGTERM while `load` or `shard load` ships
//! its chunks (seen from the server's received bytes, through a proxy that slows the ship
//! down) leaves every target as it was and no temporary key; a process killed outright
//! leaves a temporary key the next run replaces; a connection dropped mid-ship makes the
//! ship start over into a fresh temporary key. Each time, running the same command again
//! loads what an undisturbed run loads.

use crate::common::{ok, url, write_items, Run};
use crate::proxy::Proxy;
use crate::support::{wait_until, RawConnection, Reply, Server, TempDir};
use std::process::{Child, Command, Stdio};

/// Bytes a second the proxy lets through: a ship of ~36 MB takes about 2 s.
const RATE: u64 = 16 << 20;
/// A capacity whose filter is ~36 MB at 1 %.
const CAPACITY: &str = "30000000";

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run redbloom")
}

fn finish(child: Child) -> (Option<i32>, Run) {
    let output = child.wait_with_output().unwrap();
    let run = Run {
        ok: output.status.success(),
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).to_string(),
    };
    (output.status.code(), run)
}

fn received(conn: &mut RawConnection) -> u64 {
    let info = conn.call(&["INFO", "stats"]).text();
    info.lines()
        .find_map(|l| l.strip_prefix("total_net_input_bytes:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until the server has received `bytes` more than `before` (the ship is under way).
fn wait_received(conn: &mut RawConnection, before: u64, bytes: u64) {
    wait_until("the ship under way", || received(conn) > before + bytes);
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every item answers 1 in `key` (BF.MEXISTS, 1,000 at a time).
fn all_present(conn: &mut RawConnection, key: &str, items: &[String]) {
    for part in items.chunks(1000) {
        let mut cmd = vec!["BF.MEXISTS".to_string(), key.to_string()];
        cmd.extend(part.iter().cloned());
        assert!(conn.call(&cmd).ints().iter().all(|&x| x == 1), "{key}");
    }
}

fn items() -> Vec<String> {
    (0..5000).map(|i| format!("item:{i}")).collect()
}

#[test]
fn an_interrupted_load_leaves_the_key_absent_and_runs_again() {
    let server = Server::start();
    let proxy = Proxy::start(server.port, RATE);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-load");
    let list = items();
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    let slow = proxy.url();
    let load = |u: &str, key: &str| {
        vec![
            "load".to_string(),
            u.to_string(),
            key.to_string(),
            "--error-rate".into(),
            "0.01".into(),
            "--capacity".into(),
            CAPACITY.into(),
            "--file".into(),
            f.into(),
        ]
    };
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        let key = format!("seen:{name}");
        let a = load(&slow, &key);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let before = received(&mut conn);
        let child = spawn(&a);
        // Well into the ship: the header and 8 MiB of chunks are in.
        wait_received(&mut conn, before, 8 << 20);
        assert_eq!(
            conn.call(&["EXISTS", &format!("{{{key}}}:redbloom-load")]),
            Reply::Int(1)
        );
        signal(&child, name);
        let (status, run) = finish(child);
        assert_eq!(status, Some(code), "{}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("redbloom: interrupted: {key} is unchanged\n")
        );
        assert_eq!(run.stdout, "");
        assert_eq!(conn.call(&["EXISTS", &key]), Reply::Int(0), "{name}");
        // No temporary key left either.
        assert!(
            conn.sorted_keys().iter().all(|k| k.starts_with("seen:")),
            "{name}: {:?}",
            conn.sorted_keys()
        );
        // The same command again (here without the proxy) loads it whole.
        let direct = load(&url(&server), &key);
        let direct: Vec<&str> = direct.iter().map(String::as_str).collect();
        assert!(ok(&direct).starts_with(&format!("loaded {key}: 5000 items, ")));
        all_present(&mut conn, &key, &list);
    }
    // Killed outright, the load leaves its temporary key (never the target); the next run
    // replaces it, and the result is the undisturbed load's, byte for byte.
    let a = load(&slow, "killed");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let before = received(&mut conn);
    let child = spawn(&a);
    wait_received(&mut conn, before, 8 << 20);
    signal(&child, "KILL");
    finish(child);
    assert_eq!(conn.call(&["EXISTS", "killed"]), Reply::Int(0));
    assert_eq!(
        conn.call(&["EXISTS", "{killed}:redbloom-load"]),
        Reply::Int(1)
    );
    let direct = load(&url(&server), "killed");
    let direct: Vec<&str> = direct.iter().map(String::as_str).collect();
    ok(&direct);
    assert_eq!(
        conn.call(&["EXISTS", "{killed}:redbloom-load"]),
        Reply::Int(0)
    );
    assert!(
        conn.call(&["DUMP", "killed"]).bytes() == conn.call(&["DUMP", "seen:INT"]).bytes(),
        "the rerun after a kill differs from an undisturbed load"
    );
}

#[test]
fn a_dropped_connection_restarts_the_ship_into_a_fresh_key() {
    let server = Server::start();
    let proxy = Proxy::start(server.port, RATE);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-drop");
    let list = items();
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    let u = url(&server);
    let options = ["--error-rate", "0.01", "--capacity", CAPACITY, "--file", f];
    let mut reference = vec!["load", &u, "reference"];
    reference.extend(options);
    ok(&reference);
    let slow = proxy.url();
    let mut dropped = vec!["load", &slow, "dropped"];
    dropped.extend(options);
    let before = received(&mut conn);
    let child = spawn(&dropped);
    wait_received(&mut conn, before, 8 << 20);
    // Every connection but this one: the CLI's (through the proxy).
    assert!(
        conn.call(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
            .int()
            >= 1
    );
    let (status, run) = finish(child);
    assert_eq!(status, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with("loaded dropped: 5000 items, "),
        "{}",
        run.stdout
    );
    assert!(
        conn.call(&["DUMP", "dropped"]).bytes() == conn.call(&["DUMP", "reference"]).bytes(),
        "a load restarted after a dropped connection differs from an undisturbed one"
    );
    all_present(&mut conn, "dropped", &list);
    assert_eq!(conn.sorted_keys(), ["dropped", "reference"]);
}

#[test]
fn an_interrupted_shard_load_leaves_the_members_empty_and_runs_again() {
    let server = Server::start();
    let proxy = Proxy::start(server.port, RATE);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-shard");
    let list = items();
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    let u = url(&server);
    ok(&[
        "shard",
        "create",
        &u,
        "s",
        "--shards",
        "3",
        "--error-rate",
        "0.01",
        "--capacity",
        CAPACITY,
    ]);
    let members: Vec<String> = (0..3)
        .map(|m| conn.call(&["HGET", "s", &format!("member:{m}")]).text())
        .collect();
    let empty: Vec<Vec<u8>> = members
        .iter()
        .map(|m| conn.call(&["DUMP", m]).bytes())
        .collect();
    let slow = proxy.url();
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        let before = received(&mut conn);
        let child = spawn(&["shard", "load", &slow, "s", "--file", f]);
        wait_received(&mut conn, before, 16 << 20);
        signal(&child, name);
        let (status, run) = finish(child);
        assert_eq!(status, Some(code), "{}", run.stderr);
        assert_eq!(
            run.stderr,
            "redbloom: s: interrupted: the 3 members are unchanged\n"
        );
        let now: Vec<Vec<u8>> = members
            .iter()
            .map(|m| conn.call(&["DUMP", m]).bytes())
            .collect();
        assert!(now == empty, "{name}: a member changed");
        let mut keys = members.clone();
        keys.push("s".into());
        keys.sort();
        assert_eq!(conn.sorted_keys(), keys, "{name}");
    }
    assert_eq!(
        ok(&["shard", "load", &u, "s", "--file", f]),
        "loaded s: 5000 items into 3 members\n"
    );
    let answers = ok(&["shard", "exists", &u, "s", "--file", f]);
    assert_eq!(answers.lines().count(), 5000);
    assert!(answers.lines().all(|l| l == "1"));
}

/// The rename at the end never overwrites: a key created during `load`'s ship, or a member
/// that received items during `shard load`'s, is left as it is and the load fails, its
/// temporary keys removed.
#[test]
fn targets_changed_during_the_ship_are_not_overwritten() {
    let server = Server::start();
    let proxy = Proxy::start(server.port, RATE);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-race");
    let file = dir.0.join("items.txt");
    write_items(&file, items().into_iter());
    let f = file.to_str().unwrap();
    let slow = proxy.url();
    let before = received(&mut conn);
    let child = spawn(&[
        "load",
        &slow,
        "k",
        "--error-rate",
        "0.01",
        "--capacity",
        CAPACITY,
        "--file",
        f,
    ]);
    wait_received(&mut conn, before, 8 << 20);
    conn.call(&["SET", "k", "meanwhile"]);
    let (status, run) = finish(child);
    assert_eq!(status, Some(1));
    assert_eq!(
        run.stderr,
        "redbloom: k: created by someone else during the load; left as it is\n"
    );
    assert_eq!(conn.call(&["GET", "k"]), Reply::bulk("meanwhile"));
    assert_eq!(conn.sorted_keys(), ["k"]);

    let u = url(&server);
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
        CAPACITY,
    ]);
    let member = conn.call(&["HGET", "s", "member:1"]).text();
    let before = received(&mut conn);
    let child = spawn(&["shard", "load", &slow, "s", "--file", f]);
    wait_received(&mut conn, before, 8 << 20);
    assert_eq!(conn.call(&["BF.ADD", &member, "late"]), Reply::Int(1));
    let (status, run) = finish(child);
    assert_eq!(status, Some(1));
    assert_eq!(
        run.stderr,
        format!("redbloom: s: {member}: received items during the load; left as it is\n")
    );
    assert_eq!(conn.call(&["BF.CARD", &member]), Reply::Int(1));
    let other = conn.call(&["HGET", "s", "member:0"]).text();
    assert_eq!(conn.call(&["BF.CARD", &other]), Reply::Int(0));
    let mut keys = vec!["k".to_string(), "s".into(), member, other];
    keys.sort();
    assert_eq!(conn.sorted_keys(), keys);
}

/// A static filter ships as the others do: SIGINT during its ship (one 8 MB chunk of
/// 2,000,000 items' 30-bit fingerprints) leaves the key absent and no temporary key; the
/// same command then loads it whole.
#[test]
fn an_interrupted_static_load_leaves_the_key_absent() {
    let server = Server::start();
    let proxy = Proxy::start(server.port, RATE);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-static");
    let file = dir.0.join("items.txt");
    write_items(&file, (0..2_000_000).map(|i| format!("item:{i}")));
    let f = file.to_str().unwrap();
    let load = |u: &str| {
        let args = ["load", u, "st", "--type", "static", "--error-rate", "1e-9"];
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.extend(["--file".to_string(), f.to_string()]);
        args
    };
    let slow = load(&proxy.url());
    let slow: Vec<&str> = slow.iter().map(String::as_str).collect();
    let before = received(&mut conn);
    let child = spawn(&slow);
    wait_received(&mut conn, before, 4 << 20);
    assert_eq!(conn.call(&["EXISTS", "{st}:redbloom-load"]), Reply::Int(1));
    signal(&child, "INT");
    let (status, run) = finish(child);
    assert_eq!(status, Some(130), "{}", run.stderr);
    assert_eq!(run.stderr, "redbloom: interrupted: st is unchanged\n");
    assert_eq!(conn.sorted_keys(), Vec::<String>::new());
    let direct = load(&url(&server));
    let direct: Vec<&str> = direct.iter().map(String::as_str).collect();
    assert!(ok(&direct).starts_with("loaded st: 2000000 items, "));
    let probe: Vec<String> = (0..2_000_000)
        .step_by(997)
        .map(|i| format!("item:{i}"))
        .collect();
    let mut cmd = vec!["SF.MEXISTS".to_string(), "st".to_string()];
    cmd.extend(probe.iter().cloned());
    assert!(conn.call(&cmd).ints().iter().all(|&x| x == 1));
    assert_eq!(conn.call(&["SF.CARD", "st"]), Reply::Int(2_000_000));
    assert_eq!(conn.sorted_keys(), ["st"]);
}

#[test]
fn an_interrupted_xf_load_leaves_the_key_absent() {
    let server = Server::start();
    // A quarter of RATE: the ship of ~4.7 MB takes ~1 s.
    let proxy = Proxy::start(server.port, RATE / 4);
    let mut conn = server.raw();
    let dir = TempDir::new("interrupt-xf");
    let file = dir.0.join("items.txt");
    // At 1e-9 an expandable filter of these items is 4.7 MB.
    write_items(&file, (0..1_000_000).map(|i| format!("item:{i}")));
    let f = file.to_str().unwrap();
    let load = |u: &str| -> Vec<String> {
        [
            "load",
            u,
            "xf",
            "--type",
            "xf",
            "--error-rate",
            "1e-9",
            "--file",
            f,
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    };
    let slow = load(&proxy.url());
    let slow: Vec<&str> = slow.iter().map(String::as_str).collect();
    let before = received(&mut conn);
    let child = spawn(&slow);
    // The build comes first (item by item, seconds in a debug build on a busy machine):
    // waited for apart from the ship.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while received(&mut conn) < before + (1 << 20) {
        assert!(std::time::Instant::now() < deadline, "the ship never began");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(conn.call(&["EXISTS", "{xf}:redbloom-load"]), Reply::Int(1));
    signal(&child, "INT");
    let (status, run) = finish(child);
    assert_eq!(status, Some(130), "{}", run.stderr);
    assert_eq!(run.stderr, "redbloom: interrupted: xf is unchanged\n");
    assert_eq!(conn.sorted_keys(), Vec::<String>::new());
    let direct = load(&url(&server));
    let direct: Vec<&str> = direct.iter().map(String::as_str).collect();
    assert!(ok(&direct).starts_with("loaded xf: 1000000 items, "));
    let probe: Vec<String> = (0..1_000_000)
        .step_by(997)
        .map(|i| format!("item:{i}"))
        .collect();
    let mut cmd = vec!["XF.MEXISTS".to_string(), "xf".to_string()];
    cmd.extend(probe.iter().cloned());
    assert!(conn.call(&cmd).ints().iter().all(|&x| x == 1));
    assert_eq!(conn.call(&["XF.CARD", "xf"]), Reply::Int(1_000_000));
    assert_eq!(conn.sorted_keys(), ["xf"]);
}
