//! A merge reaches a replica and the AOF as the command itself (it is deterministic: the
//! same sources, the same integer kernels, the same fingerprint placement, no ceiling on
//! a trusted write): after WAIT the replica's DUMP of every merged key equals the
//! master's, and so does the DUMP after the master restarts from its AOF alone.

use super::{add_all, items};
use crate::support::{call, start_replica, wait_for_replicas, RawConnection, Reply, Server};

/// Filters of each family, merged in every way (union, INTERSECT, OVERRIDE, into an
/// existing or a new destination, with growth); returns the keys to compare.
fn build_and_merge(conn: &mut RawConnection) -> Vec<&'static str> {
    for line in [
        "BF.RESERVE b1 0.01 200",
        "BF.RESERVE b2 0.01 200",
        "BF.RESERVE k1 0.01 5000 BLOCKED",
        "BF.RESERVE k2 0.01 5000 BLOCKED",
        "BF.RESERVE n1 0.01 5000 NONSCALING",
        "BF.RESERVE n2 0.01 5000 NONSCALING",
        "CBF.RESERVE c1 0.01 200",
        "CBF.RESERVE c2 0.01 200",
        "CF.RESERVE f1 500",
        "CF.RESERVE f2 500",
    ] {
        assert_eq!(call(conn, line), Reply::ok(), "{line}");
    }
    add_all(conn, &["BF.MADD", "b1"], &items("b", 0..150));
    add_all(conn, &["BF.MADD", "b2"], &items("b", 100..900));
    add_all(conn, &["BF.MADD", "k1"], &items("k", 0..3000));
    add_all(conn, &["BF.MADD", "k2"], &items("k", 2000..5000));
    add_all(conn, &["BF.MADD", "n1"], &items("n", 0..3000));
    add_all(conn, &["BF.MADD", "n2"], &items("n", 1000..4000));
    add_all(conn, &["CBF.MADD", "c1"], &items("c", 0..150));
    add_all(conn, &["CBF.MADD", "c2"], &items("c", 50..700));
    add_all(conn, &["CF.INSERT", "f1", "ITEMS"], &items("f", 0..350));
    add_all(conn, &["CF.INSERT", "f2", "ITEMS"], &items("g", 0..350));
    for line in [
        "BF.MERGE bu 2 b1 b2",
        "BF.MERGE b1 1 b2",
        "BF.MERGE ku 2 k1 k2",
        "BF.MERGE ki 2 k1 k2 INTERSECT",
        "BF.MERGE nu 2 n1 n2",
        "BF.MERGE ni 2 n1 n2 INTERSECT",
        "BF.MERGE ku 1 b2 OVERRIDE",
        "CBF.MERGE cu 2 c1 c2",
        "CBF.MERGE c1 1 c2",
        "CF.MERGE fu 2 f1 f2",
        "CF.MERGE f1 1 f2",
    ] {
        assert_eq!(call(conn, line), Reply::ok(), "{line}");
    }
    // A refused merge replicates nothing.
    assert_eq!(
        call(conn, "BF.MERGE bu 1 nosuch"),
        Reply::err("ERR not found")
    );
    vec!["bu", "b1", "ku", "ki", "nu", "ni", "cu", "c1", "fu", "f1"]
}

fn dumps(conn: &mut RawConnection, keys: &[&str]) -> Vec<Reply> {
    keys.iter().map(|k| conn.call(&["DUMP", k])).collect()
}

#[test]
fn a_replica_ends_with_the_masters_bytes() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut conn = master.raw();
    let keys = build_and_merge(&mut conn);
    wait_for_replicas(&mut conn, 1);
    let on_master = dumps(&mut conn, &keys);
    assert!(on_master.iter().all(|d| matches!(d, Reply::Bulk(Some(_)))));
    let mut rconn = replica.raw();
    assert_eq!(dumps(&mut rconn, &keys), on_master);
    assert_eq!(call(&mut rconn, "DBSIZE"), call(&mut conn, "DBSIZE"));
}

#[test]
fn an_aof_replay_ends_with_the_same_bytes() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    let keys = build_and_merge(&mut conn);
    let before = dumps(&mut conn, &keys);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn, &keys), before);
}
