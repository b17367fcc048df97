//! Every default and limit a caller of the core needs, defined once: the command layer's
//! argument ranges, its configuration defaults and the core's own checks all name these.
//!
//! The values are RedisBloom's (2.4.20 for defaults, HEAD for the ranges 2.4.20 did not
//! check), so replies and stored fields stay byte-identical.

/// Largest expansion (growth factor) a filter accepts: BF.RESERVE/BF.INSERT and CBF.*
/// EXPANSION, CF.RESERVE EXPANSION (before rounding up to a power of two) and the
/// `bf-expansion-factor` / `cf-expansion-factor` configs, all `0..=32768`. A Cuckoo filter
/// stores its rounded expansion in a u16, where 65536 would not fit. The module's error
/// replies for this range spell the number out (its `errors.rs`); keeping them equal to
/// this value is the module's to check.
pub const MAX_EXPANSION: u16 = 32768;

/// Default per-filter memory ceiling (bytes, as MEMORY USAGE counts a filter) when the
/// caller sets none (`max-filter-bytes`).
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 4 << 30;

/// Error rate of a Bloom filter created without one (BF.ADD, BF.INSERT; `bf-error-rate`).
pub const BF_DEFAULT_ERROR_RATE: f64 = 0.01;
/// [`BF_DEFAULT_ERROR_RATE`]'s bits, for `const` contexts (`f64::to_bits` is `const` only
/// from Rust 1.83; this crate supports 1.80). A unit test keeps the two equal.
pub const BF_DEFAULT_ERROR_RATE_BITS: u64 = 0x3F84_7AE1_47AE_147B;
/// Capacity of a Bloom filter created without one (`bf-initial-size`).
pub const BF_DEFAULT_CAPACITY: u64 = 100;
/// Growth factor of a Bloom filter created without one (`bf-expansion-factor`).
pub const BF_DEFAULT_EXPANSION: u32 = 2;

/// Capacity of a Cuckoo filter created without one (CF.ADD; `cf-initial-size`).
pub const CF_DEFAULT_CAPACITY: u64 = 1024;
/// Slots per bucket by default (`cf-bucket-size`); also what RDB encodings before 4 imply.
pub const CF_DEFAULT_BUCKET_SIZE: u16 = 2;
/// Kick-out attempts by default (`cf-max-iterations`); also implied by old RDB encodings.
pub const CF_DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Expansion by default (`cf-expansion-factor`); also implied by old RDB encodings.
pub const CF_DEFAULT_EXPANSION: u16 = 1;
/// Sub-filters a Cuckoo filter may grow to before `Maximum expansions reached`
/// (`cf-max-expansions`, RedisBloom's `CF_MAX_EXPANSIONS`). The command layer enforces it;
/// the core does not.
pub const CF_DEFAULT_MAX_EXPANSIONS: usize = 32;

/// Error rate of an expandable filter created without one (XF.ADD, XF.RESERVE).
pub const XF_DEFAULT_ERROR_RATE: f64 = 0.01;
/// Initial capacity of an expandable filter created without one: small, since it grows
/// item by item at no cost in accuracy (creating on first use is the normal way).
pub const XF_DEFAULT_CAPACITY: u64 = 100;
/// Smallest error rate an expandable filter accepts (its fingerprints, widened as it
/// grows, must stay within the 64 hash bits).
pub const XF_MIN_ERROR_RATE: f64 = 1e-9;
/// Largest initial capacity of an expandable filter.
pub const XF_MAX_CAPACITY: u64 = 1 << 40;
/// Most bytes of partitions one XF.SCANDUMP chunk holds (a chunk holds at least one
/// partition, and a partition is always smaller than this).
pub const XF_CHUNK_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_rate_bits_are_the_error_rate() {
        assert_eq!(BF_DEFAULT_ERROR_RATE.to_bits(), BF_DEFAULT_ERROR_RATE_BITS);
        assert_eq!(f64::from_bits(BF_DEFAULT_ERROR_RATE_BITS), 0.01);
    }

    #[test]
    fn the_expansion_limit_fits_every_stored_field() {
        // A Cuckoo filter stores the rounded expansion in a u16; the limit is a power of
        // two, so rounding it up stays within the field.
        assert!(MAX_EXPANSION.is_power_of_two());
        assert_eq!(u32::from(MAX_EXPANSION), 32768);
        assert!(crate::counting::MAX_GROWTH == u32::from(MAX_EXPANSION));
    }
}
