//! CBF.* against a real redis-server: every command's replies and errors, wrong types both
//! ways, delete semantics, SCANDUMP → LOADCHUNK onto another server, and hostile LOADCHUNK
//! input.

use crate::support::cbf::{build_rich_filter, counts, snapshot};
use crate::support::replies::{err, int, ints, ok};

use redbloom_core::bloom::link::LinkShape;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::{CountingAdd, CountingChain};
use redbloom_core::DEFAULT_MAX_FILTER_BYTES;

use crate::support::{call, expect, loadchunks, scandump, RawConnection, Reply, Server};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_FOUND: &str = "ERR not found";
const BAD_DATA: &str = "ERR received bad data";

fn arity(command: &str) -> Reply {
    err(&format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

fn info(capacity: i64, size: i64, filters: i64, items: i64, expansion: Option<i64>) -> Reply {
    let simple = |s: &str| Reply::Simple(s.to_string());
    Reply::Array(Some(vec![
        simple("Capacity"),
        int(capacity),
        simple("Size"),
        int(size),
        simple("Number of filters"),
        int(filters),
        simple("Number of items inserted"),
        int(items),
        simple("Expansion rate"),
        expansion.map_or(Reply::Bulk(None), Reply::Int),
    ]))
}

#[test]
fn wrong_arity_for_every_command() {
    let server = Server::start();
    let mut conn = server.raw();
    let cases: &[(&str, &[&str])] = &[
        ("cbf.reserve", &["CBF.RESERVE", "k", "0.01"]),
        (
            "cbf.reserve",
            &[
                "CBF.RESERVE",
                "k",
                "0.01",
                "1",
                "EXPANSION",
                "2",
                "NONSCALING",
                "x",
            ],
        ),
        ("cbf.add", &["CBF.ADD", "k"]),
        ("cbf.add", &["CBF.ADD", "k", "a", "b"]),
        ("cbf.madd", &["CBF.MADD", "k"]),
        ("cbf.insert", &["CBF.INSERT", "k", "ITEMS"]),
        ("cbf.insert", &["CBF.INSERT", "k", "CAPACITY", "10"]),
        ("cbf.insert", &["CBF.INSERT", "k", "NOCREATE", "ITEMS"]),
        ("cbf.insert", &["CBF.INSERT", "k", "NOCREATE", "CAPACITY"]),
        ("cbf.exists", &["CBF.EXISTS", "k"]),
        ("cbf.exists", &["CBF.EXISTS", "k", "a", "b"]),
        ("cbf.mexists", &["CBF.MEXISTS", "k"]),
        ("cbf.count", &["CBF.COUNT", "k"]),
        ("cbf.count", &["CBF.COUNT", "k", "a", "b"]),
        ("cbf.del", &["CBF.DEL", "k"]),
        ("cbf.del", &["CBF.DEL", "k", "a", "b"]),
        ("cbf.info", &["CBF.INFO"]),
        ("cbf.info", &["CBF.INFO", "k", "capacity", "x"]),
        ("cbf.card", &["CBF.CARD"]),
        ("cbf.card", &["CBF.CARD", "k", "x"]),
        ("cbf.debug", &["CBF.DEBUG"]),
        ("cbf.debug", &["CBF.DEBUG", "k", "x"]),
        ("cbf.scandump", &["CBF.SCANDUMP", "k"]),
        ("cbf.scandump", &["CBF.SCANDUMP", "k", "0", "x"]),
        ("cbf.loadchunk", &["CBF.LOADCHUNK", "k", "1"]),
        ("cbf.loadchunk", &["CBF.LOADCHUNK", "k", "1", "x", "y"]),
    ];
    for (name, argv) in cases {
        assert_eq!(conn.call(argv), arity(name), "{argv:?}");
    }
    assert_eq!(call(&mut conn, "EXISTS k"), int(0), "nothing was created");
}

#[test]
fn command_flags_and_arity() {
    let server = Server::start();
    let mut conn = server.raw();
    for (name, arity, flags) in [
        ("cbf.reserve", -4, &["write", "denyoom"][..]),
        ("cbf.add", 3, &["write", "denyoom"]),
        ("cbf.madd", -3, &["write", "denyoom"]),
        ("cbf.insert", -4, &["write", "denyoom"]),
        ("cbf.exists", 3, &["readonly", "fast"]),
        ("cbf.mexists", -3, &["readonly", "fast"]),
        ("cbf.count", 3, &["readonly", "fast"]),
        ("cbf.del", 3, &["write", "fast"]),
        ("cbf.info", -2, &["readonly", "fast"]),
        ("cbf.card", 2, &["readonly", "fast"]),
        ("cbf.debug", 2, &["readonly", "fast"]),
        ("cbf.scandump", 3, &["readonly", "fast"]),
        ("cbf.loadchunk", 4, &["write", "denyoom"]),
    ] {
        let reply = conn.call(&["COMMAND", "INFO", name]).array()[0].array();
        assert_eq!(reply[0].text(), name);
        assert_eq!(reply[1].int(), arity, "{name}");
        let got: Vec<String> = reply[2].array().iter().map(Reply::text).collect();
        let mut want: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        want.push("module".into());
        for flag in &want {
            assert!(got.contains(flag), "{name}: {got:?} lacks {flag}");
        }
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        assert_eq!((reply[3].int(), reply[4].int(), reply[5].int()), (1, 1, 1));
    }
}

#[test]
fn reserve_validation_order_and_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.ADD bf x", int(1));
    expect(&mut conn, "SET s v", ok());
    for (line, want) in [
        ("CBF.RESERVE k x 100", "ERR bad error rate"),
        ("CBF.RESERVE bf x 100", "ERR bad error rate"),
        ("CBF.RESERVE k 0 100", "ERR (0 < error rate range < 1) "),
        ("CBF.RESERVE k 1 100", "ERR (0 < error rate range < 1) "),
        ("CBF.RESERVE k -0.5 100", "ERR (0 < error rate range < 1) "),
        ("CBF.RESERVE k 0.01 x", "ERR bad capacity"),
        (
            "CBF.RESERVE k 0.01 0",
            "ERR (capacity should be larger than 0)",
        ),
        (
            "CBF.RESERVE k 0.01 -3",
            "ERR (capacity should be larger than 0)",
        ),
        ("CBF.RESERVE k 0.01 100 EXPANSION", "ERR no expansion"),
        (
            "CBF.RESERVE k 0.01 100 NONSCALING EXPANSION 2",
            "Nonscaling filters cannot expand",
        ),
        ("CBF.RESERVE k 0.01 100 EXPANSION x", "ERR bad expansion"),
        (
            "CBF.RESERVE k 0.01 100 EXPANSION 40000",
            "ERR expansion must be in the range [0, 32768]",
        ),
        (
            "CBF.RESERVE k 0.01 100 EXPANSION -1",
            "ERR expansion must be in the range [0, 32768]",
        ),
        ("CBF.RESERVE bf 0.01 100", WRONGTYPE),
        ("CBF.RESERVE s 0.01 100", WRONGTYPE),
        (
            "CBF.RESERVE big 0.01 1000000000000",
            "ERR filter would exceed the max-filter-bytes limit",
        ),
    ] {
        expect(&mut conn, line, err(want));
    }
    expect(&mut conn, "EXISTS k big", int(0));
    expect(&mut conn, "CBF.RESERVE k 0.01 100", ok());
    expect(&mut conn, "CBF.RESERVE k 0.01 100", err("ERR item exists"));
    expect(&mut conn, "TYPE k", Reply::Simple("RBcountBF".into()));
    expect(&mut conn, "CBF.INFO k", info(100, 672, 1, 0, Some(2)));
    expect(&mut conn, "CBF.RESERVE e4 0.01 100 expansion 4", ok());
    expect(&mut conn, "CBF.INFO e4 EXPANSION", ints(&[4]));
    expect(&mut conn, "CBF.RESERVE e0 0.01 100 EXPANSION 0", ok());
    expect(
        &mut conn,
        "CBF.INFO e0",
        info(100, 32 + 64 + 480, 1, 0, None),
    );
    expect(&mut conn, "CBF.RESERVE ns 0.01 100 nonscaling", ok());
    expect(
        &mut conn,
        "CBF.INFO ns",
        info(100, 32 + 64 + 480, 1, 0, None),
    );
}

#[test]
fn same_sizing_as_bf_with_four_times_the_bytes() {
    let server = Server::start();
    let mut conn = server.raw();
    for (error, capacity, extra) in [
        ("0.01", "100", ""),
        ("0.001", "100", ""),
        ("0.05", "1000", ""),
        ("0.01", "3", " NONSCALING"),
        ("0.0001", "12345", " NONSCALING"),
    ] {
        let key = format!("{error}/{capacity}");
        expect(
            &mut conn,
            &format!("BF.RESERVE bf{key} {error} {capacity}{extra}"),
            ok(),
        );
        expect(
            &mut conn,
            &format!("CBF.RESERVE cbf{key} {error} {capacity}{extra}"),
            ok(),
        );
        let bf = call(&mut conn, &format!("BF.DEBUG bf{key}")).array()[1].text();
        let cbf = call(&mut conn, &format!("CBF.DEBUG cbf{key}")).array()[1].text();
        let field = |line: &str, name: &str| -> u64 {
            line.split(' ')
                .find_map(|f| f.strip_prefix(&format!("{name}:")))
                .unwrap()
                .parse()
                .unwrap()
        };
        assert_eq!(field(&bf, "bits"), field(&cbf, "counters"), "{key}");
        assert_eq!(field(&bf, "hashes"), field(&cbf, "hashes"), "{key}");
        assert_eq!(field(&bf, "capacity"), field(&cbf, "capacity"), "{key}");
        assert_eq!(4 * field(&bf, "bytes"), field(&cbf, "bytes"), "{key}");
        let bf_size = call(&mut conn, &format!("BF.INFO bf{key} SIZE")).ints()[0];
        let cbf_size = call(&mut conn, &format!("CBF.INFO cbf{key} SIZE")).ints()[0];
        assert_eq!(cbf_size - 96, 4 * (bf_size - 96), "{key}");
    }
}

#[test]
fn add_madd_and_auto_create() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.ADD k x", int(1));
    expect(&mut conn, "CBF.ADD k x", int(1));
    expect(&mut conn, "CBF.INFO k", info(100, 672, 1, 2, Some(2)));
    expect(
        &mut conn,
        "CBF.DEBUG k",
        Reply::Array(Some(vec![
            Reply::Bulk(Some(b"size:2".to_vec())),
            Reply::Bulk(Some(
                b"bytes:576 counters:1152 hashes:8 hashwidth:64 capacity:100 size:2 ratio:0.005"
                    .to_vec(),
            )),
        ])),
    );
    expect(&mut conn, "CBF.COUNT k x", int(2));
    expect(&mut conn, "CBF.MADD k a b a x", ints(&[1, 1, 1, 1]));
    expect(&mut conn, "CBF.CARD k", int(6));
    expect(&mut conn, "CBF.COUNT k a", int(2));
    expect(&mut conn, "CBF.COUNT k x", int(3));
    expect(&mut conn, "CBF.COUNT k b", int(1));
    expect(&mut conn, "CBF.COUNT k nope", int(0));
    expect(&mut conn, "CBF.MADD m1 only", ints(&[1]));
    expect(&mut conn, "CBF.INFO m1", info(100, 672, 1, 1, Some(2)));

    // Non-scaling: full for new items, repeats still count; MADD stops at "full".
    expect(
        &mut conn,
        "CBF.INSERT ns CAPACITY 3 NONSCALING ITEMS a b c",
        ints(&[1, 1, 1]),
    );
    expect(
        &mut conn,
        "CBF.MADD ns a d e",
        Reply::Array(Some(vec![int(1), err("ERR non scaling filter is full")])),
    );
    expect(
        &mut conn,
        "CBF.ADD ns d",
        err("ERR non scaling filter is full"),
    );
    expect(&mut conn, "CBF.ADD ns a", int(1));
    expect(&mut conn, "CBF.CARD ns", int(5));
    expect(&mut conn, "CBF.INFO ns", info(3, 32 + 64 + 32, 1, 5, None));

    // Scaling: a filter of capacity 10 grows like BF (links 10/20/40/80, error halving).
    expect(&mut conn, "CBF.RESERVE g 0.01 10", ok());
    let mut cmd = vec!["CBF.MADD".to_string(), "g".into()];
    cmd.extend((0..100).map(|i| i.to_string()));
    assert_eq!(conn.call(&cmd).ints(), vec![1; 100]);
    let lines: Vec<String> = call(&mut conn, "CBF.DEBUG g")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    assert_eq!(lines[0], "size:100");
    let shapes: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(" size:").next().unwrap().to_string())
        .collect();
    assert_eq!(
        shapes,
        vec![
            "bytes:64 counters:128 hashes:8 hashwidth:64 capacity:10",
            "bytes:128 counters:256 hashes:9 hashwidth:64 capacity:20",
            "bytes:288 counters:576 hashes:10 hashwidth:64 capacity:40",
            "bytes:640 counters:1280 hashes:11 hashwidth:64 capacity:80",
        ]
    );
    let ratios: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.rsplit("ratio:").next().unwrap())
        .collect();
    assert_eq!(ratios, vec!["0.005", "0.0025", "0.00125", "0.000625"]);
    expect(&mut conn, "CBF.INFO g CAPACITY", ints(&[150]));
    expect(&mut conn, "CBF.INFO g FILTERS", ints(&[4]));
    expect(&mut conn, "CBF.INFO g ITEMS", ints(&[100]));
    expect(
        &mut conn,
        "CBF.INFO g SIZE",
        ints(&[32 + 4 * 64 + 64 + 128 + 288 + 640]),
    );
    for i in 0..100 {
        expect(&mut conn, &format!("CBF.EXISTS g {i}"), int(1));
    }
}

