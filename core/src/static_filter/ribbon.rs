//! The ribbon layout (encoding 2's default): a standard ribbon filter (Dillinger & Walzer,
//! "Ribbon filter: practically smaller than Bloom and Xor", 2021) with 128-bit coefficient
//! rows and interleaved solution storage whose columns mix `r` and `r + 1` result bits.
//!
//! **Equations.** A key's hash gives a start slot `s` (below `slots − 127`), a 128-bit
//! coefficient row `c` whose bit 0 is set, and a fingerprint `f`. The filter is a bit
//! matrix `S` (one row per slot, `r` or `r + 1` columns) with `c · S[s .. s + 128] = f`
//! for every key: a lookup computes the left side and compares it with the fingerprint,
//! which an absent key meets with probability 2^-width.
//!
//! **Storage.** Slots form blocks of 128; a block holds one 128-bit word per column (bit
//! `i` of column `j` is column `j` of the block's slot `i`). The first `lower_blocks`
//! blocks have `r` columns, the others `r + 1`; a key checks as many bits as its start
//! block has columns (its second block has at least as many). `lower_blocks` is the
//! largest count whose mixed false-positive rate stays at or below the rate asked, so the
//! memory buys that rate and not the next power of two. Words are little-endian,
//! block after block, column after column.

use super::{mix, BuildError};
use crate::memory::OutOfMemory;

/// Slots per block, and the width of a coefficient row.
pub const COEFF_BITS: u64 = 128;
/// The share of the rate asked that the mix of columns aims at, so that a measured rate
/// (a sample) stays below the rate asked.
pub const TARGET_SHARE: f64 = 0.995;
/// The widest key result (a 32-bit fingerprint).
pub const MAX_COLUMNS: u32 = 32;

/// The size of a ribbon filter: `blocks` of 128 slots, the first `lower_blocks` of which
/// have `r` (the filter's `bits`) columns, the rest `r + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ribbon {
    pub blocks: u64,
    pub lower_blocks: u64,
}

/// Extra slots over the item count, by attempt: a failed construction retries with the
/// next seed, and every fourth retry also grows the array, so that the 64 attempts end
/// with ample room (construction then fails with a negligible probability).
fn overhead(items: u64, attempt: u64) -> f64 {
    // Measured: at 128-bit rows the first seed succeeds most of the time from about
    // 1.2 % + 0.12 % · log2 n (4 % at 10M items; 2 % fails nearly always); past 2^24
    // items that is too little (10^8 items failed seven seeds at 4.4 % and 5.5 %), so
    // 0.5 % more per doubling.
    let log = (items as f64).log2();
    let base = if items < 10_000 {
        0.08
    } else {
        0.012 + 0.0012 * log + 0.005 * (log - 24.0).max(0.0)
    };
    base * (1.0 + 0.25 * (attempt / 4) as f64)
}

impl Ribbon {
    /// The size for `items` distinct keys at construction attempt `attempt` and `r`
    /// lower columns for rate `error`.
    pub fn for_items(items: u64, attempt: u64, r: u32, error: f64) -> Ribbon {
        let wanted = items as f64 * (1.0 + overhead(items, attempt)) + 8.0;
        let blocks = ((wanted / COEFF_BITS as f64).ceil() as u64).max(1);
        Ribbon {
            blocks,
            lower_blocks: Self::lower_blocks_for(blocks, r, error),
        }
    }

    /// The most blocks with `r` columns for which the false-positive rate, averaged over
    /// the start slots, is at most [`TARGET_SHARE`] of `error`.
    pub fn lower_blocks_for(blocks: u64, r: u32, error: f64) -> u64 {
        if r >= MAX_COLUMNS {
            return blocks;
        }
        let starts = (blocks * COEFF_BITS - (COEFF_BITS - 1)) as f64;
        let (lo, hi) = ((-f64::from(r)).exp2(), (-f64::from(r + 1)).exp2());
        let error = error * TARGET_SHARE;
        // lower·128·lo + (starts − lower·128)·hi ≤ starts·error
        let lower = (starts * (error - hi) / (COEFF_BITS as f64 * (lo - hi))).floor();
        if lower.is_nan() || lower < 0.0 {
            0
        } else {
            (lower as u64).min(blocks)
        }
    }

    pub fn slots(&self) -> u64 {
        self.blocks * COEFF_BITS
    }

