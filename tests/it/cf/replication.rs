//! CF writes reach replicas (COMPAT §9): every write command, CF.LOADCHUNK header and data
//! chunks included (2.4.20 sent only the header, MOD-16050), and a replica answers exactly
//! like its master afterwards.

use crate::support::cf::{cf_counts, cf_state};
use crate::support::{
    call, info_field, pipeline_expect, scandump, start_replica, wait_for_replicas, RawConnection,
    Reply, Server,
};

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

fn numbers(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}

fn add_all(conn: &mut RawConnection, key: &str, items: &[String]) {
    let commands: Vec<Vec<String>> = items
        .iter()
        .map(|i| vec!["CF.ADD".to_string(), key.to_string(), i.clone()])
        .collect();
    pipeline_expect(conn, &commands, &Reply::Int(1));
}

/// The replica answers like the master for `key`: INFO, DEBUG, SCANDUMP, DUMP, COUNT
/// and EXISTS of every item.
fn assert_same(
    master: &mut RawConnection,
    replica: &mut RawConnection,
    key: &str,
    items: &[String],
) {
    assert_eq!(cf_state(replica, key), cf_state(master, key), "{key}");
    assert_eq!(
        cf_counts(replica, key, items),
        cf_counts(master, key, items),
        "{key}"
    );
    for item in items.iter().take(50) {
        assert_eq!(
            replica.call(&["CF.EXISTS", key, item]),
            master.call(&["CF.EXISTS", key, item]),
            "{key} {item}"
        );
    }
}

fn repl_offset(conn: &mut RawConnection) -> String {
    info_field(conn, "replication", "master_repl_offset")
}

#[test]
fn every_write_command_replicates() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    let items = numbers(0..600);

    assert_eq!(
        call(
            &mut m,
            "CF.RESERVE res 64 BUCKETSIZE 1 MAXITERATIONS 30 EXPANSION 2"
        ),
        ok()
    );
    add_all(&mut m, "res", &items[..400]);
    assert_eq!(call(&mut m, "CF.ADD auto x"), Reply::Int(1));
    assert_eq!(call(&mut m, "CF.ADDNX auto x"), Reply::Int(0));
    assert_eq!(call(&mut m, "CF.ADDNX auto y"), Reply::Int(1));
    let reply = call(&mut m, "CF.INSERT ins CAPACITY 100 ITEMS a b c a");
    assert_eq!(reply, Reply::Array(Some(vec![Reply::Int(1); 4])));
    let reply = call(&mut m, "CF.INSERTNX ins ITEMS a d");
    assert_eq!(
        reply,
        Reply::Array(Some(vec![Reply::Int(0), Reply::Int(1)]))
    );
    assert_eq!(
        call(&mut m, "CF.INSERTNX insnx ITEMS p q").ints(),
        vec![1, 1]
    );
    assert_eq!(call(&mut m, "CF.DEL ins a"), Reply::Int(1));
    assert_eq!(call(&mut m, "CF.DEL ins zzz"), Reply::Int(0));
    // Deletes then an explicit compaction of a many-sub-filter filter.
    for item in &items[..30] {
        assert_eq!(m.call(&["CF.DEL", "res", item]), Reply::Int(1));
    }
    assert_eq!(call(&mut m, "CF.COMPACT res"), ok());
    // Growth continues after compaction.
    add_all(&mut m, "res", &items[400..600]);
    wait_for_replicas(&mut m, 1);

    for key in ["res", "auto", "ins", "insnx"] {
        assert_same(&mut m, &mut r, key, &items);
    }
    let letters: Vec<String> = ["a", "b", "c", "d", "x", "y", "zzz"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_same(&mut m, &mut r, "ins", &letters);
    assert_same(&mut m, &mut r, "auto", &letters);
    assert_eq!(call(&mut r, "CF.COUNT ins a"), Reply::Int(1));
    let debug = call(&mut r, "CF.DEBUG res").text();
    assert!(debug.contains("items:570 deletes:0"), "{debug}");
    // The replica refuses writes, CF.COMPACT included (a write command here).
    for line in [
        "CF.ADD res x",
        "CF.COMPACT res",
        "CF.DEL res 1",
        "CF.RESERVE new 100",
    ] {
        assert_eq!(
            call(&mut r, line),
            Reply::Error("READONLY You can't write against a read only replica.".into()),
            "{line}"
        );
    }
    assert_eq!(call(&mut r, "CF.EXISTS res 599"), Reply::Int(1));
}

