//! Issue 23's WBF reproductions against a real server: a burst does not delay expiry (real
//! time: a 1 s window), and replicas and AOF replay rebuild the master's filter also where
//! no time maps to the newest generation (WINDOW below the number of generations) and the
//! base lies in the future (a LOADCHUNK from a server whose clock was ahead).

use crate::support::replies::{int, ok};
use crate::support::wbf::madd;
use crate::support::{
    call, expect, loadchunks, scandump, start_replica, wait_for_replicas, RawConnection, Reply,
    Server,
};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[test]
fn a_burst_does_not_delay_expiry() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "WBF.RESERVE w 0.01 1000 WINDOW 1000", ok());
    for batch in 0..20 {
        madd(&mut conn, "w", &format!("b{batch}:"), 1000);
    }
    std::thread::sleep(Duration::from_secs(5));
    expect(&mut conn, "WBF.ADD w quiet", int(1));
    expect(&mut conn, "WBF.EXISTS w quiet", int(1));
    expect(&mut conn, "WBF.CARD w", int(1));
    std::thread::sleep(Duration::from_secs(4));
    // Before issue 23: 1 and 1001 (the burst had moved the generations 20 windows ahead).
    expect(&mut conn, "WBF.EXISTS w quiet", int(0));
    expect(&mut conn, "WBF.CARD w", int(0));
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A timed filter (WINDOW 3 ms, 8 generations at 1 %) whose base is an hour ahead, made
/// with LOADCHUNK, then plain adds: none ends a generation on the master.
fn future_filter(conn: &mut RawConnection) {
    expect(conn, "WBF.RESERVE src 0.01 100 WINDOW 3", ok());
    let mut dump = scandump(conn, "WBF.SCANDUMP", "src");
    let header = dump[0].1.as_mut().unwrap();
    header[28..36].copy_from_slice(&(now_ms() + 3_600_000).to_le_bytes());
    loadchunks(conn, "WBF.LOADCHUNK", "w", &dump);
    expect(conn, "WBF.INFO w GENERATIONS", Reply::int_array(&[8]));
    expect(conn, "WBF.ADD w a", int(1));
    let added = madd(conn, "w", "m", 20);
    assert_eq!(added, vec![1; 20]);
}

#[test]
fn replay_and_replicas_rebuild_a_filter_whose_base_is_ahead() {
    let mut master = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let replica = start_replica(&master);
    let mut conn = master.raw();
    future_filter(&mut conn);
    wait_for_replicas(&mut conn, 1);
    let want = conn.call(&["DUMP", "w"]);
    assert_eq!(replica.raw().call(&["DUMP", "w"]), want, "replica");
    drop(conn);
    master.restart(&[]);
    assert_eq!(master.raw().call(&["DUMP", "w"]), want, "AOF replay");
    assert_eq!(call(&mut master.raw(), "WBF.EXISTS w a"), Reply::Int(1));
}