#[test]
fn insert_parsing_and_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    for (line, want) in [
        ("CBF.INSERT k FOO ITEMS a", "Unknown argument received"),
        ("CBF.INSERT k CAPACITY x ITEMS a", "Bad capacity"),
        ("CBF.INSERT k ERROR x ITEMS a", "Bad error rate"),
        ("CBF.INSERT k EXPANSION x ITEMS a", "Bad expansion"),
        ("CBF.INSERT k ERROR 2 ITEMS a", "Bad argument received"),
        ("CBF.INSERT k ERROR 0 ITEMS a", "Bad argument received"),
        ("CBF.INSERT k CAPACITY 0 ITEMS a", "Bad argument received"),
        (
            "CBF.INSERT k EXPANSION 40000 ITEMS a",
            "ERR expansion must be in the range [0, 32768]",
        ),
        ("CBF.INSERT k NOCREATE ITEMS a", NOT_FOUND),
    ] {
        expect(&mut conn, line, err(want));
    }
    expect(&mut conn, "EXISTS k", int(0));
    expect(
        &mut conn,
        "CBF.INSERT k CAPACITY 1000 ERROR 0.001 EXPANSION 4 ITEMS a b a",
        ints(&[1, 1, 1]),
    );
    expect(
        &mut conn,
        "CBF.INFO k",
        info(1000, 32 + 64 + 4 * 1984, 1, 3, Some(4)),
    );
    let line = call(&mut conn, "CBF.DEBUG k").array()[1].text();
    assert!(
        line.ends_with("capacity:1000 size:3 ratio:0.0005"),
        "{line}"
    );
    // First-letter dispatch, as BF.INSERT: c…, er…, e…, noc…, n…, i….
    expect(
        &mut conn,
        "CBF.INSERT k2 c 50 e 3 er 0.1 nocreatex i x",
        err(NOT_FOUND),
    );
    expect(&mut conn, "CBF.INSERT k2 c 50 e 3 er 0.1 i x", ints(&[1]));
    expect(
        &mut conn,
        "CBF.INFO k2",
        info(50, 32 + 64 + 4 * 40, 1, 1, Some(3)),
    );
    expect(&mut conn, "CBF.INSERT k3 EXPANSION 0 ITEMS x", ints(&[1]));
    expect(
        &mut conn,
        "CBF.INFO k3 EXPANSION",
        Reply::Array(Some(vec![Reply::Bulk(None)])),
    );
    // Existing filters ignore the creation options; NOCREATE on an existing key adds.
    expect(
        &mut conn,
        "CBF.INSERT k CAPACITY 5 NONSCALING NOCREATE ITEMS c",
        ints(&[1]),
    );
    expect(&mut conn, "CBF.INFO k CAPACITY", ints(&[1000]));
    expect(&mut conn, "CBF.COUNT k a", int(2));
}

