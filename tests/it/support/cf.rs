//! Helpers for the CF.* tests: expected replies (INFO, DEBUG, arity), LOADCHUNK headers,
//! everything observable of a key, and membership and adds in bulk.

use super::resp::{pipeline_expect, RawConnection, Reply};
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

pub fn bulk(text: &str) -> Reply {
    Reply::Bulk(Some(text.as_bytes().to_vec()))
}

pub fn arity(command: &str) -> Reply {
    Reply::err(&format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

/// One command given as separate arguments (items may contain spaces or be binary).
pub fn cmd(conn: &mut RawConnection, args: &[&[u8]]) -> Reply {
    conn.call(args)
}

/// The CF.INFO reply as 2.4.20 shapes it: 8 (simple string, integer) pairs.
/// `values`: Size, buckets, filters, items, deletes, bucket size, expansion, max iterations.
pub fn info_reply(values: [i64; 8]) -> Reply {
    let labels = [
        "Size",
        "Number of buckets",
        "Number of filters",
        "Number of items inserted",
        "Number of items deleted",
        "Bucket size",
        "Expansion rate",
        "Max iterations",
    ];
    Reply::Array(Some(
        labels
            .iter()
            .zip(values)
            .flat_map(|(label, value)| [Reply::Simple(label.to_string()), Reply::Int(value)])
            .collect(),
    ))
}

pub fn debug_line(
    bs: u64,
    buckets: u64,
    items: u64,
    deletes: u64,
    filters: u64,
    mi: u64,
    exp: u64,
) -> Reply {
    bulk(&format!(
        "bktsize:{bs} buckets:{buckets} items:{items} deletes:{deletes} filters:{filters} max_iterations:{mi} expansion:{exp}"
    ))
}

/// `CF.ADD key i` for i in range, each expected to answer `expected`.
pub fn add_range(
    conn: &mut RawConnection,
    key: &str,
    range: std::ops::Range<u64>,
    expected: &Reply,
) {
    let commands: Vec<Vec<String>> = range
        .map(|i| vec!["CF.ADD".to_string(), key.to_string(), i.to_string()])
        .collect();
    pipeline_expect(conn, &commands, expected);
}

pub fn numbers(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}
