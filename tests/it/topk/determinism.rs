//! The decay draw is deterministic: a replica (whether it got the value in the full sync
//! or built it from the replicated writes) and an AOF replay (of the commands, of the
//! rewrite's `RESTORE`, of the RDB preamble) hold the master's value byte for byte, so
//! TOPK.LIST WITHCOUNT, DUMP and DEBUG DIGEST-VALUE agree. RedisBloom draws with rand():
//! its replicas differ.

use crate::support::{rewrite_aof, start_replica, wait_for_replicas, RawConnection, Server};

/// Writes that collide a lot (narrow rows), so nearly every add draws.
fn colliding_writes(conn: &mut RawConnection, key: &str, round: usize) {
    for batch in 0..20 {
        let mut add = vec!["TOPK.ADD".to_string(), key.to_string()];
        add.extend((0..30).map(|i| format!("i{}", (i * 7 + batch * 3 + round) % 97)));
        conn.call(&add);
        conn.call(&[
            "TOPK.INCRBY",
            key,
            &format!("h{}", batch % 5),
            &(batch * 311 % 1000).to_string(),
            "heavy",
            "40",
        ]);
    }
}

fn state(conn: &mut RawConnection, key: &str) -> Vec<crate::support::Reply> {
    vec![
        conn.call(&["TOPK.LIST", key, "WITHCOUNT"]),
        conn.call(&["DUMP", key]),
        conn.call(&["DEBUG", "DIGEST-VALUE", key]),
        conn.call(&["TOPK.COUNT", key, "heavy", "h1", "i3", "i50"]),
    ]
}

#[test]
fn replicas_hold_the_master_s_value() {
    let master = Server::start();
    let mut m = master.raw();
    m.call(&["TOPK.RESERVE", "before", "8", "6", "3", "0.9"]);
    colliding_writes(&mut m, "before", 0);
    // The replica gets `before` in the full sync (the generator state inside), then the
    // writes that follow.
    let replica = start_replica(&master);
    let mut r = replica.raw();
    colliding_writes(&mut m, "before", 1);
    m.call(&["TOPK.RESERVE", "after", "5", "4", "2", "0.7"]);
    colliding_writes(&mut m, "after", 2);
    m.call(&["TOPK.RESERVE", "defaults", "3"]);
    colliding_writes(&mut m, "defaults", 3);
    wait_for_replicas(&mut m, 1);
    for key in ["before", "after", "defaults"] {
        assert_eq!(state(&mut m, key), state(&mut r, key), "{key}");
    }
    // A refused write replicates nothing.
    m.call(&["TOPK.INCRBY", "after", "a", "1", "b", "-1"]);
    m.call(&["TOPK.ADD", "after", "last"]);
    wait_for_replicas(&mut m, 1);
    assert_eq!(state(&mut m, "after"), state(&mut r, "after"));
}

#[test]
fn aof_replays_rebuild_the_same_value() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    conn.call(&["TOPK.RESERVE", "k", "6", "5", "3", "0.85"]);
    colliding_writes(&mut conn, "k", 0);
    let built = state(&mut conn, "k");
    drop(conn);
    // The commands replayed from TOPK.RESERVE on.
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(state(&mut conn, "k"), built, "replay of the commands");
    // The rewrite (RESTORE of the DUMP), then more commands on top of it.
    rewrite_aof(&mut conn);
    colliding_writes(&mut conn, "k", 1);
    let built = state(&mut conn, "k");
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(state(&mut conn, "k"), built, "replay of the rewrite");
    // With the RDB preamble.
    conn.call(&["CONFIG", "SET", "aof-use-rdb-preamble", "yes"]);
    rewrite_aof(&mut conn);
    colliding_writes(&mut conn, "k", 2);
    let built = state(&mut conn, "k");
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(state(&mut conn, "k"), built, "replay of the preamble");
}
