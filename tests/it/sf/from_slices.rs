//! SF.BUILD FROM a large source copied in slices on the main thread (the default): no
//! child, the bytes of ITEMS, the server serving between slices, and a write to the
//! source during the copy falling back to a child that sees the source at that moment.
//!
//! `bf.sf-build-slices hold` holds a copy after its first slice, so each test acts while
//! the copy is known to be in progress; nothing depends on timing.

use super::from_child::{fill, forks, items_dump, BUSY, N};
use crate::support::replies::{err, int, ok};
use crate::support::{
    call, expect, info_field, scandump, wait_until, RawConnection, Reply, Server,
};

pub(super) fn copies(conn: &mut RawConnection) -> u64 {
    info_field(conn, "bf", "bf_sf_build_copies")
        .parse()
        .unwrap()
}

pub(super) fn copy_bytes(conn: &mut RawConnection) -> u64 {
    info_field(conn, "bf", "bf_sf_build_copy_bytes")
        .parse()
        .unwrap()
}

/// Holds copies after their first slice, sends `SF.BUILD key 0.01 FROM source` on each
/// connection without reading the replies, and waits until every copy is held.
pub(super) fn start_held(
    conn: &mut RawConnection,
    builds: &mut [(&mut RawConnection, &str, &str)],
) {
    expect(conn, "CONFIG SET bf.sf-build-slices hold", ok());
    let before = copies(conn);
    for (c, key, source) in builds.iter_mut() {
        c.send(&["SF.BUILD", key, "0.01", "FROM", source]).unwrap();
    }
    let want = before + builds.len() as u64;
    wait_until("the copies held", || copies(conn) == want);
}

pub(super) fn release(conn: &mut RawConnection) {
    expect(conn, "CONFIG SET bf.sf-build-slices yes", ok());
}

#[test]
fn large_sources_are_copied_in_slices_with_the_bytes_of_items_and_no_child() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(
        &mut conn,
        "CONFIG GET bf.sf-build-slices",
        Reply::Array(Some(vec![
            Reply::Bulk(Some(b"bf.sf-build-slices".to_vec())),
            Reply::Bulk(Some(b"yes".to_vec())),
        ])),
    );
    fill(&mut conn, "SADD", "set", N);
    fill(&mut conn, "ZADD", "zset", N);
    fill(&mut conn, "HSET", "hash", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    let before = forks(&mut conn);
    for (dest, source) in [("fs", "set"), ("fz", "zset"), ("fh", "hash")] {
        expect(
            &mut conn,
            &format!("SF.BUILD {dest} 0.01 FROM {source}"),
            ok(),
        );
        assert_eq!(
            scandump(&mut conn, "SF.SCANDUMP", dest),
            reference,
            "{dest}"
        );
    }
    assert_eq!(forks(&mut conn), before, "no child");
    wait_until("the hashes freed", || copy_bytes(&mut conn) == 0);
    assert_eq!(copies(&mut conn), 0);
    // A running BGSAVE (slowed to a key per second) does not stop a copy in slices, but
    // its fallback, which needs a child, is refused.
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 1000000", ok());
    assert!(matches!(call(&mut conn, "BGSAVE"), Reply::Simple(_)));
    expect(&mut conn, "SF.BUILD during 0.01 FROM set", ok());
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "during"), reference);
    let mut writer = server.raw();
    start_held(&mut conn, &mut [(&mut writer, "late", "set")]);
    expect(&mut conn, "SADD set x", int(1));
    release(&mut conn);
    assert_eq!(writer.read_reply(), err(BUSY));
    expect(&mut conn, "EXISTS late", int(0));
    expect(&mut conn, "CONFIG SET rdb-key-save-delay 0", ok());
}

