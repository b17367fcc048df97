//! SF.* commands: every item found, FP within the rate, duplicates once, FROM a set, a
//! sorted set and a hash, exact errors, RESP3, events, COPY, the ceiling.

use super::{build, mexists};
use crate::support::ceiling::TOO_LARGE;
use crate::support::replies::{err, int, ints, ok};
use crate::support::{call, expect, loadchunks, scandump, Reply, Server};
use redbloom_core::static_filter::build::ribbon_bits_for;
use redbloom_core::static_filter::item_key;

#[test]
fn every_item_is_found_and_absent_ones_within_the_rate() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(build(&mut conn, "s", "0.01", "member:", 20_000), ok());
    assert_eq!(mexists(&mut conn, "s", "member:", 20_000), vec![1; 20_000]);
    expect(&mut conn, "SF.EXISTS s member:77", int(1));
    expect(&mut conn, "SF.CARD s", int(20_000));
    // 1M absent items, in batches: at most 1 % answer 1 (7 bits: 2^-7 = 0.78 % expected).
    let mut positives = 0usize;
    for batch in 0..100 {
        let hits = mexists(&mut conn, "s", &format!("absent:{batch}:"), 10_000);
        positives += hits.iter().filter(|&&h| h == 1).count();
    }
    let rate = positives as f64 / 1e6;
    assert!(rate <= 0.01 && rate > 0.004, "FP rate {rate}");
    expect(&mut conn, "TYPE s", Reply::Simple("RBstaticF".into()));
}

#[test]
fn duplicates_count_once_and_info_tells_the_shape() {
    let server = Server::start();
    let mut conn = server.raw();
    // The ribbon (the default, encoding 3): one block of 128 slots, whose start slot is the
    // only one, so all 7 columns (16 bytes each) and the rate 2^-7, and a bitmap word of
    // the blocks holding bumped keys (none): 96 + 112 + 8 bytes.
    expect(&mut conn, "SF.BUILD r 0.01 ITEMS a b a c b a", ok());
    expect(&mut conn, "SF.CARD r", int(3));
    let ribbon = Reply::Array(Some(vec![
        Reply::Simple("Number of items".into()),
        Reply::Int(3),
        Reply::Simple("Fingerprint bits".into()),
        Reply::Int(6),
        Reply::Simple("Bits per item".into()),
        Reply::bulk("576"),
        Reply::Simple("Error rate".into()),
        Reply::bulk("0.0078125"),
        Reply::Simple("Size".into()),
        Reply::Int(216),
    ]));
    expect(&mut conn, "SF.INFO r", ribbon);
    // Encoding 1's binary fuse filter, on request.
    expect(
        &mut conn,
        "SF.BUILD d 0.01 ENCODING FUSE ITEMS a b a c b a",
        ok(),
    );
    expect(&mut conn, "SF.CARD d", int(3));
    expect(&mut conn, "SF.MEXISTS d a b c", ints(&[1, 1, 1]));
    // 120 bytes (96 of fields, 3 words of 24 slots × 7 bits) for 3 items.
    let expected = Reply::Array(Some(vec![
        Reply::Simple("Number of items".into()),
        Reply::Int(3),
        Reply::Simple("Fingerprint bits".into()),
        Reply::Int(7),
        Reply::Simple("Bits per item".into()),
        Reply::bulk("320"),
        Reply::Simple("Error rate".into()),
        Reply::bulk("0.0078125"),
        Reply::Simple("Size".into()),
        Reply::Int(120),
    ]));
    expect(&mut conn, "SF.INFO d", expected);
    expect(
        &mut conn,
        "SF.INFO d BITS",
        Reply::Array(Some(vec![Reply::Int(7)])),
    );
    expect(
        &mut conn,
        "SF.INFO d size",
        Reply::Array(Some(vec![Reply::Int(120)])),
    );
    expect(
        &mut conn,
        "SF.INFO d nope",
        err("Invalid information value"),
    );
    // MEMORY USAGE counts the filter's figure (plus the key's own allocations, the same
    // for keys of one name length).
    assert_eq!(build(&mut conn, "e", "0.001", "i", 3000), ok());
    let usage = |conn: &mut crate::support::RawConnection, k: &str| {
        call(conn, &format!("MEMORY USAGE {k}")).int()
    };
    assert_eq!(usage(&mut conn, "e") - usage(&mut conn, "d"), 3944 - 120);
    let debug = call(&mut conn, "SF.DEBUG r").array();
    assert_eq!(
        debug[1],
        Reply::bulk(
            "bits:6 error:0.01 seed:0 encoding:ribbon3 blocks:1 lower_blocks:0 bumped:0 \
             slots:128 bytes:120 pending:0"
        )
    );
    expect(
        &mut conn,
        "SF.BUILD bad 0.01 ENCODING BLOOM ITEMS a",
        err("ERR ENCODING must be RIBBON or FUSE"),
    );
    expect(
        &mut conn,
        "SF.BUILD bad 0.01 ENCODING RIBBON ITEMS",
        err("ERR wrong number of arguments for 'sf.build' command"),
    );
    let debug = call(&mut conn, "SF.DEBUG d").array();
    assert_eq!(debug[0], Reply::bulk("items:3"));
    assert!(
        debug[1].text().starts_with("bits:7 error:0.01 seed:"),
        "{debug:?}"
    );
}

