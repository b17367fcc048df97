//! CF.MERGE: the multiset union of Cuckoo filters of one shape, built apart from them —
//! a copy of the first, then every fingerprint of the others inserted as CF.ADD inserts
//! (an empty slot newest → oldest, else a kick-out, else growth).
//!
//! A stored fingerprint no longer has its item's hash, only its bucket `j` in a sub-filter
//! of `N` buckets (a power of two): its two buckets there are `j` and `j XOR (fp ×
//! 0x5bd1e995) mod N`. In a sub-filter of `N' ≤ N` buckets they are the same values mod
//! `N'` (as compaction moves fingerprints into older sub-filters); in a larger one they
//! are unknown. So a fingerprint goes only into sub-filters no larger than the one it
//! came from, and growth helps only while the new sub-filter is no larger (always, with
//! expansion 1, CF's default).

use super::filter::CuckooFilter;
use super::sizing::sub_filter_buckets;
use super::{alt_index, CuckooError};
use crate::merge::MergeError;

impl CuckooFilter {
    /// Whether `other` has this filter's shape: base bucket count, bucket size, max
    /// iterations and expansion (sub-filter *i* then has the same bucket count in both).
    pub fn same_shape(&self, other: &CuckooFilter) -> bool {
        self.num_buckets == other.num_buckets
            && self.bucket_size == other.bucket_size
            && self.max_iterations == other.max_iterations
            && self.expansion == other.expansion
    }

    /// A new filter holding every fingerprint of every operand (none is changed): its item
    /// count is the sum of theirs, so CF.COUNT of an item is the sum of its counts (for
    /// items whose fingerprints do not collide). `max_bytes` caps the result's bucket
    /// data, `max_filters` its sub-filter count when it grows. On any error nothing exists
    /// of the result.
    pub fn merge(
        operands: &[&CuckooFilter],
        max_bytes: u64,
        max_filters: usize,
    ) -> Result<CuckooFilter, MergeError> {
        let first = *operands.first().ok_or(MergeError::NoOperands)?;
        if let Some(at) = operands.iter().position(|f| !first.same_shape(f)) {
            return Err(MergeError::ShapeDiffers(at));
        }
        let huge = |f: &&CuckooFilter| f.filters.iter().any(|s| s.data.len() > u32::MAX as usize);
        if operands.iter().any(huge) {
            return Err(MergeError::HugeSubFilter);
        }
        if first.data_len > max_bytes {
            return Err(MergeError::TooLarge);
        }
        let mut result = first.try_clone().ok_or(MergeError::OutOfMemory)?;
        let bs = usize::from(first.bucket_size);
        for other in &operands[1..] {
            for sub in &other.filters {
                for (j, bucket) in sub.data.chunks_exact(bs).enumerate() {
                    for &fp in bucket.iter().filter(|&&fp| fp != 0) {
                        result.place(j as u64, sub.buckets, fp, max_bytes, max_filters)?;
                    }
                }
            }
            result.num_deletes = result.num_deletes.wrapping_add(other.num_deletes);
        }
        Ok(result)
    }

    /// Inserts `fp`, found in bucket `j` of a sub-filter of `from_buckets` buckets, into a
    /// sub-filter no larger: an empty slot newest → oldest, else a kick-out in the newest
    /// such sub-filter, else a new sub-filter if it is no larger either.
    fn place(
        &mut self,
        j: u64,
        from_buckets: u64,
        fp: u8,
        max_bytes: u64,
        max_filters: usize,
    ) -> Result<(), MergeError> {
        let bs = usize::from(self.bucket_size);
        let alt = alt_index(j, fp);
        loop {
            let fits = |buckets: u64| buckets <= from_buckets;
            let free = self.filters.iter().enumerate().rev().find_map(|(s, sub)| {
                if !fits(sub.buckets) || sub.is_full() {
                    return None;
                }
                sub.find_available(j, alt, bs).map(|i| (s, i))
            });
            if let Some((s, i)) = free {
                self.set_slot(s, i, fp);
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            let newest = self.filters.iter().rposition(|sub| fits(sub.buckets));
            if let Some(s) = newest {
                if self.kick_out_in(s, j, fp) {
                    self.num_items = self.num_items.wrapping_add(1);
                    return Ok(());
                }
            }
            let next = sub_filter_buckets(self.num_buckets, self.expansion, self.filters.len());
            if self.expansion == 0 || !next.is_some_and(fits) {
                return Err(MergeError::NoSpace);
            }
            if self.filters.len() >= max_filters {
                return Err(MergeError::MaxFilters);
            }
            self.grow(max_bytes).map_err(|e| match e {
                CuckooError::TooLarge => MergeError::TooLarge,
                CuckooError::OutOfMemory => MergeError::OutOfMemory,
                _ => MergeError::Overflow,
            })?;
        }
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
