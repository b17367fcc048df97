//! The Count-Min Sketch (CMS.*): RedisBloom's counters, hashing and arithmetic, so a sketch
//! built by the same commands holds the same bytes and answers every query identically.
//!
//! A sketch is `depth` rows of `width` counters, stored row after row. An item's counter in
//! row `i` is `MurmurHash2(item, seed = i) mod width` (RedisBloom's 32-bit MurmurHash2, the
//! row index as the seed); its estimate is the smallest of its counters. The sketch also
//! counts the sum of every increment (`count` in CMS.INFO).
//!
//! A counter is an unsigned little-endian integer of the sketch's cell size: 4 bytes in
//! RedisBloom 2.4.20 and by default, 1, 2 or 8 bytes with RedisBloom 8.12's `CELL_SIZE`
//! ([`cell_max`] gives each one's ceiling). Two arithmetics, docs/compat.md "Count-Min
//! Sketch":
//! - 2.4.20's, for a positive increment of a 4-byte sketch: every counter saturates at
//!   `u32::MAX` and the count wraps as RedisBloom's `size_t` does;
//! - 8.12's atomic one otherwise (any increment of a 1-, 2- or 8-byte sketch, and a negative
//!   increment of any): the increment is applied to every counter of the item or to none,
//!   refused when a counter would pass its ceiling (overflow) or go below 0 (underflow); the
//!   count is capped at `i64::MAX` and floored at 0.
//!
//! The counters are kept as they are stored in the RDB value and DUMP payload ([`rdb`]).

#[cfg(test)]
mod cell_size_tests;
pub mod health;
pub mod rdb;
#[cfg(test)]
mod tests;

use crate::hash::RowHashes;
use crate::memory::zeroed_bytes;

/// Bytes per counter of a sketch made without `CELL_SIZE` (RedisBloom 2.4.20's only size).
pub const DEFAULT_CELL_SIZE: u8 = 4;

/// The ceiling of the count under the atomic arithmetic (`INT64_MAX`, RedisBloom 8.12).
pub const COUNT_CAP: u64 = i64::MAX as u64;

/// Whether `n` is a cell size `CELL_SIZE` accepts: 1, 2, 4 or 8.
pub fn is_cell_size(n: u64) -> bool {
    matches!(n, 1 | 2 | 4 | 8)
}

/// The largest value a counter of `cell_size` bytes holds: 255, 65535, `u32::MAX`, and for
/// 8 bytes `i64::MAX` (the largest a reply integer carries; a loaded counter above it is
/// read, and reported as `i64::MAX`).
pub fn cell_max(cell_size: u8) -> u64 {
    match cell_size {
        1 => u64::from(u8::MAX),
        2 => u64::from(u16::MAX),
        4 => u64::from(u32::MAX),
        _ => i64::MAX as u64,
    }
}

/// What an increment did ([`CountMinSketch::incr_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Increment {
    /// Applied; the item's new estimate.
    Estimate(u64),
    /// `CMS: INCRBY overflow`: with 2.4.20's arithmetic applied and saturated (the estimate
    /// is `u32::MAX`), with the atomic one refused (nothing changed).
    Overflow,
    /// `CMS: INCRBY underflow`: a decrement larger than one of the item's counters, refused.
    Underflow,
}

/// Why a sketch could not be made or merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmsError {
    /// Width or depth is 0, or `width × depth` exceeds `i64::MAX` (RedisBloom's check).
    InvalidDimensions,
    /// The counters cannot be addressed (`width × depth × cell size` exceeds the address
    /// space).
    Overflow,
    /// The sketch would exceed the caller's memory ceiling (as [`CountMinSketch::mem_usage`]
    /// counts it).
    TooLarge,
    /// The allocator refused the counters.
    OutOfMemory,
    /// Sources of a merge differ in width or depth from the destination.
    DimensionsDiffer,
    /// Sources of a merge differ in cell size from the destination.
    CellSizeDiffers,
    /// A merged counter would leave `0..=`[`cell_max`], or the merged count would
    /// overflow (RedisBloom's checks, made before anything is written).
    MergeOverflow,
}