#[test]
fn queries_on_missing_keys() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.EXISTS missing x", int(0));
    expect(&mut conn, "CBF.MEXISTS missing x y", ints(&[0, 0]));
    expect(&mut conn, "CBF.COUNT missing x", int(0));
    expect(&mut conn, "CBF.CARD missing", int(0));
    for line in [
        "CBF.INFO missing",
        "CBF.DEBUG missing",
        "CBF.SCANDUMP missing 0",
        "CBF.DEL missing x",
        "CBF.LOADCHUNK missing 5 abc",
    ] {
        expect(&mut conn, line, err(NOT_FOUND));
    }
    expect(&mut conn, "CBF.ADD k x", int(1));
    expect(
        &mut conn,
        "CBF.INFO k foo",
        err("Invalid information value"),
    );
    for (field, want) in [
        ("capacity", int(100)),
        ("Size", int(672)),
        ("FILTERS", int(1)),
        ("items", int(1)),
        ("expansion", int(2)),
    ] {
        expect(
            &mut conn,
            &format!("CBF.INFO k {field}"),
            Reply::Array(Some(vec![want])),
        );
    }
    expect(&mut conn, "CBF.EXISTS k x", int(1));
    expect(&mut conn, "CBF.MEXISTS k x y x", ints(&[1, 0, 1]));
    expect(&mut conn, "EXISTS missing", int(0));
}

