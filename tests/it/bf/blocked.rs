//! The cache-local Bloom layout (BLOCKED): exact replies of the commands that create and use
//! it, the config for implicitly created filters, and every way a filter travels — SCANDUMP
//! / LOADCHUNK, DEBUG RELOAD, AOF rewrite, COPY, replication — keeping it byte-identical.

use crate::support::bf::{
    assert_all_exist, assert_same_filters, items, madd, mexists, snapshots, Snapshot,
};
use crate::support::{
    call, info_field, loadchunks, scandump, start_replica, wait_for_replicas, wait_until,
    RawConnection, Reply, Server,
};

/// BF.INFO's reply as RESP2 labelled fields.
fn info(conn: &mut RawConnection, key: &str) -> Vec<(String, Reply)> {
    let reply = conn.call(&["BF.INFO", key]).array();
    reply
        .chunks(2)
        .map(|pair| (pair[0].text(), pair[1].clone()))
        .collect()
}

fn digest_value(conn: &mut RawConnection, key: &str) -> Reply {
    conn.call(&["DEBUG", "DIGEST-VALUE", key])
}

/// Blocked filters of every creation path, with the items added to each.
fn build_blocked(conn: &mut RawConnection) -> Vec<(String, Vec<String>)> {
    let mut filters = Vec::new();
    assert_eq!(call(conn, "BF.RESERVE big 0.01 20000 BLOCKED"), Reply::ok());
    let big = items("big", 0..15000);
    madd(conn, "big", &big);
    filters.push(("big".to_string(), big));
    assert_eq!(
        call(conn, "BF.RESERVE grown 0.001 50 EXPANSION 3 blocked"),
        Reply::ok()
    );
    let grown = items("g", 0..800);
    madd(conn, "grown", &grown);
    filters.push(("grown".to_string(), grown));
    assert_eq!(
        call(conn, "BF.RESERVE fixed 0.01 10 NONSCALING BLOCKED"),
        Reply::ok()
    );
    let fixed = items("f", 0..10);
    madd(conn, "fixed", &fixed);
    filters.push(("fixed".to_string(), fixed));
    let inserted = call(conn, "BF.INSERT ins CAPACITY 30 BLOCKED ITEMS a b c d");
    assert_eq!(inserted, Reply::int_array(&[1, 1, 1, 1]));
    filters.push(("ins".to_string(), items("", 0..0)));
    filters.last_mut().unwrap().1 = "abcd".chars().map(String::from).collect();
    filters
}

#[test]
fn exact_replies_of_a_blocked_filter() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "BF.RESERVE k 0.01 1000 BLOCKED"),
        Reply::ok()
    );
    assert_eq!(call(&mut conn, "BF.ADD k a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.ADD k a"), Reply::Int(0));
    assert_eq!(call(&mut conn, "BF.EXISTS k a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.EXISTS k b"), Reply::Int(0));
    assert_eq!(
        call(&mut conn, "BF.MADD k b c a"),
        Reply::int_array(&[1, 1, 0])
    );
    assert_eq!(
        call(&mut conn, "BF.MEXISTS k a b c d"),
        Reply::int_array(&[1, 1, 1, 0])
    );
    // 0.005 per link (scaling) → 11.765625 bits per item (k = 7): 11766 bits → 23 blocks.
    assert_eq!(
        info(&mut conn, "k"),
        vec![
            ("Capacity".to_string(), Reply::Int(1000)),
            ("Size".to_string(), Reply::Int(32 + 64 + 23 * 64)),
            ("Number of filters".to_string(), Reply::Int(1)),
            ("Number of items inserted".to_string(), Reply::Int(3)),
            ("Expansion rate".to_string(), Reply::Int(2)),
            ("Blocked".to_string(), Reply::Int(1)),
        ]
    );
    assert_eq!(call(&mut conn, "BF.INFO k BLOCKED"), Reply::int_array(&[1]));
    assert_eq!(
        call(&mut conn, "BF.DEBUG k"),
        Reply::bulk_array(&[
            "size:3",
            "bytes:1472 bits:11776 hashes:7 hashwidth:64 capacity:1000 size:3 ratio:0.005 blocked",
        ])
    );
    assert!(call(&mut conn, "MEMORY USAGE k").int() >= 1568);

    // BF.INSERT creates one too (0.001: 15.78125 bits per item, k = 9: 1579 bits → 4
    // blocks); the keyword anywhere among the options, any case.
    assert_eq!(
        call(
            &mut conn,
            "BF.INSERT i blocked CAPACITY 100 ERROR 0.001 NONSCALING ITEMS x y"
        ),
        Reply::int_array(&[1, 1])
    );
    assert_eq!(
        call(&mut conn, "BF.DEBUG i"),
        Reply::bulk_array(&[
            "size:2",
            "bytes:256 bits:2048 hashes:9 hashwidth:64 capacity:100 size:2 ratio:0.001 blocked",
        ])
    );
    assert_eq!(
        call(&mut conn, "BF.INFO i EXPANSION"),
        Reply::Array(Some(vec![Reply::nil()]))
    );

    // A classic filter's replies are RedisBloom's: no Blocked field, no suffix.
    assert_eq!(call(&mut conn, "BF.RESERVE c 0.01 1000"), Reply::ok());
    assert_eq!(info(&mut conn, "c").len(), 5);
    assert_eq!(
        call(&mut conn, "BF.INFO c BLOCKED"),
        Reply::err("Invalid information value")
    );
    assert_eq!(
        call(&mut conn, "BF.DEBUG c"),
        Reply::bulk_array(&[
            "size:0",
            "bytes:1384 bits:11072 hashes:8 hashwidth:64 capacity:1000 size:0 ratio:0.005",
        ])
    );
}

