//! The Count-Min Sketch (CMS.*): RedisBloom's counters, hashing and arithmetic, so a sketch
//! built by the same commands holds the same bytes and answers every query identically.
//!
//! A sketch is `depth` rows of `width` 32-bit counters, stored row after row. An item's
//! counter in row `i` is `MurmurHash2(item, seed = i) mod width` (RedisBloom's 32-bit
//! MurmurHash2, the row index as the seed). An increment adds to the item's counter in
//! every row, saturating at `u32::MAX`; its estimate is the smallest of those counters.
//! The sketch also counts the sum of every increment (`count` in CMS.INFO), a 64-bit
//! value that wraps as RedisBloom's `size_t` does.
//!
//! The counters are kept as RedisBloom stores them in its RDB value and DUMP payload:
//! little-endian `u32`s, one after the other ([`rdb`]).

pub mod health;
pub mod rdb;
#[cfg(test)]
mod tests;

use crate::hash::RowHashes;
use crate::memory::zeroed_bytes;

/// Bytes per counter.
pub const COUNTER_BYTES: u64 = 4;

/// Why a sketch could not be made or merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmsError {
    /// Width or depth is 0, or `width × depth` exceeds `i64::MAX` (RedisBloom's check).
    InvalidDimensions,
    /// The counters cannot be addressed (`width × depth × 4` exceeds the address space).
    Overflow,
    /// The sketch would exceed the caller's memory ceiling (as [`CountMinSketch::mem_usage`]
    /// counts it).
    TooLarge,
    /// The allocator refused the counters.
    OutOfMemory,
    /// Sources of a merge differ in width or depth from the destination.
    DimensionsDiffer,
    /// A merged counter would leave `0..=u32::MAX`, or the merged count would overflow
    /// (RedisBloom's checks, made before anything is written).
    MergeOverflow,
}

/// A Count-Min Sketch. A plain value: equal sketches hold equal bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountMinSketch {
    width: u64,
    depth: u64,
    /// The sum of every increment (wrapping, like RedisBloom's `size_t`).
    count: u64,
    /// `width × depth` little-endian `u32` counters, row after row.
    counters: Vec<u8>,
}

/// The width and depth RedisBloom's CMS.INITBYPROB picks for an overestimation `error` and
/// a probability `prob` (both in `(0, 1)`): `ceil(2 / error)` and
/// `ceil(log10f(prob) / log10f(0.5))`, the latter in single precision as RedisBloom computes
/// it (so `prob = 0.125` gives exactly its depth). `None` where RedisBloom's conversion to
/// an unsigned size gives no usable dimension (RedisBloom then answers `invalid init
/// arguments`): a width of 2^63 or more, a depth of 0 (`prob` rounds to 1 in single
/// precision) or an infinite depth (`prob` rounds to 0).
pub fn dims_from_prob(error: f64, prob: f64) -> Option<(u64, u64)> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let width = (2.0 / error).ceil();
    let depth = f64::from((prob as f32).log10() / 0.5f32.log10()).ceil();
    let usable = |x: f64| (1.0..LIMIT).contains(&x);
    (usable(width) && usable(depth)).then_some((width as u64, depth as u64))
}

impl CountMinSketch {
    /// A sketch of `width × depth` zero counters whose [`mem_usage`](Self::mem_usage) is at
    /// most `max_bytes`.
    pub fn new(width: u64, depth: u64, max_bytes: u64) -> Result<Self, CmsError> {
        if width == 0 || depth == 0 || width > i64::MAX as u64 / depth {
            return Err(CmsError::InvalidDimensions);
        }
        let bytes = Self::counter_bytes(width, depth).ok_or(CmsError::Overflow)?;
        if Self::usage_of(width, depth).is_none_or(|usage| usage > max_bytes) {
            return Err(CmsError::TooLarge);
        }
        let counters = zeroed_bytes(bytes).map_err(|_| CmsError::OutOfMemory)?;
        Ok(CountMinSketch {
            width,
            depth,
            count: 0,
            counters,
        })
    }

    /// A sketch from stored parts (RDB, DUMP): `None` unless the counters are exactly
    /// `width × depth × 4` bytes and both dimensions are at least 1 and within RedisBloom's
    /// range.
    pub fn from_parts(width: u64, depth: u64, count: u64, counters: Vec<u8>) -> Option<Self> {
        if width == 0 || depth == 0 || width > i64::MAX as u64 / depth {
            return None;
        }
        (Self::counter_bytes(width, depth)? == counters.len() as u64).then_some(CountMinSketch {
            width,
            depth,
            count,
            counters,
        })
    }

    fn counter_bytes(width: u64, depth: u64) -> Option<u64> {
        width
            .checked_mul(depth)?
            .checked_mul(COUNTER_BYTES)
            .filter(|&b| usize::try_from(b).is_ok())
    }

    /// RedisBloom's MEMORY USAGE of a sketch: 8 + `width × depth × 8` (it counts each
    /// counter as a `size_t`, twice its size).
    fn usage_of(width: u64, depth: u64) -> Option<u64> {
        width.checked_mul(depth)?.checked_mul(8)?.checked_add(8)
    }

