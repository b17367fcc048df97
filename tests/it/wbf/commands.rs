//! WBF.* against a real server: every command's replies and errors, wrong types both ways,
//! windows counted and timed (with real time: windows of a few hundred ms checked well
//! inside and well past their bounds), COPY, keyspace events, INFO, and hostile LOADCHUNK /
//! RESTORE input.

use crate::support::replies::{err, int, ints, ok};
use crate::support::wbf::{build_filters, madd, mexists, snapshot};

use crate::support::{
    call, expect, info_field, loadchunks, scandump, RawConnection, Reply, Server,
};
use redbloom_core::window::WindowShape;
use std::time::{Duration, Instant};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_FOUND: &str = "ERR not found";
const BAD_DATA: &str = "ERR received bad data";

/// WBF.INFO's full reply.
fn info(
    capacity: i64,
    window: Option<i64>,
    error: &str,
    size: i64,
    generations: i64,
    items: i64,
) -> Reply {
    let simple = |s: &str| Reply::Simple(s.to_string());
    Reply::Array(Some(vec![
        simple("Capacity"),
        int(capacity),
        simple("Window"),
        window.map_or(Reply::Bulk(None), Reply::Int),
        simple("Error rate"),
        Reply::bulk(error),
        simple("Size"),
        int(size),
        simple("Generations"),
        int(generations),
        simple("Number of items in the window"),
        int(items),
    ]))
}

/// What WBF.INFO "Size" reports for a shape.
fn size_of(capacity: u64, error: f64) -> i64 {
    WindowShape::new(capacity, error)
        .unwrap()
        .mem_usage()
        .unwrap() as i64
}

#[test]
fn command_flags_arity_and_errors_of_arity() {
    let server = Server::start();
    let mut conn = server.raw();
    for (name, arity, flags) in [
        ("wbf.reserve", -4, &["write", "denyoom"][..]),
        ("wbf.add", 3, &["write", "denyoom"]),
        ("wbf.madd", -3, &["write", "denyoom"]),
        ("wbf.exists", 3, &["readonly", "fast"]),
        ("wbf.mexists", -3, &["readonly", "fast"]),
        ("wbf.info", -2, &["readonly", "fast"]),
        ("wbf.card", 2, &["readonly", "fast"]),
        ("wbf.scandump", 3, &["readonly", "fast"]),
        ("wbf.loadchunk", 4, &["write", "denyoom"]),
        ("wbf.at", -5, &["write", "denyoom"]),
    ] {
        let reply = conn.call(&["COMMAND", "INFO", name]).array()[0].array();
        assert_eq!(reply[0].text(), name);
        assert_eq!(reply[1].int(), arity, "{name}");
        let got: Vec<String> = reply[2].array().iter().map(Reply::text).collect();
        let mut want: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        want.push("module".into());
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for flag in &want {
            assert!(got.contains(flag), "{name}: {got:?} lacks {flag}");
        }
        assert_eq!((reply[3].int(), reply[4].int(), reply[5].int()), (1, 1, 1));
        let docs = conn.call(&["COMMAND", "DOCS", name]).array();
        assert_eq!(docs.len(), 2, "{name} has docs");
    }
    let arity = |c: &str| err(&format!("ERR wrong number of arguments for '{c}' command"));
    let cases: &[(&str, &[&str])] = &[
        ("wbf.reserve", &["WBF.RESERVE", "k", "0.01"]),
        (
            "wbf.reserve",
            &["WBF.RESERVE", "k", "0.01", "1", "WINDOW", "2", "x"],
        ),
        ("wbf.add", &["WBF.ADD", "k"]),
        ("wbf.add", &["WBF.ADD", "k", "a", "b"]),
        ("wbf.madd", &["WBF.MADD", "k"]),
        ("wbf.exists", &["WBF.EXISTS", "k"]),
        ("wbf.exists", &["WBF.EXISTS", "k", "a", "b"]),
        ("wbf.mexists", &["WBF.MEXISTS", "k"]),
        ("wbf.info", &["WBF.INFO"]),
        ("wbf.info", &["WBF.INFO", "k", "size", "x"]),
        ("wbf.card", &["WBF.CARD"]),
        ("wbf.card", &["WBF.CARD", "k", "x"]),
        ("wbf.scandump", &["WBF.SCANDUMP", "k"]),
        ("wbf.loadchunk", &["WBF.LOADCHUNK", "k", "1"]),
        ("wbf.at", &["WBF.AT", "k", "1", "ADD"]),
    ];
    for (name, argv) in cases {
        assert_eq!(conn.call(argv), arity(name), "{argv:?}");
    }
    expect(&mut conn, "EXISTS k", int(0));
}

