//! BF.MERGE: unions of 10,000-item filters at the rate their fill implies, scaled filters
//! of one and three links, OVERRIDE, INTERSECT, every error, RESP3, events, key positions.

use super::{add_all, answers, items, refused_without_change};
use crate::support::{call, scandump, RawConnection, Reply, Server};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const MULTI_LINK: &str = "ERR INTERSECT needs filters of a single link: ";
const SHAPE: &str =
    "ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: ";

/// The false-positive rate `redbloom inspect` estimates from a SCANDUMP: per link
/// fill^hashes, compounded 1 − Π(1 − estimate).
fn estimated_fp(conn: &mut RawConnection, key: &str) -> f64 {
    let hashes: Vec<i32> = call(conn, &format!("BF.DEBUG {key}")).array()[1..]
        .iter()
        .map(|line| {
            let text = line.text();
            let field = text.split(' ').find(|f| f.starts_with("hashes:")).unwrap();
            field["hashes:".len()..].parse().unwrap()
        })
        .collect();
    assert_eq!(hashes.len(), 1, "one link");
    let dump = scandump(conn, "BF.SCANDUMP", key);
    let data: Vec<u8> = dump[1..]
        .iter()
        .filter_map(|(_, d)| d.clone())
        .flatten()
        .collect();
    let ones: u64 = data.iter().map(|b| u64::from(b.count_ones())).sum();
    let fill = ones as f64 / (data.len() * 8) as f64;
    fill.powi(hashes[0])
}

fn info(conn: &mut RawConnection, key: &str, field: &str) -> i64 {
    call(conn, &format!("BF.INFO {key} {field}")).ints()[0]
}

#[test]
fn union_of_two_10k_filters_answers_all_20k_at_the_estimated_rate() {
    let server = Server::start();
    let mut conn = server.raw();
    for layout in ["", " BLOCKED"] {
        call(&mut conn, "FLUSHALL");
        for key in ["a", "b"] {
            let reserve = format!("BF.RESERVE {key} 0.01 10000{layout}");
            assert_eq!(call(&mut conn, &reserve), Reply::ok());
        }
        let (left, right) = (items("item:", 0..10_000), items("item:", 10_000..20_000));
        add_all(&mut conn, &["BF.MADD", "a"], &left);
        add_all(&mut conn, &["BF.MADD", "b"], &right);
        let dump_a = conn.call(&["DUMP", "a"]);
        assert_eq!(call(&mut conn, "BF.MERGE u 2 a b"), Reply::ok());
        let all = items("item:", 0..20_000);
        assert!(answers(&mut conn, "BF.MEXISTS", "u", &all)
            .iter()
            .all(|&a| a == 1));
        assert_eq!(info(&mut conn, "u", "FILTERS"), 1);
        let card = call(&mut conn, "BF.CARD u").int();
        assert!((19_600..=20_400).contains(&card), "{layout}: {card}");
        let probes = items("absent:", 0..100_000);
        let hits = answers(&mut conn, "BF.MEXISTS", "u", &probes);
        let measured = hits.iter().sum::<i64>() as f64 / probes.len() as f64;
        let estimate = estimated_fp(&mut conn, "u");
        assert!(
            measured <= 1.5 * estimate && measured >= estimate / 1.5,
            "{layout}: measured {measured}, estimated {estimate}"
        );
        // The sources are untouched.
        assert_eq!(conn.call(&["DUMP", "a"]), dump_a, "{layout}");
    }
}

#[test]
fn scaled_filters_of_one_and_three_links_merge_link_by_link() {
    let server = Server::start();
    let mut conn = server.raw();
    for key in ["one", "three"] {
        assert_eq!(
            call(&mut conn, &format!("BF.RESERVE {key} 0.01 100 EXPANSION 2")),
            Reply::ok()
        );
    }
    let (few, many) = (items("f", 0..50), items("m", 0..600));
    add_all(&mut conn, &["BF.MADD", "one"], &few);
    add_all(&mut conn, &["BF.MADD", "three"], &many);
    assert_eq!(info(&mut conn, "three", "FILTERS"), 3);
    assert_eq!(call(&mut conn, "BF.MERGE m 2 one three"), Reply::ok());
    assert_eq!(info(&mut conn, "m", "FILTERS"), 3);
    assert_eq!(
        info(&mut conn, "m", "CAPACITY"),
        info(&mut conn, "three", "CAPACITY")
    );
    let all: Vec<String> = few.iter().chain(&many).cloned().collect();
    assert!(answers(&mut conn, "BF.MEXISTS", "m", &all)
        .iter()
        .all(|&a| a == 1));
    // Links 2 and 3 only `three` has: copied with their counts; link 1 estimated.
    let merged = call(&mut conn, "BF.DEBUG m").array();
    let three = call(&mut conn, "BF.DEBUG three").array();
    assert_eq!(merged[2..], three[2..]);
    let size = |line: &Reply| -> i64 {
        let text = line.text();
        let f = text.split(' ').find(|f| f.starts_with("size:")).unwrap();
        f[5..].parse().unwrap()
    };
    let first = size(&merged[1]);
    assert!((100..=150).contains(&first), "{first}");
    assert_eq!(
        call(&mut conn, "BF.CARD m").int(),
        first + size(&three[2]) + size(&three[3])
    );
    // The merged filter keeps scaling as any other.
    add_all(&mut conn, &["BF.MADD", "m"], &items("x", 0..2_000));
    assert!(info(&mut conn, "m", "FILTERS") > 3);
}

