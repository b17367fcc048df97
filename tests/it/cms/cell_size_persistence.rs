//! Sketches of every cell size through every way a value leaves and re-enters a server:
//! DUMP / RESTORE, DEBUG RELOAD, replication and the AOF (which receive the cell size
//! explicitly), RESTORE of a hand-built RedisBloom 8.12 encoding-1 payload and an RDB file
//! of such values, and hostile encoding-1 payloads refused cleanly. The layouts are core's `cms::rdb`.

use super::hostile::CMS_ID;
use crate::support::dump_payload::{alive_without, decode, encode_value, learn_version, restore};
use crate::support::dump_payload::{put_len, seal, uncompressed_dumps, BAD_DATA_FORMAT, F};
use crate::support::resp::RawConnection;
use crate::support::server::TempDir;
use crate::support::{rewrite_aof, start_replica, wait_for_replicas, wait_until, Reply, Server};

const SIZES: [u8; 4] = [1, 2, 4, 8];

/// A sketch of `size`-byte cells in `key` (width 50, depth 3) with a few counts, one past
/// a 1-byte cell's maximum (refused there), one decrement.
fn build(conn: &mut RawConnection, key: &str, size: u8) {
    let size = size.to_string();
    let init = ["CMS.INITBYDIM", key, "50", "3", "CELL_SIZE", &size];
    assert_eq!(conn.call(&init), Reply::ok());
    conn.call(&["CMS.INCRBY", key, "a", "200", "b", "7", "a", "100"]);
    conn.call(&["CMS.INCRBY", key, "b", "-3", "c", "-1"]);
}

/// What a sketch answers: INFO and the estimates of a, b, c.
fn answers(conn: &mut RawConnection, key: &str) -> (Reply, Reply, Reply) {
    (
        conn.call(&["CMS.INFO", key]),
        conn.call(&["CMS.QUERY", key, "a", "b", "c"]),
        conn.call(&["DUMP", key]),
    )
}

#[test]
fn each_cell_size_round_trips_through_dump_restore_and_debug_reload() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    for size in SIZES {
        build(&mut conn, &format!("k{size}"), size);
    }
    let before: Vec<_> = SIZES.map(|s| answers(&mut conn, &format!("k{s}"))).into();
    for (size, (info, query, dump)) in SIZES.into_iter().zip(&before) {
        let a = if size == 1 { 200 } else { 300 };
        assert_eq!(*query, Reply::int_array(&[a, 4, 0]), "{size}");
        assert_eq!(info.array()[5], Reply::Int(a + 4));
        // The module's layout: encoding 0; a cell size other than 4 after the counters.
        let (id, fields) = decode(&dump.bytes());
        assert_eq!(id, CMS_ID, "{size}");
        assert_eq!(fields[..3], [F::U(50), F::U(3), F::U(a as u64 + 4)]);
        let F::S(counters) = &fields[3] else {
            panic!("{size}: counters {:?}", fields[3])
        };
        assert_eq!(counters.len(), 150 * usize::from(size));
        match size {
            4 => assert_eq!(fields.len(), 4),
            _ => assert_eq!(fields[4..], [F::U(u64::from(size))]),
        }
        let key = format!("copy{size}");
        assert_eq!(restore(&mut conn, &key, &dump.bytes()), Reply::ok());
        assert_eq!(
            answers(&mut conn, &key),
            (info.clone(), query.clone(), dump.clone())
        );
    }
    assert_eq!(conn.call(&["DEBUG", "RELOAD"]), Reply::ok());
    for (size, want) in SIZES.into_iter().zip(&before) {
        assert_eq!(answers(&mut conn, &format!("k{size}")), *want, "{size}");
    }
}

/// RedisBloom 8.12's encoding 1: width, depth, count, cell size, then the counters.
fn v1(width: u64, depth: u64, count: u64, size: u64, counters: Vec<u8>) -> Vec<u8> {
    let fields = [
        F::U(width),
        F::U(depth),
        F::U(count),
        F::U(size),
        F::S(counters),
    ];
    seal(&encode_value(CMS_ID | 1, &fields))
}

