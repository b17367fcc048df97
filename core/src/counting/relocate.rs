//! Active defragmentation of a counting chain: its links vector, then each link's counters.

use super::chain::CountingChain;
use crate::memory::{relocate_parts, Relocator};

impl CountingChain {
    /// Offers the chain's buffers to `r` from cursor `from` (see [`relocate_parts`]).
    pub fn relocate(&mut self, from: u64, r: &mut impl Relocator) -> Option<u64> {
        relocate_parts(&mut self.links, from, r, |link| &mut link.counters)
    }
}