#[test]
fn from_a_set_a_sorted_set_and_a_hash() {
    let server = Server::start();
    let mut conn = server.raw();
    let mut sadd = vec!["SADD".to_string(), "set".to_string()];
    let mut zadd = vec!["ZADD".to_string(), "zset".to_string()];
    let mut hset = vec!["HSET".to_string(), "hash".to_string()];
    for i in 0..5000 {
        sadd.push(format!("m{i}"));
        zadd.extend([i.to_string(), format!("m{i}")]);
        hset.extend([format!("m{i}"), format!("value{i}")]);
    }
    for cmd in [&sadd, &zadd, &hset] {
        conn.call(cmd);
    }
    for (dest, source) in [("fs", "set"), ("fz", "zset"), ("fh", "hash")] {
        expect(
            &mut conn,
            &format!("SF.BUILD {dest} 0.001 FROM {source}"),
            ok(),
        );
        expect(&mut conn, &format!("SF.CARD {dest}"), int(5000));
        assert_eq!(mexists(&mut conn, dest, "m", 5000), vec![1; 5000], "{dest}");
    }
    // The same members make the same bytes, whatever the source or the order.
    let mut items = vec![
        "SF.BUILD".to_string(),
        "fi".into(),
        "0.001".into(),
        "ITEMS".into(),
    ];
    items.extend((0..5000).rev().map(|i| format!("m{i}")));
    assert_eq!(conn.call(&items), ok());
    let dump = |conn: &mut crate::support::RawConnection, k: &str| scandump(conn, "SF.SCANDUMP", k);
    let reference = dump(&mut conn, "fi");
    for key in ["fs", "fz", "fh"] {
        assert_eq!(dump(&mut conn, key), reference, "{key}");
    }
    // Hash values are not members.
    expect(&mut conn, "SF.EXISTS fh value1", int(0));
    // Sources that cannot serve.
    expect(&mut conn, "SET str x", ok());
    expect(&mut conn, "RPUSH list x", int(1));
    for source in ["str", "list", "fs"] {
        assert!(
            call(&mut conn, &format!("SF.BUILD t 0.01 FROM {source}"))
                .error()
                .starts_with("WRONGTYPE"),
            "{source}"
        );
    }
    expect(
        &mut conn,
        "SF.BUILD t 0.01 FROM missing",
        err("ERR not found"),
    );
    expect(
        &mut conn,
        "SF.BUILD t 0.01 FROM set extra",
        err("ERR wrong number of arguments for 'sf.build' command"),
    );
    // The source is read with the caller's permissions.
    expect(&mut conn, "ACL SETUSER limited on nopass ~f* +@all", ok());
    expect(&mut conn, "AUTH limited x", ok());
    expect(
        &mut conn,
        "SF.BUILD f2 0.01 FROM set",
        err("NOPERM this user has no permissions to read the source of SF.BUILD FROM"),
    );
    expect(&mut conn, "EXISTS f2", int(0));
    expect(&mut conn, "AUTH default x", ok());
}

