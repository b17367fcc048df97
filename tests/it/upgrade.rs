//! docs/upgrading.md's promise: an RDB file written by a released redbloom loads into this
//! build and answers as it did. `tests/fixtures/redbloom-<version>/` holds one RDB file per
//! released set of encodings (one key of each of the eight data types, written by that
//! release with [`BUILD`]) and the `DUMP` payloads that release gave for them; the test loads
//! each file, checks every answer of [`ANSWERS`] (also after this build saves and loads it
//! again), and for the newest fixture that this build's `DUMP` of each key is that release's
//! byte for byte (so an encoding that changes must get a new number and a new fixture).
//!
//! A release that changes an encoding adds its directory: run
//! `cargo test --test it upgrade::write_the_upgrade_fixture -- --ignored` with that release
//! and add the version to [`FIXTURES`] (never rewrite an older one).

use crate::support::{Reply, Server, TempDir};
use std::path::PathBuf;

/// The fixture directories, oldest first; the last is the current encodings.
const FIXTURES: &[&str] = &["redbloom-0.1.0"];

/// What the fixture's keys are made of: one key per data type.
const BUILD: &[&str] = &[
    "BF.RESERVE bf 0.01 1000",
    "BF.MADD bf a b c",
    "BF.RESERVE blocked 0.01 1000 BLOCKED",
    "BF.MADD blocked a b c",
    "CF.RESERVE cf 1000",
    "CF.ADD cf a",
    "CF.ADD cf b",
    "CF.DEL cf b",
    "CBF.RESERVE cbf 0.01 1000",
    "CBF.MADD cbf a a b",
    "WBF.RESERVE wbf 0.01 100",
    "WBF.MADD wbf a b c",
    "CMS.INITBYDIM cms 100 5",
    "CMS.INCRBY cms a 5 b 2",
    "TOPK.RESERVE topk 3 50 5 0.9",
    "TOPK.ADD topk a a a b c",
    "TDIGEST.CREATE td COMPRESSION 100",
    "TDIGEST.ADD td 1 2 3 4 5",
];

/// The keys, in the order of [`BUILD`], with their data types.
const KEYS: &[(&str, &str)] = &[
    ("bf", "MBbloom--"),
    ("blocked", "RBblockBF"),
    ("cf", "MBbloomCF"),
    ("cbf", "RBcountBF"),
    ("wbf", "RBslideBF"),
    ("cms", "CMSk-TYPE"),
    ("topk", "TopK-TYPE"),
    ("td", "TDIS-TYPE"),
];

