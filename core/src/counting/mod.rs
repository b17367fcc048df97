//! The counting Bloom filter (CBF.*): a scalable Bloom chain whose bits are 4-bit saturating
//! counters, so items can be deleted and their multiplicity estimated.
//!
//! A counting link is sized exactly like a Bloom link ([`LinkShape::new`]: same bits, hashes,
//! bits per entry) and addresses its counters with the same positions `(a + i·b) mod M`
//! (M = the counter count; counting links are always NOROUND-sized, so n2 is 0). Each bit
//! becomes a 4-bit counter: two per byte, counter `p` in byte `p / 2`, the low nibble when
//! `p` is even. The chain grows like [`super::chain::Chain`]: a scaling filter's first link
//! gets half the requested error, each new link `growth` times the capacity and half the
//! error of the newest one.
//!
//! **Which link holds an item.** An item may test positive in a link it was never added to
//! (a false positive); decrementing that link would take counters away from other items and
//! create false negatives. So ADD increments the newest link in which the item already tests
//! positive (else the newest link, growing first if it is full), and DELETE decrements only
//! when exactly one link tests positive — then every copy of the item is in that link. With
//! these rules no sequence of adds and deletes of added items produces a false negative.
//! Deleting an item that was never added is the caller's error.

pub mod dump;

use crate::bloom::link::{
    fields_are_consistent, LinkError, LinkShape, OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING,
};
use crate::hash::HashPair;

/// A counter at this value is saturated: it is never incremented nor decremented again.
pub const COUNTER_MAX: u8 = 15;

/// The memory figure's fixed parts (CBF.INFO "Size", MEMORY USAGE), chosen like BF's:
/// a 32-byte filter header plus 64 bytes per link, plus the counter arrays.
pub const CBF_OVERHEAD: u64 = 32;
pub const CBF_LINK_OVERHEAD: u64 = 64;

/// Largest growth factor a counting filter accepts (the range of the EXPANSION option).
pub const MAX_GROWTH: u32 = 32768;

/// Options of a scaling and of a non-scaling counting filter (64-bit hashes, exact sizing).
pub const SCALING_OPTIONS: u32 = OPT_NOROUND | OPT_FORCE64;
pub const NON_SCALING_OPTIONS: u32 = OPT_NOROUND | OPT_FORCE64 | OPT_NO_SCALING;

/// What adding an item did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountingAdd {
    /// The item's counters were incremented (every add counts: multiset semantics).
    Added,
    /// A non-scaling filter is at capacity and the item tests positive in no link.
    Full,
    /// A new link was needed and could not be made; nothing changed.
    GrowFailed(LinkError),
}

/// One sub-filter: a Bloom link's shape with a counter per bit.
#[derive(Clone, Debug, PartialEq)]
pub struct CountingLink {
    /// Capacity in items.
    pub entries: u64,
    pub error: f64,
    /// Bits (here: counters) per entry: −ln(error)/ln²2.
    pub bpe: f64,
    pub hashes: u32,
    /// Number of counters, the Bloom link's bit count; always `2 × counters.len()`.
    pub bits: u64,
    /// Adds into this link minus successful deletes from it.
    pub items: u64,
    /// Two 4-bit counters per byte.
    pub counters: Vec<u8>,
}

impl CountingLink {
    /// A new link of `shape` with all counters zero; refuses a counter array larger than
    /// `max_bytes`.
    pub fn new(shape: LinkShape, max_bytes: u64) -> Result<Self, LinkError> {
        let bytes = counter_bytes(shape.bits).ok_or(LinkError::Invalid)?;
        if bytes > max_bytes {
            return Err(LinkError::TooLarge);
        }
        let counters = crate::zeroed_bytes(bytes).map_err(|_| LinkError::OutOfMemory)?;
        Ok(CountingLink {
            entries: shape.entries,
            error: shape.error,
            bpe: shape.bpe,
            hashes: shape.hashes,
            bits: shape.bits,
            items: 0,
            counters,
        })
    }