#[test]
fn exact_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "SF.BUILD k 0.01 ITEMS a", ok());
    let cases = [
        ("SF.BUILD k 0.01 ITEMS b", "ERR item exists"),
        ("SF.BUILD n abc ITEMS b", "ERR bad error rate"),
        ("SF.BUILD n 0 ITEMS b", "ERR (0 < error rate range < 1) "),
        ("SF.BUILD n 1 ITEMS b", "ERR (0 < error rate range < 1) "),
        ("SF.BUILD n 0.5 ITEMS b", "ERR a static filter's error rate must be below 0.5"),
        (
            "SF.BUILD n 1e-10 ITEMS b",
            "ERR a static filter's error rate must be at least 2^-32 (fingerprints have at most 32 bits)",
        ),
        ("SF.BUILD n 0.01 ELEMENTS b", "ERR expected ITEMS item [item ...] or FROM source"),
        ("SF.BUILD n 0.01 ITEMS", "ERR wrong number of arguments for 'sf.build' command"),
        ("SF.INFO missing", "ERR not found"),
        ("SF.DEBUG missing", "ERR not found"),
        ("SF.SCANDUMP missing 0", "ERR not found"),
        ("SF.SCANDUMP k x", "Second argument must be numeric"),
        ("SF.LOADCHUNK k x y", "ERR Second argument must be numeric"),
        ("SF.LOADCHUNK missing 9 y", "ERR not found"),
        ("SF.LOADCHUNK n 1 garbage", "ERR received bad data"),
        ("SF.LOADCHUNK k 9 complete", "ERR invalid offset - no link found"),
    ];
    for (line, text) in cases {
        expect(&mut conn, line, err(text));
    }
    expect(&mut conn, "EXISTS n", int(0));
    // Missing keys answer 0, as BF.EXISTS; another type is WRONGTYPE for CARD only.
    expect(&mut conn, "SF.EXISTS missing a", int(0));
    expect(&mut conn, "SF.MEXISTS missing a b", ints(&[0, 0]));
    expect(&mut conn, "SF.CARD missing", int(0));
    expect(&mut conn, "SET str x", ok());
    expect(
        &mut conn,
        "SF.BUILD str 0.01 ITEMS a",
        err("ERR item exists"),
    );
    assert!(call(&mut conn, "SF.CARD str")
        .error()
        .starts_with("WRONGTYPE"));
}

#[test]
fn resp3_booleans_and_maps() {
    let server = Server::start();
    let mut conn = server.raw3();
    expect(&mut conn, "SF.BUILD k 0.25 ITEMS a b", ok());
    assert_eq!(conn.call_raw(&["SF.EXISTS", "k", "a"]), b"#t\r\n");
    assert_eq!(
        conn.call_raw(&["SF.MEXISTS", "k", "a", "b"]),
        b"*2\r\n#t\r\n#t\r\n"
    );
    assert_eq!(conn.call_raw(&["SF.EXISTS", "missing", "a"]), b"#f\r\n");
    assert_eq!(conn.call_raw(&["SF.CARD", "k"]), b":2\r\n");
    assert_eq!(
        conn.call_raw(&["SF.INFO", "k", "ERROR"]),
        b"%1\r\n+Error rate\r\n,0.125\r\n"
    );
    let mut resp2 = server.raw();
    assert_eq!(resp2.call_raw(&["SF.EXISTS", "k", "a"]), b":1\r\n");
    // Bits per item of 1000 items: Size × 8 / 1000, its shortest form to a RESP2 client
    // (not `%.17g`'s trailing digits, issue 43); a double to a RESP3 one.
    assert_eq!(build(&mut resp2, "n", "0.01", "i", 1000), ok());
    let size = resp2.call(&["SF.INFO", "n", "SIZE"]).array()[0].int();
    let per_item = size as f64 * 8.0 / 1000.0;
    assert_eq!(
        resp2.call_raw(&["SF.INFO", "n", "BITSPERITEM"]),
        format!("*1\r\n${}\r\n{per_item}\r\n", per_item.to_string().len()).into_bytes()
    );
    assert!(per_item.to_string().len() < 10, "{per_item}");
    let resp3 = conn.call_raw(&["SF.INFO", "n", "BITSPERITEM"]);
    let resp3 = String::from_utf8(resp3).unwrap();
    let double = resp3
        .strip_prefix("%1\r\n+Bits per item\r\n,")
        .and_then(|rest| rest.strip_suffix("\r\n"))
        .unwrap_or_else(|| panic!("{resp3:?}"));
    assert_eq!(double.parse::<f64>().unwrap(), per_item);
}

