//! SF.BUILD FROM a source above the synchronous limit: built in a forked child while the
//! server keeps serving; the same bytes as ITEMS, a point-in-time view, a key created
//! meanwhile never overwritten, every failure a clear error that leaves nothing.
//!
//! A large source is copied in slices by default (tests/it/sf/from_slices.rs); these tests
//! set `bf.sf-build-slices no`, which forks at once, the path a copy falls back to. They
//! freeze the child with SIGSTOP (found among the server's child processes) to act while
//! the build is known to be running, so nothing depends on timing.

use super::mexists;
use crate::support::ceiling::TOO_LARGE;
use crate::support::replies::{err, int, ok};
use crate::support::{
    call, expect, info_field, rewrite_aof, scandump, start_replica, wait_for_bgsave,
    wait_for_replicas, wait_until, RawConnection, Reply, Server,
};
use redbloom::sf::FROM_SYNC_MAX_MEMBERS;

/// Members per source: well above the synchronous limit.
pub(super) const N: usize = 300_000;

pub(super) const CANNOT_BLOCK: &str = "ERR SF.BUILD FROM a source of more than 20000 members blocks the client, which MULTI and scripts do not allow";
pub(super) const BUSY: &str = "ERR SF.BUILD FROM needs a child process, and another one (BGSAVE, AOF rewrite or another build) is running; try again later";
const CHILD_FAILED: &str =
    "ERR SF.BUILD FROM: the child process building the filter failed (see the server log)";

/// `m0 .. m{n-1}` into `key`, a set, sorted set or hash (`SADD`, `ZADD`, `HSET`).
pub(super) fn fill(conn: &mut RawConnection, command: &str, key: &str, n: usize) {
    let batches: Vec<Vec<String>> = (0..n)
        .step_by(1000)
        .map(|start| {
            let mut cmd = vec![command.to_string(), key.to_string()];
            for i in start..(start + 1000).min(n) {
                match command {
                    "ZADD" => cmd.extend([i.to_string(), format!("m{i}")]),
                    "HSET" => cmd.extend([format!("m{i}"), format!("v{i}")]),
                    _ => cmd.push(format!("m{i}")),
                }
            }
            cmd
        })
        .collect();
    for reply in conn.pipeline(&batches) {
        assert!(matches!(reply, Reply::Int(_)), "{reply:?}");
    }
}

/// The SCANDUMP of `SF.BUILD key rate ITEMS m0 .. m{n-1}` (built under `key`).
pub(super) fn items_dump(
    conn: &mut RawConnection,
    key: &str,
    rate: &str,
    n: usize,
) -> Vec<(i64, Option<Vec<u8>>)> {
    assert_eq!(super::build(conn, key, rate, "m", n), ok());
    scandump(conn, "SF.SCANDUMP", key)
}

pub(super) fn forks(conn: &mut RawConnection) -> i64 {
    info_field(conn, "stats", "total_forks").parse().unwrap()
}

/// The state letter and parent of process `pid` (`None` once it is gone).
fn stat(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": the name may hold spaces and parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some((fields[0].chars().next()?, fields[1].parse().ok()?))
}

fn process_state(pid: u32) -> Option<char> {
    stat(pid).map(|(state, _)| state)
}

/// The server's child processes (pid, state letter), from /proc (a listing of /proc
/// may miss a process while others come and go: callers poll).
fn children(server: &Server) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        match stat(pid) {
            Some((state, parent)) if parent == server.pid() => out.push((pid, state)),
            _ => {}
        }
    }
    out
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// A stopped build child; killed if the test fails before it resumes it (a stopped child
/// would outlive the test).
struct Frozen(u32);

