//! XF.MEXISTS's batch lookup: a software pipeline over the items, so that the cache misses
//! of several lookups overlap instead of following one another.
//!
//! A lookup reads three things in turn, each a likely miss once the filter leaves the
//! caches: the partition's directory entry (which holds the pointer to its bit array),
//! the bitmap up to the item's mini-bucket, and the run's slots. Item `i + 2·AHEAD`'s
//! directory entry is requested while item `i` is answered; item `i + AHEAD`'s entry has
//! arrived by then, so its bitmap line and its run's estimated line are requested from it.

use super::{Partition, XFilter, BUCKETS};
use crate::memory::{prefetch, prefetch_ref};

/// Items between a stage of the pipeline and the next.
const AHEAD: usize = 8;
/// How far past the expected first slot of a run the second slot line is requested.
const SLOTS_AHEAD: usize = 8;
/// Up to this many partitions (about 32 KB of table: the L1 cache) the plain loop is as
/// fast; above, even L2 and L3 hits gain from overlapping.
const CACHED_PARTITIONS: u64 = 64;

impl XFilter {
    /// Requests the lines of `part` the lookup of hash `h` reads: the bitmap's word of the
    /// run's start (about `q + q·m/256` bits in) and the run's slots at the mean load: the
    /// line of the expected first slot and the line [`SLOTS_AHEAD`] slots on (the entries
    /// before a mini-bucket vary by about their square root: the expected line alone
    /// misses the run one lookup in seven at 10^6 items, the two one in thirteen; most
    /// often both are the same line and the second request costs nothing).
    #[inline]
    pub(crate) fn prefetch_run(part: &Partition, h: u64) {
        let words = part.words();
        let q = Self::bucket_of(h);
        let m = part.entries() as usize;
        let before = q * m / BUCKETS;
        let width = part.width() as usize;
        prefetch(words, (q + before) / 64);
        prefetch(words, (BUCKETS + m + before * width) / 64);
        prefetch(words, (BUCKETS + m + (before + SLOTS_AHEAD) * width) / 64);
    }

    /// [`Self::contains`] of each hash in order, answers passed to `each`.
    pub fn contains_each(&self, hashes: &[u64], mut each: impl FnMut(bool)) {
        if self.partitions() <= CACHED_PARTITIONS {
            hashes.iter().for_each(|&h| each(self.contains(h)));
            return;
        }
        let entry = |h: u64| {
            let (p, _) = self.address(h);
            prefetch_ref(self.partition(p));
        };
        let lines = |h: u64| {
            let (p, _) = self.address(h);
            Self::prefetch_run(self.partition(p), h);
        };
        hashes.iter().take(2 * AHEAD).for_each(|&h| entry(h));
        hashes.iter().take(AHEAD).for_each(|&h| lines(h));
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&far) = hashes.get(i + 2 * AHEAD) {
                entry(far);
            }
            if let Some(&near) = hashes.get(i + AHEAD) {
                lines(near);
            }
            each(self.contains(h));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::expandable::{XFilter, XfParams};

    #[test]
    fn contains_each_answers_as_contains() {
        for n in [1000u64, 900_000] {
            let mut f = XFilter::new(XfParams::default(), u64::MAX).unwrap();
            for i in 0..n {
                f.insert(XFilter::hash(&i.to_le_bytes()), u64::MAX).unwrap();
            }
            let hashes: Vec<u64> = (n - 500..n + 500)
                .map(|i| XFilter::hash(&i.to_le_bytes()))
                .collect();
            let mut answers = Vec::new();
            f.contains_each(&hashes, |hit| answers.push(hit));
            let expected: Vec<bool> = hashes.iter().map(|&h| f.contains(h)).collect();
            assert_eq!(answers, expected);
            assert!(answers[..500].iter().all(|&hit| hit));
            assert!(answers[500..].iter().any(|&hit| !hit));
        }
    }
}
