//! The filter: creation, growth, loading from stored parts, slot bookkeeping, lookups
//! and the figures INFO and DEBUG report.

use std::fmt;

use super::sizing::{
    base_buckets, round_expansion, sub_filter_buckets, validate_fields, CuckooParams, MAX_BUCKETS,
    MAX_BUCKET_SIZE, MAX_SUB_FILTERS,
};
use super::sub_filter::{zero_count, SubFilter};
use super::{CuckooError, CuckooHash};
use crate::memory::{copy_changed_pages, sparse_copy, zeroed_bytes};

/// The stored fields of a filter (RDB §4.3 / header §7.3), used to rebuild one.
///
/// Fields are u64 as they come from RDB `Unsigned` values; `CuckooFilter::from_parts`
/// range-checks them instead of truncating like RedisBloom does.
///
/// RDB encver < 4 stores only numFilters, numBuckets and numItems (then one data buffer per
/// sub-filter): the command layer fills `num_deletes = 0`, `bucket_size = 2`,
/// `max_iterations = 20`, `expansion = 1` (RedisBloom 2.4.20's compile-time defaults; HEAD
/// uses the current config defaults instead) and gives every sub-filter `num_buckets`
/// buckets.
///
/// A plain value (a filter's stored counters and settings): public fields, checked as a
/// whole when a filter is built from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooParts {
    pub num_buckets: u64,
    pub num_items: u64,
    pub num_deletes: u64,
    pub bucket_size: u64,
    pub max_iterations: u64,
    pub expansion: u64,
}

/// A scalable Cuckoo filter (RedisBloom's `CuckooFilter`).
#[derive(Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    /// Base bucket count (the first sub-filter's at creation; grown ones multiply it).
    pub(super) num_buckets: u64,
    pub(super) num_items: u64,
    pub(super) num_deletes: u64,
    pub(super) bucket_size: u16,
    pub(super) max_iterations: u16,
    /// Stored expansion (0 or a power of two ≤ 32768).
    pub(super) expansion: u16,
    /// Sub-filters, oldest first; never empty.
    pub(super) filters: Vec<SubFilter>,
    /// How many sub-filters have an empty slot: an insert stops scanning once it has seen
    /// them all (with tens of thousands of full sub-filters this keeps inserts O(1)).
    pub(super) non_full: usize,
    /// Total bytes of bucket data (checked against the ceiling on every growth step).
    pub(super) data_len: u64,
}

impl fmt::Debug for CuckooFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("num_buckets", &self.num_buckets)
            .field("num_items", &self.num_items)
            .field("num_deletes", &self.num_deletes)
            .field("bucket_size", &self.bucket_size)
            .field("max_iterations", &self.max_iterations)
            .field("expansion", &self.expansion)
            .field("filters", &self.filters)
            .field("non_full", &self.non_full)
            .field("data_len", &self.data_len)
            .finish()
    }
}

impl CuckooFilter {
    /// A deep copy, or `None` if memory cannot be had (COPY of a large filter).
    pub fn try_clone(&self) -> Option<CuckooFilter> {
        let mut filters = Vec::new();
        filters.try_reserve_exact(self.filters.len()).ok()?;
        for sub in &self.filters {
            let data = sparse_copy(&sub.data).ok()?;
            filters.push(SubFilter {
                buckets: sub.buckets,
                data,
                free: sub.free,
            });
        }
        Some(CuckooFilter { filters, ..*self })
    }

    /// Create a filter (CF.RESERVE / auto-creation, COMPAT §8.1) with one sub-filter.
    ///
    /// `max_bytes` bounds the bucket data (`TooLarge` instead of allocating more).
    pub fn new(params: CuckooParams, max_bytes: u64) -> Result<Self, CuckooError> {
        let CuckooParams {
            capacity,
            bucket_size,
            max_iterations,
            expansion,
        } = params;
        if bucket_size == 0 || bucket_size > MAX_BUCKET_SIZE || max_iterations == 0 {
            return Err(CuckooError::InvalidParams);
        }
        let expansion = round_expansion(expansion).ok_or(CuckooError::InvalidParams)?;
        if capacity < 2 * u64::from(bucket_size) {
            return Err(CuckooError::CapacityTooSmall);
        }
        let num_buckets = base_buckets(capacity, bucket_size).ok_or(CuckooError::Overflow)?;
        let mut filter = CuckooFilter {
            num_buckets,
            num_items: 0,
            num_deletes: 0,
            bucket_size,
            max_iterations,
            expansion,
            filters: Vec::new(),
            non_full: 0,
            data_len: 0,
        };
        filter.grow(max_bytes)?;
        Ok(filter)
    }

