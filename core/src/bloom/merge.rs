//! BF.MERGE: the union (OR of link *i* of every chain) or the intersection (AND, single
//! links only) of Bloom chains of one shape, built apart from them.

use super::chain::{Chain, CHAIN_OVERHEAD, LINK_OVERHEAD};
use super::link::Link;
use crate::merge::{and_all, count_ones, estimate_items, or_all, MergeError, MergeOp};

/// Whether two links have the same size and addressing.
fn same_link_shape(a: &Link, b: &Link) -> bool {
    a.entries == b.entries
        && a.error.to_bits() == b.error.to_bits()
        && a.bpe.to_bits() == b.bpe.to_bits()
        && a.hashes == b.hashes
        && a.bits == b.bits
        && a.n2 == b.n2
        && a.blocked == b.blocked
        && a.data.len() == b.data.len()
}

impl Chain {
    /// Whether `other` has this chain's shape: the same options (hash width, sizing,
    /// non-scaling flag, classic or BLOCKED layout), expansion, first link (error rate
    /// and capacity), and link *i* of the same size and hash count wherever both have one.
    pub fn same_shape(&self, other: &Chain) -> bool {
        self.options == other.options
            && self.growth == other.growth
            && self
                .links
                .iter()
                .zip(&other.links)
                .all(|(a, b)| same_link_shape(a, b))
    }

    /// A new chain merging `operands` (none is changed).
    ///
    /// Union: link *i* is the OR of every operand's link *i*, as many links as the longest
    /// operand; an item any operand holds, the result holds. A link only one operand has is
    /// copied with its item count; a link several have gets the count its fill implies
    /// ([`estimate_items`]), at least the largest and at most the sum of theirs.
    ///
    /// Intersection: the AND of single-link chains; an item every operand holds, the result
    /// holds. Its count is estimated from its fill, at most the smallest operand's.
    ///
    /// `max_bytes` caps the result's memory figure ([`Chain::mem_usage`]).
    pub fn merge(operands: &[&Chain], op: MergeOp, max_bytes: u64) -> Result<Chain, MergeError> {
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
        let mem = longest.links.iter().fold(CHAIN_OVERHEAD, |sum, link| {
            sum.saturating_add(LINK_OVERHEAD + link.bytes())
        });
        if mem > max_bytes {
            return Err(MergeError::TooLarge);
        }
        let mut links = Vec::new();
        links
            .try_reserve_exact(longest.links.len())
            .map_err(|_| MergeError::OutOfMemory)?;
        for i in 0..longest.links.len() {
            let holders: Vec<&Link> = operands.iter().filter_map(|c| c.links.get(i)).collect();
            links.push(merge_link(&holders, op)?);
        }
        let items = links
            .iter()
            .fold(0u64, |sum, link| sum.saturating_add(link.items));
        Ok(Chain::from_parts(items, links, first.options, first.growth))
    }
}

/// Link *i* of the result from the operands that have one (at least one).
fn merge_link(holders: &[&Link], op: MergeOp) -> Result<Link, MergeError> {
    let first = holders[0];
    if holders.len() == 1 {
        return first.try_clone().ok_or(MergeError::OutOfMemory);
    }
    let arrays: Vec<&[u8]> = holders.iter().map(|l| l.data()).collect();
    let data = match op {
        MergeOp::Union => or_all(&arrays),
        MergeOp::Intersect => and_all(&arrays),
    }
    .map_err(|_| MergeError::OutOfMemory)?;
    let items = holders.iter().map(|l| l.items);
    let (low, high) = match op {
        MergeOp::Union => (
            items.clone().max().unwrap_or(0),
            items.fold(0u64, u64::saturating_add),
        ),
        MergeOp::Intersect => (0, items.min().unwrap_or(0)),
    };
    let items = estimate_items(count_ones(&data), first.bits, first.hashes, low, high);
    Ok(first.with_data(items, data))
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
