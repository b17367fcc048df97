//! Every TDIGEST.* command with valid and invalid arguments, in one sequence on an empty
//! server, answered byte for byte as RedisBloom 2.4.20 (RESP2) and 2.6.28 (RESP3) answered
//! it (core/tests/fixtures/redisbloom-2.4.20/tdigest.commands.json: thousands of seeded
//! random values, every query between and after, every error text and the order of
//! checks, MERGE's compression rules, weights near 2^63, DUMP payloads); then what
//! redbloom adds: replicas equal to their master although reads merge the buffer,
//! keyspace events, the INFO section, COPY, DEBUG DIGEST-VALUE and the AOF rewrite.

use crate::support::golden::{latin1, load, sequence_on_a_fresh_server};
use crate::support::{start_replica, wait_for_replicas, RawConnection, Reply, Server};

const GOLDEN: &str = "tdigest.commands.json";

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp2() {
    sequence_on_a_fresh_server(GOLDEN, "resp");
}

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp3() {
    sequence_on_a_fresh_server(GOLDEN, "resp3");
}

#[test]
fn memory_usage_is_redisbloom_s() {
    if std::env::var("REDBLOOM_SERVER").is_ok() {
        return; // another server's key overhead
    }
    let server = Server::start();
    let mut conn = server.raw();
    let mut checked = 0;
    for record in load(GOLDEN)["commands"].as_array().unwrap() {
        let argv: Vec<Vec<u8>> = record["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(latin1)
            .collect();
        let got = conn.call_raw(&argv);
        if argv[0] == b"MEMORY" {
            assert_eq!(got, latin1(&record["resp"]), "{:?}", record["argv"]);
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked}");
}

fn double(reply: Reply) -> String {
    match reply {
        Reply::Bulk(Some(b)) => String::from_utf8(b).unwrap(),
        Reply::Array(Some(items)) => items.into_iter().map(double).collect::<Vec<_>>().join(" "),
        other => format!("{other:?}"),
    }
}

#[test]
fn replicas_hold_what_their_master_holds_although_reads_merge() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    m.call(&["TDIGEST.CREATE", "a", "COMPRESSION", "10"]);
    m.call(&["TDIGEST.CREATE", "b"]);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for round in 0..40 {
        let mut add = vec!["TDIGEST.ADD".to_string(), "a".to_string()];
        for _ in 0..7 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            add.push(format!("{}", (rng % 100_000) as f64 / 7.0));
        }
        m.call(&add);
        m.call(&["TDIGEST.ADD", "b", &add[2], &add[3]]);
        // Reads on the master merge the buffer at moments no write shows...
        match round % 4 {
            0 => m.call(&["TDIGEST.QUANTILE", "a", "0.5"]),
            1 => m.call(&["TDIGEST.CDF", "b", "100"]),
            2 => m.call(&["TDIGEST.RANK", "a", "1000"]),
            _ => m.call(&["TDIGEST.INFO", "a"]),
        };
        // ... and reads on the replica must not merge at other moments.
        r.call(&["TDIGEST.QUANTILE", "b", "0.9"]);
        r.call(&["TDIGEST.TRIMMED_MEAN", "a", "0.1", "0.9"]);
    }
    m.call(&["TDIGEST.MERGE", "c", "2", "a", "b", "COMPRESSION", "30"]);
    m.call(&["TDIGEST.ADD", "c", "1", "2", "3"]);
    wait_for_replicas(&mut m, 1);
    crate::support::wait_until("the replica has every write", || {
        r.call(&["EXISTS", "c"]).int() == 1
            && r.call(&["TDIGEST.INFO", "c"]) == m.call(&["TDIGEST.INFO", "c"])
    });
    for key in ["a", "b", "c"] {
        assert_eq!(
            m.call(&["TDIGEST.INFO", key]),
            r.call(&["TDIGEST.INFO", key]),
            "{key}"
        );
        assert_eq!(m.call(&["DUMP", key]), r.call(&["DUMP", key]), "{key}");
        assert_eq!(
            m.call(&["DEBUG", "DIGEST-VALUE", key]),
            r.call(&["DEBUG", "DIGEST-VALUE", key])
        );
    }
    // The replica answered from merged copies: its answers were the master's.
    let q = ["TDIGEST.QUANTILE", "c", "0.1", "0.5", "0.99"];
    assert_eq!(double(r.call(&q)), double(m.call(&q)));
}

