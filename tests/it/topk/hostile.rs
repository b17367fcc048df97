//! Hostile Top-K values and sizes: RESTORE of forged payloads (the CRC recomputed, so the
//! module's loader is reached) is refused cleanly, never crashes, leaves no key; odd but
//! consistent values load and work; a TOPK.RESERVE beyond the memory ceiling is an error
//! reply (RedisBloom allocates k × 24 bytes of heap and width × depth × 8 of buckets as
//! asked, and aborts when the allocator refuses).

use crate::support::ceiling::{largest_under_one_mib, TOO_LARGE};
use crate::support::dump_payload::{decode, encode_value, learn_version, restore, seal, F};
use crate::support::dump_payload::{forgeries_are_refused, uncompressed_dumps};
use crate::support::{RawConnection, Reply, Server};

fn alive_without(conn: &mut RawConnection, key: &str, what: &str) {
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()), "{what}");
    assert_eq!(conn.call(&["EXISTS", key]).int(), 0, "{what}");
}

/// A record of the heap buffer: fingerprint, item length, pointer, count, padding.
fn record(fp: u32, itemlen: u32, pointer: u64, count: u32) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend_from_slice(&fp.to_le_bytes());
    r.extend_from_slice(&itemlen.to_le_bytes());
    r.extend_from_slice(&pointer.to_le_bytes());
    r.extend_from_slice(&count.to_le_bytes());
    r.extend_from_slice(&[0; 4]);
    r
}

#[test]
fn forged_payloads_are_refused_and_the_server_lives() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    conn.call(&["TOPK.RESERVE", "real", "2", "3", "1", "0.5"]);
    let real = conn.call(&["DUMP", "real"]).bytes();
    learn_version(&real);
    let (id, fields) = decode(&real);
    let genuine = vec![
        F::U(2),
        F::U(3),
        F::U(1),
        F::D(0.5),
        F::S(vec![0; 24]),
        F::S(vec![0; 48]),
        F::S(vec![0]),
        F::S(vec![0]),
    ];
    assert_eq!(fields, genuine, "RedisBloom's layout");
    let with = |i: usize, f: F| {
        let mut v = genuine.clone();
        v[i] = f;
        v
    };
    let forged: Vec<(&str, Vec<F>)> = vec![
        ("k 0", with(0, F::U(0))),
        ("k above u32", with(0, F::U(1 << 32))),
        ("huge k, short heap", with(0, F::U(u64::from(u32::MAX)))),
        ("width 0", with(1, F::U(0))),
        ("huge width", with(1, F::U(u64::from(u32::MAX)))),
        ("depth 0", with(2, F::U(0))),
        ("huge depth", with(2, F::U(1 << 31))),
        ("decay 0", with(3, F::D(0.0))),
        ("decay above 1", with(3, F::D(1.5))),
        ("decay NaN", with(3, F::D(f64::NAN))),
        ("an unsigned decay", with(3, F::U(1))),
        ("short buckets", with(4, F::S(vec![0; 23]))),
        ("long buckets", with(4, F::S(vec![0; 32]))),
        ("short heap", with(5, F::S(vec![0; 47]))),
        ("long heap", with(5, F::S(vec![0; 72]))),
        ("an empty item string", with(6, F::S(vec![]))),
        ("an item without its NUL", with(7, F::S(b"ab".to_vec()))),
        ("an item too few", genuine[..7].to_vec()),
        ("nothing", vec![]),
        (
            "a field too many",
            [genuine.clone(), vec![F::S(vec![0])]].concat(),
        ),
    ];
    forgeries_are_refused(&mut conn, id, &genuine, &forged);

    // Wrong but consistent contents load and work: counts at u32::MAX, a heap out of
    // order, an item whose recorded length is not its string's, garbage pointers.
    let fp_a = 0x1234_5678;
    let odd = vec![
        F::U(2),
        F::U(3),
        F::U(1),
        F::D(0.5),
        F::S(
            [fp_a, u32::MAX, 7, 1, 0, 0]
                .iter()
                .flat_map(|v: &u32| v.to_le_bytes())
                .collect(),
        ),
        F::S(
            [
                record(9, 5, u64::MAX, 900),
                record(fp_a, 1, 0xdead_beef, u32::MAX),
            ]
            .concat(),
        ),
        F::S(b"x\0".to_vec()),
        F::S(b"a\0".to_vec()),
    ];
    assert_eq!(
        restore(&mut conn, "odd", &seal(&encode_value(id, &odd))),
        Reply::ok()
    );
    assert_eq!(
        conn.call_raw(&["TOPK.LIST", "odd", "WITHCOUNT"]),
        b"*4\r\n+a\r\n:4294967295\r\n+x\r\n:900\r\n"
    );
    assert_eq!(
        conn.call(&["TOPK.QUERY", "odd", "x", "a"]),
        Reply::int_array(&[0, 0])
    );
    let reply = conn.call(&["TOPK.INCRBY", "odd", "p", "100000", "q", "100000"]);
    assert!(
        matches!(reply, Reply::Array(Some(ref v)) if v.len() == 2),
        "{reply:?}"
    );
    conn.call(&["TOPK.ADD", "odd", "a", "x", "y"]);
    let reply = conn.call(&["TOPK.COUNT", "odd", "a", "x", "p"]);
    assert!(
        matches!(reply, Reply::Array(Some(ref v)) if v.len() == 3),
        "{reply:?}"
    );
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn reservations_beyond_the_ceiling_are_an_error_reply() {
    let server = Server::start();
    let mut conn = server.raw();
    for args in [
        ["TOPK.RESERVE", "big", "4294967295", "8", "7", "0.9"],
        [
            "TOPK.RESERVE",
            "big",
            "10",
            "4294967295",
            "4294967295",
            "0.9",
        ],
        ["TOPK.RESERVE", "big", "10", "100000", "100000", "0.9"],
    ] {
        assert_eq!(conn.call(&args), Reply::Error(TOO_LARGE.into()), "{args:?}");
        alive_without(&mut conn, "big", "a refused TOPK.RESERVE");
    }
    assert_eq!(
        conn.call(&["TOPK.RESERVE", "big", "4294967295"]),
        Reply::Error(TOO_LARGE.into())
    );
    alive_without(&mut conn, "big", "a refused TOPK.RESERVE with defaults");
    // Under a lowered ceiling: 1 MiB holds 130 000 buckets, not 131 072.
    largest_under_one_mib(
        &mut conn,
        &["TOPK.RESERVE", "k", "10", "130000", "1", "0.9"],
        &["TOPK.RESERVE", "k2", "10", "131072", "1", "0.9"],
    );
}
