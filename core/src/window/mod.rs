//! The sliding-window Bloom filter (WBF.*): an age-partitioned Bloom filter (Shtul,
//! Baquero, Almeida, 2020) whose items age out. docs/wbf.md explains the choices.
//!
//! The filter is `k + l` bit arrays ("slices") of `m` bits, used as a ring. An item sets one
//! bit in each of the `k` newest slices; it is reported present when `k` *consecutive*
//! slices all have its bit. Every generation the ring turns by one: the oldest slice is
//! cleared and becomes the newest. An item added in generation G is therefore found while
//! at most `l` generations followed G, and gone once `l + 1` did.
//!
//! redbloom takes `l = k` and sizes every slice for the most adds any slice can receive
//! while no more than `capacity` items arrive within one window — `k · g` adds, `g` being the
//! generation size `⌈capacity / k⌉`. Then every slice is at most as full as the design
//! point, whatever the arrival pattern, and the false-positive rate is at most
//! `p^k · (1 + k(1 − p))` (the chance of a run of `k` hits among `2k` slices, `p` being the
//! fill of a slice holding `k · g` items); `k` and `m` minimise the memory under that bound.
//!
//! Two kinds of window:
//! * **Counted** (no WINDOW): a generation ends after `g` adds; the filter remembers at
//!   least the last `l · g ≥ capacity` adds.
//! * **Timed** (WINDOW w ms): generation `j` starts at `base + ⌊j·w/l⌋`; an item added at
//!   `t` stays at least until `t + w` and is gone by `t + w + ⌈w/l⌉`. When more than
//!   `capacity` adds arrive within one window, the ring turns early (the slices would
//!   otherwise fill up): items then age faster, the error rate stays bounded; the
//!   generation number still follows the clock, so expiry is never delayed.
//!
//! Time is an argument of every call (milliseconds); the core never reads a clock. Reads
//! never change the filter: generations whose time has passed are ignored by reads and
//! dropped by the next write. A time earlier than the newest generation's start (a clock
//! stepping back) expires nothing and adds to the newest generation.
//!
//! ```
//! use redbloom_core::hash::HashPair;
//! use redbloom_core::window::WindowFilter;
//!
//! // 1000 items per one-minute window at 1 % error, starting at t = 0 ms.
//! let mut wbf = WindowFilter::new(1000, 0.01, Some(60_000), 0, u64::MAX).unwrap();
//! let item = HashPair::wide(b"apple");
//! assert!(wbf.add(item, 1_000));
//! assert!(wbf.contains(item, 30_000));
//! // Two windows later the item has aged out.
//! assert!(!wbf.contains(item, 130_000));
//! ```

pub mod dump;
pub mod filter;
mod health;
pub mod rdb;
mod relocate;
pub mod shape;
#[cfg(test)]
mod tests;

pub use filter::WindowFilter;
pub use shape::{false_positive_bound, WindowShape};

/// Most slices an item is added to (`k`); error rates down to ~1e-18 need fewer.
pub const MAX_K: u32 = 64;

/// Longest window (milliseconds): WBF.RESERVE's WINDOW is a signed 64-bit integer, and
/// a loaded filter must be one it could have made.
pub const MAX_WINDOW: u64 = i64::MAX as u64;

/// Highest generation number; time arguments beyond it saturate (2^62 generations are
/// ~146 million years of one-millisecond generations).
pub const MAX_GENERATION: u64 = 1 << 62;

/// The memory figure's fixed parts (WBF.INFO "Size", MEMORY USAGE): the filter's fields
/// (96 bytes) plus each slice's add count (8 bytes), plus the bit arrays.
pub const WBF_OVERHEAD: u64 = 96;
pub const WBF_SLICE_OVERHEAD: u64 = 8;
