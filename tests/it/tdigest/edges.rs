//! The t-digests of issue 32, which RedisBloom 2.4.20 writes and reloads and redbloom
//! once refused (or answered otherwise): each built by the exact commands, then
//! queried as built, after DEBUG RELOAD, after RESTORE of RedisBloom's DUMP payload into a
//! fresh server, and loaded from the RDB file RedisBloom SAVEd; every reply as RedisBloom
//! gave it (edges_golden.rs, from scripts/fixtures/redisbloom-tdigest-edges.py).
//!
//! - zero weight: RedisBloom reloads a single observation as a zero node (mean 0, weight
//!   0), and later adds and saves keep it: a centroid of weight 0, a merged weight other
//!   than the centroids' sum, a mean below the minimum. (redbloom keeps the observation
//!   across its own reload, docs/differences.md, so its own digest answers `OURS_*`.)
//! - NaN centroids: values ±DBL_MAX merge into NaN centroids; the merged copy keeps
//!   min > max.
//! - drift: past 2^53 the merged weight (a rounded double) drifts from the centroids' sum.
//! - wrap: a total weight that rounds to 2^63 becomes `i64::MIN` (t-digest-c's
//!   conversion); the buffer then never merges, and each query sorts it again.
//! - size before merge: RANK, REVRANK, BYRANK and BYREVRANK read the size before the
//!   merge their first CDF or quantile causes (past 2^53 the merged total differs).

use super::edges_golden::*;
use crate::support::golden::fixture_dir;
use crate::support::transcript::{check_steps, run_ok};
use crate::support::{RawConnection, Reply, Server, TempDir};

const DBL_MAX: &str = "1.7976931348623157e308";

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn zero_weight() -> Vec<String> {
    lines(&[
        "TDIGEST.CREATE t",
        "TDIGEST.ADD t 5",
        "DEBUG RELOAD",
        "TDIGEST.ADD t 7 9",
    ])
}

fn nan_centroids() -> Vec<String> {
    let values: Vec<String> = (0..40)
        .map(|i| {
            if i % 2 == 0 {
                DBL_MAX.to_string()
            } else {
                format!("-{DBL_MAX}")
            }
        })
        .collect();
    vec![
        "TDIGEST.CREATE s COMPRESSION 1".into(),
        format!("TDIGEST.ADD s {}", values.join(" ")),
        "TDIGEST.MERGE m 1 s".into(),
    ]
}

fn drift() -> Vec<String> {
    let mut v = lines(&["TDIGEST.CREATE d COMPRESSION 2", "TDIGEST.ADD d 1 2 3"]);
    v.extend((0..54).map(|_| "TDIGEST.MERGE d 1 d".to_string()));
    for i in 0..230 {
        v.push(format!("TDIGEST.ADD d {}", -1000 - i));
        v.push("TDIGEST.QUANTILE d 0.5".into());
    }
    v
}

fn wrap() -> Vec<String> {
    let mut v = lines(&["TDIGEST.CREATE s", "TDIGEST.ADD s 1"]);
    for i in 1..62 {
        v.push("TDIGEST.MERGE s 1 s".into());
        v.push(format!("TDIGEST.ADD s {i}"));
    }
    v.extend(lines(&[
        "TDIGEST.MERGE d 2 s s",
        "TDIGEST.QUANTILE d 0.5",
        "TDIGEST.INFO d",
        "TDIGEST.ADD d 5",
    ]));
    v
}

fn size_before_merge() -> Vec<String> {
    let mut v = wrap();
    v.truncate(v.len() - 4);
    v.extend("defg".chars().map(|k| format!("TDIGEST.MERGE {k} 2 s s")));
    v
}

/// The first DUMP of each key in RedisBloom's `built` transcript: its payload.
fn payloads(built: Steps) -> Vec<(&'static str, Vec<u8>)> {
    let mut seen = Vec::new();
    for &(line, reply) in built {
        if let Some(key) = line.strip_prefix("DUMP ") {
            if !seen.iter().any(|(k, _)| *k == key) {
                seen.push((key, hex::decode(reply).unwrap()));
            }
        }
    }
    seen
}

