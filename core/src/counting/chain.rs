//! The scalable counting filter: counting links grown like a Bloom chain's.

use super::{
    CountingAdd, CountingLink, CBF_LINK_OVERHEAD, CBF_OVERHEAD, MAX_GROWTH, NON_SCALING_OPTIONS,
    SCALING_OPTIONS,
};
use crate::bloom::link::{LinkError, LinkShape, OPT_NO_SCALING};
use crate::hash::HashPair;
use crate::memory::Ceiling;

/// The scalable counting filter: links oldest first, never empty.
#[derive(Clone, Debug, PartialEq)]
pub struct CountingChain {
    /// Every add counts one, every successful delete takes one (CBF.CARD); always the sum
    /// of the links' item counts.
    pub(super) items: u64,
    pub(super) links: Vec<CountingLink>,
    /// [`SCALING_OPTIONS`] or [`NON_SCALING_OPTIONS`].
    pub(super) options: u32,
    /// Capacity factor of each new link.
    pub(super) growth: u32,
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

    /// Adds minus successful deletes (CBF.CARD).
    #[inline]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The links, oldest first; never empty.
    #[inline]
    pub fn links(&self) -> &[CountingLink] {
        &self.links
    }

    /// [`SCALING_OPTIONS`] or [`NON_SCALING_OPTIONS`].
    #[inline]
    pub fn options(&self) -> u32 {
        self.options
    }

    /// Capacity factor of each new link.
    #[inline]
    pub fn growth(&self) -> u32 {
        self.growth
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
    pub fn add(&mut self, pair: HashPair, max_bytes: impl Ceiling) -> CountingAdd {
        let at = match self.links.iter().rposition(|link| link.check(pair)) {
            Some(at) => at,
            None => {
                let newest = self.links.last().expect("a chain always has a link");
                if newest.items >= newest.entries {
                    if !self.is_scaling() {
                        return CountingAdd::Full;
                    }
                    if let Err(e) = self.grow(max_bytes.limit_for(self.mem_usage())) {
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
    pub(crate) fn options_are_valid(options: u32, growth: u32) -> bool {
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