    /// Build a filter from stored fields and sub-filters `(buckets, data)`, oldest first
    /// (RDB load). Validates, never panics: bucket size 1..=255, max iterations 1..=65535,
    /// expansion 0 or a power of two ≤ 32768, 1..=65535 sub-filters, not (expansion 0 and
    /// more than one sub-filter), every bucket count (base included) a non-zero power of
    /// two ≤ 2^56−1, sub-filter `i` with exactly `num_buckets × expansion^i` buckets (the
    /// layout a dump header describes), and every data length == bucket_size × buckets.
    /// num_items / num_deletes are taken as they are (RedisBloom does not check them).
    /// No memory ceiling applies: the buffers already exist.
    pub(crate) fn from_parts(
        parts: CuckooParts,
        sub_filters: Vec<(u64, Vec<u8>)>,
    ) -> Result<Self, CuckooError> {
        validate_fields(
            parts.num_buckets,
            parts.bucket_size,
            parts.max_iterations,
            parts.expansion,
            sub_filters.len() as u64,
        )?;
        let bs = parts.bucket_size;
        let mut filters = Vec::new();
        filters
            .try_reserve_exact(sub_filters.len())
            .map_err(|_| CuckooError::OutOfMemory)?;
        for (i, (buckets, data)) in sub_filters.into_iter().enumerate() {
            if buckets == 0 || buckets > MAX_BUCKETS || !buckets.is_power_of_two() {
                return Err(CuckooError::InvalidParams);
            }
            // Sub-filter i has `num_buckets × expansion^i` buckets, as growth makes them and
            // as a SCANDUMP header describes them: any other layout could not be restored
            // from its own AOF rewrite (LOADCHUNK would refuse the chunks).
            if sub_filter_buckets(parts.num_buckets, parts.expansion as u16, i) != Some(buckets) {
                return Err(CuckooError::InvalidParams);
            }
            let len = buckets.checked_mul(bs).ok_or(CuckooError::Overflow)?;
            if data.len() as u64 != len {
                return Err(CuckooError::InvalidParams);
            }
            filters.push(SubFilter::new(buckets, data));
        }
        let non_full = filters.iter().filter(|s| !s.is_full()).count();
        // Each length is bucket_size × buckets ≤ 255 × (2^56 − 1) and there are at most
        // 65535 of them: the sum fits in a u64.
        let data_len = filters.iter().map(|s| s.data.len() as u64).sum();
        // The ranges were checked above, so these conversions are exact.
        Ok(CuckooFilter {
            num_buckets: parts.num_buckets,
            num_items: parts.num_items,
            num_deletes: parts.num_deletes,
            bucket_size: bs as u16,
            max_iterations: parts.max_iterations as u16,
            expansion: parts.expansion as u16,
            filters,
            non_full,
            data_len,
        })
    }

    /// Build an empty-slotted filter from header fields (used by the dump codec): the
    /// sub-filter sizes follow `num_buckets × expansion^i`; every check of
    /// [`validate_fields`] plus the 56-bit limit per sub-filter, overflow-checked byte
    /// sizes and the `max_bytes` ceiling on the total, all before allocating anything.
    pub(crate) fn with_layout(
        parts: CuckooParts,
        num_filters: u64,
        max_bytes: u64,
    ) -> Result<Self, CuckooError> {
        validate_fields(
            parts.num_buckets,
            parts.bucket_size,
            parts.max_iterations,
            parts.expansion,
            num_filters,
        )?;
        let bs = parts.bucket_size;
        let expansion = parts.expansion as u16;
        let n = num_filters as usize;
        let mut total: u64 = 0;
        for i in 0..n {
            let buckets =
                sub_filter_buckets(parts.num_buckets, expansion, i).ok_or(CuckooError::Overflow)?;
            let bytes = buckets.checked_mul(bs).ok_or(CuckooError::Overflow)?;
            total = total.checked_add(bytes).ok_or(CuckooError::Overflow)?;
            if usize::try_from(total).is_err() {
                return Err(CuckooError::Overflow);
            }
            if total > max_bytes {
                return Err(CuckooError::TooLarge);
            }
        }
        let mut filters = Vec::new();
        filters
            .try_reserve_exact(n)
            .map_err(|_| CuckooError::OutOfMemory)?;
        for i in 0..n {
            // Recomputed: identical to the checked values above.
            let buckets =
                sub_filter_buckets(parts.num_buckets, expansion, i).ok_or(CuckooError::Overflow)?;
            let data = zeroed_bytes(buckets * bs).map_err(|_| CuckooError::OutOfMemory)?;
            filters.push(SubFilter::zeroed(buckets, data));
        }
        let non_full = filters.len();
        Ok(CuckooFilter {
            num_buckets: parts.num_buckets,
            num_items: parts.num_items,
            num_deletes: parts.num_deletes,
            bucket_size: bs as u16,
            max_iterations: parts.max_iterations as u16,
            expansion,
            filters,
            non_full,
            data_len: total,
        })
    }

