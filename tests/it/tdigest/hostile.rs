//! Hostile t-digest values and sizes: RESTORE of forged payloads (the CRC recomputed, so
//! the module's loader is reached) is refused cleanly, never crashes, leaves no key; a
//! COMPRESSION beyond the memory ceiling is an error reply (RedisBloom aborts the server
//! on TDIGEST.CREATE k COMPRESSION 1000000000).

use crate::support::ceiling::{largest_under_one_mib, TOO_LARGE};
use crate::support::dump_payload::{
    alive_without, decode, encode_value, learn_version, restore, seal, F,
};
use crate::support::dump_payload::{forgeries_are_refused, uncompressed_dumps};
use crate::support::{Reply, Server};

/// A digest's fields: compression 5 (capacity 40) with centroids `means` / `weights`.
fn digest(min: f64, max: f64, means: &[f64], weights: &[f64]) -> Vec<F> {
    let merged_weight: f64 = weights.iter().sum();
    let mut fields = vec![
        F::D(5.0),
        F::D(min),
        F::D(max),
        F::U(40),
        F::U(means.len() as u64),
        F::U(0),
        F::U(1),
        F::D(merged_weight),
        F::D(0.0),
    ];
    fields.extend(means.iter().map(|&m| F::D(m)));
    fields.extend(weights.iter().map(|&w| F::D(w)));
    fields
}

#[test]
fn forged_payloads_are_refused_and_the_server_lives() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    conn.call(&["TDIGEST.CREATE", "real", "COMPRESSION", "5"]);
    conn.call(&["TDIGEST.ADD", "real", "1", "2", "3"]);
    conn.call(&["TDIGEST.QUANTILE", "real", "0.5"]);
    let real = conn.call(&["DUMP", "real"]).bytes();
    learn_version(&real);
    let (id, fields) = decode(&real);
    // The real payload is the layout these forgeries start from.
    let genuine = digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]);
    assert_eq!(fields, genuine);
    assert_eq!(seal(&encode_value(id, &genuine)), real);
    let with = |i: usize, f: F| {
        let mut g = genuine.clone();
        g[i] = f;
        g
    };
    let nan = f64::NAN;
    let forged: Vec<(&str, Vec<F>)> = vec![
        ("nothing", vec![]),
        ("truncated: no weights", genuine[..12].to_vec()),
        ("truncated: one weight short", genuine[..14].to_vec()),
        (
            "a field too many",
            [genuine.clone(), vec![F::D(1.0)]].concat(),
        ),
        ("NaN compression", with(0, F::D(nan))),
        ("compression 0", with(0, F::D(0.0))),
        ("fractional compression", with(0, F::D(5.5))),
        ("huge compression", with(0, F::D(1e18))),
        ("capacity not the compression's", with(3, F::U(41))),
        ("huge capacity", with(3, F::U(u64::MAX))),
        ("more nodes than the capacity", with(4, F::U(41))),
        ("huge node count", with(4, F::U(1 << 60))),
        ("more unmerged nodes than room", with(5, F::U(38))),
        ("unmerged nodes past the capacity", with(5, F::U(u64::MAX))),
        ("an integer for a double", with(0, F::U(5))),
        ("a string for a mean", with(9, F::S(b"1".to_vec()))),
    ];
    forgeries_are_refused(&mut conn, id, &genuine, &forged);
    // What RedisBloom can write loads: equal means, an empty digest, one observation; and
    // whatever else breaks nothing, loaded as RedisBloom loads it (weights converted as C
    // converts doubles; unsaved unmerged nodes as zero nodes): RedisBloom writes NaN and
    // zero weights' digests, min > max, merged weights other than the sum, weights past
    // 2^63 (docs/compat.md, "Load-time checks").
    let accepted: Vec<(&str, Vec<F>)> = vec![
        ("unmerged nodes", with(5, F::U(2))),
        ("negative total compressions", with(6, F::U(u64::MAX))),
        ("NaN min", with(1, F::D(nan))),
        ("NaN max", with(2, F::D(nan))),
        (
            "min above max",
            digest(3.0, 1.0, &[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]),
        ),
        ("merged weight not the sum", with(7, F::D(4.0))),
        ("NaN merged weight", with(7, F::D(nan))),
        ("unmerged weight", with(8, F::D(1.0))),
        (
            "unsorted centroids",
            digest(1.0, 3.0, &[1.0, 3.0, 2.0], &[1.0, 1.0, 1.0]),
        ),
        (
            "negative weight",
            digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[2.0, -1.0, 2.0]),
        ),
        (
            "zero weight",
            digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[1.0, 0.0, 2.0]),
        ),
        (
            "fractional weight",
            digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[1.5, 0.5, 1.0]),
        ),
        (
            "NaN weight",
            digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[1.0, nan, 1.0]),
        ),
        (
            "weights past 2^63",
            digest(1.0, 3.0, &[1.0, 2.0, 3.0], &[9.3e18, 1.0, 1.0]),
        ),
        (
            "weights summing past 2^63",
            digest(1.0, 3.0, &[1.0, 2.0], &[6e18, 6e18]),
        ),
        (
            "equal means",
            digest(1.0, 3.0, &[2.0, 2.0, 2.0], &[1.0, 5.0, 1.0]),
        ),
        // RedisBloom makes these: a merge of centroids near ±1.8e308 overflows to ∞, and
        // ∞ − ∞ to NaN.
        (
            "infinite mean",
            digest(
                1.0,
                f64::INFINITY,
                &[1.0, 2.0, f64::INFINITY],
                &[1.0, 1.0, 1.0],
            ),
        ),
        (
            "NaN mean",
            digest(1.0, 3.0, &[1.0, nan, 3.0], &[1.0, 1.0, 1.0]),
        ),
        ("empty", digest(f64::MAX, -f64::MAX, &[], &[])),
        (
            "one observation",
            vec![
                F::D(5.0),
                F::D(4.5),
                F::D(4.5),
                F::U(40),
                F::U(0),
                F::U(1),
                F::U(0),
                F::D(0.0),
                F::D(1.0),
            ],
        ),
    ];
    for (what, fields) in &accepted {
        let reply = restore(&mut conn, what, &seal(&encode_value(id, fields)));
        assert_eq!(reply, Reply::ok(), "{what}");
        conn.call(&["TDIGEST.ADD", what, "7"]);
        assert!(matches!(
            conn.call(&["TDIGEST.QUANTILE", what, "0.5"]),
            Reply::Array(_)
        ));
    }
    // The lone observation comes back as itself: with a second one, the median is one
    // of the two (RedisBloom's zero node would give 0 or 3.5).
    assert_eq!(
        conn.call(&["TDIGEST.QUANTILE", "one observation", "0", "1"]),
        Reply::Array(Some(vec![
            Reply::Bulk(Some(b"4.5".to_vec())),
            Reply::Bulk(Some(b"7".to_vec()))
        ]))
    );
}

