//! core/tests/fixtures/redisbloom-2.4.20/topk.{rdb,manifest.json}, written by RedisBloom
//! 2.4.20 through scripts/fixtures/redisbloom-topk.py (its adds drew with rand()): the
//! RDB loads and every read (TOPK.INFO, LIST, LIST WITHCOUNT, QUERY, COUNT) answers byte
//! for byte as 2.4.20 (RESP2) and 2.6.28 (RESP3) answered after loading it; redbloom's
//! DUMP of each value is RedisBloom's with the bytes RedisBloom ignores set to zero; its
//! DUMP payloads RESTORE here; and with `REDISBLOOM_MODULE` set, RedisBloom loads the RDB
//! and the DUMP payloads redbloom writes and answers identically.

use super::commands::same_reply;
use crate::support::dump_payload::{
    decode, encode_value, learn_version, restore, seal, uncompressed_dumps, F,
};
use crate::support::golden::{self, argv, latin1, load};
use crate::support::{RawConnection, Reply, Server, TempDir};
use serde_json::Value;

fn manifest() -> Value {
    load("topk.manifest.json")
}

fn keys(m: &Value) -> &Vec<Value> {
    m["keys"].as_array().unwrap()
}

fn check_queries(conn: &mut RawConnection, m: &Value, field: &str) {
    for key in keys(m) {
        for record in key["queries"].as_array().unwrap() {
            let argv = argv(record);
            let got = conn.call_raw(&argv);
            let want = latin1(&record[field]);
            assert!(
                same_reply(&got, &want),
                "{field}: {}: {} != {}",
                String::from_utf8_lossy(&argv[..argv.len().min(3)].join(&b' ')),
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
        }
    }
}

/// A payload with what RedisBloom ignores on load set to zero: every heap record's item
/// pointer (redbloom's first one is the generator state, RedisBloom's the address the
/// item had) and padding. Also returns the first pointer.
fn normalized(payload: &[u8]) -> (Vec<u8>, u64) {
    let (id, mut fields) = decode(payload);
    let mut first = 0;
    if let Some(F::S(records)) = fields.get_mut(5) {
        first = u64::from_le_bytes(records[8..16].try_into().unwrap());
        for record in records.chunks_mut(24) {
            record[8..16].fill(0);
            record[20..24].fill(0);
        }
    }
    (seal(&encode_value(id, &fields)), first)
}

fn load_rdb(dir: &TempDir) -> Server {
    golden::load_rdb(dir, "topk.rdb")
}

#[test]
fn a_redisbloom_rdb_loads_and_answers_identically() {
    let m = manifest();
    let dir = TempDir::new("topk-fixture");
    let server = load_rdb(&dir);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_queries(&mut conn, &m, "resp");
    check_queries(&mut server.raw3(), &m, "resp3");
    // DUMP: RedisBloom's bytes, less the pointers and padding it never reads.
    uncompressed_dumps(&mut conn);
    for key in keys(&m) {
        let name = key["key"].as_str().unwrap();
        if name == "plain" {
            continue;
        }
        let theirs = hex::decode(key["dump_hex"].as_str().unwrap()).unwrap();
        let ours = conn.call(&["DUMP", name]).bytes();
        learn_version(&ours);
        let cut = ours.len() - 10;
        let ((ours, state), (theirs, _)) = (normalized(&ours), normalized(&theirs));
        assert_eq!(
            hex::encode(&ours[..cut]),
            hex::encode(&theirs[..cut]),
            "DUMP {name}"
        );
        // The generator state is the first pointer RedisBloom wrote in the file (a
        // nonzero address where its first heap slot held an item).
        assert_eq!(
            state != 0,
            key["key"] != "tk:empty",
            "{name}: state {state:#x}"
        );
    }
}

#[test]
fn redisbloom_dump_payloads_restore_and_answer_identically() {
    let m = manifest();
    let server = Server::start();
    let mut conn = server.raw();
    for key in keys(&m) {
        let name = key["key"].as_str().unwrap();
        let payload = hex::decode(key["dump_hex"].as_str().unwrap()).unwrap();
        if name == "plain" {
            conn.call(&["SET", "plain", "hello"]);
            continue;
        }
        assert_eq!(restore(&mut conn, name, &payload), Reply::ok(), "{name}");
    }
    check_queries(&mut conn, &m, "resp");
    check_queries(&mut server.raw3(), &m, "resp3");
}

/// The other direction: RedisBloom (`REDISBLOOM_MODULE`) loads redbloom's RDB file and
/// RESTOREs its DUMP payloads, and answers as the manifest says. Skipped, with a message,
/// without a RedisBloom build.
#[test]
fn redisbloom_loads_what_redbloom_writes() {
    let Some(reference) = crate::support::redisbloom("topk: redisbloom_loads_what_redbloom_writes")
    else {
        return;
    };
    let m = manifest();
    let dir = TempDir::new("topk-reverse");
    let mut dumps = Vec::new();
    {
        let server = load_rdb(&dir);
        let mut conn = server.raw();
        for key in keys(&m) {
            let name = key["key"].as_str().unwrap().to_string();
            dumps.push((name.clone(), conn.call(&["DUMP", &name]).bytes()));
        }
        assert_eq!(conn.call(&["SAVE"]).text(), "OK");
    }
    let server = Server::start_in_with_module(&dir.0, &reference, &["--dbfilename", "topk.rdb"]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_queries(&mut conn, &m, "resp");
    assert_eq!(conn.call(&["FLUSHALL"]), Reply::ok());
    for (name, payload) in &dumps {
        assert_eq!(restore(&mut conn, name, payload), Reply::ok(), "{name}");
    }
    check_queries(&mut conn, &m, "resp");
}
