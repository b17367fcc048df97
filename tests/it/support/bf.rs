//! Helpers for the BF.* tests: everything a client can observe about one Bloom filter key,
//! item membership in bulk, and a set of filters of every shape.

use super::resp::{RawConnection, Reply};
use super::scandump::scandump;
use std::fmt;

/// Everything observable about one BF key: BF.INFO, BF.DEBUG, BF.CARD, the full SCANDUMP
/// and the DUMP payload. Two equal snapshots mean byte-identical filters.
#[derive(Clone, PartialEq)]
pub struct Snapshot {
    pub info: Reply,
    pub debug: Reply,
    pub card: Reply,
    pub scandump: Vec<(i64, Option<Vec<u8>>)>,
    pub dump: Reply,
}

impl Snapshot {
    pub fn take(conn: &mut RawConnection, key: &str) -> Snapshot {
        Snapshot {
            info: conn.call(&["BF.INFO", key]),
            debug: conn.call(&["BF.DEBUG", key]),
            card: conn.call(&["BF.CARD", key]),
            scandump: scandump(conn, "BF.SCANDUMP", key),
            dump: conn.call(&["DUMP", key]),
        }
    }
}

/// Short, comparable digest of a byte string (sizes reach 100 MB; never print those).
pub fn digest(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    format!("{} bytes fnv {h:016x}", data.len())
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chunks: Vec<String> = self
            .scandump
            .iter()
            .map(|(it, data)| format!("{it}: {}", digest(data.as_deref().unwrap_or_default())))
            .collect();
        let dump = match &self.dump {
            Reply::Bulk(Some(b)) => digest(b),
            other => format!("{other:?}"),
        };
        f.debug_struct("Snapshot")
            .field("info", &self.info)
            .field("debug", &self.debug)
            .field("card", &self.card)
            .field("scandump", &chunks)
            .field("dump", &dump)
            .finish()
    }
}

/// `prefix0`, `prefix1`, … as item names.
pub fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// BF.MADD of all `items` in batches; returns every element of every reply.
pub fn madd(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<Reply> {
    let mut out = Vec::new();
    for batch in items.chunks(5000) {
        let mut args = vec!["BF.MADD", key];
        args.extend(batch.iter().map(String::as_str));
        out.extend(conn.call(&args).array());
    }
    out
}

/// BF.MEXISTS of all `items` in batches: one 0/1 per item.
pub fn mexists(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    let mut out = Vec::new();
    for batch in items.chunks(5000) {
        let mut args = vec!["BF.MEXISTS", key];
        args.extend(batch.iter().map(String::as_str));
        out.extend(conn.call(&args).ints());
    }
    out
}

/// Asserts that every one of `items` is reported present.
pub fn assert_all_exist(conn: &mut RawConnection, key: &str, items: &[String]) {
    let found = mexists(conn, key, items);
    let missing: Vec<&String> = items
        .iter()
        .zip(&found)
        .filter(|(_, f)| **f != 1)
        .map(|(i, _)| i)
        .collect();
    assert!(missing.is_empty(), "{key}: missing {missing:?}");
}

/// The BF.DEBUG lines as text.
pub fn debug_lines(conn: &mut RawConnection, key: &str) -> Vec<String> {
    conn.call(&["BF.DEBUG", key])
        .array()
        .iter()
        .map(Reply::text)
        .collect()
}

/// A set of filters covering every shape a command can make, plus one loaded from a
/// header with 32-bit hashing (FORCE64 off): `(key, items added)`. With `big`, also a
/// 27.6 MB filter (two SCANDUMP/AOF chunks).
pub fn build_filters(conn: &mut RawConnection, big: bool) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut make = |conn: &mut RawConnection, key: &str, create: &str, items: Vec<String>| {
        if !create.is_empty() {
            let args: Vec<&str> = create.split(' ').collect();
            assert_eq!(conn.call(&args), Reply::ok(), "{create}");
        }
        madd(conn, key, &items);
        out.push((key.to_string(), items));
    };
    make(conn, "default", "", items("d", 0..50));
    make(conn, "multi", "BF.RESERVE multi 0.01 10", items("", 0..100));
    make(conn, "six", "BF.RESERVE six 0.001 100", items("", 0..4000));
    make(
        conn,
        "nonscaling",
        "BF.RESERVE nonscaling 0.01 50 NONSCALING",
        items("n", 0..45),
    );
    make(
        conn,
        "exp0",
        "BF.RESERVE exp0 0.05 20 EXPANSION 0",
        items("z", 0..10),
    );
    make(
        conn,
        "wide",
        "BF.RESERVE wide 0.01 10 EXPANSION 30000",
        items("w", 0..30),
    );
    make(conn, "empty", "BF.RESERVE empty 0.02 1000", Vec::new());
    // A legacy filter: the header of a fresh one with options NOROUND only.
    assert_eq!(
        conn.call(&["BF.RESERVE", "tmp", "0.01", "200"]),
        Reply::ok()
    );
    let mut header = conn.call(&["BF.SCANDUMP", "tmp", "0"]).array()[1].bytes();
    header[12..16].copy_from_slice(&1u32.to_le_bytes());
    let load = conn.call(&[b"BF.LOADCHUNK".as_slice(), b"legacy", b"1", &header]);
    assert_eq!(load, Reply::ok());
    assert_eq!(conn.call(&["DEL", "tmp"]), Reply::Int(1));
    make(conn, "legacy", "", items("l", 0..300));
    let width = conn.call(&["BF.DEBUG", "legacy"]).array()[1].text();
    assert!(width.contains(" hashwidth:32 "), "{width}");
    if big {
        make(
            conn,
            "big",
            "BF.RESERVE big 0.01 20000000",
            items("b", 0..3000),
        );
    }
    out
}

/// Asserts that `conn` holds exactly the filters of `want` (snapshots taken elsewhere),
/// with every item present.
pub fn assert_same_filters(
    conn: &mut RawConnection,
    filters: &[(String, Vec<String>)],
    want: &[Snapshot],
) {
    for ((key, items), snapshot) in filters.iter().zip(want) {
        assert_eq!(&Snapshot::take(conn, key), snapshot, "{key}");
        assert_all_exist(conn, key, items);
    }
}

/// Snapshots of all `filters`.
pub fn snapshots(conn: &mut RawConnection, filters: &[(String, Vec<String>)]) -> Vec<Snapshot> {
    filters
        .iter()
        .map(|(key, _)| Snapshot::take(conn, key))
        .collect()
}
