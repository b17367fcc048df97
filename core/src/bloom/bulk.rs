//! Adding many items to a filter on several threads, with exactly the result — bits, counts,
//! links — of [`Chain::add`] called item after item (what `redbloom load` builds, byte for
//! byte the filter BF.MADD makes of the same items in the same order).
//!
//! The newest link's bit array is cut into one contiguous range per thread. Every thread
//! goes through the items in order, computes each item's positions and sets those in its
//! range, noting the items that found one of them clear. In each range the items come in
//! order, so an item found a clear bit in some range exactly when, added alone after the
//! items before it, it would have found one: it is new (BF.MADD's 1) and counted. That holds
//! while no link is added, so a run takes at most as many items as the newest link has room
//! for; the rest (older links to check, a blocked link, the last items before the link
//! fills) go through [`Chain::add_each`].

use crate::bloom::chain::{AddOutcome, Chain};
use crate::bloom::link::{Link, CACHE_RESIDENT_BYTES};
use crate::hash::HashPair;
use crate::memory::prefetch;
use crate::memory::Ceiling;
use std::num::NonZeroUsize;

/// Items hashed and added per run at most (their hash pairs take 16 bytes each).
const RUN: usize = 1 << 20;
/// Fewer items than this are left to `add_each` (a run's threads cost more than they gain).
const MIN_RUN: usize = if cfg!(test) { 64 } else { 4096 };
/// The smallest bit array worth threads: a cache-resident one is fast on one.
const MIN_BYTES: usize = if cfg!(test) { 64 } else { CACHE_RESIDENT_BYTES };
/// Items whose positions a thread computes, and whose cache lines it requests, ahead of the
/// item it is setting.
const AHEAD: usize = 8;

impl Chain {
    /// Adds `items` in order on up to `threads` threads: the same filter as
    /// [`Chain::add`] of one item after another. Stops at the first item `add` would refuse
    /// (a full non-scaling filter, a link that cannot be made), reporting its index and
    /// outcome; the items before it are added.
    pub fn add_items<T: AsRef<[u8]> + Sync>(
        &mut self,
        items: &[T],
        threads: NonZeroUsize,
        max_bytes: impl Ceiling,
    ) -> Result<(), (usize, AddOutcome)> {
        let mut pairs = Vec::new();
        let mut at = 0;
        while at < items.len() {
            let left = items.len() - at;
            let run = self.parallel_room(threads).min(left).min(RUN);
            let take = if run >= MIN_RUN {
                run
            } else {
                left.min(MIN_RUN)
            };
            pairs.clear();
            pairs.resize(take, HashPair { a: 0, b: 0 });
            hash_into(&items[at..at + take], &mut pairs, threads, self.force64());
            if run >= MIN_RUN {
                self.add_run(&pairs, threads);
            } else if !self.add_in_room(&pairs) {
                self.add_one_by_one(&pairs, at, &max_bytes)?;
            }
            at += take;
        }
        Ok(())
    }

    /// How many items a run may add on threads: the newest link's room when it is the only
    /// link, classic and large; otherwise 0.
    fn parallel_room(&self, threads: NonZeroUsize) -> usize {
        match self.links.as_slice() {
            [link]
                if threads.get() > 1
                    && !link.blocked
                    && link.hashes > 0
                    && link.data.len() >= MIN_BYTES =>
            {
                usize::try_from(link.entries.saturating_sub(link.items)).unwrap_or(usize::MAX)
            }
            _ => 0,
        }
    }