    /// Add a sub-filter (COMPAT §8.1 grow step). Fails with `Overflow` at 65535 sub-filters
    /// or past the 56-bit bucket / byte-size limits, `TooLarge` when the filter's total
    /// bucket data would exceed `max_bytes`, `OutOfMemory` when allocation fails. On error
    /// the filter is unchanged.
    pub fn grow(&mut self, max_bytes: u64) -> Result<(), CuckooError> {
        let n = self.filters.len();
        if n >= MAX_SUB_FILTERS {
            return Err(CuckooError::Overflow);
        }
        let buckets =
            sub_filter_buckets(self.num_buckets, self.expansion, n).ok_or(CuckooError::Overflow)?;
        let bytes = buckets
            .checked_mul(u64::from(self.bucket_size))
            .ok_or(CuckooError::Overflow)?;
        if usize::try_from(bytes).is_err() {
            return Err(CuckooError::Overflow);
        }
        let total = self
            .data_len
            .checked_add(bytes)
            .ok_or(CuckooError::Overflow)?;
        if total > max_bytes {
            return Err(CuckooError::TooLarge);
        }
        self.filters
            .try_reserve(1)
            .map_err(|_| CuckooError::OutOfMemory)?;
        let data = zeroed_bytes(bytes).map_err(|_| CuckooError::OutOfMemory)?;
        self.filters.push(SubFilter::zeroed(buckets, data));
        self.non_full += 1;
        self.data_len = total;
        Ok(())
    }

    /// Store `value` in byte `i` of sub-filter `s`, keeping the empty-slot counts; returns
    /// the byte it replaced.
    pub(super) fn set_slot(&mut self, s: usize, i: usize, value: u8) -> u8 {
        let sub = &mut self.filters[s];
        let was_full = sub.is_full();
        let old = std::mem::replace(&mut sub.data[i], value);
        match (old == 0, value == 0) {
            (true, false) => sub.free -= 1,
            (false, true) => sub.free += 1,
            _ => {}
        }
        match (was_full, sub.is_full()) {
            (false, true) => self.non_full -= 1,
            (true, false) => self.non_full += 1,
            _ => {}
        }
        old
    }

    /// Recount every sub-filter's empty slots and the data size (after compaction
    /// rewrote slots directly and dropped sub-filters).
    pub(super) fn recount(&mut self) {
        for sub in &mut self.filters {
            sub.free = zero_count(&sub.data);
        }
        self.non_full = self.filters.iter().filter(|s| !s.is_full()).count();
        self.data_len = self.filters.iter().map(|s| s.data.len() as u64).sum();
    }

    /// Copy `data` into sub-filter `s` at byte `off` (LOADCHUNK); the caller has checked
    /// that it fits. Only the overwritten range is recounted.
    pub(crate) fn overwrite(&mut self, s: usize, off: usize, data: &[u8]) {
        let sub = &mut self.filters[s];
        let was_full = sub.is_full();
        let range = off..off + data.len();
        let before = zero_count(&sub.data[range.clone()]);
        copy_changed_pages(&mut sub.data[range], data);
        sub.free = sub.free - before + zero_count(data);
        match (was_full, sub.is_full()) {
            (false, true) => self.non_full -= 1,
            (true, false) => self.non_full += 1,
            _ => {}
        }
    }

    /// CF.EXISTS: the fingerprint is in either candidate bucket of some sub-filter.
    pub fn contains(&self, h: &CuckooHash) -> bool {
        let bs = usize::from(self.bucket_size);
        self.filters.iter().any(|sub| sub.contains(h, bs))
    }

    /// CF.COUNT: slots equal to the fingerprint in bucket(h1) plus bucket(h2), summed over
    /// every sub-filter; a bucket that is both candidates is counted twice (quirk 12).
    pub fn count(&self, h: &CuckooHash) -> u64 {
        let bs = usize::from(self.bucket_size);
        self.filters
            .iter()
            .fold(0u64, |acc, sub| acc.wrapping_add(sub.count(h, bs)))
    }

    /// Items inserted minus items deleted (wrapping; a loaded header may lie).
    pub fn num_items(&self) -> u64 {
        self.num_items
    }

    /// Deletes since the last compaction.
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes
    }

    /// Number of sub-filters (1..=65535).
    pub fn num_filters(&self) -> usize {
        self.filters.len()
    }

    /// Base bucket count (CF.INFO "Number of buckets", RDB field 2, header offset 8).
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// Slots per bucket (1..=255).
    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    /// Kick-out iterations (1..=65535).
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    /// Stored (rounded) expansion, 0 or a power of two ≤ 32768.
    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    /// The sub-filters, oldest first (RDB save: each one's `buckets()` and `data()`).
    pub fn sub_filters(&self) -> &[SubFilter] {
        &self.filters
    }

    /// Total bytes of bucket data over all sub-filters.
    pub fn data_bytes(&self) -> u64 {
        self.data_len
    }

    /// RedisBloom's mem_usage / CF.INFO Size (COMPAT §4.5):
    /// `40 + Σ (16 + bucket_size × buckets_i)`.
    pub fn mem_usage(&self) -> u64 {
        self.filters.iter().fold(40u64, |acc, s| {
            acc.saturating_add(16).saturating_add(s.data.len() as u64)
        })
    }

    /// The CF.DEBUG reply text.
    pub fn debug_string(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size,
            self.num_buckets,
            self.num_items,
            self.num_deletes,
            self.filters.len(),
            self.max_iterations,
            self.expansion
        )
    }
}
