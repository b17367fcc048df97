//! Writes sent while a slot migrates: during the snapshot (the source's child writing it,
//! slowed by `rdb-key-save-delay`) and during the stream that follows (held there by
//! `DEBUG SLOTMIGRATION PREVENT-PAUSE`), every type's writes, a timed WBF's, LOADCHUNK
//! chunks of BF, CF and SF in flight, and an `SF.BUILD … FROM` copied in slices all arrive
//! on the new owner byte for byte. An `SF.BUILD … FROM` that needs a child while the
//! migration's snapshot runs says so; one whose slot leaves while it is held stores
//! nothing on either side and says so.

use super::moves::{answers, dumps, fill, readonly, KEYS};
use super::{
    counts_are_zero, migration_state, module_counts, valkey9, wait_for_state, Cluster, Migration,
};
use crate::support::{call, expect, scandump, wait_until, RawConnection, Reply};

/// Members of the SF.BUILD FROM source: above the 20,000 built in the command itself.
const SOURCE_MEMBERS: usize = 25_000;

const BUSY_MIGRATION: &str = "ERR SF.BUILD FROM needs a child process, and a slot migration's snapshot (CLUSTER MIGRATESLOTS) is running; try again when the migration is done";
const SLOT_MOVED: &str = "ERR SF.BUILD FROM: the key's slot moved to another node during the build (slot migration); nothing was stored, run it again on the slot's owner";

/// `{mig}src`, a set of `m0 .. m{SOURCE_MEMBERS - 1}`.
fn fill_source(conn: &mut RawConnection) {
    for start in (0..SOURCE_MEMBERS).step_by(1000) {
        let mut command = vec!["SADD".to_string(), "{mig}src".to_string()];
        command.extend((start..start + 1000).map(|i| format!("m{i}")));
        assert_eq!(conn.call(&command), Reply::Int(1000));
    }
}

/// One write of every type, of items named `{round}-{i}`.
fn write_round(conn: &mut RawConnection, round: &str) {
    for i in 0..20 {
        let item = format!("{round}-{i}");
        for (command, key) in [
            ("BF.ADD", "{mig}bf"),
            ("BF.ADD", "{mig}blocked"),
            ("CF.ADD", "{mig}cf"),
            ("CBF.ADD", "{mig}cbf"),
            ("WBF.ADD", "{mig}wbf"),
            ("TOPK.ADD", "{mig}topk"),
        ] {
            let reply = conn.call(&[command, key, &item]);
            assert!(!matches!(reply, Reply::Error(_)), "{command} {reply:?}");
        }
        let cms = conn.call(&["CMS.INCRBY", "{mig}cms", &item, "2"]);
        assert_eq!(cms, Reply::Array(Some(vec![Reply::Int(2)])));
        let value = (1000 + i).to_string();
        assert_eq!(conn.call(&["TDIGEST.ADD", "{mig}td", &value]), Reply::ok());
    }
}

/// Every item of [`write_round`]'s `round` is in the filters (no false negative).
fn assert_round_present(conn: &mut RawConnection, round: &str) {
    for i in 0..20 {
        let item = format!("{round}-{i}");
        for (command, key) in [
            ("BF.EXISTS", "{mig}bf"),
            ("BF.EXISTS", "{mig}blocked"),
            ("CF.EXISTS", "{mig}cf"),
            ("CBF.EXISTS", "{mig}cbf"),
            ("WBF.EXISTS", "{mig}wbf"),
        ] {
            assert_eq!(
                conn.call(&[command, key, &item]),
                Reply::Int(1),
                "{key} {item}"
            );
        }
    }
}

/// A filter's SCANDUMP chunks: made by `create` (`CMD key args…`) into `{mig}made`,
/// dumped, then deleted.
type Chunks = Vec<(i64, Option<Vec<u8>>)>;

fn chunks(conn: &mut RawConnection, family: &str, create: &[&str], items: &[String]) -> Chunks {
    let key = "{mig}made";
    let mut command: Vec<&str> = vec![create[0], key];
    command.extend(&create[1..]);
    command.extend(items.iter().map(String::as_str));
    let reply = conn.call(&command);
    assert!(!matches!(reply, Reply::Error(_)), "{create:?}: {reply:?}");
    let dump = scandump(conn, &format!("{family}.SCANDUMP"), key);
    assert_eq!(conn.call(&["DEL", key]), Reply::Int(1));
    dump
}

