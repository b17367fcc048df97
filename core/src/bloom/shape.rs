//! The size of a Bloom link, exactly as RedisBloom computes it (COMPAT §5.2): bits per
//! entry, hash count and bit count for a capacity and an error rate, the option bits a
//! chain stores, and the checks a link read from outside must pass.

/// ln 2 and ln² 2, truncated exactly as RedisBloom writes them (sizing depends on the digits).
#[allow(clippy::approx_constant)]
pub const LN2: f64 = 0.693147180559945;
pub const LN2_SQUARED: f64 = 0.480453013918201;

/// Chain option bits (stored in RDB files and dump headers).
pub const OPT_NOROUND: u32 = 1;
pub const OPT_ENTS_IS_BITS: u32 = 2;
pub const OPT_FORCE64: u32 = 4;
pub const OPT_NO_SCALING: u32 = 8;
pub const OPT_ALL: u32 = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING;
/// redbloom's own bit, unused by RedisBloom (whose LOADCHUNK refuses it): every link of the
/// chain has the cache-local layout of [`super::blocked`].
pub const OPT_BLOCKED: u32 = 16;
/// The options a chain may carry here.
pub const OPT_ALL_REDBLOOM: u32 = OPT_ALL | OPT_BLOCKED;

/// Whether a chain's options from outside (dump header, RDB file) describe a filter this
/// code makes or loads: RedisBloom's bits, or a blocked chain as commands create it (64-bit
/// hashes, which the block choice needs; no power-of-two sizing).
pub(crate) fn options_are_loadable(options: u64) -> bool {
    let blocked = u64::from(OPT_BLOCKED);
    if options & blocked == 0 {
        return options & !u64::from(OPT_ALL) == 0;
    }
    options & !u64::from(OPT_ALL_REDBLOOM) == 0
        && options & u64::from(OPT_FORCE64 | OPT_NOROUND) == u64::from(OPT_FORCE64 | OPT_NOROUND)
        && options & u64::from(OPT_ENTS_IS_BITS) == 0
}

/// No real error rate needs more hash functions than this (the smallest positive double
/// gives 1075); a larger count in a dump or RDB file would only make every command spin.
pub const MAX_HASHES: u32 = 1100;

/// Why a link could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The parameters describe no valid filter (capacity 0, error outside (0, 1), ...).
    Invalid,
    /// The bit array would exceed the per-filter memory ceiling.
    TooLarge,
    /// The allocator refused the bit array.
    OutOfMemory,
}

/// The size of a link, computed before anything is allocated.
///
/// A plain value (the fields of RedisBloom's link header): public fields, so a caller can
/// read a shape or describe one it has stored; [`super::Link`] checks any shape it is built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkShape {
    pub entries: u64,
    pub error: f64,
    pub bpe: f64,
    pub hashes: u32,
    pub bits: u64,
    pub bytes: u64,
    pub n2: u8,
    /// The cache-local layout of [`super::blocked`].
    pub blocked: bool,
}

impl LinkShape {
    /// RedisBloom's `bloom_init` sizing for `entries` items at `error` (COMPAT §5.2).
    pub fn new(entries: u64, error: f64, options: u32) -> Result<Self, LinkError> {
        if entries < 1 || error.is_nan() || error <= 0.0 || error >= 1.0 {
            return Err(LinkError::Invalid);
        }
        let bpe = (-(error.ln() / LN2_SQUARED)).abs();
        let mut entries = entries;
        let (bits, n2) = if options & OPT_ENTS_IS_BITS != 0 {
            if entries > 63 {
                return Err(LinkError::Invalid);
            }
            let n2 = entries as u8;
            let bits = 1u64 << n2;
            entries = (bits as f64 / bpe) as u64;
            (bits, n2)
        } else if options & OPT_NOROUND != 0 {
            let wanted = entries as f64 * bpe;
            // A bit count beyond u64 (C would overflow here) is beyond any ceiling.
            if wanted >= u64::MAX as f64 {
                return Err(LinkError::TooLarge);
            }
            ((wanted as u64).max(1), 0)
        } else {
            let wanted = entries as f64 * bpe;
            if !wanted.is_finite() {
                return Err(LinkError::Invalid);
            }
            let exponent = binary_exponent(wanted);
            if exponent > 63 {
                return Err(LinkError::Invalid);
            }
            let n2 = (exponent + 1).clamp(0, 63) as u8;
            let bits = 1u64 << n2;
            let bit_diff = (bits as f64 - wanted) as u64;
            entries = entries.wrapping_add((bit_diff as f64 / bpe) as u64);
            (bits, n2)
        };
        let bytes = if bits % 64 != 0 {
            (bits / 64 + 1) * 8
        } else {
            bits / 8
        };
        let bits = bytes.checked_mul(8).ok_or(LinkError::TooLarge)?;
        let hashes = (LN2 * bpe).ceil();
        if !(1.0..=f64::from(MAX_HASHES)).contains(&hashes) {
            return Err(LinkError::Invalid);
        }
        Ok(LinkShape {
            entries,
            error,
            bpe,
            hashes: hashes as u32,
            bits,
            bytes,
            n2,
            blocked: false,
        })
    }

    /// The shape of a link of a chain with these options: classic or blocked.
    pub fn for_chain(entries: u64, error: f64, options: u32) -> Result<Self, LinkError> {
        if options & OPT_BLOCKED != 0 {
            super::blocked::shape(entries, error)
        } else {
            LinkShape::new(entries, error, options)
        }
    }
}

/// C's `logb` for a positive finite double: the unbiased binary exponent.
pub(super) fn binary_exponent(x: f64) -> i32 {
    if x <= 0.0 {
        return i32::MIN;
    }
    let raw = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if raw == 0 {
        // Subnormal: exponent of the leading mantissa bit.
        let mantissa = x.to_bits() & ((1u64 << 52) - 1);
        return -1022 - (mantissa.leading_zeros() as i32 - 11) - 1;
    }
    raw - 1023
}

/// Whether link metadata from outside (a dump header, an RDB file) is safe to use: every
/// position it can compute lies inside a `bytes`-long bit array, and each add or check does
/// a bounded amount of work.
pub(crate) fn fields_are_consistent(
    error: f64,
    bpe: f64,
    hashes: u32,
    bits: u64,
    bytes: u64,
    n2: u8,
) -> bool {
    let modulus_fits = n2 == 0 || (n2 <= 63 && bits >= 1u64 << n2);
    error > 0.0
        && error < 1.0
        && modulus_fits
        && bits != 0
        && Some(bits) == bytes.checked_mul(8)
        && bpe.is_finite()
        && (1..=MAX_HASHES).contains(&hashes)
        && f64::from(hashes) == (LN2 * bpe).ceil()
}
