//! XF.* commands: every added item found, absent ones within the rate, INFO equal to the
//! core's figures, delete and count, exact errors, RESP3, events, COPY, the ceiling,
//! SCANDUMP/LOADCHUNK all or nothing.

use super::{info_reply, items, madd, mexists, reference, reference_default, with_items};
use crate::support::ceiling::TOO_LARGE;
use crate::support::replies::{err, int, ints, ok};
use crate::support::{call, expect, loadchunks, scandump, RawConnection, Reply, Server};
use redbloom_core::fmt::shortest;

const INCOMPLETE: &str = "ERR the filter is incomplete: XF.LOADCHUNK has not loaded all of it";

#[test]
fn added_items_are_found_and_absent_ones_within_the_rate() {
    let server = Server::start();
    let mut conn = server.raw();
    let added = items("member:", 0..50_000);
    // Created on first use, with the defaults.
    expect(&mut conn, "XF.ADD k member:0", int(1));
    madd(&mut conn, "k", &added[1..]);
    assert_eq!(mexists(&mut conn, "k", &added), vec![1; added.len()]);
    expect(&mut conn, "XF.EXISTS k member:77", int(1));
    expect(&mut conn, "XF.CARD k", int(50_000));
    expect(&mut conn, "TYPE k", Reply::Simple("RBexpandF".into()));
    // The server's filter is the core's, built from the same items in the same order.
    let core = reference_default(&added);
    expect(&mut conn, "XF.INFO k", info_reply(&core));
    let i = core.info();
    assert!(i.fp_bound <= 0.01, "{i:?}");
    // 200k absent items: at most 1 % answer 1.
    let positives: i64 = mexists(&mut conn, "k", &items("absent:", 0..200_000))
        .iter()
        .sum();
    assert!(
        positives as f64 / 200_000.0 <= 0.01,
        "{positives} positives"
    );
    // One field at a time, by name (any case).
    expect(
        &mut conn,
        "XF.INFO k items",
        Reply::Array(Some(vec![Reply::Int(50_000)])),
    );
    expect(
        &mut conn,
        "XF.INFO k BOUND",
        Reply::Array(Some(vec![Reply::bulk(shortest(i.fp_bound))])),
    );
    expect(
        &mut conn,
        "XF.INFO k Size",
        Reply::Array(Some(vec![Reply::Int(i.bytes as i64)])),
    );
    let debug = call(&mut conn, "XF.DEBUG k").text();
    assert_eq!(
        debug,
        format!(
            "items:50000 entries:{} partitions:{} expansions:{} capacity:{} bytes:{} \
             error:0.01 bound:{}",
            i.entries,
            i.partitions,
            i.expansions,
            i.capacity,
            i.bytes,
            shortest(i.fp_bound)
        )
    );
    // MEMORY USAGE counts the filter's allocations.
    let usage = call(&mut conn, "MEMORY USAGE k").int();
    assert!(usage as u64 >= i.bytes, "{usage} < {}", i.bytes);
}

#[test]
fn reserve_sets_the_rate_and_capacity() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "XF.RESERVE r 0.001 CAPACITY 5000", ok());
    expect(&mut conn, "XF.RESERVE d 0.05", ok());
    let added = items("i", 0..3000);
    madd(&mut conn, "r", &added);
    madd(&mut conn, "d", &added);
    expect(
        &mut conn,
        "XF.INFO r",
        info_reply(&reference(0.001, 5000, &added)),
    );
    expect(
        &mut conn,
        "XF.INFO d",
        info_reply(&reference(
            0.05,
            redbloom_core::limits::XF_DEFAULT_CAPACITY,
            &added,
        )),
    );
    expect(
        &mut conn,
        "XF.INFO r error",
        Reply::Array(Some(vec![Reply::bulk("0.001")])),
    );
}

#[test]
fn delete_and_count() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "XF.MADD k a a b", ints(&[1, 1, 1]));
    expect(&mut conn, "XF.COUNT k a", int(2));
    expect(&mut conn, "XF.COUNT k b", int(1));
    expect(&mut conn, "XF.CARD k", int(3));
    expect(&mut conn, "XF.DEL k a", int(1));
    expect(&mut conn, "XF.COUNT k a", int(1));
    expect(&mut conn, "XF.EXISTS k a", int(1));
    expect(&mut conn, "XF.DEL k a", int(1));
    expect(&mut conn, "XF.EXISTS k a", int(0));
    expect(&mut conn, "XF.DEL k a", int(0));
    expect(&mut conn, "XF.CARD k", int(1));
    expect(&mut conn, "XF.EXISTS k b", int(1));
    // Deleting half of many items leaves every other one found.
    let added = items("m", 0..20_000);
    madd(&mut conn, "many", &added);
    for item in added.iter().step_by(2) {
        assert_eq!(conn.call(&["XF.DEL", "many", item]), int(1), "{item}");
    }
    let kept: Vec<String> = added.iter().skip(1).step_by(2).cloned().collect();
    assert_eq!(mexists(&mut conn, "many", &kept), vec![1; kept.len()]);
    expect(&mut conn, "XF.CARD many", int(10_000));
}