    /// Start slots a key may get.
    pub fn starts(&self) -> u64 {
        self.slots() - (COEFF_BITS - 1)
    }

    /// Columns of block `b`.
    #[inline]
    pub fn columns(&self, b: u64, r: u32) -> u32 {
        r + u32::from(b >= self.lower_blocks)
    }

    /// Index (in 128-bit words) of block `b`'s first column.
    #[inline]
    pub fn base(&self, b: u64, r: u32) -> u64 {
        b * u64::from(r) + b.saturating_sub(self.lower_blocks)
    }

    /// Bytes of the solution (`None` on overflow).
    pub fn data_len(&self, r: u32) -> Option<u64> {
        let words = self
            .blocks
            .checked_mul(u64::from(r))?
            .checked_add(self.blocks - self.lower_blocks.min(self.blocks))?;
        words.checked_mul(16)
    }

    /// A size a build for `r` and `error` could make: at least one block, fewer than 2^32
    /// slots, `lower_blocks` as [`Ribbon::lower_blocks_for`] gives, `r` 1..=32.
    pub fn is_consistent(&self, r: u32, error: f64) -> bool {
        (1..=MAX_COLUMNS).contains(&r)
            && self.blocks >= 1
            && self.blocks <= u64::from(u32::MAX) / COEFF_BITS
            && self.lower_blocks == Self::lower_blocks_for(self.blocks, r, error)
    }

    /// The false-positive rate of the mixed columns, averaged over the start slots.
    pub fn error_rate(&self, r: u32) -> f64 {
        let starts = self.starts() as f64;
        let lower = (self.lower_blocks * COEFF_BITS).min(self.starts()) as f64;
        let (lo, hi) = ((-f64::from(r)).exp2(), (-f64::from(r + 1)).exp2());
        (lower * lo + (starts - lower) * hi) / starts
    }
}

/// A key's equation: start slot, coefficient row, fingerprint (32 bits; a key uses as many
/// low bits as its start block has columns).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Equation {
    pub start: u64,
    pub coeff: u128,
    pub fingerprint: u32,
}