/// A Count-Min Sketch. A plain value: equal sketches hold equal bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountMinSketch {
    width: u64,
    depth: u64,
    /// The sum of every increment.
    count: u64,
    /// Bytes per counter: 1, 2, 4 or 8.
    cell_size: u8,
    /// `width × depth` little-endian counters of `cell_size` bytes, row after row.
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
    /// A sketch of `width × depth` zero counters of `cell_size` bytes (one [`is_cell_size`]
    /// accepts) whose [`mem_usage`](Self::mem_usage) is at most `max_bytes`.
    pub fn new(width: u64, depth: u64, cell_size: u8, max_bytes: u64) -> Result<Self, CmsError> {
        if width == 0 || depth == 0 || width > i64::MAX as u64 / depth {
            return Err(CmsError::InvalidDimensions);
        }
        if !is_cell_size(u64::from(cell_size)) {
            return Err(CmsError::InvalidDimensions);
        }
        let bytes = Self::counter_bytes(width, depth, cell_size).ok_or(CmsError::Overflow)?;
        if Self::usage_of(width, depth, cell_size).is_none_or(|usage| usage > max_bytes) {
            return Err(CmsError::TooLarge);
        }
        let counters = zeroed_bytes(bytes).map_err(|_| CmsError::OutOfMemory)?;
        Ok(CountMinSketch {
            width,
            depth,
            count: 0,
            cell_size,
            counters,
        })
    }

    /// A sketch from stored parts (RDB, DUMP): `None` unless the cell size is 1, 2, 4 or 8,
    /// the counters are exactly `width × depth × cell_size` bytes and both dimensions are
    /// at least 1 and within RedisBloom's range.
    pub fn from_parts(
        width: u64,
        depth: u64,
        count: u64,
        cell_size: u64,
        counters: Vec<u8>,
    ) -> Option<Self> {
        if width == 0 || depth == 0 || width > i64::MAX as u64 / depth || !is_cell_size(cell_size) {
            return None;
        }
        let cell_size = cell_size as u8;
        let bytes = Self::counter_bytes(width, depth, cell_size)?;
        (bytes == counters.len() as u64).then_some(CountMinSketch {
            width,
            depth,
            count,
            cell_size,
            counters,
        })
    }

    fn counter_bytes(width: u64, depth: u64, cell_size: u8) -> Option<u64> {
        width
            .checked_mul(depth)?
            .checked_mul(u64::from(cell_size))
            .filter(|&b| usize::try_from(b).is_ok())
    }

    /// MEMORY USAGE of a sketch. 4-byte cells: RedisBloom 2.4.20's 8 + `width × depth × 8`
    /// (it counts each counter as a `size_t`, twice its size); other cell sizes: 8 + the
    /// counters' bytes.
    fn usage_of(width: u64, depth: u64, cell_size: u8) -> Option<u64> {
        let per_counter = match cell_size {
            DEFAULT_CELL_SIZE => 8,
            other => u64::from(other),
        };
        width
            .checked_mul(depth)?
            .checked_mul(per_counter)?
            .checked_add(8)
    }

    pub fn width(&self) -> u64 {
        self.width
    }

    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// Bytes per counter: 1, 2, 4 or 8.
    pub fn cell_size(&self) -> u8 {
        self.cell_size
    }

    /// The sum of every increment (CMS.INFO `count`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The counters as stored: little-endian integers of the cell size, row after row.
    pub fn counter_bytes_le(&self) -> &[u8] {
        &self.counters
    }

    /// What MEMORY USAGE reports ([`Self::usage_of`]).
    pub fn mem_usage(&self) -> u64 {
        Self::usage_of(self.width, self.depth, self.cell_size).unwrap_or(u64::MAX)
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

    /// Counter `cell`'s value.
    #[inline]
    fn get(&self, cell: usize) -> u64 {
        match self.cell_size {
            1 => read::<1>(&self.counters, cell),
            2 => read::<2>(&self.counters, cell),
            4 => read::<4>(&self.counters, cell),
            _ => read::<8>(&self.counters, cell),
        }
    }

    /// Sets counter `cell` to `value` (at most [`cell_max`] of the cell size: higher bits
    /// are dropped).
    #[inline]
    fn set(&mut self, cell: usize, value: u64) {
        let size = usize::from(self.cell_size);
        let at = cell * size;
        self.counters[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
    }

    /// Adds `delta` to `item`'s counter in every row and to the count, with the arithmetic
    /// of the sketch's cell size and the sign of `delta` (the module docs above).
    pub fn incr_by(&mut self, item: &[u8], delta: i64) -> Increment {
        let item = RowHashes::new(item, None);
        if self.cell_size == DEFAULT_CELL_SIZE && delta >= 0 {
            return self.saturating_incr(&item, delta as u64);
        }
        let magnitude = delta.unsigned_abs();
        let ceiling = cell_max(self.cell_size);
        for row in 0..self.depth {
            let counter = self.get(self.cell(&item, row));
            if delta < 0 && counter < magnitude {
                return Increment::Underflow;
            }
            if delta >= 0
                && counter
                    .checked_add(magnitude)
                    .is_none_or(|sum| sum > ceiling)
            {
                return Increment::Overflow;
            }
        }
        let mut estimate = u64::MAX;
        for row in 0..self.depth {
            let cell = self.cell(&item, row);
            let counter = self.get(cell);
            let counter = match delta < 0 {
                true => counter - magnitude,
                false => counter + magnitude,
            };
            self.set(cell, counter);
            estimate = estimate.min(counter);
        }
        self.count = match delta < 0 {
            true => self.count.saturating_sub(magnitude),
            // A count already above the cap (a loaded one) is kept as it is.
            false if self.count > COUNT_CAP => self.count,
            false => self.count.saturating_add(magnitude).min(COUNT_CAP),
        };
        Increment::Estimate(estimate)
    }

    /// RedisBloom 2.4.20's increment of a 4-byte sketch: each counter saturates at
    /// `u32::MAX`, the count wraps; an estimate of `u32::MAX` is its `CMS: INCRBY overflow`
    /// (the increment applied all the same).
    fn saturating_incr(&mut self, item: &RowHashes, value: u64) -> Increment {
        let mut estimate = u64::from(u32::MAX);
        for row in 0..self.depth {
            let cell = self.cell(item, row);
            let sum = read::<4>(&self.counters, cell).saturating_add(value);
            let counter = u32::try_from(sum).unwrap_or(u32::MAX);
            self.counters[cell * 4..cell * 4 + 4].copy_from_slice(&counter.to_le_bytes());
            estimate = estimate.min(u64::from(counter));
        }
        self.count = self.count.wrapping_add(value);
        match estimate {
            e if e == u64::from(u32::MAX) => Increment::Overflow,
            e => Increment::Estimate(e),
        }
    }

    /// The estimate of `item`: the smallest of its counters.
    pub fn query(&self, item: &[u8]) -> u64 {
        let item = RowHashes::new(item, None);
        match self.cell_size {
            1 => self.estimate::<1>(&item),
            2 => self.estimate::<2>(&item),
            4 => self.estimate::<4>(&item),
            _ => self.estimate::<8>(&item),
        }
    }

    /// The smallest of `item`'s counters, each `N` bytes (the cell size chosen once).
    #[inline]
    fn estimate<const N: usize>(&self, item: &RowHashes) -> u64 {
        let mut estimate = u64::MAX;
        for row in 0..self.depth {
            estimate = estimate.min(read::<N>(&self.counters, self.cell(item, row)));
        }
        estimate
    }

    /// Checks that `sources` (each with its weight) can be merged into a sketch of this
    /// one's width, depth and cell size, and computes the result: counter `c` becomes
    /// `Σ weight × source[c]` and the count `Σ weight × count`. As RedisBloom, every partial
    /// sum and product must fit an `i64` and every result counter `0..=`[`cell_max`], the
    /// count must not be negative; otherwise nothing is merged. A source may be this very
    /// sketch (the caller passes a reference to it; the result is applied with
    /// [`Merged::apply`]).
    pub fn merge(&self, sources: &[(&CountMinSketch, i64)]) -> Result<Merged, CmsError> {
        if sources
            .iter()
            .any(|(s, _)| s.width != self.width || s.depth != self.depth)
        {
            return Err(CmsError::DimensionsDiffer);
        }
        if sources.iter().any(|(s, _)| s.cell_size != self.cell_size) {
            return Err(CmsError::CellSizeDiffers);
        }
        let ceiling = cell_max(self.cell_size);
        let mut merged = CountMinSketch {
            counters: zeroed_bytes(self.counters.len() as u64)
                .map_err(|_| CmsError::OutOfMemory)?,
            ..*self
        };
        let cells = self.counters.len() / usize::from(self.cell_size);
        for cell in 0..cells {
            let mut sum = 0i64;
            for (source, weight) in sources {
                sum = i64::try_from(source.get(cell))
                    .ok()
                    .and_then(|counter| counter.checked_mul(*weight))
                    .and_then(|product| sum.checked_add(product))
                    .ok_or(CmsError::MergeOverflow)?;
            }
            let counter = u64::try_from(sum)
                .ok()
                .filter(|&c| c <= ceiling)
                .ok_or(CmsError::MergeOverflow)?;
            merged.set(cell, counter);
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
            counters: merged.counters,
        })
    }
}
/// Counter `cell` of `counters`, `N` little-endian bytes each.
#[inline]
fn read<const N: usize>(counters: &[u8], cell: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..N].copy_from_slice(&counters[cell * N..cell * N + N]);
    u64::from_le_bytes(bytes)
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