/// A save writes a digest merged: RedisBloom's DUMP merges the stored digest too (so
/// INFO and every later answer show it merged); a fork child's RDB (a replica's full
/// sync, BGSAVE) or AOF rewrite holds it merged while the master's buffer stays. redbloom
/// merges the stored digest when it next uses it after either, and replicates that merge:
/// a replica synced from such an RDB, and one that was not, both hold the master's digest.
#[test]
fn saves_merge_the_digest_and_replicas_follow() {
    let master = Server::start();
    let mut m = master.raw();
    m.call(&["TDIGEST.CREATE", "a", "COMPRESSION", "10"]);
    m.call(&["TDIGEST.ADD", "a", "5", "1", "4", "1", "3"]);
    let info_of = |conn: &mut RawConnection| conn.call(&["TDIGEST.INFO", "a"]).array()[7].int();
    assert_eq!(info_of(&mut m), 5, "unmerged before the DUMP");
    m.call(&["DUMP", "a"]);
    assert_eq!(info_of(&mut m), 0, "merged after the DUMP, as RedisBloom's");
    // A replica synced now (its RDB: `a` merged) while `a` has a buffer again.
    m.call(&["TDIGEST.ADD", "a", "2", "9"]);
    let early = start_replica(&master);
    wait_for_replicas(&mut m, 1);
    m.call(&["TDIGEST.ADD", "a", "7", "7", "8"]);
    m.call(&["BGSAVE"]);
    crate::support::wait_until("the BGSAVE ends", || {
        crate::support::info_field(&mut m, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    m.call(&["TDIGEST.ADD", "a", "6"]);
    let late = start_replica(&master);
    wait_for_replicas(&mut m, 2);
    for i in 0..30 {
        m.call(&["TDIGEST.ADD", "a", &format!("{}", i * 3 % 17)]);
    }
    for replica in [&early, &late] {
        let mut r = replica.raw();
        crate::support::wait_until("the replica has every write", || {
            r.call(&["TDIGEST.INFO", "a"]) == m.call(&["TDIGEST.INFO", "a"])
        });
        assert_eq!(m.call(&["DUMP", "a"]), r.call(&["DUMP", "a"]));
    }
}

#[test]
fn merges_refused_for_overflow_replicate_and_replicas_match() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    m.call(&["TDIGEST.CREATE", "of", "COMPRESSION", "10"]);
    m.call(&["TDIGEST.ADD", "of", "1", "2", "3"]);
    // Doubling by merging into itself until the total weight nears 2^63; the refused
    // merge has merged its sources in place (as RedisBloom's), and so has the replica's.
    while m.call(&["TDIGEST.MERGE", "of", "2", "of", "of"]) == Reply::ok() {}
    m.call(&["TDIGEST.ADD", "of", "3"]);
    assert_eq!(
        m.call(&["TDIGEST.MERGE", "of", "2", "of", "of"]),
        Reply::Error("ERR T-Digest: overflow detected".into())
    );
    let info = m.call(&["TDIGEST.INFO", "of"]);
    let reply = m.call(&["TDIGEST.ADD", "of", "4", "5"]);
    assert_eq!(reply, Reply::ok());
    wait_for_replicas(&mut m, 1);
    crate::support::wait_until("the replica has every write", || {
        r.call(&["TDIGEST.INFO", "of"]) == m.call(&["TDIGEST.INFO", "of"])
    });
    assert_ne!(info, m.call(&["TDIGEST.INFO", "of"]));
    assert_eq!(m.call(&["DUMP", "of"]), r.call(&["DUMP", "of"]));
}

#[test]
fn copy_digest_events_and_info_section() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["TDIGEST.CREATE", "a", "COMPRESSION", "20"]);
    conn.call(&["TDIGEST.ADD", "a", "1", "2", "3", "4"]);
    assert_eq!(conn.call(&["COPY", "a", "b"]).int(), 1);
    assert_eq!(conn.call(&["DUMP", "a"]), conn.call(&["DUMP", "b"]));
    assert_eq!(
        conn.call(&["TDIGEST.INFO", "a"]),
        conn.call(&["TDIGEST.INFO", "b"])
    );
    assert_eq!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    conn.call(&["TDIGEST.ADD", "b", "5"]);
    assert_ne!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    let field = |conn: &mut RawConnection, name: &str| {
        crate::support::info_field(conn, "bf", &format!("bf_tdigest_{name}"))
    };
    assert_eq!(field(&mut conn, "filters"), "2");
    assert_eq!(field(&mut conn, "items"), "9");
    // 8 + 16 × (6 × 20 + 10) bytes each.
    assert_eq!(field(&mut conn, "bytes"), "4176");
    // TDIGEST.MERGE's key specs name the destination and the sources.
    let keys = conn.call(&[
        "COMMAND",
        "GETKEYS",
        "TDIGEST.MERGE",
        "d",
        "2",
        "a",
        "b",
        "OVERRIDE",
    ]);
    let bulk = |k: &str| Reply::Bulk(Some(k.as_bytes().to_vec()));
    assert_eq!(
        keys,
        Reply::Array(Some(vec![bulk("d"), bulk("a"), bulk("b")]))
    );
    // Keyspace events of class d, named after the command.
    assert_eq!(
        conn.call(&["CONFIG", "SET", "notify-keyspace-events", "KEd"]),
        Reply::ok()
    );
    let mut sub = server.raw();
    sub.call(&[
        "SUBSCRIBE",
        "__keyevent@0__:tdigest.add",
        "__keyevent@0__:tdigest.merge",
    ]);
    let _ = sub.read_reply();
    conn.call(&["TDIGEST.ADD", "a", "9"]);
    conn.call(&["TDIGEST.ADD", "a", "x"]); // refused: no event
    conn.call(&["TDIGEST.MERGE", "d", "1", "a"]);
    for channel in ["tdigest.add", "tdigest.merge"] {
        let event = sub.read_reply();
        let want = Reply::Array(Some(vec![
            Reply::Bulk(Some(b"message".to_vec())),
            Reply::Bulk(Some(format!("__keyevent@0__:{channel}").into_bytes())),
            Reply::Bulk(Some(if channel == "tdigest.add" {
                b"a".to_vec()
            } else {
                b"d".to_vec()
            })),
        ]));
        assert_eq!(event, want);
    }
    conn.call(&["DEL", "a", "b", "d"]);
    assert_eq!(field(&mut conn, "filters"), "0");
}