    /// Bytes of the counter array (4 × the Bloom link's bytes).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.counters.len() as u64
    }

    /// The `i`-th counter position of an item (the Bloom link's bit position).
    #[inline]
    fn position(&self, pair: HashPair, i: u32) -> u64 {
        pair.a.wrapping_add(u64::from(i).wrapping_mul(pair.b)) % self.bits
    }

    /// Counter positions of an item, in hash order.
    pub fn positions(&self, pair: HashPair) -> impl Iterator<Item = u64> + '_ {
        (0..self.hashes).map(move |i| self.position(pair, i))
    }

    /// The counter at `pos`.
    #[inline]
    pub fn counter(&self, pos: u64) -> u8 {
        (self.counters[(pos >> 1) as usize] >> ((pos & 1) * 4)) & 0x0f
    }

    /// Whether every counter of the item is non-zero.
    #[inline]
    pub fn check(&self, pair: HashPair) -> bool {
        self.positions(pair).all(|pos| self.counter(pos) != 0)
    }

    /// The smallest of the item's counters: how many times it may be in this link.
    #[inline]
    pub fn min_counter(&self, pair: HashPair) -> u8 {
        self.positions(pair)
            .map(|pos| self.counter(pos))
            .min()
            .unwrap_or(0)
    }

    /// Adds one to each of the item's counters (a position repeated among the k counts
    /// once per occurrence); a counter at 15 stays 15.
    #[inline]
    fn increment(&mut self, pair: HashPair) {
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            let shift = (pos & 1) * 4;
            let byte = &mut self.counters[(pos >> 1) as usize];
            if (*byte >> shift) & 0x0f < COUNTER_MAX {
                *byte += 1 << shift;
            }
        }
    }

    /// Takes one from each of the item's counters, except saturated ones (and, defensively,
    /// counters already at zero).
    #[inline]
    fn decrement(&mut self, pair: HashPair) {
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            let shift = (pos & 1) * 4;
            let byte = &mut self.counters[(pos >> 1) as usize];
            let value = (*byte >> shift) & 0x0f;
            if value != 0 && value != COUNTER_MAX {
                *byte -= 1 << shift;
            }
        }
    }

    /// Whether any counter is saturated (then counts may fall short of the truth).
    pub fn has_saturated_counter(&self) -> bool {
        self.counters
            .iter()
            .any(|&b| b & 0x0f == COUNTER_MAX || b >> 4 == COUNTER_MAX)
    }

    /// Whether link fields from outside (a dump header, an RDB file) describe exactly the
    /// link this code would make for (`entries`, `error`) with `options`, and its counter
    /// array is exactly `bytes` long — so no position can fall outside the counters and
    /// every add or check does a bounded amount of work.
    pub fn fields_are_valid(
        entries: u64,
        error: f64,
        bpe: f64,
        hashes: u32,
        bits: u64,
        bytes: u64,
        options: u32,
    ) -> bool {
        bits % 64 == 0
            && counter_bytes(bits) == Some(bytes)
            && fields_are_consistent(error, bpe, hashes, bits, bits / 8, 0)
            && LinkShape::new(entries, error, options).is_ok_and(|shape| {
                shape.bits == bits
                    && shape.hashes == hashes
                    && shape.bpe.to_bits() == bpe.to_bits()
                    && shape.entries == entries
            })
    }

    /// [`Self::fields_are_valid`] for a link already assembled.
    pub fn is_valid(&self, options: u32) -> bool {
        Self::fields_are_valid(
            self.entries,
            self.error,
            self.bpe,
            self.hashes,
            self.bits,
            self.bytes(),
            options,
        )
    }

    /// A copy, or `None` when the allocator refuses the counter array.
    pub fn try_clone(&self) -> Option<Self> {
        let counters = crate::sparse_copy(&self.counters).ok()?;
        Some(CountingLink {
            entries: self.entries,
            error: self.error,
            bpe: self.bpe,
            hashes: self.hashes,
            bits: self.bits,
            items: self.items,
            counters,
        })
    }
}

/// Bytes of a counter array for `bits` counters (two per byte), if `bits` is even.
#[inline]
pub fn counter_bytes(bits: u64) -> Option<u64> {
    (bits % 2 == 0).then_some(bits / 2)
}

/// The scalable counting filter: links oldest first, never empty.
#[derive(Clone, Debug, PartialEq)]
pub struct CountingChain {
    /// Every add counts one, every successful delete takes one (CBF.CARD); always the sum
    /// of the links' item counts.
    pub items: u64,
    pub links: Vec<CountingLink>,
    /// [`SCALING_OPTIONS`] or [`NON_SCALING_OPTIONS`].
    pub options: u32,
    /// Capacity factor of each new link.
    pub growth: u32,
}

