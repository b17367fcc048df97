//! XF.*: commands and their replies (exact errors, RESP3, events, COPY, the ceiling,
//! SCANDUMP/LOADCHUNK all or nothing), persistence, replication by effect, damaged input.

mod commands;
mod defrag;
mod persistence;

use crate::support::{RawConnection, Reply};
use redbloom_core::expandable::{XFilter, XfParams};
use redbloom_core::fmt::shortest;
use redbloom_core::limits::{XF_DEFAULT_CAPACITY, XF_DEFAULT_ERROR_RATE};

/// `prefix0 .. prefixN` (from `from`).
pub fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// `command key items…` (XF.MADD, XF.MEXISTS).
pub fn with_items(conn: &mut RawConnection, command: &str, key: &str, items: &[String]) -> Reply {
    let mut cmd = vec![command.to_string(), key.to_string()];
    cmd.extend(items.iter().cloned());
    conn.call(&cmd)
}

/// XF.MADD of `items`, in batches of 10,000, each answering 1 per item.
pub fn madd(conn: &mut RawConnection, key: &str, items: &[String]) {
    for batch in items.chunks(10_000) {
        assert_eq!(
            with_items(conn, "XF.MADD", key, batch).ints(),
            vec![1; batch.len()],
            "XF.MADD {key}"
        );
    }
}

/// XF.MEXISTS of `items`, in batches.
pub fn mexists(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    items
        .chunks(10_000)
        .flat_map(|batch| with_items(conn, "XF.MEXISTS", key, batch).ints())
        .collect()
}

/// The filter the core builds from the same parameters and items: what the server's
/// must equal.
pub fn reference(rate: f64, capacity: u64, items: &[String]) -> XFilter {
    let params = XfParams {
        error_rate: rate,
        initial_capacity: capacity,
    };
    let mut f = XFilter::new(params, u64::MAX).unwrap();
    for item in items {
        f.insert(XFilter::hash(item.as_bytes()), u64::MAX).unwrap();
    }
    f
}

/// [`reference`] with the parameters XF.ADD creates a filter with.
pub fn reference_default(items: &[String]) -> XFilter {
    reference(XF_DEFAULT_ERROR_RATE, XF_DEFAULT_CAPACITY, items)
}

/// XF.INFO's RESP2 reply for a filter.
pub fn info_reply(f: &XFilter) -> Reply {
    let i = f.info();
    let label = |s: &str| Reply::Simple(s.into());
    Reply::Array(Some(vec![
        label("Error rate"),
        Reply::bulk(shortest(i.error_rate)),
        label("Number of items"),
        Reply::Int(i.items as i64),
        label("Capacity"),
        Reply::Int(i.capacity as i64),
        label("Expansions"),
        Reply::Int(i64::from(i.expansions)),
        label("Partitions"),
        Reply::Int(i.partitions as i64),
        label("Size"),
        Reply::Int(i.bytes as i64),
        label("Bits per item"),
        Reply::bulk(shortest(i.bits_per_item)),
        label("Error rate bound"),
        Reply::bulk(shortest(i.fp_bound)),
    ]))
}