/// LOADCHUNK of the chunks `range` (the terminator excluded) into `{mig}load-<family>`.
fn load(conn: &mut RawConnection, family: &str, dump: &Chunks, range: std::ops::Range<usize>) {
    let key = format!("{{mig}}load-{family}");
    for (iter, data) in &dump[range] {
        let reply = conn.call(&[
            format!("{family}.LOADCHUNK").as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            data.as_deref().unwrap_or_default(),
        ]);
        assert_eq!(reply, Reply::ok(), "{family}.LOADCHUNK {iter}");
    }
}

/// DUMP of every module key of the slot the test wrote, and the source set's size.
fn all_dumps(conn: &mut RawConnection) -> Vec<Reply> {
    let mut out = dumps(conn);
    for key in ["{mig}load-BF", "{mig}load-CF", "{mig}load-SF", "{mig}built"] {
        out.push(conn.call(&["DUMP", key]));
    }
    // The set's encoding may differ once rebuilt from commands: its members count.
    out.push(conn.call(&["SCARD", "{mig}src"]));
    out
}

#[test]
fn writes_during_the_snapshot_and_the_stream_arrive() {
    if !valkey9("writes_during_the_snapshot_and_the_stream_arrive") {
        return;
    }
    let cluster = Cluster::start();
    let (from, to) = cluster.migration_pair(KEYS[0]);
    let (source, target) = (&cluster.shards[from], &cluster.shards[to]);
    let mut conn = source.master.raw();
    fill(&mut conn);
    fill_source(&mut conn);
    // Filters to reload by chunks: each SCANDUMP has a header chunk and data chunks.
    let items: Vec<String> = (0..5000).map(|i| format!("c{i}")).collect();
    let bf = chunks(
        &mut conn,
        "BF",
        &["BF.INSERT", "CAPACITY", "1000", "ITEMS"],
        &items,
    );
    let cf = chunks(
        &mut conn,
        "CF",
        &["CF.INSERT", "CAPACITY", "1000", "ITEMS"],
        &items,
    );
    let sf = chunks(&mut conn, "SF", &["SF.BUILD", "0.001", "ITEMS"], &items);
    for dump in [&bf, &cf, &sf] {
        assert!(dump.len() >= 3, "a header, data chunks and the terminator");
    }
    load(&mut conn, "BF", &bf, 0..1);
    load(&mut conn, "CF", &cf, 0..1);
    load(&mut conn, "SF", &sf, 0..1);

    // The snapshot: 0.1 s per key in the source's child; the stream is held after it.
    expect(
        &mut conn,
        "CONFIG SET rdb-key-save-delay 100000",
        Reply::ok(),
    );
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 1",
        Reply::ok(),
    );
    let migration = Migration::of(KEYS[0], &source.master, &target.master);
    migration.start(&mut conn);
    wait_for_state(&mut conn, "snapshotting");
    write_round(&mut conn, "snapshot");
    load(&mut conn, "BF", &bf, 1..2);
    load(&mut conn, "CF", &cf, 1..2);
    load(&mut conn, "SF", &sf, 1..2);
    assert_eq!(
        migration_state(&mut conn),
        "snapshotting",
        "written during the snapshot"
    );

    wait_for_state(&mut conn, "waiting-to-pause");
    write_round(&mut conn, "stream");
    load(&mut conn, "BF", &bf, 2..bf.len() - 1);
    load(&mut conn, "CF", &cf, 2..cf.len() - 1);
    load(&mut conn, "SF", &sf, 2..sf.len() - 1);
    // Copied in slices (no child: the source's child may still be around).
    expect(
        &mut conn,
        "SF.BUILD {mig}built 0.01 FROM {mig}src",
        Reply::ok(),
    );
    assert_eq!(
        migration_state(&mut conn),
        "waiting-to-pause",
        "written during the stream"
    );
    for (family, dump) in [("BF", &bf), ("CF", &cf), ("SF", &sf)] {
        let key = format!("{{mig}}load-{family}");
        assert_eq!(
            &scandump(&mut conn, &format!("{family}.SCANDUMP"), &key),
            dump
        );
    }
    assert_round_present(&mut conn, "snapshot");
    assert_round_present(&mut conn, "stream");
    let expected = all_dumps(&mut conn);
    let expected_answers = answers(&mut conn);
    let expected_counts = module_counts(&mut conn);

    // Let it finish: the new owner has every byte, its replica too; the old side nothing.
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 0", Reply::ok());
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 0",
        Reply::ok(),
    );
    wait_for_state(&mut conn, "success");
    let mut target_conn = target.master.raw();
    for (i, (got, want)) in all_dumps(&mut target_conn)
        .iter()
        .zip(&expected)
        .enumerate()
    {
        assert_eq!(got, want, "key {i}");
    }
    assert_eq!(answers(&mut target_conn), expected_answers);
    assert_eq!(module_counts(&mut target_conn), expected_counts);
    assert_round_present(&mut target_conn, "snapshot");
    assert_round_present(&mut target_conn, "stream");
    let mut replica = target.replica.raw();
    readonly(&mut replica);
    wait_until("the target's replica in step", || {
        module_counts(&mut replica) == expected_counts
    });
    assert_eq!(all_dumps(&mut replica), expected);
    wait_until("the source trimmed the slot", || {
        conn.call(&["DBSIZE"]) == Reply::Int(0) && counts_are_zero(&mut conn)
    });
}