impl CountingChain {
    /// A filter as CBF.RESERVE / CBF.ADD / CBF.INSERT create it: the same first link as
    /// `Chain::new` makes for these parameters, with counters. `max_bytes` caps the
    /// filter's memory as [`Self::mem_usage`] counts it.
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        let (options, link_error) = if scaling {
            (SCALING_OPTIONS, error * 0.5)
        } else {
            (NON_SCALING_OPTIONS, error)
        };
        let shape = LinkShape::new(capacity, link_error, options)?;
        let link = CountingLink::new(
            shape,
            max_bytes.saturating_sub(CBF_OVERHEAD + CBF_LINK_OVERHEAD),
        )?;
        let mut links = Vec::new();
        links.try_reserve(1).map_err(|_| LinkError::OutOfMemory)?;
        links.push(link);
        Ok(CountingChain {
            items: 0,
            links,
            options,
            growth,
        })
    }

    #[inline]
    pub fn is_scaling(&self) -> bool {
        self.options & OPT_NO_SCALING == 0
    }

    /// The hash pair of an item (always the 64-bit pair).
    #[inline]
    pub fn hash(&self, item: &[u8]) -> HashPair {
        HashPair::wide(item)
    }

    /// Whether any link holds the item.
    #[inline]
    pub fn contains(&self, pair: HashPair) -> bool {
        self.links.iter().any(|link| link.check(pair))
    }

    /// Adds one copy of an item: to the newest link in which it already tests positive,
    /// else to the newest link, growing first if that one is at capacity. `max_bytes`
    /// caps the filter's memory when a new link is needed.
    pub fn add(&mut self, pair: HashPair, max_bytes: u64) -> CountingAdd {
        let at = match self.links.iter().rposition(|link| link.check(pair)) {
            Some(at) => at,
            None => {
                let newest = self.links.last().expect("a chain always has a link");
                if newest.items >= newest.entries {
                    if !self.is_scaling() {
                        return CountingAdd::Full;
                    }
                    if let Err(e) = self.grow(max_bytes) {
                        return CountingAdd::GrowFailed(e);
                    }
                }
                self.links.len() - 1
            }
        };
        let link = &mut self.links[at];
        link.increment(pair);
        // The counts stop at u64::MAX (unreachable but for a crafted dump) so that the
        // links' counts always sum to the filter's.
        if self.items < u64::MAX {
            link.items += 1;
            self.items += 1;
        }
        CountingAdd::Added
    }

    /// Removes one copy of an item, only when exactly one link tests positive for it.
    /// Returns false — and changes nothing — when no link or several links do.
    pub fn delete(&mut self, pair: HashPair) -> bool {
        let mut positive = self
            .links
            .iter()
            .enumerate()
            .filter(|(_, link)| link.check(pair))
            .map(|(at, _)| at);
        let (Some(at), None) = (positive.next(), positive.next()) else {
            return false;
        };
        let link = &mut self.links[at];
        link.decrement(pair);
        if link.items > 0 {
            link.items -= 1;
            self.items -= 1;
        }
        true
    }

    /// Estimated multiplicity: the sum over links of the item's smallest counter. Never
    /// below the true count while no counter saturated.
    pub fn count(&self, pair: HashPair) -> u64 {
        self.links
            .iter()
            .map(|link| u64::from(link.min_counter(pair)))
            .sum()
    }

    /// Appends a link `growth` times larger with half the error of the newest one.
    fn grow(&mut self, max_bytes: u64) -> Result<(), LinkError> {
        let newest = self.links.last().expect("a chain always has a link");
        let entries = newest.entries.wrapping_mul(u64::from(self.growth));
        let shape = LinkShape::new(entries, newest.error * 0.5, self.options)?;
        let room = max_bytes.saturating_sub(self.mem_usage().saturating_add(CBF_LINK_OVERHEAD));
        self.links
            .try_reserve(1)
            .map_err(|_| LinkError::OutOfMemory)?;
        self.links.push(CountingLink::new(shape, room)?);
        Ok(())
    }

    /// Total capacity of all links (CBF.INFO "Capacity").
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, link| sum.wrapping_add(link.entries))
    }

    /// The memory figure (CBF.INFO "Size", MEMORY USAGE):
    /// `32 + Σ_links (64 + counter bytes)`, the counter bytes being 4 × a BF link's bytes.
    pub fn mem_usage(&self) -> u64 {
        self.links.iter().fold(CBF_OVERHEAD, |sum, link| {
            sum.saturating_add(CBF_LINK_OVERHEAD + link.bytes())
        })
    }

    /// Whether chain-level fields from outside are acceptable: one of the two option
    /// values commands create, a growth the commands could set.
    pub fn options_are_valid(options: u32, growth: u32) -> bool {
        (options == SCALING_OPTIONS || options == NON_SCALING_OPTIONS) && growth <= MAX_GROWTH
    }

    /// Checks a filter assembled from outside data: valid options, at least one link (only
    /// one if non-scaling), every link valid, link counts summing to the total.
    pub fn is_valid(&self) -> bool {
        let sum = self
            .links
            .iter()
            .try_fold(0u64, |sum, link| sum.checked_add(link.items));
        Self::options_are_valid(self.options, self.growth)
            && !self.links.is_empty()
            && (self.is_scaling() || self.links.len() == 1)
            && self.links.iter().all(|link| link.is_valid(self.options))
            && sum == Some(self.items)
    }

    /// An independent copy (COPY), or `None` when memory cannot be had.
    pub fn try_clone(&self) -> Option<Self> {
        let mut links = Vec::new();
        links.try_reserve_exact(self.links.len()).ok()?;
        for link in &self.links {
            links.push(link.try_clone()?);
        }
        Some(CountingChain {
            items: self.items,
            links,
            options: self.options,
            growth: self.growth,
        })
    }

    /// Whether any counter of any link is saturated.
    pub fn has_saturated_counter(&self) -> bool {
        self.links.iter().any(CountingLink::has_saturated_counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::chain::Chain;
    use crate::rdb::{load_counting, save_counting, Field, Fields, COUNTING_ENCODING};
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn pair(item: &[u8]) -> HashPair {
        HashPair::wide(item)
    }

    fn add(chain: &mut CountingChain, item: &[u8]) -> CountingAdd {
        chain.add(pair(item), u64::MAX)
    }

    #[test]
    fn same_sizing_and_positions_as_bloom() {
        for (capacity, error, scaling) in [
            (100, 0.01, true),
            (100, 0.001, true),
            (1000, 0.05, true),
            (3, 0.01, false),
            (50000, 0.0005, false),
        ] {
            let bf = Chain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
            let cbf = CountingChain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
            let (b, c) = (&bf.links[0], &cbf.links[0]);
            assert_eq!(
                (b.entries, b.error, b.bpe, b.hashes, b.bits),
                (c.entries, c.error, c.bpe, c.hashes, c.bits)
            );
            assert_eq!(c.bytes(), 4 * b.bytes());
            assert_eq!(cbf.options, bf.options);
            for item in [&b""[..], b"a", b"hello", b"user:12345"] {
                let p = pair(item);
                assert_eq!(
                    b.positions(p).collect::<Vec<_>>(),
                    c.positions(p).collect::<Vec<_>>()
                );
            }
        }
        // Reserved 0.01/100: BF 144 bytes / 1152 bits / 8 hashes; CBF 4 × 144 bytes.
        let cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        let l = &cbf.links[0];
        assert_eq!((l.bits, l.hashes, l.bytes()), (1152, 8, 576));
        assert_eq!(cbf.mem_usage(), 32 + 64 + 576);
    }

    #[test]
    fn counters_are_nibbles_low_first() {
        let mut cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        // "a" → positions 1034 539 172 829 462 1119 752 257 (COMPAT §5.5).
        add(&mut cbf, b"a");
        let link = &cbf.links[0];
        assert_eq!(link.counters[517], 0x01, "1034 even → low nibble");
        assert_eq!(link.counters[269], 0x10, "539 odd → high nibble");
        assert_eq!(link.counters.iter().filter(|&&b| b != 0).count(), 8);
        add(&mut cbf, b"a");
        assert_eq!(cbf.links[0].counters[517], 0x02);
        assert_eq!(cbf.count(pair(b"a")), 2);
    }

    #[test]
    fn chain_grows_like_bloom() {
        let mut bf = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        let mut cbf = CountingChain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..200 {
            let item = format!("item{i}");
            bf.add(bf.hash(item.as_bytes()), u64::MAX);
            add(&mut cbf, item.as_bytes());
        }
        assert_eq!(cbf.items, 200);
        let shapes = |entries: Vec<(u64, f64, u64, u32)>| entries;
        assert_eq!(
            shapes(
                cbf.links
                    .iter()
                    .map(|l| (l.entries, l.error, l.bits, l.hashes))
                    .collect()
            ),
            shapes(
                bf.links
                    .iter()
                    .map(|l| (l.entries, l.error, l.bits, l.hashes))
                    .take(cbf.links.len())
                    .collect()
            )
        );
        assert_eq!(cbf.links[0].error, 0.005);
        assert_eq!(cbf.links[1].entries, 20);
        assert_eq!(cbf.links[1].error, 0.0025);
        assert_eq!(cbf.links.iter().map(|l| l.items).sum::<u64>(), cbf.items);
    }

    #[test]
    fn repeated_adds_go_to_the_link_that_holds_the_item() {
        let mut cbf = CountingChain::new(2, 0.01, 2, true, u64::MAX).unwrap();
        add(&mut cbf, b"x");
        add(&mut cbf, b"y");
        add(&mut cbf, b"z"); // grows
        assert_eq!(cbf.links.len(), 2);
        for _ in 0..5 {
            add(&mut cbf, b"x");
        }
        assert_eq!(cbf.links.len(), 2);
        assert_eq!((cbf.links[0].items, cbf.links[1].items), (7, 1));
        assert_eq!(cbf.count(pair(b"x")), 6);
        assert_eq!(cbf.items, 8);
    }

    #[test]
    fn delete_semantics() {
        let mut cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        let x = pair(b"x");
        add(&mut cbf, b"x");
        add(&mut cbf, b"x");
        assert_eq!((cbf.count(x), cbf.items), (2, 2));
        assert!(cbf.delete(x));
        assert!(cbf.contains(x));
        assert_eq!((cbf.count(x), cbf.items), (1, 1));
        assert!(cbf.delete(x));
        assert!(!cbf.contains(x));
        assert_eq!((cbf.count(x), cbf.items), (0, 0));
        let before = cbf.clone();
        assert!(!cbf.delete(x));
        assert_eq!(cbf, before);
        assert!(cbf.links[0].counters.iter().all(|&b| b == 0));
    }

    #[test]
    fn delete_refuses_when_several_links_test_positive() {
        // Force the item positive in two links by adding it to each directly.
        let mut cbf = CountingChain::new(1, 0.01, 2, true, u64::MAX).unwrap();
        add(&mut cbf, b"a");
        add(&mut cbf, b"b"); // second link
        let p = pair(b"a");
        cbf.links[1].increment(p);
        cbf.links[1].items += 1;
        cbf.items += 1;
        let before = cbf.clone();
        assert!(!cbf.delete(p));
        assert_eq!(cbf, before);
        assert_eq!(cbf.count(p), 2);
    }

    #[test]
    fn saturated_counters_stay() {
        let mut cbf = CountingChain::new(100, 0.01, 2, false, u64::MAX).unwrap();
        let p = pair(b"hot");
        for _ in 0..20 {
            assert_eq!(cbf.add(p, u64::MAX), CountingAdd::Added);
        }
        assert_eq!(cbf.count(p), 15);
        assert_eq!(cbf.items, 20);
        assert!(cbf.has_saturated_counter());
        for _ in 0..30 {
            assert!(cbf.delete(p));
        }
        assert_eq!(cbf.count(p), 15, "saturated counters are never decremented");
        assert!(cbf.contains(p));
        assert_eq!(cbf.items, 0);
        assert!(!cbf.delete(pair(b"cold")) || cbf.contains(pair(b"cold")));
    }

    #[test]
    fn non_scaling_filter_fills_up_but_takes_repeats() {
        let mut cbf = CountingChain::new(3, 0.01, 2, false, u64::MAX).unwrap();
        assert_eq!(cbf.options, 13);
        for item in [&b"a"[..], b"b", b"c"] {
            assert_eq!(add(&mut cbf, item), CountingAdd::Added);
        }
        assert_eq!(add(&mut cbf, b"d"), CountingAdd::Full);
        assert_eq!(add(&mut cbf, b"a"), CountingAdd::Added);
        assert_eq!(cbf.items, 4);
        assert!(cbf.delete(pair(b"b")));
        assert_eq!(add(&mut cbf, b"d"), CountingAdd::Full, "a still at 4 ≥ 3");
        assert!(cbf.delete(pair(b"a")));
        assert_eq!(
            add(&mut cbf, b"d"),
            CountingAdd::Added,
            "deletes free capacity"
        );
    }

    #[test]
    fn growth_failures_and_ceiling() {
        let mut cbf = CountingChain::new(2, 0.01, 0, true, u64::MAX).unwrap();
        add(&mut cbf, b"a");
        add(&mut cbf, b"b");
        let before = cbf.clone();
        assert_eq!(
            add(&mut cbf, b"c"),
            CountingAdd::GrowFailed(LinkError::Invalid)
        );
        assert_eq!(cbf, before);

        let mut cbf = CountingChain::new(100, 0.01, 2, true, 2000).unwrap();
        let mut outcome = CountingAdd::Added;
        for i in 0..400 {
            outcome = cbf.add(pair(i.to_string().as_bytes()), 2000);
            if outcome != CountingAdd::Added {
                break;
            }
        }
        assert_eq!(outcome, CountingAdd::GrowFailed(LinkError::TooLarge));
        assert!(cbf.mem_usage() <= 2000);
        assert_eq!(
            CountingChain::new(100, 0.01, 2, true, 600),
            Err(LinkError::TooLarge)
        );
        assert!(CountingChain::new(100, 0.01, 2, true, 672).is_ok());
        assert_eq!(
            CountingChain::new(0, 0.01, 2, true, u64::MAX),
            Err(LinkError::Invalid)
        );
    }

    #[test]
    fn mem_usage_is_four_times_the_bloom_arrays() {
        for (error, capacity, scaling) in [
            (0.001, 100, true),
            (0.01, 100, true),
            (0.05, 1000, true),
            (0.01, 3, false),
        ] {
            let bf = Chain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
            let cbf = CountingChain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
            assert_eq!(cbf.mem_usage(), bf.mem_usage() + 3 * bf.links[0].bytes());
        }
    }

    /// Measured false-positive rate of `cbf` over `probes` items never added.
    fn fp_rate(cbf: &CountingChain, probes: u64) -> f64 {
        let hits = (0..probes)
            .filter(|i| cbf.contains(pair(format!("probe:{i}").as_bytes())))
            .count();
        hits as f64 / probes as f64
    }

    #[test]
    fn false_positive_rate_within_bounds() {
        // Reserved for 10 000 at 1%, filled to capacity; scaling (first link at 0.5%),
        // non-scaling (exactly 1%), and a filter that had to grow 4 times.
        for (capacity, scaling) in [(10_000, true), (10_000, false), (1_000, true)] {
            let mut cbf = CountingChain::new(capacity, 0.01, 2, scaling, u64::MAX).unwrap();
            for i in 0..10_000 {
                assert_eq!(
                    add(&mut cbf, format!("item:{i}").as_bytes()),
                    CountingAdd::Added
                );
            }
            let rate = fp_rate(&cbf, 100_000);
            assert!(
                rate <= 0.015,
                "capacity {capacity} scaling {scaling}: {rate}"
            );
        }
    }

    #[test]
    fn validation_rejects_inconsistent_links() {
        let cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        assert!(cbf.is_valid());
        let opts = cbf.options;
        let good = cbf.links[0].clone();
        let mutations: [fn(&mut CountingLink); 8] = [
            |l| l.bits += 64,
            |l| l.bits -= 2,
            |l| {
                l.counters.pop();
            },
            |l| l.hashes += 1,
            |l| l.error = 1.0,
            |l| l.entries *= 2,
            |l| l.bpe *= 1.0 + 1e-12,
            |l| {
                l.bpe = 1e12;
                l.hashes = (crate::bloom::link::LN2 * 1e12).ceil() as u32
            },
        ];
        for (i, mutate) in mutations.iter().enumerate() {
            let mut bad = good.clone();
            mutate(&mut bad);
            assert!(!bad.is_valid(opts), "mutation {i}");
        }
        let mut bad = cbf.clone();
        bad.items = 1;
        assert!(!bad.is_valid());
        let mut bad = cbf.clone();
        bad.options = 7;
        assert!(!bad.is_valid());
        let mut bad = cbf.clone();
        bad.growth = MAX_GROWTH + 1;
        assert!(!bad.is_valid());
        let mut bad = CountingChain::new(100, 0.01, 2, false, u64::MAX).unwrap();
        bad.links.push(bad.links[0].clone());
        assert!(!bad.is_valid(), "non-scaling with two links");
    }

    #[test]
    fn rdb_fields_round_trip_and_corruption_fails() {
        let mut cbf = CountingChain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..50 {
            add(&mut cbf, i.to_string().as_bytes());
        }
        let mut good = Fields::default();
        save_counting(&cbf, &mut good);
        assert_eq!(good.fields.len(), 4 + 7 * cbf.links.len());
        assert_eq!(
            load_counting(&mut good.clone(), COUNTING_ENCODING),
            Some(cbf.clone())
        );
        let load = |f: &Fields, encver| load_counting(&mut f.clone(), encver);
        assert!(load(&good, 0).is_none());
        assert!(load(&good, 2).is_none());
        for (index, field) in [
            (0, Field::Unsigned(49)),
            (1, Field::Unsigned(0)),
            (1, Field::Unsigned(u64::MAX)),
            (2, Field::Unsigned(12)),
            (3, Field::Unsigned(40000)),
            (4, Field::Unsigned(1000)),
            (5, Field::Double(0.0)),
            (6, Field::Unsigned(9)),
            (7, Field::Double(9.0)),
            (8, Field::Unsigned(1 << 40)),
            (9, Field::Buffer(vec![0; 8])),
            (10, Field::Unsigned(11)),
            (9, Field::Unsigned(3)),
        ] {
            let mut f = good.clone();
            f.fields[index] = field.clone();
            assert!(load(&f, 1).is_none(), "field {index} = {field:?}");
        }
        let mut f = good;
        f.fields.truncate(10);
        assert!(load(&f, 1).is_none());
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(u8),
        /// Delete the n-th (mod count) item currently in the multiset.
        Delete(usize),
        /// Delete an item never added (only applied when it tests absent).
        DeleteAbsent(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..60).prop_map(Op::Add),
            2 => any::<usize>().prop_map(Op::Delete),
            1 => any::<u16>().prop_map(Op::DeleteAbsent),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Ground truth is a multiset: after any sequence of adds and deletes of added
        /// items, no false negative, count ≥ true count (no counter saturated), CARD and
        /// the links' counts follow every add and successful delete, and a refused delete
        /// changes no byte.
        #[test]
        fn multiset_model(
            ops in proptest::collection::vec(op(), 1..400),
            capacity in 1u64..40,
            growth in 1u32..4,
            error in prop_oneof![Just(0.01), Just(0.1), Just(0.3)],
            scaling in any::<bool>(),
        ) {
            let mut cbf = CountingChain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
            let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
            for op in ops {
                match op {
                    Op::Add(n) => {
                        let item = vec![n];
                        match cbf.add(pair(&item), u64::MAX) {
                            CountingAdd::Added => *truth.entry(item).or_default() += 1,
                            CountingAdd::Full => prop_assert!(!scaling),
                            CountingAdd::GrowFailed(e) => prop_assert!(false, "grow failed {e:?}"),
                        }
                    }
                    Op::Delete(n) => {
                        let mut present: Vec<&Vec<u8>> =
                            truth.iter().filter(|(_, &c)| c > 0).map(|(k, _)| k).collect();
                        if present.is_empty() {
                            continue;
                        }
                        present.sort();
                        let item = present[n % present.len()].clone();
                        let before = cbf.clone();
                        if cbf.delete(pair(&item)) {
                            *truth.get_mut(&item).unwrap() -= 1;
                        } else {
                            prop_assert_eq!(&cbf, &before);
                        }
                    }
                    Op::DeleteAbsent(n) => {
                        let item = format!("absent:{n}").into_bytes();
                        let p = pair(&item);
                        if !cbf.contains(p) {
                            let before = cbf.clone();
                            prop_assert!(!cbf.delete(p));
                            prop_assert_eq!(&cbf, &before);
                        }
                    }
                }
                let saturated = cbf.has_saturated_counter();
                for (item, &n) in &truth {
                    if n > 0 {
                        prop_assert!(cbf.contains(pair(item)), "false negative {:?}", item);
                        if !saturated {
                            prop_assert!(cbf.count(pair(item)) >= n);
                        }
                    }
                }
                prop_assert_eq!(cbf.items, truth.values().sum::<u64>());
                prop_assert_eq!(cbf.links.iter().map(|l| l.items).sum::<u64>(), cbf.items);
                prop_assert!(cbf.is_valid());
            }
        }

        /// RDB save → load is the identity.
        #[test]
        fn rdb_save_then_load_is_identity(
            items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..300),
            deletes in proptest::collection::vec(any::<usize>(), 0..50),
            capacity in 1u64..64,
            growth in 1u32..4,
            scaling in any::<bool>(),
        ) {
            let mut cbf = CountingChain::new(capacity, 0.01, growth, scaling, u64::MAX).unwrap();
            for item in &items {
                cbf.add(pair(item), u64::MAX);
            }
            for d in deletes {
                if !items.is_empty() {
                    cbf.delete(pair(&items[d % items.len()]));
                }
            }
            let mut fields = Fields::default();
            save_counting(&cbf, &mut fields);
            prop_assert_eq!(load_counting(&mut fields, COUNTING_ENCODING), Some(cbf));
        }
    }

    /// A counting filter's RDB fields from a strategy's parameters (several links,
    /// deletes).
    fn saved_fields(capacity: u64, scaling: bool, n: u8, deletes: u8) -> (CountingChain, Fields) {
        let mut cbf = CountingChain::new(capacity, 0.01, 2, scaling, u64::MAX).unwrap();
        for i in 0..n {
            add(&mut cbf, &[i]);
        }
        for i in 0..deletes.min(n) {
            cbf.delete(pair(&[i]));
        }
        let mut fields = Fields::default();
        save_counting(&cbf, &mut fields);
        (cbf, fields)
    }

    /// RDB field streams of real filters, then edited (or, now and then, random), under
    /// any encoding version: nothing panics; whatever loads is valid and saves back to the
    /// same fields; an unedited stream of the current encoding loads as the filter.
    #[test]
    fn arbitrary_fields_never_panic() {
        use crate::testing::{apply_field_edits, field_edits, run_counting};
        let random = prop_oneof![
            6 => Just(None),
            1 => proptest::option::of(proptest::collection::vec(
                (0u8..3, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..40)),
                0..40,
            )),
        ];
        let encver = prop_oneof![4 => Just(COUNTING_ENCODING), 1 => -1i32..3];
        run_counting(
            "counting arbitrary_fields_never_panic",
            500,
            150,
            (
                (1u64..20, any::<bool>(), any::<u8>(), 0u8..20),
                field_edits(),
                random,
                encver,
            ),
            |((capacity, scaling, n, deletes), edits, random, encver)| {
                let (_, good) = saved_fields(capacity, scaling, n, deletes);
                let mut fields = match random {
                    Some(raw) => Fields {
                        fields: raw
                            .into_iter()
                            .map(|(kind, n, bytes)| match kind {
                                0 => Field::Unsigned(n % 1000),
                                1 => Field::Double(f64::from_bits(n)),
                                _ => Field::Buffer(bytes),
                            })
                            .collect(),
                        read_at: 0,
                    },
                    None => apply_field_edits(&good, &edits),
                };
                let stream = fields.fields.clone();
                match load_counting(&mut fields, encver) {
                    Some(cbf) => {
                        prop_assert!(cbf.is_valid());
                        let mut again = Fields::default();
                        save_counting(&cbf, &mut again);
                        prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                        Ok(true)
                    }
                    None => {
                        prop_assert!(stream != good.fields || encver != COUNTING_ENCODING);
                        Ok(false)
                    }
                }
            },
        );
        let (source, mut good) = saved_fields(5, true, 40, 3);
        assert_eq!(load_counting(&mut good, COUNTING_ENCODING), Some(source));
    }

    /// A valid field stream with exactly one edit (a field replaced, nudged, resized,
    /// removed, a data byte changed...): nothing panics; whatever loads is valid and saves
    /// back to the same fields.
    #[test]
    fn corrupted_fields_never_panic() {
        use crate::testing::{apply_field_edits, field_edit, run_counting};
        let counts = run_counting(
            "counting corrupted_fields_never_panic",
            400,
            60,
            (
                (1u64..20, any::<bool>(), any::<u8>(), 0u8..20),
                field_edit(),
            ),
            |((capacity, scaling, n, deletes), edit)| {
                let (_, good) = saved_fields(capacity, scaling, n, deletes);
                let mut fields = apply_field_edits(&good, &[edit]);
                let stream = fields.fields.clone();
                match load_counting(&mut fields, COUNTING_ENCODING) {
                    Some(cbf) => {
                        prop_assert!(cbf.is_valid());
                        let mut again = Fields::default();
                        save_counting(&cbf, &mut again);
                        prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                        Ok(true)
                    }
                    None => Ok(false),
                }
            },
        );
        assert!(counts.refused >= 100, "{counts:?}");
    }
}