#[test]
fn events_copy_scandump_and_ceiling() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CONFIG SET notify-keyspace-events Kd", ok());
    let mut subscriber = server.raw();
    subscriber.call(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    assert_eq!(build(&mut conn, "s", "0.001", "i", 3000), ok());
    let dump = scandump(&mut conn, "SF.SCANDUMP", "s");
    assert_eq!(dump.len(), 3, "header, one chunk, the end");
    loadchunks(&mut conn, "SF.LOADCHUNK", "s2", &dump);
    for (key, event) in [
        ("s", "sf.build"),
        ("s2", "sf.loadchunk"),
        ("s2", "sf.loadchunk"),
    ] {
        let message = subscriber.read_reply().array();
        assert_eq!(message[2].text(), format!("__keyspace@0__:{key}"));
        assert_eq!(message[3].text(), event);
    }
    assert_eq!(conn.call(&["DUMP", "s2"]), conn.call(&["DUMP", "s"]));
    assert_eq!(mexists(&mut conn, "s2", "i", 3000), vec![1; 3000]);
    expect(&mut conn, "COPY s c", int(1));
    assert_eq!(conn.call(&["DUMP", "c"]), conn.call(&["DUMP", "s"]));
    let digest = |conn: &mut crate::support::RawConnection, k: &str| {
        conn.call(&["DEBUG", "DIGEST-VALUE", k])
    };
    assert_eq!(digest(&mut conn, "c"), digest(&mut conn, "s"));
    expect(&mut conn, "SF.BUILD other 0.001 ITEMS i0", ok());
    assert_ne!(digest(&mut conn, "other"), digest(&mut conn, "s"));
    // A header alone: the filter answers nothing until its data is complete.
    let header = dump[0].1.clone().unwrap();
    assert_eq!(
        conn.call(&[b"SF.LOADCHUNK".as_slice(), b"half", b"1", &header]),
        ok()
    );
    expect(&mut conn, "SF.CARD half", int(3000));
    let incomplete = "ERR the filter is incomplete: SF.LOADCHUNK has not loaded all of it";
    expect(&mut conn, "SF.EXISTS half i1", err(incomplete));
    expect(&mut conn, "SF.MEXISTS half i1", err(incomplete));
    expect(
        &mut conn,
        "SF.INFO s SIZE",
        Reply::Array(Some(vec![Reply::Int(3944)])),
    );
    // The ceiling (at least 1 MiB): 300k items at 29 and 30 columns, the size the core
    // builds (encoding 3: the ribbon, the bitmap and the bumped keys).
    let keys: Vec<u64> = (0..300_000)
        .map(|i| item_key(format!("i{i}").as_bytes()))
        .collect();
    let core = redbloom_core::static_filter::build(keys, 1e-9, u64::MAX).unwrap();
    assert_eq!(core.bits(), ribbon_bits_for(1e-9).unwrap());
    let size = core.mem_usage() as i64;
    assert!(size > 1 << 20, "{size}");
    assert_eq!(build(&mut conn, "big", "1e-9", "i", 300_000), ok());
    expect(
        &mut conn,
        "SF.INFO big SIZE",
        Reply::Array(Some(vec![Reply::Int(size)])),
    );
    let big_header = scandump(&mut conn, "SF.SCANDUMP", "big")[0]
        .1
        .clone()
        .unwrap();
    expect(
        &mut conn,
        &format!("CONFIG SET bf.max-filter-bytes {}", size - 1),
        ok(),
    );
    assert_eq!(
        build(&mut conn, "big2", "1e-9", "i", 300_000),
        err(TOO_LARGE)
    );
    assert_eq!(
        conn.call(&[b"SF.LOADCHUNK".as_slice(), b"big2", b"1", &big_header]),
        err("ERR received bad data")
    );
    expect(
        &mut conn,
        &format!("CONFIG SET bf.max-filter-bytes {size}"),
        ok(),
    );
    assert_eq!(build(&mut conn, "big2", "1e-9", "i", 300_000), ok());
    assert_eq!(conn.call(&["DUMP", "big2"]), conn.call(&["DUMP", "big"]));
    // INFO totals.
    let info = call(&mut conn, "INFO bf").text();
    assert!(info.contains("bf_sf_filters:7"), "{info}");
}
