//! BF.* against a real redis-server: every reply and every error string of COMPAT §1/§12
//! in validation order, the acceptance list of §10.1 (sizing, scaling, hashing through
//! BF.DEBUG and SCANDUMP bytes), and redbloom's deliberate differences from 2.4.20.

use crate::support::ceiling::TOO_LARGE;
use crate::support::replies::{err, int};

use crate::support::bf::{assert_all_exist, debug_lines, items, madd, mexists};
use crate::support::{call, expect, RawConnection, Reply, Server};

const NOT_FOUND: &str = "ERR not found";
const ITEM_EXISTS: &str = "ERR item exists";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const BAD_ERROR_RATE: &str = "ERR bad error rate";
const ERROR_RATE_RANGE: &str = "ERR (0 < error rate range < 1) ";
const BAD_CAPACITY: &str = "ERR bad capacity";
const CAPACITY_RANGE: &str = "ERR (capacity should be larger than 0)";
const NO_EXPANSION: &str = "ERR no expansion";
const CANNOT_EXPAND: &str = "Nonscaling filters cannot expand";
const BAD_EXPANSION: &str = "ERR bad expansion";
const EXPANSION_RANGE: &str = "ERR expansion must be in the range [0, 32768]";
const COULD_NOT_CREATE: &str = "ERR could not create filter";
const NONSCALING_FULL: &str = "ERR non scaling filter is full";
const PROBLEM_INSERTING: &str = "ERR problem inserting into filter";
const INSERT_BAD_ERROR_RATE: &str = "Bad error rate";
const INSERT_BAD_EXPANSION: &str = "Bad expansion";
const INSERT_BAD_CAPACITY: &str = "Bad capacity";
const UNKNOWN_ARGUMENT: &str = "Unknown argument received";
const BAD_ARGUMENT: &str = "Bad argument received";
const INVALID_INFO: &str = "Invalid information value";

