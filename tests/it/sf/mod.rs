//! SF.*: commands and their replies (BUILD ITEMS/FROM, queries, INFO, errors, RESP3,
//! events, COPY, the ceiling, SCANDUMP/LOADCHUNK), persistence, replication, damaged input.

mod commands;
mod defrag;
mod encoding1;
mod encoding2;
mod from_changes;
mod from_child;
mod from_slices;
mod header_sweep;
mod persistence;

use crate::support::RawConnection;

/// SF.BUILD `key` at `rate` of `prefix0 .. prefixN`.
pub fn build(
    conn: &mut RawConnection,
    key: &str,
    rate: &str,
    prefix: &str,
    n: usize,
) -> crate::support::Reply {
    let mut cmd = vec![
        "SF.BUILD".to_string(),
        key.to_string(),
        rate.to_string(),
        "ITEMS".to_string(),
    ];
    cmd.extend((0..n).map(|i| format!("{prefix}{i}")));
    conn.call(&cmd)
}

/// SF.MEXISTS of `prefix0 .. prefixN`.
pub fn mexists(conn: &mut RawConnection, key: &str, prefix: &str, n: usize) -> Vec<i64> {
    let mut cmd = vec!["SF.MEXISTS".to_string(), key.to_string()];
    cmd.extend((0..n).map(|i| format!("{prefix}{i}")));
    conn.call(&cmd).ints()
}
