//! The scalable Bloom filter: a chain of links, each larger and tighter than the one
//! before (COMPAT §5.4).

use crate::bloom::link::{
    Link, LinkError, LinkShape, OPT_BLOCKED, OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING,
    POSITION_BUFFER,
};
use crate::hash::HashPair;
use crate::memory::Ceiling;

/// Size of RedisBloom's chain and link structs, which its memory figures count (COMPAT §4.5).
pub(crate) const CHAIN_OVERHEAD: u64 = 32;
pub(crate) const LINK_OVERHEAD: u64 = 64;

/// Batch commands work on groups of this many items: their positions are computed and their
/// cache lines requested first, so the memory latency of one item overlaps the others'.
const GROUP: usize = 16;
/// Positions a single add keeps on the stack for links of up to this many hashes (an
/// error rate down to 2^-16).
const SMALL_POSITION_BUFFER: usize = 16;

/// What adding an item did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// The item was new: at least one bit was clear.
    Added,
    /// The item (or a false positive) was already present.
    Exists,
    /// A non-scaling filter is at capacity.
    Full,
    /// A new link was needed and could not be made.
    GrowFailed(LinkError),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// Items added to the whole chain.
    pub(super) items: u64,
    /// Oldest first; never empty.
    pub(super) links: Vec<Link>,
    pub(super) options: u32,
    /// Capacity factor of each new link.
    pub(super) growth: u32,
    /// `mem_usage`, kept as links are added: every write command reads it twice (INFO
    /// totals), and summing the links each time cost ~5 % of a BF.ADD.
    mem: u64,
}

/// Requests the cache line of every item's block in a blocked link.
#[inline]
fn prefetch_blocks(link: &Link, pairs: &[HashPair]) {
    for &pair in pairs {
        link.prefetch_block(pair);
    }
}

/// The group after group `g` of `pairs` (empty after the last).
#[inline]
fn next_group(pairs: &[HashPair], g: usize) -> &[HashPair] {
    let start = ((g + 1) * GROUP).min(pairs.len());
    &pairs[start..(start + GROUP).min(pairs.len())]
}

