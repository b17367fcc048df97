//! Hostile input against a real server: every numeric argument at its edge values, wrong
//! arity for every CF command (the BF ones are in bf::commands), garbage / truncated /
//! bit-flipped / huge LOADCHUNK headers and chunks, and RESTORE of corrupted DUMP payloads
//! of both types (the CRC recomputed, so the module's loader is reached). After each one
//! the server answers PING, no half-built key remains, and where a corrupted filter is
//! accepted it is used to the full (adds, checks, dumps, copies) without harm.

use crate::support::ceiling::TOO_LARGE;
use crate::support::dump_payload::BAD_DATA_FORMAT;
use crate::support::replies::{err, ok};

use crate::support::cf::cf_header;
use crate::support::dump_payload::{
    decode, encode_value, learn_version, put_len, restore, seal, BF_ID, CF_ID, F,
};
use crate::support::{call, crc64_jones, scandump, RawConnection, Reply, Rng, Server};

// ---------------------------------------------------------------------------------------
// Helpers

fn arity(name: &str) -> Reply {
    err(&format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

const BF_BAD_DATA: &str = "ERR received bad data";

/// The server is up, and `key` holds what it should (`None`: nothing).
fn assert_alive_and(conn: &mut RawConnection, key: &str, kind: Option<&str>, what: &str) {
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()), "{what}");
    let exists = conn.call(&["EXISTS", key]).int();
    let ty = conn.call(&["TYPE", key]);
    match kind {
        None => {
            assert_eq!(exists, 0, "half-built key after {what}");
            assert_eq!(ty, Reply::Simple("none".into()), "{what}");
        }
        Some(kind) => {
            assert_eq!(exists, 1, "{what}");
            assert_eq!(ty, Reply::Simple(kind.into()), "{what}");
        }
    }
}

/// Uses a Bloom filter that was accepted from outside data: every command works, an item
/// that was added is found, the filter dumps, copies and restores to an identical value.
fn use_bf(conn: &mut RawConnection, key: &str, what: &str) {
    let added = conn.call(&["BF.ADD", key, "probe"]);
    match &added {
        Reply::Int(0 | 1) => {
            assert_eq!(
                conn.call(&["BF.EXISTS", key, "probe"]),
                Reply::Int(1),
                "{what}"
            );
        }
        Reply::Error(e)
            if [
                "ERR non scaling filter is full",
                "ERR problem inserting into filter",
                TOO_LARGE,
            ]
            .contains(&e.as_str()) => {}
        other => panic!("{what}: BF.ADD answered {other:?}"),
    }
    let mexists = conn.call(&["BF.MEXISTS", key, "probe", "other"]).ints();
    assert_eq!(mexists.len(), 2, "{what}");
    assert!(
        matches!(conn.call(&["BF.CARD", key]), Reply::Int(_)),
        "{what}"
    );
    assert_eq!(conn.call(&["BF.INFO", key]).array().len(), 10, "{what}");
    assert!(conn.call(&["BF.DEBUG", key]).array().len() >= 2, "{what}");
    let dump = scandump(conn, "BF.SCANDUMP", key);
    assert_eq!(dump.last().map(|d| d.0), Some(0), "{what}");
    check_copies(conn, key, what);
}

/// Uses a Cuckoo filter that was accepted from outside data.
fn use_cf(conn: &mut RawConnection, key: &str, what: &str) {
    let added = conn.call(&["CF.ADD", key, "probe"]);
    match &added {
        Reply::Int(1) => {
            assert_eq!(
                conn.call(&["CF.EXISTS", key, "probe"]),
                Reply::Int(1),
                "{what}"
            );
            assert!(conn.call(&["CF.COUNT", key, "probe"]).int() >= 1, "{what}");
            assert_eq!(
                conn.call(&["CF.DEL", key, "probe"]),
                Reply::Int(1),
                "{what}"
            );
        }
        Reply::Error(e)
            if [
                "Filter is full",
                "ERR Insufficient memory",
                "Maximum expansions reached",
                TOO_LARGE,
            ]
            .contains(&e.as_str()) => {}
        other => panic!("{what}: CF.ADD answered {other:?}"),
    }
    assert_eq!(conn.call(&["CF.MEXISTS", key, "a", "b"]).ints().len(), 2);
    assert_eq!(conn.call(&["CF.COMPACT", key]), ok(), "{what}");
    assert_eq!(conn.call(&["CF.INFO", key]).array().len(), 16, "{what}");
    assert!(conn.call(&["CF.DEBUG", key]).text().starts_with("bktsize:"));
    let dump = scandump(conn, "CF.SCANDUMP", key);
    assert_eq!(dump.last().map(|d| d.0), Some(0), "{what}");
    check_copies(conn, key, what);
}

/// DUMP → RESTORE and COPY give the same value (same digest), and both can be deleted.
fn check_copies(conn: &mut RawConnection, key: &str, what: &str) {
    let payload = conn.call(&["DUMP", key]).bytes();
    let copy = format!("{key}:restored");
    assert_eq!(
        conn.call(&[b"RESTORE".as_slice(), copy.as_bytes(), b"0", &payload]),
        ok(),
        "{what}: a value's own DUMP is refused"
    );
    let copied = format!("{key}:copied");
    assert_eq!(conn.call(&["COPY", key, &copied]), Reply::Int(1), "{what}");
    let digest = |conn: &mut RawConnection, k: &str| conn.call(&["DEBUG", "DIGEST-VALUE", k]);
    for other in [&copy, &copied] {
        assert_eq!(digest(conn, key), digest(conn, other), "{what}");
        // The content itself: the copies dump to the same bytes.
        assert!(
            conn.call(&["DUMP", other]).bytes() == payload,
            "{what}: {other} has another DUMP payload"
        );
    }
    assert_eq!(
        conn.call(&["DEL", key, &copy, &copied]),
        Reply::Int(3),
        "{what}"
    );
}

