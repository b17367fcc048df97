//! Hostile CMS values and sizes: RESTORE of forged payloads (the CRC recomputed, so the
//! module's loader is reached) is refused cleanly, never crashes, leaves no key; a
//! CMS.INITBYDIM beyond the memory ceiling is an error reply (RedisBloom aborts the
//! server on 10^9 × 10^9).

use crate::support::ceiling::{largest_under_one_mib, TOO_LARGE};
use crate::support::dump_payload::{alive_without, encode_value, learn_version, restore, seal, F};
use crate::support::dump_payload::{forgeries_are_refused, uncompressed_dumps};
use crate::support::{Reply, Server};

/// The module id of `CMSk-TYPE`, encoding 0 (RedisBloom's DUMP payloads start with it).
pub(super) const CMS_ID: u64 = 0x08c4_a4f9_360f_1000;

#[test]
fn forged_payloads_are_refused_and_the_server_lives() {
    let server = Server::start();
    let mut conn = server.raw();
    // Uncompressed payloads, so a forged one can be compared with a real one.
    uncompressed_dumps(&mut conn);
    conn.call(&["CMS.INITBYDIM", "real", "3", "2"]);
    let real = conn.call(&["DUMP", "real"]).bytes();
    learn_version(&real);
    // The real payload is the layout these forgeries start from.
    let genuine = [F::U(3), F::U(2), F::U(0), F::S(vec![0; 24])];
    assert_eq!(seal(&encode_value(CMS_ID, &genuine)), real);
    let forged: Vec<(&str, Vec<F>)> = vec![
        ("width 0", vec![F::U(0), F::U(2), F::U(0), F::S(vec![])]),
        ("depth 0", vec![F::U(3), F::U(0), F::U(0), F::S(vec![])]),
        (
            "short counters",
            vec![F::U(3), F::U(2), F::U(0), F::S(vec![0; 23])],
        ),
        (
            "long counters",
            vec![F::U(3), F::U(2), F::U(0), F::S(vec![0; 28])],
        ),
        (
            "huge dimensions, tiny buffer",
            vec![F::U(1 << 40), F::U(1 << 40), F::U(0), F::S(vec![0; 24])],
        ),
        (
            "dimensions whose product wraps",
            vec![F::U(1 << 62), F::U(4), F::U(0), F::S(vec![])],
        ),
        (
            "a double for the width",
            vec![F::D(3.0), F::U(2), F::U(0), F::S(vec![0; 24])],
        ),
        ("no counters", vec![F::U(3), F::U(2), F::U(0)]),
        ("nothing", vec![]),
        (
            "a field too many",
            vec![F::U(3), F::U(2), F::U(0), F::S(vec![0; 24]), F::U(1)],
        ),
    ];
    // Another encoding version (the id's low 10 bits) is refused too.
    forgeries_are_refused(&mut conn, CMS_ID, &genuine, &forged);
    // Any counter values and count are a valid sketch, and used to the full.
    let odd = [F::U(3), F::U(2), F::U(u64::MAX), F::S(vec![0xff; 24])];
    assert_eq!(
        restore(&mut conn, "odd", &seal(&encode_value(CMS_ID, &odd))),
        Reply::ok()
    );
    assert_eq!(
        conn.call(&["CMS.INFO", "odd"]),
        Reply::Array(Some(vec![
            Reply::Simple("width".into()),
            Reply::Int(3),
            Reply::Simple("depth".into()),
            Reply::Int(2),
            Reply::Simple("count".into()),
            Reply::Int(-1),
        ]))
    );
    assert_eq!(
        conn.call(&["CMS.QUERY", "odd", "a"]),
        Reply::Array(Some(vec![Reply::Int(i64::from(u32::MAX))]))
    );
    assert_eq!(
        conn.call(&["CMS.INCRBY", "odd", "a", "1"]),
        Reply::Array(Some(vec![Reply::Error("CMS: INCRBY overflow".into())]))
    );
    assert_eq!(
        conn.call(&["CMS.MERGE", "odd", "1", "odd", "WEIGHTS", "2"]),
        Reply::Error("CMS: MERGE overflow".into())
    );
}

#[test]
fn sketches_beyond_the_ceiling_are_an_error_reply() {
    let server = Server::start();
    let mut conn = server.raw();
    for (w, d) in [
        ("1000000000", "1000000000"),
        ("100000", "100000"),
        ("4294967296", "2"),
    ] {
        assert_eq!(
            conn.call(&["CMS.INITBYDIM", "big", w, d]),
            Reply::Error(TOO_LARGE.into()),
            "{w} × {d}"
        );
        alive_without(&mut conn, "big", "a refused CMS.INITBYDIM");
    }
    // INITBYPROB's dimensions too: error 1e-12 asks for 2·10^12 counters per row.
    assert_eq!(
        conn.call(&["CMS.INITBYPROB", "big", "0.000000000001", "0.5"]),
        Reply::Error(TOO_LARGE.into())
    );
    alive_without(&mut conn, "big", "a refused CMS.INITBYPROB");
    // Under a lowered ceiling (MEMORY USAGE's count: 8 + 8 bytes per counter).
    largest_under_one_mib(
        &mut conn,
        &["CMS.INITBYDIM", "k", "131071", "1"],
        &["CMS.INITBYDIM", "k2", "131072", "1"],
    );
}

/// With the ceiling raised to its maximum the allocation itself is attempted: a sketch
/// larger than the machine's memory is `CMS: Insufficient memory to create the key` (the
/// module refuses requests beyond the memory available), not an abort, and no key.
#[test]
fn sketches_larger_than_the_machine_are_insufficient_memory() {
    let server = Server::start();
    let mut conn = server.raw();
    let ceiling = [
        "CONFIG",
        "SET",
        "bf.max-filter-bytes",
        "9223372036854775807",
    ];
    assert_eq!(conn.call(&ceiling), Reply::ok());
    for args in [
        // 10^14 counters: 400 TB.
        ["CMS.INITBYDIM", "big", "100000000000", "1000"],
        // ⌈2 / 10^-13⌉ = 2·10^13 counters per row, 1 row: 80 TB.
        ["CMS.INITBYPROB", "big", "0.0000000000001", "0.5"],
    ] {
        assert_eq!(
            conn.call(&args),
            Reply::Error("CMS: Insufficient memory to create the key".into()),
            "{args:?}"
        );
        alive_without(&mut conn, "big", "a sketch beyond the machine");
    }
    assert_eq!(
        conn.call(&["CMS.INITBYDIM", "small", "10", "2"]),
        Reply::ok()
    );
}
