//! Sizing of a Cuckoo filter, as RedisBloom computes it (COMPAT §8.1): the limits of its
//! layout, the defaults, the base bucket count for a capacity, the rounded expansion and
//! each sub-filter's bucket count; and the range checks every stored filter must pass.

use super::CuckooError;
use crate::limits;

/// Largest bucket count of a sub-filter (RedisBloom keeps it in a 56-bit field).
pub const MAX_BUCKETS: u64 = (1 << 56) - 1;
/// Largest number of sub-filters (RedisBloom keeps the count in a u16).
pub const MAX_SUB_FILTERS: usize = u16::MAX as usize;
/// Largest accepted bucket size (slots per bucket).
pub const MAX_BUCKET_SIZE: u16 = 255;
/// Largest accepted expansion, requested or stored (one limit for every filter family).
pub const MAX_EXPANSION: u16 = limits::MAX_EXPANSION;

// RedisBloom's defaults (CF.ADD auto-creation and RDB encver < 4), defined in
// `crate::limits`.
pub use limits::CF_DEFAULT_BUCKET_SIZE as DEFAULT_BUCKET_SIZE;
pub use limits::CF_DEFAULT_CAPACITY as DEFAULT_CAPACITY;
pub use limits::CF_DEFAULT_EXPANSION as DEFAULT_EXPANSION;
pub use limits::CF_DEFAULT_MAX_EXPANSIONS as DEFAULT_MAX_EXPANSIONS;
pub use limits::CF_DEFAULT_MAX_ITERATIONS as DEFAULT_MAX_ITERATIONS;

/// Next power of two ≥ `n`, as RedisBloom's `getNextN2` (0 → 0, 1 → 1); `None` above 2^63.
#[inline]
pub fn next_pow2(n: u64) -> Option<u64> {
    if n == 0 {
        Some(0)
    } else {
        n.checked_next_power_of_two()
    }
}

/// The stored expansion for a requested one (COMPAT §8.1): next power of two, 0 → 0, 1 → 1.
/// `None` when the request exceeds 32768 (the stored field is a u16 and 65536 would not fit).
pub fn round_expansion(expansion: u16) -> Option<u16> {
    if expansion > MAX_EXPANSION {
        return None;
    }
    // ≤ 32768 → its next power of two is ≤ 32768 and fits.
    next_pow2(u64::from(expansion)).and_then(|e| u16::try_from(e).ok())
}

/// Base bucket count for a capacity (COMPAT §8.1): next power of two ≥ ⌊capacity / bs⌋,
/// 0 → 1. `None` when `bucket_size` is 0 or the power of two does not fit in a u64
/// (the command layer never passes such a capacity; it is an `Overflow`).
pub fn base_buckets(capacity: u64, bucket_size: u16) -> Option<u64> {
    let per = capacity.checked_div(u64::from(bucket_size))?;
    match next_pow2(per)? {
        0 => Some(1),
        n => Some(n),
    }
}

/// Growth factor `expansion^n` computed as RedisBloom does: a double `pow`, converted to
/// an integer (Rust's `as` saturates where C is undefined; any saturated value fails the
/// 56-bit check that follows anyway).
#[inline]
fn growth_factor(expansion: u16, n: usize) -> u64 {
    f64::from(expansion).powf(n as f64) as u64
}

/// Bucket count of sub-filter number `n` for a base count and an expansion, with
/// RedisBloom's 56-bit limit (`growth > MAX_BUCKETS / base` fails). `None` on overflow or
/// a zero result.
pub fn sub_filter_buckets(base: u64, expansion: u16, n: usize) -> Option<u64> {
    if base == 0 {
        return None;
    }
    let growth = growth_factor(expansion, n);
    if growth == 0 || growth > MAX_BUCKETS / base {
        return None;
    }
    Some(base * growth)
}

/// Creation parameters as given to CF.RESERVE (before rounding). A plain value: public
/// fields, so a caller fills in the options it was given over [`Default`];
/// [`super::CuckooFilter::new`] checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooParams {
    /// Requested capacity (≥ 2 × bucket_size).
    pub capacity: u64,
    /// Slots per bucket, 1..=255.
    pub bucket_size: u16,
    /// Kick-out attempts, 1..=65535.
    pub max_iterations: u16,
    /// Requested expansion, 0..=32768 (rounded up to a power of two when stored).
    pub expansion: u16,
}

impl Default for CuckooParams {
    /// RedisBloom's defaults: capacity 1024, bucket size 2, max iterations 20, expansion 1.
    fn default() -> Self {
        CuckooParams {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
        }
    }
}

/// Check the fields shared by header and RDB loads. `num_filters` is the sub-filter count.
pub(crate) fn validate_fields(
    num_buckets: u64,
    bucket_size: u64,
    max_iterations: u64,
    expansion: u64,
    num_filters: u64,
) -> Result<(), CuckooError> {
    let ok = (1..=u64::from(MAX_BUCKET_SIZE)).contains(&bucket_size)
        && (1..=u64::from(u16::MAX)).contains(&max_iterations)
        && expansion <= u64::from(MAX_EXPANSION)
        // Decision (COMPAT leaves it open): only 0 or a power of two, as every filter
        // RedisBloom creates has; otherwise grown sub-filters would get bucket counts that
        // are not powers of two and the alternate index would stop being an involution.
        && (expansion == 0 || expansion.is_power_of_two())
        && (1..=MAX_SUB_FILTERS as u64).contains(&num_filters)
        && !(expansion == 0 && num_filters > 1)
        && (1..=MAX_BUCKETS).contains(&num_buckets)
        && num_buckets.is_power_of_two();
    if ok {
        Ok(())
    } else {
        Err(CuckooError::InvalidParams)
    }
}