#[test]
fn wrong_type_both_ways() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.ADD bf x", int(1));
    expect(&mut conn, "CF.ADD cf x", int(1));
    expect(&mut conn, "SET s v", ok());
    expect(&mut conn, "CBF.ADD cbf x", int(1));
    for key in ["bf", "cf", "s"] {
        for line in [
            "CBF.RESERVE {} 0.01 100",
            "CBF.ADD {} x",
            "CBF.MADD {} x",
            "CBF.INSERT {} ITEMS x",
            "CBF.INSERT {} NOCREATE ITEMS x",
            "CBF.DEL {} x",
            "CBF.INFO {}",
            "CBF.CARD {}",
            "CBF.DEBUG {}",
            "CBF.SCANDUMP {} 0",
            "CBF.LOADCHUNK {} 1 abc",
            "CBF.LOADCHUNK {} 5 abc",
        ] {
            expect(&mut conn, &line.replace("{}", key), err(WRONGTYPE));
        }
        // The read-only item queries answer 0, as BF.EXISTS does.
        expect(&mut conn, &format!("CBF.EXISTS {key} x"), int(0));
        expect(&mut conn, &format!("CBF.MEXISTS {key} x y"), ints(&[0, 0]));
        expect(&mut conn, &format!("CBF.COUNT {key} x"), int(0));
    }
    // BF and CF commands on a CBF key: their own rules.
    for line in [
        "BF.ADD cbf x",
        "BF.MADD cbf x",
        "BF.INSERT cbf ITEMS x",
        "BF.RESERVE cbf 0.01 100",
        "BF.INFO cbf",
        "BF.CARD cbf",
        "BF.DEBUG cbf",
        "BF.SCANDUMP cbf 0",
        "BF.LOADCHUNK cbf 1 abc",
        "CF.ADD cbf x",
        "CF.INSERT cbf ITEMS x",
        "CF.RESERVE cbf 100",
        "CF.INFO cbf",
        "CF.SCANDUMP cbf 0",
    ] {
        expect(&mut conn, line, err(WRONGTYPE));
    }
    expect(&mut conn, "BF.EXISTS cbf x", int(0));
    expect(&mut conn, "BF.MEXISTS cbf x", ints(&[0]));
    expect(&mut conn, "CF.EXISTS cbf x", int(0));
    expect(&mut conn, "CF.COUNT cbf x", int(0));
    expect(&mut conn, "CF.DEL cbf x", err("Not found"));
    expect(&mut conn, "GET cbf", err(WRONGTYPE));
    expect(&mut conn, "CBF.COUNT cbf x", int(1));
    expect(&mut conn, "CBF.CARD cbf", int(1));
}

