//! Insert and delete (COMPAT §8.3, §8.5): the first empty slot newest → oldest, else the
//! kick-out in the newest sub-filter, undone byte for byte when it fails; then growth.

use super::filter::CuckooFilter;
use super::{alt_index, CuckooError, CuckooHash};
use crate::memory::Ceiling;

impl CuckooFilter {
    /// Insert one copy of the item (CF.ADD, COMPAT §8.3): first empty slot newest → oldest,
    /// else kick-out in the newest sub-filter, undone exactly on failure; then `NoSpace` if
    /// the expansion is 0, else grow (with `max_bytes`, errors as [`Self::grow`]) and retry.
    pub fn insert(&mut self, h: &CuckooHash, max_bytes: impl Ceiling) -> Result<(), CuckooError> {
        let bs = usize::from(self.bucket_size);
        loop {
            if let Some((s, i)) = self.find_available(h, bs) {
                self.set_slot(s, i, h.fp);
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            if self.kick_out(h) {
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            if self.expansion == 0 {
                return Err(CuckooError::NoSpace);
            }
            self.grow(max_bytes.limit_for(self.data_len))?;
        }
    }

    /// CF.ADDNX: `Ok(false)` if the item is already present (nothing changes), else
    /// [`Self::insert`] and `Ok(true)`.
    pub fn insert_if_absent(
        &mut self,
        h: &CuckooHash,
        max_bytes: impl Ceiling,
    ) -> Result<bool, CuckooError> {
        if self.contains(h) {
            return Ok(false);
        }
        self.insert(h, max_bytes).map(|()| true)
    }

    /// The first empty slot for `h`, sub-filters newest → oldest, bucket(h1) then
    /// bucket(h2): `(sub-filter, byte index)`. Full sub-filters are passed over unread, and
    /// the scan stops once every sub-filter with an empty slot has been looked at.
    fn find_available(&self, h: &CuckooHash, bs: usize) -> Option<(usize, usize)> {
        let mut left = self.non_full;
        for (s, sub) in self.filters.iter().enumerate().rev() {
            if left == 0 {
                break;
            }
            if sub.is_full() {
                continue;
            }
            left -= 1;
            if let Some(i) = sub.find_available(h.h1, h.h2, bs) {
                return Some((s, i));
            }
        }
        None
    }

    /// Kick-out in the newest sub-filter; true if the fingerprint found a home. On failure
    /// the table is restored byte for byte.
    fn kick_out(&mut self, h: &CuckooHash) -> bool {
        let Some(last) = self.filters.len().checked_sub(1) else {
            return false;
        };
        self.kick_out_in(last, h.h1, h.fp)
    }

    /// Kick-out of `fp`, whose first bucket is `hash mod N`, in sub-filter `last`; true if
    /// it found a home, else the table is restored byte for byte.
    pub(super) fn kick_out_in(&mut self, last: usize, hash: u64, fp: u8) -> bool {
        let bs = usize::from(self.bucket_size);
        let max_iter = self.max_iterations;
        let n = self.filters[last].buckets;
        let mut fp = fp;
        let mut victim = 0usize;
        let mut index = hash % n;
        for _ in 0..max_iter {
            let off = self.filters[last].full_offset(index, bs);
            fp = self.set_slot(last, off + victim, fp);
            index = alt_index(index, fp) % n;
            let off = self.filters[last].full_offset(index, bs);
            if let Some(s) = self.filters[last]
                .bucket(off, bs)
                .iter()
                .position(|&b| b == 0)
            {
                self.set_slot(last, off + s, fp);
                return true;
            }
            victim = (victim + 1) % bs;
        }
        for _ in 0..max_iter {
            victim = (victim + bs - 1) % bs;
            index = alt_index(index, fp) % n;
            let off = self.filters[last].full_offset(index, bs);
            fp = self.set_slot(last, off + victim, fp);
        }
        false
    }

    /// CF.DEL (COMPAT §8.5): remove one copy, newest → oldest. On success the counters move
    /// (wrapping) and, with more than one sub-filter and deletes > 10 % of items, the filter
    /// compacts with `continue = false`. Returns whether a copy was removed.
    pub fn delete(&mut self, h: &CuckooHash) -> bool {
        let bs = usize::from(self.bucket_size);
        let found = self
            .filters
            .iter()
            .enumerate()
            .rev()
            .find_map(|(s, sub)| sub.find_fp(h, bs).map(|i| (s, i)));
        let Some((s, i)) = found else {
            return false;
        };
        self.set_slot(s, i, 0);
        self.num_items = self.num_items.wrapping_sub(1);
        self.num_deletes = self.num_deletes.wrapping_add(1);
        if self.filters.len() > 1 && self.num_deletes as f64 > self.num_items as f64 * 0.10 {
            self.compact(false);
        }
        true
    }
}