    /// Adds `pairs` to the chain's only link when it has room for all of them (so no link
    /// is added meanwhile): each item's bits set in one pass, the item new when one was
    /// clear — what `add` does item after item then — with the cache lines of the item
    /// [`AHEAD`] requested first in a link larger than the caches. False, and nothing
    /// done, otherwise.
    fn add_in_room(&mut self, pairs: &[HashPair]) -> bool {
        let [link] = self.links.as_mut_slice() else {
            return false;
        };
        if link.entries.saturating_sub(link.items) < pairs.len() as u64 {
            return false;
        }
        let mut added = 0;
        if link.blocked || link.is_cache_resident() {
            // A blocked item's bits share one cache line; a small link is in the caches.
            for (j, &pair) in pairs.iter().enumerate() {
                if let Some(&next) = pairs.get(j + AHEAD).filter(|_| link.blocked) {
                    link.prefetch_block(next);
                }
                added += u64::from(link.set(pair));
            }
        } else {
            // The positions of the next AHEAD items, computed (and their lines requested)
            // once, in a ring of AHEAD slots.
            let k = link.hashes as usize;
            let mut ring = Vec::with_capacity(AHEAD * k);
            for &pair in pairs.iter().take(AHEAD) {
                link.push_positions_prefetched(pair, &mut ring);
            }
            for j in 0..pairs.len() {
                let slot = (j % AHEAD) * k..(j % AHEAD + 1) * k;
                added += u64::from(link.set_positions(&ring[slot.clone()]));
                if let Some(&next) = pairs.get(j + AHEAD) {
                    for (i, at) in ring[slot].iter_mut().enumerate() {
                        *at = link.position(next, i as u32);
                        prefetch(&link.data, (*at >> 3) as usize);
                    }
                }
            }
        }
        link.items += added;
        self.items += added;
        true
    }

    /// `add_each` of the pairs of items `first..`, stopping at the first refusal.
    fn add_one_by_one(
        &mut self,
        pairs: &[HashPair],
        first: usize,
        max_bytes: impl Ceiling,
    ) -> Result<(), (usize, AddOutcome)> {
        let mut refused = None;
        let mut at = first;
        self.add_each(pairs, max_bytes, |outcome| {
            if !matches!(outcome, AddOutcome::Added | AddOutcome::Exists) {
                refused = Some((at, outcome));
            }
            at += 1;
            refused.is_none()
        });
        refused.map_or(Ok(()), Err)
    }