#[test]
fn sf_build_from_says_when_a_migration_is_in_its_way() {
    if !valkey9("sf_build_from_says_when_a_migration_is_in_its_way") {
        return;
    }
    let cluster = Cluster::start();
    let (from, to) = cluster.migration_pair(KEYS[0]);
    let (source, target) = (&cluster.shards[from], &cluster.shards[to]);
    let mut conn = source.master.raw();
    fill_source(&mut conn);
    expect(
        &mut conn,
        "SF.BUILD {mig}first 0.01 ITEMS a b c",
        Reply::ok(),
    );

    // A build that needs a child while the migration's snapshot is the server's child.
    expect(
        &mut conn,
        "CONFIG SET rdb-key-save-delay 1000000",
        Reply::ok(),
    );
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 1",
        Reply::ok(),
    );
    let migration = Migration::of(KEYS[0], &source.master, &target.master);
    migration.start(&mut conn);
    wait_for_state(&mut conn, "snapshotting");
    expect(&mut conn, "CONFIG SET bf.sf-build-slices no", Reply::ok());
    assert_eq!(
        call(&mut conn, "SF.BUILD {mig}forked 0.01 FROM {mig}src"),
        Reply::Error(BUSY_MIGRATION.into())
    );
    assert_eq!(call(&mut conn, "EXISTS {mig}forked"), Reply::Int(0));
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 0", Reply::ok());
    wait_for_state(&mut conn, "waiting-to-pause");

    // A copy held in slices while its slot leaves: it stores nothing, anywhere.
    expect(&mut conn, "CONFIG SET bf.sf-build-slices hold", Reply::ok());
    let mut builder = source.master.raw();
    builder
        .send(&["SF.BUILD", "{mig}held", "0.01", "FROM", "{mig}src"])
        .unwrap();
    wait_until("the copy held", || {
        crate::support::info_field(&mut conn, "bf", "bf_sf_build_copies") == "1"
    });
    expect(
        &mut conn,
        "DEBUG SLOTMIGRATION PREVENT-PAUSE 0",
        Reply::ok(),
    );
    wait_for_state(&mut conn, "success");
    expect(&mut conn, "CONFIG SET bf.sf-build-slices yes", Reply::ok());
    assert_eq!(builder.read_reply(), Reply::Error(SLOT_MOVED.into()));
    let mut target_conn = target.master.raw();
    assert_eq!(call(&mut target_conn, "EXISTS {mig}held"), Reply::Int(0));
    assert_eq!(call(&mut target_conn, "EXISTS {mig}first"), Reply::Int(1));
    wait_until("the source trimmed the slot", || {
        conn.call(&["DBSIZE"]) == Reply::Int(0) && counts_are_zero(&mut conn)
    });
    assert_eq!(
        crate::support::info_field(&mut target_conn, "bf_filters", "bf_sf_filters"),
        "1"
    );
}