#[test]
fn exact_errors_change_nothing() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "XF.RESERVE k 0.01", ok());
    let arity = |name: &str| format!("ERR wrong number of arguments for '{name}' command");
    let cases = [
        ("XF.RESERVE k 0.01", "ERR item exists".to_string()),
        ("XF.RESERVE n abc", "ERR bad error rate".into()),
        ("XF.RESERVE n 0", "ERR (0 < error rate range < 1) ".into()),
        ("XF.RESERVE n 1", "ERR (0 < error rate range < 1) ".into()),
        ("XF.RESERVE n 0.01 CAPACITY x", "ERR bad capacity".into()),
        (
            "XF.RESERVE n 0.01 CAPACITY 0",
            "ERR (capacity should be larger than 0)".into(),
        ),
        (
            "XF.RESERVE n 0.01 SIZE 10",
            "Unknown argument received".into(),
        ),
        ("XF.RESERVE n 0.01 CAPACITY", arity("xf.reserve")),
        ("XF.RESERVE n", arity("xf.reserve")),
        ("XF.ADD n", arity("xf.add")),
        ("XF.ADD n a b", arity("xf.add")),
        ("XF.MADD n", arity("xf.madd")),
        ("XF.EXISTS n", arity("xf.exists")),
        ("XF.DEL missing a", "ERR not found".into()),
        ("XF.INFO missing", "ERR not found".into()),
        ("XF.INFO k nope", "Invalid information value".into()),
        ("XF.INFO k items extra", arity("xf.info")),
        ("XF.DEBUG missing", "ERR not found".into()),
        ("XF.HEALTH missing", "ERR not found".into()),
        ("XF.SCANDUMP missing 0", "ERR not found".into()),
        ("XF.SCANDUMP k x", "Second argument must be numeric".into()),
        (
            "XF.LOADCHUNK k x y",
            "ERR Second argument must be numeric".into(),
        ),
        ("XF.LOADCHUNK missing 9 y", "ERR not found".into()),
        ("XF.LOADCHUNK n 1 garbage", "ERR received bad data".into()),
        ("XF.LOADCHUNK k 1 garbage", "ERR item exists".into()),
    ];
    for (line, text) in &cases {
        expect(&mut conn, line, err(text));
    }
    expect(&mut conn, "EXISTS n", int(0));
    expect(&mut conn, "XF.CARD k", int(0));
    // Missing keys answer 0, as BF.EXISTS; another type is WRONGTYPE for what writes or
    // counts.
    expect(&mut conn, "XF.EXISTS missing a", int(0));
    expect(&mut conn, "XF.MEXISTS missing a b", ints(&[0, 0]));
    expect(&mut conn, "XF.COUNT missing a", int(0));
    expect(&mut conn, "XF.CARD missing", int(0));
    expect(&mut conn, "SET str x", ok());
    for line in [
        "XF.ADD str a",
        "XF.MADD str a",
        "XF.RESERVE str 0.01",
        "XF.DEL str a",
        "XF.CARD str",
        "XF.INFO str",
    ] {
        assert!(
            call(&mut conn, line).error().starts_with("WRONGTYPE"),
            "{line}"
        );
    }
    expect(&mut conn, "GET str", Reply::bulk("x"));
}