    /// Adds at most the only link's room of pairs, one bit range per thread.
    fn add_run(&mut self, pairs: &[HashPair], threads: NonZeroUsize) {
        let link = &mut self.links[0];
        let mut data = std::mem::take(&mut link.data);
        let span = data.len().div_ceil(threads.get());
        let words = pairs.len().div_ceil(64);
        let shape: &Link = link;
        let found_clear: Vec<Vec<u64>> = std::thread::scope(|scope| {
            let workers: Vec<_> = data
                .chunks_mut(span)
                .enumerate()
                .map(|(t, range)| {
                    scope.spawn(move || set_in_range(shape, pairs, range, t * span, words))
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("a bulk-add thread does not panic"))
                .collect()
        });
        link.data = data;
        // The threads set bits in ranges of their own; one sequential count after them
        // costs less than a shared tally would.
        link.recount();
        let added: u64 = (0..words)
            .map(|w| u64::from(found_clear.iter().fold(0, |or, f| or | f[w]).count_ones()))
            .sum();
        link.items += added;
        self.items += added;
    }
}

/// The hash pairs of `items`, on up to `threads` threads.
fn hash_into<T: AsRef<[u8]> + Sync>(
    items: &[T],
    out: &mut [HashPair],
    threads: NonZeroUsize,
    force64: bool,
) {
    let hash = |items: &[T], out: &mut [HashPair]| {
        for (pair, item) in out.iter_mut().zip(items) {
            *pair = HashPair::of(item.as_ref(), force64);
        }
    };
    if threads.get() == 1 || items.len() < MIN_RUN {
        return hash(items, out);
    }
    let per = items.len().div_ceil(threads.get());
    std::thread::scope(|scope| {
        for (out, items) in out.chunks_mut(per).zip(items.chunks(per)) {
            scope.spawn(move || hash(items, out));
        }
    });
}

/// Sets, item after item, the positions that fall in `range` (the link's bytes from
/// `base`). Returns one bit per item: whether it found one of them clear.
///
/// About half an item's positions fall in another thread's range. Rather than branch on
/// each (a coin toss the CPU cannot predict), every position is visited, and one outside
/// the range reads and writes back, unchanged, a byte of the range (`spare`, a different
/// one per hash so they do not wait on each other).
fn set_in_range(
    link: &Link,
    pairs: &[HashPair],
    range: &mut [u8],
    base: usize,
    words: usize,
) -> Vec<u64> {
    let k = link.hashes as usize;
    let low = (base as u64) << 3;
    let bits = (range.len() as u64) << 3;
    let spare: Vec<usize> = (0..k).map(|i| i.min(range.len() - 1)).collect();
    // Where each position of the next AHEAD items falls: (byte in the range or its spare,
    // bit mask, 0 when outside).
    let mut ahead = vec![(0usize, 0u8); AHEAD * k];
    let look_ahead = |j: usize, ahead: &mut [(usize, u8)], range: &[u8]| {
        let slot = &mut ahead[(j % AHEAD) * k..][..k];
        for (i, (at, &spare)) in slot.iter_mut().zip(&spare).enumerate() {
            let offset = link.position(pairs[j], i as u32).wrapping_sub(low);
            let inside = offset < bits;
            *at = if inside {
                ((offset >> 3) as usize, 1 << (offset & 7))
            } else {
                (spare, 0)
            };
            prefetch(range, at.0);
        }
    };
    let mut found_clear = vec![0u64; words];
    for j in 0..pairs.len().min(AHEAD) {
        look_ahead(j, &mut ahead, range);
    }
    for j in 0..pairs.len() {
        let mut clear = false;
        for &(at, mask) in &ahead[(j % AHEAD) * k..][..k] {
            let byte = &mut range[at];
            clear |= *byte & mask != mask;
            *byte |= mask;
        }
        found_clear[j >> 6] |= u64::from(clear) << (j & 63);
        if j + AHEAD < pairs.len() {
            look_ahead(j + AHEAD, &mut ahead, range);
        }
    }
    found_clear
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::link::LinkError;

    fn one_by_one(chain: &mut Chain, items: &[Vec<u8>]) -> Result<(), (usize, AddOutcome)> {
        for (at, item) in items.iter().enumerate() {
            match chain.add(chain.hash(item), u64::MAX) {
                AddOutcome::Added | AddOutcome::Exists => {}
                other => return Err((at, other)),
            }
        }
        Ok(())
    }

    fn items(n: usize, distinct: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("i{}", i % distinct).into_bytes())
            .collect()
    }