impl Chain {
    /// A filter as BF.RESERVE / BF.ADD / BF.INSERT create it. A scaling filter's first link
    /// already gets half the requested error, so the chain's compound error stays under it.
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        Self::with_layout(capacity, error, growth, scaling, false, max_bytes)
    }

    /// [`Chain::new`], with the cache-local layout of every link when `blocked`.
    pub fn with_layout(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        blocked: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        let mut options = OPT_NOROUND | OPT_FORCE64;
        if blocked {
            options |= OPT_BLOCKED;
        }
        let mut link_error = error;
        if scaling {
            link_error *= 0.5;
        } else {
            options |= OPT_NO_SCALING;
        }
        let shape = LinkShape::for_chain(capacity, link_error, options)?;
        let link = Link::new(
            shape,
            max_bytes.saturating_sub(CHAIN_OVERHEAD + LINK_OVERHEAD),
        )?;
        Ok(Chain::from_parts(0, vec![link], options, growth))
    }

    /// A chain of these links (from a dump header or an RDB file).
    pub(crate) fn from_parts(items: u64, links: Vec<Link>, options: u32, growth: u32) -> Chain {
        let mem = links.iter().fold(CHAIN_OVERHEAD, |sum, link| {
            sum.saturating_add(LINK_OVERHEAD + link.bytes())
        });
        Chain {
            items,
            links,
            options,
            growth,
            mem,
        }
    }

    /// Items added to the whole chain (BF.CARD).
    #[inline]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The links, oldest first; never empty.
    #[inline]
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The option bits (`OPT_*` of [`super::link`]) stored in dumps and RDB files.
    #[inline]
    pub fn options(&self) -> u32 {
        self.options
    }

    /// Capacity factor of each new link (BF.INFO "Expansion rate").
    #[inline]
    pub fn growth(&self) -> u32 {
        self.growth
    }

    /// Whether every link has the cache-local layout.
    #[inline]
    pub fn is_blocked(&self) -> bool {
        self.options & OPT_BLOCKED != 0
    }

    #[inline]
    pub fn is_scaling(&self) -> bool {
        self.options & OPT_NO_SCALING == 0
    }

    #[inline]
    pub fn force64(&self) -> bool {
        self.options & OPT_FORCE64 != 0
    }

    /// The hash pair of an item for this chain's hash width.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> HashPair {
        HashPair::of(item, self.force64())
    }

    /// Whether any link holds the item.
    #[inline]
    pub fn contains(&self, pair: HashPair) -> bool {
        self.links.iter().any(|link| link.check(pair))
    }

    /// Adds an item; `max_bytes` caps the chain's memory (as counted by `mem_usage`)
    /// when a new link is needed.
    pub fn add(&mut self, pair: HashPair, max_bytes: impl Ceiling) -> AddOutcome {
        self.add_with(pair, None, max_bytes)
    }

    /// Adds an item whose positions in the newest link may already be known.
    fn add_with(
        &mut self,
        pair: HashPair,
        newest_positions: Option<&[u64]>,
        max_bytes: impl Ceiling,
    ) -> AddOutcome {
        if newest_positions.is_some() {
            return self.add_at(pair, newest_positions, max_bytes);
        }
        // Only set up when the positions are not known yet (batches compute them for a
        // whole group); a small buffer (128 bytes to zero) serves the usual hash counts,
        // the full one (512) the rest.
        let newest = self.links.last().expect("a chain always has a link");
        if newest.hashes as usize <= SMALL_POSITION_BUFFER {
            let mut buf = [0u64; SMALL_POSITION_BUFFER];
            let positions = newest.positions_prefetched_into(pair, &mut buf);
            return self.add_at(pair, positions, max_bytes);
        }
        let mut buf = [0u64; POSITION_BUFFER];
        let positions = newest.positions_prefetched_into(pair, &mut buf);
        self.add_at(pair, positions, max_bytes)
    }

    /// Adds an item, given its positions in the newest link where they fit the buffer.
    fn add_at(
        &mut self,
        pair: HashPair,
        positions: Option<&[u64]>,
        max_bytes: impl Ceiling,
    ) -> AddOutcome {
        let last = self.links.len() - 1;
        let newest = &self.links[last];
        let in_newest = match positions {
            Some(p) => newest.check_positions(p),
            None => newest.check(pair),
        };
        if in_newest || self.links[..last].iter().rev().any(|link| link.check(pair)) {
            return AddOutcome::Exists;
        }
        let newly = if newest.items >= newest.entries {
            if !self.is_scaling() {
                return AddOutcome::Full;
            }
            if let Err(e) = self.grow(max_bytes.limit_for(self.mem_usage())) {
                return AddOutcome::GrowFailed(e);
            }
            self.links.last_mut().expect("just grown").set(pair)
        } else {
            let newest = &mut self.links[last];
            match positions {
                Some(p) => newest.set_positions(p),
                None => newest.set(pair),
            }
        };
        if newly {
            let newest = self.links.last_mut().expect("a chain always has a link");
            newest.items += 1;
            self.items += 1;
            AddOutcome::Added
        } else {
            AddOutcome::Exists
        }
    }

    /// Adds items in order, exactly as one `add` after another, reporting each outcome to
    /// `emit` (which returns false to stop). Each group's positions in the newest link are
    /// computed and their cache lines requested before the first of them is added, so the
    /// memory latency of large filters overlaps.
    pub fn add_each(
        &mut self,
        pairs: &[HashPair],
        max_bytes: impl Ceiling,
        mut emit: impl FnMut(AddOutcome) -> bool,
    ) {
        let mut positions = Vec::new();
        if let Some(newest) = self.links.last().filter(|link| link.blocked) {
            prefetch_blocks(newest, pairs.chunks(GROUP).next().unwrap_or_default());
        }
        for (g, group) in pairs.chunks(GROUP).enumerate() {
            let links_before = self.links.len();
            let newest = self.links.last().expect("a chain always has a link");
            let k = newest.hashes as usize;
            positions.clear();
            if newest.blocked {
                // This group's lines were requested one group ago; request the next
                // group's now, so they arrive while this one is added.
                prefetch_blocks(newest, next_group(pairs, g));
            }
            for &pair in group {
                newest.push_positions_prefetched(pair, &mut positions);
            }
            for (j, &pair) in group.iter().enumerate() {
                // Positions computed for a link that is no longer the newest are not used.
                let known =
                    (self.links.len() == links_before).then(|| &positions[j * k..(j + 1) * k]);
                if !emit(self.add_with(pair, known, &max_bytes)) {
                    return;
                }
            }
        }
    }

    /// Membership of many items, reported in order to `emit`. Links are searched newest
    /// first, each only for the items of the group not yet found. A link larger than the
    /// caches first gets every waiting item's cache lines requested (a prefetch: its
    /// positions in a classic link, its block in a blocked one), so the misses overlap;
    /// then the items are checked, a clear bit ending an item's check. A cache-resident
    /// link is checked bit by bit straight away.
    pub fn contains_each(&self, pairs: &[HashPair], mut emit: impl FnMut(bool)) {
        let mut found = [false; GROUP];
        for group in pairs.chunks(GROUP) {
            let found = &mut found[..group.len()];
            found.fill(false);
            for link in self.links.iter().rev() {
                if !link.is_cache_resident() {
                    // Every waiting item's lines requested (a blocked item's one block, a
                    // classic item's positions, computed again for the check: cheaper
                    // than keeping them), then each checked.
                    for (hit, &pair) in found.iter().zip(group) {
                        if !hit {
                            if link.blocked {
                                link.prefetch_block(pair);
                            } else {
                                link.prefetch_positions(pair);
                            }
                        }
                    }
                }
                for (hit, &pair) in found.iter_mut().zip(group) {
                    *hit = *hit || link.check_bit_by_bit(pair);
                }
                if found.iter().all(|&hit| hit) {
                    break;
                }
            }
            found.iter().for_each(|&hit| emit(hit));
        }
    }

    /// Appends a link `growth` times larger with half the error of the newest one — for a
    /// blocked chain, the newest one's error once half of it is below the lowest rate the
    /// layout reaches (~1.01e-17), so that it scales as far as a classic chain does.
    fn grow(&mut self, max_bytes: u64) -> Result<(), LinkError> {
        let newest = self.links.last().expect("a chain always has a link");
        let entries = newest.entries.wrapping_mul(u64::from(self.growth));
        let shape = match LinkShape::for_chain(entries, newest.error * 0.5, self.options) {
            Err(LinkError::Invalid) if self.is_blocked() => {
                LinkShape::for_chain(entries, newest.error, self.options)
            }
            shape => shape,
        }?;
        let room = max_bytes.saturating_sub(self.mem_usage() + LINK_OVERHEAD);
        self.links
            .try_reserve(1)
            .map_err(|_| LinkError::OutOfMemory)?;
        let link = Link::new(shape, room)?;
        self.mem = self.mem.saturating_add(LINK_OVERHEAD + link.bytes());
        self.links.push(link);
        Ok(())
    }

    /// A deep copy, or `None` if memory cannot be had (COPY of a large filter).
    pub fn try_clone(&self) -> Option<Chain> {
        let mut links = Vec::new();
        links.try_reserve_exact(self.links.len()).ok()?;
        for link in &self.links {
            links.push(link.try_clone()?);
        }
        Some(Chain { links, ..*self })
    }

    /// Total capacity of all links (BF.INFO "Capacity").
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, link| sum.wrapping_add(link.entries))
    }

    /// RedisBloom's memory figure (BF.INFO "Size", MEMORY USAGE): struct sizes plus bit arrays.
    #[inline]
    pub fn mem_usage(&self) -> u64 {
        self.mem
    }

    /// Checks a chain assembled from outside data (RDB file, dump header): every link usable.
    pub fn links_are_consistent(&self) -> bool {
        !self.links.is_empty() && self.links.iter().all(Link::is_consistent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_str(chain: &mut Chain, item: &str) -> AddOutcome {
        let pair = chain.hash(item.as_bytes());
        chain.add(pair, u64::MAX)
    }

    fn shape_of(chain: &Chain) -> Vec<(u64, u64, u32, u64, u64, f64)> {
        chain
            .links
            .iter()
            .map(|l| (l.bytes(), l.bits, l.hashes, l.entries, l.items, l.error))
            .collect()
    }

    #[test]
    fn four_link_chain_of_compat() {
        let mut chain = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..100 {
            add_str(&mut chain, &i.to_string());
        }
        assert_eq!(chain.items, 99);
        assert_eq!(
            shape_of(&chain),
            vec![
                (16, 128, 8, 10, 10, 0.005),
                (32, 256, 9, 20, 20, 0.0025),
                (72, 576, 10, 40, 40, 0.00125),
                (160, 1280, 11, 80, 29, 0.000625),
            ]
        );
    }

    #[test]
    fn six_link_chain_of_compat() {
        let mut chain = Chain::new(100, 0.001, 2, true, u64::MAX).unwrap();
        for i in 0..4000 {
            add_str(&mut chain, &i.to_string());
        }
        assert_eq!(chain.items, 3997);
        assert_eq!(
            shape_of(&chain),
            vec![
                (200, 1600, 11, 100, 100, 0.0005),
                (432, 3456, 12, 200, 200, 0.00025),
                (936, 7488, 13, 400, 400, 0.000125),
                (2016, 16128, 14, 800, 800, 6.25e-05),
                (4320, 34560, 15, 1600, 1600, 3.125e-05),
                (9216, 73728, 16, 3200, 897, 1.5625e-05),
            ]
        );
    }

    #[test]
    fn expansion_link_counts_of_compat() {
        for (growth, links) in [(1, 23), (2, 5), (4, 4)] {
            let mut chain = Chain::new(4, 0.01, growth, true, u64::MAX).unwrap();
            for i in 0..100 {
                add_str(&mut chain, &i.to_string());
            }
            assert_eq!(chain.links.len(), links, "growth {growth}");
            for i in 0..100 {
                assert!(chain.contains(chain.hash(i.to_string().as_bytes())));
            }
        }
    }

    #[test]
    fn mem_usage_examples_of_compat() {
        for (error, capacity, scaling, size) in [
            (0.001, 100, true, 296),
            (0.01, 100, true, 240),
            (0.05, 1000, true, 1056),
            (0.01, 3, false, 104),
            (0.000001, 300_000_000, true, 1_132_420_232),
        ] {
            let chain = Chain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
            assert_eq!(chain.mem_usage(), size, "{error}/{capacity}");
        }
    }

    #[test]
    fn non_scaling_filter_fills_up() {
        let mut chain = Chain::new(3, 0.01, 2, false, u64::MAX).unwrap();
        assert_eq!(chain.options, 13);
        for item in ["a", "b", "c"] {
            assert_eq!(add_str(&mut chain, item), AddOutcome::Added);
        }
        assert_eq!(add_str(&mut chain, "d"), AddOutcome::Full);
        assert_eq!(add_str(&mut chain, "a"), AddOutcome::Exists);
        assert_eq!(chain.items, 3);
    }

    #[test]
    fn growth_zero_fails_to_scale_without_losing_items() {
        let mut chain = Chain::new(2, 0.01, 0, true, u64::MAX).unwrap();
        assert_eq!(add_str(&mut chain, "a"), AddOutcome::Added);
        assert_eq!(add_str(&mut chain, "b"), AddOutcome::Added);
        assert_eq!(
            add_str(&mut chain, "c"),
            AddOutcome::GrowFailed(LinkError::Invalid)
        );
        assert_eq!(chain.links.len(), 1);
        assert_eq!(chain.items, 2);
    }

    #[test]
    fn ceiling_stops_growth() {
        let mut chain = Chain::new(100, 0.01, 2, true, 1000).unwrap();
        let mut outcome = AddOutcome::Added;
        for i in 0..400 {
            let pair = chain.hash(i.to_string().as_bytes());
            outcome = chain.add(pair, 1000);
            if matches!(outcome, AddOutcome::GrowFailed(_)) {
                break;
            }
        }
        assert_eq!(outcome, AddOutcome::GrowFailed(LinkError::TooLarge));
        assert!(chain.mem_usage() <= 1000);
        assert_eq!(
            Chain::new(100, 0.01, 2, true, 200),
            Err(LinkError::TooLarge)
        );
    }

    proptest::proptest! {
        /// The batch paths are exactly one `add`/`contains` after another: same outcomes
        /// (growth, fullness and duplicates within a batch included), same bytes.
        #[test]
        fn batches_equal_sequential_calls(
            items in proptest::collection::vec(0u16..400, 0..300),
            capacity in 1u64..40,
            growth in 0u32..3,
            scaling: bool,
            stop_on_full: bool,
        ) {
            let mut one = Chain::new(capacity, 0.01, growth, scaling, u64::MAX).unwrap();
            let mut many = one.clone();
            let pairs: Vec<HashPair> = items.iter().map(|i| one.hash(&i.to_le_bytes())).collect();
            let mut expected = Vec::new();
            for &pair in &pairs {
                let outcome = one.add(pair, 4096);
                expected.push(outcome);
                if stop_on_full && outcome == AddOutcome::Full {
                    break;
                }
            }
            let mut got = Vec::new();
            many.add_each(&pairs, 4096, |outcome| {
                got.push(outcome);
                !(stop_on_full && outcome == AddOutcome::Full)
            });
            proptest::prop_assert_eq!(&got, &expected);
            proptest::prop_assert_eq!(&many, &one);
            let probes: Vec<HashPair> = (0u16..600).map(|i| one.hash(&i.to_le_bytes())).collect();
            let mut found = Vec::new();
            many.contains_each(&probes, |hit| found.push(hit));
            let expected: Vec<bool> = probes.iter().map(|&p| one.contains(p)).collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }

    /// The batch paths of links larger than the caches (positions computed and lines
    /// requested a group at a time, the next group's blocks requested early in the blocked
    /// layout) equal one call after another, across a link being added mid-batch.
    #[test]
    fn large_link_batches_equal_sequential_calls() {
        for blocked in [false, true] {
            let mut one = Chain::with_layout(1_000_000, 0.01, 2, true, blocked, u64::MAX).unwrap();
            assert!(!one.links()[0].is_cache_resident());
            let mut many = one.clone();
            let pairs: Vec<HashPair> = (0u32..1_050_000)
                .map(|i| one.hash(&(i % 1_040_000).to_le_bytes()))
                .collect();
            let expected: Vec<AddOutcome> = pairs.iter().map(|&p| one.add(p, u64::MAX)).collect();
            let mut got = Vec::new();
            for batch in pairs.chunks(100) {
                many.add_each(batch, u64::MAX, |outcome| {
                    got.push(outcome);
                    true
                });
            }
            assert_eq!(got, expected, "blocked: {blocked}");
            assert_eq!(many.links().len(), 2);
            assert!(many == one, "blocked: {blocked}");
            let probes: Vec<HashPair> = (1_000_000u32..1_100_000)
                .map(|i| one.hash(&i.to_le_bytes()))
                .collect();
            let mut found = Vec::new();
            for batch in probes.chunks(100) {
                many.contains_each(batch, |hit| found.push(hit));
            }
            let expected: Vec<bool> = probes.iter().map(|&p| one.contains(p)).collect();
            assert_eq!(found, expected, "blocked: {blocked}");
            assert!(found[..40_000].iter().all(|&hit| hit));
        }
    }

    #[test]
    fn error_underflow_ends_scaling_cleanly() {
        // capacity 1, growth 1: the error halves every link until it underflows to 0.
        let mut chain = Chain::new(1, 0.0001, 1, true, u64::MAX).unwrap();
        let mut failed = false;
        for i in 0..5001 {
            if let AddOutcome::GrowFailed(e) = add_str(&mut chain, &i.to_string()) {
                assert_eq!(e, LinkError::Invalid);
                failed = true;
                break;
            }
        }
        assert!(failed);
        assert!((1000..1100).contains(&chain.links.len()));
    }
}
