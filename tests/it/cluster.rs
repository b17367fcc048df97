//! Redis Cluster: three masters on loopback, each with the module; filters spread over
//! slots through a cluster client, MOVED for a wrong node, hash tags keep keys together.

use crate::support::{wait_until, Reply, Server};
use redis::cluster::ClusterClient;
use std::process::Command;

fn start_cluster() -> Vec<Server> {
    let cluster_args = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "5000",
    ];
    let nodes: Vec<Server> = (0..3).map(|_| Server::start_with(&cluster_args)).collect();
    let mut create = Command::new(crate::support::cli_binary());
    create.arg("--cluster").arg("create");
    for node in &nodes {
        create.arg(format!("127.0.0.1:{}", node.port));
    }
    let output = create
        .arg("--cluster-yes")
        .output()
        .expect("run redis-cli --cluster create");
    assert!(
        output.status.success(),
        "cluster create failed: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    for node in &nodes {
        let mut conn = node.raw();
        wait_until("cluster_state:ok", || {
            conn.call(&["CLUSTER", "INFO"])
                .text()
                .contains("cluster_state:ok")
        });
    }
    nodes
}

/// The node that serves `key`, from the cluster's slot map.
fn owner<'a>(nodes: &'a [Server], key: &str) -> &'a Server {
    let mut conn = nodes[0].raw();
    let slot = conn.call(&["CLUSTER", "KEYSLOT", key]).int();
    for range in conn.call(&["CLUSTER", "SLOTS"]).array() {
        let range = range.array();
        let (start, end) = (range[0].int(), range[1].int());
        let port = range[2].array()[1].int();
        if (start..=end).contains(&slot) {
            return nodes
                .iter()
                .find(|n| i64::from(n.port) == port)
                .expect("owner among our nodes");
        }
    }
    panic!("no owner for slot {slot}");
}

#[test]
fn filters_spread_over_a_three_master_cluster() {
    let nodes = start_cluster();
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("redis://127.0.0.1:{}/", n.port))
        .collect();
    let client = ClusterClient::new(urls).expect("cluster client");
    let mut conn = client.get_connection().expect("cluster connection");

    // 1,000 filter keys over the slots, written and read through the cluster client.
    for i in 0..1000 {
        let key = format!("filter:{i}");
        let (command, check) = match i % 2 {
            0 => ("BF.ADD", "BF.EXISTS"),
            _ => ("CF.ADD", "CF.EXISTS"),
        };
        let added: i64 = redis::cmd(command)
            .arg(&key)
            .arg(format!("item:{i}"))
            .query(&mut conn)
            .expect("add");
        assert_eq!(added, 1, "{key}");
        let found: i64 = redis::cmd(check)
            .arg(&key)
            .arg(format!("item:{i}"))
            .query(&mut conn)
            .expect("exists");
        assert_eq!(found, 1, "{key}");
    }
    // Every master holds a share of them.
    let sizes: Vec<i64> = nodes
        .iter()
        .map(|n| n.raw().call(&["DBSIZE"]).int())
        .collect();
    assert_eq!(sizes.iter().sum::<i64>(), 1000);
    assert!(sizes.iter().all(|&n| n > 200), "uneven spread {sizes:?}");

    // A node that does not own the key redirects, for reads and writes alike.
    let key = "filter:7";
    let right = owner(&nodes, key);
    let wrong = nodes.iter().find(|n| n.port != right.port).unwrap();
    let slot = right.raw().call(&["CLUSTER", "KEYSLOT", key]).int();
    let moved = format!("MOVED {slot} 127.0.0.1:{}", right.port);
    let mut wrong_conn = wrong.raw();
    for command in [
        vec!["CF.EXISTS", key, "item:7"],
        vec!["CF.ADD", key, "other"],
        vec!["BF.RESERVE", key, "0.01", "100"],
        vec!["CF.INFO", key],
    ] {
        assert_eq!(
            wrong_conn.call(&command),
            Reply::Error(moved.clone()),
            "{command:?}"
        );
    }
    assert_eq!(
        right.raw().call(&["CF.EXISTS", key, "item:7"]),
        Reply::Int(1)
    );

    // Hash-tagged keys of one logical filter family stay on one node and one slot.
    let tagged = ["{user}:bf", "{user}:cf", "{user}:bf:2"];
    let home = owner(&nodes, tagged[0]);
    for key in tagged {
        assert_eq!(owner(&nodes, key).port, home.port, "{key}");
    }
    let _: () = redis::cmd("BF.RESERVE")
        .arg(tagged[0])
        .arg("0.01")
        .arg(1000)
        .query(&mut conn)
        .unwrap();
    let _: Vec<i64> = redis::cmd("CF.INSERT")
        .arg(tagged[1])
        .arg("ITEMS")
        .arg("a")
        .arg("b")
        .query(&mut conn)
        .unwrap();
    let _: i64 = redis::cmd("BF.ADD")
        .arg(tagged[2])
        .arg("a")
        .query(&mut conn)
        .unwrap();
    let mut home_conn = home.raw();
    for key in tagged {
        assert_ne!(home_conn.call(&["EXISTS", key]), Reply::Int(0), "{key}");
    }
    // The key specs let the server find the key of each command.
    assert_eq!(
        home_conn.call(&[
            "COMMAND",
            "GETKEYS",
            "BF.INSERT",
            "k",
            "CAPACITY",
            "10",
            "ITEMS",
            "a"
        ]),
        Reply::Array(Some(vec![Reply::Bulk(Some(b"k".to_vec()))]))
    );
}