impl Drop for Frozen {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

/// A server whose large FROM builds fork at once (no copy in slices).
fn forking_server() -> Server {
    let server = Server::start();
    expect(&mut server.raw(), "CONFIG SET bf.sf-build-slices no", ok());
    server
}

/// Sends `SF.BUILD key rate FROM source` on `conn` without reading the reply, waits for
/// the child and stops it (SIGSTOP): the build is then running, and stays so.
fn start_frozen(server: &Server, conn: &mut RawConnection, key: &str, source: &str) -> Frozen {
    conn.send(&["SF.BUILD", key, "0.01", "FROM", source])
        .unwrap();
    let mut child = None;
    wait_until("the build child", || {
        child = children(server).first().copied();
        child.is_some()
    });
    let (pid, _) = child.unwrap();
    signal(pid, "STOP");
    // Running, sleeping or in disk sleep, it stops on its way back to user space.
    wait_until("the child stopped", || {
        !matches!(process_state(pid), Some('R' | 'S' | 'D'))
    });
    assert_eq!(
        process_state(pid),
        Some('T'),
        "the child finished before it could be stopped"
    );
    Frozen(pid)
}

#[test]
fn large_sources_build_in_a_child_with_the_bytes_of_items() {
    assert!((N as u64) > 5 * FROM_SYNC_MAX_MEMBERS);
    let server = forking_server();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    fill(&mut conn, "ZADD", "zset", N);
    fill(&mut conn, "HSET", "hash", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    expect(&mut conn, "CONFIG SET notify-keyspace-events Kd", ok());
    let mut subscriber = server.raw();
    subscriber.call(&["PSUBSCRIBE", "__keyspace@0__:f*"]);
    for (dest, source) in [("fs", "set"), ("fz", "zset"), ("fh", "hash")] {
        let before = forks(&mut conn);
        expect(
            &mut conn,
            &format!("SF.BUILD {dest} 0.01 FROM {source}"),
            ok(),
        );
        assert_eq!(forks(&mut conn), before + 1, "{dest}: built in a child");
        let message = subscriber.read_reply().array();
        assert_eq!(message[2].text(), format!("__keyspace@0__:{dest}"));
        assert_eq!(message[3].text(), "sf.build");
        expect(&mut conn, &format!("SF.CARD {dest}"), int(N as i64));
        assert_eq!(mexists(&mut conn, dest, "m", N), vec![1; N], "{dest}");
        assert_eq!(
            scandump(&mut conn, "SF.SCANDUMP", dest),
            reference,
            "{dest}"
        );
    }
    expect(&mut conn, "SF.EXISTS fh v1", int(0));
    // At the limit, the command builds in place (no fork).
    let small = FROM_SYNC_MAX_MEMBERS as usize;
    fill(&mut conn, "SADD", "small", small);
    let before = forks(&mut conn);
    expect(&mut conn, "SF.BUILD fsmall 0.01 FROM small", ok());
    assert_eq!(forks(&mut conn), before);
    expect(&mut conn, "SF.CARD fsmall", int(small as i64));
    // The caller's ACL permissions hold for a large source too.
    expect(&mut conn, "ACL SETUSER limited on nopass ~f* +@all", ok());
    expect(&mut conn, "AUTH limited x", ok());
    expect(
        &mut conn,
        "SF.BUILD f2 0.01 FROM set",
        err("NOPERM this user has no permissions to read the source of SF.BUILD FROM"),
    );
    expect(&mut conn, "AUTH default x", ok());
    expect(&mut conn, "EXISTS f2", int(0));
    // The ceiling applies to the child's filter (300k items at 30 bits: 1.3 MB).
    expect(&mut conn, "CONFIG SET bf.max-filter-bytes 1048576", ok());
    expect(&mut conn, "SF.BUILD f3 1e-9 FROM set", err(TOO_LARGE));
    expect(&mut conn, "EXISTS f3", int(0));
}

#[test]
fn the_server_serves_while_the_child_builds_a_point_in_time_view() {
    let server = forking_server();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    let mut other = server.raw();
    let child = start_frozen(&server, &mut conn, "f", "set");
    // The build is running: other clients are served, and PING answers before the
    // build's reply.
    expect(&mut other, "PING", Reply::Simple("PONG".into()));
    assert_eq!(info_field(&mut other, "clients", "blocked_clients"), "1");
    // Writes to the source after the command do not enter the filter.
    expect(&mut other, "SADD set later", int(1));
    expect(&mut other, "SREM set m0", int(1));
    // One child at a time: another build, a BGSAVE wait.
    expect(&mut other, "SF.BUILD g 0.01 FROM set", err(BUSY));
    expect(&mut other, "EXISTS g", int(0));
    let bgsave = call(&mut other, "BGSAVE").error();
    assert!(bgsave.contains("child process is active"), "{bgsave}");
    signal(child.0, "CONT");
    assert_eq!(conn.read_reply(), ok());
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "f"), reference);
    assert_eq!(info_field(&mut other, "clients", "blocked_clients"), "0");
    // A key created meanwhile is not overwritten.
    let child = start_frozen(&server, &mut conn, "taken", "set");
    expect(&mut other, "SF.BUILD taken 0.01 ITEMS x", ok());
    signal(child.0, "CONT");
    assert_eq!(conn.read_reply(), err("ERR item exists"));
    expect(&mut conn, "SF.CARD taken", int(1));
    expect(&mut conn, "SF.EXISTS taken x", int(1));
}