#[test]
fn delete_semantics_end_to_end() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.ADD k x", int(1));
    expect(&mut conn, "CBF.ADD k x", int(1));
    expect(&mut conn, "CBF.ADD k y", int(1));
    expect(&mut conn, "CBF.DEL k x", int(1));
    expect(&mut conn, "CBF.EXISTS k x", int(1));
    expect(&mut conn, "CBF.COUNT k x", int(1));
    expect(&mut conn, "CBF.CARD k", int(2));
    expect(&mut conn, "CBF.DEL k x", int(1));
    expect(&mut conn, "CBF.EXISTS k x", int(0));
    expect(&mut conn, "CBF.COUNT k x", int(0));
    expect(&mut conn, "CBF.CARD k", int(1));
    let before = snapshot(&mut conn, "k");
    expect(&mut conn, "CBF.DEL k x", int(0));
    expect(&mut conn, "CBF.DEL k never-added", int(0));
    assert_eq!(
        snapshot(&mut conn, "k"),
        before,
        "a refused delete changes nothing"
    );
    expect(&mut conn, "CBF.EXISTS k y", int(1));
    expect(&mut conn, "CBF.DEL k y", int(1));
    expect(&mut conn, "CBF.CARD k", int(0));
    let dump = scandump(&mut conn, "CBF.SCANDUMP", "k");
    assert!(dump[1].1.as_ref().unwrap().iter().all(|&b| b == 0));

    // A deleted item frees its link's capacity.
    expect(
        &mut conn,
        "CBF.INSERT ns CAPACITY 2 NONSCALING ITEMS a b",
        ints(&[1, 1]),
    );
    expect(
        &mut conn,
        "CBF.ADD ns c",
        err("ERR non scaling filter is full"),
    );
    expect(&mut conn, "CBF.DEL ns a", int(1));
    expect(&mut conn, "CBF.ADD ns c", int(1));

    // Saturation: a counter at 15 stays 15; deletes still count down CARD.
    for _ in 0..20 {
        expect(&mut conn, "CBF.ADD hot h", int(1));
    }
    expect(&mut conn, "CBF.COUNT hot h", int(15));
    for _ in 0..20 {
        expect(&mut conn, "CBF.DEL hot h", int(1));
    }
    expect(&mut conn, "CBF.COUNT hot h", int(15));
    expect(&mut conn, "CBF.EXISTS hot h", int(1));
    expect(&mut conn, "CBF.CARD hot", int(0));
}

#[test]
fn delete_refuses_when_several_links_test_positive() {
    // Two links whose counters are all 1 (written with LOADCHUNK): every item tests
    // positive in both, so no delete may touch either.
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.RESERVE src 0.01 2 EXPANSION 1", ok());
    expect(&mut conn, "CBF.MADD src a b c", ints(&[1, 1, 1]));
    let dump = scandump(&mut conn, "CBF.SCANDUMP", "src");
    assert_eq!(dump.len(), 4, "header, two links, end");
    let mut filled = dump.clone();
    for (_, data) in filled.iter_mut().skip(1) {
        if let Some(data) = data {
            data.iter_mut().for_each(|b| *b = 0x11);
        }
    }
    loadchunks(&mut conn, "CBF.LOADCHUNK", "k", &filled);
    expect(&mut conn, "CBF.COUNT k anything", int(2));
    let before = snapshot(&mut conn, "k");
    expect(&mut conn, "CBF.DEL k anything", int(0));
    expect(&mut conn, "CBF.DEL k a", int(0));
    assert_eq!(snapshot(&mut conn, "k"), before);
    // An item that tests positive in both links goes to the newest: CARD and COUNT
    // grow, the newest link's counters and count change, the oldest link's do not.
    let (links_before, items_before) = links_of(&mut conn, "k");
    expect(&mut conn, "CBF.ADD k new", int(1));
    expect(&mut conn, "CBF.COUNT k new", int(3));
    expect(&mut conn, "CBF.CARD k", int(4));
    let (links_after, items_after) = links_of(&mut conn, "k");
    assert_eq!(
        links_after[0], links_before[0],
        "the oldest link's counters"
    );
    assert_eq!(items_after[0], items_before[0], "the oldest link's count");
    assert_eq!(
        items_after[1],
        items_before[1] + 1,
        "the newest link's count"
    );
    let raised = counters_raised(&links_before[1], &links_after[1]);
    assert!(
        (1..=hashes_of(&mut conn, "k", 1)).contains(&raised),
        "{raised} counters"
    );
}

/// The key's filter as the core sees it, rebuilt from its full SCANDUMP.
fn model_of(conn: &mut RawConnection, key: &str) -> CountingChain {
    let dump = scandump(conn, "CBF.SCANDUMP", key);
    let header = dump[0].1.clone().expect("a header");
    let mut model = counting_dump::chain_from_header(&header, u64::MAX).expect("a valid header");
    for (iter, data) in dump.iter().skip(1).filter(|(iter, _)| *iter != 0) {
        counting_dump::load_chunk(&mut model, *iter, data.as_deref().unwrap_or_default())
            .expect("a chunk of SCANDUMP");
    }
    model
}

