//! Adding many items at once where nobody waits for each reply (a client building a filter
//! to ship with LOADCHUNK): the same filter, bit for bit and count for count, as
//! [`Chain::add_each`] of the items in order, built with fewer cache misses.
//!
//! While the chain has one classic link with room for a whole batch, no item of the batch
//! can make it grow, and the outcome of the batch is order-free but for the count: an item
//! counts when, at its turn, one of its bits is still clear — when it is the first item of
//! all so far to have some position. So the batch's positions are sorted by region of the
//! bit array (a stable partition, keeping the items' order within each region) and set
//! region by region, each region's quarter megabyte staying in the cache; the first item
//! to set a bit is marked as counted. Otherwise (a blocked link, whose item already sits in
//! one cache line; a chain near the end of its link, or grown) the batch goes through
//! `add_each`.

use super::chain::{AddOutcome, Chain};
use crate::hash::HashPair;
use crate::memory::Ceiling;

/// Items per batch: positions of 256 Ki items (2 Mi positions at 8 hashes, 16 bytes each).
const BATCH: usize = 1 << 18;
/// A region is 2^21 bits (256 KiB) of the array.
const REGION_SHIFT: u32 = 21;

impl Chain {
    /// Adds `pairs` in order, as [`Chain::add_each`] would; stops at the first item it
    /// refuses (a full non-scaling chain, a growth over `max_bytes`) and returns its index
    /// and outcome, the items before it added.
    pub fn add_bulk(
        &mut self,
        pairs: &[HashPair],
        max_bytes: impl Ceiling,
    ) -> Result<(), (usize, AddOutcome)> {
        let mut done = 0;
        for batch in pairs.chunks(BATCH) {
            let link = self.links.last().expect("a chain always has a link");
            let room = link.entries.saturating_sub(link.items);
            if self.links.len() == 1 && !link.blocked && room >= batch.len() as u64 {
                self.add_partitioned(batch);
            } else {
                let mut refused = None;
                let mut at = done;
                self.add_each(batch, &max_bytes, |outcome| {
                    if matches!(outcome, AddOutcome::Added | AddOutcome::Exists) {
                        at += 1;
                        true
                    } else {
                        refused = Some((at, outcome));
                        false
                    }
                });
                if let Some(refusal) = refused {
                    return Err(refusal);
                }
            }
            done += batch.len();
        }
        Ok(())
    }

    /// A batch into the only link, which has room for all of it (see the module docs).
    fn add_partitioned(&mut self, batch: &[HashPair]) {
        let link = self.links.last_mut().expect("a chain always has a link");
        let regions = (link.bits >> REGION_SHIFT) as usize + 1;
        let per_region = batch.len() * link.hashes as usize / regions + 16;
        let mut by_region: Vec<Vec<(u64, u32)>> = (0..regions)
            .map(|_| Vec::with_capacity(per_region))
            .collect();
        for (i, &pair) in batch.iter().enumerate() {
            for h in 0..link.hashes {
                let pos = link.position(pair, h);
                by_region[(pos >> REGION_SHIFT) as usize].push((pos, i as u32));
            }
        }
        let mut counted = vec![false; batch.len()];
        for region in &by_region {
            for &(pos, i) in region {
                if link.set_bit(pos) {
                    counted[i as usize] = true;
                }
            }
        }
        let new = counted.iter().filter(|&&c| c).count() as u64;
        link.items += new;
        self.items += new;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::Chain;

    fn pairs(chain: &Chain, n: usize, seed: u64) -> Vec<HashPair> {
        // Repeats among them: every 7th item is an earlier one again.
        (0..n as u64)
            .map(|i| {
                let v = if i % 7 == 3 { i / 2 } else { i };
                chain.hash(format!("{seed}:{v}").as_bytes())
            })
            .collect()
    }

    fn one_by_one(chain: &mut Chain, pairs: &[HashPair]) -> Result<(), (usize, AddOutcome)> {
        let mut at = 0;
        let mut refused = None;
        chain.add_each(pairs, u64::MAX, |o| {
            if matches!(o, AddOutcome::Added | AddOutcome::Exists) {
                at += 1;
                true
            } else {
                refused = Some((at, o));
                false
            }
        });
        refused.map_or(Ok(()), Err)
    }

    #[test]
    fn bulk_equals_one_by_one() {
        // (capacity, error, growth, scaling, blocked, items): a link with room for every
        // batch (several batches, a multi-region array); one that fills and grows midway;
        // a non-scaling one that fills; a blocked one; a tiny one.
        let cases = [
            (600_000, 0.01, 2, true, false, 600_000),
            (300_000, 0.001, 2, true, false, 700_000),
            (100_000, 0.05, 2, false, false, 150_000),
            (200_000, 0.01, 4, true, true, 300_000),
            (10, 0.01, 2, true, false, 1000),
        ];
        for (n, &(capacity, error, growth, scaling, blocked, items)) in cases.iter().enumerate() {
            let mut bulk =
                Chain::with_layout(capacity, error, growth, scaling, blocked, u64::MAX).unwrap();
            let mut single = bulk.clone();
            let input = pairs(&bulk, items, n as u64);
            let a = bulk.add_bulk(&input, u64::MAX);
            let b = one_by_one(&mut single, &input);
            assert_eq!(a, b, "case {n}");
            assert!(bulk == single, "case {n}: the filters differ");
        }
    }
}
