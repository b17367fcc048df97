//! Going back to RedisBloom with BLOCKED filters (issue 23): they are stored under a type
//! of their own (`RBblockBF`), so RedisBloom refuses an RDB file or DUMP payload holding
//! one, and every write to one reaches replicas and the AOF after `BF.BLOCKEDWRITE`, which
//! RedisBloom does not know, so its replica discards the write instead of building a
//! classic filter under that key. Filters written as `MBbloom--` with the BLOCKED option
//! (before that type existed) still load, answer and keep their layout.
//!
//! The RedisBloom side runs with `REDISBLOOM_MODULE` (RedisBloom 2.4.20 built outside the
//! repository), and is skipped with a message otherwise.

use crate::effects::{aof_commands, text};
use crate::support::bf::{assert_all_exist, items, madd};
use crate::support::dump_payload::{decode, encode_value, learn_version, restore, seal, BF_ID};
use crate::support::{
    call, loadchunks, redisbloom, scandump, server_binary, wait_for_replicas, wait_until,
    RawConnection, Reply, Server, TempDir,
};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BLOCKED_TYPE: &str = "RBblockBF";

fn key_type(conn: &mut RawConnection, key: &str) -> String {
    conn.call(&["TYPE", key]).text()
}

/// BLOCKED filters of every creation path (scaling, grown, non-scaling, BF.INSERT, an
/// implicit one under `bf-blocked`), each with items, and a classic filter beside them.
fn build(conn: &mut RawConnection) -> Vec<(&'static str, Vec<String>)> {
    assert_eq!(
        call(conn, "BF.RESERVE scaling 0.01 1000 EXPANSION 2 BLOCKED"),
        Reply::ok()
    );
    assert_eq!(
        call(conn, "BF.RESERVE fixed 0.01 1000 NONSCALING BLOCKED"),
        Reply::ok()
    );
    assert_eq!(call(conn, "BF.RESERVE grown 0.01 100 BLOCKED"), Reply::ok());
    let inserted = call(conn, "BF.INSERT ins CAPACITY 50 BLOCKED ITEMS i0 i1");
    assert_eq!(inserted, Reply::int_array(&[1, 1]));
    assert_eq!(call(conn, "CONFIG SET bf.bf-blocked 1"), Reply::ok());
    assert_eq!(call(conn, "BF.ADD auto a0"), Reply::Int(1));
    assert_eq!(call(conn, "CONFIG SET bf.bf-blocked 0"), Reply::ok());
    assert_eq!(call(conn, "BF.RESERVE classic 0.01 1000"), Reply::ok());
    let mut filters = vec![
        ("scaling", items("s", 0..2000)),
        ("fixed", items("f", 0..900)),
        ("grown", items("g", 0..1000)),
        ("ins", items("i", 0..2)),
        ("auto", items("a", 0..1)),
        ("classic", items("c", 0..2000)),
    ];
    for (key, added) in &mut filters {
        if !matches!(*key, "ins" | "auto") {
            madd(conn, key, added);
        }
    }
    filters
}

