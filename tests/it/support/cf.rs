//! Helpers for the CF.* tests: LOADCHUNK headers, everything observable of a key, and
//! membership in bulk.

use super::resp::{RawConnection, Reply};
use super::scandump::scandump;

/// A CF.LOADCHUNK header (38 bytes, COMPAT §7.3): numItems, numBuckets, numDeletes,
/// numFilters, bucketSize, maxIterations, expansion.
pub fn cf_header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(38);
    for field in [items, buckets, deletes, filters] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    for field in [bucket_size, max_iterations, expansion] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    out
}

/// Everything a client can observe of a CF key besides membership: CF.INFO, CF.DEBUG,
/// the whole SCANDUMP and the DUMP payload.
#[derive(Debug, PartialEq)]
pub struct CfState {
    pub info: Reply,
    pub debug: Reply,
    pub dump: Vec<(i64, Option<Vec<u8>>)>,
    pub payload: Reply,
}

pub fn cf_state(conn: &mut RawConnection, key: &str) -> CfState {
    CfState {
        info: conn.call(&["CF.INFO", key]),
        debug: conn.call(&["CF.DEBUG", key]),
        dump: scandump(conn, "CF.SCANDUMP", key),
        payload: conn.call(&["DUMP", key]),
    }
}

/// CF.COUNT of every item (one pipeline).
pub fn cf_counts(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    let commands: Vec<Vec<&str>> = items
        .iter()
        .map(|item| vec!["CF.COUNT", key, item.as_str()])
        .collect();
    conn.pipeline(&commands).iter().map(Reply::int).collect()
}

/// CF.MEXISTS of every item.
pub fn cf_mexists(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    let mut args = vec!["CF.MEXISTS", key];
    args.extend(items.iter().map(String::as_str));
    conn.call(&args).ints()
}
