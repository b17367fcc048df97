//! The counting Bloom filter (CBF.*): a scalable Bloom chain whose bits are 4-bit saturating
//! counters, so items can be deleted and their multiplicity estimated.
//!
//! A counting link is sized exactly like a Bloom link ([`LinkShape::new`](crate::bloom::LinkShape::new): same bits, hashes,
//! bits per entry) and addresses its counters with the same positions `(a + i·b) mod M`
//! (M = the counter count; counting links are always NOROUND-sized, so n2 is 0). Each bit
//! becomes a 4-bit counter: two per byte, counter `p` in byte `p / 2`, the low nibble when
//! `p` is even. The chain grows like [`Chain`](crate::bloom::Chain): a scaling filter's first link
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

//!
//! ```
//! use redbloom_core::counting::{CountingAdd, CountingChain};
//!
//! // 1000 items at 1 % error, growing by 2, scaling, no memory ceiling.
//! let mut cbf = CountingChain::new(1000, 0.01, 2, true, u64::MAX).unwrap();
//! let item = cbf.hash(b"apple");
//! assert_eq!(cbf.add(item, u64::MAX), CountingAdd::Added);
//! assert_eq!(cbf.add(item, u64::MAX), CountingAdd::Added);
//! assert_eq!(cbf.count(item), 2);
//! assert!(cbf.delete(item));
//! assert_eq!((cbf.count(item), cbf.items()), (1, 1));
//! ```

pub mod chain;
pub mod dump;
mod health;
pub mod link;
mod merge;
pub mod rdb;
mod relocate;
#[cfg(test)]
mod tests;

use crate::bloom::link::{LinkError, OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING};
use crate::limits;

pub use chain::CountingChain;
pub use link::{counter_bytes, CountingLink};

/// A counter at this value is saturated: it is never incremented nor decremented again.
pub const COUNTER_MAX: u8 = 15;

/// The memory figure's fixed parts (CBF.INFO "Size", MEMORY USAGE), chosen like BF's:
/// a 32-byte filter header plus 64 bytes per link, plus the counter arrays.
pub const CBF_OVERHEAD: u64 = 32;
pub const CBF_LINK_OVERHEAD: u64 = 64;

/// Largest growth factor a counting filter accepts (the range of the EXPANSION option):
/// the one expansion limit of [`crate::limits`].
pub const MAX_GROWTH: u32 = limits::MAX_EXPANSION as u32;

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