#[test]
fn compressions_beyond_the_ceiling_are_an_error_reply() {
    let server = Server::start();
    let mut conn = server.raw();
    for c in ["1000000000", "357913940", "100000000000000"] {
        assert_eq!(
            conn.call(&["TDIGEST.CREATE", "big", "COMPRESSION", c]),
            Reply::Error(TOO_LARGE.into()),
            "{c}"
        );
        alive_without(&mut conn, "big", "a refused TDIGEST.CREATE");
    }
    conn.call(&["TDIGEST.CREATE", "src"]);
    assert_eq!(
        conn.call(&[
            "TDIGEST.MERGE",
            "big",
            "1",
            "src",
            "COMPRESSION",
            "1000000000"
        ]),
        Reply::Error(TOO_LARGE.into())
    );
    alive_without(&mut conn, "big", "a refused TDIGEST.MERGE");
    // Under a lowered ceiling (MEMORY USAGE's count: 8 + 16 bytes per centroid of
    // capacity 6 × compression + 10): 8 + 16 × (6 × 10921 + 10) = 1048584 > 2^20; 10920
    // gives 1048488.
    largest_under_one_mib(
        &mut conn,
        &["TDIGEST.CREATE", "k", "COMPRESSION", "10920"],
        &["TDIGEST.CREATE", "k2", "COMPRESSION", "10921"],
    );
    // Past what RedisBloom's `int` capacity holds, with the ceiling out of the way: its
    // `allocation failed`.
    assert_eq!(
        conn.call(&[
            "CONFIG",
            "SET",
            "bf.max-filter-bytes",
            "9223372036854775807"
        ]),
        Reply::ok()
    );
    assert_eq!(
        conn.call(&["TDIGEST.CREATE", "k3", "COMPRESSION", "357913940"]),
        Reply::Error("ERR T-Digest: allocation failed".into())
    );
}