fn arity(command: &str) -> Reply {
    Reply::err(&format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

/// BF.INFO as the RESP2 flat array of 10.
fn info(capacity: i64, size: i64, filters: i64, items: i64, expansion: Option<i64>) -> Reply {
    Reply::Array(Some(vec![
        Reply::Simple("Capacity".into()),
        int(capacity),
        Reply::Simple("Size".into()),
        int(size),
        Reply::Simple("Number of filters".into()),
        int(filters),
        Reply::Simple("Number of items inserted".into()),
        int(items),
        Reply::Simple("Expansion rate".into()),
        expansion.map_or(Reply::nil(), int),
    ]))
}

fn info_field(conn: &mut RawConnection, key: &str, field: &str) -> Reply {
    let reply = conn.call(&["BF.INFO", key, field]);
    let mut values = reply.array();
    assert_eq!(values.len(), 1, "BF.INFO {key} {field}: {reply:?}");
    values.remove(0)
}

/// The SCANDUMP header of a key (iterator 0).
fn header(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    let reply = conn.call(&["BF.SCANDUMP", key, "0"]).array();
    assert_eq!(reply[0], int(1));
    reply[1].bytes()
}

fn options_of(conn: &mut RawConnection, key: &str) -> u32 {
    u32::from_le_bytes(header(conn, key)[12..16].try_into().unwrap())
}

#[test]
fn wrong_arity_for_every_command() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE k 0.01 100", Reply::ok());
    let cases: &[(&str, &[&str])] = &[
        ("bf.reserve", &["BF.RESERVE"]),
        ("bf.reserve", &["BF.RESERVE", "k"]),
        ("bf.reserve", &["BF.RESERVE", "k", "0.01"]),
        (
            "bf.reserve",
            &[
                "BF.RESERVE",
                "n",
                "0.01",
                "100",
                "EXPANSION",
                "2",
                "NONSCALING",
                "x",
            ],
        ),
        ("bf.add", &["BF.ADD"]),
        ("bf.add", &["BF.ADD", "k"]),
        ("bf.add", &["BF.ADD", "k", "a", "b"]),
        ("bf.madd", &["BF.MADD"]),
        ("bf.madd", &["BF.MADD", "k"]),
        ("bf.insert", &["BF.INSERT"]),
        ("bf.insert", &["BF.INSERT", "k"]),
        ("bf.insert", &["BF.INSERT", "k", "ITEMS"]),
        ("bf.insert", &["BF.INSERT", "k", "NOCREATE", "ITEMS"]),
        ("bf.insert", &["BF.INSERT", "k", "CAPACITY", "10", "ITEMS"]),
        ("bf.insert", &["BF.INSERT", "k", "NOCREATE", "NONSCALING"]),
        ("bf.insert", &["BF.INSERT", "k", "NOCREATE", "CAPACITY"]),
        ("bf.insert", &["BF.INSERT", "k", "NOCREATE", "ERROR"]),
        ("bf.insert", &["BF.INSERT", "k", "NOCREATE", "EXPANSION"]),
        ("bf.exists", &["BF.EXISTS"]),
        ("bf.exists", &["BF.EXISTS", "k"]),
        ("bf.exists", &["BF.EXISTS", "k", "a", "b"]),
        ("bf.mexists", &["BF.MEXISTS"]),
        ("bf.mexists", &["BF.MEXISTS", "k"]),
        ("bf.card", &["BF.CARD"]),
        ("bf.card", &["BF.CARD", "k", "x"]),
        ("bf.info", &["BF.INFO"]),
        ("bf.info", &["BF.INFO", "k", "capacity", "size"]),
        ("bf.debug", &["BF.DEBUG"]),
        ("bf.debug", &["BF.DEBUG", "k", "x"]),
        ("bf.scandump", &["BF.SCANDUMP"]),
        ("bf.scandump", &["BF.SCANDUMP", "k"]),
        ("bf.scandump", &["BF.SCANDUMP", "k", "0", "x"]),
        ("bf.loadchunk", &["BF.LOADCHUNK"]),
        ("bf.loadchunk", &["BF.LOADCHUNK", "k"]),
        ("bf.loadchunk", &["BF.LOADCHUNK", "k", "1"]),
        ("bf.loadchunk", &["BF.LOADCHUNK", "k", "1", "x", "y"]),
    ];
    for (name, argv) in cases {
        assert_eq!(conn.call(argv), arity(name), "{argv:?}");
    }
    // Arity errors come before anything else (here: a string key, a missing key).
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.RESERVE s 0.01", arity("bf.reserve"));
    expect(
        &mut conn,
        "BF.INSERT missing NOCREATE ITEMS",
        arity("bf.insert"),
    );
    // Nothing was created by any of them.
    expect(&mut conn, "EXISTS n", int(0));
    expect(&mut conn, "BF.CARD k", int(0));
}

#[test]
fn reserve_validation_order_and_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    for (line, want) in [
        // error rate: parse, then range (before the capacity is looked at)
        ("BF.RESERVE k abc xyz", BAD_ERROR_RATE),
        ("BF.RESERVE k nan 100", BAD_ERROR_RATE),
        ("BF.RESERVE k 0.01x 100", BAD_ERROR_RATE),
        ("BF.RESERVE k 0 xyz", ERROR_RATE_RANGE),
        ("BF.RESERVE k 0 100", ERROR_RATE_RANGE),
        ("BF.RESERVE k 1 100", ERROR_RATE_RANGE),
        ("BF.RESERVE k 7.7 100", ERROR_RATE_RANGE),
        ("BF.RESERVE k -0.5 100", ERROR_RATE_RANGE),
        ("BF.RESERVE k inf 100", ERROR_RATE_RANGE),
        ("BF.RESERVE k -inf 100", ERROR_RATE_RANGE),
        // capacity: parse, then range (before any option)
        ("BF.RESERVE k 0.01 abc", BAD_CAPACITY),
        ("BF.RESERVE k 0.01 1.5", BAD_CAPACITY),
        ("BF.RESERVE k 0.01 +5", BAD_CAPACITY),
        ("BF.RESERVE k 0.01 010", BAD_CAPACITY),
        ("BF.RESERVE k 0.01 18446744073709551616", BAD_CAPACITY),
        ("BF.RESERVE k 0.01 0", CAPACITY_RANGE),
        ("BF.RESERVE k 0.01 -1", CAPACITY_RANGE),
        ("BF.RESERVE k 0.01 0 EXPANSION", CAPACITY_RANGE),
        ("BF.RESERVE k 0.01 -9223372036854775808", CAPACITY_RANGE),
        // options
        ("BF.RESERVE k 0.01 100 EXPANSION", NO_EXPANSION),
        ("BF.RESERVE k 0.01 100 NONSCALING EXPANSION", NO_EXPANSION),
        (
            "BF.RESERVE k 0.01 100 EXPANSION 2 NONSCALING",
            CANNOT_EXPAND,
        ),
        (
            "BF.RESERVE k 0.01 100 NONSCALING EXPANSION 2",
            CANNOT_EXPAND,
        ),
        (
            "BF.RESERVE k 0.01 100 NONSCALING EXPANSION abc",
            CANNOT_EXPAND,
        ),
        ("BF.RESERVE k 0.01 100 EXPANSION abc", BAD_EXPANSION),
        ("BF.RESERVE k 0.01 100 EXPANSION 1.5", BAD_EXPANSION),
        ("BF.RESERVE k 0.01 100 EXPANSION -1", EXPANSION_RANGE),
        ("BF.RESERVE k 0.01 100 EXPANSION 32769", EXPANSION_RANGE),
        (
            "BF.RESERVE k 0.01 100 EXPANSION 4294967297",
            EXPANSION_RANGE,
        ),
        (
            "BF.RESERVE k 0.01 100 EXPANSION -9223372036854775808",
            EXPANSION_RANGE,
        ),
    ] {
        expect(&mut conn, line, err(want));
    }
    expect(&mut conn, "EXISTS k", int(0));

    // Capacity 2^64 does not parse (COMPAT §10.1 "oom").
    expect(
        &mut conn,
        "BF.RESERVE k 0.01 18446744073709551615",
        err(BAD_CAPACITY),
    );

    // Arguments are validated before the key: a string key only fails once they are good.
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.RESERVE s abc 100", err(BAD_ERROR_RATE));
    expect(
        &mut conn,
        "BF.RESERVE s 0.01 100 EXPANSION",
        err(NO_EXPANSION),
    );
    expect(&mut conn, "BF.RESERVE s 0.01 100", err(WRONGTYPE));
    expect(&mut conn, "RPUSH list a", int(1));
    expect(&mut conn, "BF.RESERVE list 0.01 100", err(WRONGTYPE));
    expect(&mut conn, "GET s", Reply::bulk("x"));

    // Success is a simple string; a second RESERVE finds the filter.
    assert_eq!(call(&mut conn, "BF.RESERVE k 0.01 100"), Reply::ok());
    assert_eq!(conn.last_raw, b"+OK\r\n");
    expect(&mut conn, "BF.RESERVE k 0.01 100", err(ITEM_EXISTS));
    expect(
        &mut conn,
        "BF.RESERVE k 0.5 7 EXPANSION 0",
        err(ITEM_EXISTS),
    );
    expect(
        &mut conn,
        "BF.RESERVE k 0.01 100 EXPANSION abc",
        err(BAD_EXPANSION),
    );
    expect(&mut conn, "BF.INFO k", info(100, 240, 1, 0, Some(2)));

    // Numbers as the server parses them: exponents, hex floats (but on Valkey 9).
    expect(&mut conn, "BF.RESERVE e1 1e-2 1e2", err(BAD_CAPACITY));
    expect(&mut conn, "BF.RESERVE e1 1e-2 100", Reply::ok());
    if !crate::support::parses_hex_floats(&mut conn) {
        expect(&mut conn, "BF.RESERVE e2 0x1p-7 100", err(BAD_ERROR_RATE));
        expect(&mut conn, "BF.RESERVE e2 0.0078125 100", Reply::ok());
    } else {
        expect(&mut conn, "BF.RESERVE e2 0x1p-7 100", Reply::ok());
    }
    expect(
        &mut conn,
        "BF.DEBUG e1",
        Reply::bulk_array(&[
            "size:0",
            "bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:0 ratio:0.005",
        ]),
    );
    expect(&mut conn, "BF.RESERVE e3 0.0078125 100", Reply::ok());
    let hex_float = debug_lines(&mut conn, "e2");
    assert_eq!(hex_float, debug_lines(&mut conn, "e3"));
    assert!(hex_float[1].ends_with(" ratio:0.00390625"), "{hex_float:?}");

    // Unknown extra tokens are ignored.
    expect(&mut conn, "BF.RESERVE x 0.01 100 foo bar", Reply::ok());
    expect(&mut conn, "BF.INFO x", info(100, 240, 1, 0, Some(2)));
}

#[test]
fn reserve_expansion_values() {
    let server = Server::start();
    let mut conn = server.raw();
    // EXPANSION 0 means non-scaling (redbloom, as HEAD): options 13, no expansion rate.
    expect(&mut conn, "BF.RESERVE z 0.01 3 EXPANSION 0", Reply::ok());
    expect(&mut conn, "BF.INFO z", info(3, 104, 1, 0, None));
    assert_eq!(options_of(&mut conn, "z"), 13);
    expect(&mut conn, "BF.MADD z a b c d", {
        let mut v = Reply::int_array(&[1, 1, 1]).array();
        v.push(err(NONSCALING_FULL));
        Reply::Array(Some(v))
    });
    // It is the same filter NONSCALING makes, byte for byte.
    expect(&mut conn, "BF.RESERVE n 0.01 3 NONSCALING", Reply::ok());
    expect(&mut conn, "BF.MADD n a b c", Reply::int_array(&[1, 1, 1]));
    assert_eq!(header(&mut conn, "z")[4..], header(&mut conn, "n")[4..]);
    assert_eq!(
        conn.call(&["BF.SCANDUMP", "z", "1"]),
        conn.call(&["BF.SCANDUMP", "n", "1"])
    );
    // The documented order checks non-scaling before the value: NONSCALING with
    // EXPANSION 0 is refused.
    expect(
        &mut conn,
        "BF.RESERVE y 0.01 3 NONSCALING EXPANSION 0",
        err(CANNOT_EXPAND),
    );

    // The bounds of the range.
    expect(
        &mut conn,
        "BF.RESERVE max 0.01 3 EXPANSION 32768",
        Reply::ok(),
    );
    expect(
        &mut conn,
        "BF.INFO max EXPANSION",
        Reply::int_array(&[32768]),
    );
    assert_eq!(options_of(&mut conn, "max"), 5);
    expect(
        &mut conn,
        "BF.MADD max a b c d",
        Reply::int_array(&[1, 1, 1, 1]),
    );
    expect(
        &mut conn,
        "BF.DEBUG max",
        Reply::bulk_array(&[
            "size:4",
            "bytes:8 bits:64 hashes:8 hashwidth:64 capacity:3 size:3 ratio:0.005",
            "bytes:153240 bits:1225920 hashes:9 hashwidth:64 capacity:98304 size:1 ratio:0.0025",
        ]),
    );
    expect(&mut conn, "BF.RESERVE one 0.01 3 EXPANSION 1", Reply::ok());
    expect(&mut conn, "BF.INFO one EXPANSION", Reply::int_array(&[1]));
    // The raw reply of the expansion of a non-scaling filter is a nil inside an array.
    call(&mut conn, "BF.INFO z EXPANSION");
    assert_eq!(conn.last_raw, b"*1\r\n$-1\r\n");
}