#[test]
fn reserve_validation_and_info() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.ADD bf x", int(1));
    expect(&mut conn, "SET s v", ok());
    for (line, want) in [
        ("WBF.RESERVE k x 100", "ERR bad error rate"),
        ("WBF.RESERVE k 0 100", "ERR (0 < error rate range < 1) "),
        ("WBF.RESERVE k 1 100", "ERR (0 < error rate range < 1) "),
        ("WBF.RESERVE k 0.01 x", "ERR bad capacity"),
        (
            "WBF.RESERVE k 0.01 0",
            "ERR (capacity should be larger than 0)",
        ),
        ("WBF.RESERVE k 0.01 100 WINDOW", "ERR bad window"),
        ("WBF.RESERVE k 0.01 100 WINDOW 0", "ERR bad window"),
        ("WBF.RESERVE k 0.01 100 WINDOW -5", "ERR bad window"),
        ("WBF.RESERVE k 0.01 100 WINDOW 1.5", "ERR bad window"),
        ("WBF.RESERVE k 0.01 100 WINDOW x", "ERR bad window"),
        ("WBF.RESERVE k 0.01 100 FOO", "Unknown argument received"),
        ("WBF.RESERVE k 0.01 100 FOO 5", "Unknown argument received"),
        ("WBF.RESERVE x 0.01 100 WINDOW 0", "ERR bad window"),
        ("WBF.RESERVE bf 0.01 100", WRONGTYPE),
        ("WBF.RESERVE s 0.01 100 WINDOW 10", WRONGTYPE),
        (
            "WBF.RESERVE big 0.01 1000000000000",
            "ERR filter would exceed the max-filter-bytes limit",
        ),
    ] {
        expect(&mut conn, line, err(want));
    }
    expect(&mut conn, "EXISTS k x big", int(0));
    expect(&mut conn, "WBF.RESERVE k 0.01 1000", ok());
    expect(&mut conn, "WBF.RESERVE k 0.01 100", err("ERR item exists"));
    expect(&mut conn, "TYPE k", Reply::Simple("RBslideBF".into()));
    // 0.01: k = l = 8 slices of 1664 bits, 125 adds per generation.
    let size = 96 + 8 * 16 + 16 * 1664 / 8;
    assert_eq!(size_of(1000, 0.01), size);
    expect(
        &mut conn,
        "WBF.INFO k",
        info(1000, None, "0.01", size, 8, 0),
    );
    expect(&mut conn, "WBF.RESERVE t 0.001 50 window 60000", ok());
    expect(
        &mut conn,
        "WBF.INFO t",
        info(50, Some(60000), "0.001", size_of(50, 0.001), 12, 0),
    );
    for (field, want) in [
        ("capacity", int(50)),
        ("WINDOW", int(60000)),
        ("error", Reply::bulk("0.001")),
        ("Size", int(size_of(50, 0.001))),
        ("generations", int(12)),
        ("items", int(0)),
    ] {
        expect(
            &mut conn,
            &format!("WBF.INFO t {field}"),
            Reply::Array(Some(vec![want])),
        );
    }
    expect(
        &mut conn,
        "WBF.INFO k WINDOW",
        Reply::Array(Some(vec![Reply::nil()])),
    );
    expect(
        &mut conn,
        "WBF.INFO k foo",
        err("Invalid information value"),
    );
    assert!(call(&mut conn, "MEMORY USAGE k").int() >= size);
}