#[test]
fn errors_and_the_config_for_implicit_filters() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.RESERVE k 0.01 10 BLOCKED"), Reply::ok());
    assert_eq!(
        call(&mut conn, "BF.RESERVE k 0.01 10 BLOCKED"),
        Reply::err("ERR item exists")
    );
    assert_eq!(
        call(
            &mut conn,
            "BF.RESERVE n 0.01 10 NONSCALING EXPANSION 2 BLOCKED"
        ),
        Reply::err("Nonscaling filters cannot expand")
    );
    assert_eq!(
        call(&mut conn, "BF.RESERVE tiny 1e-60 10 BLOCKED"),
        Reply::err("ERR could not create filter")
    );
    assert_eq!(call(&mut conn, "EXISTS n tiny").int(), 0);
    // The counting filter has no blocked layout: BLOCKED is an unknown INSERT option.
    assert_eq!(
        call(&mut conn, "CBF.INSERT cb BLOCKED ITEMS a"),
        Reply::err("Unknown argument received")
    );
    // An existing filter keeps its layout whatever BF.INSERT says.
    assert_eq!(call(&mut conn, "BF.ADD classic a"), Reply::Int(1));
    assert_eq!(
        call(&mut conn, "BF.INSERT classic BLOCKED ITEMS b"),
        Reply::int_array(&[1])
    );
    assert_eq!(info(&mut conn, "classic").len(), 5);

    assert_eq!(
        call(&mut conn, "CONFIG GET bf.bf-blocked"),
        Reply::bulk_array(&["bf.bf-blocked", "0"])
    );
    assert!(matches!(
        call(&mut conn, "CONFIG SET bf.bf-blocked 2"),
        Reply::Error(_)
    ));
    assert_eq!(call(&mut conn, "CONFIG SET bf.bf-blocked 1"), Reply::ok());
    assert_eq!(call(&mut conn, "BF.ADD auto a"), Reply::Int(1));
    assert_eq!(
        call(&mut conn, "BF.MADD automulti a b"),
        Reply::int_array(&[1, 1])
    );
    assert_eq!(
        call(&mut conn, "BF.INSERT autoins ITEMS a"),
        Reply::int_array(&[1])
    );
    for key in ["auto", "automulti", "autoins"] {
        assert_eq!(
            call(&mut conn, &format!("BF.INFO {key} BLOCKED")),
            Reply::int_array(&[1])
        );
    }
    // BF.RESERVE states its layout; the counting filter ignores the config.
    assert_eq!(call(&mut conn, "BF.RESERVE explicit 0.01 10"), Reply::ok());
    assert_eq!(info(&mut conn, "explicit").len(), 5);
    assert_eq!(call(&mut conn, "CBF.ADD cbf a"), Reply::Int(1));
    assert_eq!(
        call(&mut conn, "CBF.DEBUG cbf").array()[1].text(),
        "bytes:576 counters:1152 hashes:8 hashwidth:64 capacity:100 size:1 ratio:0.005"
    );
}

#[test]
fn scandump_loadchunk_copy_and_hostile_headers() {
    let server = Server::start();
    let mut conn = server.raw();
    let filters = build_blocked(&mut conn);
    for (key, items) in &filters {
        let dump = scandump(&mut conn, "BF.SCANDUMP", key);
        let header = dump[0].1.clone().unwrap();
        assert_eq!(&header[header.len() - 8..], b"redblk\x00\x01", "{key}");
        assert_eq!(header[12] & 16, 16);
        let copy = format!("{key}-copy");
        loadchunks(&mut conn, "BF.LOADCHUNK", &copy, &dump);
        assert_eq!(
            Snapshot::take(&mut conn, &copy),
            Snapshot::take(&mut conn, key)
        );
        assert_eq!(digest_value(&mut conn, &copy), digest_value(&mut conn, key));
        assert!(mexists(&mut conn, &copy, items).iter().all(|&hit| hit == 1));
        let copied = format!("{key}-cp");
        assert_eq!(
            call(&mut conn, &format!("COPY {key} {copied}")),
            Reply::Int(1)
        );
        assert_eq!(
            Snapshot::take(&mut conn, &copied),
            Snapshot::take(&mut conn, key)
        );
    }
    // The header without its trailer, or as a classic one, is refused and creates nothing.
    let header = scandump(&mut conn, "BF.SCANDUMP", "grown")[0]
        .1
        .clone()
        .unwrap();
    let mut cut = header.clone();
    cut.truncate(header.len() - 8);
    let mut classic = header.clone();
    classic[12] &= !16;
    let mut future = header.clone();
    *future.last_mut().unwrap() = 2;
    for bad in [cut, classic, future] {
        let reply = conn.call(&[b"BF.LOADCHUNK".as_slice(), b"bad", b"1", &bad]);
        assert_eq!(reply, Reply::err("ERR received bad data"));
        assert_eq!(call(&mut conn, "EXISTS bad").int(), 0);
    }
    assert_eq!(call(&mut conn, "PING"), Reply::Simple("PONG".into()));
}

