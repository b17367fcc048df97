//! `redbloom inspect`: the fill-based estimate against a measured false-positive rate, the
//! per-link figures against the server's own, warnings, refusals.

use crate::common::{fails, ok, url};
use crate::support::{RawConnection, Reply, Server};
use serde_json::Value;

/// Adds `n` items `in:<i>` with `command` (1,000 per call).
fn fill(conn: &mut RawConnection, command: &str, key: &str, n: usize) {
    for start in (0..n).step_by(1000) {
        let mut cmd = vec![command.to_string(), key.to_string()];
        cmd.extend((start..(start + 1000).min(n)).map(|i| format!("in:{i}")));
        assert!(matches!(conn.call(&cmd), Reply::Array(_)));
    }
}

/// The share of 200k absent items that answer 1.
fn measured_fp(conn: &mut RawConnection, command: &str, key: &str) -> f64 {
    let mut hits = 0;
    for start in (0..200_000).step_by(1000) {
        let mut cmd = vec![command.to_string(), key.to_string()];
        cmd.extend((start..start + 1000).map(|i| format!("out:{i}")));
        hits += conn.call(&cmd).ints().iter().filter(|&&x| x == 1).count();
    }
    hits as f64 / 200_000.0
}

fn inspect(u: &str, key: &str) -> Value {
    serde_json::from_str(&ok(&["--json", "inspect", u, key])).unwrap()
}

fn close(estimate: f64, measured: f64) {
    assert!(
        (estimate - measured).abs() <= 0.2 * measured,
        "estimate {estimate} vs measured {measured}"
    );
}

#[test]
fn estimates_match_measured_rates() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();

    // Bloom at capacity, then scaled to three times it.
    conn.call(&["BF.RESERVE", "bf", "0.01", "10000"]);
    fill(&mut conn, "BF.MADD", "bf", 10_000);
    let r = inspect(&u, "bf");
    let link = &r["links"][0];
    let info = conn.call(&["BF.INFO", "bf"]).array();
    assert_eq!(link["capacity"], 10_000);
    assert_eq!(r["items"], info[7].int());
    assert_eq!(r["memory"], conn.call(&["MEMORY", "USAGE", "bf"]).int());
    assert_eq!(link["hashes"], 8);
    assert_eq!(r["target_fp"], 0.01);
    assert_eq!(r["warnings"], serde_json::json!([]));
    close(
        r["estimated_fp"].as_f64().unwrap(),
        measured_fp(&mut conn, "BF.MEXISTS", "bf"),
    );
    let text = ok(&["inspect", &u, "bf"]);
    assert!(text.starts_with("bf: bf, "), "{text}");
    assert!(text.contains("  link 0: capacity 10000, items "), "{text}");

    conn.call(&["BF.RESERVE", "grown", "0.01", "2000"]);
    fill(&mut conn, "BF.MADD", "grown", 6_000);
    let r = inspect(&u, "grown");
    assert_eq!(r["links"].as_array().unwrap().len(), 2);
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings[0].as_str().unwrap().starts_with("past capacity: "),
        "{warnings:?}"
    );
    close(
        r["estimated_fp"].as_f64().unwrap(),
        measured_fp(&mut conn, "BF.MEXISTS", "grown"),
    );

    // Cuckoo: the load factor per sub-filter.
    conn.call(&["CF.RESERVE", "cf", "10000"]);
    for start in (0..9000).step_by(1000) {
        let mut cmd = vec!["CF.INSERT".to_string(), "cf".into(), "ITEMS".into()];
        cmd.extend((start..start + 1000).map(|i| format!("in:{i}")));
        conn.call(&cmd);
    }
    let r = inspect(&u, "cf");
    let sub = &r["links"][0];
    assert_eq!(sub["items"], 9000);
    assert_eq!(sub["capacity"], 16384);
    close(
        r["estimated_fp"].as_f64().unwrap(),
        measured_fp(&mut conn, "CF.MEXISTS", "cf"),
    );
    assert!(ok(&["inspect", &u, "cf"]).contains("sub-filter 0: capacity 16384, items 9000"));

    // A filter whose bits are all set: every absent item answers 1.
    conn.call(&["BF.RESERVE", "full", "0.01", "1000", "NONSCALING"]);
    let dump = crate::support::scandump(&mut conn, "BF.SCANDUMP", "full");
    conn.call(&["DEL", "full"]);
    let header = dump[0].1.clone().unwrap();
    let len = dump[1].1.as_ref().unwrap().len();
    conn.call(&[b"BF.LOADCHUNK".as_slice(), b"full", b"1", &header]);
    conn.call(&[
        b"BF.LOADCHUNK".as_slice(),
        b"full",
        dump[1].0.to_string().as_bytes(),
        &vec![0xff; len],
    ]);
    let r = inspect(&u, "full");
    assert_eq!(r["estimated_fp"], 1.0);
    assert_eq!(
        r["warnings"],
        serde_json::json!(["estimated false-positive rate 1.000000 is above the target 0.01"])
    );
    assert_eq!(measured_fp(&mut conn, "BF.MEXISTS", "full"), 1.0);

    // Counting Bloom.
    conn.call(&["CBF.RESERVE", "cbf", "0.01", "10000"]);
    fill(&mut conn, "CBF.MADD", "cbf", 10_000);
    let r = inspect(&u, "cbf");
    assert_eq!(r["type"], "cbf");
    close(
        r["estimated_fp"].as_f64().unwrap(),
        measured_fp(&mut conn, "CBF.MEXISTS", "cbf"),
    );

    // BLOCKED: the blocks' own rate (issue 33: the whole array's fill^k said 0.354 % where
    // 0.456 % answered 1). Within 10 %: the formula is the expectation itself.
    conn.call(&["BF.RESERVE", "blocked", "0.01", "20000", "BLOCKED"]);
    fill(&mut conn, "BF.MADD", "blocked", 20_000);
    let r = inspect(&u, "blocked");
    let estimate = r["estimated_fp"].as_f64().unwrap();
    let measured = measured_fp(&mut conn, "BF.MEXISTS", "blocked");
    assert!(
        (estimate - measured).abs() <= 0.1 * measured,
        "blocked: estimate {estimate} vs measured {measured}"
    );

    // An empty Cuckoo filter (no SCANDUMP header): its capacity from CF.INFO.
    conn.call(&["CF.RESERVE", "empty", "1000"]);
    let r = inspect(&u, "empty");
    assert_eq!(r["capacity"], 1024);
    assert_eq!(r["items"], 0);
    assert_eq!(r["links"][0]["capacity"], 1024);
    let text = ok(&["inspect", &u, "empty"]);
    assert!(
        text.starts_with("empty: cf, 0 items, capacity 1024, memory "),
        "{text}"
    );
    assert!(
        text.contains("  sub-filter 0: capacity 1024, items 0, bits 8192"),
        "{text}"
    );

    conn.call(&["SET", "s", "x"]);
    assert_eq!(
        fails(&["inspect", &u, "s"]),
        "redbloom: s is a key of type string, not a bf, cf, cbf, static or xf filter nor a sharded filter"
    );
    assert_eq!(fails(&["inspect", &u, "nope"]), "redbloom: no key nope");
}