#[test]
fn add_exists_card_and_missing_keys() {
    let server = Server::start();
    let mut conn = server.raw();
    for line in [
        "WBF.ADD k x",
        "WBF.MADD k x y",
        "WBF.INFO k",
        "WBF.SCANDUMP k 0",
        "WBF.LOADCHUNK k 5 abc",
    ] {
        expect(&mut conn, line, err(NOT_FOUND));
    }
    expect(&mut conn, "WBF.EXISTS k x", int(0));
    expect(&mut conn, "WBF.MEXISTS k x y", ints(&[0, 0]));
    expect(&mut conn, "WBF.CARD k", int(0));
    expect(&mut conn, "EXISTS k", int(0));
    expect(&mut conn, "WBF.RESERVE k 0.01 100", ok());
    expect(&mut conn, "WBF.ADD k x", int(1));
    expect(&mut conn, "WBF.ADD k x", int(0));
    expect(&mut conn, "WBF.MADD k a x b a", ints(&[1, 0, 1, 0]));
    expect(&mut conn, "WBF.EXISTS k x", int(1));
    expect(&mut conn, "WBF.EXISTS k nope", int(0));
    expect(&mut conn, "WBF.MEXISTS k a nope b x", ints(&[1, 0, 1, 1]));
    // Every add counts toward the window (a repeat refreshes the item).
    expect(&mut conn, "WBF.CARD k", int(6));
    expect(&mut conn, "WBF.INFO k ITEMS", ints(&[6]));
    // Reads change nothing.
    let before = snapshot(&mut conn, "k");
    mexists(&mut conn, "k", "r", 500);
    expect(&mut conn, "WBF.EXISTS k x", int(1));
    assert_eq!(snapshot(&mut conn, "k"), before);
}

#[test]
fn wrong_type_both_ways() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.ADD bf x", int(1));
    expect(&mut conn, "CBF.ADD cbf x", int(1));
    expect(&mut conn, "SET s v", ok());
    expect(&mut conn, "WBF.RESERVE w 0.01 100", ok());
    for key in ["bf", "cbf", "s"] {
        for line in [
            "WBF.RESERVE {} 0.01 100",
            "WBF.ADD {} x",
            "WBF.MADD {} x",
            "WBF.INFO {}",
            "WBF.CARD {}",
            "WBF.SCANDUMP {} 0",
            "WBF.LOADCHUNK {} 1 abc",
            "WBF.LOADCHUNK {} 5 abc",
        ] {
            expect(&mut conn, &line.replace("{}", key), err(WRONGTYPE));
        }
        expect(&mut conn, &format!("WBF.EXISTS {key} x"), int(0));
        expect(&mut conn, &format!("WBF.MEXISTS {key} x y"), ints(&[0, 0]));
    }
    for line in [
        "BF.ADD w x",
        "BF.INFO w",
        "CBF.ADD w x",
        "CF.ADD w x",
        "GET w",
        "BF.SCANDUMP w 0",
    ] {
        expect(&mut conn, line, err(WRONGTYPE));
    }
    expect(&mut conn, "BF.EXISTS w x", int(0));
}

#[test]
fn counted_window_keeps_the_last_capacity_adds() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "WBF.RESERVE k 0.01 40", ok());
    // k = 8: generations of 5 adds; the last 40 adds are always found.
    for round in 0..10 {
        let prefix = format!("r{round}:");
        // New items are 1 (a false positive at the add makes one 0).
        let new: i64 = madd(&mut conn, "k", &prefix, 40).iter().sum();
        assert!(new >= 38, "{round}: {new}");
        assert_eq!(mexists(&mut conn, "k", &prefix, 40), vec![1; 40]);
    }
    expect(&mut conn, "WBF.CARD k", int(45));
    // Nine generations back and more: out of the window (false positives aside).
    let old: i64 = mexists(&mut conn, "k", "r0:", 40).iter().sum();
    assert!(old <= 2, "{old}");
}