#[test]
fn keywords_only_in_option_positions_and_case_insensitive() {
    let server = Server::start();
    let mut conn = server.raw();
    // Keys named like the keywords are keys (redbloom: options are searched from argv[4]).
    expect(&mut conn, "BF.RESERVE nonscaling 0.01 100", Reply::ok());
    expect(
        &mut conn,
        "BF.INFO nonscaling",
        info(100, 240, 1, 0, Some(2)),
    );
    assert_eq!(options_of(&mut conn, "nonscaling"), 5);
    expect(&mut conn, "BF.RESERVE expansion 0.01 100", Reply::ok());
    expect(
        &mut conn,
        "BF.INFO expansion",
        info(100, 240, 1, 0, Some(2)),
    );
    expect(
        &mut conn,
        "BF.RESERVE EXPANSION 0.01 100 EXPANSION 4",
        Reply::ok(),
    );
    expect(
        &mut conn,
        "BF.INFO EXPANSION EXPANSION",
        Reply::int_array(&[4]),
    );
    expect(
        &mut conn,
        "BF.RESERVE NONSCALING 0.01 100 EXPANSION 3",
        Reply::ok(),
    );
    expect(
        &mut conn,
        "BF.INFO NONSCALING EXPANSION",
        Reply::int_array(&[3]),
    );
    expect(&mut conn, "BF.ADD nonscaling item", int(1));
    expect(&mut conn, "BF.EXISTS nonscaling item", int(1));

    // Keywords in any case.
    expect(&mut conn, "BF.RESERVE a 0.01 100 nonScaling", Reply::ok());
    expect(&mut conn, "BF.INFO a", info(100, 216, 1, 0, None));
    expect(&mut conn, "BF.RESERVE b 0.01 100 expansion 4", Reply::ok());
    expect(&mut conn, "BF.INFO b expansion", Reply::int_array(&[4]));
    expect(&mut conn, "BF.RESERVE c 0.01 100 ExPaNsIoN 5", Reply::ok());
    expect(&mut conn, "BF.INFO c EXPANSION", Reply::int_array(&[5]));
    expect(
        &mut conn,
        "BF.RESERVE d 0.01 100 expansion",
        err(NO_EXPANSION),
    );
    expect(
        &mut conn,
        "BF.RESERVE d 0.01 100 nonscaling Expansion 2",
        err(CANNOT_EXPAND),
    );
    // The first hit wins; the value is the argument after it.
    expect(
        &mut conn,
        "BF.RESERVE e 0.01 100 EXPANSION 6 EXPANSION",
        Reply::ok(),
    );
    expect(&mut conn, "BF.INFO e EXPANSION", Reply::int_array(&[6]));
    expect(
        &mut conn,
        "BF.RESERVE f 0.01 100 x EXPANSION 8",
        Reply::ok(),
    );
    expect(&mut conn, "BF.INFO f EXPANSION", Reply::int_array(&[8]));
    // Exact-length match only.
    expect(
        &mut conn,
        "BF.RESERVE g 0.01 100 NONSCALINGX EXPANSIONS 3",
        Reply::ok(),
    );
    expect(&mut conn, "BF.INFO g", info(100, 240, 1, 0, Some(2)));
}

#[test]
fn add_auto_creates_with_defaults() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.ADD k foo"), int(1));
    assert_eq!(conn.last_raw, b":1\r\n");
    expect(&mut conn, "BF.ADD k foo", int(0));
    expect(&mut conn, "BF.INFO k", info(100, 240, 1, 1, Some(2)));
    expect(
        &mut conn,
        "BF.DEBUG k",
        Reply::bulk_array(&[
            "size:1",
            "bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:1 ratio:0.005",
        ]),
    );
    assert_eq!(options_of(&mut conn, "k"), 5);
    // Binary-safe items, including the empty one.
    let odd: [&[u8]; 4] = [b"", b"\0", b"a b\r\nc", &[0xff, 0x00, 0xfe]];
    for item in odd {
        assert_eq!(conn.call(&[&b"BF.ADD"[..], b"k", item]), int(1), "{item:?}");
    }
    for item in odd {
        assert_eq!(conn.call(&[&b"BF.EXISTS"[..], b"k", item]), int(1));
        assert_eq!(conn.call(&[&b"BF.ADD"[..], b"k", item]), int(0));
    }
    expect(&mut conn, "BF.CARD k", int(5));
    expect(&mut conn, "BF.EXISTS k bar", int(0));

    // Other types.
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.ADD s foo", err(WRONGTYPE));
    expect(&mut conn, "BF.MADD s foo", err(WRONGTYPE));
    expect(&mut conn, "BF.INSERT s ITEMS foo", err(WRONGTYPE));
    expect(&mut conn, "GET s", Reply::bulk("x"));

    // Documented bit positions (COMPAT §5.5) show in the dump of a default filter.
    expect(&mut conn, "BF.ADD d hello", int(1));
    let chunk = conn.call(&["BF.SCANDUMP", "d", "1"]).array();
    assert_eq!(chunk[0], int(145));
    let data = chunk[1].bytes();
    assert_eq!(data.len(), 144);
    let mut want = vec![0u8; 144];
    for at in [9, 64, 98, 119] {
        want[at] = 0x20;
    }
    for at in [12, 62, 67, 101] {
        want[at] = 0x02;
    }
    assert_eq!(data, want);
}