/// For each item: DEL, ADD, EXISTS and COUNT on the key, each reply the one the core
/// gives on `model`; at the end the key's SCANDUMP is the model's.
fn replay_on_model(conn: &mut RawConnection, key: &str, model: &mut CountingChain, items: &[&str]) {
    for item in items {
        let pair = model.hash(item.as_bytes());
        let deleted = model.delete(pair);
        assert_eq!(
            conn.call(&["CBF.DEL", key, item]),
            int(i64::from(deleted)),
            "DEL {item}"
        );
        let want = match model.add(pair, DEFAULT_MAX_FILTER_BYTES) {
            CountingAdd::Added => int(1),
            CountingAdd::Full => err("ERR non scaling filter is full"),
            CountingAdd::GrowFailed(_) => err("ERR problem inserting into filter"),
        };
        assert_eq!(conn.call(&["CBF.ADD", key, item]), want, "ADD {item}");
        let exists = i64::from(model.contains(pair));
        assert_eq!(
            conn.call(&["CBF.EXISTS", key, item]),
            int(exists),
            "EXISTS {item}"
        );
        let count = model.count(pair) as i64;
        assert_eq!(
            conn.call(&["CBF.COUNT", key, item]),
            int(count),
            "COUNT {item}"
        );
    }
    assert_eq!(&model_of(conn, key), model, "{key} after the commands");
}

/// Per link, oldest first: the counter array (from the SCANDUMP chunks) and the item count
/// (from the SCANDUMP header).
fn links_of(conn: &mut RawConnection, key: &str) -> (Vec<Vec<u8>>, Vec<u64>) {
    let dump = scandump(conn, "CBF.SCANDUMP", key);
    let header = dump[0].1.clone().expect("a header");
    let nlinks = u32::from_le_bytes(header[12..16].try_into().unwrap()) as usize;
    let items = (0..nlinks)
        .map(|i| {
            let at = 24 + 52 * i + 16;
            u64::from_le_bytes(header[at..at + 8].try_into().unwrap())
        })
        .collect();
    // Every link here fits one chunk.
    let arrays: Vec<Vec<u8>> = dump[1..dump.len() - 1]
        .iter()
        .map(|(_, data)| data.clone().unwrap_or_default())
        .collect();
    assert_eq!(arrays.len(), nlinks, "one chunk per link");
    (arrays, items)
}

/// The hash count of link `link` (from the SCANDUMP header).
fn hashes_of(conn: &mut RawConnection, key: &str, link: usize) -> usize {
    let header = conn.call(&["CBF.SCANDUMP", key, "0"]).array()[1].bytes();
    let at = 24 + 52 * link + 40;
    u32::from_le_bytes(header[at..at + 4].try_into().unwrap()) as usize
}

/// How many 4-bit counters went up by exactly one from `before` to `after`; panics if any
/// changed otherwise.
fn counters_raised(before: &[u8], after: &[u8]) -> usize {
    assert_eq!(before.len(), after.len());
    let mut raised = 0;
    for (&b, &a) in before.iter().zip(after) {
        for shift in [0, 4] {
            let (old, new) = ((b >> shift) & 0xf, (a >> shift) & 0xf);
            if new == old + 1 {
                raised += 1;
            } else {
                assert_eq!(new, old, "a counter changed by more than one");
            }
        }
    }
    raised
}

/// The link rule (COMPAT): ADD increments the newest link in which the item already
/// tests positive, and a new item goes to the newest link — checked link by link.
#[test]
fn add_increments_the_newest_link_holding_the_item() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.RESERVE k 0.01 2 EXPANSION 1", ok());
    expect(&mut conn, "CBF.MADD k a b", ints(&[1, 1]));
    expect(&mut conn, "CBF.ADD k c", int(1));
    let (before, items) = links_of(&mut conn, "k");
    assert_eq!(
        items,
        vec![2, 1],
        "a and b in the first link, c in the second"
    );
    // `a` tests positive only in the oldest link: that link counts it again.
    expect(&mut conn, "CBF.ADD k a", int(1));
    let (after, items) = links_of(&mut conn, "k");
    assert_eq!(items, vec![3, 1]);
    assert_eq!(after[1], before[1], "the newest link is untouched");
    assert_eq!(
        counters_raised(&before[0], &after[0]),
        hashes_of(&mut conn, "k", 0)
    );
    // `c` tests positive only in the newest link.
    expect(&mut conn, "CBF.ADD k c", int(1));
    let (again, items) = links_of(&mut conn, "k");
    assert_eq!(items, vec![3, 2]);
    assert_eq!(again[0], after[0], "the oldest link is untouched");
    assert_eq!(
        counters_raised(&after[1], &again[1]),
        hashes_of(&mut conn, "k", 1)
    );
    expect(&mut conn, "CBF.COUNT k a", int(2));
    expect(&mut conn, "CBF.COUNT k c", int(2));
}