#[test]
fn debug_reload_and_aof_rewrite_keep_blocked_filters() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    let filters = build_blocked(&mut conn);
    let before = snapshots(&mut conn, &filters);
    let digests: Vec<Reply> = filters
        .iter()
        .map(|(key, _)| digest_value(&mut conn, key))
        .collect();
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), Reply::ok());
    assert_same_filters(&mut conn, &filters, &before);
    for ((key, _), digest) in filters.iter().zip(&digests) {
        assert_eq!(&digest_value(&mut conn, key), digest, "{key}");
    }
    assert_eq!(
        call(&mut conn, "BGREWRITEAOF"),
        Reply::Simple("Background append only file rewriting started".into())
    );
    wait_until("AOF rewrite", || {
        info_field(&mut conn, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(&mut conn, "persistence", "aof_rewrite_scheduled") == "0"
    });
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    wait_until("the AOF on after the restart", || {
        info_field(&mut conn, "persistence", "aof_enabled") == "1"
    });
    assert_same_filters(&mut conn, &filters, &before);
}

#[test]
fn the_replica_gets_blocked_filters_whatever_its_config() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut conn = master.raw();
    let mut rconn = replica.raw();
    assert_eq!(call(&mut conn, "CONFIG SET bf.bf-blocked 1"), Reply::ok());
    let mut filters = build_blocked(&mut conn);
    // Created implicitly under the master's config: scaling (RESERVE … BLOCKED) and not
    // (LOADCHUNK of the blocked header).
    let auto = items("auto", 0..300);
    madd(&mut conn, "auto", &auto);
    filters.push(("auto".to_string(), auto));
    assert_eq!(
        call(
            &mut conn,
            "BF.INSERT autofixed NONSCALING CAPACITY 50 ITEMS p q"
        ),
        Reply::int_array(&[1, 1])
    );
    filters.push(("autofixed".to_string(), vec!["p".into(), "q".into()]));
    wait_for_replicas(&mut conn, 1);
    let want = snapshots(&mut conn, &filters);
    assert_same_filters(&mut rconn, &filters, &want);
    for (key, _) in &filters {
        assert_eq!(
            digest_value(&mut rconn, key),
            digest_value(&mut conn, key),
            "{key}"
        );
        assert_eq!(
            call(&mut rconn, &format!("BF.INFO {key} BLOCKED")),
            Reply::int_array(&[1])
        );
    }
    assert_eq!(
        call(&mut rconn, "CONFIG GET bf.bf-blocked"),
        Reply::bulk_array(&["bf.bf-blocked", "0"])
    );
}

/// With EXPANSION 1 the rate halves per link and leaves the blocked layout's reach after
/// ~49 links; later links keep the last reachable rate, so the filter scales as far as a
/// classic one with the same arguments (issue 23: it refused every add after 49 links).
#[test]
fn blocked_scales_as_far_as_classic_with_expansion_1() {
    let server = Server::start();
    let mut conn = server.raw();
    for (key, layout) in [("b", " BLOCKED"), ("c", "")] {
        let reserve = format!("BF.RESERVE {key} 0.01 10 EXPANSION 1{layout}");
        assert_eq!(call(&mut conn, &reserve), Reply::ok());
        let added = items("i", 0..2000);
        let replies = madd(&mut conn, key, &added);
        assert!(
            replies.iter().all(|r| matches!(r, Reply::Int(_))),
            "{key}: {replies:?}"
        );
        assert_all_exist(&mut conn, key, &added);
    }
    // Links hold 10 items each; items found present (false positives) are not added.
    for key in ["b", "c"] {
        let links = call(&mut conn, &format!("BF.INFO {key} FILTERS")).array()[0].int();
        assert!((180..=200).contains(&links), "{key}: {links} links");
    }
    assert_eq!(
        call(&mut conn, "BF.RESERVE low 1e-17 10 BLOCKED"),
        Reply::err("ERR could not create filter")
    );
}