/// `bf_filters` and `cf_filters` of the module's INFO section.
fn filter_counts(conn: &mut RawConnection) -> (i64, i64) {
    let text = conn.call(&["INFO", "bf_filters"]).text();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("{name} not in {text}"))
            .trim()
            .parse::<i64>()
            .unwrap()
    };
    (field("bf_bf_filters"), field("bf_cf_filters"))
}

// ---------------------------------------------------------------------------------------
// Numeric arguments and arity

/// The edge values every numeric argument is tried with.
const EDGES: [&str; 10] = [
    "0",
    "-1",
    "4294967296",
    "9223372036854775808",
    "18446744073709551616",
    "nan",
    "inf",
    "-inf",
    "garbage",
    "",
];

/// `template` with `$` replaced by each edge value, and the exact reply for each (in the
/// order of `EDGES`). Commands run on the empty key `n` unless the template names `bf`/`cf`
/// (existing filters). A created key is checked and deleted; errors must leave nothing.
fn edge_cases() -> Vec<(&'static str, [Reply; 10])> {
    let bad_rate = || err("ERR bad error rate");
    let rate_range = || err("ERR (0 < error rate range < 1) ");
    let bad_cap = || err("ERR bad capacity");
    let cap_range = || err("ERR (capacity should be larger than 0)");
    let exp_range = || err("ERR expansion must be in the range [0, 32768]");
    let bad_exp = || err("ERR bad expansion");
    let bad_arg = || err("Bad argument received");
    let cf_cap = || err("Bad capacity");
    let cf_small = || err("Capacity must be at least (BucketSize * 2)");
    let too_large = || err(TOO_LARGE);
    let bf_numeric = || err("Second argument must be numeric");
    let lc_numeric = || err("ERR Second argument must be numeric");
    let position = || err("Invalid position");
    let end_bf = || Reply::Array(Some(vec![Reply::Int(0), Reply::bulk("")]));
    let end_cf = || Reply::Array(Some(vec![Reply::Int(0), Reply::nil()]));
    let parse = |what: &str| err(&format!("Couldn't parse {what}"));
    let mi_range =
        || err("MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.");
    let bs_range = || err("BUCKETSIZE: value must be an integer between 1 and 255, inclusive.");
    let cx_range = || err("EXPANSION: value must be an integer between 0 and 32768, inclusive.");
    vec![
        (
            "BF.RESERVE n $ 100",
            [
                rate_range(),
                rate_range(),
                rate_range(),
                rate_range(),
                rate_range(),
                bad_rate(),
                rate_range(),
                rate_range(),
                bad_rate(),
                bad_rate(),
            ],
        ),
        (
            "BF.RESERVE n 0.01 $",
            [
                cap_range(),
                cap_range(),
                too_large(),
                bad_cap(),
                bad_cap(),
                bad_cap(),
                bad_cap(),
                bad_cap(),
                bad_cap(),
                bad_cap(),
            ],
        ),
        (
            "BF.RESERVE n 0.01 100 EXPANSION $",
            [
                ok(),
                exp_range(),
                exp_range(),
                bad_exp(),
                bad_exp(),
                bad_exp(),
                bad_exp(),
                bad_exp(),
                bad_exp(),
                bad_exp(),
            ],
        ),
        (
            "BF.INSERT n CAPACITY $ ITEMS a",
            [
                bad_arg(),
                bad_arg(),
                too_large(),
                err("Bad capacity"),
                err("Bad capacity"),
                err("Bad capacity"),
                err("Bad capacity"),
                err("Bad capacity"),
                err("Bad capacity"),
                err("Bad capacity"),
            ],
        ),
        (
            "BF.INSERT n ERROR $ ITEMS a",
            [
                bad_arg(),
                bad_arg(),
                bad_arg(),
                bad_arg(),
                bad_arg(),
                err("Bad error rate"),
                bad_arg(),
                bad_arg(),
                err("Bad error rate"),
                err("Bad error rate"),
            ],
        ),
        (
            "BF.INSERT n EXPANSION $ ITEMS a",
            [
                Reply::int_array(&[1]),
                exp_range(),
                exp_range(),
                err("Bad expansion"),
                err("Bad expansion"),
                err("Bad expansion"),
                err("Bad expansion"),
                err("Bad expansion"),
                err("Bad expansion"),
                err("Bad expansion"),
            ],
        ),
        (
            "BF.SCANDUMP bf $",
            [
                Reply::Int(-1), // the header: checked separately (placeholder)
                end_bf(),
                end_bf(),
                bf_numeric(),
                bf_numeric(),
                bf_numeric(),
                bf_numeric(),
                bf_numeric(),
                bf_numeric(),
                bf_numeric(),
            ],
        ),
        (
            "BF.LOADCHUNK bf $ x",
            [
                err(BF_BAD_DATA),
                err(BF_BAD_DATA),
                err("ERR invalid offset - no link found"),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
            ],
        ),
        (
            "BF.LOADCHUNK n $ x",
            [
                err("ERR not found"),
                err("ERR not found"),
                err("ERR not found"),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
                lc_numeric(),
            ],
        ),
        (
            "CF.RESERVE n $",
            [
                cf_small(),
                cf_small(),
                too_large(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
            ],
        ),
        (
            "CF.RESERVE n 100 BUCKETSIZE $",
            [
                bs_range(),
                bs_range(),
                bs_range(),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
                parse("BUCKETSIZE"),
            ],
        ),
        (
            "CF.RESERVE n 100 MAXITERATIONS $",
            [
                mi_range(),
                mi_range(),
                mi_range(),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
                parse("MAXITERATIONS"),
            ],
        ),
        (
            "CF.RESERVE n 100 EXPANSION $",
            [
                ok(),
                cx_range(),
                cx_range(),
                parse("EXPANSION"),
                parse("EXPANSION"),
                parse("EXPANSION"),
                parse("EXPANSION"),
                parse("EXPANSION"),
                parse("EXPANSION"),
                parse("EXPANSION"),
            ],
        ),
        (
            "CF.INSERT n CAPACITY $ ITEMS a",
            [
                cf_small(),
                cf_small(),
                too_large(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
            ],
        ),
        (
            "CF.INSERTNX n CAPACITY $ ITEMS a",
            [
                cf_small(),
                cf_small(),
                too_large(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
                cf_cap(),
            ],
        ),
        (
            "CF.SCANDUMP cf $",
            [
                Reply::Int(-1), // the header: checked separately (placeholder)
                position(),
                end_cf(),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
            ],
        ),
        (
            "CF.LOADCHUNK cf $ x",
            [
                position(),
                err("Couldn't load chunk!"),
                err("Couldn't load chunk!"),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
            ],
        ),
        (
            "CF.LOADCHUNK n $ x",
            [
                position(),
                err("ERR not found"),
                err("ERR not found"),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
                position(),
            ],
        ),
    ]
}

#[test]
fn every_numeric_argument_at_its_edge_values() {
    let server = Server::start();
    let mut conn = server.raw();
    // A 1 GiB ceiling: capacities of 2^32 are refused before anything is allocated.
    assert_eq!(
        call(&mut conn, "CONFIG SET bf.max-filter-bytes 1073741824"),
        ok()
    );
    assert_eq!(call(&mut conn, "BF.MADD bf a b c").ints(), vec![1, 1, 1]);
    assert_eq!(
        call(&mut conn, "CF.INSERT cf ITEMS a b c").ints(),
        vec![1, 1, 1]
    );
    let bf_before = conn.call(&["DUMP", "bf"]);
    let cf_before = conn.call(&["DUMP", "cf"]);
    for (template, replies) in edge_cases() {
        for (value, want) in EDGES.iter().zip(replies) {
            let argv: Vec<&str> = template
                .split(' ')
                .map(|a| if a == "$" { *value } else { a })
                .collect();
            let what = format!("{argv:?}");
            let got = conn.call(&argv);
            if want == Reply::Int(-1) {
                // SCANDUMP 0: the header.
                assert_eq!(got.array()[0], Reply::Int(1), "{what}");
                continue;
            }
            assert_eq!(got, want, "{what}");
            let created = matches!(got, Reply::Simple(_) | Reply::Array(_))
                && argv[1] == "n"
                && !argv[0].ends_with("SCANDUMP");
            let kind = if argv[0].starts_with("BF") {
                "MBbloom--"
            } else {
                "MBbloomCF"
            };
            assert_alive_and(&mut conn, "n", created.then_some(kind), &what);
            conn.call(&["DEL", "n"]);
        }
    }
    // The existing filters were not changed by any of it.
    assert_eq!(conn.call(&["DUMP", "bf"]), bf_before);
    assert_eq!(conn.call(&["DUMP", "cf"]), cf_before);
    assert_eq!(call(&mut conn, "BF.MEXISTS bf a b c").ints(), vec![1, 1, 1]);
    assert_eq!(call(&mut conn, "CF.MEXISTS cf a b c").ints(), vec![1, 1, 1]);
}

#[test]
fn wrong_arity_for_every_cf_command() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "CF.RESERVE k 100"), ok());
    let cases: &[(&str, &[&str])] = &[
        ("cf.reserve", &["CF.RESERVE"]),
        ("cf.reserve", &["CF.RESERVE", "n"]),
        ("cf.reserve", &["CF.RESERVE", "n", "100", "BUCKETSIZE"]),
        ("cf.add", &["CF.ADD"]),
        ("cf.add", &["CF.ADD", "n"]),
        ("cf.add", &["CF.ADD", "n", "a", "b"]),
        ("cf.addnx", &["CF.ADDNX", "n"]),
        ("cf.addnx", &["CF.ADDNX", "n", "a", "b"]),
        ("cf.insert", &["CF.INSERT"]),
        ("cf.insert", &["CF.INSERT", "n"]),
        ("cf.insert", &["CF.INSERT", "n", "ITEMS"]),
        ("cf.insert", &["CF.INSERT", "n", "NOCREATE", "ITEMS"]),
        ("cf.insert", &["CF.INSERT", "n", "NOCREATE", "CAPACITY"]),
        ("cf.insert", &["CF.INSERT", "n", "CAPACITY", "100", "ITEMS"]),
        ("cf.insertnx", &["CF.INSERTNX", "n", "ITEMS"]),
        ("cf.insertnx", &["CF.INSERTNX", "n"]),
        ("cf.exists", &["CF.EXISTS", "k"]),
        ("cf.exists", &["CF.EXISTS", "k", "a", "b"]),
        ("cf.mexists", &["CF.MEXISTS", "k"]),
        ("cf.count", &["CF.COUNT", "k"]),
        ("cf.count", &["CF.COUNT", "k", "a", "b"]),
        ("cf.del", &["CF.DEL", "k"]),
        ("cf.del", &["CF.DEL", "k", "a", "b"]),
        ("cf.compact", &["CF.COMPACT"]),
        ("cf.compact", &["CF.COMPACT", "k", "x"]),
        ("cf.info", &["CF.INFO"]),
        ("cf.info", &["CF.INFO", "k", "x"]),
        ("cf.debug", &["CF.DEBUG"]),
        ("cf.debug", &["CF.DEBUG", "k", "x"]),
        ("cf.scandump", &["CF.SCANDUMP", "k"]),
        ("cf.scandump", &["CF.SCANDUMP", "k", "0", "x"]),
        ("cf.loadchunk", &["CF.LOADCHUNK", "n", "1"]),
        ("cf.loadchunk", &["CF.LOADCHUNK", "n", "1", "x", "y"]),
    ];
    for (name, argv) in cases {
        assert_eq!(conn.call(argv), arity(name), "{argv:?}");
        assert_alive_and(&mut conn, "n", None, &format!("{argv:?}"));
    }
    assert_eq!(
        call(&mut conn, "CF.DEBUG k").text(),
        "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
}

// ---------------------------------------------------------------------------------------
// LOADCHUNK

/// The full SCANDUMP of a Bloom filter with several links and 60 items.
fn bf_source(conn: &mut RawConnection) -> (Vec<u8>, Vec<(i64, Vec<u8>)>) {
    assert_eq!(call(conn, "BF.RESERVE src 0.01 5"), ok());
    for i in 0..60 {
        conn.call(&["BF.ADD", "src", &format!("item{i}")]);
    }
    let dump = scandump(conn, "BF.SCANDUMP", "src");
    conn.call(&["DEL", "src"]);
    let header = dump[0].1.clone().unwrap();
    let chunks = dump[1..dump.len() - 1]
        .iter()
        .map(|(it, d)| (*it, d.clone().unwrap()))
        .collect();
    (header, chunks)
}

fn bf_loadchunk(conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]) -> Reply {
    conn.call(&[
        b"BF.LOADCHUNK".as_slice(),
        key.as_bytes(),
        iter.to_string().as_bytes(),
        data,
    ])
}