#[test]
fn timed_window_expires_items() {
    let server = Server::start();
    let mut conn = server.raw();
    // 400 ms, 0.01 → 8 generations of 50 ms: found for at least 400 ms, gone after 450.
    expect(&mut conn, "WBF.RESERVE k 0.01 100 WINDOW 400", ok());
    let added = Instant::now();
    expect(&mut conn, "WBF.MADD k a b c", ints(&[1, 1, 1]));
    let checked = call(&mut conn, "WBF.MEXISTS k a b c");
    if added.elapsed() < Duration::from_millis(300) {
        assert_eq!(checked, ints(&[1, 1, 1]));
        expect(&mut conn, "WBF.CARD k", int(3));
    }
    std::thread::sleep(Duration::from_millis(1200));
    // Reads ignore the expired generations (only these items were ever added: a read finds
    // no run of slices at all), without changing the filter.
    let before = snapshot(&mut conn, "k");
    expect(&mut conn, "WBF.MEXISTS k a b c", ints(&[0, 0, 0]));
    expect(&mut conn, "WBF.CARD k", int(0));
    assert_eq!(snapshot(&mut conn, "k"), before);
    // The next write drops them.
    expect(&mut conn, "WBF.ADD k a", int(1));
    expect(&mut conn, "WBF.CARD k", int(1));
    expect(&mut conn, "WBF.EXISTS k b", int(0));
    assert_ne!(snapshot(&mut conn, "k"), before);
}

#[test]
fn at_is_refused_from_clients() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "WBF.RESERVE k 0.01 100", ok());
    let refused = err("ERR WBF.AT is accepted only from the master or the AOF");
    for line in [
        "WBF.AT k 5 ADD x",
        "WBF.AT k 5 MADD x y",
        "WBF.AT n 5 RESERVE 0.01 100",
        "WBF.AT k x ADD y",
    ] {
        expect(&mut conn, line, refused.clone());
    }
    expect(&mut conn, "WBF.CARD k", int(0));
    expect(&mut conn, "EXISTS n", int(0));
}

#[test]
fn scandump_and_loadchunk() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "WBF.RESERVE k 0.1 10", ok());
    expect(&mut conn, "WBF.ADD k item1", int(1));
    // 0.1 / 10: k = l = 5, generations of 2 adds, slices of 64 bits.
    let header = call(&mut conn, "WBF.SCANDUMP k 0").array();
    assert_eq!(header[0], int(1));
    let h = header[1].bytes();
    assert_eq!(h.len(), 72 + 8 * 10);
    assert_eq!(
        hex::encode(&h[..72]),
        "57424631 0a00000000000000 9a9999999999b93f 0000000000000000 0000000000000000 \
         0000000000000000 05000000 05000000 0200000000000000 4000000000000000 00000000"
            .replace(' ', "")
    );
    assert_eq!(h[72..80], 1u64.to_le_bytes());
    let chunk = call(&mut conn, "WBF.SCANDUMP k 1").array();
    assert_eq!(chunk[0], int(81));
    let bits = chunk[1].bytes();
    assert_eq!(bits.len(), 80);
    assert_eq!(bits.iter().map(|b| b.count_ones()).sum::<u32>(), 5);
    assert_eq!(
        bits[40..].iter().filter(|&&b| b != 0).count(),
        0,
        "the 5 newest slices"
    );
    for iter in ["81", "-1", "999"] {
        expect(
            &mut conn,
            &format!("WBF.SCANDUMP k {iter}"),
            Reply::Array(Some(vec![int(0), Reply::bulk("")])),
        );
    }
    expect(
        &mut conn,
        "WBF.SCANDUMP k x",
        err("Second argument must be numeric"),
    );
    expect(
        &mut conn,
        "WBF.LOADCHUNK k x abc",
        err("ERR Second argument must be numeric"),
    );
    // The header sent to an existing key is a chunk at iterator 1: refused, not applied.
    assert_eq!(
        conn.call(&[&b"WBF.LOADCHUNK"[..], b"k", b"1", &h]),
        err(BAD_DATA)
    );
    expect(
        &mut conn,
        "WBF.LOADCHUNK k 82 a",
        err("ERR invalid offset - no link found"),
    );
    let long = vec![b'z'; 80];
    assert_eq!(
        conn.call(&[&b"WBF.LOADCHUNK"[..], b"k", b"82", &long]),
        err("ERR invalid chunk - Too big for current filter")
    );
    expect(&mut conn, "WBF.LOADCHUNK k -3 a", err(BAD_DATA));
    // Round trip into a new key and onto another server: the same bytes and answers.
    build_filters(&mut conn);
    let other = Server::start();
    let mut dst = other.raw();
    for key in ["counted", "timed", "short"] {
        let dump = scandump(&mut conn, "WBF.SCANDUMP", key);
        loadchunks(&mut conn, "WBF.LOADCHUNK", &format!("{key}-copy"), &dump);
        loadchunks(&mut dst, "WBF.LOADCHUNK", key, &dump);
        let want = snapshot(&mut conn, key);
        assert_eq!(snapshot(&mut dst, key), want, "{key}");
        assert_eq!(
            snapshot(&mut conn, &format!("{key}-copy"))[..4],
            want[..4],
            "{key}"
        );
    }
    assert_eq!(
        mexists(&mut dst, "counted", "c", 1000),
        mexists(&mut conn, "counted", "c", 1000)
    );
    assert_eq!(mexists(&mut dst, "timed", "t", 300), vec![1; 300]);
}

