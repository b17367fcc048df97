//! Helpers for the CBF.* tests: everything observable of a key, a filter of every feature,
//! and the counts of a fixed probe set.

use super::resp::{call, expect, RawConnection, Reply};
use super::scandump::scandump;

/// Everything observable about a key: its full SCANDUMP, INFO, DEBUG, CARD and DUMP
/// payload.
pub fn snapshot(conn: &mut RawConnection, key: &str) -> Vec<Reply> {
    let dump = scandump(conn, "CBF.SCANDUMP", key)
        .into_iter()
        .map(|(n, d)| Reply::Array(Some(vec![Reply::Int(n), Reply::Bulk(d)])))
        .collect();
    vec![
        Reply::Array(Some(dump)),
        call(conn, &format!("CBF.INFO {key}")),
        call(conn, &format!("CBF.DEBUG {key}")),
        call(conn, &format!("CBF.CARD {key}")),
        conn.call(&["DUMP", key]),
    ]
}

/// A filter with several links, repeated items, deletes and a saturated counter.
pub fn build_rich_filter(conn: &mut RawConnection, key: &str) {
    expect(conn, &format!("CBF.RESERVE {key} 0.01 20"), Reply::ok());
    let mut items: Vec<String> = (0..150).map(|i| format!("item:{i}")).collect();
    items.extend((0..20).map(|_| "hot".to_string()));
    let mut cmd = vec!["CBF.MADD".to_string(), key.to_string()];
    cmd.extend(items);
    let reply = conn.call(&cmd);
    assert!(reply.ints().iter().all(|&n| n == 1));
    for i in (0..150).step_by(3) {
        call(conn, &format!("CBF.DEL {key} item:{i}"));
    }
}

/// The estimated counts of a fixed probe set (items added and not).
pub fn counts(conn: &mut RawConnection, key: &str) -> Vec<i64> {
    let mut out: Vec<i64> = (0..200)
        .map(|i| call(conn, &format!("CBF.COUNT {key} item:{i}")).int())
        .collect();
    out.push(call(conn, &format!("CBF.COUNT {key} hot")).int());
    let mut cmd = vec!["CBF.MEXISTS".to_string(), key.to_string()];
    cmd.extend((0..200).map(|i| format!("item:{i}")));
    out.extend(conn.call(&cmd).ints());
    out
}