fn cf_loadchunk(conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]) -> Reply {
    conn.call(&[
        b"CF.LOADCHUNK".as_slice(),
        key.as_bytes(),
        iter.to_string().as_bytes(),
        data,
    ])
}

/// Loads the real chunks after an accepted (maybe corrupted) header; every reply must be
/// one of LOADCHUNK's documented ones.
fn bf_load_chunks(conn: &mut RawConnection, key: &str, chunks: &[(i64, Vec<u8>)], what: &str) {
    for (iter, data) in chunks {
        let reply = bf_loadchunk(conn, key, *iter, data);
        assert!(
            [
                ok(),
                err(BF_BAD_DATA),
                err("ERR invalid offset - no link found"),
                err("ERR invalid chunk - Too big for current filter"),
            ]
            .contains(&reply),
            "{what}: chunk {iter}: {reply:?}"
        );
    }
}

#[test]
fn hostile_bf_loadchunk_headers_and_chunks() {
    let server = Server::start();
    let mut conn = server.raw();
    let (header, chunks) = bf_source(&mut conn);
    let k = "k";

    // The genuine dump restores, with every item.
    assert_eq!(bf_loadchunk(&mut conn, k, 1, &header), ok());
    bf_load_chunks(&mut conn, k, &chunks, "genuine");
    for i in 0..60 {
        assert_eq!(
            conn.call(&["BF.EXISTS", k, &format!("item{i}")]),
            Reply::Int(1)
        );
    }
    // Hostile chunks on it: each answer is documented, and the filter keeps its items.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let total: i64 = chunks.iter().map(|(_, d)| d.len() as i64).sum();
    let mut chunk_cases: Vec<(i64, Vec<u8>)> = vec![
        (i64::MAX, vec![1]),
        (i64::MIN, vec![1]),
        (total + 1, vec![0xff]),
        (total + 2, vec![0xff]),
        (2, vec![]),
        (1 << 40, vec![0; 100]),
        (chunks[0].0, vec![0xff; chunks[0].1.len() + 1]),
        (chunks[0].0 + 1, chunks[0].1.clone()),
    ];
    for _ in 0..100 {
        let len = rng.below(300) as usize;
        let iter = rng.below(total as u64 + 400) as i64 - 100;
        chunk_cases.push((iter, rng.bytes(len)));
    }
    let dump_before = conn.call(&["DUMP", k]);
    for (iter, data) in &chunk_cases {
        let reply = bf_loadchunk(&mut conn, "other-key", *iter, data);
        assert_eq!(
            reply,
            err(if *iter == 1 {
                BF_BAD_DATA
            } else {
                "ERR not found"
            })
        );
        assert_alive_and(&mut conn, "other-key", None, "chunk on a missing key");
    }
    for (iter, data) in &chunk_cases {
        let reply = bf_loadchunk(&mut conn, k, *iter, data);
        let documented = [
            ok(),
            err(BF_BAD_DATA),
            err("ERR invalid offset - no link found"),
            err("ERR invalid chunk - Too big for current filter"),
        ];
        assert!(documented.contains(&reply), "chunk {iter}: {reply:?}");
        if reply != ok() {
            continue;
        }
        assert_alive_and(&mut conn, k, Some("MBbloom--"), "chunk");
    }
    // Refused chunks changed nothing; accepted ones only changed bits, and the real chunks
    // bring every item back.
    bf_load_chunks(&mut conn, k, &chunks, "genuine again");
    assert_eq!(conn.call(&["DUMP", k]), dump_before);
    use_bf(&mut conn, k, "after hostile chunks");

    // Headers: truncated at every length (refused), garbage (refused unless by chance
    // valid), every single-bit flip (refused or a usable filter).
    for len in 0..header.len() {
        assert_eq!(
            bf_loadchunk(&mut conn, k, 1, &header[..len]),
            err(BF_BAD_DATA)
        );
        assert_alive_and(&mut conn, k, None, &format!("header cut at {len}"));
    }
    let mut longer = header.clone();
    longer.push(0);
    assert_eq!(bf_loadchunk(&mut conn, k, 1, &longer), err(BF_BAD_DATA));
    for round in 0..200 {
        let len = if round % 2 == 0 {
            header.len()
        } else {
            rng.below(400) as usize
        };
        let garbage = rng.bytes(len);
        let reply = bf_loadchunk(&mut conn, k, 1, &garbage);
        if reply == ok() {
            use_bf(&mut conn, k, "garbage header");
        } else {
            assert_eq!(reply, err(BF_BAD_DATA));
        }
        assert_alive_and(&mut conn, k, None, "garbage header");
    }
    let mut accepted = 0;
    for bit in 0..header.len() * 8 {
        let mut flipped = header.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let what = format!("header bit {bit}");
        match bf_loadchunk(&mut conn, k, 1, &flipped) {
            r if r == ok() => {
                accepted += 1;
                bf_load_chunks(&mut conn, k, &chunks, &what);
                use_bf(&mut conn, k, &what);
            }
            r => assert_eq!(r, err(BF_BAD_DATA), "{what}"),
        }
        assert_alive_and(&mut conn, k, None, &what);
    }
    // Flips of entries, growth, the FORCE64/NOROUND option bits and the link items'
    // high bits... are accepted: not all of them are checked (COMPAT §7.1).
    assert!(accepted > 0 && accepted < header.len() * 8, "{accepted}");

    // Huge but consistent sizes: 2^40 bytes (1 TiB) with matching bits.
    let mut huge = header.clone();
    huge.truncate(20 + 53);
    huge[8..12].copy_from_slice(&1u32.to_le_bytes());
    let link_items = u64::from_le_bytes(huge[20 + 16..20 + 24].try_into().unwrap());
    huge[0..8].copy_from_slice(&link_items.to_le_bytes());
    assert_eq!(
        bf_loadchunk(&mut conn, k, 1, &huge),
        ok(),
        "the one-link header is valid"
    );
    conn.call(&["DEL", k]);
    huge[20..28].copy_from_slice(&(1u64 << 40).to_le_bytes());
    huge[28..36].copy_from_slice(&(1u64 << 43).to_le_bytes());
    assert_eq!(bf_loadchunk(&mut conn, k, 1, &huge), err(BF_BAD_DATA));
    assert_alive_and(&mut conn, k, None, "1 TiB header under the ceiling");
    // With the ceiling at its maximum the allocation itself is tried and refused.
    assert_eq!(
        call(
            &mut conn,
            "CONFIG SET bf.max-filter-bytes 9223372036854775807"
        ),
        ok()
    );
    assert_eq!(bf_loadchunk(&mut conn, k, 1, &huge), err(BF_BAD_DATA));
    assert_alive_and(&mut conn, k, None, "1 TiB header without a ceiling");
    // 2^61 bytes: bits = 2^64 overflows.
    huge[20..28].copy_from_slice(&(1u64 << 61).to_le_bytes());
    huge[28..36].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(bf_loadchunk(&mut conn, k, 1, &huge), err(BF_BAD_DATA));
    assert_alive_and(&mut conn, k, None, "2^61-byte header");
    assert_eq!(filter_counts(&mut conn).0, 0);
}

