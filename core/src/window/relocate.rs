//! Active defragmentation of a sliding-window filter: its two buffers, at once.

use super::filter::WindowFilter;
use crate::memory::Relocator;

impl WindowFilter {
    /// Offers the filter's buffers to `r`; never pauses (two buffers).
    pub fn relocate(&mut self, from: u64, r: &mut impl Relocator) -> Option<u64> {
        if from == 0 {
            r.relocate(&mut self.counts);
            r.relocate(&mut self.bits);
        }
        None
    }
}