    fn threads(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    /// Every shape, item count and thread count gives the chain `add` makes, item by item.
    #[test]
    fn equals_adding_one_by_one() {
        for (capacity, error, growth, scaling) in [
            (3000, 0.01, 2, true),
            (2000, 0.001, 4, true),
            (5000, 0.3, 1, true),
            (1000, 0.0001, 2, true),
            (500, 1e-15, 2, true),
            (4000, 0.05, 2, false),
        ] {
            let n_capacity = capacity as usize;
            // Fewer items than the capacity, as many, a few more (the chain grows), many more;
            // repeats among them (items already present).
            for (n, distinct) in [
                (500, 500),
                (3000, 2000),
                (n_capacity, n_capacity),
                (9000, 7000),
            ] {
                let items = items(n, distinct);
                let mut want = Chain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
                let want_result = one_by_one(&mut want, &items);
                for t in [1, 2, 3, 8] {
                    let mut got = Chain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
                    let result = got.add_items(&items, threads(t), u64::MAX);
                    assert_eq!(result, want_result, "{capacity}/{error}/{n}/{t}");
                    assert!(
                        got == want,
                        "{capacity}/{error}/{growth}/{scaling} {n} items, {t} threads"
                    );
                }
            }
        }
    }

    /// A chain that already has items, or several links, goes on as `add` would.
    #[test]
    fn continues_a_used_chain() {
        let first = items(2500, 2500);
        let more: Vec<Vec<u8>> = (0..4000).map(|i| format!("more{i}").into_bytes()).collect();
        let mut want = Chain::new(2000, 0.01, 2, true, u64::MAX).unwrap();
        one_by_one(&mut want, &first).unwrap();
        let mut got = want.clone();
        one_by_one(&mut want, &more).unwrap();
        got.add_items(&more, threads(2), u64::MAX).unwrap();
        assert!(got == want);
        let mut want = Chain::new(20_000, 0.01, 2, true, u64::MAX).unwrap();
        one_by_one(&mut want, &first[..100]).unwrap();
        let mut got = want.clone();
        one_by_one(&mut want, &more).unwrap();
        got.add_items(&more, threads(4), u64::MAX).unwrap();
        assert!(got == want);
    }

    /// A link that cannot be made stops the adding where `add` stops.
    #[test]
    fn stops_where_add_refuses() {
        let items = items(6000, 6000);
        let ceiling = Chain::new(2000, 0.01, 2, true, u64::MAX)
            .unwrap()
            .mem_usage()
            + 100;
        let mut want = Chain::new(2000, 0.01, 2, true, u64::MAX).unwrap();
        let mut refused = None;
        for (at, item) in items.iter().enumerate() {
            let outcome = want.add(want.hash(item), ceiling);
            if !matches!(outcome, AddOutcome::Added | AddOutcome::Exists) {
                refused = Some((at, outcome));
                break;
            }
        }
        let (at, outcome) = refused.unwrap();
        assert_eq!(outcome, AddOutcome::GrowFailed(LinkError::TooLarge));
        let mut got = Chain::new(2000, 0.01, 2, true, u64::MAX).unwrap();
        assert_eq!(
            got.add_items(&items, threads(2), ceiling),
            Err((at, outcome))
        );
        assert!(got == want);
    }

    /// A blocked chain takes the one-by-one path, unchanged.
    #[test]
    fn other_layouts_equal_adding_one_by_one() {
        let items = items(3000, 2500);
        let mut want = Chain::with_layout(2000, 0.01, 2, true, true, u64::MAX).unwrap();
        one_by_one(&mut want, &items).unwrap();
        let mut got = Chain::with_layout(2000, 0.01, 2, true, true, u64::MAX).unwrap();
        got.add_items(&items, threads(2), u64::MAX).unwrap();
        assert!(got == want);
    }

    /// Batches into the room of a link larger than the caches (its positions computed ahead
    /// in a ring), classic and blocked, on one thread: the chain `add` makes item by item,
    /// repeats counted once, and past the room (the chain grows) too.
    #[test]
    fn batches_in_a_large_links_room_equal_adding_one_by_one() {
        let items = items(30_000, 20_000);
        for blocked in [false, true] {
            let mut want = Chain::with_layout(1_000_000, 0.01, 2, true, blocked, u64::MAX).unwrap();
            assert!(!want.links[0].is_cache_resident());
            one_by_one(&mut want, &items).unwrap();
            let mut got = Chain::with_layout(1_000_000, 0.01, 2, true, blocked, u64::MAX).unwrap();
            for batch in items.chunks(1000) {
                got.add_items(batch, threads(1), u64::MAX).unwrap();
            }
            assert!(got == want, "blocked: {blocked}");
        }
        let mut want = Chain::new(1500, 0.01, 2, true, u64::MAX).unwrap();
        one_by_one(&mut want, &items[..5000]).unwrap();
        let mut got = Chain::new(1500, 0.01, 2, true, u64::MAX).unwrap();
        for batch in items[..5000].chunks(1000) {
            got.add_items(batch, threads(1), u64::MAX).unwrap();
        }
        assert!(got == want && got.links.len() > 1);
    }
}
