//! CBF persistence: DEBUG RELOAD, SAVE + restart, AOF rewrite + restart keep every key's
//! bytes and counts.

use crate::support::cbf::{build_rich_filter, counts, snapshot};
use crate::support::replies::{int, ints, ok};
use crate::support::{call, expect, wait_until, Reply, Server};

#[test]
fn debug_reload_and_save_restart_keep_everything() {
    let mut server = Server::start();
    let mut conn = server.raw();
    build_rich_filter(&mut conn, "rich");
    expect(
        &mut conn,
        "CBF.INSERT ns CAPACITY 7 NONSCALING ITEMS a b a",
        ints(&[1, 1, 1]),
    );
    expect(&mut conn, "CBF.ADD empty-ish x", int(1));
    expect(&mut conn, "CBF.DEL empty-ish x", int(1));
    let keys = ["rich", "ns", "empty-ish"];
    let before: Vec<_> = keys
        .iter()
        .map(|k| (snapshot(&mut conn, k), counts(&mut conn, k)))
        .collect();
    let memory = call(&mut conn, "MEMORY USAGE rich").int();
    expect(&mut conn, "DEBUG RELOAD", ok());
    let after: Vec<_> = keys
        .iter()
        .map(|k| (snapshot(&mut conn, k), counts(&mut conn, k)))
        .collect();
    assert_eq!(after, before, "DEBUG RELOAD");
    assert_eq!(call(&mut conn, "MEMORY USAGE rich").int(), memory);
    expect(&mut conn, "SAVE", ok());
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    let after: Vec<_> = keys
        .iter()
        .map(|k| (snapshot(&mut conn, k), counts(&mut conn, k)))
        .collect();
    assert_eq!(after, before, "SAVE + restart");
    expect(&mut conn, "TYPE rich", Reply::Simple("RBcountBF".into()));
    expect(&mut conn, "CBF.DEL ns a", int(1));
    expect(&mut conn, "CBF.COUNT ns a", int(1));
}

#[test]
fn aof_rewrite_and_restart_keep_everything() {
    let mut server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "CONFIG SET aof-use-rdb-preamble no", ok());
    build_rich_filter(&mut conn, "rich");
    expect(&mut conn, "CBF.RESERVE big 0.01 5000000 NONSCALING", ok());
    expect(&mut conn, "CBF.MADD big a b a", ints(&[1, 1, 1]));
    expect(&mut conn, "CONFIG SET appendonly yes", ok());
    // Turning the AOF on is a rewrite of the data set.
    wait_until("the AOF on", || {
        crate::support::info_field(&mut conn, "persistence", "aof_enabled") == "1"
    });
    crate::support::wait_for_aof_rewrite(&mut conn);
    // Writes after the rewrite go to the incremental AOF as the commands themselves.
    expect(&mut conn, "CBF.ADD rich after-rewrite", int(1));
    expect(&mut conn, "CBF.DEL rich item:1", int(1));
    crate::support::rewrite_aof(&mut conn);
    let keys = ["rich", "big"];
    let before: Vec<_> = keys
        .iter()
        .map(|k| (snapshot(&mut conn, k), counts(&mut conn, k)))
        .collect();
    let base: Vec<u8> = std::fs::read_dir(server.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".base.aof"))
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    let text = String::from_utf8_lossy(&base);
    assert!(
        text.contains("CBF.LOADCHUNK"),
        "the rewrite emits CBF.LOADCHUNK"
    );
    drop(conn);
    server.restart(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    let after: Vec<_> = keys
        .iter()
        .map(|k| (snapshot(&mut conn, k), counts(&mut conn, k)))
        .collect();
    assert_eq!(after, before, "AOF rewrite + restart");
}
