//! The core: every algorithm and byte layout, with no knowledge of Redis.
//!
//! Everything here is byte-exact with RedisBloom 2.4.20 — hashing, sizing, bit positions,
//! Cuckoo slot placement, SCANDUMP/LOADCHUNK and RDB layouts — and is pinned by unit tests
//! against RedisBloom's own vectors and files (tests/fixtures/redisbloom-2.4.20).

pub mod bloom;
pub mod bloom_dump;
pub mod chain;
pub mod counting;
pub mod counting_dump;
pub mod cuckoo;
pub mod cuckoo_dump;
pub mod fmt;
pub mod hash;
pub mod rdb;
#[cfg(test)]
mod testing;

use std::collections::TryReserveError;

/// Default per-filter memory ceiling (bytes of filter data) when the caller sets none.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 4 << 30;

/// A zeroed byte buffer of `len` bytes, or an error instead of aborting when the
/// allocator refuses (sizes here come from clients, dumps and RDB files).
pub fn zeroed_bytes(len: u64) -> Result<Vec<u8>, TryReserveError> {
    // Copied from a zero block rather than `resize`d: a memcpy per block instead of a
    // per-byte loop, which matters for multi-GiB filters in unoptimised builds.
    static ZEROS: [u8; 1 << 16] = [0; 1 << 16];
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)?;
    while buf.len() < len {
        let n = (len - buf.len()).min(ZEROS.len());
        buf.extend_from_slice(&ZEROS[..n]);
    }
    Ok(buf)
}