struct Case {
    name: &'static str,
    commands: Vec<String>,
    /// What redbloom answers for the digest it built (RedisBloom's, but for the zero
    /// weight case) and after its DEBUG RELOAD.
    built: Steps,
    reloaded: Steps,
    /// RedisBloom's answers: after its own DEBUG RELOAD (= loading its RDB file) and
    /// after RESTORE of its payload.
    rb_reloaded: Steps,
    rb_restored: Steps,
    rb_built: Steps,
}

fn check_case(case: &Case) {
    let server = Server::start();
    let mut conn = server.raw();
    run_ok(&mut conn, &case.commands);
    check_steps(&mut conn, &format!("{}: built", case.name), case.built);
    assert_eq!(conn.call(&["DEBUG", "RELOAD"]), Reply::ok());
    check_steps(
        &mut conn,
        &format!("{}: reloaded", case.name),
        case.reloaded,
    );
    // RedisBloom's payloads RESTORE into a fresh server and answer as there.
    let fresh = Server::start();
    let mut fresh_conn = fresh.raw();
    for (key, payload) in payloads(case.rb_built) {
        let restore = fresh_conn.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", &payload]);
        assert_eq!(restore, Reply::ok(), "{}: RESTORE {key}", case.name);
    }
    check_steps(
        &mut fresh_conn,
        &format!("{}: restored", case.name),
        case.rb_restored,
    );
    // RedisBloom's RDB file loads and answers as RedisBloom answers after DEBUG RELOAD.
    let dir = TempDir::new("td-edges");
    let file = format!("tdigest-{}.rdb", case.name);
    std::fs::copy(fixture_dir().join(&file), dir.0.join(&file)).unwrap();
    let loaded = Server::start_in(&dir.0, &["--dbfilename", &file]);
    let mut loaded_conn: RawConnection = loaded.raw();
    check_steps(
        &mut loaded_conn,
        &format!("{}: RedisBloom's RDB", case.name),
        case.rb_reloaded,
    );
}

#[test]
fn a_zero_weight_centroid_redisbloom_reloaded_loads() {
    check_case(&Case {
        name: "zero-weight",
        commands: zero_weight(),
        built: OURS_ZERO_WEIGHT_BUILT,
        reloaded: OURS_ZERO_WEIGHT_RELOADED,
        rb_reloaded: ZERO_WEIGHT_RELOADED,
        rb_restored: ZERO_WEIGHT_RESTORED,
        rb_built: ZERO_WEIGHT_BUILT,
    });
}

#[test]
fn nan_centroids_with_min_above_max_reload() {
    check_case(&Case {
        name: "nan",
        commands: nan_centroids(),
        built: NAN_CENTROIDS_BUILT,
        reloaded: NAN_CENTROIDS_RELOADED,
        rb_reloaded: NAN_CENTROIDS_RELOADED,
        rb_restored: NAN_CENTROIDS_RESTORED,
        rb_built: NAN_CENTROIDS_BUILT,
    });
}

#[test]
fn a_merged_weight_drifting_past_2_pow_53_reloads() {
    check_case(&Case {
        name: "drift",
        commands: drift(),
        built: DRIFT_BUILT,
        reloaded: DRIFT_RELOADED,
        rb_reloaded: DRIFT_RELOADED,
        rb_restored: DRIFT_RESTORED,
        rb_built: DRIFT_BUILT,
    });
}

#[test]
fn a_total_weight_rounding_to_2_pow_63_answers_as_redisbloom() {
    check_case(&Case {
        name: "wrap",
        commands: wrap(),
        built: WRAP_BUILT,
        reloaded: WRAP_RELOADED,
        rb_reloaded: WRAP_RELOADED,
        rb_restored: WRAP_RESTORED,
        rb_built: WRAP_BUILT,
    });
}

#[test]
fn rank_queries_read_the_size_before_their_merge() {
    check_case(&Case {
        name: "size-before-merge",
        commands: size_before_merge(),
        built: SIZE_BEFORE_MERGE_BUILT,
        reloaded: SIZE_BEFORE_MERGE_RELOADED,
        rb_reloaded: SIZE_BEFORE_MERGE_RELOADED,
        rb_restored: SIZE_BEFORE_MERGE_RESTORED,
        rb_built: SIZE_BEFORE_MERGE_BUILT,
    });
}
