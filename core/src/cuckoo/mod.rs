//! Cuckoo filter core, byte-identical with RedisBloom 2.4.20 (COMPAT §8, §4.3, §4.5).
//!
//! A filter is a list of sub-filters ("SubCF"s), oldest first. Each sub-filter is a flat
//! byte array of `buckets × bucket_size` fingerprint slots: bucket `j` occupies bytes
//! `[j·bs, (j+1)·bs)`, a slot holds a fingerprint 1..=255 and 0 means empty.
//!
//! Nothing here knows about Redis: the command layer parses and range-checks arguments,
//! produces the literal error strings and enforces the per-command max-expansions guard;
//! this module does the sizing, hashing, slot placement and every overflow / allocation
//! check, and never panics on any input.
//!
//! Error mapping for the command layer (see [`CuckooError`]):
//! * creation: `InvalidParams` / `CapacityTooSmall` → `ERR Could not create filter`;
//!   `Overflow` / `OutOfMemory` → `ERR Insufficient memory to create filter`;
//!   `TooLarge` → the memory-ceiling message.
//! * insert: `NoSpace` → `Filter is full` (or `-1` in CF.INSERT);
//!   `Overflow` / `OutOfMemory` → growth failure (`Memory allocation failure` at 2.4.20 /
//!   `ERR Insufficient memory` at HEAD, or `-1`); `TooLarge` → the ceiling message (or `-1`).
//!
//! Layout of this module: [`sizing`] (limits, defaults, bucket counts, creation
//! parameters), [`filter`] (the filter and its sub-filters), `insert` (insert and delete,
//! with the kick-out undone exactly on failure), `compact` (moving fingerprints into older
//! sub-filters), [`dump`] (CF.SCANDUMP / CF.LOADCHUNK) and [`rdb`] (the RDB layout).
//!
//! ```
//! use redbloom_core::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
//!
//! let mut filter = CuckooFilter::new(CuckooParams::default(), u64::MAX).unwrap();
//! let item = CuckooHash::new(b"apple");
//! filter.insert(&item, u64::MAX).unwrap();
//! assert!(filter.contains(&item));
//! assert_eq!(filter.count(&item), 1);
//! assert!(filter.delete(&item));
//! assert!(!filter.contains(&item));
//! ```

mod compact;
pub mod dump;
pub mod filter;
mod health;
mod insert;
mod merge;
pub mod rdb;
mod relocate;
pub mod sizing;
pub mod sub_filter;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::hash::murmur64a;

pub use filter::{CuckooFilter, CuckooParts};
pub use sizing::{
    base_buckets, next_pow2, round_expansion, sub_filter_buckets, CuckooParams,
    DEFAULT_BUCKET_SIZE, DEFAULT_CAPACITY, DEFAULT_EXPANSION, DEFAULT_MAX_EXPANSIONS,
    DEFAULT_MAX_ITERATIONS, MAX_BUCKETS, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_SUB_FILTERS,
};
pub use sub_filter::SubFilter;

/// Multiplier RedisBloom uses to derive the alternate bucket from a fingerprint.
pub const ALT_HASH_MULTIPLIER: u64 = 0x5bd1e995;

/// Why an operation failed. Every variant is a distinct reply at the command layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuckooError {
    /// A parameter or stored field is outside the accepted range (bucket size 0 or > 255,
    /// max iterations 0, expansion > 32768, bucket count 0 / not a power of two, data
    /// length mismatch, sub-filter count 0 or > 65535, ...).
    InvalidParams,
    /// `capacity < 2 × bucket_size` at creation (`ERR Could not create filter`).
    CapacityTooSmall,
    /// A size exceeds RedisBloom's layout limits: 65535 sub-filters, 2^56−1 buckets, or a
    /// byte-size multiplication/addition that overflows.
    Overflow,
    /// The filter's bucket data would exceed the caller's `max_bytes` ceiling.
    TooLarge,
    /// The allocator refused the buffer.
    OutOfMemory,
    /// Insert found no slot and the filter does not grow (expansion 0).
    NoSpace,
    /// A LOADCHUNK position/length pair was rejected (COMPAT §7.4).
    BadChunk,
}

impl CuckooError {
    /// True for the errors the growth step can produce (`Overflow`, `TooLarge`, `OutOfMemory`).
    pub fn is_grow_failure(self) -> bool {
        matches!(
            self,
            CuckooError::Overflow | CuckooError::TooLarge | CuckooError::OutOfMemory
        )
    }
}

impl fmt::Display for CuckooError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            CuckooError::InvalidParams => "invalid cuckoo filter parameters",
            CuckooError::CapacityTooSmall => "capacity smaller than twice the bucket size",
            CuckooError::Overflow => "cuckoo filter size limits exceeded",
            CuckooError::TooLarge => "cuckoo filter would exceed the memory ceiling",
            CuckooError::OutOfMemory => "allocation failed",
            CuckooError::NoSpace => "filter is full",
            CuckooError::BadChunk => "bad chunk",
        };
        f.write_str(s)
    }
}

impl std::error::Error for CuckooError {}

/// The hash of one item, computed once per command (COMPAT §8.2). A plain value: public
/// fields, any values are safe (every use reduces them modulo the bucket count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooHash {
    /// Fingerprint, 1..=255.
    pub fp: u8,
    /// Primary hash (= MurmurHash64A(item, 0)).
    pub h1: u64,
    /// Secondary hash: `h1 XOR (fp × 0x5bd1e995)`.
    pub h2: u64,
}

impl CuckooHash {
    /// Hash an item: h = MurmurHash64A(item, 0), fp = h mod 255 + 1.
    #[inline]
    pub fn new(item: &[u8]) -> Self {
        let h = murmur64a(item, 0);
        // h % 255 < 255, so + 1 fits in a u8.
        let fp = (h % 255) as u8 + 1;
        CuckooHash {
            fp,
            h1: h,
            h2: alt_index(h, fp),
        }
    }
}

/// `index XOR (fp × 0x5bd1e995)` (not yet reduced modulo the bucket count).
#[inline]
pub fn alt_index(index: u64, fp: u8) -> u64 {
    index ^ u64::from(fp).wrapping_mul(ALT_HASH_MULTIPLIER)
}