#[test]
fn hostile_cf_loadchunk_headers_and_chunks() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "CF.RESERVE src 8 EXPANSION 2"), ok());
    for i in 0..60 {
        assert_eq!(
            conn.call(&["CF.ADD", "src", &format!("item{i}")]),
            Reply::Int(1)
        );
    }
    let dump = scandump(&mut conn, "CF.SCANDUMP", "src");
    let header = dump[0].1.clone().unwrap();
    let chunks: Vec<(i64, Vec<u8>)> = dump[1..dump.len() - 1]
        .iter()
        .map(|(it, d)| (*it, d.clone().unwrap()))
        .collect();
    assert!(chunks.len() >= 3);
    assert_eq!(call(&mut conn, "DEL src"), Reply::Int(1));
    let k = "k";
    let chunk_replies = [ok(), err("Couldn't load chunk!")];
    let load_chunks = |conn: &mut RawConnection, what: &str| {
        for (iter, data) in &chunks {
            let reply = cf_loadchunk(conn, k, *iter, data);
            assert!(chunk_replies.contains(&reply), "{what}: {reply:?}");
        }
    };

    // Hostile chunks on the genuine filter.
    assert_eq!(cf_loadchunk(&mut conn, k, 1, &header), ok());
    load_chunks(&mut conn, "genuine");
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let total: i64 = chunks.iter().map(|(_, d)| d.len() as i64).sum();
    let mut cases: Vec<(i64, Vec<u8>)> = vec![
        (i64::MAX, vec![1]),
        (i64::MIN, vec![1]),
        (-1, vec![1]),
        (2, vec![]),
        (total + 1, vec![1; 1000]),
        (1 << 40, vec![0; 100]),
        (chunks[0].0, vec![0xff; chunks[0].1.len() + 1]),
    ];
    for _ in 0..100 {
        let len = 1 + rng.below(200) as usize;
        cases.push((2 + rng.below(total as u64 * 3) as i64, rng.bytes(len)));
    }
    for (iter, data) in &cases {
        let reply = cf_loadchunk(&mut conn, k, *iter, data);
        assert!(
            chunk_replies.contains(&reply) || reply == err("Invalid position"),
            "chunk {iter}: {reply:?}"
        );
        assert_alive_and(&mut conn, k, Some("MBbloomCF"), "chunk");
        // The same on a missing key.
        let reply = cf_loadchunk(&mut conn, "other", *iter, data);
        assert!(
            [err("ERR not found"), err("Invalid position")].contains(&reply),
            "{reply:?}"
        );
        assert_alive_and(&mut conn, "other", None, "chunk on a missing key");
    }
    load_chunks(&mut conn, "genuine again");
    for i in 0..60 {
        assert_eq!(
            conn.call(&["CF.EXISTS", k, &format!("item{i}")]),
            Reply::Int(1)
        );
    }
    use_cf(&mut conn, k, "after hostile chunks");

    // Headers of any other length: `Invalid header`.
    for len in (0..80).filter(|&l| l != 38) {
        let data = rng.bytes(len);
        assert_eq!(cf_loadchunk(&mut conn, k, 1, &data), err("Invalid header"));
        assert_alive_and(&mut conn, k, None, &format!("{len}-byte header"));
    }
    // Garbage and bit-flipped 38-byte headers: refused, or a usable filter.
    let refused = err("Couldn't create filter!");
    let mut accepted = 0;
    let mut try_header = |conn: &mut RawConnection, h: &[u8], what: &str| {
        let reply = cf_loadchunk(conn, k, 1, h);
        if reply == ok() {
            accepted += 1;
            load_chunks(conn, what);
            use_cf(conn, k, what);
        } else {
            assert_eq!(reply, refused, "{what}");
        }
        assert_alive_and(conn, k, None, what);
    };
    for round in 0..200 {
        let garbage = rng.bytes(38);
        try_header(&mut conn, &garbage, &format!("garbage header {round}"));
    }
    for bit in 0..38 * 8 {
        let mut flipped = header.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        try_header(&mut conn, &flipped, &format!("header bit {bit}"));
    }
    assert!(accepted > 0);

    // Header checks of COMPAT §7.3, each refused.
    for (what, h) in [
        ("bucket size 0", cf_header(1, 64, 0, 1, 0, 20, 1)),
        ("bucket size 256", cf_header(1, 64, 0, 1, 256, 20, 1)),
        ("buckets 0", cf_header(1, 0, 0, 1, 2, 20, 1)),
        ("buckets 3", cf_header(1, 3, 0, 1, 2, 20, 1)),
        ("buckets 2^56", cf_header(1, 1 << 56, 0, 1, 2, 20, 1)),
        ("filters 0", cf_header(1, 64, 0, 0, 2, 20, 1)),
        ("filters 65536", cf_header(1, 64, 0, 65536, 2, 20, 1)),
        ("filters 70000", cf_header(1, 64, 0, 70000, 2, 20, 1)),
        ("filters 2^64-1", cf_header(1, 64, 0, u64::MAX, 2, 20, 1)),
        ("iterations 0", cf_header(1, 64, 0, 1, 2, 0, 1)),
        ("expansion 0, 2 filters", cf_header(1, 64, 0, 2, 2, 20, 0)),
        ("expansion 32769", cf_header(1, 64, 0, 1, 2, 20, 32769)),
        ("expansion 3", cf_header(1, 64, 0, 1, 2, 20, 3)),
        ("2^40 buckets", cf_header(1, 1 << 40, 0, 1, 1, 20, 1)),
        ("grown past 2^56", cf_header(1, 1 << 40, 0, 3, 1, 20, 32768)),
    ] {
        assert_eq!(cf_loadchunk(&mut conn, k, 1, &h), refused, "{what}");
        assert_alive_and(&mut conn, k, None, what);
    }
    // 2^40 buckets (1 TiB) with the ceiling at its maximum: the allocation is refused.
    assert_eq!(
        call(
            &mut conn,
            "CONFIG SET bf.max-filter-bytes 9223372036854775807"
        ),
        ok()
    );
    let h = cf_header(1, 1 << 40, 0, 1, 1, 20, 1);
    assert_eq!(cf_loadchunk(&mut conn, k, 1, &h), refused);
    assert_alive_and(&mut conn, k, None, "1 TiB without a ceiling");
    // The most sub-filters there can be: accepted, dumped and restored whole.
    let h = cf_header(3, 1, 0, 65535, 1, 20, 1);
    assert_eq!(cf_loadchunk(&mut conn, k, 1, &h), ok());
    use_cf(&mut conn, k, "65535 sub-filters");
    assert_eq!(filter_counts(&mut conn).1, 0);
}

