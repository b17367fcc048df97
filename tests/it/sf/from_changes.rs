//! SF.BUILD FROM a source changed while it is copied in slices (`bf.sf-build-slices
//! hold` holds the copy after its first slice): a source that only shrinks, only grows,
//! is deleted or changes type. Each build answers what a build of the source as it is
//! afterwards answers, and builds the same filter, byte for byte.

use super::from_child::{fill, N};
use super::from_slices::{copy_bytes, release, start_held};
use crate::support::replies::{err, int, ok};
use crate::support::{call, expect, scandump, wait_until, RawConnection, Reply, Server};

/// Fills `set` with `m0 .. m{N-1}`, holds `SF.BUILD f 0.01 FROM set` after its first
/// slice, runs `writes`, releases the copy; then builds `now` from the source as it is.
/// Returns the server, a connection, the held build's reply and the later build's.
fn changed_during_the_copy(writes: &[&str]) -> (Server, RawConnection, Reply, Reply) {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let mut builder = server.raw();
    start_held(&mut conn, &mut [(&mut builder, "f", "set")]);
    for write in writes {
        let reply = call(&mut conn, write);
        assert!(!matches!(reply, Reply::Error(_)), "{write}: {reply:?}");
    }
    release(&mut conn);
    let held = builder.read_reply();
    wait_until("the hashes freed", || copy_bytes(&mut conn) == 0);
    let now = call(&mut conn, "SF.BUILD now 0.01 FROM set");
    (server, conn, held, now)
}

/// Both builds made the same filter of `members` members.
fn same_filter(conn: &mut RawConnection, members: i64) {
    expect(conn, "SF.CARD f", int(members));
    expect(conn, "SF.CARD now", int(members));
    assert_eq!(
        scandump(conn, "SF.SCANDUMP", "f"),
        scandump(conn, "SF.SCANDUMP", "now")
    );
}

/// The source loses a member during the copy and gains none: the fallback's child must
/// expect the source's length at the fork, not the length the copy started from.
#[test]
fn a_source_that_only_shrinks_during_the_copy() {
    let (_server, mut conn, held, now) = changed_during_the_copy(&["SREM set m0"]);
    assert_eq!(held, ok());
    assert_eq!(now, ok());
    same_filter(&mut conn, N as i64 - 1);
}

/// Shrunk below the size built in the command itself: still the source at the fork.
#[test]
fn a_source_that_shrinks_below_the_synchronous_limit_during_the_copy() {
    let keep = 100;
    let mut trim = Vec::new();
    for start in (keep..N).step_by(10_000) {
        let members: Vec<String> = (start..(start + 10_000).min(N))
            .map(|i| format!("m{i}"))
            .collect();
        trim.push(format!("SREM set {}", members.join(" ")));
    }
    let trim: Vec<&str> = trim.iter().map(String::as_str).collect();
    let (_server, mut conn, held, now) = changed_during_the_copy(&trim);
    assert_eq!(held, ok());
    assert_eq!(now, ok());
    same_filter(&mut conn, keep as i64);
    let mut cmd = vec!["SF.MEXISTS".to_string(), "f".to_string()];
    cmd.extend((0..keep).map(|i| format!("m{i}")));
    assert_eq!(conn.call(&cmd).ints(), vec![1; keep]);
}

#[test]
fn a_source_that_only_grows_during_the_copy() {
    let (_server, mut conn, held, now) =
        changed_during_the_copy(&["SADD set later", "SADD set later2 later3"]);
    assert_eq!(held, ok());
    assert_eq!(now, ok());
    same_filter(&mut conn, N as i64 + 3);
    let reply = call(&mut conn, "SF.MEXISTS f later later2 later3 m0");
    assert_eq!(reply.ints(), [1, 1, 1, 1]);
}

#[test]
fn a_source_deleted_during_the_copy() {
    let (_server, mut conn, held, now) = changed_during_the_copy(&["DEL set"]);
    assert_eq!(held, err("ERR not found"));
    assert_eq!(now, held);
    expect(&mut conn, "EXISTS f now", int(0));
}

/// Retyped to a string: the wrong-type reply a build of a string gives.
#[test]
fn a_source_retyped_to_a_string_during_the_copy() {
    let (_server, mut conn, held, now) = changed_during_the_copy(&["SET set x"]);
    assert!(
        matches!(&held, Reply::Error(e) if e.starts_with("WRONGTYPE")),
        "{held:?}"
    );
    assert_eq!(now, held);
    expect(&mut conn, "EXISTS f now", int(0));
}

/// Retyped to another kind of source (a hash of other fields): the filter of the hash.
#[test]
fn a_source_retyped_to_a_hash_during_the_copy() {
    let (_server, mut conn, held, now) =
        changed_during_the_copy(&["DEL set", "HSET set h0 v0 h1 v1 h2 v2"]);
    assert_eq!(held, ok());
    assert_eq!(now, ok());
    same_filter(&mut conn, 3);
    assert_eq!(call(&mut conn, "SF.MEXISTS f h0 h1 h2").ints(), [1, 1, 1]);
}
