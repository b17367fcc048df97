//! A sharded filter while Valkey 9 moves a member's slot atomically (`CLUSTER
//! MIGRATESLOTS`) under a running `redbloom shard add` fed line by line: a reader finds
//! every acknowledged item all along (no false negative), the add ends with every item
//! counted, and `shard exists` answers 1 for each afterwards. Skips, saying so, on any
//! server but Valkey 9.

use crate::common::{ok, url, write_items, Cluster};
use crate::support::{valkey_major, wait_until, Reply, Server, TempDir};
use redbloom_client::slot::key_slot;
use redbloom_client::{Conn, Descriptor};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The state of the node's last slot migration (`CLUSTER GETSLOTMIGRATIONS`).
fn migration_state(server: &Server) -> String {
    let jobs = server.raw().call(&["CLUSTER", "GETSLOTMIGRATIONS"]).array();
    let job = jobs.first().expect("a slot migration").array();
    let state = job
        .chunks(2)
        .find(|pair| pair[0] == Reply::Bulk(Some(b"state".to_vec())))
        .expect("a state field");
    state[1].text()
}

#[test]
fn a_sharded_filter_answers_while_a_member_migrates_atomically_under_shard_add() {
    if valkey_major(&mut Server::start().raw()) < Some(9) {
        eprintln!(
            "a_sharded_filter_answers_while_a_member_migrates_atomically_under_shard_add: \
             skipped: atomic slot migration needs Valkey 9 (REDBLOOM_SERVER)"
        );
        return;
    }
    let cluster = Cluster::start_with(0);
    let u = url(&cluster.nodes[0]);
    ok(&[
        "shard",
        "create",
        &u,
        "users",
        "--shards",
        "6",
        "--error-rate",
        "0.01",
        "--capacity",
        "100000",
    ]);
    let mut conn = Conn::open(&u).unwrap();
    let descriptor = Descriptor::open(&mut conn, "users").unwrap();
    let slot = key_slot(descriptor.members[0].as_bytes());
    let from = cluster.owner(slot, &[]);
    let to = *cluster.masters(&[]).iter().find(|&&p| p != from).unwrap();

    // `shard add` reading standard input: each pause of 50 ms sends what came.
    let mut add = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["shard", "add", &u, "users"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run redbloom shard add");
    let mut input = add.stdin.take().unwrap();
    let sent = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut feed = |round: usize| {
        let lines: Vec<String> = (round * 500..round * 500 + 500)
            .map(|i| format!("user:{i}"))
            .collect();
        input
            .write_all((lines.join("\n") + "\n").as_bytes())
            .unwrap();
        input.flush().unwrap();
        std::thread::sleep(Duration::from_millis(80));
        sent.lock().unwrap().extend(lines);
    };
    for round in 0..10 {
        feed(round);
    }
    // What was fed five rounds (400 ms) ago has been added: the reader checks it.
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let (u, sent, stop, reads, failures) = (
            u.clone(),
            sent.clone(),
            stop.clone(),
            reads.clone(),
            failures.clone(),
        );
        std::thread::spawn(move || {
            let mut conn = Conn::open(&u).unwrap();
            let d = Descriptor::open(&mut conn, "users").unwrap();
            while !stop.load(Ordering::SeqCst) {
                let items: Vec<Vec<u8>> = {
                    let sent = sent.lock().unwrap();
                    sent[..sent.len() - 2500]
                        .iter()
                        .rev()
                        .step_by(7)
                        .take(1000)
                        .map(|s| s.clone().into_bytes())
                        .collect()
                };
                match d.exists(&mut conn, &items, &mut |_| {}) {
                    Ok(found) => {
                        for (item, f) in items.iter().zip(found) {
                            if f != 1 {
                                let item = String::from_utf8_lossy(item);
                                failures
                                    .lock()
                                    .unwrap()
                                    .push(format!("{item} answered {f}"));
                            }
                        }
                        reads.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(e) => failures.lock().unwrap().push(format!("exists: {e}")),
                }
            }
        })
    };

    // The migration: its snapshot slowed (0.3 s a key), `shard add` fed all along.
    let source = cluster.node(from);
    let mut src = source.raw();
    assert_eq!(
        src.call(&["CONFIG", "SET", "rdb-key-save-delay", "300000"])
            .text(),
        "OK"
    );
    let target_id = cluster
        .topology(&[])
        .into_iter()
        .find(|t| t.1 == to)
        .unwrap()
        .0;
    let s = slot.to_string();
    let migrate = [
        "CLUSTER",
        "MIGRATESLOTS",
        "SLOTSRANGE",
        &s,
        &s,
        "NODE",
        &target_id,
    ];
    assert_eq!(src.call(&migrate).text(), "OK");
    let reads_before = reads.load(Ordering::SeqCst);
    let mut round = 10;
    while migration_state(source) != "success" {
        assert!(round < 400, "the migration did not end");
        feed(round);
        round += 1;
    }
    assert!(round > 11, "shard add ran during the migration");
    assert_eq!(cluster.owner(slot, &[]), to);
    let reads_during = reads.load(Ordering::SeqCst) - reads_before;
    for _ in 0..5 {
        feed(round);
        round += 1;
    }
    wait_until("reads after the migration", || {
        reads.load(Ordering::SeqCst) > reads_before + reads_during + 3
    });
    stop.store(true, Ordering::SeqCst);
    reader.join().unwrap();
    drop(input);
    let output = add.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "shard add: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let items = round * 500;
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with(&format!("{items} items, ")),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(reads_during > 0, "reads during the migration");

    // Every item fed answers 1; the member's key lives on its new master alone.
    let dir = TempDir::new("migration-items");
    let file = dir.0.join("items.txt");
    write_items(&file, (0..items).map(|i| format!("user:{i}")));
    let answers = ok(&[
        "shard",
        "exists",
        &u,
        "users",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(answers.lines().count(), items);
    assert!(answers.lines().all(|l| l == "1"));
    let member = descriptor.members[0].as_str();
    let mut dst = cluster.node(to).raw();
    assert_eq!(dst.call(&["EXISTS", member]).int(), 1);
    wait_until("the source trimmed the slot", || {
        src.call(&["CLUSTER", "COUNTKEYSINSLOT", &s]).int() == 0
    });
}