#[test]
fn override_replaces_the_destination_and_without_it_the_destination_is_merged_in() {
    let server = Server::start();
    let mut conn = server.raw();
    for key in ["a", "b", "d"] {
        assert_eq!(
            call(&mut conn, &format!("BF.RESERVE {key} 0.01 1000")),
            Reply::ok()
        );
    }
    let (xa, xb, xd) = (items("a", 0..300), items("b", 0..300), items("d", 0..300));
    add_all(&mut conn, &["BF.MADD", "a"], &xa);
    add_all(&mut conn, &["BF.MADD", "b"], &xb);
    add_all(&mut conn, &["BF.MADD", "d"], &xd);
    // A new destination: a copy of its one source, byte for byte.
    assert_eq!(call(&mut conn, "BF.MERGE new 1 a"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "new"]), conn.call(&["DUMP", "a"]));
    // The destination is merged in.
    assert_eq!(call(&mut conn, "BF.MERGE d 1 a"), Reply::ok());
    for set in [&xa, &xd] {
        assert!(answers(&mut conn, "BF.MEXISTS", "d", set)
            .iter()
            .all(|&x| x == 1));
    }
    // Named among the sources it counts once: the same bytes as without.
    assert_eq!(call(&mut conn, "BF.MERGE e1 2 a b"), Reply::ok());
    assert_eq!(call(&mut conn, "BF.MERGE a2 1 a"), Reply::ok());
    assert_eq!(call(&mut conn, "BF.MERGE a2 2 a2 b"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "a2"]), conn.call(&["DUMP", "e1"]));
    // OVERRIDE: replaced, whatever its shape.
    assert_eq!(
        call(&mut conn, "BF.RESERVE other 0.2 10 NONSCALING"),
        Reply::ok()
    );
    assert_eq!(call(&mut conn, "BF.MERGE other 1 b OVERRIDE"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "other"]), conn.call(&["DUMP", "b"]));
    assert_eq!(call(&mut conn, "BF.MERGE d 1 b override"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "d"]), conn.call(&["DUMP", "b"]));
}

#[test]
fn intersect_keeps_what_every_filter_holds() {
    let server = Server::start();
    let mut conn = server.raw();
    for key in ["a", "b", "grown"] {
        assert_eq!(
            call(&mut conn, &format!("BF.RESERVE {key} 0.01 5000")),
            Reply::ok()
        );
    }
    add_all(&mut conn, &["BF.MADD", "a"], &items("i", 0..3_000));
    add_all(&mut conn, &["BF.MADD", "b"], &items("i", 2_000..5_000));
    add_all(&mut conn, &["BF.MADD", "grown"], &items("g", 0..6_000));
    assert_eq!(
        call(&mut conn, "BF.MERGE both 2 a b INTERSECT"),
        Reply::ok()
    );
    let common = items("i", 2_000..3_000);
    assert!(answers(&mut conn, "BF.MEXISTS", "both", &common)
        .iter()
        .all(|&x| x == 1));
    let others: Vec<String> = items("i", 0..2_000)
        .into_iter()
        .chain(items("i", 3_000..5_000))
        .collect();
    let strays: i64 = answers(&mut conn, "BF.MEXISTS", "both", &others)
        .iter()
        .sum();
    assert!(strays < 80, "{strays}");
    assert!(call(&mut conn, "BF.CARD both").int() <= 3_000);
    let multi_link = format!("{MULTI_LINK}grown");
    refused_without_change(
        &mut conn,
        "both",
        &[(
            vec!["BF.MERGE", "both", "2", "a", "grown", "INTERSECT"],
            &multi_link,
        )],
    );
}