#[test]
fn ping_is_answered_between_slices() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    let mut builder = server.raw();
    let before = forks(&mut conn);
    start_held(&mut conn, &mut [(&mut builder, "f", "set")]);
    // The copy is in progress: another client's PING completes before the build's reply.
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
    assert_eq!(info_field(&mut conn, "clients", "blocked_clients"), "1");
    // Writes to other keys leave the copy alone.
    expect(&mut conn, "SADD other x", int(1));
    expect(&mut conn, "DEL other", int(1));
    expect(&mut conn, "BF.ADD bf x", int(1));
    assert!(copy_bytes(&mut conn) >= 8 * N as u64);
    release(&mut conn);
    assert_eq!(builder.read_reply(), ok());
    assert_eq!(forks(&mut conn), before, "no child");
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "f"), reference);
    wait_until("the hashes freed", || copy_bytes(&mut conn) == 0);
}

#[test]
fn a_write_to_the_source_during_the_copy_falls_back_to_a_child_at_that_moment() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let mut builder = server.raw();
    let before = forks(&mut conn);
    start_held(&mut conn, &mut [(&mut builder, "f", "set")]);
    expect(&mut conn, "SADD set later", int(1));
    expect(&mut conn, "SREM set m0", int(1));
    release(&mut conn);
    assert_eq!(builder.read_reply(), ok());
    assert_eq!(forks(&mut conn), before + 1, "the fallback's child");
    // The filter is the source after the writes: the same bytes as a build of it now.
    expect(&mut conn, "SF.BUILD now 0.01 FROM set", ok());
    assert_eq!(forks(&mut conn), before + 1);
    assert_eq!(
        scandump(&mut conn, "SF.SCANDUMP", "f"),
        scandump(&mut conn, "SF.SCANDUMP", "now")
    );
    expect(&mut conn, "SF.EXISTS f later", int(1));
    expect(&mut conn, "SF.CARD f", int(N as i64));
    wait_until("the hashes freed", || copy_bytes(&mut conn) == 0);
    // An expiry, a RENAME onto the source, a FLUSHALL of another database, a SWAPDB:
    // each falls back too.
    let n = forks(&mut conn);
    start_held(&mut conn, &mut [(&mut builder, "g", "set")]);
    expect(&mut conn, "SELECT 1", ok());
    expect(&mut conn, "SET unrelated 1", ok());
    expect(&mut conn, "FLUSHDB", ok());
    expect(&mut conn, "SELECT 0", ok());
    release(&mut conn);
    assert_eq!(builder.read_reply(), ok());
    assert_eq!(forks(&mut conn), n + 1, "FLUSHDB of another database");
    start_held(&mut conn, &mut [(&mut builder, "h", "set")]);
    expect(&mut conn, "SWAPDB 0 1", ok());
    release(&mut conn);
    // The fallback opens the source in database 0, now the empty database 1 was.
    assert_eq!(builder.read_reply(), err("ERR not found"));
    expect(&mut conn, "SWAPDB 0 1", ok());
    expect(&mut conn, "EXISTS h", int(0));
}

#[test]
fn a_source_deleted_during_the_copy_is_a_missing_source() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let mut builder = server.raw();
    start_held(&mut conn, &mut [(&mut builder, "f", "set")]);
    expect(&mut conn, "DEL set", int(1));
    release(&mut conn);
    assert_eq!(builder.read_reply(), err("ERR not found"));
    expect(&mut conn, "EXISTS f", int(0));
    // Replaced by a string: what a build of a string answers.
    fill(&mut conn, "SADD", "set", N);
    start_held(&mut conn, &mut [(&mut builder, "f", "set")]);
    expect(&mut conn, "SET set x", ok());
    release(&mut conn);
    assert_eq!(
        builder.read_reply(),
        call(&mut conn, "SF.BUILD f 0.01 FROM set")
    );
    expect(&mut conn, "EXISTS f", int(0));
    assert_eq!(copy_bytes(&mut conn), 0);
}

