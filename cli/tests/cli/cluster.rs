//! A sharded filter over a 3-master cluster (one replica each): members on every master,
//! 200k items from a file, the FP rate of absent items, then a member's slot moved to
//! another master and that master killed while a writer and a reader run.

use crate::common::{ok, url, write_items, Cluster};
use crate::support::{wait_until, Server, TempDir};
use redbloom_client::slot::key_slot;
use redbloom_client::{Conn, Descriptor};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ITEMS: usize = 200_000;

fn answers(out: &str) -> Vec<u8> {
    out.lines()
        .map(|l| {
            if l == "1" {
                1
            } else {
                assert_eq!(l, "0");
                0
            }
        })
        .collect()
}

/// Moves `slot` from master `from` to master `to`: IMPORTING/MIGRATING, MIGRATE of its
/// keys, a pause (clients get ASK meanwhile), then SETSLOT NODE on every master.
fn move_slot(cluster: &Cluster, slot: u16, from: u16, to: u16) {
    let id = |port: u16| {
        cluster
            .topology(&[])
            .into_iter()
            .find(|t| t.1 == port)
            .unwrap()
            .0
    };
    let (from_id, to_id) = (id(from), id(to));
    let s = slot.to_string();
    let mut src = cluster.node(from).raw();
    let mut dst = cluster.node(to).raw();
    assert_eq!(
        dst.call(&["CLUSTER", "SETSLOT", &s, "IMPORTING", &from_id])
            .text(),
        "OK"
    );
    assert_eq!(
        src.call(&["CLUSTER", "SETSLOT", &s, "MIGRATING", &to_id])
            .text(),
        "OK"
    );
    std::thread::sleep(Duration::from_millis(300));
    let keys = src.call(&["CLUSTER", "GETKEYSINSLOT", &s, "100"]).array();
    assert!(!keys.is_empty());
    let mut migrate = vec![
        "MIGRATE".to_string(),
        "127.0.0.1".into(),
        to.to_string(),
        "".into(),
        "0".into(),
        "10000".into(),
        "KEYS".into(),
    ];
    migrate.extend(keys.iter().map(|k| k.text()));
    assert_eq!(src.call(&migrate).text(), "OK");
    std::thread::sleep(Duration::from_millis(300));
    for port in cluster.masters(&[]) {
        let reply = cluster
            .node(port)
            .raw()
            .call(&["CLUSTER", "SETSLOT", &s, "NODE", &to_id]);
        assert_eq!(reply.text(), "OK", "{port}");
    }
}

