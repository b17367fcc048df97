//! A ribbon lookup with SSE2 (x86-64's baseline): the parities of all of a key's result
//! columns at once, bit-sliced, on the same bytes and with the same answer as
//! [`super::ribbon::contains`] (which other targets use, and the tests compare against).
//!
//! Per column, one 128-bit AND with the row's part in the start block, one with its part
//! in the next block, one XOR: the column's 128 product bits. Eight columns' product
//! words are then folded together, halving each word's width at every step while packing
//! two words into one register (128 → 64 bits by unpacking, 64 → 32 by a shuffle, 32 → 16
//! by shifts and masks), until each 16-bit lane holds one column; three more shift-XOR
//! steps leave each lane's parity in its bit 0, and a byte mask gathers the eight bits.
//! About 70 instructions for eight columns where one parity at a time takes about 150.
//! The column count a key gets (`r` or `r + 1`, by its block) is masked, not branched on.

use super::ribbon::{equation, mask, Ribbon, COEFF_BITS};
use safe_arch::{
    bitand_m128i, bitxor_m128i, cast_to_m128_from_m128i, cast_to_m128i_from_m128,
    load_unaligned_m128i, m128i, move_mask_i8_m128i, shl_imm_u16_m128i, shl_imm_u32_m128i,
    shr_imm_u16_m128i, shr_imm_u32_m128i, shuffle_abi_f32_all_m128, unpack_high_i64_m128i,
    unpack_low_i64_m128i, zeroed_m128i,
};

/// The words (128 bits each) of the data.
fn words(data: &[u8]) -> &[[u8; 16]] {
    data.as_chunks::<16>().0
}

fn vector(x: u128) -> m128i {
    m128i::from(x.to_le_bytes())
}

/// The parities of eight 128-bit words, word `k`'s in bit `2k + 1` of a 16-bit mask when
/// the words come in the order columns 0, 2, 4, 6, 1, 3, 5, 7 (see [`GROUP_ORDER`]).
#[inline(always)]
fn parities(x: [m128i; 8]) -> u32 {
    // 128 → 64: [x0, x1] as 64-bit lanes, each lane the XOR of its word's halves.
    let fold64 =
        |a: m128i, b: m128i| bitxor_m128i(unpack_low_i64_m128i(a, b), unpack_high_i64_m128i(a, b));
    let (y01, y23, y45, y67) = (
        fold64(x[0], x[1]),
        fold64(x[2], x[3]),
        fold64(x[4], x[5]),
        fold64(x[6], x[7]),
    );
    // 64 → 32: the low halves of four lanes against their high halves.
    let fold32 = |a: m128i, b: m128i| {
        let (a, b) = (cast_to_m128_from_m128i(a), cast_to_m128_from_m128i(b));
        bitxor_m128i(
            cast_to_m128i_from_m128(shuffle_abi_f32_all_m128::<0b10_00_10_00>(a, b)),
            cast_to_m128i_from_m128(shuffle_abi_f32_all_m128::<0b11_01_11_01>(a, b)),
        )
    };
    let (z0, z1) = (fold32(y01, y23), fold32(y45, y67));
    // 32 → 16: z0's lanes folded into the low halves, z1's into the high halves.
    let low = m128i::from([0x0000_ffffu32; 4]);
    let lows = bitand_m128i(bitxor_m128i(z0, shr_imm_u32_m128i::<16>(z0)), low);
    let highs = bitxor_m128i(z1, shl_imm_u32_m128i::<16>(z1));
    let mut w = bitxor_m128i(lows, bitand_m128i(highs, m128i::from([0xffff_0000u32; 4])));
    // 16 → 1 in each lane (bits above the ones folded are left as they fall).
    w = bitxor_m128i(w, shr_imm_u16_m128i::<8>(w));
    w = bitxor_m128i(w, shr_imm_u16_m128i::<4>(w));
    w = bitxor_m128i(w, shr_imm_u16_m128i::<2>(w));
    w = bitxor_m128i(w, shr_imm_u16_m128i::<1>(w));
    // Bit 0 of each lane to its top bit, the rest cleared; the byte mask takes the tops.
    move_mask_i8_m128i(shl_imm_u16_m128i::<15>(w)) as u32
}

/// Which column of a group of eight goes in which of [`parities`]' words so that column
/// `k`'s parity lands in bit `2k + 1`.
const GROUP_ORDER: [usize; 8] = [0, 2, 4, 6, 1, 3, 5, 7];