// ---------------------------------------------------------------------------------------
// RESTORE of corrupted DUMP payloads

#[test]
fn crc64_is_redis_crc64() {
    assert_eq!(crc64_jones(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.ADD b x"), Reply::Int(1));
    let payload = conn.call(&["DUMP", "b"]).bytes();
    let (body, crc) = payload.split_at(payload.len() - 8);
    assert_eq!(crc64_jones(body).to_le_bytes(), crc);
    // RDB version 10 (Redis 7.0), 11 (Valkey 8), 12 (Redis 8.2) or 80 (Valkey 9).
    let version = [body[body.len() - 2], body[body.len() - 1]];
    assert!([[10, 0], [11, 0], [12, 0], [80, 0]].contains(&version));
}

/// Every way a payload goes wrong: each is `ERR Bad data format`, leaves no key, and the
/// module's filter count is unchanged (a refused value was freed, not leaked or counted).
fn refuse_all(conn: &mut RawConnection, cases: Vec<(String, Vec<u8>)>) {
    let counts = filter_counts(conn);
    for (what, payload) in cases {
        assert_eq!(restore(conn, "r", &payload), err(BAD_DATA_FORMAT), "{what}");
        assert_alive_and(conn, "r", None, &what);
    }
    assert_eq!(filter_counts(conn), counts);
}

/// Truncations of the value at every byte, flips of every byte of the fields, each with
/// the CRC recomputed: refused, or (flips only) a filter that works.
fn truncate_and_flip(conn: &mut RawConnection, value: &[u8], id_len: usize, bloom: bool) {
    let counts = filter_counts(conn);
    for len in 1..value.len() {
        let what = format!("value cut at {len} of {}", value.len());
        match restore(conn, "r", &seal(&value[..len])) {
            // Redis 7.0 reads a value from the whole payload, footer included, and does not
            // check that it ended where the footer begins: when the 10 footer bytes happen
            // to complete a cut value (the last bit-array bytes, then a 0 as EOF), the value
            // is well-formed as far as anyone can tell — and must then be a usable filter.
            r if r == ok() && len + 10 >= value.len() => {
                if bloom {
                    use_bf(conn, "r", &what);
                } else {
                    use_cf(conn, "r", &what);
                }
            }
            r => assert_eq!(r, err(BAD_DATA_FORMAT), "{what}"),
        }
        assert_alive_and(conn, "r", None, &what);
    }
    let mut accepted = 0;
    for at in 1 + id_len..value.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut v = value.to_vec();
            v[at] ^= mask;
            let what = format!("byte {at} ^ {mask:#x}");
            match restore(conn, "r", &seal(&v)) {
                r if r == ok() => {
                    accepted += 1;
                    if bloom {
                        use_bf(conn, "r", &what);
                    } else {
                        use_cf(conn, "r", &what);
                    }
                }
                r => assert_eq!(r, err(BAD_DATA_FORMAT), "{what}"),
            }
            assert_alive_and(conn, "r", None, &what);
        }
    }
    // Bit-array bytes are data: flipping them gives a valid filter.
    assert!(accepted > 0);
    assert_eq!(filter_counts(conn), counts);
}

