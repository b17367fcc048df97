//! Merges on a cluster and of sharded filters (issue 35): keys of different slots refused,
//! `shard merge` member by member, its refusals and its clean-up.

use crate::common::{fails, ok, redbloom, url, write_items, Cluster};
use crate::support::{Reply, Server, TempDir};
use redbloom_client::Descriptor;

/// `prefix:<i>` for `range`.
fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}:{i}")).collect()
}

/// On a cluster: keys of different slots are refused naming each key and slot; keys of one
/// tag merge; sharded filters of one layout merge member by member (every member of DEST
/// in its sources' slot), DEST's descriptor as `shard create` writes it; layouts that
/// differ are refused before anything is written.
#[test]
fn merges_on_a_cluster() {
    let cluster = Cluster::start_with(0);
    let u = url(&cluster.nodes[0]);
    let dir = TempDir::new("cluster-merge");
    let slot = |k: &str| redbloom_client::slot::key_slot(k.as_bytes());
    let raw = |k: &str| cluster.node(cluster.owner(slot(k), &[])).raw();
    for key in ["{day}:mon", "{day}:tue", "mon"] {
        raw(key).call(&["BF.RESERVE", key, "0.01", "1000"]);
        raw(key).call(&["BF.ADD", key, &format!("item-of-{key}")]);
    }
    assert_eq!(
        fails(&["merge", &u, "{day}:week", "{day}:mon", "mon"]),
        format!(
            "redbloom: the keys are in different hash slots: {{day}}:week (slot {}), {{day}}:mon (slot {}), mon (slot {}); a cluster merges keys of one slot only (give them one hash tag, e.g. {{day}}:mon and {{day}}:tue)",
            slot("{day}"),
            slot("{day}"),
            slot("mon")
        )
    );
    assert_eq!(
        raw("{day}:week").call(&["EXISTS", "{day}:week"]),
        Reply::Int(0)
    );
    ok(&["merge", &u, "{day}:week", "{day}:mon", "{day}:tue"]);
    let mut week = raw("{day}:week");
    assert_eq!(
        week.call(&[
            "BF.MEXISTS",
            "{day}:week",
            "item-of-{day}:mon",
            "item-of-{day}:tue"
        ]),
        Reply::int_array(&[1, 1])
    );
    // A server refusal names DEST's node (and, DEST existing, DEST as the key that differs).
    raw("{day}:odd").call(&["BF.RESERVE", "{day}:odd", "0.1", "1000"]);
    assert_eq!(
        fails(&["merge", &u, "{day}:week", "{day}:odd"]),
        format!(
            "redbloom: {{day}}:week on 127.0.0.1:{}: ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: {{day}}:week",
            cluster.owner(slot("{day}"), &[])
        )
    );

    let create = |name: &str, shards: &str| {
        ok(&[
            "shard",
            "create",
            &u,
            name,
            "--shards",
            shards,
            "--error-rate",
            "0.01",
            "--capacity",
            "6000",
        ])
    };
    create("east", "6");
    create("west", "6");
    create("wide", "4");
    let (east, west) = (items("east", 0..3000), items("west", 0..3000));
    for (name, its) in [("east", &east), ("west", &west)] {
        let file = dir.0.join(format!("{name}.txt"));
        write_items(&file, its.iter().cloned());
        ok(&["shard", "add", &u, name, "--file", file.to_str().unwrap()]);
    }
    assert_eq!(
        ok(&["shard", "merge", &u, "both", "east", "west"]),
        "merged 2 sharded filters into both: 6 members\n"
    );
    let mut conn = redbloom_client::Conn::open(&u).unwrap();
    let both = Descriptor::open(&mut conn, "both").unwrap();
    let east_d = Descriptor::open(&mut conn, "east").unwrap();
    assert_eq!(both.spec, east_d.spec);
    for (m, e) in both.members.iter().zip(&east_d.members) {
        assert_eq!(slot(m), slot(e), "{m} {e}");
    }
    let all = dir.0.join("all.txt");
    write_items(&all, east.iter().chain(&west).cloned());
    let answers = ok(&[
        "shard",
        "exists",
        &u,
        "both",
        "--file",
        all.to_str().unwrap(),
    ]);
    assert_eq!(answers, "1\n".repeat(6000));
    let info = ok(&["shard", "info", &u, "both"]);
    assert!(info.contains("shards: 6\n"), "{info}");

    assert_eq!(
        fails(&["shard", "merge", &u, "mixed", "east", "wide"]),
        "redbloom: sharded filters of different layouts cannot be merged: east (6 bf members, capacity 6000, error rate 0.01, default expansion) and wide (4 bf members, capacity 6000, error rate 0.01, default expansion)"
    );
    assert_eq!(
        fails(&["shard", "merge", &u, "both", "east", "west"]),
        "redbloom: both already exists"
    );
    let mixed = Descriptor::new("mixed", 6, east_d.spec.clone()).unwrap();
    let mut keys = vec!["mixed".to_string()];
    keys.extend(mixed.members);
    for key in keys {
        assert_eq!(raw(&key).call(&["EXISTS", &key]), Reply::Int(0), "{key}");
    }
}