#[test]
fn madd_replies() {
    let server = Server::start();
    let mut conn = server.raw();
    // custom filter / set / multi of test_overall
    expect(&mut conn, "BF.RESERVE test 0.05 1000", Reply::ok());
    expect(
        &mut conn,
        "BF.MADD test foo bar baz",
        Reply::int_array(&[1, 1, 1]),
    );
    expect(&mut conn, "BF.EXISTS test foo", int(1));
    expect(&mut conn, "BF.EXISTS test nonexist", int(0));
    expect(
        &mut conn,
        "BF.MADD test foo new1 bar",
        Reply::int_array(&[0, 1, 0]),
    );
    expect(
        &mut conn,
        "BF.MEXISTS test nonexist",
        Reply::int_array(&[0]),
    );
    expect(
        &mut conn,
        "BF.MEXISTS test nonexist foo",
        Reply::int_array(&[0, 1]),
    );
    expect(&mut conn, "BF.ADD set foo", int(1));
    expect(&mut conn, "BF.EXISTS set foo", int(1));
    expect(&mut conn, "BF.EXISTS set bar", int(0));
    expect(&mut conn, "BF.MADD set foo bar", Reply::int_array(&[0, 1]));
    expect(
        &mut conn,
        "BF.MEXISTS set foo bar",
        Reply::int_array(&[1, 1]),
    );
    // Duplicates within one call are sequential.
    expect(
        &mut conn,
        "BF.MADD dup x x y x",
        Reply::int_array(&[1, 0, 1, 0]),
    );
    expect(&mut conn, "BF.CARD dup", int(2));
    // A non-scaling filter stops the reply right after the first "full" element.
    expect(&mut conn, "BF.RESERVE ns 0.01 2 NONSCALING", Reply::ok());
    let full = Reply::Array(Some(vec![int(1), int(1), err(NONSCALING_FULL)]));
    expect(&mut conn, "BF.MADD ns a b c d e", full);
    let raw_full = b"*3\r\n:1\r\n:1\r\n-ERR non scaling filter is full\r\n";
    assert_eq!(conn.last_raw, raw_full);
    // Present items are still answered 0 before the first new one.
    let tail = Reply::Array(Some(vec![int(0), int(0), err(NONSCALING_FULL)]));
    expect(&mut conn, "BF.MADD ns a b c a", tail);
    expect(
        &mut conn,
        "BF.MEXISTS ns a b c d",
        Reply::int_array(&[1, 1, 0, 0]),
    );
    expect(&mut conn, "BF.ADD ns c", err(NONSCALING_FULL));
    expect(&mut conn, "BF.ADD ns a", int(0));
    expect(&mut conn, "BF.INFO ns", info(2, 104, 1, 2, None));
}

#[test]
fn insert_parsing_and_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    for (line, want) in [
        ("BF.INSERT k NOCREATE ITEMS foo bar", err(NOT_FOUND)),
        ("BF.INSERT k nocreate items foo", err(NOT_FOUND)),
        ("BF.INSERT k FOO ITEMS a", err(UNKNOWN_ARGUMENT)),
        ("BF.INSERT k a b", err(UNKNOWN_ARGUMENT)),
        ("BF.INSERT k 5 ITEMS a", err(UNKNOWN_ARGUMENT)),
        ("BF.INSERT k CAPACITY 0.3 ITEMS a", err(INSERT_BAD_CAPACITY)),
        (
            "BF.INSERT k CAPACITY abc FOO ITEMS a",
            err(INSERT_BAD_CAPACITY),
        ),
        (
            "BF.INSERT k FOO CAPACITY abc ITEMS a",
            err(UNKNOWN_ARGUMENT),
        ),
        ("BF.INSERT k ERROR abc ITEMS a", err(INSERT_BAD_ERROR_RATE)),
        ("BF.INSERT k ERROR nan ITEMS a", err(INSERT_BAD_ERROR_RATE)),
        (
            "BF.INSERT k EXPANSION abc ITEMS a",
            err(INSERT_BAD_EXPANSION),
        ),
        (
            "BF.INSERT k EXPANSION 1.5 ITEMS a",
            err(INSERT_BAD_EXPANSION),
        ),
        // value errors fire while parsing, before the ITEMS checks
        ("BF.INSERT k ERROR abc", err(INSERT_BAD_ERROR_RATE)),
        ("BF.INSERT k CAPACITY x ITEMS", err(INSERT_BAD_CAPACITY)),
        // the range check comes after the ITEMS checks
        ("BF.INSERT k CAPACITY 0 ITEMS", arity("bf.insert")),
        ("BF.INSERT k CAPACITY 0 NOCREATE", arity("bf.insert")),
        ("BF.INSERT k CAPACITY 0 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k CAPACITY -1 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k ERROR 0 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k ERROR 1 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k ERROR 2 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k ERROR -0.1 ITEMS a", err(BAD_ARGUMENT)),
        ("BF.INSERT k ERROR inf ITEMS a", err(BAD_ARGUMENT)),
        // then the expansion range (redbloom: 0 allowed, [0, 32768])
        ("BF.INSERT k EXPANSION -1 ITEMS a", err(EXPANSION_RANGE)),
        ("BF.INSERT k EXPANSION 32769 ITEMS a", err(EXPANSION_RANGE)),
        ("BF.INSERT k EXPANSION 100000 ITEMS a", err(EXPANSION_RANGE)),
        (
            "BF.INSERT k CAPACITY 0 EXPANSION -1 ITEMS a",
            err(BAD_ARGUMENT),
        ),
        (
            "BF.INSERT k EXPANSION -1 ERROR 5 ITEMS a",
            err(BAD_ARGUMENT),
        ),
        // an empty option token is unknown
        ("BF.INSERT k  ITEMS a", err(UNKNOWN_ARGUMENT)),
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        assert_eq!(conn.call(&args), want, "{line}");
    }
    expect(&mut conn, "EXISTS k", int(0));

    // Options are validated before the key is looked at.
    expect(&mut conn, "SET s x", Reply::ok());
    expect(
        &mut conn,
        "BF.INSERT s CAPACITY 0 ITEMS a",
        err(BAD_ARGUMENT),
    );
    expect(
        &mut conn,
        "BF.INSERT s EXPANSION 40000 ITEMS a",
        err(EXPANSION_RANGE),
    );
    expect(&mut conn, "BF.INSERT s NOCREATE ITEMS a", err(WRONGTYPE));

    // test_overall's insert: the created filter, then parameters ignored on an existing key.
    expect(
        &mut conn,
        "BF.INSERT missingFilter ERROR 0.001 CAPACITY 50000 EXPANSION 2 ITEMS foo",
        Reply::int_array(&[1]),
    );
    let line = "bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000";
    expect(
        &mut conn,
        "BF.DEBUG missingFilter",
        Reply::bulk_array(&["size:1", &format!("{line} size:1 ratio:0.0005")]),
    );
    expect(
        &mut conn,
        "BF.INSERT missingFilter ERROR 0.1 ITEMS foo bar baz",
        Reply::int_array(&[0, 1, 1]),
    );
    expect(
        &mut conn,
        "BF.DEBUG missingFilter",
        Reply::bulk_array(&["size:3", &format!("{line} size:3 ratio:0.0005")]),
    );
    // Bad values are refused even when the key exists (and then ignored when good).
    expect(
        &mut conn,
        "BF.INSERT missingFilter CAPACITY 0 ITEMS x",
        err(BAD_ARGUMENT),
    );
    expect(
        &mut conn,
        "BF.INSERT missingFilter NOCREATE NONSCALING EXPANSION 0 CAPACITY 1 ITEMS x",
        Reply::int_array(&[1]),
    );
    expect(
        &mut conn,
        "BF.INFO missingFilter EXPANSION",
        Reply::int_array(&[2]),
    );

    // nonscaling_err of test_overall.
    expect(
        &mut conn,
        "BF.INSERT nse CAPACITY 3 NONSCALING ITEMS a b c",
        Reply::int_array(&[1, 1, 1]),
    );
    expect(
        &mut conn,
        "BF.INSERT nse ITEMS a b c d d",
        Reply::Array(Some(vec![int(0), int(0), int(0), err(NONSCALING_FULL)])),
    );
    expect(&mut conn, "BF.INFO nse", info(3, 104, 1, 3, None));

    // NONSCALING with EXPANSION is accepted; EXPANSION 0 alone is non-scaling too.
    expect(
        &mut conn,
        "BF.INSERT nse2 NONSCALING EXPANSION 4 ITEMS a",
        Reply::int_array(&[1]),
    );
    expect(&mut conn, "BF.INFO nse2", info(100, 216, 1, 1, None));
    expect(
        &mut conn,
        "BF.INSERT z0 EXPANSION 0 CAPACITY 2 ITEMS a b c",
        Reply::Array(Some(vec![int(1), int(1), err(NONSCALING_FULL)])),
    );
    expect(
        &mut conn,
        "BF.INFO z0 EXPANSION",
        Reply::Array(Some(vec![Reply::nil()])),
    );
    assert_eq!(options_of(&mut conn, "z0"), 13);
    expect(
        &mut conn,
        "BF.INSERT e32768 EXPANSION 32768 ITEMS a",
        Reply::int_array(&[1]),
    );
    expect(
        &mut conn,
        "BF.INFO e32768 EXPANSION",
        Reply::int_array(&[32768]),
    );
}

