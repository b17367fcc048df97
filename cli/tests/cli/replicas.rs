//! Issue 43, items 4 and 5: `shard add --wait-replicas R` fails at once when a master has
//! fewer than R replicas (at the start or later on), saying how many items were added and
//! from which input line to resume, and drops no input silently; a round sent again
//! (its WAIT not confirmed in time) still counts the items its first send added as newly
//! added.

use crate::common::{ok, redbloom, url, write_items};
use crate::support::background::{info_field, start_replica, wait_until};
use crate::support::{Server, TempDir};
use std::io::Write;
use std::process::{Command, Stdio};

fn create(u: &str) {
    ok(&[
        "shard",
        "create",
        u,
        "users",
        "--shards",
        "4",
        "--error-rate",
        "0.0001",
        "--capacity",
        "100000",
    ]);
}

/// Items the members of `users` hold (their BF.CARD-like item counts).
fn items_held(server: &Server) -> i64 {
    let mut conn = redbloom_client::Conn::open(&url(server)).unwrap();
    let d = redbloom_client::Descriptor::open(&mut conn, "users").unwrap();
    d.member_infos(&mut conn)
        .unwrap()
        .iter()
        .filter_map(|m| m.int("Number of items inserted"))
        .sum()
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[test]
fn too_few_replicas_fail_at_once_with_the_count_and_where_to_resume() {
    let master = Server::start();
    let u = url(&master);
    create(&u);
    // No replica at all: nothing added, resume from line 1.
    let run = redbloom(&[
        "shard",
        "add",
        &u,
        "users",
        "a",
        "b",
        "--wait-replicas",
        "1",
    ]);
    assert_eq!(run.code, Some(1));
    let node = format!("127.0.0.1:{}", master.port);
    assert!(
        run.stderr.starts_with(&format!(
            "redbloom: users: --wait-replicas 1: {node} (the master of "
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.ends_with(") has 0 replica(s); stopped at line 1 of the input: the 0 items before it were added and acknowledged, the rest were not (resume from that line, e.g. tail -n +1 FILE | redbloom shard add URL users …)\n"),
        "{}",
        run.stderr
    );

    // The round was written, not acknowledged.
    let before = items_held(&master);
    assert_eq!(before, 2);
    // A replica, lost while the add reads standard input: the lines acknowledged are
    // counted, the rest named.
    let mut replica = start_replica(&master);
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["shard", "add", &u, "users", "--wait-replicas", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Blank lines are skipped (not added), but counted as lines of the input.
    writeln!(stdin, "user:1\n\nuser:2\nuser:3").unwrap();
    stdin.flush().unwrap();
    wait_until("the first lines added", || {
        items_held(&master) == before + 3
    });
    // ... and on the replica, whose acknowledgement then reaches the master's WAIT at once
    // (a second is ample): the add goes on reading.
    wait_until("the first lines replicated", || {
        items_held(&replica) == before + 3
    });
    std::thread::sleep(std::time::Duration::from_secs(1));
    replica.stop(false);
    wait_until("the replica gone", || {
        info_field(&mut master.raw(), "replication", "connected_slaves") == "0"
    });
    writeln!(stdin, "user:4\nuser:5").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.ends_with(") has 0 replica(s); stopped at line 5 of the input: the 3 items before it were added and acknowledged, the rest were not (resume from that line, e.g. tail -n +5 FILE | redbloom shard add URL users …)\n"),
        "{stderr}"
    );
    // Lines 5 and 6 were sent once (they are there, unconfirmed); the add said so instead
    // of reporting success.
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
}

#[test]
fn a_resent_round_counts_what_its_first_send_added() {
    let master = Server::start();
    let u = url(&master);
    create(&u);
    let replica = start_replica(&master);
    let dir = TempDir::new("resend");
    let file = dir.0.join("items.txt");
    write_items(&file, (0..1000).map(|i| format!("user:{i}")));
    // The replica stops answering: WAIT times out (2 s) though INFO still counts it, so the
    // round is sent again until the replica is back.
    signal(replica.pid(), "STOP");
    let child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["shard", "add", &u, "users", "--wait-replicas", "1"])
        .arg("--file")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let inserts = || {
        let stats = master.raw().call(&["INFO", "commandstats"]).text();
        stats
            .lines()
            .find_map(|l| l.strip_prefix("cmdstat_bf.insert:calls="))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse::<u64>().unwrap())
    };
    // One BF.INSERT per member per send: a second send made.
    wait_until("the round sent again", || inserts() >= 8);
    signal(replica.pid(), "CONT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("1000 items, {} newly added\n", items_held(&master))
    );
    assert!(items_held(&master) >= 998);
}
