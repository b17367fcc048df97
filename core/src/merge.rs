//! What the merges of the filter families share (BF.MERGE, CBF.MERGE, CF.MERGE): the
//! operation, the error, the array kernels and the item estimate of a link whose bits
//! came from several filters.
//!
//! The kernels walk the arrays a memory page at a time: a page the operand leaves
//! unchanged (all zero for OR and add, the result already zero for AND and min) is never
//! written, so a merged filter that is mostly empty stays mostly non-resident; the loops
//! inside a page are plain element-wise loops over byte slices, which the compiler turns
//! into vector instructions.

/// Union (OR, counters added) or intersection (AND, the smaller counter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeOp {
    Union,
    Intersect,
}

/// Why a merge was refused; nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeError {
    /// No filter to merge.
    NoOperands,
    /// The operand at this index (of the slice given) differs in shape from operand 0.
    ShapeDiffers(usize),
    /// INTERSECT of the operand at this index, which has more than one link.
    MultiLink(usize),
    /// The result would exceed the memory ceiling.
    TooLarge,
    /// The allocator refused the result's arrays.
    OutOfMemory,
    /// A Cuckoo fingerprint found no slot, and the filter cannot grow where it could go.
    NoSpace,
    /// A Cuckoo filter would need more sub-filters than allowed.
    MaxFilters,
    /// A Cuckoo filter's size limits would be exceeded.
    Overflow,
}

/// Granule of the kernels: a memory page.
const PAGE: usize = 4096;

#[inline]
fn is_zero(page: &[u8]) -> bool {
    page.iter().fold(0u8, |acc, &b| acc | b) == 0
}

/// `dst |= src`, byte for byte (equal lengths).
pub(crate) fn or_into(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    for (d, s) in dst.chunks_mut(PAGE).zip(src.chunks(PAGE)) {
        if is_zero(s) {
            continue;
        }
        for (x, &y) in d.iter_mut().zip(s) {
            *x |= y;
        }
    }
}

/// `dst &= src`, byte for byte (equal lengths).
pub(crate) fn and_into(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    for (d, s) in dst.chunks_mut(PAGE).zip(src.chunks(PAGE)) {
        if is_zero(d) {
            continue;
        }
        for (x, &y) in d.iter_mut().zip(s) {
            *x &= y;
        }
    }
}

/// Adds the 4-bit counters of `src` to those of `dst` (two per byte), each sum stopping
/// at `max`: a saturated counter stays saturated.
pub(crate) fn add_nibbles_into(dst: &mut [u8], src: &[u8], max: u8) {
    debug_assert_eq!(dst.len(), src.len());
    for (d, s) in dst.chunks_mut(PAGE).zip(src.chunks(PAGE)) {
        if is_zero(s) {
            continue;
        }
        for (x, &y) in d.iter_mut().zip(s) {
            let low = ((*x & 0x0f) + (y & 0x0f)).min(max);
            let high = ((*x >> 4) + (y >> 4)).min(max);
            *x = low | (high << 4);
        }
    }
}

/// Each 4-bit counter of `dst` becomes the smaller of it and `src`'s.
pub(crate) fn min_nibbles_into(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    for (d, s) in dst.chunks_mut(PAGE).zip(src.chunks(PAGE)) {
        if is_zero(d) {
            continue;
        }
        for (x, &y) in d.iter_mut().zip(s) {
            let low = (*x & 0x0f).min(y & 0x0f);
            let high = (*x >> 4).min(y >> 4);
            *x = low | (high << 4);
        }
    }
}

/// Set bits of `data`, eight bytes at a time.
pub fn count_ones(data: &[u8]) -> u64 {
    let mut words = data.chunks_exact(8);
    let mut ones = 0u64;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        ones += u64::from(u64::from_le_bytes(bytes).count_ones());
    }
    ones + words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>()
}

/// Sum of the 4-bit counters of `data` (two per byte).
pub(crate) fn sum_nibbles(data: &[u8]) -> u64 {
    data.iter()
        .map(|&b| u64::from(b & 0x0f) + u64::from(b >> 4))
        .sum()
}