#[test]
fn insert_first_letter_dispatch() {
    let server = Server::start();
    let mut conn = server.raw();
    // Expansion: E, EX, EXPANSION, Exyz (the second letter is not r).
    for (key, token) in [
        ("e1", "E"),
        ("e2", "EX"),
        ("e3", "expansion"),
        ("e4", "Exyz"),
    ] {
        expect(
            &mut conn,
            &format!("BF.INSERT {key} {token} 4 ITEMS a"),
            Reply::int_array(&[1]),
        );
        expect(
            &mut conn,
            &format!("BF.INFO {key}"),
            info(100, 240, 1, 1, Some(4)),
        );
    }
    // Error rate: ER, ERROR, eRRoneous: compared with an explicitly reserved filter.
    expect(&mut conn, "BF.RESERVE ref 0.25 100", Reply::ok());
    expect(&mut conn, "BF.ADD ref a", int(1));
    let reference = debug_lines(&mut conn, "ref");
    for (key, token) in [("r1", "ER"), ("r2", "error"), ("r3", "eRRoneous")] {
        expect(
            &mut conn,
            &format!("BF.INSERT {key} {token} 0.25 ITEMS a"),
            Reply::int_array(&[1]),
        );
        assert_eq!(debug_lines(&mut conn, key), reference, "{token}");
    }
    assert!(reference[1].ends_with("ratio:0.125"), "{reference:?}");
    // Capacity: C, cap, CAPACITY.
    for (key, token) in [("c1", "C"), ("c2", "cap"), ("c3", "CAPACITY")] {
        expect(
            &mut conn,
            &format!("BF.INSERT {key} {token} 50 ITEMS a"),
            Reply::int_array(&[1]),
        );
        expect(
            &mut conn,
            &format!("BF.INFO {key} capacity"),
            Reply::int_array(&[50]),
        );
    }
    // N…: the third letter decides: c → NOCREATE, anything else (or none) → NONSCALING.
    for token in ["NOC", "nocreate", "NxC", "NOCx"] {
        expect(
            &mut conn,
            &format!("BF.INSERT absent {token} ITEMS a"),
            err(NOT_FOUND),
        );
    }
    for (key, token) in [
        ("n1", "N"),
        ("n2", "NO"),
        ("n3", "nonscaling"),
        ("n4", "NOx"),
    ] {
        expect(
            &mut conn,
            &format!("BF.INSERT {key} {token} ITEMS a"),
            Reply::int_array(&[1]),
        );
        expect(
            &mut conn,
            &format!("BF.INFO {key}"),
            info(100, 216, 1, 1, None),
        );
    }
    expect(&mut conn, "EXISTS absent", int(0));
    // I…: ITEMS, and everything after it is an item (even option names).
    expect(&mut conn, "BF.INSERT i1 I a b", Reply::int_array(&[1, 1]));
    expect(
        &mut conn,
        "BF.INSERT i2 itemsxyz NOCREATE CAPACITY a",
        Reply::int_array(&[1, 1, 1]),
    );
    expect(
        &mut conn,
        "BF.MEXISTS i2 NOCREATE CAPACITY a b",
        Reply::int_array(&[1, 1, 1, 0]),
    );
    expect(&mut conn, "BF.INFO i2", info(100, 240, 1, 3, Some(2)));
    // Several options together, in any order and case.
    expect(
        &mut conn,
        "BF.INSERT all nonscaling capacity 3 error 0.01 items x y",
        Reply::int_array(&[1, 1]),
    );
    expect(&mut conn, "BF.INFO all", info(3, 104, 1, 2, None));
}

#[test]
fn exists_mexists_missing_and_wrong_type() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.EXISTS missing foo", int(0));
    expect(
        &mut conn,
        "BF.MEXISTS missing foo bar baz",
        Reply::int_array(&[0, 0, 0]),
    );
    // 0 instead of WRONGTYPE (COMPAT §11, quirk 1).
    expect(&mut conn, "SET s foo", Reply::ok());
    expect(&mut conn, "HSET h foo 1", int(1));
    for key in ["s", "h"] {
        expect(&mut conn, &format!("BF.EXISTS {key} foo"), int(0));
        expect(
            &mut conn,
            &format!("BF.MEXISTS {key} foo bar"),
            Reply::int_array(&[0, 0]),
        );
    }
    call(&mut conn, "BF.MEXISTS s a b");
    assert_eq!(conn.last_raw, b"*2\r\n:0\r\n:0\r\n");
    // Read-only: nothing was created.
    expect(&mut conn, "EXISTS missing", int(0));
}

#[test]
fn card_replies() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.CARD missing", int(0));
    expect(&mut conn, "BF.RESERVE k 0.01 10", Reply::ok());
    expect(&mut conn, "BF.CARD k", int(0));
    expect(&mut conn, "BF.ADD k a", int(1));
    expect(&mut conn, "BF.CARD k", int(1));
    expect(&mut conn, "BF.ADD k a", int(0));
    expect(&mut conn, "BF.CARD k", int(1));
    let all = items("", 0..100);
    madd(&mut conn, "k", &all);
    // The chain size: items that set a new bit, across every link (a link-crossing count).
    let card = call(&mut conn, "BF.CARD k");
    expect(
        &mut conn,
        "BF.INFO k ITEMS",
        Reply::Array(Some(vec![card.clone()])),
    );
    assert_eq!(card, int(100));
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.CARD s", err(WRONGTYPE));
}