#[test]
fn every_error_leaves_the_destination_byte_identical() {
    let server = Server::start();
    let mut conn = server.raw();
    for line in [
        "BF.RESERVE a 0.01 1000",
        "BF.RESERVE b 0.01 1000",
        "BF.RESERVE d 0.01 1000",
        "BF.RESERVE rate 0.001 1000",
        "BF.RESERVE cap 0.01 2000",
        "BF.RESERVE exp 0.01 1000 EXPANSION 4",
        "BF.RESERVE flat 0.01 1000 NONSCALING",
        "BF.RESERVE blk 0.01 1000 BLOCKED",
        "CF.RESERVE cf 1000",
        "SET str x",
    ] {
        assert!(!matches!(call(&mut conn, line), Reply::Error(_)), "{line}");
    }
    add_all(&mut conn, &["BF.MADD", "a"], &items("a", 0..100));
    add_all(&mut conn, &["BF.MADD", "d"], &items("d", 0..100));
    let shape = |key: &str| format!("{SHAPE}{key}");
    let (rate, cap, exp, flat, blk, d, a) = (
        shape("rate"),
        shape("cap"),
        shape("exp"),
        shape("flat"),
        shape("blk"),
        shape("d"),
        shape("a"),
    );
    let arity = "ERR wrong number of arguments for 'bf.merge' command";
    let numkeys = "ERR numkeys must be a positive integer";
    let mismatch = "ERR numkeys does not match the keys given";
    for dest in ["d", "absent"] {
        let cases: Vec<(Vec<&str>, &str)> = vec![
            (vec!["BF.MERGE", dest, "1"], arity),
            (vec!["BF.MERGE", dest, "x", "a"], numkeys),
            (vec!["BF.MERGE", dest, "0", "a"], numkeys),
            (vec!["BF.MERGE", dest, "-1", "a"], numkeys),
            (vec!["BF.MERGE", dest, "3", "a", "b"], mismatch),
            (vec!["BF.MERGE", dest, "1", "a", "b"], mismatch),
            (vec!["BF.MERGE", dest, "1", "a", "OVERRIDE", "x"], mismatch),
            (vec!["BF.MERGE", dest, "2", "a", "nosuch"], "ERR not found"),
            (vec!["BF.MERGE", dest, "2", "a", "str"], WRONGTYPE),
            (vec!["BF.MERGE", dest, "2", "a", "cf"], WRONGTYPE),
            (vec!["BF.MERGE", dest, "3", "a", "b", "rate"], &rate),
            (vec!["BF.MERGE", dest, "2", "a", "cap"], &cap),
            (vec!["BF.MERGE", dest, "2", "a", "exp", "OVERRIDE"], &exp),
            (vec!["BF.MERGE", dest, "2", "a", "flat"], &flat),
            (vec!["BF.MERGE", dest, "2", "blk", "a"], &a),
            (vec!["BF.MERGE", dest, "2", "a", "blk"], &blk),
        ];
        refused_without_change(&mut conn, dest, &cases);
    }
    // A destination of another type or shape (this one is merged in: no OVERRIDE).
    refused_without_change(
        &mut conn,
        "str",
        &[(vec!["BF.MERGE", "str", "1", "a"], WRONGTYPE)],
    );
    refused_without_change(&mut conn, "d", &[(vec!["BF.MERGE", "d", "1", "rate"], &d)]);
    assert_eq!(conn.call(&["EXISTS", "absent"]), Reply::Int(0));
}

#[test]
fn replies_in_resp3_events_of_the_three_merges_and_key_positions() {
    let server = Server::start();
    let mut conn = server.raw();
    let mut conn3 = server.raw3();
    assert_eq!(call(&mut conn, "BF.ADD a x"), Reply::Int(1));
    for c in [&mut conn, &mut conn3] {
        assert_eq!(c.call_raw(&["BF.MERGE", "d", "1", "a"]), b"+OK\r\n");
        assert_eq!(
            c.call_raw(&["BF.MERGE", "d", "1", "nosuch"]),
            b"-ERR not found\r\n"
        );
    }
    assert_eq!(conn3.call_raw(&["BF.EXISTS", "d", "x"]), b"#t\r\n");
    assert_eq!(
        call(&mut conn, "COMMAND GETKEYS BF.MERGE d 2 a b OVERRIDE"),
        Reply::bulk_array(&["d", "a", "b"])
    );
    assert_eq!(
        call(&mut conn, "CONFIG SET notify-keyspace-events KEd"),
        Reply::ok()
    );
    let mut sub = server.raw();
    for family in ["bf", "cbf", "cf"] {
        let channel = format!("__keyevent@0__:{family}.merge");
        sub.call(&["SUBSCRIBE", &channel]);
    }
    call(&mut conn, "CBF.ADD c x");
    call(&mut conn, "CF.ADD f x");
    call(&mut conn, "BF.MERGE d 1 nosuch"); // refused: no event
    for (command, family) in [
        ("BF.MERGE e 1 a", "bf"),
        ("CBF.MERGE e2 1 c", "cbf"),
        ("CF.MERGE e3 1 f", "cf"),
    ] {
        assert_eq!(call(&mut conn, command), Reply::ok());
        let key = command.split(' ').nth(1).unwrap();
        let channel = format!("__keyevent@0__:{family}.merge");
        assert_eq!(
            sub.read_reply(),
            Reply::bulk_array(&["message", &channel, key])
        );
    }
}