    pub fn width(&self) -> u64 {
        self.width
    }

    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// The sum of every increment (CMS.INFO `count`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The counters as stored: little-endian `u32`s, row after row.
    pub fn counter_bytes_le(&self) -> &[u8] {
        &self.counters
    }

    /// What MEMORY USAGE reports: RedisBloom's formula ([`Self::usage_of`]).
    pub fn mem_usage(&self) -> u64 {
        Self::usage_of(self.width, self.depth).unwrap_or(u64::MAX)
    }

    /// Bytes actually held by the counters.
    pub fn allocated_bytes(&self) -> u64 {
        self.counters.len() as u64
    }

    /// The index of `item`'s counter in `row`.
    #[inline]
    fn cell(&self, item: &RowHashes, row: u64) -> usize {
        // RedisBloom passes the row index (a size_t) as MurmurHash2's 32-bit seed.
        let hash = item.row(row as u32);
        (u64::from(hash) % self.width + row * self.width) as usize
    }

    #[inline]
    fn get(&self, cell: usize) -> u32 {
        let at = cell * COUNTER_BYTES as usize;
        let bytes: [u8; 4] = self.counters[at..at + 4].try_into().unwrap_or_default();
        u32::from_le_bytes(bytes)
    }

    #[inline]
    fn set(&mut self, cell: usize, value: u32) {
        let at = cell * COUNTER_BYTES as usize;
        self.counters[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// Adds `value` to `item`'s counter in every row, each saturating at `u32::MAX`, and to
    /// the count (wrapping); returns the item's new estimate. An estimate of `u32::MAX`
    /// is what RedisBloom reports as `CMS: INCRBY overflow`.
    pub fn incr_by(&mut self, item: &[u8], value: u64) -> u32 {
        let item = RowHashes::new(item, None);
        let mut estimate = u32::MAX;
        for row in 0..self.depth {
            let cell = self.cell(&item, row);
            let sum = u64::from(self.get(cell)).saturating_add(value);
            let counter = u32::try_from(sum).unwrap_or(u32::MAX);
            self.set(cell, counter);
            estimate = estimate.min(counter);
        }
        self.count = self.count.wrapping_add(value);
        estimate
    }

    /// The estimate of `item`: the smallest of its counters.
    pub fn query(&self, item: &[u8]) -> u32 {
        let item = RowHashes::new(item, None);
        let mut estimate = u32::MAX;
        for row in 0..self.depth {
            estimate = estimate.min(self.get(self.cell(&item, row)));
        }
        estimate
    }

    /// Checks that `sources` (each with its weight) can be merged into a sketch of this
    /// one's width and depth, and computes the result: counter `c` becomes `Σ weight ×
    /// source[c]` and the count `Σ weight × count`. As RedisBloom, every partial sum and
    /// product must fit an `i64` and every result counter `0..=u32::MAX`, the count must
    /// not be negative; otherwise nothing is merged. A source may be this very sketch
    /// (the caller passes a reference to it; the result is applied with
    /// [`Merged::apply`]).
    pub fn merge(&self, sources: &[(&CountMinSketch, i64)]) -> Result<Merged, CmsError> {
        if sources
            .iter()
            .any(|(s, _)| s.width != self.width || s.depth != self.depth)
        {
            return Err(CmsError::DimensionsDiffer);
        }
        let mut counters =
            zeroed_bytes(self.counters.len() as u64).map_err(|_| CmsError::OutOfMemory)?;
        let cells = self.counters.len() / COUNTER_BYTES as usize;
        for cell in 0..cells {
            let mut sum = 0i64;
            for (source, weight) in sources {
                sum = i64::from(source.get(cell))
                    .checked_mul(*weight)
                    .and_then(|product| sum.checked_add(product))
                    .ok_or(CmsError::MergeOverflow)?;
            }
            let counter = u32::try_from(sum).map_err(|_| CmsError::MergeOverflow)?;
            let at = cell * COUNTER_BYTES as usize;
            counters[at..at + 4].copy_from_slice(&counter.to_le_bytes());
        }
        let mut count = 0i64;
        for (source, weight) in sources {
            // RedisBloom checks the exact product of the unsigned count and the weight.
            let product = i128::from(source.count) * i128::from(*weight);
            count = i64::try_from(product)
                .ok()
                .and_then(|product| count.checked_add(product))
                .ok_or(CmsError::MergeOverflow)?;
        }
        if count < 0 {
            return Err(CmsError::MergeOverflow);
        }
        Ok(Merged {
            count: count as u64,
            counters,
        })
    }
}

/// The result of [`CountMinSketch::merge`], checked and ready to replace a sketch's counters.
#[derive(Debug)]
pub struct Merged {
    count: u64,
    counters: Vec<u8>,
}

impl Merged {
    /// Replaces `dest`'s counters and count (`dest` has the merged width and depth: the
    /// counters' length says so, else nothing changes).
    pub fn apply(self, dest: &mut CountMinSketch) {
        if self.counters.len() == dest.counters.len() {
            dest.counters = self.counters;
            dest.count = self.count;
        }
    }
}
