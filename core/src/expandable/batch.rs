//! XF.MEXISTS's batch lookup: a software pipeline over the items, so that the cache misses
//! of several lookups overlap instead of following one another.
//!
//! A lookup reads three things in turn, each a likely miss once the filter leaves the
//! caches: the partition's directory entry (which holds the pointer to its bit array),
//! the bitmap up to the item's mini-bucket, and the run's slots. While item `i` is
//! answered, item `i + 2·AHEAD`'s directory entry is requested; item `i + AHEAD`'s entry
//! has arrived, so its bitmap lines are requested; item `i + AHEAD/2`'s bitmap has
//! arrived, so its run is located (kept in a ring for when its answer is due) and the
//! run's own lines are requested. Every line a lookup reads is requested exactly once,
//! and none is guessed: at 10^8 items the pipeline is bounded by how many lines the
//! memory serves at once, not by the lookups' arithmetic.

use super::{slot_matches, Partition, XFilter, BUCKETS};
use crate::memory::{prefetch, prefetch_ref};

/// Items between a stage of the pipeline and the next but one.
const AHEAD: usize = 8;
/// Items between locating a run and answering its lookup.
const LOCATED: usize = AHEAD / 2;
/// How far past the expected first slot of a run a single lookup requests a second slot
/// line.
const SLOTS_AHEAD: usize = 8;
/// Up to this many partitions (about 32 KB of table: the L1 cache) the plain loop is as
/// fast; above, even L2 and L3 hits gain from overlapping.
const CACHED_PARTITIONS: u64 = 64;

impl XFilter {
    /// Requests the bitmap lines of `part` the lookup of mini-bucket `q` reads: the
    /// bitmap is scanned from its first word to that of the run's start, about
    /// `q + q·m/256` bits in, so the first word's line and that word's line (the same one
    /// when the run starts in the first 512 bits).
    #[inline]
    fn prefetch_bitmap(part: &Partition, q: usize) {
        let words = part.words();
        let before = q * part.entries() as usize / BUCKETS;
        prefetch(words, 0);
        prefetch(words, (q + before) / 64);
    }

    /// Requests the lines of `part` a single lookup of hash `h` reads before it has any:
    /// the bitmap's ([`Self::prefetch_bitmap`]) and the run's slots at the mean load: the
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
        Self::prefetch_bitmap(part, q);
        prefetch(words, (BUCKETS + m + before * width) / 64);
        prefetch(words, (BUCKETS + m + (before + SLOTS_AHEAD) * width) / 64);
    }

    /// [`Self::contains`] of each hash in order, answers passed to `each`.
    pub fn contains_each(&self, hashes: &[u64], mut each: impl FnMut(bool)) {
        if self.partitions() <= CACHED_PARTITIONS {
            hashes.iter().for_each(|&h| each(self.contains(h)));
            return;
        }
        let part = |h: u64| self.partition(self.address(h).0);
        let entry = |h: u64| prefetch_ref(part(h));
        let bitmap = |h: u64| Self::prefetch_bitmap(part(h), Self::bucket_of(h));
        // The run's first entry and length; its slots' lines are requested.
        let locate = |h: u64| {
            let p = part(h);
            let (first, n) = p.run(Self::bucket_of(h));
            let (base, width) = (BUCKETS + p.entries() as usize, p.width() as usize);
            prefetch(p.words(), (base + first * width) / 64);
            prefetch(p.words(), (base + (first + n) * width) / 64);
            (first, n)
        };
        let mut runs = [(0usize, 0usize); LOCATED];
        hashes.iter().take(2 * AHEAD).for_each(|&h| entry(h));
        hashes.iter().take(AHEAD).for_each(|&h| bitmap(h));
        for (i, &h) in hashes.iter().take(LOCATED).enumerate() {
            runs[i] = locate(h);
        }
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&far) = hashes.get(i + 2 * AHEAD) {
                entry(far);
            }
            if let Some(&near) = hashes.get(i + AHEAD) {
                bitmap(near);
            }
            let (first, n) = runs[i % LOCATED];
            if let Some(&next) = hashes.get(i + LOCATED) {
                runs[i % LOCATED] = locate(next);
            }
            let (p, lp) = self.address(h);
            let (fp, part) = (h >> lp, self.partition(p));
            each((first..first + n).any(|j| slot_matches(part.slot(j), fp)));
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
            // One item added 300 times: its run spans several lines.
            let hot = XFilter::hash(b"hot");
            for _ in 0..300 {
                f.insert(hot, u64::MAX).unwrap();
            }
            let mut hashes: Vec<u64> = (n - 500..n + 500)
                .map(|i| XFilter::hash(&i.to_le_bytes()))
                .collect();
            hashes.insert(700, hot);
            // Every batch length around the pipeline's stages, and the whole.
            for len in (0..=20).chain([33, hashes.len()]) {
                for batch in hashes
                    .chunks(len.max(1))
                    .take(if len == 0 { 0 } else { 60 })
                {
                    let mut answers = Vec::new();
                    f.contains_each(batch, |hit| answers.push(hit));
                    let expected: Vec<bool> = batch.iter().map(|&h| f.contains(h)).collect();
                    assert_eq!(answers, expected, "n {n}, batches of {len}");
                }
            }
            f.contains_each(&[], |_| panic!("no answer for no item"));
            let mut answers = Vec::new();
            f.contains_each(&hashes, |hit| answers.push(hit));
            assert!(answers[..500].iter().all(|&hit| hit));
            assert!(answers[700]);
            assert!(answers[501..].iter().any(|&hit| !hit));
        }
    }
}