#[test]
fn aof_rewrite_is_restore_of_dump_and_replays() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    conn.call(&["TDIGEST.CREATE", "a", "COMPRESSION", "15"]);
    let values: Vec<String> = (0..300)
        .map(|i| format!("{}", (i * 37 % 101) as f64 / 3.0))
        .collect();
    let mut add = vec!["TDIGEST.ADD", "a"];
    add.extend(values.iter().map(String::as_str));
    conn.call(&add);
    assert_eq!(conn.call(&["SELECT", "2"]), Reply::ok());
    conn.call(&["TDIGEST.CREATE", "b"]);
    conn.call(&["TDIGEST.ADD", "b", "1.5"]);
    let dump_b = conn.call(&["DUMP", "b"]);
    conn.call(&["SELECT", "0"]);
    // The rewrite saves `a` merged; so does DUMP (neither changes the stored digest).
    let dump_a = conn.call(&["DUMP", "a"]);
    crate::support::rewrite_aof(&mut conn);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DUMP", "a"]), dump_a);
    conn.call(&["SELECT", "2"]);
    assert_eq!(conn.call(&["DUMP", "b"]), dump_b);
    assert_eq!(double(conn.call(&["TDIGEST.MIN", "b"])), "1.5");
}

/// The AOF (fed as replicas are) records each merge a read caused, so replaying it after a
/// restart rebuilds the digest as it was, buffer included.
#[test]
fn an_aof_replay_rebuilds_the_digest_with_its_buffer() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut conn = server.raw();
    conn.call(&["TDIGEST.CREATE", "a", "COMPRESSION", "8"]);
    for round in 0..30 {
        let values: Vec<String> = (0..5)
            .map(|i| format!("{}", (round * 7 + i * 13) % 41))
            .collect();
        let mut add = vec!["TDIGEST.ADD", "a"];
        add.extend(values.iter().map(String::as_str));
        conn.call(&add);
        if round % 3 == 0 {
            conn.call(&["TDIGEST.CDF", "a", "20"]);
        }
    }
    conn.call(&["TDIGEST.ADD", "a", "1", "2"]);
    let info = conn.call(&["TDIGEST.INFO", "a"]);
    assert_ne!(info.array()[7], Reply::Int(0), "a buffer to rebuild");
    let dump = conn.call(&["DUMP", "a"]);
    drop(conn);
    server.restart(&["--appendonly", "yes"]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["TDIGEST.INFO", "a"]), info);
    assert_eq!(conn.call(&["DUMP", "a"]), dump);
}
