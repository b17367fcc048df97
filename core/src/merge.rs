//! What the merges of the filter families share (BF.MERGE, CBF.MERGE, CF.MERGE): the
//! operation, the error, the array kernels and the item estimate of a link whose bits
//! came from several filters.
//!
//! The kernels build the result in one pass, a memory page at a time: every source page is
//! read once and the result page written once (merging two 1 GiB arrays moves 3 GiB, not
//! the 5 GiB of a copy followed by an in-place OR); a result page that stays zero is never
//! written, so a merged filter that is mostly empty stays mostly non-resident. The loops
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
    /// A Cuckoo sub-filter of 4 GiB or more: its lookups truncate bucket offsets to 32 bits
    /// (RedisBloom's layout), so a stored fingerprint's bucket cannot be told.
    HugeSubFilter,
}

use crate::memory::{zeroed_bytes, OutOfMemory};

/// Granule of the kernels: a memory page.
const PAGE: usize = 4096;

#[inline]
fn is_zero(page: &[u8]) -> bool {
    page.iter().fold(0u8, |acc, &b| acc | b) == 0
}

/// A new array combining `sources` (at least one, all of one length) byte by byte with
/// `f`, in one pass: each page of the result is written once, from the sources' pages.
/// `zero_absorbs`: a zero source page makes the result page zero (AND, min), else a zero
/// source page changes nothing (OR, add); a result page that stays zero is never written.
pub(crate) fn combine(
    sources: &[&[u8]],
    zero_absorbs: bool,
    f: impl Fn(u8, u8) -> u8 + Copy,
) -> Result<Vec<u8>, OutOfMemory> {
    let Some(first) = sources.first() else {
        return Ok(Vec::new());
    };
    debug_assert!(sources.iter().all(|s| s.len() == first.len()));
    let mut out = zeroed_bytes(first.len() as u64)?;
    for (p, page) in out.chunks_mut(PAGE).enumerate() {
        let at = p * PAGE..p * PAGE + page.len();
        let zero = |s: &&[u8]| is_zero(&s[at.clone()]);
        let skip = if zero_absorbs {
            sources.iter().any(zero)
        } else {
            sources.iter().all(zero)
        };
        if skip {
            continue;
        }
        page.copy_from_slice(&first[at.clone()]);
        for source in &sources[1..] {
            let source = &source[at.clone()];
            if !zero_absorbs && is_zero(source) {
                continue;
            }
            for (x, &y) in page.iter_mut().zip(source) {
                *x = f(*x, y);
            }
        }
    }
    Ok(out)
}

/// The OR of bit arrays.
pub(crate) fn or_all(sources: &[&[u8]]) -> Result<Vec<u8>, OutOfMemory> {
    combine(sources, false, |x, y| x | y)
}

/// The AND of bit arrays.
pub(crate) fn and_all(sources: &[&[u8]]) -> Result<Vec<u8>, OutOfMemory> {
    combine(sources, true, |x, y| x & y)
}

/// The sums of 4-bit counter arrays (two counters per byte), each sum stopping at `max`:
/// a saturated counter stays saturated.
pub(crate) fn add_nibbles_all(sources: &[&[u8]], max: u8) -> Result<Vec<u8>, OutOfMemory> {
    combine(sources, false, move |x, y| {
        let low = ((x & 0x0f) + (y & 0x0f)).min(max);
        let high = ((x >> 4) + (y >> 4)).min(max);
        low | (high << 4)
    })
}

/// The smaller of each 4-bit counter of counter arrays.
pub(crate) fn min_nibbles_all(sources: &[&[u8]]) -> Result<Vec<u8>, OutOfMemory> {
    combine(sources, true, |x, y| {
        (x & 0x0f).min(y & 0x0f) | ((x >> 4).min(y >> 4) << 4)
    })
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
        let or = or_all(&[&a, &b]).unwrap();
        assert!(or.iter().zip(&a).zip(&b).all(|((&r, &x), &y)| r == x | y));
        let and = and_all(&[&a, &b]).unwrap();
        assert!(and.iter().zip(&a).zip(&b).all(|((&r, &x), &y)| r == x & y));
        assert_eq!(or_all(&[&a]).unwrap(), a);
        let nibble = |x: u8, i: u32| (x >> (4 * i)) & 0x0f;
        let add = add_nibbles_all(&[&a, &b], 15).unwrap();
        let min = min_nibbles_all(&[&a, &b]).unwrap();
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

    /// The pages a kernel may skip (zero, for OR and add; any zero, for AND and min) in
    /// every position: each of 3 sources empty, full, zero but for one page (the first, a
    /// middle or the last) or mixed, over lengths of less than a page, one page and pages
    /// plus a tail — every one of the 6^3 orders, against the plain byte-by-byte
    /// operation. A kernel that stops at a source's first zero page, or skips a page
    /// because one source is full, differs somewhere here.
    #[test]
    fn kernels_equal_the_plain_operations_with_empty_full_and_one_page_sources_anywhere() {
        type Kernel = fn(&[&[u8]]) -> Result<Vec<u8>, OutOfMemory>;
        type Plain = fn(u8, u8) -> u8;
        let kernels: [(&str, Kernel, Plain); 4] = [
            ("or", or_all, |x, y| x | y),
            ("and", and_all, |x, y| x & y),
            (
                "add",
                |s| add_nibbles_all(s, 15),
                |x, y| (((x & 0x0f) + (y & 0x0f)).min(15)) | ((((x >> 4) + (y >> 4)).min(15)) << 4),
            ),
            ("min", min_nibbles_all, |x, y| {
                (x & 0x0f).min(y & 0x0f) | ((x >> 4).min(y >> 4) << 4)
            }),
        ];
        for len in [100, PAGE, 3 * PAGE + 17] {
            let pages = len.div_ceil(PAGE);
            let one_page = |page: usize, seed: usize| -> Vec<u8> {
                (0..len)
                    .map(|i| {
                        if i / PAGE == page {
                            (i * seed + 1) as u8 | 1
                        } else {
                            0
                        }
                    })
                    .collect()
            };
            let patterns: Vec<(&str, Vec<u8>)> = vec![
                ("empty", vec![0; len]),
                ("full", vec![0xff; len]),
                ("first page", one_page(0, 7)),
                ("middle page", one_page(pages / 2, 11)),
                ("last page", one_page(pages - 1, 13)),
                ("mixed", (0..len).map(|i| (i * 29 + 3) as u8).collect()),
            ];
            for a in &patterns {
                for b in &patterns {
                    for c in &patterns {
                        let sources: [&[u8]; 3] = [&a.1, &b.1, &c.1];
                        for (name, kernel, plain) in &kernels {
                            let got = kernel(&sources).unwrap();
                            let want: Vec<u8> = (0..len)
                                .map(|i| plain(plain(a.1[i], b.1[i]), c.1[i]))
                                .collect();
                            assert!(
                                got == want,
                                "{name} of {} / {} / {} over {len} bytes",
                                a.0,
                                b.0,
                                c.0
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_saturated_counter_stays_saturated() {
        let dst = [0xff, 0x0f, 0xf0, 0x77];
        let sum = add_nibbles_all(&[&dst, &[0x11, 0x01, 0x10, 0x99]], 15).unwrap();
        assert_eq!(sum, vec![0xff, 0x0f, 0xf0, 0xff]);
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