#[test]
fn scandump_and_loadchunk_replies() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CBF.RESERVE k 0.1 10", ok());
    expect(&mut conn, "CBF.ADD k item1", int(1));
    let header = call(&mut conn, "CBF.SCANDUMP k 0").array();
    assert_eq!(header[0], int(1));
    assert_eq!(
        hex::encode(header[1].bytes()),
        "434246310100000000000000010000000500000002000000\
         200000000000000040000000000000000100000000000000\
         9a9999999999a93f4af7d49edef01840050000000a00000000000000"
    );
    let chunk = call(&mut conn, "CBF.SCANDUMP k 1").array();
    assert_eq!(chunk[0], int(33));
    let mut want = vec![0u8; 32];
    want[0] = 0x01;
    want[5] = 0x10;
    want[15] = 0x10;
    want[21] = 0x01;
    want[26] = 0x10;
    assert_eq!(chunk[1].bytes(), want);
    expect(
        &mut conn,
        "CBF.SCANDUMP k 20",
        Reply::Array(Some(vec![int(33), Reply::Bulk(Some(want[19..].to_vec()))])),
    );
    for iter in ["33", "-1", "999999"] {
        expect(
            &mut conn,
            &format!("CBF.SCANDUMP k {iter}"),
            Reply::Array(Some(vec![int(0), Reply::Bulk(Some(Vec::new()))])),
        );
    }
    expect(
        &mut conn,
        "CBF.SCANDUMP k x",
        err("Second argument must be numeric"),
    );
    expect(&mut conn, "CBF.SCANDUMP missing x", err(NOT_FOUND));
    expect(
        &mut conn,
        "CBF.LOADCHUNK k x abc",
        err("ERR Second argument must be numeric"),
    );
    expect(
        &mut conn,
        "CBF.LOADCHUNK missing x abc",
        err("ERR Second argument must be numeric"),
    );
    // The header sent to an existing key is a chunk at iterator 1: refused, not applied.
    let h = header[1].bytes();
    assert_eq!(
        conn.call(&[&b"CBF.LOADCHUNK"[..], b"k", b"1", &h]),
        err(BAD_DATA)
    );
    expect(
        &mut conn,
        "CBF.LOADCHUNK k 4 abcd",
        err("ERR invalid offset - no link found"),
    );
    expect(
        &mut conn,
        "CBF.LOADCHUNK k 34 a",
        err("ERR invalid offset - no link found"),
    );
    expect(
        &mut conn,
        "CBF.LOADCHUNK k 33 abc",
        Reply::Simple("OK".into()),
    );
    let long = vec![b'z'; 33];
    assert_eq!(
        conn.call(&[&b"CBF.LOADCHUNK"[..], b"k", b"34", &long]),
        err("ERR invalid chunk - Too big for current filter")
    );
    // Round trip into a new key, then the same answers.
    let dump = scandump(&mut conn, "CBF.SCANDUMP", "k");
    loadchunks(&mut conn, "CBF.LOADCHUNK", "copy", &dump);
    assert_eq!(snapshot(&mut conn, "copy"), snapshot(&mut conn, "k"));
}

#[test]
fn scandump_to_another_server_and_large_chunks() {
    let source = Server::start();
    let target = Server::start();
    let mut src = source.raw();
    let mut dst = target.raw();
    build_rich_filter(&mut src, "rich");
    // 0.01 / 5M non-scaling: a 23.96 MB counter array → a 16 MiB chunk and the rest.
    expect(&mut src, "CBF.RESERVE big 0.01 5000000 NONSCALING", ok());
    expect(&mut src, "CBF.MADD big a b c a", ints(&[1, 1, 1, 1]));
    for key in ["rich", "big"] {
        let dump = scandump(&mut src, "CBF.SCANDUMP", key);
        if key == "big" {
            let lens: Vec<usize> = dump
                .iter()
                .map(|(_, d)| d.as_ref().unwrap().len())
                .collect();
            let bytes = call(&mut src, "CBF.DEBUG big").array()[1].text();
            let bytes: usize = bytes[6..bytes.find(' ').unwrap()].parse().unwrap();
            assert_eq!(lens, vec![76, 16 << 20, bytes - (16 << 20), 0]);
        }
        loadchunks(&mut dst, "CBF.LOADCHUNK", key, &dump);
        assert_eq!(snapshot(&mut dst, key), snapshot(&mut src, key), "{key}");
        assert_eq!(counts(&mut dst, key), counts(&mut src, key), "{key}");
    }
    expect(&mut dst, "CBF.COUNT big a", int(2));
    // The restored filter keeps working identically.
    for conn in [&mut src, &mut dst] {
        expect(conn, "CBF.DEL rich hot", int(1));
        expect(conn, "CBF.ADD rich later", int(1));
    }
    assert_eq!(snapshot(&mut dst, "rich"), snapshot(&mut src, "rich"));
}