/// The three sketch families in a cluster: keys sharing a hash tag merge on their node; a
/// slot moved to another master (SETSLOT IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE)
/// carries CMS, TopK and t-digest keys whose DUMP and answers are unchanged on the new
/// owner. A MERGE naming a source of another slot is `CROSSSLOT` (the merges answer the
/// server's key-position requests; RedisBloom's are routed by the destination alone, and
/// run without the source) and changes nothing.
#[test]
fn sketches_merge_and_move_with_their_slot() {
    let nodes = start_cluster();
    let keys = ["{sk}:cms", "{sk}:cms2", "{sk}:topk", "{sk}:td", "{sk}:td2"];
    let source = owner(&nodes, keys[0]);
    let mut conn = source.raw();
    for (command, key) in [
        (vec!["CMS.INITBYDIM", "", "100", "5"], keys[0]),
        (vec!["CMS.INITBYDIM", "", "100", "5"], keys[1]),
        (vec!["TOPK.RESERVE", "", "5", "50", "4", "0.9"], keys[2]),
        (vec!["TDIGEST.CREATE", "", "COMPRESSION", "50"], keys[3]),
        (vec!["TDIGEST.CREATE", "", "COMPRESSION", "50"], keys[4]),
    ] {
        let mut command = command;
        command[1] = key;
        assert_eq!(conn.call(&command), Reply::ok(), "{command:?}");
    }
    for i in 0..200 {
        let item = format!("item:{}", i % 17);
        let value = format!("{}", (i * 37) % 101);
        conn.call(&["CMS.INCRBY", keys[i % 2], &item, "1"]);
        conn.call(&["TOPK.ADD", keys[2], &item]);
        conn.call(&["TDIGEST.ADD", keys[3 + i % 2], &value]);
    }
    assert_eq!(
        conn.call(&["CMS.MERGE", "{sk}:cms", "2", "{sk}:cms", "{sk}:cms2"]),
        Reply::ok()
    );
    assert_eq!(
        conn.call(&["TDIGEST.MERGE", "{sk}:td", "2", "{sk}:td", "{sk}:td2"]),
        Reply::ok()
    );
    // A source in another slot, on another node: refused before the command runs.
    let elsewhere = "elsewhere:cms";
    assert_ne!(owner(&nodes, elsewhere).port, source.port);
    let mut remote = owner(&nodes, elsewhere).raw();
    assert_eq!(
        remote.call(&["CMS.INITBYDIM", elsewhere, "100", "5"]),
        Reply::ok()
    );
    let unchanged = conn.call(&["DUMP", keys[0]]);
    let crossslot = Reply::Error("CROSSSLOT Keys in request don't hash to the same slot".into());
    for node in &nodes {
        let mut any = node.raw();
        assert_eq!(
            any.call(&["CMS.MERGE", keys[0], "2", keys[0], elsewhere]),
            crossslot
        );
        assert_eq!(
            any.call(&["TDIGEST.MERGE", keys[3], "2", keys[4], "elsewhere:td"]),
            crossslot
        );
    }
    // A count that is not a number names no source: routed by the destination, and the
    // command's own checks answer.
    assert_eq!(
        conn.call(&["CMS.MERGE", keys[0], "x", keys[0]]),
        Reply::Error("CMS: invalid numkeys".into())
    );
    assert_eq!(conn.call(&["DUMP", keys[0]]), unchanged);
    let reads: Vec<Vec<&str>> = vec![
        vec!["CMS.QUERY", keys[0], "item:1", "item:2", "absent"],
        vec!["TOPK.LIST", keys[2], "WITHCOUNT"],
        vec!["TDIGEST.QUANTILE", keys[3], "0.1", "0.5", "0.9"],
        vec!["TDIGEST.INFO", keys[3]],
    ];
    let before: Vec<Reply> = reads.iter().map(|r| conn.call(r)).collect();
    let dumps: Vec<Reply> = keys.iter().map(|k| conn.call(&["DUMP", k])).collect();

    // Move the slot to another master.
    let target = nodes.iter().find(|n| n.port != source.port).unwrap();
    let slot = conn
        .call(&["CLUSTER", "KEYSLOT", keys[0]])
        .int()
        .to_string();
    let id = |node: &Server| node.raw().call(&["CLUSTER", "MYID"]).text();
    let (source_id, target_id) = (id(source), id(target));
    let mut target_conn = target.raw();
    let importing = ["CLUSTER", "SETSLOT", &slot, "IMPORTING", &source_id];
    assert_eq!(target_conn.call(&importing), Reply::ok());
    let migrating = ["CLUSTER", "SETSLOT", &slot, "MIGRATING", &target_id];
    assert_eq!(conn.call(&migrating), Reply::ok());
    let port = target.port.to_string();
    let mut migrate = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
    migrate.extend(keys);
    assert_eq!(conn.call(&migrate), Reply::ok());
    for node in &nodes {
        let assign = ["CLUSTER", "SETSLOT", &slot, "NODE", &target_id];
        assert_eq!(node.raw().call(&assign), Reply::ok());
    }
    assert_eq!(owner(&nodes, keys[0]).port, target.port);
    let after: Vec<Reply> = reads.iter().map(|r| target_conn.call(r)).collect();
    assert_eq!(after, before);
    let moved: Vec<Reply> = keys
        .iter()
        .map(|k| target_conn.call(&["DUMP", k]))
        .collect();
    assert_eq!(moved, dumps);
    assert_eq!(conn.call(&["DBSIZE"]), Reply::Int(0));
}

