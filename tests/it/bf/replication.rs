//! Every BF write reaches a replica (COMPAT §9): after WAIT the replica answers EXISTS,
//! INFO, DEBUG, CARD, SCANDUMP and DUMP exactly as the master does; a write is
//! replicated only when it changed something.

use crate::support::bf::{assert_same_filters, build_filters, items, snapshots};
use crate::support::{
    call, info_field, loadchunks, scandump, start_replica, wait_for_replicas, RawConnection, Reply,
    Server,
};

fn offset(conn: &mut RawConnection) -> i64 {
    info_field(conn, "replication", "master_repl_offset")
        .parse()
        .unwrap()
}

#[test]
fn every_write_reaches_the_replica() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut conn = master.raw();
    let mut filters = build_filters(&mut conn, true);

    // BF.INSERT creating a filter, then adding to it with NOCREATE; non-scaling "full".
    let insert = call(
        &mut conn,
        "BF.INSERT ins CAPACITY 5 ERROR 0.001 EXPANSION 3 ITEMS a b c d e f g",
    );
    assert_eq!(insert, Reply::int_array(&[1, 1, 1, 1, 1, 1, 1]));
    assert_eq!(
        call(&mut conn, "BF.INSERT ins NOCREATE ITEMS h i a"),
        Reply::int_array(&[1, 1, 0])
    );
    filters.push((
        "ins".into(),
        "abcdefghi".chars().map(String::from).collect(),
    ));
    assert_eq!(
        call(&mut conn, "BF.RESERVE full 0.01 2 NONSCALING"),
        Reply::ok()
    );
    assert_eq!(
        call(&mut conn, "BF.MADD full a b c"),
        Reply::Array(Some(vec![
            Reply::Int(1),
            Reply::Int(1),
            Reply::err("ERR non scaling filter is full")
        ]))
    );
    filters.push(("full".into(), vec!["a".into(), "b".into()]));
    // BF.ADD growing a filter link by link.
    assert_eq!(
        call(&mut conn, "BF.RESERVE grow 0.01 2 EXPANSION 1"),
        Reply::ok()
    );
    let grow = items("g", 0..40);
    for item in &grow {
        conn.call(&["BF.ADD", "grow", item]);
    }
    filters.push(("grow".into(), grow));
    // LOADCHUNK of a header and chunks (several links; the big one has a 16 MiB chunk).
    for (source, copy) in [
        ("six", "six-copy"),
        ("big", "big-copy"),
        ("legacy", "legacy-copy"),
    ] {
        let dump = scandump(&mut conn, "BF.SCANDUMP", source);
        loadchunks(&mut conn, "BF.LOADCHUNK", copy, &dump);
        let added = filters.iter().find(|(k, _)| k == source).unwrap().1.clone();
        filters.push((copy.to_string(), added));
    }
    // A random-access chunk into an existing filter (all bits of its first link set).
    let chunk = vec![0xffu8; 16];
    let reply = conn.call(&[b"BF.LOADCHUNK".as_slice(), b"multi", b"17", &chunk]);
    assert_eq!(reply, Reply::ok());

    wait_for_replicas(&mut conn, 1);
    let on_master = snapshots(&mut conn, &filters);
    let mut rconn = replica.raw();
    assert_eq!(call(&mut rconn, "DBSIZE"), call(&mut conn, "DBSIZE"));
    assert_same_filters(&mut rconn, &filters, &on_master);
    assert_eq!(
        call(&mut rconn, "BF.MEXISTS full a b c"),
        Reply::int_array(&[1, 1, 0])
    );

    // A replica that syncs now gets the same filters through the RDB transfer.
    let late = start_replica(&master);
    wait_for_replicas(&mut conn, 2);
    assert_same_filters(&mut late.raw(), &filters, &on_master);
}

#[test]
fn writes_are_replicated_only_when_they_change_something() {
    // No periodic PING to the replica may move the offset during the check.
    let master = Server::start_with(&["--repl-ping-replica-period", "3600"]);
    let replica = start_replica(&master);
    let mut conn = master.raw();
    assert_eq!(call(&mut conn, "BF.RESERVE k 0.01 100"), Reply::ok());
    assert_eq!(call(&mut conn, "SET s x"), Reply::ok());
    wait_for_replicas(&mut conn, 1);
    let start = offset(&mut conn);
    for (line, want) in [
        ("BF.RESERVE k 0.01 100", "ERR item exists"),
        (
            "BF.RESERVE s 0.01 100",
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        ("BF.RESERVE n abc 100", "ERR bad error rate"),
        (
            "BF.RESERVE n 0.01 100 EXPANSION 40000",
            "ERR expansion must be in the range [0, 32768]",
        ),
        // valid arguments, but the filter cannot be made
        ("BF.RESERVE n 5e-324 10", "ERR could not create filter"),
        (
            "BF.RESERVE n 0.01 1000000000000",
            "ERR filter would exceed the max-filter-bytes limit",
        ),
        ("BF.INSERT n CAPACITY 0 ITEMS a", "Bad argument received"),
        ("BF.INSERT n NOCREATE ITEMS a", "ERR not found"),
        ("BF.LOADCHUNK n 1 junk", "ERR received bad data"),
        ("BF.LOADCHUNK k 3 junk", "ERR received bad data"),
    ] {
        assert_eq!(call(&mut conn, line), Reply::err(want), "{line}");
        assert_eq!(offset(&mut conn), start, "{line} was replicated");
    }
    // Reads are never replicated.
    for line in [
        "BF.EXISTS k a",
        "BF.MEXISTS k a b",
        "BF.INFO k",
        "BF.DEBUG k",
        "BF.CARD k",
        "BF.SCANDUMP k 0",
    ] {
        call(&mut conn, line);
        assert_eq!(offset(&mut conn), start, "{line} was replicated");
    }
    // Writes are when they add something; not when they change nothing (0) or end in
    // "full" (RedisBloom replicates those too).
    assert_eq!(call(&mut conn, "BF.ADD k a"), Reply::Int(1));
    let after_add = offset(&mut conn);
    assert!(after_add > start);
    assert_eq!(call(&mut conn, "BF.ADD k a"), Reply::Int(0));
    assert_eq!(call(&mut conn, "BF.MADD k a a"), Reply::int_array(&[0, 0]));
    assert_eq!(
        call(&mut conn, "BF.INSERT k NOCREATE ITEMS a"),
        Reply::int_array(&[0])
    );
    assert_eq!(offset(&mut conn), after_add, "a no-op add was replicated");
    assert_eq!(
        call(&mut conn, "BF.RESERVE ns 0.01 1 NONSCALING"),
        Reply::ok()
    );
    assert_eq!(call(&mut conn, "BF.ADD ns a"), Reply::Int(1));
    let before_full = offset(&mut conn);
    assert_eq!(
        call(&mut conn, "BF.ADD ns b"),
        Reply::err("ERR non scaling filter is full")
    );
    assert_eq!(offset(&mut conn), before_full, "a full add was replicated");
    wait_for_replicas(&mut conn, 1);
    let mut rconn = replica.raw();
    assert_eq!(call(&mut rconn, "EXISTS n"), Reply::Int(0));
    assert_eq!(call(&mut rconn, "BF.CARD ns"), Reply::Int(1));
    assert_eq!(call(&mut rconn, "BF.EXISTS k a"), Reply::Int(1));
}
