//! CBF.MERGE: counting chains of one shape merged link by link — counters added (each
//! sum stopping at [`COUNTER_MAX`], a saturated counter staying saturated) or, for
//! single-link chains, the smaller counter kept (the intersection).
//!
//! The delete rule keeps its guarantee: every copy an operand holds of an item sits in
//! the operand's link *i* whose counters it raised, and the result's link *i* counters are
//! at least as large; CBF.DEL still decrements only where exactly one link tests positive.

use super::{CountingChain, CountingLink, COUNTER_MAX};
use crate::merge::{add_nibbles_all, min_nibbles_all, sum_nibbles, MergeError, MergeOp};

fn same_link_shape(a: &CountingLink, b: &CountingLink) -> bool {
    a.entries == b.entries
        && a.error.to_bits() == b.error.to_bits()
        && a.bpe.to_bits() == b.bpe.to_bits()
        && a.hashes == b.hashes
        && a.bits == b.bits
        && a.counters.len() == b.counters.len()
}

impl CountingChain {
    /// Whether `other` has this chain's shape: options (the non-scaling flag), expansion,
    /// first link (error rate, capacity), and link *i* alike wherever both have one.
    pub fn same_shape(&self, other: &CountingChain) -> bool {
        self.options == other.options
            && self.growth == other.growth
            && self
                .links
                .iter()
                .zip(&other.links)
                .all(|(a, b)| same_link_shape(a, b))
    }

    /// A new chain merging `operands` (none is changed). Union: link *i* adds every
    /// operand's link *i* counters, as many links as the longest operand; its item count is
    /// the sum of theirs (multiset semantics), so CBF.COUNT of the result is at least the
    /// sum of the operands' counts while no counter saturates. Intersection (single links
    /// only): the smaller counter; its count is the counters' sum over the hash count, at
    /// most the smallest operand's. `max_bytes` caps the result's memory figure.
    pub fn merge(
        operands: &[&CountingChain],
        op: MergeOp,
        max_bytes: u64,
    ) -> Result<CountingChain, MergeError> {
        let first = *operands.first().ok_or(MergeError::NoOperands)?;
        if let Some(at) = operands.iter().position(|c| !first.same_shape(c)) {
            return Err(MergeError::ShapeDiffers(at));
        }
        if op == MergeOp::Intersect {
            if let Some(at) = operands.iter().position(|c| c.links.len() != 1) {
                return Err(MergeError::MultiLink(at));
            }
        }
        let longest = operands
            .iter()
            .max_by_key(|c| c.links.len())
            .expect("not empty");
        if longest.mem_usage() > max_bytes {
            return Err(MergeError::TooLarge);
        }
        let mut links = Vec::new();
        links
            .try_reserve_exact(longest.links.len())
            .map_err(|_| MergeError::OutOfMemory)?;
        for i in 0..longest.links.len() {
            let holders: Vec<&CountingLink> =
                operands.iter().filter_map(|c| c.links.get(i)).collect();
            links.push(merge_link(&holders, op)?);
        }
        // The links' counts sum to the filter's (as `is_valid` requires), saturating as
        // an add does.
        let mut items = 0u64;
        for link in &mut links {
            link.items = link.items.min(u64::MAX - items);
            items += link.items;
        }
        Ok(CountingChain {
            items,
            links,
            options: first.options,
            growth: first.growth,
        })
    }
}

fn merge_link(holders: &[&CountingLink], op: MergeOp) -> Result<CountingLink, MergeError> {
    let first = holders[0];
    if holders.len() == 1 {
        return first.try_clone().ok_or(MergeError::OutOfMemory);
    }
    let arrays: Vec<&[u8]> = holders.iter().map(|l| l.counters()).collect();
    let counters = match op {
        MergeOp::Union => add_nibbles_all(&arrays, COUNTER_MAX),
        MergeOp::Intersect => min_nibbles_all(&arrays),
    }
    .map_err(|_| MergeError::OutOfMemory)?;
    let items = match op {
        MergeOp::Union => holders
            .iter()
            .fold(0u64, |sum, l| sum.saturating_add(l.items)),
        MergeOp::Intersect => {
            let smallest = holders.iter().map(|l| l.items).min().unwrap_or(0);
            let per_item = u64::from(first.hashes.max(1));
            (sum_nibbles(&counters) / per_item).min(smallest)
        }
    };
    Ok(CountingLink::from_parts(
        (
            first.entries,
            first.error,
            first.bpe,
            first.hashes,
            first.bits,
        ),
        items,
        counters,
    ))
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
