//! One sub-filter: a flat array of fingerprint slots, bucket `j` at bytes `[j·bs, (j+1)·bs)`,
//! with its count of empty slots; and the bucket offsets RedisBloom's lookups compute.

use std::fmt;

use super::CuckooHash;

/// One sub-filter: `buckets` buckets of the filter's bucket size.
#[derive(Clone, PartialEq, Eq)]
pub struct SubFilter {
    pub(super) buckets: u64,
    pub(super) data: Vec<u8>,
    /// Number of empty (zero) slots in `data`, kept in step with every write so that an
    /// insert can pass over full sub-filters without reading them.
    pub(super) free: u64,
}

impl SubFilter {
    pub(super) fn new(buckets: u64, data: Vec<u8>) -> Self {
        let free = zero_count(&data);
        SubFilter {
            buckets,
            data,
            free,
        }
    }

    /// A sub-filter over freshly zeroed data (no need to count).
    pub(super) fn zeroed(buckets: u64, data: Vec<u8>) -> Self {
        SubFilter {
            buckets,
            free: data.len() as u64,
            data,
        }
    }

    /// True when no slot is empty (nothing can be placed here without a kick-out).
    #[inline]
    pub(super) fn is_full(&self) -> bool {
        self.free == 0
    }

    /// Number of buckets (a power of two).
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The slot bytes (`buckets × bucket_size`).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Byte offsets of an item's two candidate buckets, as a lookup reads them (a tool that
    /// loads only the bytes a lookup needs uses them).
    pub fn bucket_offsets(&self, h: &super::CuckooHash, bs: usize) -> [usize; 2] {
        [self.lookup_offset(h.h1, bs), self.lookup_offset(h.h2, bs)]
    }

    /// Byte offset of the bucket of `hash` as RedisBloom's lookup path computes it:
    /// `((hash mod N) × bs)` truncated to 32 bits (COMPAT §8.2, quirk 12). The truncated
    /// value is never larger than the true offset, so the bucket stays in bounds.
    #[inline]
    pub(super) fn lookup_offset(&self, hash: u64, bs: usize) -> usize {
        ((hash % self.buckets).wrapping_mul(bs as u64) as u32) as usize
    }

    /// Byte offset of bucket `index` with full 64-bit arithmetic (kick-out, compaction scan).
    #[inline]
    pub(super) fn full_offset(&self, index: u64, bs: usize) -> usize {
        // index < buckets and buckets × bs == data.len(), so this fits in usize.
        (index as usize) * bs
    }

    #[inline]
    pub(super) fn bucket(&self, offset: usize, bs: usize) -> &[u8] {
        &self.data[offset..offset + bs]
    }

    /// First empty slot in bucket(h1), then bucket(h2); returns its byte index.
    #[inline]
    pub(super) fn find_available(&self, h1: u64, h2: u64, bs: usize) -> Option<usize> {
        for h in [h1, h2] {
            let off = self.lookup_offset(h, bs);
            if let Some(s) = self.bucket(off, bs).iter().position(|&b| b == 0) {
                return Some(off + s);
            }
        }
        None
    }

    #[inline]
    pub(super) fn contains(&self, h: &CuckooHash, bs: usize) -> bool {
        [h.h1, h.h2].iter().any(|&x| {
            let off = self.lookup_offset(x, bs);
            self.bucket(off, bs).contains(&h.fp)
        })
    }

    #[inline]
    pub(super) fn count(&self, h: &CuckooHash, bs: usize) -> u64 {
        [h.h1, h.h2]
            .iter()
            .map(|&x| {
                let off = self.lookup_offset(x, bs);
                self.bucket(off, bs).iter().filter(|&&b| b == h.fp).count() as u64
            })
            .sum()
    }

    /// The first slot equal to fp in bucket(h1), else in bucket(h2) (the one CF.DEL clears).
    #[inline]
    pub(super) fn find_fp(&self, h: &CuckooHash, bs: usize) -> Option<usize> {
        [h.h1, h.h2].iter().find_map(|&x| {
            let off = self.lookup_offset(x, bs);
            self.bucket(off, bs)
                .iter()
                .position(|&b| b == h.fp)
                .map(|s| off + s)
        })
    }
}

/// Number of zero bytes (empty slots), eight at a time.
pub(super) fn zero_count(data: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut words = data.chunks_exact(8);
    let mut zeros = 0u64;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        // The high bit of each byte of `nonzero` is set iff that byte of x is not 0.
        let nonzero = (((x & LOW7) + LOW7) | x) & !LOW7;
        zeros += 8 - u64::from(nonzero.count_ones());
    }
    zeros + words.remainder().iter().filter(|&&b| b == 0).count() as u64
}

impl fmt::Debug for SubFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let used = self.data.iter().filter(|&&b| b != 0).count();
        f.debug_struct("SubFilter")
            .field("buckets", &self.buckets)
            .field("bytes", &self.data.len())
            .field("used_slots", &used)
            .finish()
    }
}