#[test]
fn hostile_loadchunk_and_restore_input() {
    let server = Server::start();
    let mut conn = server.raw();
    build_filters(&mut conn);
    let good = call(&mut conn, "WBF.SCANDUMP timed 0").array()[1].bytes();
    let load = |conn: &mut RawConnection, key: &str, data: &[u8]| {
        conn.call(&[&b"WBF.LOADCHUNK"[..], key.as_bytes(), b"1", data])
    };
    let patched = |at: usize, bytes: &[u8]| {
        let mut h = good.clone();
        h[at..at + bytes.len()].copy_from_slice(bytes);
        h
    };
    let cbf_header = {
        expect(&mut conn, "CBF.RESERVE cbf 0.01 100", ok());
        call(&mut conn, "CBF.SCANDUMP cbf 0").array()[1].bytes()
    };
    let mut longer = good.clone();
    longer.push(0);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short", good[..71].to_vec()),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("longer", longer),
        ("cbf header", cbf_header),
        ("magic", patched(0, b"WBF2")),
        ("capacity", patched(4, &400u64.to_le_bytes())),
        ("huge capacity", patched(4, &u64::MAX.to_le_bytes())),
        ("error", patched(12, &0.5f64.to_le_bytes())),
        ("nan error", patched(12, &f64::NAN.to_le_bytes())),
        // WBF.RESERVE's WINDOW stops at 2^63 - 1 (WBF.INFO showed -1 for 2^64 - 1).
        ("window", patched(20, &u64::MAX.to_le_bytes())),
        ("window 2^63", patched(20, &(1u64 << 63).to_le_bytes())),
        ("generation", patched(36, &u64::MAX.to_le_bytes())),
        ("k", patched(44, &0u32.to_le_bytes())),
        ("huge k", patched(44, &u32::MAX.to_le_bytes())),
        ("l", patched(48, &11u32.to_le_bytes())),
        ("generation size", patched(52, &1u64.to_le_bytes())),
        ("slice bits", patched(60, &(1u64 << 60).to_le_bytes())),
        ("ring index", patched(68, &24u32.to_le_bytes())),
        ("count", patched(72, &u64::MAX.to_le_bytes())),
    ];
    for (what, data) in &cases {
        assert_eq!(load(&mut conn, "victim", data), err(BAD_DATA), "{what}");
        expect(&mut conn, "EXISTS victim", int(0));
    }
    // A consistent header beyond the memory ceiling (4 GiB): 10^10 items at 1%.
    let shape = WindowShape::new(10_000_000_000, 0.01).unwrap();
    let mut huge = b"WBF1".to_vec();
    huge.extend_from_slice(&10_000_000_000u64.to_le_bytes());
    huge.extend_from_slice(&0.01f64.to_le_bytes());
    huge.extend_from_slice(&[0; 24]);
    huge.extend_from_slice(&shape.k.to_le_bytes());
    huge.extend_from_slice(&shape.l.to_le_bytes());
    huge.extend_from_slice(&shape.generation_size.to_le_bytes());
    huge.extend_from_slice(&shape.slice_bits.to_le_bytes());
    huge.extend_from_slice(&0u32.to_le_bytes());
    huge.extend_from_slice(&[0; 8 * 16]);
    assert_eq!(load(&mut conn, "victim", &huge), err(BAD_DATA));
    // Byte flips of a good header: refused or valid, never fatal.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let mut data = good.clone();
        for _ in 0..(1 + next() % 3) {
            let at = (next() as usize) % data.len();
            data[at] = next() as u8;
        }
        let key = format!("fuzz{round}");
        match load(&mut conn, &key, &data) {
            Reply::Simple(s) if s == "OK" => {
                call(&mut conn, &format!("WBF.ADD {key} x"));
                call(&mut conn, &format!("WBF.EXISTS {key} x"));
                call(&mut conn, &format!("WBF.CARD {key}"));
                scandump(&mut conn, "WBF.SCANDUMP", &key);
            }
            reply => assert_eq!(reply, err(BAD_DATA), "round {round}"),
        }
    }
    // RESTORE of corrupted DUMP payloads: refused, no key, server alive.
    let payload = conn.call(&["DUMP", "counted"]).bytes();
    for flip in [1usize, 5, 9, 20, 40, 60] {
        let mut body = payload[..payload.len() - 8].to_vec();
        let at = flip.min(body.len() - 11);
        body[at] ^= 0x5a;
        let forged = crate::support::with_crc(&body);
        let reply = conn.call(&[&b"RESTORE"[..], b"restored", b"0", &forged]);
        if reply != ok() {
            assert_eq!(reply, err("ERR Bad data format"), "flip at {at}");
            expect(&mut conn, "EXISTS restored", int(0));
        } else {
            call(&mut conn, "WBF.ADD restored y");
            expect(&mut conn, "DEL restored", int(1));
        }
    }
    assert_eq!(
        conn.call(&[&b"RESTORE"[..], b"restored", b"0", &payload]),
        ok()
    );
    assert_eq!(
        snapshot(&mut conn, "restored")[..4],
        snapshot(&mut conn, "counted")[..4]
    );
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
    expect(&mut conn, "DEBUG RELOAD", ok());
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}

