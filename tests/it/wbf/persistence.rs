//! WBF persistence: DEBUG RELOAD, SAVE + restart (expiry continues on schedule), AOF replay
//! and AOF rewrite + restart reproduce the bytes.

use crate::support::replies::{int, ok};
use crate::support::wbf::{build_filters, mexists, snapshot};
use crate::support::{expect, rewrite_aof, RawConnection, Reply, Server};
use std::time::{Duration, Instant};

#[test]
fn debug_reload_and_save_restart_keep_everything_and_expiry_continues() {
    let mut server = Server::start();
    let mut conn = server.raw();
    build_filters(&mut conn);
    expect(&mut conn, "WBF.RESERVE soon 0.01 100 WINDOW 500", ok());
    expect(&mut conn, "WBF.ADD soon x", int(1));
    let added = Instant::now();
    let keys = ["counted", "timed", "short"];
    let before: Vec<_> = keys.iter().map(|k| snapshot(&mut conn, k)).collect();
    let soon = conn.call(&["DUMP", "soon"]);
    expect(&mut conn, "DEBUG RELOAD", ok());
    let after: Vec<_> = keys.iter().map(|k| snapshot(&mut conn, k)).collect();
    assert_eq!(after, before, "DEBUG RELOAD");
    assert_eq!(conn.call(&["DUMP", "soon"]), soon);
    expect(&mut conn, "SAVE", ok());
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    let after: Vec<_> = keys.iter().map(|k| snapshot(&mut conn, k)).collect();
    assert_eq!(after, before, "SAVE + restart");
    assert_eq!(conn.call(&["DUMP", "soon"]), soon);
    assert_eq!(mexists(&mut conn, "timed", "t", 300), vec![1; 300]);
    // The generations' times were kept: the item expires on schedule.
    std::thread::sleep(Duration::from_millis(1500).saturating_sub(added.elapsed()));
    expect(&mut conn, "WBF.EXISTS soon x", int(0));
    expect(&mut conn, "WBF.CARD soon", int(0));
}

#[test]
fn aof_replay_and_rewrite_reproduce_the_bytes() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    build_filters(&mut conn);
    // Writes spread over time in a short window: replay must use the written times.
    expect(&mut conn, "WBF.RESERVE moving 0.01 1000 WINDOW 80", ok());
    for i in 0..30 {
        conn.call(&["WBF.MADD", "moving", &format!("m{i}"), &format!("n{i}")]);
        std::thread::sleep(Duration::from_millis(7));
    }
    let keys = ["counted", "timed", "short", "moving"];
    let dumps = |conn: &mut RawConnection| -> Vec<Reply> {
        keys.iter()
            .flat_map(|k| {
                [
                    conn.call(&["DUMP", k]),
                    conn.call(&["DEBUG", "DIGEST-VALUE", k]),
                ]
            })
            .collect()
    };
    let before = dumps(&mut conn);
    let aof: Vec<u8> = std::fs::read_dir(server.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    let text = String::from_utf8_lossy(&aof);
    assert!(
        text.contains("WBF.AT"),
        "writes reach the AOF with their time"
    );
    assert!(
        text.contains("WBF.MADD"),
        "adds within a generation come as they are"
    );
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn), before, "AOF replay");
    rewrite_aof(&mut conn);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn), before, "AOF rewrite + restart");
    expect(&mut conn, "WBF.ADD counted late", int(1));
}