#[test]
fn resp3_booleans_and_maps() {
    let server = Server::start();
    let mut conn = server.raw3();
    expect(&mut conn, "XF.RESERVE k 0.125", ok());
    assert_eq!(conn.call_raw(&["XF.ADD", "k", "a"]), b"#t\r\n");
    assert_eq!(
        conn.call_raw(&["XF.MADD", "k", "b", "c"]),
        b"*2\r\n#t\r\n#t\r\n"
    );
    assert_eq!(conn.call_raw(&["XF.EXISTS", "k", "a"]), b"#t\r\n");
    assert_eq!(
        conn.call_raw(&["XF.MEXISTS", "k", "a", "b"]),
        b"*2\r\n#t\r\n#t\r\n"
    );
    assert_eq!(conn.call_raw(&["XF.EXISTS", "missing", "a"]), b"#f\r\n");
    assert_eq!(conn.call_raw(&["XF.DEL", "k", "c"]), b"#t\r\n");
    assert_eq!(conn.call_raw(&["XF.CARD", "k"]), b":2\r\n");
    assert_eq!(conn.call_raw(&["XF.COUNT", "k", "a"]), b":1\r\n");
    assert_eq!(
        conn.call_raw(&["XF.INFO", "k", "ERROR"]),
        b"%1\r\n+Error rate\r\n,0.125\r\n"
    );
    let map = conn.call_raw(&["XF.INFO", "k"]);
    assert!(map.starts_with(b"%8\r\n+Error rate\r\n,0.125\r\n+Number of items\r\n:2\r\n"));
    let mut resp2 = server.raw();
    assert_eq!(resp2.call_raw(&["XF.EXISTS", "k", "a"]), b":1\r\n");
    assert_eq!(
        resp2.call_raw(&["XF.INFO", "k", "ERROR"]),
        b"*1\r\n$5\r\n0.125\r\n"
    );
    // XF.HEALTH: a map of figures (RESP2: label, value, ...).
    let health = resp2.call(&["XF.HEALTH", "k"]).array();
    assert_eq!(health[0], Reply::Simple("estimated_fp_rate".into()));
    assert_eq!(health[2], Reply::Simple("target_fp_rate".into()));
    assert_eq!(health[3], Reply::bulk("0.125"));
    assert_eq!(health[5], Reply::Int(2));
}

#[test]
fn events_copy_and_digest() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CONFIG SET notify-keyspace-events Kd", ok());
    let mut subscriber = server.raw();
    subscriber.call(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    expect(&mut conn, "XF.RESERVE x 0.01", ok());
    expect(&mut conn, "XF.ADD x a", int(1));
    expect(&mut conn, "XF.MADD x b c", ints(&[1, 1]));
    expect(&mut conn, "XF.DEL x c", int(1));
    let dump = scandump(&mut conn, "XF.SCANDUMP", "x");
    loadchunks(&mut conn, "XF.LOADCHUNK", "y", &dump);
    let mut expected = vec![
        ("x", "xf.reserve"),
        ("x", "xf.add"),
        ("x", "xf.madd"),
        ("x", "xf.del"),
    ];
    expected.extend((1..dump.len()).map(|_| ("y", "xf.loadchunk")));
    for (key, event) in expected {
        let message = subscriber.read_reply().array();
        assert_eq!(message[2].text(), format!("__keyspace@0__:{key}"));
        assert_eq!(message[3].text(), event);
    }
    assert_eq!(conn.call(&["DUMP", "y"]), conn.call(&["DUMP", "x"]));
    expect(&mut conn, "COPY x c", int(1));
    assert_eq!(conn.call(&["DUMP", "c"]), conn.call(&["DUMP", "x"]));
    let digest = |conn: &mut RawConnection, k: &str| conn.call(&["DEBUG", "DIGEST-VALUE", k]);
    assert_eq!(digest(&mut conn, "c"), digest(&mut conn, "x"));
    // The copy is independent.
    expect(&mut conn, "XF.ADD c d", int(1));
    expect(&mut conn, "XF.EXISTS x d", int(0));
    assert_ne!(digest(&mut conn, "c"), digest(&mut conn, "x"));
    // INFO totals: three filters, 2 + 2 + 3 items.
    let info = call(&mut conn, "INFO bf").text();
    assert!(info.contains("bf_xf_filters:3\r\n"), "{info}");
    assert!(info.contains("bf_xf_items:7\r\n"), "{info}");
    expect(&mut conn, "DEL x y c", int(3));
    let info = call(&mut conn, "INFO bf").text();
    assert!(info.contains("bf_xf_filters:0\r\n"), "{info}");
    assert!(info.contains("bf_xf_bytes:0\r\n"), "{info}");
}