#[test]
fn a_killed_child_or_a_gone_client_leaves_nothing() {
    let server = forking_server();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let child = start_frozen(&server, &mut conn, "f", "set");
    signal(child.0, "KILL");
    assert_eq!(conn.read_reply(), err(CHILD_FAILED));
    expect(&mut conn, "EXISTS f", int(0));
    // The client disconnects: its child is killed, the client freed.
    let mut gone = server.raw();
    let child = start_frozen(&server, &mut gone, "f", "set");
    drop(gone);
    // The server asks the stopped child to exit (SIGUSR1, pending until it runs) and
    // waits for it: let the signal through.
    wait_until("SIGUSR1 sent to the child", || {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.0)).unwrap_or_default();
        status.lines().any(|line| {
            line.strip_prefix("ShdPnd:")
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                .is_some_and(|mask| mask & (1 << (10 - 1)) != 0)
        })
    });
    signal(child.0, "CONT");
    wait_until("the child's end", || process_state(child.0).is_none());
    assert_eq!(info_field(&mut conn, "clients", "blocked_clients"), "0");
    expect(&mut conn, "EXISTS f", int(0));
    // Nothing stuck: the next build runs.
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", ok());
    expect(&mut conn, "SF.CARD f", int(N as i64));
}

#[test]
fn transactions_scripts_and_a_running_bgsave_refuse_a_large_source() {
    let server = forking_server();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    fill(&mut conn, "SADD", "small", 100);
    expect(&mut conn, "MULTI", Reply::Simple("OK".into()));
    expect(
        &mut conn,
        "SF.BUILD f 0.01 FROM set",
        Reply::Simple("QUEUED".into()),
    );
    expect(
        &mut conn,
        "SF.BUILD g 0.01 FROM small",
        Reply::Simple("QUEUED".into()),
    );
    expect(
        &mut conn,
        "EXEC",
        Reply::Array(Some(vec![err(CANNOT_BLOCK), ok()])),
    );
    let script = "return redis.pcall('SF.BUILD', KEYS[1], '0.01', 'FROM', KEYS[2])";
    assert_eq!(
        conn.call(&["EVAL", script, "2", "f", "set"]),
        err(CANNOT_BLOCK)
    );
    assert_eq!(conn.call(&["EVAL", script, "2", "h", "small"]), ok());
    expect(&mut conn, "EXISTS f", int(0));
    // A BGSAVE is running (slowed down to a key per second): the build is refused.
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 1000000", ok());
    let reply = call(&mut conn, "BGSAVE");
    assert!(matches!(reply, Reply::Simple(_)), "{reply:?}");
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", err(BUSY));
    expect(&mut conn, "EXISTS f", int(0));
    for (pid, _) in children(&server) {
        signal(pid, "KILL");
    }
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 0", ok());
    wait_until("the end of the BGSAVE", || {
        info_field(&mut conn, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", ok());
}

#[test]
fn replicas_and_the_aof_hold_the_bytes_of_a_child_build() {
    let mut master = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let replica = start_replica(&master);
    let mut m = master.raw();
    fill(&mut m, "SADD", "set", N);
    // f copied in slices, g built in a child.
    expect(&mut m, "SF.BUILD f 0.01 FROM set", ok());
    expect(&mut m, "CONFIG SET bf.sf-build-slices no", ok());
    let before = forks(&mut m);
    expect(&mut m, "SF.BUILD g 0.01 FROM set", ok());
    assert_eq!(forks(&mut m), before + 1);
    expect(&mut m, "DEL set", int(1));
    wait_for_replicas(&mut m, 1);
    let state = |conn: &mut RawConnection| {
        [
            conn.call(&["DUMP", "f"]),
            conn.call(&["DEBUG", "DIGEST-VALUE", "f"]),
            conn.call(&["DUMP", "g"]),
            conn.call(&["DEBUG", "DIGEST-VALUE", "g"]),
        ]
    };
    let expected = state(&mut m);
    assert!(matches!(&expected[0], Reply::Bulk(Some(_))));
    assert_eq!(
        expected[0], expected[2],
        "the same filter by slices and by a child"
    );
    assert_eq!(state(&mut replica.raw()), expected, "replica");
    wait_for_bgsave(&mut m);
    drop(m);
    master.restart(&[]);
    let mut m = master.raw();
    assert_eq!(state(&mut m), expected, "AOF replay");
    rewrite_aof(&mut m);
    drop(m);
    master.restart(&[]);
    let mut m = master.raw();
    assert_eq!(state(&mut m), expected, "AOF rewrite + replay");
    assert_eq!(mexists(&mut m, "f", "m", N), vec![1; N]);
}

/// A FROM from the AOF (never written by redbloom, which logs LOADCHUNK) builds within
/// the command, above the limit too: a replay never refuses it.
#[test]
fn a_large_from_in_the_aof_builds_in_the_command() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    let n = 2 * FROM_SYNC_MAX_MEMBERS as usize;
    fill(&mut conn, "SADD", "set", n);
    let reference = items_dump(&mut conn, "items", "0.01", n);
    drop(conn);
    server.stop(false);
    let incr = std::fs::read_dir(server.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .unwrap();
    let mut aof = std::fs::read(&incr).unwrap();
    aof.extend_from_slice(&crate::support::resp::encode(&[
        "SF.BUILD", "f", "0.01", "FROM", "set",
    ]));
    std::fs::write(&incr, aof).unwrap();
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(forks(&mut conn), 0);
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "f"), reference);
}