#[test]
fn hostile_loadchunk_input_is_refused_and_the_server_lives() {
    let server = Server::start();
    let mut conn = server.raw();
    build_rich_filter(&mut conn, "src");
    let good = call(&mut conn, "CBF.SCANDUMP src 0").array()[1].bytes();
    let links = (good.len() - 24) / 52;
    assert!(links >= 3);
    let load = |conn: &mut RawConnection, key: &str, data: &[u8]| {
        conn.call(&[&b"CBF.LOADCHUNK"[..], key.as_bytes(), b"1", data])
    };
    let patched = |at: usize, bytes: &[u8]| {
        let mut h = good.clone();
        h[at..at + bytes.len()].copy_from_slice(bytes);
        h
    };
    let bf_header = {
        expect(&mut conn, "BF.RESERVE bf 0.01 100", ok());
        call(&mut conn, "BF.SCANDUMP bf 0").array()[1].bytes()
    };
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short", good[..23].to_vec()),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("bf header", bf_header),
        ("magic", patched(0, b"CBF2")),
        ("total items", patched(4, &u64::MAX.to_le_bytes())),
        ("no links", patched(12, &0u32.to_le_bytes())),
        ("link count", patched(12, &u32::MAX.to_le_bytes())),
        ("options", patched(16, &15u32.to_le_bytes())),
        (
            "non-scaling, several links",
            patched(16, &13u32.to_le_bytes()),
        ),
        ("growth", patched(20, &u32::MAX.to_le_bytes())),
        ("counter bytes", patched(24, &u64::MAX.to_le_bytes())),
        ("huge bytes and bits", {
            let mut h = good.clone();
            h[24 + 7] = 0x03;
            h[24 + 15] = 0x18;
            h
        }),
        ("bits", patched(32, &8u64.to_le_bytes())),
        ("error", patched(48, &2.0f64.to_le_bytes())),
        ("bpe", patched(56, &f64::NAN.to_le_bytes())),
        ("hashes", patched(64, &1_000_000u32.to_le_bytes())),
        ("entries", patched(68, &0u64.to_le_bytes())),
    ];
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 52]);
    cases.push(("extra bytes", longer));
    for (what, data) in &cases {
        assert_eq!(load(&mut conn, "victim", data), err(BAD_DATA), "{what}");
        expect(&mut conn, "EXISTS victim", int(0));
    }
    // A consistent header beyond the memory ceiling (4 GiB by default): 10^9 items at 1%
    // need 4.8 GB of counters. The same serialisation for 1000 items loads.
    let header_for = |entries: u64| {
        let shape = LinkShape::new(entries, 0.01, 13).unwrap();
        let mut h = b"CBF1".to_vec();
        h.extend_from_slice(&0u64.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&13u32.to_le_bytes());
        h.extend_from_slice(&2u32.to_le_bytes());
        h.extend_from_slice(&(4 * shape.bytes).to_le_bytes());
        h.extend_from_slice(&shape.bits.to_le_bytes());
        h.extend_from_slice(&0u64.to_le_bytes());
        h.extend_from_slice(&shape.error.to_le_bytes());
        h.extend_from_slice(&shape.bpe.to_le_bytes());
        h.extend_from_slice(&shape.hashes.to_le_bytes());
        h.extend_from_slice(&shape.entries.to_le_bytes());
        h
    };
    assert_eq!(
        load(&mut conn, "victim", &header_for(1_000_000_000)),
        err(BAD_DATA)
    );
    expect(&mut conn, "EXISTS victim", int(0));
    assert_eq!(load(&mut conn, "victim", &header_for(1000)), ok());
    expect(&mut conn, "CBF.INFO victim CAPACITY", ints(&[1000]));
    expect(&mut conn, "DEL victim", int(1));

    // Pseudo-random headers and byte flips of a good one: refused or valid, never fatal.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut accepted = 0;
    for round in 0..300 {
        let mut data = if round % 2 == 0 {
            good.clone()
        } else {
            let len = (next() % 200) as usize;
            let mut d = b"CBF1".to_vec();
            d.extend((0..len).map(|_| next() as u8));
            d
        };
        for _ in 0..(1 + next() % 4) {
            let at = (next() as usize) % data.len();
            data[at] = next() as u8;
        }
        let key = format!("fuzz{round}");
        // The core decides the same way, and predicts every reply on what it accepted.
        let model = counting_dump::chain_from_header(&data, DEFAULT_MAX_FILTER_BYTES);
        match load(&mut conn, &key, &data) {
            Reply::Simple(s) if s == "OK" => {
                accepted += 1;
                let mut model = model.expect("the server accepted a header the core refuses");
                assert_eq!(model_of(&mut conn, &key), model, "round {round}");
                replay_on_model(&mut conn, &key, &mut model, &["x", "x", "y"]);
            }
            reply => {
                assert_eq!(reply, err(BAD_DATA), "round {round}");
                assert!(model.is_err(), "round {round}: the core accepts it");
            }
        }
    }
    // Flips of the growth field, for one, keep a header valid.
    assert!(accepted > 0);

    // Hostile chunks on a real filter.
    for (iter, len, want) in [
        ("-1", 1, BAD_DATA),
        ("0", 0, BAD_DATA),
        ("3", 5, BAD_DATA),
        (
            "9223372036854775807",
            1,
            "ERR invalid offset - no link found",
        ),
        ("-9223372036854775808", 1, BAD_DATA),
    ] {
        let data = vec![0xff; len];
        assert_eq!(
            conn.call(&[&b"CBF.LOADCHUNK"[..], b"src", iter.as_bytes(), &data]),
            err(want),
            "{iter}/{len}"
        );
    }
    // Arbitrary counter bytes are just counts: the filter keeps answering.
    let garbage: Vec<u8> = (0..80).map(|_| next() as u8).collect();
    assert_eq!(
        conn.call(&[&b"CBF.LOADCHUNK"[..], b"src", b"81", &garbage]),
        ok()
    );
    let mut model = model_of(&mut conn, "src");
    let items: Vec<String> = (0..50).map(|i| format!("item:{i}")).collect();
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    replay_on_model(&mut conn, "src", &mut model, &items);
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
    expect(&mut conn, "DEBUG RELOAD", ok());
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}
