//! Active defragmentation of a Cuckoo filter: its sub-filters vector, then each one's
//! buckets (up to 65535 sub-filters: the cursor lets the server pause between them).

use super::filter::CuckooFilter;
use crate::memory::{relocate_parts, Relocator};

impl CuckooFilter {
    /// Offers the filter's buffers to `r` from cursor `from` (see [`relocate_parts`]).
    pub fn relocate(&mut self, from: u64, r: &mut impl Relocator) -> Option<u64> {
        relocate_parts(&mut self.filters, from, r, |sub| &mut sub.data)
    }
}