/// COMPAT §10.2 cf_loadchunk_replicates_to_replica: a 2000-item, multi-sub-filter filter
/// copied with SCANDUMP/LOADCHUNK on the master is complete on the replica.
#[test]
fn loadchunk_replicates_header_and_data() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    let items = numbers(0..2000);
    assert_eq!(call(&mut m, "CF.RESERVE src 200 EXPANSION 2"), ok());
    add_all(&mut m, "src", &items);
    let filters = call(&mut m, "CF.INFO src").array()[5].int();
    assert!(filters > 2, "{filters}");
    let dump = scandump(&mut m, "CF.SCANDUMP", "src");
    assert_eq!(dump.len() as i64, filters + 2);
    crate::support::loadchunks(&mut m, "CF.LOADCHUNK", "dst", &dump);
    // A 16+ MiB filter too: several pieces of one sub-filter.
    assert_eq!(call(&mut m, "CF.RESERVE bigsrc 40000000"), ok());
    add_all(&mut m, "bigsrc", &items[..500]);
    let big = scandump(&mut m, "CF.SCANDUMP", "bigsrc");
    assert_eq!(big.len(), 1 + 4 + 1);
    crate::support::loadchunks(&mut m, "CF.LOADCHUNK", "bigdst", &big);
    wait_for_replicas(&mut m, 1);

    assert_eq!(scandump(&mut r, "CF.SCANDUMP", "dst"), dump);
    let exists: Vec<Reply> = {
        let mut args = vec!["CF.MEXISTS", "dst"];
        args.extend(items.iter().map(String::as_str));
        r.call(&args).array()
    };
    assert_eq!(exists, vec![Reply::Int(1); 2000]);
    assert_same(&mut m, &mut r, "dst", &items);
    assert_same(&mut m, &mut r, "bigdst", &items[..500]);
    assert_eq!(scandump(&mut r, "CF.SCANDUMP", "bigdst"), big);
    // The replica's copy equals the master's source, too.
    assert_eq!(
        cf_state(&mut r, "dst").payload,
        cf_state(&mut m, "src").payload
    );
}

/// A replica that connects later gets the filters through the full sync (RDB transfer).
#[test]
fn full_sync_carries_filters() {
    let master = Server::start();
    let mut m = master.raw();
    let items = numbers(0..1500);
    assert_eq!(call(&mut m, "CF.RESERVE a 64 BUCKETSIZE 1"), ok());
    add_all(&mut m, "a", &items);
    for item in &items[..40] {
        assert_eq!(m.call(&["CF.DEL", "a", item]), Reply::Int(1));
    }
    assert_eq!(call(&mut m, "CF.RESERVE empty 100"), ok());
    let replica = start_replica(&master);
    let mut r = replica.raw();
    wait_for_replicas(&mut m, 1);
    assert_same(&mut m, &mut r, "a", &items);
    assert_same(&mut m, &mut r, "empty", &items[..10]);
}

/// What is not replicated: read commands, failed writes that change nothing
/// (`Filter is full`, validation errors, missing keys), CF.DEL on a missing key.
#[test]
fn failed_and_read_commands_do_not_replicate() {
    // No periodic PING to the replica may move the offset during the check.
    let master = Server::start_with(&["--repl-ping-replica-period", "3600"]);
    let replica = start_replica(&master);
    let mut m = master.raw();
    assert_eq!(call(&mut m, "CF.RESERVE full 4 EXPANSION 0"), ok());
    for item in ["1", "2", "3", "4"] {
        assert_eq!(m.call(&["CF.ADD", "full", item]), Reply::Int(1));
    }
    wait_for_replicas(&mut m, 1);
    let before = repl_offset(&mut m);
    let quiet: &[(&str, Reply)] = &[
        ("CF.ADD full 5", Reply::Error("Filter is full".into())),
        (
            "CF.RESERVE full 100",
            Reply::Error("ERR item exists".into()),
        ),
        (
            "CF.RESERVE x 1",
            Reply::Error("Capacity must be at least (BucketSize * 2)".into()),
        ),
        ("CF.DEL missing a", Reply::Error("Not found".into())),
        (
            "CF.COMPACT missing",
            Reply::Error("Cuckoo filter was not found".into()),
        ),
        (
            "CF.INSERT missing NOCREATE ITEMS a",
            Reply::Error("ERR not found".into()),
        ),
        (
            "CF.LOADCHUNK missing 1 short",
            Reply::Error("Invalid header".into()),
        ),
        (
            "CF.LOADCHUNK full 2 xx",
            Reply::Error("Couldn't load chunk!".into()),
        ),
        ("CF.EXISTS full 1", Reply::Int(1)),
        ("CF.COUNT full 1", Reply::Int(1)),
        ("CF.INFO missing", Reply::Error("ERR not found".into())),
    ];
    for (line, expected) in quiet {
        assert_eq!(&call(&mut m, line), expected, "{line}");
    }
    assert_eq!(call(&mut m, "CF.SCANDUMP full 0").array()[0], Reply::Int(1));
    assert_eq!(
        call(&mut m, "CF.DEBUG full").text(),
        "bktsize:2 buckets:2 items:4 deletes:0 filters:1 max_iterations:20 expansion:0"
    );
    assert_eq!(repl_offset(&mut m), before);
    // A write that does something moves the offset.
    assert_eq!(call(&mut m, "CF.DEL full 1"), Reply::Int(1));
    assert_ne!(repl_offset(&mut m), before);
    wait_for_replicas(&mut m, 1);
    let mut r = replica.raw();
    assert_same(&mut m, &mut r, "full", &numbers(1..6));
}