#[test]
fn a_hand_built_encoding_1_payload_restores_for_each_cell_size() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    conn.call(&["CMS.INITBYDIM", "real", "3", "2"]);
    learn_version(&conn.call(&["DUMP", "real"]).bytes());
    // Every counter 0x..0102 (little-endian: 02 01 then zeros), so any item estimates it.
    for (size, value) in [(1u8, 2i64), (2, 258), (4, 258), (8, 258)] {
        let mut cell = vec![0u8; usize::from(size)];
        cell[0] = 2;
        if size > 1 {
            cell[1] = 1;
        }
        let counters = cell.repeat(6);
        let key = format!("v1_{size}");
        let payload = v1(3, 2, 1234, u64::from(size), counters.clone());
        assert_eq!(restore(&mut conn, &key, &payload), Reply::ok(), "{size}");
        assert_eq!(
            conn.call(&["CMS.QUERY", &key, "anything"]),
            Reply::int_array(&[value])
        );
        let info = conn.call(&["CMS.INFO", &key]).array();
        assert_eq!(
            info[..6],
            [
                Reply::Simple("width".into()),
                Reply::Int(3),
                Reply::Simple("depth".into()),
                Reply::Int(2),
                Reply::Simple("count".into()),
                Reply::Int(1234),
            ]
        );
        let pair = [
            Reply::Simple("cell_size".into()),
            Reply::Int(i64::from(size)),
        ];
        let fourth: &[Reply] = if size == 4 { &[] } else { &pair };
        assert_eq!(&info[6..], fourth);
        // Written back in the module's encoding 0: for 4-byte cells RedisBloom 2.4.20's.
        let (id, fields) = decode(&conn.call(&["DUMP", &key]).bytes());
        assert_eq!(id, CMS_ID);
        let mut want = vec![F::U(3), F::U(2), F::U(1234), F::S(counters)];
        if size != 4 {
            want.push(F::U(u64::from(size)));
        }
        assert_eq!(fields, want);
    }
    // An 8-byte counter above INT64_MAX is read, and answered as INT64_MAX.
    let payload = v1(1, 1, 0, 8, u64::MAX.to_le_bytes().to_vec());
    assert_eq!(restore(&mut conn, "high", &payload), Reply::ok());
    assert_eq!(
        conn.call(&["CMS.QUERY", "high", "x"]),
        Reply::int_array(&[i64::MAX])
    );
    assert_eq!(
        conn.call(&["CMS.INCRBY", "high", "x", "1"]),
        Reply::Array(Some(vec![Reply::err("CMS: INCRBY overflow")]))
    );
}

/// An RDB file (version 10, Redis 7.0's, which every server here reads) holding one value
/// per (key, module value bytes as [`encode_value`] makes them), its CRC-64 at the end.
fn rdb_file(values: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut file = b"REDIS0010".to_vec();
    file.extend_from_slice(&[0xfe, 0]); // SELECTDB 0
    for (key, value) in values {
        file.push(value[0]); // the value's type, then the key, then the rest of the value
        put_len(&mut file, key.len() as u64);
        file.extend_from_slice(key.as_bytes());
        file.extend_from_slice(&value[1..]);
    }
    file.push(0xff);
    let crc = crate::support::crc64_jones(&file);
    file.extend_from_slice(&crc.to_le_bytes());
    file
}

#[test]
fn an_rdb_file_of_encoding_1_values_loads() {
    let dir = TempDir::new("cms-v1-rdb");
    let cells = |size: usize| {
        let mut cell = vec![0u8; size];
        cell[0] = 9;
        cell.repeat(8)
    };
    let values: Vec<(String, Vec<u8>)> = SIZES
        .iter()
        .map(|&size| {
            let fields = [
                F::U(4),
                F::U(2),
                F::U(90),
                F::U(u64::from(size)),
                F::S(cells(usize::from(size))),
            ];
            (format!("v1_{size}"), encode_value(CMS_ID | 1, &fields))
        })
        .collect();
    let values: Vec<(&str, Vec<u8>)> = values
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    std::fs::write(dir.0.join("v1.rdb"), rdb_file(&values)).unwrap();
    let server = Server::start_in(&dir.0, &["--dbfilename", "v1.rdb"]);
    let mut conn = server.raw();
    for size in SIZES {
        let key = format!("v1_{size}");
        assert_eq!(
            conn.call(&["CMS.QUERY", &key, "x"]),
            Reply::int_array(&[9]),
            "{size}"
        );
        let info = conn.call(&["CMS.INFO", &key]).array();
        assert_eq!(info[5], Reply::Int(90));
        assert_eq!(info.len(), if size == 4 { 6 } else { 8 });
    }
    // Saved again (in the module's encoding 0) and loaded back: the same answers.
    let before: Vec<_> = SIZES.map(|s| answers(&mut conn, &format!("v1_{s}"))).into();
    assert_eq!(conn.call(&["DEBUG", "RELOAD"]), Reply::ok());
    let after: Vec<_> = SIZES.map(|s| answers(&mut conn, &format!("v1_{s}"))).into();
    assert_eq!(after, before);
}