#[test]
fn restore_of_corrupted_bloom_payloads() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "CONFIG SET rdbcompression no"), ok());
    assert_eq!(call(&mut conn, "BF.RESERVE b 0.01 5"), ok());
    for i in 0..40 {
        conn.call(&["BF.ADD", "b", &format!("item{i}")]);
    }
    let payload = conn.call(&["DUMP", "b"]).bytes();
    learn_version(&payload);
    let (id, fields) = decode(&payload);
    assert_eq!(id, BF_ID);
    assert_eq!(
        seal(&encode_value(id, &fields)),
        payload,
        "the codec round-trips"
    );
    let nlinks = match fields[1] {
        F::U(n) => n,
        _ => panic!(),
    };
    assert!(nlinks >= 3);
    assert_eq!(fields.len(), 4 + 8 * nlinks as usize);
    // A forged payload of the same value is accepted; so is the encoding-3 form.
    assert_eq!(
        restore(&mut conn, "r", &seal(&encode_value(id, &fields))),
        ok()
    );
    conn.call(&["DEL", "r"]);
    let mut v3 = fields.clone();
    v3.remove(3);
    assert_eq!(
        restore(&mut conn, "r", &seal(&encode_value((id & !1023) | 3, &v3))),
        ok()
    );
    assert_eq!(call(&mut conn, "BF.EXISTS r item7"), Reply::Int(1));
    conn.call(&["DEL", "r"]);

    let with = |changes: &[(usize, F)]| {
        let mut f = fields.clone();
        for (at, value) in changes {
            f[*at] = value.clone();
        }
        seal(&encode_value(id, &f))
    };
    let link = |i: usize, field: usize| 4 + 8 * i + field;
    let bits0 = match fields[link(0, 4)] {
        F::U(b) => b,
        _ => panic!(),
    };
    let items = match fields[0] {
        F::U(n) => n,
        _ => panic!(),
    };
    let mut cases: Vec<(String, Vec<u8>)> = vec![];
    let mut case = |what: &str, payload: Vec<u8>| cases.push((what.to_string(), payload));
    case("nfilters 2^64-1", with(&[(1, F::U(u64::MAX))]));
    case("nfilters 0", with(&[(1, F::U(0))]));
    case("nfilters + 1", with(&[(1, F::U(nlinks + 1))]));
    case("nfilters 70000", with(&[(1, F::U(70000))]));
    case("options 16", with(&[(2, F::U(16))]));
    case("options 2^64-1", with(&[(2, F::U(u64::MAX))]));
    case("growth 2^32", with(&[(3, F::U(1 << 32))]));
    case("total items + 1", with(&[(0, F::U(items + 1))]));
    case("link items + 1", with(&[(link(1, 7), F::U(1 << 20))]));
    case("link items overflow", with(&[(link(0, 7), F::U(u64::MAX))]));
    for (what, error) in [("0", 0.0), ("1", 1.0), ("nan", f64::NAN), ("-1", -1.0)] {
        case(&format!("error {what}"), with(&[(link(0, 1), F::D(error))]));
    }
    for hashes in [0, 1101, 1 << 32, u64::MAX] {
        case(
            &format!("hashes {hashes}"),
            with(&[(link(0, 2), F::U(hashes))]),
        );
    }
    case("bpe inf", with(&[(link(0, 3), F::D(f64::INFINITY))]));
    case("bpe nan", with(&[(link(0, 3), F::D(f64::NAN))]));
    case("bits + 8", with(&[(link(0, 4), F::U(bits0 + 8))]));
    case("bits 0", with(&[(link(0, 4), F::U(0))]));
    case("bits 2^64-1", with(&[(link(0, 4), F::U(u64::MAX))]));
    case("n2 64", with(&[(link(0, 5), F::U(64))]));
    case("n2 256", with(&[(link(0, 5), F::U(256))]));
    case("n2 20", with(&[(link(0, 5), F::U(20))]));
    case("bit array empty", with(&[(link(0, 6), F::S(vec![]))]));
    case(
        "bit array short",
        with(&[(link(0, 6), F::S(vec![0; bits0 as usize / 8 - 1]))]),
    );
    case(
        "bit array long",
        with(&[(link(0, 6), F::S(vec![0; bits0 as usize / 8 + 1]))]),
    );
    case("a double where an unsigned is", with(&[(1, F::D(3.0))]));
    case(
        "a string where a double is",
        with(&[(link(0, 1), F::S(b"0.01".to_vec()))]),
    );
    case("encoding 5", seal(&encode_value((id & !1023) | 5, &fields)));
    case("the Cuckoo type's id", seal(&encode_value(CF_ID, &fields)));
    case(
        "an unknown module id",
        seal(&encode_value(0x1234_5678_9abc_d004, &fields)),
    );
    let mut extra = fields.clone();
    extra.push(F::U(7));
    case("a field too many", seal(&encode_value(id, &extra)));
    case("no fields", seal(&encode_value(id, &[])));
    // Huge string lengths with no data behind them (the allocation is tried or refused).
    for len in [1u64 << 31, 1 << 40, 1 << 62] {
        let mut value = encode_value(id, &fields[..link(0, 6)]);
        value.pop(); // EOF
        value.push(5);
        put_len(&mut value, len);
        case(&format!("bit array of {len} bytes"), seal(&value));
    }
    refuse_all(&mut conn, cases);

    // RESTORE REPLACE with a refused payload keeps the existing key.
    let before = conn.call(&["DUMP", "b"]);
    let bad = with(&[(1, F::U(0))]);
    assert_eq!(
        conn.call(&[b"RESTORE".as_slice(), b"b", b"0", &bad, b"REPLACE"]),
        err(BAD_DATA_FORMAT)
    );
    assert_eq!(conn.call(&["DUMP", "b"]), before);

    truncate_and_flip(&mut conn, &payload[..payload.len() - 10], 9, true);
}