#[test]
fn a_client_gone_during_the_copy_leaves_nothing() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let used = |conn: &mut RawConnection| -> i64 {
        info_field(conn, "memory", "used_memory").parse().unwrap()
    };
    let before = used(&mut conn);
    let mut gone = server.raw();
    start_held(&mut conn, &mut [(&mut gone, "f", "set")]);
    let held = copy_bytes(&mut conn) as i64;
    assert!(held >= 8 * N as i64);
    assert!(
        used(&mut conn) - before >= held,
        "the hashes are server memory"
    );
    drop(gone);
    wait_until("the copy dropped", || copies(&mut conn) == 0);
    assert_eq!(copy_bytes(&mut conn), 0);
    assert!(used(&mut conn) - before < held / 2, "the hashes freed");
    assert_eq!(info_field(&mut conn, "clients", "blocked_clients"), "0");
    release(&mut conn);
    expect(&mut conn, "EXISTS f", int(0));
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", ok());
    expect(&mut conn, "SF.CARD f", int(N as i64));
}

/// Copies in slices need no child: two large builds run side by side.
#[test]
fn two_large_builds_copy_side_by_side() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    fill(&mut conn, "HSET", "hash", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    let (mut a, mut b, mut c) = (server.raw(), server.raw(), server.raw());
    let before = forks(&mut conn);
    start_held(
        &mut conn,
        &mut [
            (&mut a, "fa", "set"),
            (&mut b, "fb", "hash"),
            (&mut c, "fa", "hash"),
        ],
    );
    release(&mut conn);
    assert_eq!(b.read_reply(), ok());
    // The same key built twice (from sources of the same members): whichever answers
    // second finds it taken.
    let mut replies = [a.read_reply(), c.read_reply()];
    replies.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(replies, [err("ERR item exists"), ok()]);
    assert_eq!(forks(&mut conn), before);
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "fa"), reference);
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "fb"), reference);
}

/// The hashes (8 bytes a member) count against the memory left under maxmemory: when
/// they would not fit, the build forks (the child's memory is not the server's).
#[test]
fn hashes_that_would_not_fit_under_maxmemory_build_in_a_child() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    expect(&mut conn, "DEL items", int(1));
    let used: u64 = info_field(&mut conn, "memory", "used_memory")
        .parse()
        .unwrap();
    // Room for the filter (~0.4 MB) but not for the hashes (2.4 MB).
    let maxmemory = used + 1_500_000;
    expect(
        &mut conn,
        &format!("CONFIG SET maxmemory {maxmemory}"),
        ok(),
    );
    let before = forks(&mut conn);
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", ok());
    assert_eq!(forks(&mut conn), before + 1);
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "f"), reference);
}

/// A ribbon build needs little beside the hashes (it sorts them where they are and solves
/// in windows): where the hashes fit with 2.6 MB to spare, the copy runs in slices; a
/// fuse build, 37 bytes a member more (11 MB here), forks.
#[test]
fn a_ribbon_copy_needs_little_beside_the_hashes() {
    let server = Server::start();
    let mut conn = server.raw();
    fill(&mut conn, "SADD", "set", N);
    let reference = items_dump(&mut conn, "items", "0.01", N);
    expect(&mut conn, "DEL items", int(1));
    let used: u64 = info_field(&mut conn, "memory", "used_memory")
        .parse()
        .unwrap();
    // The hashes (2.4 MB), the ribbon's working memory and the filter (0.3 MB) fit.
    let maxmemory = used + 5_000_000;
    expect(
        &mut conn,
        &format!("CONFIG SET maxmemory {maxmemory}"),
        ok(),
    );
    let before = forks(&mut conn);
    expect(&mut conn, "SF.BUILD f 0.01 FROM set", ok());
    assert_eq!(forks(&mut conn), before);
    assert_eq!(scandump(&mut conn, "SF.SCANDUMP", "f"), reference);
    expect(&mut conn, "SF.BUILD g 0.01 ENCODING FUSE FROM set", ok());
    assert_eq!(forks(&mut conn), before + 1);
}
