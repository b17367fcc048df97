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

    /// The lookups' cost per item as the filter grows, in the core (no server): batches
    /// of 100 items hashed and looked up as XF.MEXISTS does, and single lookups, on items
    /// never added, at 10^3 and 10^6 items (`XF_LOOKUP_MAX=100000000` adds 10^7 and 10^8:
    /// a minute's build, 200 MB). The sizes are measured in interleaved rounds; each line
    /// gives the median ns per item and its ratio to 10^6:
    /// `cargo test --release -p redbloom-core --lib measure_xf_lookups -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement (release build)"]
    fn measure_xf_lookups() {
        use std::time::Instant;
        let max: u64 = std::env::var("XF_LOOKUP_MAX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_000_000);
        let sizes: Vec<u64> = [1_000, 1_000_000, 10_000_000, 100_000_000]
            .into_iter()
            .filter(|&n| n <= max)
            .collect();
        let filters: Vec<XFilter> = sizes
            .iter()
            .map(|&n| {
                let mut f = XFilter::new(XfParams::default(), u64::MAX).unwrap();
                for i in 0..n {
                    f.insert(XFilter::hash(format!("fill:{i}").as_bytes()), u64::MAX)
                        .unwrap();
                }
                f
            })
            .collect();
        const ROUNDS: usize = 11;
        let mut batch = vec![Vec::new(); sizes.len()];
        let mut single = vec![Vec::new(); sizes.len()];
        let mut hits = 0u64;
        for round in 0..ROUNDS {
            for (k, f) in filters.iter().enumerate() {
                // Fixed-width items side by side, as a command's arguments are read.
                let items: Vec<[u8; 16]> = (0..200_000u64)
                    .map(|i| {
                        let mut item = *b"absent:_________";
                        item[7..].copy_from_slice(
                            &format!("{:09}", round as u64 * 200_000 + i).into_bytes(),
                        );
                        item
                    })
                    .collect();
                let mut hashes = Vec::with_capacity(100);
                let start = Instant::now();
                for chunk in items.chunks(100) {
                    hashes.clear();
                    hashes.extend(chunk.iter().map(|i| XFilter::hash(i)));
                    f.contains_each(&hashes, |hit| hits += u64::from(hit));
                }
                batch[k].push(start.elapsed().as_nanos() as f64 / items.len() as f64);
                let start = Instant::now();
                for item in &items[..50_000] {
                    hits += u64::from(f.contains(XFilter::hash(item)));
                }
                single[k].push(start.elapsed().as_nanos() as f64 / 50_000.0);
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let at_1m = sizes.iter().position(|&n| n == 1_000_000).unwrap_or(0);
        let (b1m, s1m) = (median(&mut batch[at_1m]), median(&mut single[at_1m]));
        for (k, n) in sizes.iter().enumerate() {
            let (b, s) = (median(&mut batch[k]), median(&mut single[k]));
            println!(
                "{n:>11} items, {:>9} bytes: ×100 batch {b:6.1} ns per item ({:.2}× 10^6), \
                 single {s:6.1} ns ({:.2}× 10^6)",
                filters[k].memory_bytes(),
                b / b1m,
                s / s1m
            );
        }
        println!("({hits} false positives)");
    }
}
