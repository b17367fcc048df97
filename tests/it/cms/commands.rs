//! Every CMS.* command with valid and invalid arguments, in one sequence on an empty
//! server, answered byte for byte as RedisBloom 2.4.20 (RESP2) and 2.6.28 (RESP3) answered
//! it (core/tests/fixtures/redisbloom-2.4.20/cms.commands.json: every error text, the
//! order of checks, saturation, MERGE's weights and overflow, INFO's wrapped count, DUMP
//! payloads, MEMORY USAGE) but for the negative increment RedisBloom 8.12 takes; then
//! what redbloom adds: replication by effect, keyspace
//! events, the INFO section, COPY and DEBUG DIGEST-VALUE.

use crate::support::golden::{changed_sequence_on_a_fresh_server, run_sequence_changed, Changed};
use crate::support::{start_replica, wait_for_replicas, Reply, Server};

const GOLDEN: &str = "cms.commands.json";

/// The one reply of the sequence that differs by design: RedisBloom 8.12 takes negative
/// increments, so 2.4.20's `CMS: Number cannot be negative` is 8.12's underflow of an item
/// counted 0 (docs/compat.md, "Count-Min Sketch").
const CHANGED: &[Changed] = &[(
    &["CMS.INCRBY", "d", "a", "-1"],
    "*1\r\n-CMS: INCRBY underflow\r\n",
)];

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp2() {
    let server = Server::start();
    run_sequence_changed(&mut server.raw(), GOLDEN, "resp", CHANGED);
    // MEMORY USAGE is RedisBloom's formula: 8 + 8 bytes per counter.
    let mut conn = server.raw();
    conn.call(&["CMS.INITBYDIM", "mu", "100", "10"]);
    assert!(conn.call(&["MEMORY", "USAGE", "mu"]).int() >= 8008);
}

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp3() {
    changed_sequence_on_a_fresh_server(GOLDEN, "resp3", CHANGED);
}

#[test]
fn writes_replicate_their_effect_and_replicas_match() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    m.call(&["CMS.INITBYPROB", "p", "0.01", "0.125"]);
    m.call(&["CMS.INITBYDIM", "d", "50", "4"]);
    m.call(&["CMS.INCRBY", "p", "a", "5", "b", "4294967295"]);
    m.call(&["CMS.INCRBY", "d", "a", "x"]); // refused: replicates nothing
    m.call(&["CMS.INCRBY", "d", "a", "7"]);
    m.call(&["CMS.MERGE", "d", "2", "d", "d", "WEIGHTS", "2", "1"]);
    wait_for_replicas(&mut m, 1);
    crate::support::wait_until("the replica has every write", || {
        r.call(&["CMS.QUERY", "d", "a"]) == Reply::Array(Some(vec![Reply::Int(21)]))
    });
    for key in ["p", "d"] {
        assert_eq!(m.call(&["DUMP", key]), r.call(&["DUMP", key]), "{key}");
        assert_eq!(
            m.call(&["DEBUG", "DIGEST-VALUE", key]),
            r.call(&["DEBUG", "DIGEST-VALUE", key])
        );
    }
    assert_eq!(
        r.call(&["CMS.INFO", "p"]),
        m.call(&["CMS.INFO", "p"]),
        "INITBYPROB's dimensions"
    );
}

#[test]
fn copy_digest_and_info_section() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["CMS.INITBYDIM", "a", "10", "3"]);
    conn.call(&["CMS.INCRBY", "a", "x", "4"]);
    assert_eq!(conn.call(&["COPY", "a", "b"]).int(), 1);
    assert_eq!(conn.call(&["DUMP", "a"]), conn.call(&["DUMP", "b"]));
    assert_eq!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    conn.call(&["CMS.INCRBY", "b", "y", "1"]);
    assert_ne!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    assert_eq!(
        crate::support::info_field(&mut conn, "bf", "bf_cms_filters"),
        "2"
    );
    assert_eq!(
        crate::support::info_field(&mut conn, "bf", "bf_cms_items"),
        "9"
    );
    // CMS.MERGE's key specs name the destination and the sources, not the weights.
    let keys = conn.call(&[
        "COMMAND",
        "GETKEYS",
        "CMS.MERGE",
        "d",
        "2",
        "a",
        "b",
        "WEIGHTS",
        "1",
        "2",
    ]);
    let bulk = |k: &str| Reply::Bulk(Some(k.as_bytes().to_vec()));
    assert_eq!(
        keys,
        Reply::Array(Some(vec![bulk("d"), bulk("a"), bulk("b")]))
    );
    conn.call(&["DEL", "a", "b"]);
    assert_eq!(
        crate::support::info_field(&mut conn, "bf", "bf_cms_filters"),
        "0"
    );
}

#[test]
fn aof_rewrite_is_restore_of_dump_and_replays_in_every_database() {
    // Without the RDB preamble the rewrite holds `RESTORE key 0 <DUMP>` per sketch (what
    // RedisBloom writes), taken in the key's own database.
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    conn.call(&["CMS.INITBYDIM", "a", "40", "3"]);
    conn.call(&["CMS.INCRBY", "a", "x", "5", "y", "4294967295"]);
    assert_eq!(conn.call(&["SELECT", "3"]), Reply::ok());
    conn.call(&["CMS.INITBYPROB", "b", "0.01", "0.01"]);
    conn.call(&["CMS.INCRBY", "b", "z", "9"]);
    let dump_b = conn.call(&["DUMP", "b"]);
    conn.call(&["SELECT", "0"]);
    let dump_a = conn.call(&["DUMP", "a"]);
    crate::support::rewrite_aof(&mut conn);
    let aof_dir = server.dir.join("appendonlydir");
    let base = std::fs::read_dir(&aof_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF file");
    let text = std::fs::read(&base).unwrap();
    let restores = text
        .windows(13)
        .filter(|w| w == b"$7\r\nRESTORE\r\n")
        .count();
    assert_eq!(restores, 2);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DUMP", "a"]), dump_a);
    conn.call(&["SELECT", "3"]);
    assert_eq!(conn.call(&["DUMP", "b"]), dump_b);
    assert_eq!(
        conn.call(&["CMS.QUERY", "b", "z"]),
        Reply::Array(Some(vec![Reply::Int(9)]))
    );
}