#[test]
fn sharded_filter_over_a_cluster_survives_resharding_and_failover() {
    let mut cluster = Cluster::start();
    let u = url(&cluster.nodes[0]);
    ok(&[
        "shard",
        "create",
        &u,
        "users",
        "--shards",
        "12",
        "--error-rate",
        "0.01",
        "--capacity",
        &ITEMS.to_string(),
    ]);

    // Members on all three masters, four each (the default slot split is in thirds).
    let mut conn = Conn::open(&u).unwrap();
    assert!(conn.is_cluster());
    let descriptor = Descriptor::open(&mut conn, "users").unwrap();
    let mut per_master: HashMap<u16, usize> = HashMap::new();
    for m in &descriptor.members {
        *per_master
            .entry(cluster.owner(key_slot(m.as_bytes()), &[]))
            .or_default() += 1;
    }
    assert_eq!(per_master.len(), 3, "{per_master:?}");
    assert!(per_master.values().all(|&n| n == 4), "{per_master:?}");

    // 200k items from a file; every one answers 1; 200k absent ones rarely.
    let dir = TempDir::new("cluster-items");
    let present = dir.0.join("present.txt");
    let absent = dir.0.join("absent.txt");
    write_items(&present, (0..ITEMS).map(|i| format!("user:{i}")));
    write_items(&absent, (0..ITEMS).map(|i| format!("nobody:{i}")));
    let f = present.to_str().unwrap();
    assert_eq!(
        ok(&["shard", "add", &u, "users", "--file", f]),
        format!("{ITEMS} items, {} newly added\n", ok_added(&u))
    );
    let found = answers(&ok(&["shard", "exists", &u, "users", "--file", f]));
    assert_eq!(found.len(), ITEMS);
    assert!(found.iter().all(|&a| a == 1));
    let fp = answers(&ok(&[
        "shard",
        "exists",
        &u,
        "users",
        "--file",
        absent.to_str().unwrap(),
    ]));
    let rate = fp.iter().filter(|&&a| a == 1).count() as f64 / ITEMS as f64;
    assert!(rate <= 0.01 * 1.5, "FP rate {rate}");
    assert!(rate > 0.0, "FP rate {rate}");
    // inspect's fill-based estimate of the whole sharded filter.
    let report: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "inspect", &u, "users"])).unwrap();
    assert_eq!(report["type"], "sharded-bf");
    assert_eq!(report["members"].as_array().unwrap().len(), 12);
    let estimate = report["estimated_fp"].as_f64().unwrap();
    assert!(
        (estimate - rate).abs() <= 0.2 * rate,
        "estimate {estimate} vs measured {rate}"
    );

    // A writer adds new items (waiting for a replica to hold each round) and a reader checks
    // what was acknowledged, while member 0's slot moves and then its new master dies.
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let reads = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (u, acked, stop, failures) = (u.clone(), acked.clone(), stop.clone(), failures.clone());
        std::thread::spawn(move || {
            let mut conn = Conn::open(&u).unwrap();
            let d = Descriptor::open(&mut conn, "users").unwrap();
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let batch: Vec<Vec<u8>> = (n..n + 240)
                    .map(|i| format!("new:{i}").into_bytes())
                    .collect();
                match d.add(&mut conn, &batch, Some(1), &mut |_| {}) {
                    Ok(_) => {
                        let mut a = acked.lock().unwrap();
                        a.extend(batch.iter().map(|b| String::from_utf8(b.clone()).unwrap()));
                        n += 240;
                    }
                    // The promoted replica has no replica of its own until the old master
                    // comes back: the add fails at once (issue 43) and is resumed.
                    Err(e) if e.message().ends_with("has 0 replica(s)") => {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    Err(e) => failures.lock().unwrap().push(format!("add: {e}")),
                }
            }
        })
    };
    let reader = {
        let (u, acked, stop, failures, reads) = (
            u.clone(),
            acked.clone(),
            stop.clone(),
            failures.clone(),
            reads.clone(),
        );
        std::thread::spawn(move || {
            let mut conn = Conn::open(&u).unwrap();
            let d = Descriptor::open(&mut conn, "users").unwrap();
            let mut round = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let mut items: Vec<Vec<u8>> = acked
                    .lock()
                    .unwrap()
                    .iter()
                    .rev()
                    .take(500)
                    .map(|s| s.clone().into_bytes())
                    .collect();
                items
                    .extend((0..500).map(|i| {
                        format!("user:{}", (round * 7919 + i * 397) % ITEMS).into_bytes()
                    }));
                match d.exists(&mut conn, &items, &mut |_| {}) {
                    Ok(found) => {
                        for (item, f) in items.iter().zip(found) {
                            if f != 1 {
                                failures.lock().unwrap().push(format!(
                                    "{} answered {f}",
                                    String::from_utf8_lossy(item)
                                ));
                            }
                        }
                        reads.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(e) => failures.lock().unwrap().push(format!("exists: {e}")),
                }
                round += 1;
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let slot = key_slot(descriptor.members[0].as_bytes());
    let from = cluster.owner(slot, &[]);
    let to = *cluster.masters(&[]).iter().find(|&&p| p != from).unwrap();
    move_slot(&cluster, slot, from, to);
    wait_until("the slot's new owner", || cluster.owner(slot, &[]) == to);
    std::thread::sleep(Duration::from_millis(500));

    // Kill the member's new master; its replica takes over.
    let dead = cluster.node(to).pid();
    Server::kill_pid(dead);
    let started = Instant::now();
    while cluster.owner(slot, &[to]) == to || cluster.masters(&[to]).len() != 3 {
        assert!(started.elapsed() < Duration::from_secs(30), "no failover");
        std::thread::sleep(Duration::from_millis(100));
    }
    cluster.wait_stable(&[to]);
    // The old master comes back as a replica (so WAIT 1 is satisfied again).
    let at = cluster.nodes.iter().position(|n| n.port == to).unwrap();
    cluster.nodes[at].restart_after_kill(&[]);
    cluster.wait_stable(&[]);
    let reads_before = reads.load(Ordering::SeqCst);
    let writes_before = acked.lock().unwrap().len();
    wait_until("reads and writes after the failover", || {
        reads.load(Ordering::SeqCst) > reads_before + 3
            && acked.lock().unwrap().len() > writes_before + 1000
    });
    stop.store(true, Ordering::SeqCst);
    eprintln!(
        "failover after {:?}; {} reads, {} items written",
        started.elapsed(),
        reads.load(Ordering::SeqCst),
        acked.lock().unwrap().len()
    );
    writer.join().unwrap();
    reader.join().unwrap();
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );

    // Stable again: every item ever acknowledged answers 1, through the CLI.
    let written = dir.0.join("written.txt");
    write_items(
        &written,
        acked
            .lock()
            .unwrap()
            .iter()
            .cloned()
            .chain((0..ITEMS).map(|i| format!("user:{i}"))),
    );
    let found = answers(&ok(&[
        "shard",
        "exists",
        &u,
        "users",
        "--file",
        written.to_str().unwrap(),
    ]));
    assert!(found.iter().all(|&a| a == 1));
    assert!(found.len() > ITEMS + 1000);
}

/// The added count the first `shard add` reports: every item new except the few that were
/// false positives already (read back from the members' item counts).
fn ok_added(u: &str) -> usize {
    let mut conn = Conn::open(u).unwrap();
    let d = Descriptor::open(&mut conn, "users").unwrap();
    d.member_infos(&mut conn)
        .unwrap()
        .iter()
        .filter_map(|m| m.int("Number of items inserted"))
        .sum::<i64>() as usize
}

/// `load` and `shard load` on a cluster (issue 33): each filter is built under a temporary
/// key in its target's slot and renamed into place on the master that owns it — keys
/// without a hash tag, with one, and with braces that are not a tag; no temporary key left.
#[test]
fn loads_rename_into_place_on_a_cluster() {
    let cluster = Cluster::start_with(0);
    let u = url(&cluster.nodes[0]);
    let dir = TempDir::new("cluster-load");
    let file = dir.0.join("items.txt");
    let items: Vec<String> = (0..20_000).map(|i| format!("user:{i}")).collect();
    write_items(&file, items.iter().cloned());
    let f = file.to_str().unwrap();
    let keys = ["seen", "{user}:seen", "a}b"];
    for key in keys {
        let out = ok(&[
            "load",
            &u,
            key,
            "--error-rate",
            "0.01",
            "--capacity",
            "20000",
            "--file",
            f,
        ]);
        assert!(
            out.starts_with(&format!("loaded {key}: 20000 items, ")),
            "{out}"
        );
    }
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
        "20000",
    ]);
    assert_eq!(
        ok(&["shard", "load", &u, "users", "--file", f]),
        "loaded users: 20000 items into 6 members\n"
    );
    assert!(ok(&["shard", "exists", &u, "users", "--file", f])
        .lines()
        .all(|l| l == "1"));
    let mut conn = Conn::open(&u).unwrap();
    for key in keys {
        for part in items.chunks(1000) {
            let mut cmd = redis::cmd("BF.MEXISTS");
            cmd.arg(key);
            for i in part {
                cmd.arg(i);
            }
            let answers: Vec<i64> = conn.query(&cmd).unwrap();
            assert!(answers.iter().all(|&a| a == 1), "{key}");
        }
    }
    // Every key the masters hold: the three loads, the descriptor and its six members.
    let mut all = Vec::new();
    for port in cluster.masters(&[]) {
        all.extend(cluster.node(port).raw().sorted_keys());
    }
    all.sort();
    let descriptor = Descriptor::open(&mut conn, "users").unwrap();
    let mut expected: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    expected.push("users".into());
    expected.extend(descriptor.members.iter().cloned());
    expected.sort();
    assert_eq!(all, expected);

    // A member deleted during an add (after the descriptor was read): the error names the
    // member, the master that holds its slot and the item (issue 33: it was a raw
    // "Pipeline failures: [(Index 63 …").
    let victim = &descriptor.members[4];
    let _: i64 = conn.query(redis::cmd("DEL").arg(victim)).unwrap();
    let fresh: Vec<String> = (0..500).map(|i| format!("fresh:{i}")).collect();
    let error = descriptor
        .add_after(&mut conn, &fresh, 7, None, &mut |_| {})
        .unwrap_err()
        .to_string();
    let first = fresh
        .iter()
        .position(|i| redbloom_client::shard::route(i.as_bytes(), 6) == 4)
        .unwrap();
    let owner = cluster.owner(key_slot(victim.as_bytes()), &[]);
    assert_eq!(
        error,
        format!(
            "users: member {victim} on 127.0.0.1:{owner}: item {} of the input (fresh:{first}): ERR not found",
            7 + first + 1
        )
    );

    // The damaged filter dropped: five members deleted, the one missing named; then members
    // left without a descriptor found on every master by --force.
    assert_eq!(
        ok(&["shard", "drop", &u, "users"]),
        format!("dropped users (5 members; missing: {victim})\n")
    );
    ok(&[
        "shard",
        "create",
        &u,
        "orphans",
        "--shards",
        "6",
        "--error-rate",
        "0.01",
        "--capacity",
        "600",
    ]);
    let _: i64 = conn.query(redis::cmd("DEL").arg("orphans")).unwrap();
    assert_eq!(
        ok(&["shard", "drop", &u, "orphans", "--force"]),
        "dropped orphans (6 members; no descriptor)\n"
    );
    let mut left = Vec::new();
    for port in cluster.masters(&[]) {
        left.extend(cluster.node(port).raw().sorted_keys());
    }
    left.sort();
    assert_eq!(left, ["a}b", "seen", "{user}:seen"]);
}