/// The items a link of `bits` bits and `hashes` hash functions holds when `set` of its
/// bits are set: −m/k · ln(1 − X/m) (Swamidass and Baldi), rounded, within `[low, high]`
/// (a union holds at least as many items as its largest operand and at most their sum;
/// an intersection at most as many as its smallest). A full link gives `high`.
///
/// Computed with `ln_1p` (the C library's `log1p`, as link sizing uses its `log`): a
/// replica or an AOF replay that merges the same filters gets the same counts.
pub fn estimate_items(set: u64, bits: u64, hashes: u32, low: u64, high: u64) -> u64 {
    if bits == 0 || hashes == 0 || set >= bits {
        return high.max(low);
    }
    let m = bits as f64;
    let estimate = -(m / f64::from(hashes)) * (-(set as f64) / m).ln_1p();
    let estimate = if estimate.is_finite() {
        estimate.round()
    } else {
        f64::MAX
    };
    // `as` saturates; the clamp keeps the estimate inside what the operands allow.
    (estimate as u64).clamp(low, high.max(low))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_over_pages_equal_the_plain_operations() {
        let len = 3 * PAGE + 17;
        let a: Vec<u8> = (0..len)
            .map(|i| if i / PAGE == 1 { 0 } else { (i * 7) as u8 })
            .collect();
        let b: Vec<u8> = (0..len)
            .map(|i| if i / PAGE == 2 { 0 } else { (i * 13 + 5) as u8 })
            .collect();
        let mut or = a.clone();
        or_into(&mut or, &b);
        assert!(or.iter().zip(&a).zip(&b).all(|((&r, &x), &y)| r == x | y));
        let mut and = a.clone();
        and_into(&mut and, &b);
        assert!(and.iter().zip(&a).zip(&b).all(|((&r, &x), &y)| r == x & y));
        let nibble = |x: u8, i: u32| (x >> (4 * i)) & 0x0f;
        let mut add = a.clone();
        add_nibbles_into(&mut add, &b, 15);
        let mut min = a.clone();
        min_nibbles_into(&mut min, &b);
        for (k, (&x, &y)) in a.iter().zip(&b).enumerate() {
            for i in 0..2 {
                let want = (nibble(x, i) + nibble(y, i)).min(15);
                assert_eq!(nibble(add[k], i), want, "add at {k}");
                assert_eq!(nibble(min[k], i), nibble(x, i).min(nibble(y, i)));
            }
        }
        assert_eq!(
            count_ones(&a),
            a.iter().map(|b| u64::from(b.count_ones())).sum::<u64>()
        );
        assert_eq!(sum_nibbles(&[0xf1, 0x23]), 15 + 1 + 2 + 3);
    }

    #[test]
    fn a_saturated_counter_stays_saturated() {
        let mut dst = vec![0xff, 0x0f, 0xf0, 0x77];
        add_nibbles_into(&mut dst, &[0x11, 0x01, 0x10, 0x99], 15);
        assert_eq!(dst, vec![0xff, 0x0f, 0xf0, 0xff]);
    }

    #[test]
    fn estimate_inverts_the_expected_fill() {
        // 1000 items, k = 7, m = 9586: expected set bits m(1 − e^(−kn/m)).
        let (m, k, n) = (9586u64, 7u32, 1000f64);
        let set = (m as f64 * (1.0 - (-f64::from(k) * n / m as f64).exp())).round() as u64;
        let got = estimate_items(set, m, k, 0, u64::MAX);
        assert!((999..=1001).contains(&got), "{got}");
        assert_eq!(estimate_items(set, m, k, 1200, 2000), 1200);
        assert_eq!(estimate_items(set, m, k, 0, 900), 900);
        assert_eq!(estimate_items(m, m, k, 10, 20), 20);
        assert_eq!(estimate_items(0, m, k, 0, 20), 0);
    }
}