fn answers() -> Vec<(&'static str, Reply)> {
    let bulk = |v: &[&str]| Reply::bulk_array(v);
    vec![
        ("BF.MEXISTS bf a b c z", Reply::int_array(&[1, 1, 1, 0])),
        ("BF.CARD bf", Reply::Int(3)),
        (
            "BF.MEXISTS blocked a b c z",
            Reply::int_array(&[1, 1, 1, 0]),
        ),
        ("CF.MEXISTS cf a b", Reply::int_array(&[1, 0])),
        ("CF.COUNT cf a", Reply::Int(1)),
        ("CBF.COUNT cbf a", Reply::Int(2)),
        ("CBF.COUNT cbf b", Reply::Int(1)),
        ("CBF.EXISTS cbf z", Reply::Int(0)),
        ("WBF.MEXISTS wbf a b c z", Reply::int_array(&[1, 1, 1, 0])),
        ("CMS.QUERY cms a b z", Reply::int_array(&[5, 2, 0])),
        (
            "TOPK.LIST topk",
            Reply::Array(Some(
                ["a", "b", "c"]
                    .iter()
                    .map(|s| Reply::Simple(s.to_string()))
                    .collect(),
            )),
        ),
        ("TDIGEST.QUANTILE td 0.5", bulk(&["3"])),
        ("TDIGEST.MIN td", Reply::bulk("1")),
        ("TDIGEST.MAX td", Reply::bulk("5")),
    ]
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `DUMP key` without its trailer (RDB version and CRC, which depend on the server).
fn dump_body(conn: &mut crate::support::RawConnection, key: &str) -> Vec<u8> {
    let payload = conn.call(&["DUMP", key]).bytes();
    payload[..payload.len() - 10].to_vec()
}

fn check_answers(conn: &mut crate::support::RawConnection, when: &str) {
    for (key, type_name) in KEYS {
        assert_eq!(
            conn.call(&["TYPE", key]),
            Reply::Simple(type_name.to_string()),
            "{when}: TYPE {key}"
        );
    }
    for (command, expected) in answers() {
        let args: Vec<&str> = command.split(' ').collect();
        assert_eq!(conn.call(&args), expected, "{when}: {command}");
    }
}

#[test]
fn every_released_rdb_loads_and_answers_as_it_did() {
    for (i, name) in FIXTURES.iter().enumerate() {
        let dir = TempDir::new("upgrade");
        std::fs::copy(fixture(name).join("all.rdb"), dir.0.join("all.rdb")).unwrap();
        let server = Server::start_in(&dir.0, &["--dbfilename", "all.rdb"]);
        let mut conn = server.raw();
        assert_eq!(conn.sorted_keys().len(), KEYS.len(), "{name}: keys loaded");
        check_answers(&mut conn, name);
        if i == FIXTURES.len() - 1 {
            let dumps = std::fs::read_to_string(fixture(name).join("dumps.txt")).unwrap();
            for line in dumps.lines() {
                let (key, body) = line.split_once(' ').unwrap();
                assert_eq!(
                    hex::encode(dump_body(&mut conn, key)),
                    body,
                    "{name}: DUMP {key}"
                );
            }
            assert_eq!(dumps.lines().count(), KEYS.len());
        }
        // Saved by this build and loaded again: the same answers.
        assert_eq!(conn.call(&["DEBUG", "RELOAD"]), Reply::ok());
        check_answers(&mut conn, &format!("{name}, saved again"));
    }
}

/// The other half of the promise: a value under an encoding number this build does not
/// know (its own plus one: a later release's) is refused, never misread.
#[test]
fn a_later_encoding_is_refused() {
    use crate::support::dump_payload::{learn_version, restore, seal, BAD_DATA_FORMAT};
    let name = FIXTURES[FIXTURES.len() - 1];
    let dir = TempDir::new("upgrade");
    std::fs::copy(fixture(name).join("all.rdb"), dir.0.join("all.rdb")).unwrap();
    let server = Server::start_in(&dir.0, &["--dbfilename", "all.rdb"]);
    let mut conn = server.raw();
    for (key, type_name) in KEYS {
        let payload = conn.call(&["DUMP", key]).bytes();
        learn_version(&payload);
        let mut value = payload[..payload.len() - 10].to_vec();
        // RDB_TYPE_MODULE_2, a 64-bit length marker, then the module id (big-endian), whose
        // low 10 bits are the encoding.
        assert_eq!(value[..2], [7, 0x81], "{key}");
        let id = u64::from_be_bytes(value[2..10].try_into().unwrap());
        let later = (id & !1023) | ((id & 1023) + 1);
        value[2..10].copy_from_slice(&later.to_be_bytes());
        let reply = restore(&mut conn, "later", &seal(&value));
        assert_eq!(reply, Reply::err(BAD_DATA_FORMAT), "{type_name}");
        assert_eq!(conn.call(&["EXISTS", "later"]), Reply::Int(0));
        // The same payload under its own encoding restores.
        assert_eq!(
            restore(&mut conn, "later", &payload),
            Reply::ok(),
            "{type_name}"
        );
        assert_eq!(conn.call(&["DEL", "later"]), Reply::Int(1));
    }
}

#[test]
#[ignore = "writes a fixture: run only with a new release whose encodings changed"]
fn write_the_upgrade_fixture() {
    let name = format!("redbloom-{}", redbloom::REDBLOOM_VERSION);
    let server = Server::start();
    let mut conn = server.raw();
    for command in BUILD {
        let args: Vec<&str> = command.split(' ').collect();
        let reply = conn.call(&args);
        assert!(!matches!(reply, Reply::Error(_)), "{command}: {reply:?}");
    }
    check_answers(&mut conn, "built");
    assert_eq!(conn.call(&["SAVE"]), Reply::ok());
    let out = fixture(&name);
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(server.dir.join("dump.rdb"), out.join("all.rdb")).unwrap();
    let mut dumps = String::new();
    for (key, _) in KEYS {
        dumps.push_str(&format!(
            "{key} {}\n",
            hex::encode(dump_body(&mut conn, key))
        ));
    }
    std::fs::write(out.join("dumps.txt"), dumps).unwrap();
}
