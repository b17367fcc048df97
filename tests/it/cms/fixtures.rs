//! core/tests/fixtures/redisbloom-2.4.20/cms.{rdb,manifest.json}, written by RedisBloom
//! 2.4.20 (RESP2 replies, the RDB file) and 2.6.28 (RESP3 replies) through
//! scripts/fixtures/redisbloom-cms.py: the RDB loads and every query answers byte for
//! byte as RedisBloom did; replaying the commands gives the same replies and the same
//! DUMP payloads; and with `REDISBLOOM_MODULE` (a RedisBloom build) set, RedisBloom loads
//! the RDB redbloom writes and answers identically.

use crate::support::golden::{argv, fixture_json, latin1, start_on_fixture_rdb};
use crate::support::{RawConnection, Server, TempDir};
use serde_json::Value;

fn manifest() -> Value {
    fixture_json("cms.manifest.json")
}

fn keys(m: &Value) -> &Vec<Value> {
    m["keys"].as_array().unwrap()
}

/// Runs `records` (ops or queries) and compares each raw reply with RedisBloom's
/// (`resp` on RESP2, `resp3` on RESP3).
fn check(conn: &mut RawConnection, records: &Value, field: &str) {
    for record in records.as_array().unwrap() {
        let argv = argv(record);
        let got = conn.call_raw(&argv);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&latin1(&record[field])),
            "{field}: {}",
            String::from_utf8_lossy(&argv[..argv.len().min(4)].concat())
        );
    }
}

/// DUMP of every key equals RedisBloom's payload (on another server than Redis 7.0, all
/// but the RDB version and CRC, the last 10 bytes).
fn check_dumps(conn: &mut RawConnection, m: &Value) {
    let exact = std::env::var("REDBLOOM_SERVER").is_err();
    for key in keys(m) {
        let name = key["key"].as_str().unwrap();
        let dump = conn.call(&["DUMP", name]).bytes();
        let want = hex::decode(key["dump_hex"].as_str().unwrap()).unwrap();
        let cut = if exact { 0 } else { 10 };
        assert_eq!(
            hex::encode(&dump[..dump.len() - cut]),
            hex::encode(&want[..want.len() - cut]),
            "DUMP {name}"
        );
    }
}

fn check_queries(conn: &mut RawConnection, m: &Value, field: &str) {
    for key in keys(m) {
        check(conn, &key["queries"], field);
    }
}

fn load_rdb(dir: &TempDir) -> Server {
    start_on_fixture_rdb(dir, "cms.rdb")
}

#[test]
fn a_redisbloom_rdb_loads_and_answers_identically() {
    let m = manifest();
    let dir = TempDir::new("cms-fixture");
    let server = load_rdb(&dir);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_queries(&mut conn, &m, "resp");
    check_dumps(&mut conn, &m);
    let mut conn3 = RawConnection::connect_resp3(server.port).unwrap();
    check_queries(&mut conn3, &m, "resp3");
}

#[test]
fn replaying_the_commands_gives_the_same_replies_and_bytes() {
    let m = manifest();
    let server = Server::start();
    let mut conn = server.raw();
    for key in keys(&m) {
        check(&mut conn, &key["ops"], "resp");
    }
    check_queries(&mut conn, &m, "resp");
    check_dumps(&mut conn, &m);
    // RESP3 clients get 2.6's replies to the same commands.
    let server3 = Server::start();
    let mut conn3 = RawConnection::connect_resp3(server3.port).unwrap();
    for key in keys(&m) {
        check(&mut conn3, &key["ops"], "resp3");
    }
    check_queries(&mut conn3, &m, "resp3");
}

/// The other direction: RedisBloom (`REDISBLOOM_MODULE`) loads redbloom's RDB file and
/// answers as the manifest says. Skipped, with a message, without a RedisBloom build.
#[test]
fn redisbloom_loads_the_rdb_redbloom_writes() {
    let Some(reference) = crate::support::redisbloom("redisbloom_loads_the_rdb_redbloom_writes")
    else {
        return;
    };
    let m = manifest();
    let dir = TempDir::new("cms-reverse");
    {
        let server = Server::start_in(&dir.0, &["--dbfilename", "ours.rdb"]);
        let mut conn = server.raw();
        for key in keys(&m) {
            check(&mut conn, &key["ops"], "resp");
        }
        assert_eq!(conn.call(&["SAVE"]).text(), "OK");
    }
    let server = Server::start_in_with_module(&dir.0, &reference, &["--dbfilename", "ours.rdb"]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_queries(&mut conn, &m, "resp");
    check_dumps(&mut conn, &m);
}