#[test]
fn blocked_filters_have_a_type_of_their_own_and_every_write_is_marked() {
    let server = Server::start_with(&[
        "--appendonly",
        "yes",
        "--aof-use-rdb-preamble",
        "no",
        "--appendfsync",
        "always",
    ]);
    let mut conn = server.raw();
    let filters = build(&mut conn);
    for (key, added) in &filters {
        let want = if *key == "classic" {
            "MBbloom--"
        } else {
            BLOCKED_TYPE
        };
        assert_eq!(key_type(&mut conn, key), want, "{key}");
        assert_all_exist(&mut conn, key, added);
    }
    // The other BF.* commands serve the type.
    assert_eq!(
        call(&mut conn, "BF.INFO scaling BLOCKED"),
        Reply::int_array(&[1])
    );
    assert_eq!(call(&mut conn, "BF.CARD ins"), Reply::Int(2));
    assert_eq!(call(&mut conn, "BF.EXISTS fixed nothere"), Reply::Int(0));
    assert_eq!(
        call(&mut conn, "BF.RESERVE scaling 0.01 10"),
        Reply::err("ERR item exists")
    );
    assert_eq!(
        call(&mut conn, "CF.ADD scaling x"),
        Reply::err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    // A write that changes nothing replicates nothing; the marker does nothing.
    assert_eq!(call(&mut conn, "BF.ADD ins i0"), Reply::Int(0));
    assert_eq!(call(&mut conn, "BF.BLOCKEDWRITE ins"), Reply::ok());
    assert_eq!(
        call(&mut conn, "BF.BLOCKEDWRITE"),
        Reply::err("ERR wrong number of arguments for 'bf.blockedwrite' command")
    );
    assert_eq!(call(&mut conn, "BF.ADD ins i2"), Reply::Int(1));
    let dump = scandump(&mut conn, "BF.SCANDUMP", "fixed");
    loadchunks(&mut conn, "BF.LOADCHUNK", "copy", &dump);
    assert_eq!(key_type(&mut conn, "copy"), BLOCKED_TYPE);
    assert_eq!(scandump(&mut conn, "BF.SCANDUMP", "copy"), dump);

    // Every command the AOF (fed as the replicas are) received for a BLOCKED key runs
    // inside a MULTI after BF.BLOCKEDWRITE of that key; the classic key's are RedisBloom's.
    let commands: Vec<Vec<Vec<u8>>> = aof_commands(&server)
        .into_iter()
        .filter(|c| text(c) != "SELECT 0")
        .collect();
    let mut in_multi = false;
    let mut marked: Option<Vec<u8>> = None;
    let mut blocked_writes = 0;
    for command in &commands {
        let name = String::from_utf8_lossy(&command[0]).to_ascii_uppercase();
        match name.as_str() {
            "MULTI" => in_multi = true,
            "EXEC" => (in_multi, marked) = (false, None),
            "BF.BLOCKEDWRITE" => {
                assert!(in_multi, "a marker outside MULTI");
                marked = Some(command[1].clone());
            }
            _ if command[1] == b"classic" => {
                assert!(marked.is_none(), "{}", text(command))
            }
            _ if name.starts_with("BF.") => {
                assert!(in_multi, "unmarked: {}", text(command));
                assert_eq!(marked.as_deref(), Some(command[1].as_slice()));
                blocked_writes += 1;
            }
            _ => {}
        }
    }
    // Creations (RESERVE or LOADCHUNK of the header) and adds of the six BLOCKED keys.
    assert!(blocked_writes >= 12, "{blocked_writes} marked writes");
    let first: Vec<String> = commands.iter().take(4).map(|c| text(c)).collect();
    assert_eq!(
        first,
        [
            "MULTI",
            "BF.BLOCKEDWRITE scaling",
            "BF.RESERVE scaling 0.01 1000 EXPANSION 2 BLOCKED",
            "EXEC"
        ]
    );
}

/// A BLOCKED filter as it was stored before `RBblockBF`: its DUMP payload under
/// `MBbloom--` encoding 4 (the same fields, the BLOCKED option bit set).
fn legacy_payload(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    assert_eq!(call(conn, "CONFIG SET rdbcompression no"), Reply::ok());
    let payload = conn.call(&["DUMP", key]).bytes();
    learn_version(&payload);
    let (_, fields) = decode(&payload);
    seal(&encode_value(BF_ID, &fields))
}

#[test]
fn legacy_blocked_filters_still_load_answer_and_upgrade() {
    let server = Server::start();
    let mut conn = server.raw();
    let filters = build(&mut conn);
    for (key, added) in filters.iter().filter(|(key, _)| *key != "classic") {
        let legacy = format!("legacy-{key}");
        let payload = legacy_payload(&mut conn, key);
        assert_eq!(restore(&mut conn, &legacy, &payload), Reply::ok());
        assert_eq!(key_type(&mut conn, &legacy), "MBbloom--");
        for command in ["BF.INFO", "BF.DEBUG", "BF.CARD"] {
            assert_eq!(
                conn.call(&[command, &legacy]),
                conn.call(&[command, key]),
                "{command} {key}"
            );
        }
        assert_eq!(
            scandump(&mut conn, "BF.SCANDUMP", &legacy),
            scandump(&mut conn, "BF.SCANDUMP", key)
        );
        assert_all_exist(&mut conn, &legacy, added);
        // The upgrade of docs/migration.md: SCANDUMP, LOADCHUNK into a new key, RENAME.
        let upgraded = format!("upgraded-{key}");
        let dump = scandump(&mut conn, "BF.SCANDUMP", &legacy);
        loadchunks(&mut conn, "BF.LOADCHUNK", &upgraded, &dump);
        assert_eq!(key_type(&mut conn, &upgraded), BLOCKED_TYPE);
        assert_eq!(scandump(&mut conn, "BF.SCANDUMP", &upgraded), dump);
    }
    // DEBUG RELOAD keeps each key's type and layout.
    let before: Vec<Reply> = ["legacy-scaling", "scaling"]
        .iter()
        .map(|key| conn.call(&["BF.DEBUG", key]))
        .collect();
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), Reply::ok());
    assert_eq!(key_type(&mut conn, "legacy-scaling"), "MBbloom--");
    assert_eq!(key_type(&mut conn, "scaling"), BLOCKED_TYPE);
    let after: Vec<Reply> = ["legacy-scaling", "scaling"]
        .iter()
        .map(|key| conn.call(&["BF.DEBUG", key]))
        .collect();
    assert_eq!(after, before);
    // What no command makes is refused: a classic filter's fields under RBblockBF.
    let blocked_id = decode(&conn.call(&["DUMP", "scaling"]).bytes()).0;
    let (_, classic) = decode(&conn.call(&["DUMP", "classic"]).bytes());
    let forged = seal(&encode_value(blocked_id, &classic));
    assert_eq!(
        restore(&mut conn, "forged", &forged),
        Reply::err("ERR Bad data format")
    );
    assert_eq!(call(&mut conn, "EXISTS forged"), Reply::Int(0));
}

