//! Helpers for the WBF.* tests: everything observable of a key, membership in bulk, and a
//! set of filters (counted, timed, already expired).

use super::resp::{call, expect, RawConnection, Reply};
use super::scandump::scandump;
use std::time::Duration;

/// Everything observable about a key: SCANDUMP, INFO, CARD, DUMP and its digest.
pub fn snapshot(conn: &mut RawConnection, key: &str) -> Vec<Reply> {
    let dump = scandump(conn, "WBF.SCANDUMP", key)
        .into_iter()
        .map(|(n, d)| Reply::Array(Some(vec![Reply::Int(n), Reply::Bulk(d)])))
        .collect();
    vec![
        Reply::Array(Some(dump)),
        call(conn, &format!("WBF.INFO {key}")),
        call(conn, &format!("WBF.CARD {key}")),
        conn.call(&["DUMP", key]),
        conn.call(&["DEBUG", "DIGEST-VALUE", key]),
    ]
}

/// MEXISTS of `prefix0 .. prefixN`.
pub fn mexists(conn: &mut RawConnection, key: &str, prefix: &str, n: usize) -> Vec<i64> {
    let mut cmd = vec!["WBF.MEXISTS".to_string(), key.to_string()];
    cmd.extend((0..n).map(|i| format!("{prefix}{i}")));
    conn.call(&cmd).ints()
}

/// MADD of `prefix0 .. prefixN`.
pub fn madd(conn: &mut RawConnection, key: &str, prefix: &str, n: usize) -> Vec<i64> {
    let mut cmd = vec!["WBF.MADD".to_string(), key.to_string()];
    cmd.extend((0..n).map(|i| format!("{prefix}{i}")));
    conn.call(&cmd).ints()
}

/// A counted filter with many generations, a timed one with a long window, and one whose
/// window is already over.
pub fn build_filters(conn: &mut RawConnection) {
    expect(conn, "WBF.RESERVE counted 0.01 100", Reply::ok());
    madd(conn, "counted", "c", 1000);
    expect(
        conn,
        "WBF.RESERVE timed 0.001 500 WINDOW 3600000",
        Reply::ok(),
    );
    madd(conn, "timed", "t", 300);
    expect(conn, "WBF.RESERVE short 0.1 50 WINDOW 1", Reply::ok());
    madd(conn, "short", "s", 10);
    // Past its window before anything looks at it: its replies no longer change with time.
    std::thread::sleep(Duration::from_millis(20));
}