#[test]
fn restore_of_corrupted_cuckoo_payloads() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "CONFIG SET rdbcompression no"), ok());
    // Expansion 2, several sub-filters.
    assert_eq!(call(&mut conn, "CF.RESERVE c 8 EXPANSION 2"), ok());
    for i in 0..60 {
        assert_eq!(
            conn.call(&["CF.ADD", "c", &format!("item{i}")]),
            Reply::Int(1)
        );
    }
    assert_eq!(call(&mut conn, "CF.DEL c item3"), Reply::Int(1));
    let payload = conn.call(&["DUMP", "c"]).bytes();
    learn_version(&payload);
    let (id, fields) = decode(&payload);
    assert_eq!(id, CF_ID);
    assert_eq!(
        seal(&encode_value(id, &fields)),
        payload,
        "the codec round-trips"
    );
    let nf = match fields[0] {
        F::U(n) => n as usize,
        _ => panic!(),
    };
    assert!(nf >= 3);
    assert_eq!(fields.len(), 7 + 2 * nf);
    let base = match fields[1] {
        F::U(n) => n,
        _ => panic!(),
    };
    let with = |changes: &[(usize, F)]| {
        let mut f = fields.clone();
        for (at, value) in changes {
            f[*at] = value.clone();
        }
        seal(&encode_value(id, &f))
    };
    let mut cases: Vec<(String, Vec<u8>)> = vec![];
    let mut case = |what: &str, payload: Vec<u8>| cases.push((what.to_string(), payload));
    for n in [0, nf as u64 + 1, 65536, 70000, u64::MAX] {
        case(&format!("numFilters {n}"), with(&[(0, F::U(n))]));
    }
    for n in [0, 3, base * 2, 1 << 56, 1 << 63] {
        case(&format!("numBuckets {n}"), with(&[(1, F::U(n))]));
    }
    for bs in [0, 256, 1 << 32] {
        case(&format!("bucketSize {bs}"), with(&[(4, F::U(bs))]));
    }
    case("maxIterations 0", with(&[(5, F::U(0))]));
    case("maxIterations 65536", with(&[(5, F::U(65536))]));
    for exp in [0, 1, 3, 32769, 65536] {
        case(&format!("expansion {exp}"), with(&[(6, F::U(exp))]));
    }
    case("sub-filter 1 of the base size", with(&[(9, F::U(base))]));
    case("sub-filter 0 of 2^56 buckets", with(&[(7, F::U(1 << 56))]));
    case(
        "sub-filter data short",
        with(&[(8, F::S(vec![0; base as usize * 2 - 1]))]),
    );
    case(
        "sub-filter data long",
        with(&[(8, F::S(vec![0; base as usize * 2 + 1]))]),
    );
    case("a double where an unsigned is", with(&[(0, F::D(1.0))]));
    case("encoding 5", seal(&encode_value((id & !1023) | 5, &fields)));
    case("the Bloom type's id", seal(&encode_value(BF_ID, &fields)));
    let mut extra = fields.clone();
    extra.push(F::U(7));
    case("a field too many", seal(&encode_value(id, &extra)));
    for len in [1u64 << 31, 1 << 40, 1 << 62] {
        let mut value = encode_value(id, &fields[..8]);
        value.pop();
        value.push(5);
        put_len(&mut value, len);
        case(&format!("data of {len} bytes"), seal(&value));
    }
    refuse_all(&mut conn, cases);

    // The encoding-3 form (counts, then data; bucket size 2, expansion 1): accepted.
    assert_eq!(call(&mut conn, "CF.RESERVE old 8"), ok());
    for i in 0..30 {
        conn.call(&["CF.ADD", "old", &format!("item{i}")]);
    }
    let (_, old) = decode(&conn.call(&["DUMP", "old"]).bytes());
    let mut v3 = vec![old[0].clone(), old[1].clone(), old[2].clone()];
    v3.extend(old[7..].iter().skip(1).step_by(2).cloned());
    assert_eq!(
        restore(&mut conn, "r", &seal(&encode_value((id & !1023) | 3, &v3))),
        ok()
    );
    assert_eq!(conn.call(&["CF.EXISTS", "r", "item29"]), Reply::Int(1));
    assert_eq!(
        conn.call(&["CF.DEBUG", "r"]).text(),
        conn.call(&["CF.DEBUG", "old"]).text()
    );
    conn.call(&["DEL", "r"]);

    truncate_and_flip(&mut conn, &payload[..payload.len() - 10], 9, false);
}
