//! Encoding 3: encoding 2's standard ribbon ([`super::ribbon`]) with little room, and the
//! few keys it cannot hold kept aside exactly (a simple form of bumping, after BuRR:
//! Dillinger, Hübschle-Schneider, Sanders & Walzer, "Fast succinct retrieval and
//! approximate membership using ribbon", 2022).
//!
//! **Why.** With 128-bit rows the system of a standard ribbon is consistent only with
//! ~4 % extra slots at 10M items; at 0.01 % that alone costs 0.5 bits per item. Here the
//! ribbon gets [`room`] (1.2–1.6 %) and the keys are inserted in order of their start
//! slot; a key whose equation turns out inconsistent with those before it (its row is a
//! sum of theirs, its fingerprint is not) is *bumped*: left out of the ribbon and its
//! 64-bit hash (a bijection of its key under the seed) stored in a sorted list. Measured
//! (`measure_row_space`): 0.09 % of the keys at 1 % room, 0.035 % at 1.5 %, i.e. 0.02–0.06
//! bits per item, against 0.3–0.4 bits of room saved. The build never fails and never
//! retries (except for a set so adversarial that over one key in 64 is bumped).
//!
//! **Lookup.** The ribbon's check first (what present keys meet); when it fails, a bitmap
//! of the blocks holding a bumped key's start slot (one bit per 128 slots, cache
//! resident) says whether the sorted list can hold the key, and only then is it searched.
//! The list answers exactly, so the false-positive rate is the ribbon's mix of `r`- and
//! `(r + 1)`-column blocks, as encoding 2's.
//!
//! **Data.** The ribbon's words (encoding 2's layout), then the bitmap (little-endian
//! 64-bit words, block `b` at bit `b % 64` of word `b / 64`), then the bumped hashes
//! (little-endian 64-bit, strictly ascending).

use super::ribbon::{Ribbon, COEFF_BITS};

/// Encoding 3's size: the ribbon and how many keys are bumped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bumped {
    pub ribbon: Ribbon,
    pub bumped: u64,
}

/// Extra slots over `items`, as a share: 1.25 % at 1M items, 1.42 % at 10M, 1.6 % at
/// 10^8 (the share of bumped keys grows slowly with the size at a given room).
pub fn room(items: u64) -> f64 {
    0.0025 + 0.0005 * (items.max(2) as f64).log2()
}

impl Bumped {
    /// The ribbon for `items` distinct keys at `r` lower columns and rate `error`.
    pub fn ribbon_for(items: u64, r: u32, error: f64) -> Ribbon {
        let blocks = Self::blocks_for(items);
        Ribbon {
            blocks,
            lower_blocks: Ribbon::lower_blocks_for(blocks, r, error),
        }
    }

    fn blocks_for(items: u64) -> u64 {
        let wanted = items as f64 * (1.0 + room(items)) + 8.0;
        ((wanted / COEFF_BITS as f64).ceil() as u64).max(1)
    }

    /// Bytes of the ribbon's words.
    pub fn ribbon_len(&self, r: u32) -> Option<u64> {
        self.ribbon.data_len(r)
    }

    /// Bytes of the bitmap.
    pub fn bitmap_len(&self) -> u64 {
        self.ribbon.blocks.div_ceil(64) * 8
    }

    /// Bytes of the data (`None` on overflow).
    pub fn data_len(&self, r: u32) -> Option<u64> {
        self.ribbon_len(r)?
            .checked_add(self.bitmap_len())?
            .checked_add(self.bumped.checked_mul(8)?)
    }

    /// A size a build of `items` keys for `r` and `error` could make: a ribbon whose
    /// mixed columns give the rate ([`Ribbon::is_consistent`]), with the blocks a build
    /// allocates for `items` give or take one (the room is a float `log2`, which another
    /// platform's libm may round an ulp apart: never a difference of two blocks), and no
    /// more bumped keys than items.
    pub fn is_consistent(&self, items: u64, r: u32, error: f64) -> bool {
        self.ribbon.is_consistent(r, error)
            && self.ribbon.blocks.abs_diff(Self::blocks_for(items)) <= 1
            && self.bumped <= items
    }

    /// Whether the hash `h` is one of the bumped keys' (the data past the ribbon's words:
    /// the bitmap, then the sorted hashes).
    #[inline]
    pub(crate) fn holds(&self, rest: &[u8], h: u64) -> bool {
        if self.bumped == 0 {
            return false;
        }
        let start = ((u128::from(h) * u128::from(self.ribbon.starts())) >> 64) as u64;
        let block = (start / COEFF_BITS) as usize;
        let Some(word) = rest.get(block / 64 * 8..block / 64 * 8 + 8) else {
            return false;
        };
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        if (word >> (block % 64)) & 1 == 0 {
            return false;
        }
        let Some(list) = rest.get(self.bitmap_len() as usize..) else {
            return false;
        };
        let list = list.as_chunks::<8>().0;
        if list.is_empty() {
            return false;
        }
        // A binary search without a data-dependent branch (the halving is a select): the
        // last entry at most `h`, then one comparison.
        let value = |i: usize| u64::from_le_bytes(list[i]);
        let (mut base, mut len) = (0usize, list.len());
        while len > 1 {
            let half = len / 2;
            base = if value(base + half) <= h {
                base + half
            } else {
                base
            };
            len -= half;
        }
        value(base) == h
    }

    /// Writes the bitmap and the bumped hashes (ascending) after the ribbon's words.
    pub(crate) fn write_rest(&self, bumped: &[u64], rest: &mut [u8]) {
        let starts = u128::from(self.ribbon.starts());
        for &h in bumped {
            let block = (((u128::from(h) * starts) >> 64) as u64 / COEFF_BITS) as usize;
            rest[block / 64 * 8 + (block % 64) / 8] |= 1 << (block % 8);
        }
        let list = &mut rest[self.bitmap_len() as usize..];
        for (at, h) in list.chunks_exact_mut(8).zip(bumped) {
            at.copy_from_slice(&h.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Bumped, Ribbon};

    #[test]
    fn a_size_one_block_from_a_builds_is_consistent_two_are_not() {
        for (items, r, error) in [(1u64, 6, 0.01), (1000, 6, 0.01), (10_000_000, 13, 1e-4)] {
            let built = Bumped {
                ribbon: Bumped::ribbon_for(items, r, error),
                bumped: items / 64,
            };
            assert!(built.is_consistent(items, r, error));
            let with_blocks = |blocks: u64| Bumped {
                ribbon: Ribbon {
                    blocks,
                    lower_blocks: Ribbon::lower_blocks_for(blocks, r, error),
                },
                ..built
            };
            let b = built.ribbon.blocks;
            assert!(with_blocks(b + 1).is_consistent(items, r, error));
            assert!(!with_blocks(b + 2).is_consistent(items, r, error));
            if b > 2 {
                assert!(with_blocks(b - 1).is_consistent(items, r, error));
                assert!(!with_blocks(b - 2).is_consistent(items, r, error));
            }
            let mut rate = built;
            rate.ribbon.lower_blocks ^= 1;
            assert!(!rate.is_consistent(items, r, error));
            assert!(!Bumped {
                bumped: items + 1,
                ..built
            }
            .is_consistent(items, r, error));
        }
    }
}