#[test]
fn scandump_and_loadchunk_are_all_or_nothing() {
    let server = Server::start();
    let mut conn = server.raw();
    let added = items("i", 0..30_000);
    madd(&mut conn, "s", &added);
    let dump = scandump(&mut conn, "XF.SCANDUMP", "s");
    assert!(dump.len() >= 3, "header, chunks, the end: {}", dump.len());
    assert_eq!(dump.last().unwrap(), &(0, Some(Vec::new())));
    let load = |conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]| {
        conn.call(&[
            b"XF.LOADCHUNK".as_slice(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            data,
        ])
    };
    // The header alone: the filter answers nothing until its last chunk has come.
    let header = dump[0].1.clone().unwrap();
    assert_eq!(load(&mut conn, "t", 1, &header), ok());
    for line in [
        "XF.EXISTS t i1",
        "XF.MEXISTS t i1",
        "XF.ADD t i1",
        "XF.CARD t",
        "XF.INFO t",
    ] {
        expect(&mut conn, line, err(INCOMPLETE));
    }
    // Every chunk but the last, then damaged and misplaced ones: refused, nothing changed.
    let chunks: Vec<(i64, Vec<u8>)> = dump[1..dump.len() - 1]
        .iter()
        .map(|(i, d)| (*i, d.clone().unwrap()))
        .collect();
    let (last_iter, last) = chunks.last().unwrap().clone();
    for (iter, data) in &chunks[..chunks.len() - 1] {
        assert_eq!(load(&mut conn, "t", *iter, data), ok());
    }
    let partial = conn.call(&["DUMP", "t"]);
    let mut bad = last.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x10;
    assert_eq!(
        load(&mut conn, "t", last_iter, &bad),
        err("ERR received bad data")
    );
    assert_eq!(
        load(&mut conn, "t", last_iter + 7, &last),
        err("ERR invalid offset - no chunk found")
    );
    assert_eq!(
        load(&mut conn, "t", last_iter, &last[..last.len() - 1]),
        err("ERR received bad data")
    );
    assert_eq!(conn.call(&["DUMP", "t"]), partial);
    expect(&mut conn, "XF.EXISTS t i1", err(INCOMPLETE));
    // The genuine last chunk completes it: the same bytes, every item found.
    assert_eq!(load(&mut conn, "t", last_iter, &last), ok());
    assert_eq!(conn.call(&["DUMP", "t"]), conn.call(&["DUMP", "s"]));
    assert_eq!(mexists(&mut conn, "t", &added), vec![1; added.len()]);
    // A partial load survives DEBUG RELOAD and COPY as what it was.
    assert_eq!(load(&mut conn, "p", 1, &header), ok());
    assert_eq!(load(&mut conn, "p", chunks[0].0, &chunks[0].1), ok());
    let before = conn.call(&["DUMP", "p"]);
    expect(&mut conn, "DEBUG RELOAD", ok());
    assert_eq!(conn.call(&["DUMP", "p"]), before);
    expect(&mut conn, "COPY p p2", int(1));
    for key in ["p", "p2"] {
        for (iter, data) in &chunks[1..] {
            assert_eq!(load(&mut conn, key, *iter, data), ok(), "{key} {iter}");
        }
        assert_eq!(
            conn.call(&["DUMP", key]),
            conn.call(&["DUMP", "s"]),
            "{key}"
        );
    }
}

#[test]
fn the_ceiling_refuses_growth_item_by_item() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CONFIG SET bf.max-filter-bytes 1048576", ok());
    // The filter grows a partition at a time: past the ceiling, an item whose partition
    // has room still goes in, one that needs more memory is refused (and changes nothing).
    let mut accepted = Vec::new();
    let mut n = 0usize;
    loop {
        let batch = items("c", n..n + 10_000);
        let replies = with_items(&mut conn, "XF.MADD", "k", &batch).array();
        let mut refused = 0;
        for (item, reply) in batch.iter().zip(&replies) {
            if *reply == int(1) {
                accepted.push(item.clone());
            } else {
                assert_eq!(*reply, err(TOO_LARGE), "{item}");
                refused += 1;
            }
        }
        n += 10_000;
        if refused > 9_000 {
            break;
        }
        assert!(n < 5_000_000, "never refused");
    }
    let size = call(&mut conn, "XF.INFO k SIZE").array()[0].int();
    assert!(size <= 1 << 20, "{size}");
    expect(&mut conn, "XF.CARD k", int(accepted.len() as i64));
    // The filter is the core's of exactly the accepted items, in their order.
    expect(
        &mut conn,
        "XF.INFO k",
        info_reply(&super::reference_default(&accepted)),
    );
    assert_eq!(mexists(&mut conn, "k", &accepted), vec![1; accepted.len()]);
    expect(&mut conn, "CONFIG SET bf.max-filter-bytes 4294967296", ok());
    expect(&mut conn, "XF.ADD k more", int(1));
}