#[inline]
pub(crate) fn equation(h: u64, starts: u64) -> Equation {
    let start = ((u128::from(h) * u128::from(starts)) >> 64) as u64;
    let lo = h.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let hi = (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let fingerprint = ((h ^ (h >> 31)).wrapping_mul(0x94d0_49bb_1331_11eb) >> 32) as u32;
    Equation {
        start,
        coeff: (u128::from(hi) << 64) | u128::from(lo),
        fingerprint,
    }
}

/// The parity of `x`'s bits: the halves XORed, each nibble's parity in its low bit, their
/// sum (a multiplication) in the top nibble. Seven operations where `count_ones` without a
/// POPCNT instruction (x86-64's baseline) takes about fifteen.
#[inline]
pub(crate) fn parity(x: u128) -> u32 {
    let mut y = (x as u64) ^ ((x >> 64) as u64);
    y ^= y >> 1;
    y ^= y >> 2;
    y = (y & 0x1111_1111_1111_1111).wrapping_mul(0x1111_1111_1111_1111);
    ((y >> 60) & 1) as u32
}

pub(crate) fn mask(columns: u32) -> u32 {
    if columns >= 32 {
        u32::MAX
    } else {
        (1u32 << columns) - 1
    }
}

#[inline]
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn word(data: &[u8], index: usize) -> u128 {
    let at = index * 16;
    u128::from_le_bytes(data[at..at + 16].try_into().expect("sixteen bytes"))
}

/// Whether the key hashed to `h` satisfies its equation in `data` (x86-64 uses the
/// bit-sliced [`super::ribbon_query::contains`], which the tests compare with this one). The row is split once
/// into its part in the start block and its part in the next, so that each column costs
/// two loads, two ANDs and a parity; the columns' parities are compared all at once (no
/// branch per column).
#[inline]
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(crate) fn contains(layout: &Ribbon, r: u32, data: &[u8], h: u64) -> bool {
    let e = equation(h, layout.starts());
    let (b, offset) = (e.start / COEFF_BITS, (e.start % COEFF_BITS) as u32);
    let columns = layout.columns(b, r);
    let first = layout.base(b, r) as usize;
    // Block b's words, then block b + 1's (columns of the start block at most).
    let here = e.coeff << offset;
    let there = if offset == 0 {
        0
    } else {
        e.coeff >> (128 - offset)
    };
    let next = first + columns as usize;
    let width = if offset == 0 { 0 } else { columns as usize };
    let window = &data[first * 16..(next + width) * 16];
    let mut result = 0u32;
    for j in 0..columns as usize {
        let mut x = word(window, j) & here;
        if offset != 0 {
            x ^= word(window, columns as usize + j) & there;
        }
        result |= parity(x) << j;
    }
    result == e.fingerprint & mask(columns)
}

/// The bytes a lookup of the key reads (offset, length), for prefetching.
#[inline]
pub(crate) fn window_bytes(layout: &Ribbon, r: u32, h: u64) -> (usize, usize) {
    let e = equation(h, layout.starts());
    let b = e.start / COEFF_BITS;
    let columns = layout.columns(b, r) as usize;
    let blocks = if e.start.is_multiple_of(COEFF_BITS) {
        1
    } else {
        2
    };
    ((layout.base(b, r) * 16) as usize, blocks * columns * 16)
}

/// The solution of the sorted, distinct hashes' equations, or `None` when two are
/// inconsistent (the caller retries with another seed). With `bumped`, a key whose
/// equation is inconsistent with those before it is left out instead and its hash
/// pushed there (encoding 3 keeps those keys aside): the solution is then always found.
pub(crate) fn solve(
    hashes: &[u64],
    layout: &Ribbon,
    r: u32,
    data_len: u64,
    mut bumped: Option<&mut Vec<u64>>,
) -> Result<Option<Vec<u8>>, BuildError> {
    let slots = layout.slots();
    let mut coeffs: Vec<u128> = zeroed(slots)?;
    let mut rhs: Vec<u32> = zeroed(slots)?;
    let starts = layout.starts();
    for &h in hashes {
        let e = equation(h, starts);
        let columns = layout.columns(e.start / COEFF_BITS, r);
        let (mut at, mut c, mut f) = (e.start as usize, e.coeff, e.fingerprint & mask(columns));
        loop {
            let existing = coeffs[at];
            if existing == 0 {
                coeffs[at] = c;
                rhs[at] = f;
                break;
            }
            c ^= existing;
            f ^= rhs[at];
            if c == 0 {
                if f != 0 {
                    match bumped.as_deref_mut() {
                        Some(out) => out
                            .try_reserve(1)
                            .map(|()| out.push(h))
                            .map_err(|_| OutOfMemory)?,
                        None => return Ok(None),
                    }
                }
                break;
            }
            let shift = c.trailing_zeros();
            at += shift as usize;
            c >>= shift;
        }
    }
    let mut data = crate::zeroed_bytes(data_len)?;
    // Back substitution, last slot first: per column, the solution bits of the 127 slots
    // after the current one (bit 0: the next slot).
    let mut after = [0u128; MAX_COLUMNS as usize + 1];
    for b in (0..layout.blocks).rev() {
        let columns = layout.columns(b, r) as usize;
        let mut words = [0u128; MAX_COLUMNS as usize + 1];
        for i in (0..COEFF_BITS as usize).rev() {
            let slot = b as usize * COEFF_BITS as usize + i;
            let (c, f) = (coeffs[slot] >> 1, rhs[slot]);
            let pivot = coeffs[slot] != 0;
            for j in 0..columns {
                let bit = if pivot {
                    ((f >> j) & 1) ^ parity(c & after[j])
                } else {
                    0
                };
                after[j] = (after[j] << 1) | u128::from(bit);
                words[j] |= u128::from(bit) << i;
            }
        }
        let base = layout.base(b, r);
        for (j, w) in words[..columns].iter().enumerate() {
            let at = ((base + j as u64) * 16) as usize;
            data[at..at + 16].copy_from_slice(&w.to_le_bytes());
        }
    }
    Ok(Some(data))
}

fn zeroed<T: bytemuck::Zeroable>(len: u64) -> Result<Vec<T>, OutOfMemory> {
    let len = usize::try_from(len).map_err(|_| OutOfMemory)?;
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| OutOfMemory)
}

/// The distinct keys hashed under `seed`, sorted (so their start slots ascend).
pub(crate) fn sorted_hashes(keys: &[u64], seed: u64, out: &mut [u64]) {
    for (h, &k) in out.iter_mut().zip(keys) {
        *h = mix(k, seed);
    }
    out.sort_unstable();
}
