//! One counting link: a Bloom link's sizing and positions with a 4-bit counter per bit.

use super::COUNTER_MAX;
use crate::bloom::link::{fields_are_consistent, LinkError, LinkShape};
use crate::hash::HashPair;
use crate::memory::{sparse_copy, zeroed_bytes};

/// One sub-filter: a Bloom link's shape with a counter per bit.
#[derive(Clone, Debug, PartialEq)]
pub struct CountingLink {
    /// Capacity in items.
    pub(super) entries: u64,
    pub(super) error: f64,
    /// Bits (here: counters) per entry: −ln(error)/ln²2.
    pub(super) bpe: f64,
    pub(super) hashes: u32,
    /// Number of counters, the Bloom link's bit count; always `2 × counters.len()`.
    pub(super) bits: u64,
    /// Adds into this link minus successful deletes from it.
    pub(super) items: u64,
    /// Two 4-bit counters per byte.
    pub(super) counters: Vec<u8>,
    /// Non-zero counters, kept in step with every write (health: O(1) per link).
    pub(super) nonzero: u64,
    /// Counters at [`COUNTER_MAX`], kept in step with every write.
    pub(super) saturated: u64,
}

impl CountingLink {
    /// A new link of `shape` with all counters zero; refuses a counter array larger than
    /// `max_bytes`.
    pub fn new(shape: LinkShape, max_bytes: u64) -> Result<Self, LinkError> {
        let bytes = counter_bytes(shape.bits).ok_or(LinkError::Invalid)?;
        if bytes > max_bytes {
            return Err(LinkError::TooLarge);
        }
        let counters = zeroed_bytes(bytes).map_err(|_| LinkError::OutOfMemory)?;
        Ok(CountingLink {
            entries: shape.entries,
            error: shape.error,
            bpe: shape.bpe,
            hashes: shape.hashes,
            bits: shape.bits,
            items: 0,
            counters,
            nonzero: 0,
            saturated: 0,
        })
    }

    /// Bytes of the counter array (4 × the Bloom link's bytes).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.counters.len() as u64
    }

    /// Capacity in items.
    #[inline]
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Error rate of this link.
    #[inline]
    pub fn error(&self) -> f64 {
        self.error
    }

    /// Counters per entry: −ln(error)/ln²2.
    #[inline]
    pub fn bpe(&self) -> f64 {
        self.bpe
    }

    /// Number of hash functions (counters per item).
    #[inline]
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Number of counters, the Bloom link's bit count.
    #[inline]
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Adds into this link minus successful deletes from it.
    #[inline]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The counter array, two 4-bit counters per byte (low nibble first).
    #[inline]
    pub fn counters(&self) -> &[u8] {
        &self.counters
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
    pub(super) fn increment(&mut self, pair: HashPair) {
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            let shift = (pos & 1) * 4;
            let byte = &mut self.counters[(pos >> 1) as usize];
            let value = (*byte >> shift) & 0x0f;
            if value < COUNTER_MAX {
                *byte += 1 << shift;
                self.nonzero += u64::from(value == 0);
                self.saturated += u64::from(value + 1 == COUNTER_MAX);
            }
        }
    }

    /// Takes one from each of the item's counters, except saturated ones (and, defensively,
    /// counters already at zero).
    #[inline]
    pub(super) fn decrement(&mut self, pair: HashPair) {
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            let shift = (pos & 1) * 4;
            let byte = &mut self.counters[(pos >> 1) as usize];
            let value = (*byte >> shift) & 0x0f;
            if value != 0 && value != COUNTER_MAX {
                *byte -= 1 << shift;
                self.nonzero -= u64::from(value == 1);
            }
        }
    }

    /// Whether any counter is saturated (then counts may fall short of the truth).
    pub fn has_saturated_counter(&self) -> bool {
        self.saturated > 0
    }

    /// Non-zero counters (kept on every write, not counted).
    #[inline]
    pub fn nonzero(&self) -> u64 {
        self.nonzero
    }

    /// Counters stuck at [`COUNTER_MAX`] (kept on every write, not counted).
    #[inline]
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// A link of stored fields, its counts counted.
    pub(super) fn from_parts(
        shape: (u64, f64, f64, u32, u64),
        items: u64,
        counters: Vec<u8>,
    ) -> Self {
        let (entries, error, bpe, hashes, bits) = shape;
        let (nonzero, saturated) = tally(&counters);
        CountingLink {
            entries,
            error,
            bpe,
            hashes,
            bits,
            items,
            counters,
            nonzero,
            saturated,
        }
    }

    /// Whether link fields from outside (a dump header, an RDB file) describe exactly the
    /// link this code would make for (`entries`, `error`) with `options`, and its counter
    /// array is exactly `bytes` long — so no position can fall outside the counters and
    /// every add or check does a bounded amount of work.
    pub(crate) fn fields_are_valid(
        entries: u64,
        error: f64,
        bpe: f64,
        hashes: u32,
        bits: u64,
        bytes: u64,
        options: u32,
    ) -> bool {
        bits.is_multiple_of(64)
            && counter_bytes(bits) == Some(bytes)
            && fields_are_consistent(error, bpe, hashes, bits, bits / 8, 0)
            && LinkShape::new(entries, error, options).is_ok_and(|shape| {
                shape.bits == bits
                    && shape.hashes == hashes
                    && shape.bpe.to_bits() == bpe.to_bits()
                    && shape.entries == entries
            })
    }

    /// `fields_are_valid` for a link already assembled.
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
        let counters = sparse_copy(&self.counters).ok()?;
        Some(CountingLink {
            entries: self.entries,
            error: self.error,
            bpe: self.bpe,
            hashes: self.hashes,
            bits: self.bits,
            items: self.items,
            counters,
            nonzero: self.nonzero,
            saturated: self.saturated,
        })
    }
}

/// Bytes of a counter array for `bits` counters (two per byte), if `bits` is even.
/// (non-zero counters, saturated counters) of a counter array: an O(counters) recount
/// (loading, tests).
pub fn tally(counters: &[u8]) -> (u64, u64) {
    counters.iter().fold((0, 0), |(nonzero, saturated), &b| {
        let (lo, hi) = (b & 0x0f, b >> 4);
        (
            nonzero + u64::from(lo != 0) + u64::from(hi != 0),
            saturated + u64::from(lo == COUNTER_MAX) + u64::from(hi == COUNTER_MAX),
        )
    })
}

#[inline]
pub fn counter_bytes(bits: u64) -> Option<u64> {
    bits.is_multiple_of(2).then_some(bits / 2)
}