#[test]
fn info_variants() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE bf 0.001 100", Reply::ok());
    expect(&mut conn, "BF.INFO bf", info(100, 296, 1, 0, Some(2)));
    let raw = b"*10\r\n+Capacity\r\n:100\r\n+Size\r\n:296\r\n+Number of filters\r\n:1\r\n\
+Number of items inserted\r\n:0\r\n+Expansion rate\r\n:2\r\n";
    assert_eq!(conn.last_raw, raw);
    for (field, value) in [
        ("CAPACITY", 100),
        ("capacity", 100),
        ("Size", 296),
        ("FILTERS", 1),
        ("items", 0),
        ("ExPansion", 2),
    ] {
        assert_eq!(info_field(&mut conn, "bf", field), int(value), "{field}");
    }
    call(&mut conn, "BF.INFO bf capacity");
    assert_eq!(conn.last_raw, b"*1\r\n:100\r\n");
    for field in ["foo", "", "capacities", "cap", "Number of filters"] {
        assert_eq!(
            conn.call(&["BF.INFO", "bf", field]),
            err(INVALID_INFO),
            "{field:?}"
        );
    }
    expect(&mut conn, "BF.INFO missing", err(NOT_FOUND));
    // The key is looked up before the field.
    expect(&mut conn, "BF.INFO missing foo", err(NOT_FOUND));
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.INFO s", err(WRONGTYPE));
    expect(&mut conn, "BF.INFO s foo", err(WRONGTYPE));
    // After growth: capacity sums the links.
    let all = items("", 0..250);
    madd(&mut conn, "bf", &all);
    let filters = info_field(&mut conn, "bf", "filters").int();
    assert_eq!(filters, 2);
    expect(&mut conn, "BF.INFO bf capacity", Reply::int_array(&[300]));
    expect(
        &mut conn,
        "BF.INFO bf size",
        Reply::int_array(&[32 + 264 + 64 + 432]),
    );
}

#[test]
fn debug_lines_pin_sizing_hashing_and_scaling() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.DEBUG missing", err(NOT_FOUND));
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.DEBUG s", err(WRONGTYPE));

    expect(&mut conn, "BF.RESERVE bf 0.01 10", Reply::ok());
    madd(&mut conn, "bf", &items("", 0..100));
    expect(
        &mut conn,
        "BF.DEBUG bf",
        Reply::bulk_array(&[
            "size:99",
            "bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
            "bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
            "bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
            "bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625",
        ]),
    );
    expect(&mut conn, "BF.CARD bf", int(99));
    assert_all_exist(&mut conn, "bf", &items("", 0..100));

    expect(&mut conn, "BF.RESERVE bf6 0.001 100", Reply::ok());
    madd(&mut conn, "bf6", &items("", 0..4000));
    let link = |b: u64, h: u32, c: u64, s: u64, r: &str| {
        format!(
            "bytes:{b} bits:{} hashes:{h} hashwidth:64 capacity:{c} size:{s} ratio:{r}",
            b * 8
        )
    };
    assert_eq!(
        debug_lines(&mut conn, "bf6"),
        vec![
            "size:3997".to_string(),
            link(200, 11, 100, 100, "0.0005"),
            link(432, 12, 200, 200, "0.00025"),
            link(936, 13, 400, 400, "0.000125"),
            link(2016, 14, 800, 800, "6.25e-05"),
            link(4320, 15, 1600, 1600, "3.125e-05"),
            link(9216, 16, 3200, 897, "1.5625e-05"),
        ]
    );
    assert_all_exist(&mut conn, "bf6", &items("", 0..4000));
    expect(
        &mut conn,
        "BF.INFO bf6",
        info(6300, 32 + 6 * 64 + 17120, 6, 3997, Some(2)),
    );
}

/// MEMORY USAGE = the module's mem_usage (COMPAT §4.5: 1056 for 0.05/1000) + Redis' own
/// per-key overhead. On Redis 7.0 that overhead is the key's sds (8 bytes for "bf") and the
/// dict entry (24), plus 16 bytes of slot metadata per key in cluster mode: 1088 standalone,
/// 1104 (RedisBloom's test value) in cluster mode. Valkey 8.1 and Redis 8.2 count 24 bytes
/// per key in both modes.
fn check_memory_usage(conn: &mut RawConnection, want: i64) {
    expect(conn, "BF.RESERVE bf 0.05 1000", Reply::ok());
    expect(conn, "BF.INFO bf SIZE", Reply::int_array(&[1056]));
    expect(conn, "MEMORY USAGE bf", int(want));
    expect(conn, "BF.MADD bf foo bar baz", Reply::int_array(&[1, 1, 1]));
    expect(conn, "MEMORY USAGE bf", int(want));
    let before = crate::support::bf::Snapshot::take(conn, "bf");
    expect(conn, "DEBUG RELOAD", Reply::ok());
    assert_eq!(crate::support::bf::Snapshot::take(conn, "bf"), before);
    expect(conn, "MEMORY USAGE bf", int(want));
    expect(
        conn,
        "BF.MEXISTS bf foo bar baz",
        Reply::int_array(&[1, 1, 1]),
    );
}

#[test]
fn memory_usage_formula() {
    let server = Server::start();
    let mut conn = server.raw();
    let overhead = if crate::support::is_valkey(&mut conn) || crate::support::is_redis8(&mut conn) {
        24
    } else {
        8 + 24
    };
    check_memory_usage(&mut conn, 1056 + overhead);
    // Other sizes of COMPAT §4.5.
    for (line, size) in [
        ("BF.RESERVE a 0.001 100", 296),
        ("BF.RESERVE b 0.01 100", 240),
        ("BF.RESERVE c 0.01 3 NONSCALING", 104),
        ("BF.RESERVE d 0.001 1000 NONSCALING", 1896),
        ("BF.RESERVE e 0.001 1000", 2080),
    ] {
        expect(&mut conn, line, Reply::ok());
        let key = line.split(' ').nth(1).unwrap();
        assert_eq!(info_field(&mut conn, key, "size"), int(size), "{line}");
        expect(
            &mut conn,
            &format!("MEMORY USAGE {key}"),
            int(size + overhead),
        );
    }
}

#[test]
fn memory_usage_in_cluster_mode_is_redisbloom_s_1104() {
    let server = Server::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
    ]);
    let mut conn = server.raw();
    expect(&mut conn, "CLUSTER ADDSLOTSRANGE 0 16383", Reply::ok());
    crate::support::wait_until("cluster state ok", || {
        crate::support::info_field(&mut conn, "cluster", "cluster_enabled") == "1"
            && call(&mut conn, "CLUSTER INFO")
                .text()
                .contains("cluster_state:ok")
    });
    let want = if crate::support::is_valkey(&mut conn) || crate::support::is_redis8(&mut conn) {
        1056 + 24
    } else {
        1104
    };
    check_memory_usage(&mut conn, want);
}

#[test]
fn expansion_changes_the_number_of_links() {
    let server = Server::start();
    let mut conn = server.raw();
    let all = items("", 0..100);
    for (expansion, filters) in [(1, 23), (2, 5), (4, 4)] {
        let key = format!("exp{expansion}");
        expect(
            &mut conn,
            &format!("BF.RESERVE {key} 0.01 4 EXPANSION {expansion}"),
            Reply::ok(),
        );
        madd(&mut conn, &key, &all);
        assert_all_exist(&mut conn, &key, &all);
        let reply = conn.call(&["BF.INFO", &key]).array();
        assert_eq!(reply[5], int(filters), "expansion {expansion}");
        assert_eq!(reply[9], int(expansion), "expansion {expansion}");
    }
    expect(
        &mut conn,
        "BF.RESERVE exp4 0.01 4 expansion",
        err(NO_EXPANSION),
    );
    expect(
        &mut conn,
        "BF.RESERVE exp4 0.01 4 expansion 0",
        err(ITEM_EXISTS),
    );
    expect(
        &mut conn,
        "BF.RESERVE exp4 0.01 4 expansion str",
        err(BAD_EXPANSION),
    );
}

