//! Every type's keys moved by `CLUSTER MIGRATESLOTS`: byte-identical DUMP, the same
//! answers on the new master and its replica, the module's INFO counts gone from the old
//! side (its keys trimmed) and arrived on the new; a migration cancelled mid-stream
//! leaves the target (and its replica) without a key and with zero counts.

use super::{counts_are_zero, module_counts, valkey9, wait_for_state, Cluster, Migration};
use crate::support::{call, cbf, expect, wait_until, RawConnection, Reply};

/// One key of each type, under one hash tag (one slot).
pub(super) const KEYS: [&str; 10] = [
    "{mig}bf",
    "{mig}blocked",
    "{mig}cf",
    "{mig}cbf",
    "{mig}wbf",
    "{mig}sf",
    "{mig}xf",
    "{mig}cms",
    "{mig}topk",
    "{mig}td",
];

fn items(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn send(conn: &mut RawConnection, head: &[&str], items: &[String]) -> Reply {
    let mut command: Vec<String> = head.iter().map(|s| s.to_string()).collect();
    command.extend(items.iter().cloned());
    conn.call(&command)
}

/// Creates [`KEYS`] with contents: scaled BF and CF (several links), a BLOCKED filter,
/// a CBF with deletes, a timed WBF, a static filter, an expandable filter, CMS, TopK
/// and t-digest with data.
pub(super) fn fill(conn: &mut RawConnection) {
    let some = items("i", 300);
    expect(conn, "BF.RESERVE {mig}bf 0.01 100", Reply::ok());
    send(conn, &["BF.MADD", "{mig}bf"], &some);
    expect(
        conn,
        "BF.RESERVE {mig}blocked 0.01 1000 BLOCKED",
        Reply::ok(),
    );
    send(conn, &["BF.MADD", "{mig}blocked"], &some);
    expect(conn, "CF.RESERVE {mig}cf 64", Reply::ok());
    for item in &some {
        conn.call(&["CF.ADD", "{mig}cf", item]);
    }
    cbf::build_rich_filter(conn, "{mig}cbf");
    expect(
        conn,
        "WBF.RESERVE {mig}wbf 0.01 100 WINDOW 3600000",
        Reply::ok(),
    );
    send(conn, &["WBF.MADD", "{mig}wbf"], &some);
    let built = send(conn, &["SF.BUILD", "{mig}sf", "0.01", "ITEMS"], &some);
    assert_eq!(built, Reply::ok());
    expect(conn, "XF.RESERVE {mig}xf 0.01 CAPACITY 16", Reply::ok());
    send(conn, &["XF.MADD", "{mig}xf"], &some);
    expect(conn, "CMS.INITBYDIM {mig}cms 100 5", Reply::ok());
    expect(conn, "TOPK.RESERVE {mig}topk 5 50 4 0.9", Reply::ok());
    expect(conn, "TDIGEST.CREATE {mig}td COMPRESSION 50", Reply::ok());
    for i in 0..200 {
        let item = format!("i{}", i % 17);
        conn.call(&["CMS.INCRBY", "{mig}cms", &item, "3"]);
        conn.call(&["TOPK.ADD", "{mig}topk", &item]);
        conn.call(&["TDIGEST.ADD", "{mig}td", &((i * 37) % 101).to_string()]);
    }
}

/// What each type answers about its key: membership of added and absent items, counts,
/// the lists, the quantiles and every INFO.
pub(super) fn answers(conn: &mut RawConnection) -> Vec<Reply> {
    let probe: Vec<String> = (0..400).map(|i| format!("i{i}")).collect();
    let mut out = Vec::new();
    for (command, key) in [
        ("BF.MEXISTS", "{mig}bf"),
        ("BF.MEXISTS", "{mig}blocked"),
        ("CF.MEXISTS", "{mig}cf"),
        ("WBF.MEXISTS", "{mig}wbf"),
        ("SF.MEXISTS", "{mig}sf"),
        ("XF.MEXISTS", "{mig}xf"),
        ("CMS.QUERY", "{mig}cms"),
    ] {
        out.push(send(conn, &[command, key], &probe));
    }
    out.extend(cbf::counts(conn, "{mig}cbf").into_iter().map(Reply::Int));
    for line in [
        "BF.INFO {mig}bf",
        "BF.INFO {mig}blocked",
        "CF.INFO {mig}cf",
        "CBF.INFO {mig}cbf",
        "WBF.INFO {mig}wbf",
        "SF.INFO {mig}sf",
        // Not its Size: see `module_counts`.
        "XF.INFO {mig}xf ITEMS",
        "XF.INFO {mig}xf CAPACITY",
        "XF.INFO {mig}xf PARTITIONS",
        "XF.INFO {mig}xf BOUND",
        "CMS.INFO {mig}cms",
        "TOPK.LIST {mig}topk WITHCOUNT",
        "TOPK.INFO {mig}topk",
        "TDIGEST.QUANTILE {mig}td 0.1 0.5 0.9",
        "TDIGEST.INFO {mig}td",
    ] {
        out.push(call(conn, line));
    }
    out
}

/// DUMP of every key of [`KEYS`].
pub(super) fn dumps(conn: &mut RawConnection) -> Vec<Reply> {
    KEYS.iter().map(|key| conn.call(&["DUMP", key])).collect()
}

/// Reads from a replica (READONLY: a cluster replica redirects reads otherwise).
pub(super) fn readonly(conn: &mut RawConnection) {
    assert_eq!(conn.call(&["READONLY"]), Reply::ok());
}

#[test]
fn every_type_moves_whole_with_its_slot() {
    if !valkey9("every_type_moves_whole_with_its_slot") {
        return;
    }
    let cluster = Cluster::start();
    let (from, to) = cluster.migration_pair(KEYS[0]);
    let (source, target) = (&cluster.shards[from], &cluster.shards[to]);
    let mut conn = source.master.raw();
    fill(&mut conn);
    let before = answers(&mut conn);
    let bytes = dumps(&mut conn);
    let source_counts = module_counts(&mut conn);
    // The scaled BF and CF are past their capacity: the health counts move with them too.
    let over_capacity = source_counts
        .iter()
        .find(|(name, _)| name == "bf_health_over_capacity");
    assert!(
        over_capacity.is_some_and(|(_, v)| v != "0"),
        "{source_counts:?}"
    );
    let mut target_conn = target.master.raw();
    assert!(counts_are_zero(&mut target_conn));

    let migration = Migration::of(KEYS[0], &source.master, &target.master);
    migration.start(&mut conn);
    wait_for_state(&mut conn, "success");
    wait_until("the target owns the slot", || cluster.owner(KEYS[0]) == to);

    // The new master answers as the old one did, with the same bytes; so does its replica.
    assert_eq!(dumps(&mut target_conn), bytes);
    assert_eq!(answers(&mut target_conn), before);
    assert_eq!(module_counts(&mut target_conn), source_counts);
    let mut target_replica = target.replica.raw();
    readonly(&mut target_replica);
    wait_until("the target's replica has the keys", || {
        module_counts(&mut target_replica) == source_counts
    });
    assert_eq!(dumps(&mut target_replica), bytes);
    assert_eq!(answers(&mut target_replica), before);

    // The old side trimmed the slot: no key, and the module counts them out (its replica too).
    wait_until("the source trimmed the slot", || {
        conn.call(&["DBSIZE"]) == Reply::Int(0) && counts_are_zero(&mut conn)
    });
    let mut source_replica = source.replica.raw();
    wait_until("the source's replica trimmed the slot", || {
        source_replica.call(&["DBSIZE"]) == Reply::Int(0) && counts_are_zero(&mut source_replica)
    });
    // The old master redirects to the new one.
    let moved = format!("MOVED {} 127.0.0.1:{}", migration.slot, target.master.port);
    assert_eq!(
        conn.call(&["BF.EXISTS", KEYS[0], "i1"]),
        Reply::Error(moved)
    );
}

#[test]
fn a_cancelled_migration_leaves_nothing_on_the_target() {
    if !valkey9("a_cancelled_migration_leaves_nothing_on_the_target") {
        return;
    }
    let cluster = Cluster::start();
    let (from, to) = cluster.migration_pair(KEYS[0]);
    let (source, target) = (&cluster.shards[from], &cluster.shards[to]);
    let mut conn = source.master.raw();
    fill(&mut conn);
    let before = answers(&mut conn);
    let bytes = dumps(&mut conn);
    let source_counts = module_counts(&mut conn);

    // The source never pauses: the migration stays in its stream until cancelled, with
    // the snapshot loaded on the target (counted there, not yet served).
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 1",
        Reply::ok(),
    );
    let migration = Migration::of(KEYS[0], &source.master, &target.master);
    migration.start(&mut conn);
    wait_for_state(&mut conn, "waiting-to-pause");
    let mut target_conn = target.master.raw();
    wait_until("the snapshot loaded on the target", || {
        module_counts(&mut target_conn) == source_counts
    });
    assert_eq!(target_conn.call(&["DBSIZE"]), Reply::Int(0));
    // A write in the stream (a new key), then the cancel.
    assert_eq!(
        conn.call(&["BF.ADD", "{mig}new", "streamed"]),
        Reply::Int(1)
    );
    expect(&mut conn, "CLUSTER CANCELSLOTMIGRATIONS", Reply::ok());
    wait_for_state(&mut conn, "cancelled");
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 0",
        Reply::ok(),
    );

    // The target and its replica: no key, zero counts.
    wait_until("the target dropped the import", || {
        counts_are_zero(&mut target_conn)
    });
    assert_eq!(target_conn.call(&["DBSIZE"]), Reply::Int(0));
    let moved = format!("MOVED {} 127.0.0.1:{}", migration.slot, source.master.port);
    for key in KEYS {
        assert_eq!(
            target_conn.call(&["EXISTS", key]),
            Reply::Error(moved.clone())
        );
    }
    let mut target_replica = target.replica.raw();
    wait_until("the target's replica dropped the import", || {
        counts_are_zero(&mut target_replica)
    });
    assert_eq!(target_replica.call(&["DBSIZE"]), Reply::Int(0));
    // The source keeps every key, the streamed write included.
    assert_eq!(cluster.owner(KEYS[0]), from);
    assert_eq!(answers(&mut conn), before);
    assert_eq!(dumps(&mut conn), bytes);
    assert_eq!(
        conn.call(&["BF.EXISTS", "{mig}new", "streamed"]),
        Reply::Int(1)
    );
    let bf_filters = |counts: &[(String, String)]| {
        counts
            .iter()
            .find(|(name, _)| name == "bf_bf_filters")
            .unwrap()
            .1
            .clone()
    };
    // BF and BLOCKED before, the new filter after.
    assert_eq!(bf_filters(&source_counts), "2");
    assert_eq!(bf_filters(&module_counts(&mut conn)), "3");
}
