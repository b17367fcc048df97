//! BF filters survive DEBUG RELOAD, SAVE + restart and an AOF rewrite + restart with
//! every item, BF.INFO, BF.DEBUG, BF.CARD, SCANDUMP bytes and DUMP payload unchanged
//! (COMPAT §4.2, §4.4).

use crate::support::bf::{assert_same_filters, build_filters, madd, snapshots, Snapshot};
use crate::support::{call, info_field, wait_until, Reply, Server};

#[test]
fn debug_reload_keeps_every_filter() {
    let server = Server::start();
    let mut conn = server.raw();
    let filters = build_filters(&mut conn, false);
    let before = snapshots(&mut conn, &filters);
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), Reply::ok());
    assert_same_filters(&mut conn, &filters, &before);
    // Reloaded filters keep working: they grow exactly like the originals would.
    madd(&mut conn, "multi", &crate::support::bf::items("x", 0..200));
    let grown = Snapshot::take(&mut conn, "multi");
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), Reply::ok());
    assert_eq!(Snapshot::take(&mut conn, "multi"), grown);
}

#[test]
fn save_and_restart_loads_the_rdb() {
    let mut server = Server::start();
    let mut conn = server.raw();
    let filters = build_filters(&mut conn, true);
    let before = snapshots(&mut conn, &filters);
    let keys = call(&mut conn, "DBSIZE");
    assert_eq!(call(&mut conn, "SAVE"), Reply::ok());
    assert!(server.dir.join("dump.rdb").exists());
    // A change after SAVE is lost on restart: proves the data comes from the file.
    assert_eq!(call(&mut conn, "BF.ADD unsaved x"), Reply::Int(1));
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "DBSIZE"), keys);
    assert_eq!(call(&mut conn, "EXISTS unsaved"), Reply::Int(0));
    assert_same_filters(&mut conn, &filters, &before);
}

/// Occurrences of `needle` in `haystack`.
fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn aof_rewrite_and_restart() {
    // Without the RDB preamble the rewrite is made of the module's BF.LOADCHUNK commands.
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    let filters = build_filters(&mut conn, true);
    let expected_chunks: usize = filters
        .iter()
        .map(|(key, _)| crate::support::scandump(&mut conn, "BF.SCANDUMP", key).len() - 1)
        .sum();
    assert_eq!(
        call(&mut conn, "BGREWRITEAOF"),
        Reply::Simple("Background append only file rewriting started".into())
    );
    crate::support::wait_for_aof_rewrite(&mut conn);

    // The base file holds a header and every chunk of every filter as BF.LOADCHUNK.
    let aof_dir = server.dir.join("appendonlydir");
    let base = std::fs::read_dir(&aof_dir)
        .expect("appendonlydir")
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF file");
    let text = std::fs::read(&base).unwrap();
    // One LOADCHUNK per SCANDUMP reply but the terminator [0, ""].
    assert_eq!(count(&text, b"$12\r\nBF.LOADCHUNK\r\n"), expected_chunks);
    assert_eq!(
        count(&text, b"$16777216\r\n"),
        1,
        "the big filter's full chunk"
    );

    // Writes after the rewrite go to the incremental file as the commands themselves.
    let mut filters = filters;
    madd(
        &mut conn,
        "multi",
        &crate::support::bf::items("after", 0..100),
    );
    assert_eq!(
        call(&mut conn, "BF.RESERVE late 0.01 20 EXPANSION 3"),
        Reply::ok()
    );
    let late: Vec<String> = crate::support::bf::items("late", 0..100);
    madd(&mut conn, "late", &late);
    filters.push(("late".to_string(), late));
    let dump = crate::support::scandump(&mut conn, "BF.SCANDUMP", "six");
    crate::support::loadchunks(&mut conn, "BF.LOADCHUNK", "six-copy", &dump);
    let six_items = filters.iter().find(|(k, _)| k == "six").unwrap().1.clone();
    filters.push(("six-copy".to_string(), six_items));
    let inserted = call(
        &mut conn,
        "BF.INSERT ins CAPACITY 7 ERROR 0.2 ITEMS a b c d e f g h",
    );
    assert_eq!(inserted.array().len(), 8);
    filters.push((
        "ins".to_string(),
        "abcdefgh".chars().map(String::from).collect(),
    ));
    let before = snapshots(&mut conn, &filters);
    drop(conn);

    server.restart(&[]);
    let mut conn = server.raw();
    // Valkey turns the AOF on just after it reports the load finished.
    wait_until("the AOF on after the restart", || {
        info_field(&mut conn, "persistence", "aof_enabled") == "1"
    });
    assert_same_filters(&mut conn, &filters, &before);

    // A second rewrite of the reloaded data, and a restart from it alone.
    assert_eq!(
        call(&mut conn, "BGREWRITEAOF"),
        Reply::Simple("Background append only file rewriting started".into())
    );
    crate::support::wait_for_aof_rewrite(&mut conn);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_same_filters(&mut conn, &filters, &before);
}

#[test]
fn aof_with_rdb_preamble_and_restart() {
    let mut server = Server::start_with(&["--appendonly", "yes"]);
    let mut conn = server.raw();
    let filters = build_filters(&mut conn, false);
    assert_eq!(
        call(&mut conn, "BGREWRITEAOF"),
        Reply::Simple("Background append only file rewriting started".into())
    );
    crate::support::wait_for_aof_rewrite(&mut conn);
    assert_eq!(call(&mut conn, "BF.ADD multi after"), Reply::Int(1));
    let before = snapshots(&mut conn, &filters);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_same_filters(&mut conn, &filters, &before);
    assert_eq!(call(&mut conn, "BF.EXISTS multi after"), Reply::Int(1));
}