#[test]
fn false_positive_rate_within_requested() {
    let server = Server::start();
    let mut conn = server.raw();
    for rate in ["0.1", "0.01", "0.001", "0.0001"] {
        let key = format!("fpr{rate}");
        expect(
            &mut conn,
            &format!("BF.RESERVE {key} {rate} 1024"),
            Reply::ok(),
        );
        let added = madd(&mut conn, &key, &items("in-", 0..1024));
        assert_eq!(added.iter().filter(|r| **r == int(1)).count() as i64, {
            call(&mut conn, &format!("BF.CARD {key}")).int()
        });
        assert_all_exist(&mut conn, &key, &items("in-", 0..1024));
        let positives: i64 = mexists(&mut conn, &key, &items("out-", 0..10240))
            .iter()
            .sum();
        let rate: f64 = rate.parse().unwrap();
        assert!(
            positives as f64 / 10240.0 <= rate,
            "{key}: {positives} false positives of 10240"
        );
        // The filter did not need to grow for its own capacity.
        assert_eq!(info_field(&mut conn, &key, "filters"), int(1));
    }
}

#[test]
fn non_scaling_filters() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE ns 0.01 3 NONSCALING", Reply::ok());
    for item in ["a", "b", "c"] {
        expect(&mut conn, &format!("BF.ADD ns {item}"), int(1));
    }
    assert_eq!(call(&mut conn, "BF.ADD ns d"), err(NONSCALING_FULL));
    assert_eq!(conn.last_raw, b"-ERR non scaling filter is full\r\n");
    expect(&mut conn, "BF.INFO ns", info(3, 104, 1, 3, None));
    expect(
        &mut conn,
        "BF.DEBUG ns",
        Reply::bulk_array(&[
            "size:3",
            "bytes:8 bits:64 hashes:7 hashwidth:64 capacity:3 size:3 ratio:0.01",
        ]),
    );
    expect(
        &mut conn,
        "BF.RESERVE ns2 0.01 3 nonscaling expansion 2",
        err(CANNOT_EXPAND),
    );
    expect(
        &mut conn,
        "BF.RESERVE small 0.001 1000 NONSCALING",
        Reply::ok(),
    );
    expect(&mut conn, "BF.RESERVE big 0.001 1000", Reply::ok());
    let small = info_field(&mut conn, "small", "size").int();
    let big = info_field(&mut conn, "big", "size").int();
    assert!(small < big, "{small} vs {big}");
}

#[test]
fn very_high_error_rates() {
    let server = Server::start();
    let mut conn = server.raw();
    for (key, args) in [
        ("h1", "0.99 3"),
        ("h2", "0.95 8"),
        ("h3", "0.9999999999999999 100 NONSCALING"),
    ] {
        expect(&mut conn, &format!("BF.RESERVE {key} {args}"), Reply::ok());
        expect(&mut conn, &format!("BF.ADD {key} x"), int(1));
        expect(&mut conn, &format!("BF.EXISTS {key} x"), int(1));
    }
    expect(
        &mut conn,
        "BF.DEBUG h3",
        Reply::bulk_array(&[
            "size:1",
            "bytes:8 bits:64 hashes:1 hashwidth:64 capacity:100 size:1 ratio:1",
        ]),
    );
    // A rate whose half underflows to 0 cannot make a scaling filter (and nothing is
    // stored), but is fine for a non-scaling one.
    expect(
        &mut conn,
        "BF.RESERVE tiny 5e-324 10",
        err(COULD_NOT_CREATE),
    );
    expect(&mut conn, "EXISTS tiny", int(0));
    expect(
        &mut conn,
        "BF.INSERT tiny ERROR 5e-324 ITEMS a",
        err(COULD_NOT_CREATE),
    );
    expect(&mut conn, "EXISTS tiny", int(0));
    expect(
        &mut conn,
        "BF.RESERVE tiny 5e-324 10 NONSCALING",
        Reply::ok(),
    );
    expect(&mut conn, "BF.ADD tiny a", int(1));
    expect(&mut conn, "BF.EXISTS tiny b", int(0));
}

#[test]
fn issue178_large_capacity() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE bf 0.000001 300000000", Reply::ok());
    expect(
        &mut conn,
        "BF.INFO bf",
        info(300000000, 1132420232, 1, 0, Some(2)),
    );
    expect(&mut conn, "BF.MADD bf a b c", Reply::int_array(&[1, 1, 1]));
    expect(
        &mut conn,
        "BF.MEXISTS bf a b c d",
        Reply::int_array(&[1, 1, 1, 0]),
    );
    expect(&mut conn, "DEL bf", int(1));
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}

#[test]
fn filters_beyond_the_ceiling_are_refused() {
    let server = Server::start();
    let mut conn = server.raw();
    for line in [
        "BF.RESERVE k 0.01 1000000000000",
        "BF.RESERVE k 0.01 1000000000000 NONSCALING",
        "BF.RESERVE k 0.000001 2000000000",
        "BF.RESERVE k 0.01 9223372036854775807",
        "BF.INSERT k CAPACITY 1000000000000 ITEMS a",
        "BF.INSERT k CAPACITY 9223372036854775807 NONSCALING ITEMS a",
    ] {
        expect(&mut conn, line, err(TOO_LARGE));
        expect(&mut conn, "EXISTS k", int(0));
    }
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
    expect(&mut conn, "BF.RESERVE k 0.01 1000", Reply::ok());
    expect(&mut conn, "BF.MADD k a b", Reply::int_array(&[1, 1]));
    expect(&mut conn, "BF.ADD other a", int(1));
}

/// A scale step that would exceed the ceiling fails with the ceiling's message; BF.MADD
/// and BF.INSERT go on with the remaining items (they do not stop as for "full").
#[test]
fn growth_beyond_the_ceiling_is_refused_per_item() {
    let server = Server::start();
    let mut conn = server.raw();
    // Link 2 would hold 100000 × 32768 entries: about 5.1 GB.
    expect(
        &mut conn,
        "BF.RESERVE g 0.01 100000 EXPANSION 32768",
        Reply::ok(),
    );
    let all = items("g", 0..101_000);
    let replies = madd(&mut conn, "g", &all);
    assert_eq!(replies.len(), all.len());
    let first_error = replies
        .iter()
        .position(|r| matches!(r, Reply::Error(_)))
        .expect("an error element");
    for reply in &replies[first_error..] {
        assert!(
            *reply == err(TOO_LARGE) || *reply == int(0),
            "after the first error: {reply:?}"
        );
    }
    let added = replies.iter().filter(|r| **r == int(1)).count() as i64;
    assert_eq!(added, 100_000);
    expect(&mut conn, "BF.CARD g", int(100_000));
    expect(
        &mut conn,
        "BF.INFO g",
        info(100_000, 32 + 64 + 137848, 1, 100_000, Some(32768)),
    );
    let refused = &all[first_error];
    expect(&mut conn, &format!("BF.EXISTS g {refused}"), int(0));
    expect(&mut conn, &format!("BF.ADD g {refused}"), err(TOO_LARGE));
    let reply = conn.call(&["BF.INSERT", "g", "ITEMS", &all[0], refused, &all[1]]);
    assert_eq!(
        reply,
        Reply::Array(Some(vec![int(0), err(TOO_LARGE), int(0)]))
    );
}