#[test]
fn hostile_cell_size_payloads_are_refused_and_the_server_lives() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    conn.call(&["CMS.INITBYDIM", "real", "3", "2"]);
    learn_version(&conn.call(&["DUMP", "real"]).bytes());
    let v0 = |fields: &[F]| seal(&encode_value(CMS_ID, fields));
    let forged: Vec<(&str, Vec<u8>)> = vec![
        ("cell size 0", v1(3, 2, 0, 0, vec![])),
        ("cell size 3", v1(3, 2, 0, 3, vec![0; 18])),
        ("cell size 16", v1(3, 2, 0, 16, vec![0; 96])),
        ("cell size 2^32 + 1", v1(3, 2, 0, (1 << 32) + 1, vec![0; 6])),
        ("short counters", v1(3, 2, 0, 8, vec![0; 47])),
        ("long counters", v1(3, 2, 0, 1, vec![0; 7])),
        (
            "4-byte counters for 2-byte cells",
            v1(3, 2, 0, 2, vec![0; 24]),
        ),
        (
            "huge dimensions, tiny buffer",
            v1(1 << 40, 1 << 20, 0, 8, vec![0; 48]),
        ),
        ("a product that wraps", v1(1 << 61, 8, 0, 8, vec![])),
        ("width 0", v1(0, 2, 0, 1, vec![])),
        (
            "the cell size as a string",
            seal(&encode_value(
                CMS_ID | 1,
                &[F::U(3), F::U(2), F::U(0), F::S(vec![1]), F::S(vec![0; 6])],
            )),
        ),
        (
            "no counters",
            seal(&encode_value(
                CMS_ID | 1,
                &[F::U(3), F::U(2), F::U(0), F::U(1)],
            )),
        ),
        (
            "encoding 2",
            seal(&encode_value(
                CMS_ID | 2,
                &[F::U(3), F::U(2), F::U(0), F::U(1), F::S(vec![0; 6])],
            )),
        ),
        (
            "encoding 1's order under encoding 0",
            v0(&[F::U(3), F::U(2), F::U(0), F::U(1), F::S(vec![0; 6])]),
        ),
        (
            "a trailing 4",
            v0(&[F::U(3), F::U(2), F::U(0), F::S(vec![0; 12]), F::U(4)]),
        ),
        (
            "a trailer not matching the counters",
            v0(&[F::U(3), F::U(2), F::U(0), F::S(vec![0; 12]), F::U(1)]),
        ),
        (
            "odd counters, no trailer",
            v0(&[F::U(3), F::U(2), F::U(0), F::S(vec![0; 12])]),
        ),
    ];
    for (what, payload) in forged {
        let reply = restore(&mut conn, "forged", &payload);
        assert_eq!(reply, Reply::err(BAD_DATA_FORMAT), "{what}");
        alive_without(&mut conn, "forged", what);
    }
    // The trailer's genuine forms load.
    let genuine = v0(&[F::U(3), F::U(2), F::U(0), F::S(vec![0; 12]), F::U(2)]);
    assert_eq!(restore(&mut conn, "ok", &genuine), Reply::ok());
}

/// The writes of [`replicas_and_the_aof_receive_the_cell_size`], a few refused.
fn writes(conn: &mut RawConnection) {
    conn.call(&["CMS.INITBYPROB", "p", "0.01", "0.125", "CELL_SIZE", "2"]);
    conn.call(&["CMS.INITBYPROB", "q", "0.01", "0.125", "CELL_SIZE", "4"]);
    conn.call(&["CMS.INITBYPROB", "r", "0.01", "0.125"]);
    for size in SIZES {
        build(conn, &format!("k{size}"), size);
    }
    conn.call(&[
        "CMS.INCRBY",
        "p",
        "a",
        "70000",
        "a",
        "65535",
        "b",
        "-1",
        "b",
        "9",
    ]);
    conn.call(&["CMS.MERGE", "k1", "2", "k1", "k1"]); // refused: overflow
    conn.call(&["CMS.MERGE", "k2", "2", "k2", "k1"]); // refused: cell size
    conn.call(&["CMS.MERGE", "k8", "2", "k8", "k8", "WEIGHTS", "3", "-1"]);
}

const KEYS: [&str; 7] = ["p", "q", "r", "k1", "k2", "k4", "k8"];

fn all_answers(conn: &mut RawConnection) -> Vec<(Reply, Reply, Reply)> {
    KEYS.iter().map(|key| answers(conn, key)).collect()
}

#[test]
fn replicas_and_the_aof_receive_the_cell_size() {
    let mut master = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let replica = start_replica(&master);
    let mut m = master.raw();
    writes(&mut m);
    wait_for_replicas(&mut m, 1);
    let want = all_answers(&mut m);
    assert_eq!(want[0].1, Reply::int_array(&[65535, 9, 0]));
    let mut r = replica.raw();
    wait_until("the replica has every write", || {
        all_answers(&mut r) == want
    });
    // INITBYPROB's effect names the cell size given, and only one given.
    let aof_dir = master.dir.join("appendonlydir");
    let incr = std::fs::read_dir(&aof_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF file");
    let text = String::from_utf8_lossy(&std::fs::read(&incr).unwrap()).into_owned();
    let effect = |key: &str, tail: &str| {
        format!("$13\r\nCMS.INITBYDIM\r\n$1\r\n{key}\r\n$3\r\n200\r\n$1\r\n3\r\n{tail}")
    };
    assert!(
        text.contains(&effect("p", "$9\r\nCELL_SIZE\r\n$1\r\n2\r\n")),
        "{text}"
    );
    assert!(text.contains(&effect("q", "$9\r\nCELL_SIZE\r\n$1\r\n4\r\n")));
    assert!(text.contains(&effect("r", "*")) || text.ends_with(&effect("r", "")));
    drop(m);
    drop(r);
    // The AOF replays to the same sketches, then its rewrite (RESTORE of DUMP) too.
    master.restart(&[]);
    let mut m = master.raw();
    assert_eq!(all_answers(&mut m), want);
    rewrite_aof(&mut m);
    drop(m);
    master.restart(&[]);
    assert_eq!(all_answers(&mut master.raw()), want);
}
