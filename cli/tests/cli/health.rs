//! `redbloom health URL`: the keys at risk, worst first, the reservation to rebuild with,
//! and exit code 1 when any key is over its asked rate.

use crate::common::{ok, redbloom, url};
use crate::support::{RawConnection, Server};
use serde_json::{json, Value};

fn madd(conn: &mut RawConnection, key: &str, prefix: &str, n: usize) {
    let mut cmd = vec!["BF.MADD".to_string(), key.to_string()];
    cmd.extend((0..n).map(|i| format!("{prefix}{i}")));
    conn.call(&cmd);
}

#[test]
fn health_lists_the_keys_at_risk_and_fails_when_one_is_over_its_rate() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    conn.call(&["BF.RESERVE", "fine", "0.01", "1000"]);
    madd(&mut conn, "fine", "f", 10);
    conn.call(&["CMS.INITBYDIM", "sketch", "100", "3"]);
    assert_eq!(ok(&["health", &u]), "2 filter keys, 0 at risk\n");

    // Scaled past its capacity (at risk, within its rate): exit code 0.
    conn.call(&["BF.RESERVE", "grown", "0.01", "100"]);
    madd(&mut conn, "grown", "g", 1000);
    let report: Value = serde_json::from_str(&ok(&["--json", "health", &u])).unwrap();
    assert_eq!(report["scanned"], 3);
    assert_eq!(report["over_target"], false);
    let grown = &report["at_risk"][0];
    assert_eq!(grown["key"], "grown");
    assert_eq!(grown["alerts"], json!(["over_capacity", "long_chains"]));
    let items = conn.call(&["BF.CARD", "grown"]).int();
    assert_eq!(grown["rebuild_capacity"], 2 * items);

    // A union of two filters at 90 % of their capacity: over its rate, listed first.
    for (key, prefix) in [("u", "a"), ("v", "b")] {
        conn.call(&["BF.RESERVE", key, "0.01", "1000", "NONSCALING"]);
        madd(&mut conn, key, prefix, 900);
    }
    conn.call(&["BF.MERGE", "u", "2", "u", "v", "OVERRIDE"]);
    let run = redbloom(&["health", &u]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "5 filter keys, 2 at risk");
    assert!(
        lines[1].starts_with("u (bf): estimated FP 0.1"),
        "{}",
        run.stdout
    );
    let items = conn.call(&["BF.CARD", "u"]).int();
    let tail = format!(
        "(target 0.01), items {items} / capacity 1000, over_fp_rate, over_capacity; rebuild: BF.RESERVE u 0.01 {}",
        2 * items
    );
    assert!(lines[1].ends_with(&tail), "{}", lines[1]);
    assert!(lines[2].starts_with("grown (bf): "), "{}", run.stdout);
}

/// On a cluster every master is scanned (replicas are not counted twice) and each key's
/// HEALTH is routed to its master.
#[test]
fn health_scans_every_master_of_a_cluster() {
    use redbloom_client::{redis, Conn};
    let cluster = crate::common::Cluster::start_with(1);
    let u = url(&cluster.nodes[0]);
    let mut conn = Conn::open(&u).unwrap();
    for i in 0..30 {
        let key = format!("k{i}");
        conn.query::<String>(redis::cmd("BF.RESERVE").arg(&key).arg(0.01).arg(10))
            .unwrap();
        if i % 3 == 0 {
            let items: Vec<String> = (0..100).map(|j| format!("x{j}")).collect();
            conn.query::<redis::Value>(redis::cmd("BF.MADD").arg(&key).arg(&items))
                .unwrap();
        }
    }
    let report: Value = serde_json::from_str(&ok(&["--json", "health", &u])).unwrap();
    assert_eq!(report["scanned"], 30);
    assert_eq!(report["at_risk_count"], 10);
    assert_eq!(report["over_target"], false);
}

/// A sharded filter's members are one row under its name: the members' items together,
/// their mean estimate, the descriptor's rate and capacity, and `shard create` to rebuild.
#[test]
fn health_reports_a_sharded_filter_as_one() {
    let server = Server::start();
    let u = url(&server);
    ok(&[
        "shard",
        "create",
        &u,
        "users",
        "--shards",
        "2",
        "--error-rate",
        "0.01",
        "--capacity",
        "100",
    ]);
    let dir = crate::support::TempDir::new("health-sharded");
    let items = dir.0.join("items");
    crate::common::write_items(&items, (0..1000).map(|i| format!("user:{i}")));
    ok(&[
        "shard",
        "add",
        &u,
        "users",
        "--file",
        items.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&ok(&["--json", "health", &u])).unwrap();
    assert_eq!(report["scanned"], 2, "{report}");
    assert_eq!(report["at_risk_count"], 1, "{report}");
    let row = &report["at_risk"][0];
    assert_eq!(row["key"], "users");
    assert_eq!(row["type"], "sharded-bf");
    // The members' BF.CARD together (an item that was a false positive is not counted).
    let mut conn = server.raw();
    let members = conn.call(&["HGETALL", "users"]).array();
    let held: i64 = members
        .chunks(2)
        .filter(|pair| pair[0].text().starts_with("member:"))
        .map(|pair| conn.call(&["BF.CARD", &pair[1].text()]).int())
        .sum();
    assert!((990..=1000).contains(&held), "{held}");
    assert_eq!(row["items"], held);
    assert_eq!(row["capacity"], 100);
    assert_eq!(row["target_fp"], 0.01);
    assert_eq!(row["rebuild_capacity"], 2 * held);
    let text = ok(&["health", &u]);
    assert!(
        text.contains("users (sharded-bf): ")
            && text.ends_with(
                &format!("rebuild: redbloom shard create URL users --shards 2 --type bf --error-rate 0.01 --capacity {}\n", 2 * held)
            ),
        "{text}"
    );
    // A key that only looks like a member (no descriptor names it) is a key of its own.
    conn.call(&["BF.RESERVE", "{s0.0}:ghost", "0.01", "10"]);
    madd(&mut conn, "{s0.0}:ghost", "g", 100);
    let report: Value = serde_json::from_str(&ok(&["--json", "health", &u])).unwrap();
    assert_eq!(report["at_risk_count"], 2, "{report}");
    let keys: Vec<&str> = report["at_risk"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.contains(&"{s0.0}:ghost") && keys.contains(&"users"),
        "{keys:?}"
    );
}