#[test]
fn copy_events_and_info() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CONFIG SET notify-keyspace-events Kd", ok());
    let mut subscriber = server.raw();
    subscriber.call(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    expect(&mut conn, "WBF.RESERVE w 0.01 100 WINDOW 3600000", ok());
    expect(&mut conn, "WBF.ADD w x", int(1));
    expect(&mut conn, "WBF.MADD w y z", ints(&[1, 1]));
    let dump = scandump(&mut conn, "WBF.SCANDUMP", "w");
    loadchunks(&mut conn, "WBF.LOADCHUNK", "w2", &dump);
    call(&mut conn, "WBF.EXISTS w x");
    expect(&mut conn, "WBF.ADD w last", int(1));
    let mut events = vec![("w", "wbf.reserve"), ("w", "wbf.add"), ("w", "wbf.madd")];
    events.extend(std::iter::repeat_n(("w2", "wbf.loadchunk"), dump.len() - 1));
    events.push(("w", "wbf.add"));
    for (key, event) in events {
        let message = subscriber.read_reply().array();
        assert_eq!(message[2].text(), format!("__keyspace@0__:{key}"));
        assert_eq!(message[3].text(), event);
    }
    // COPY is deep: the copy has the same bytes and then lives its own life.
    expect(&mut conn, "COPY w c", int(1));
    assert_eq!(snapshot(&mut conn, "c")[..4], snapshot(&mut conn, "w")[..4]);
    expect(&mut conn, "WBF.ADD c only-in-copy", int(1));
    expect(&mut conn, "WBF.EXISTS w only-in-copy", int(0));
    expect(&mut conn, "WBF.CARD c", int(5));
    expect(&mut conn, "WBF.CARD w", int(4));
    // INFO totals: filters, bytes, items in the window, slices.
    let size = call(&mut conn, "WBF.INFO w SIZE").ints()[0];
    let field = |conn: &mut RawConnection, name: &str| info_field(conn, "bf", name);
    assert_eq!(field(&mut conn, "bf_wbf_filters"), "3");
    assert_eq!(field(&mut conn, "bf_wbf_bytes"), (3 * size).to_string());
    assert_eq!(field(&mut conn, "bf_wbf_items"), (4 + 3 + 5).to_string());
    assert_eq!(field(&mut conn, "bf_wbf_sub_filters"), (3 * 16).to_string());
    call(&mut conn, "FLUSHALL SYNC");
    assert_eq!(field(&mut conn, "bf_wbf_filters"), "0");
    assert_eq!(field(&mut conn, "bf_wbf_bytes"), "0");
    // ACL category where the server declares module categories.
    let categories: Vec<String> = call(&mut conn, "ACL CAT")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    if categories.contains(&"wbf".to_string()) {
        let wbf = call(&mut conn, "ACL CAT wbf").array();
        assert_eq!(wbf.len(), 11);
    }
}