/// BF.MERGE, CBF.MERGE and CF.MERGE in a cluster: sources sharing the destination's slot
/// merge on their node; a source in another slot is `CROSSSLOT` from every node (the
/// merges answer the key-position request) and changes nothing.
#[test]
fn filters_merge_within_a_slot_only() {
    let nodes = start_cluster();
    let crossslot = Reply::Error("CROSSSLOT Keys in request don't hash to the same slot".into());
    for (create, merge, add) in [
        ("BF.RESERVE", "BF.MERGE", "BF.ADD"),
        ("CBF.RESERVE", "CBF.MERGE", "CBF.ADD"),
        ("CF.RESERVE", "CF.MERGE", "CF.ADD"),
    ] {
        let keys = ["{fm}:a", "{fm}:b", "{fm}:d"];
        let home = owner(&nodes, keys[0]);
        let mut conn = home.raw();
        for key in &keys[..2] {
            let reply = if create == "CF.RESERVE" {
                conn.call(&[create, key, "1000"])
            } else {
                conn.call(&[create, key, "0.01", "1000"])
            };
            assert_eq!(reply, Reply::ok(), "{create}");
            assert_eq!(conn.call(&[add, key, key]), Reply::Int(1));
        }
        assert_eq!(
            conn.call(&[merge, keys[2], "2", keys[0], keys[1]]),
            Reply::ok()
        );
        let exists = if add == "CF.ADD" {
            "CF.EXISTS"
        } else {
            "BF.EXISTS"
        };
        let exists = if add == "CBF.ADD" {
            "CBF.EXISTS"
        } else {
            exists
        };
        for key in &keys[..2] {
            assert_eq!(conn.call(&[exists, keys[2], key]), Reply::Int(1));
        }
        let elsewhere = "elsewhere:filter";
        assert_ne!(owner(&nodes, elsewhere).port, home.port);
        let mut remote = owner(&nodes, elsewhere).raw();
        let reply = if create == "CF.RESERVE" {
            remote.call(&[create, elsewhere, "1000"])
        } else {
            remote.call(&[create, elsewhere, "0.01", "1000"])
        };
        assert_eq!(reply, Reply::ok());
        let unchanged = conn.call(&["DUMP", keys[2]]);
        for node in &nodes {
            let mut any = node.raw();
            assert_eq!(
                any.call(&[merge, keys[2], "2", keys[0], elsewhere]),
                crossslot,
                "{merge}"
            );
        }
        assert_eq!(conn.call(&["DUMP", keys[2]]), unchanged);
        for key in keys.iter().chain([&elsewhere]) {
            owner(&nodes, key).raw().call(&["DEL", key]);
        }
    }
}