/// test_overall's "large number of filters": error halving underflows after ~1060 links;
/// the failed scale-out is an error element (HEAD), processing goes on, and the filter
/// survives DEBUG RELOAD.
#[test]
fn many_links_until_the_error_underflows() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(
        &mut conn,
        "BF.RESERVE poc 0.0001 1 EXPANSION 1",
        Reply::ok(),
    );
    let all = items("", 0..5001);
    let replies = madd(&mut conn, "poc", &all);
    assert_eq!(replies.len(), 5001);
    let first_error = replies
        .iter()
        .position(|r| matches!(r, Reply::Error(_)))
        .expect("an error element");
    for reply in &replies[first_error..] {
        assert!(
            *reply == err(PROBLEM_INSERTING) || *reply == int(0),
            "{reply:?}"
        );
    }
    let added = replies.iter().filter(|r| **r == int(1)).count() as i64;
    let filters = info_field(&mut conn, "poc", "filters").int();
    assert!((1000..1100).contains(&filters), "{filters} links");
    assert_eq!(call(&mut conn, "BF.CARD poc").int(), added);
    assert_eq!(filters, added, "one item per link of capacity 1");
    let refused = &all[first_error];
    expect(
        &mut conn,
        &format!("BF.ADD poc {refused}"),
        err(PROBLEM_INSERTING),
    );
    let before = crate::support::bf::Snapshot::take(&mut conn, "poc");
    expect(&mut conn, "DEBUG RELOAD", Reply::ok());
    assert_eq!(crate::support::bf::Snapshot::take(&mut conn, "poc"), before);
    assert_all_exist(&mut conn, "poc", &all[..first_error]);
}

/// The documented bytes (COMPAT §7.1) of two small filters.
#[test]
fn documented_scandump_bytes() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE bf 0.1 10", Reply::ok());
    expect(&mut conn, "BF.ADD bf item1", int(1));
    assert_eq!(
        hex::encode(header(&mut conn, "bf")),
        "0100000000000000010000000500000002000000\
         0800000000000000400000000000000001000000000000009a9999999999a93f\
         4af7d49edef01840050000000a0000000000000000"
    );
    expect(
        &mut conn,
        "BF.SCANDUMP bf 1",
        Reply::Array(Some(vec![
            int(9),
            Reply::bulk([0x01, 0x08, 0x00, 0x80, 0x00, 0x04, 0x20, 0x00]),
        ])),
    );
    expect(&mut conn, "BF.RESERVE k 0.01 100", Reply::ok());
    expect(&mut conn, "BF.ADD k hello", int(1));
    assert_eq!(
        hex::encode(header(&mut conn, "k")),
        "0100000000000000010000000500000002000000\
         900000000000000080040000000000000100000000000000\
         7b14ae47e17a743fe9862fb2350e2640080000006400000000000000\
         00"
    );
    expect(
        &mut conn,
        "BF.SCANDUMP k 145",
        Reply::Array(Some(vec![int(0), Reply::bulk("")])),
    );
    assert_eq!(conn.last_raw, b"*2\r\n:0\r\n$0\r\n\r\n");
}

/// RESP3 clients get RedisBloom 2.6's shapes: booleans, maps, nulls; CARD, DEBUG and
/// SCANDUMP unchanged (COMPAT decision 1; every shape in both protocols: tests/resp3.rs).
#[test]
fn resp3_clients_get_redisbloom_2_6_shapes() {
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "HELLO 3");
    assert!(conn.last_raw.starts_with(b"%"), "not RESP3");
    for (line, raw) in [
        ("BF.ADD k a", &b"#t\r\n"[..]),
        ("BF.ADD k a", b"#f\r\n"),
        ("BF.EXISTS k a", b"#t\r\n"),
        ("BF.EXISTS k b", b"#f\r\n"),
        ("BF.MADD k b a", b"*2\r\n#t\r\n#f\r\n"),
        ("BF.MEXISTS k a c", b"*2\r\n#t\r\n#f\r\n"),
        ("BF.INSERT k ITEMS c a", b"*2\r\n#t\r\n#f\r\n"),
        ("BF.CARD k", b":3\r\n"),
        (
            "BF.INFO k",
            b"%5\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n+Number of filters\r\n:1\r\n\
+Number of items inserted\r\n:3\r\n+Expansion rate\r\n:2\r\n",
        ),
        ("BF.INFO k capacity", b"%1\r\n+Capacity\r\n:100\r\n"),
        ("BF.RESERVE n 0.01 1 NONSCALING", b"+OK\r\n"),
        ("BF.INFO n expansion", b"%1\r\n+Expansion rate\r\n_\r\n"),
        ("BF.MADD n x y", b"*2\r\n#t\r\n-ERR non scaling filter is full\r\n"),
        ("BF.SCANDUMP n 9", b"*2\r\n:0\r\n$0\r\n\r\n"),
        ("BF.DEBUG n", b"*2\r\n$6\r\nsize:1\r\n$66\r\nbytes:8 bits:64 hashes:7 hashwidth:64 capacity:1 size:1 ratio:0.01\r\n"),
    ] {
        call(&mut conn, line);
        assert_eq!(
            String::from_utf8_lossy(&conn.last_raw),
            String::from_utf8_lossy(raw),
            "{line}"
        );
    }
}

/// Auto-created filters (BF.ADD, BF.MADD, BF.INSERT) take the load-time defaults, in
/// 2.4.20's and HEAD's spellings; BF.RESERVE and explicit INSERT options are unaffected.
#[test]
fn load_time_defaults_apply_to_auto_created_filters() {
    for args in [
        ["ERROR_RATE", "0.02", "INITIAL_SIZE", "200"],
        ["bf-error-rate", "0.02", "bf-initial-size", "200"],
    ] {
        let mut start = vec!["--module-args"];
        start.extend(args);
        let server = Server::start_with(&start);
        let mut conn = server.raw();
        expect(&mut conn, "BF.RESERVE ref 0.02 200", Reply::ok());
        expect(&mut conn, "BF.ADD ref a", int(1));
        let reference = debug_lines(&mut conn, "ref");
        assert!(reference[1].contains(" capacity:200 "), "{reference:?}");
        expect(&mut conn, "BF.ADD add a", int(1));
        expect(&mut conn, "BF.MADD madd a", Reply::int_array(&[1]));
        expect(&mut conn, "BF.INSERT ins ITEMS a", Reply::int_array(&[1]));
        for key in ["add", "madd", "ins"] {
            assert_eq!(
                debug_lines(&mut conn, key),
                reference,
                "{key} with {args:?}"
            );
            expect(
                &mut conn,
                &format!("BF.INFO {key} expansion"),
                Reply::int_array(&[2]),
            );
        }
        expect(
            &mut conn,
            "BF.INSERT own CAPACITY 10 ERROR 0.5 ITEMS a",
            Reply::int_array(&[1]),
        );
        let own = debug_lines(&mut conn, "own");
        assert!(
            own[1].ends_with(" capacity:10 size:1 ratio:0.25"),
            "{own:?}"
        );
        expect(&mut conn, "BF.RESERVE r2 0.01 100", Reply::ok());
        expect(&mut conn, "BF.INFO r2", info(100, 240, 1, 0, Some(2)));
    }
}