#[test]
fn resp3_replies_like_bf() {
    let server = Server::start();
    let mut two = server.raw();
    let mut three = server.raw3();
    let wire = |lines: &[&str]| -> String { lines.iter().map(|l| format!("{l}\r\n")).collect() };
    let mut check = |line: &str, resp2: &[&str], resp3: &[&str]| {
        let args: Vec<&str> = line.split(' ').collect();
        let args3: Vec<String> = args.iter().map(|a| a.replace("@", "3:")).collect();
        let args2: Vec<String> = args.iter().map(|a| a.replace("@", "2:")).collect();
        let got2 = String::from_utf8_lossy(&two.call_raw(&args2)).to_string();
        let got3 = String::from_utf8_lossy(&three.call_raw(&args3)).to_string();
        assert_eq!(got2, wire(resp2), "RESP2 {line}");
        assert_eq!(got3, wire(resp3), "RESP3 {line}");
    };
    check("WBF.RESERVE @w 0.01 100 WINDOW 3600000", &["+OK"], &["+OK"]);
    check("WBF.ADD @w x", &[":1"], &["#t"]);
    check("WBF.ADD @w x", &[":0"], &["#f"]);
    check("WBF.MADD @w x y", &["*2", ":0", ":1"], &["*2", "#f", "#t"]);
    check("WBF.EXISTS @w x", &[":1"], &["#t"]);
    check("WBF.EXISTS @w nope", &[":0"], &["#f"]);
    check("WBF.EXISTS @missing x", &[":0"], &["#f"]);
    check(
        "WBF.MEXISTS @w x nope",
        &["*2", ":1", ":0"],
        &["*2", "#t", "#f"],
    );
    check("WBF.CARD @w", &[":4"], &[":4"]);
    let size = format!(":{}", size_of(100, 0.01));
    let labelled = [
        "+Capacity",
        ":100",
        "+Window",
        ":3600000",
        "+Error rate",
        "PLACEHOLDER",
        "+Size",
        &size,
        "+Generations",
        ":8",
        "+Number of items in the window",
        ":4",
    ];
    let with = |error: &[&str]| -> Vec<String> {
        labelled
            .iter()
            .flat_map(|&l| {
                if l == "PLACEHOLDER" {
                    error.iter().map(|s| s.to_string()).collect::<Vec<_>>()
                } else {
                    vec![l.to_string()]
                }
            })
            .collect()
    };
    let resp2: Vec<String> = [vec!["*12".to_string()], with(&["$4", "0.01"])].concat();
    let resp3: Vec<String> = [vec!["%6".to_string()], with(&[",0.01"])].concat();
    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    check("WBF.INFO @w", &refs(&resp2), &refs(&resp3));
    check(
        "WBF.INFO @w ERROR",
        &["*1", "$4", "0.01"],
        &["%1", "+Error rate", ",0.01"],
    );
    check("WBF.RESERVE @c 0.01 100", &["+OK"], &["+OK"]);
    check(
        "WBF.INFO @c WINDOW",
        &["*1", "$-1"],
        &["%1", "+Window", "_"],
    );
}