/// `shard merge` on one server: counting members add counts; `--intersect` of Cuckoo
/// members is a usage error; a member whose merge the server refuses (a member re-reserved
/// with another shape behind the descriptor's back) fails the merge naming member and node,
/// and the members made are deleted — DEST does not exist afterwards.
#[test]
fn shard_merge_counts_refuses_and_cleans_up() {
    let server = Server::start();
    let u = url(&server);
    let node = format!("127.0.0.1:{}", server.port);
    let mut conn = server.raw();
    for (name, kind) in [("c1", "cbf"), ("c2", "cbf"), ("q1", "cf"), ("q2", "cf")] {
        let mut args = vec![
            "shard",
            "create",
            &u,
            name,
            "--shards",
            "3",
            "--capacity",
            "3000",
        ];
        args.extend(["--type", kind]);
        if kind == "cbf" {
            args.extend(["--error-rate", "0.01"]);
        }
        ok(&args);
    }
    ok(&["shard", "add", &u, "c1", "x", "y"]);
    ok(&["shard", "add", &u, "c2", "x", "z"]);
    assert_eq!(
        ok(&["shard", "merge", &u, "c12", "c1", "c2"]),
        "merged 2 sharded filters into c12: 3 members\n"
    );
    let mut client = redbloom_client::Conn::open(&u).unwrap();
    let c12 = Descriptor::open(&mut client, "c12").unwrap();
    let x = &c12.members[redbloom_client::shard::route(b"x", 3) as usize];
    assert_eq!(conn.call(&["CBF.COUNT", x, "x"]), Reply::Int(2));
    assert_eq!(
        ok(&["shard", "exists", &u, "c12", "x", "y", "z", "w"]),
        "1\n1\n1\n0\n"
    );
    let run = redbloom(&["shard", "merge", &u, "qq", "q1", "q2", "--intersect"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "redbloom: --intersect applies to bf and cbf filters only (CF.MERGE is a union)\n"
    );

    let c2 = Descriptor::open(&mut client, "c2").unwrap();
    let odd = &c2.members[1];
    conn.call(&["DEL", odd]);
    conn.call(&["CBF.RESERVE", odd, "0.1", "3000"]);
    let dest = Descriptor::new("bad", 3, c2.spec.clone()).unwrap();
    assert_eq!(
        fails(&["shard", "merge", &u, "bad", "c1", "c2"]),
        format!(
            "redbloom: bad: member {} on {node}: ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: {odd}",
            dest.members[1]
        )
    );
    for key in std::iter::once(&"bad".to_string()).chain(&dest.members) {
        assert_eq!(conn.call(&["EXISTS", key]), Reply::Int(0), "{key}");
    }
}