/// `x`'s 32 bits spread to the odd bits of a 64-bit word (bit `k` to bit `2k + 1`).
#[inline(always)]
fn spread(x: u32) -> u64 {
    let mut v = u64::from(x);
    v = (v | (v << 16)) & 0x0000_ffff_0000_ffff;
    v = (v | (v << 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v | (v << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    v = (v | (v << 2)) & 0x3333_3333_3333_3333;
    v = (v | (v << 1)) & 0x5555_5555_5555_5555;
    v << 1
}

/// Whether the key hashed to `h` satisfies its equation in `data` (what
/// [`super::ribbon::contains`] answers). The filter's `r` picks a version compiled for
/// `r + 1` columns (a jump the same for every key of a filter; 32 for `r` = 32); a key
/// whose block has `r` columns masks the last one off instead of branching on it (which of the two a key gets
/// is random, so a branch on it would be mispredicted often).
#[inline]
pub(crate) fn contains(layout: &Ribbon, r: u32, data: &[u8], h: u64) -> bool {
    let e = equation(h, layout.starts());
    let (b, offset) = (e.start / COEFF_BITS, (e.start % COEFF_BITS) as u32);
    let columns = layout.columns(b, r);
    let first = layout.base(b, r) as usize;
    let here = vector(e.coeff << offset);
    // At offset 0 the row lies in the start block alone: the "next block" part reads the
    // start block again under a zero mask (the next block may not exist).
    let (there, next) = if offset == 0 {
        (zeroed_m128i(), first)
    } else {
        (vector(e.coeff >> (128 - offset)), first + columns as usize)
    };
    let width = columns as usize;
    let words = words(data);
    let blocks = (&words[first..first + width], &words[next..next + width]);
    let expected = spread(e.fingerprint & mask(columns));
    macro_rules! by_width {
        ($($r:literal => $c:literal),*) => {
            match r {
                $($r => check::<$c>(blocks, here, there, expected),)*
                // A layout `from_parts` accepts has 1 to 32 for `r`.
                _ => false,
            }
        };
    }
    by_width!(1 => 2, 2 => 3, 3 => 4, 4 => 5, 5 => 6, 6 => 7, 7 => 8, 8 => 9, 9 => 10,
        10 => 11, 11 => 12, 12 => 13, 13 => 14, 14 => 15, 15 => 16, 16 => 17, 17 => 18,
        18 => 19, 19 => 20, 20 => 21, 21 => 22, 22 => 23, 23 => 24, 24 => 25, 25 => 26,
        26 => 27, 27 => 28, 28 => 29, 29 => 30, 30 => 31, 31 => 32,
        // Every block of a 32-bit filter has 32 columns.
        32 => 32)
}

/// The parities of up to `C` column products, spread as [`spread`] spreads the
/// fingerprint, against `expected`. The blocks' word slices are `C − 1` or `C` long: the
/// product of column `C − 1` reads each slice's last word and is masked off (ANDed with
/// zero, no branch) when they are `C − 1` long.
#[inline]
fn check<const C: usize>(
    (this_block, next_block): (&[[u8; 16]], &[[u8; 16]]),
    here: m128i,
    there: m128i,
    expected: u64,
) -> bool {
    let (Some(this_last), Some(next_last)) = (this_block.last(), next_block.last()) else {
        return false;
    };
    if this_block.len() + 1 < C || next_block.len() + 1 < C {
        return false;
    }
    let full = -i64::from(this_block.len() == C);
    let last = m128i::from([full, full]);
    let product = |a: &[u8; 16], b: &[u8; 16]| {
        bitxor_m128i(
            bitand_m128i(load_unaligned_m128i(a), here),
            bitand_m128i(load_unaligned_m128i(b), there),
        )
    };
    let column = |j: usize| {
        if j + 1 < C {
            product(&this_block[j], &next_block[j])
        } else if j + 1 == C {
            bitand_m128i(product(this_last, next_last), last)
        } else {
            zeroed_m128i()
        }
    };
    let mut found = 0u64;
    for group in 0..C.div_ceil(8) {
        let x = GROUP_ORDER.map(|k| column(group * 8 + k));
        found |= u64::from(parities(x)) << (16 * group);
    }
    found == expected
}