/// Starts RedisBloom over `dir` (holding dump.rdb) and returns what it printed before
/// it exited, or `None` if it is still running after 10 s.
fn redisbloom_loading(module: &std::path::Path, dir: &std::path::Path) -> Option<String> {
    let port = crate::support::server::free_port();
    let mut child = Command::new(server_binary())
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .arg("--dir")
        .arg(dir)
        .arg("--loadmodule")
        .arg(module)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start redis-server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Some(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn redisbloom_refuses_blocked_filters_from_rdb_dump_and_replication() {
    let Some(module) = redisbloom("redisbloom_refuses_blocked_filters") else {
        return;
    };
    // Replication: a RedisBloom replica of a redbloom master.
    let master = Server::start();
    let replica = Server::start_with_module(&module, &[]);
    let mut conn = master.raw();
    let mut rconn = replica.raw();
    let replicaof = rconn.call(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    assert_eq!(replicaof, Reply::ok());
    wait_until("the RedisBloom replica's sync", || {
        crate::support::info_field(&mut rconn, "replication", "master_link_status") == "up"
    });
    let filters = build(&mut conn);
    wait_for_replicas(&mut conn, 1);
    let keys = rconn.call(&["KEYS", "*"]).array();
    assert_eq!(keys, vec![Reply::Bulk(Some(b"classic".to_vec()))]);
    assert_all_exist(&mut rconn, "classic", &filters[5].1);
    assert!(
        replica.log().contains("unknown command 'BF.BLOCKEDWRITE'"),
        "the replica logs why: {}",
        replica.log()
    );
    // DUMP / RESTORE.
    assert_eq!(call(&mut rconn, "REPLICAOF NO ONE"), Reply::ok());
    let payload = conn.call(&["DUMP", "scaling"]).bytes();
    assert_eq!(
        restore(&mut rconn, "restored", &payload),
        Reply::err("ERR Bad data format")
    );
    drop(rconn);
    drop(replica);
    // An RDB file.
    assert_eq!(call(&mut conn, "SAVE"), Reply::ok());
    let dir = TempDir::new("rdb-to-redisbloom");
    std::fs::copy(master.dir.join("dump.rdb"), dir.0.join("dump.rdb")).unwrap();
    let printed = redisbloom_loading(&module, &dir.0).expect("RedisBloom refuses to start");
    assert!(
        printed.contains("no matching module type 'RBblockBF'"),
        "{printed}"
    );
}
