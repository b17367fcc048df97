//! The static filter's RDB layout (`RBstaticF`): redbloom's own type and encoding.

use super::{Shape, StaticFilter};
use crate::rdb::{FieldReader, FieldWriter};

/// Current (and only) encoding version of the static filter type.
pub const STATIC_ENCODING: i32 = 1;

/// Writes a static filter in encoding 1: seed, items, bits, requested error rate, segment
/// length, segment count, pending bytes, checksum, a check of the last two
/// ([`pending_check`]: the checksum covers the complete filter, not how much of it is
/// loaded), the fingerprint words.
pub fn save_static(filter: &StaticFilter, out: &mut impl FieldWriter) {
    out.unsigned(filter.seed);
    out.unsigned(filter.items);
    out.unsigned(u64::from(filter.bits));
    out.double(filter.error);
    out.unsigned(u64::from(filter.shape.segment_length));
    out.unsigned(filter.shape.segment_count);
    out.unsigned(filter.pending);
    out.unsigned(filter.checksum);
    out.unsigned(pending_check(filter.pending, filter.checksum));
    out.buffer(&filter.data);
}

/// Reads a static filter; it must pass every check of [`StaticFilter::from_parts`] (for a
/// complete filter, the checksum over every field and the data). The memory ceiling is
/// not applied: the data already exists.
pub fn load_static(input: &mut impl FieldReader, encver: i32) -> Option<StaticFilter> {
    if encver != STATIC_ENCODING {
        return None;
    }
    let seed = input.unsigned()?;
    let items = input.unsigned()?;
    let bits = u32::try_from(input.unsigned()?).ok()?;
    let error = input.double()?;
    let segment_length = u32::try_from(input.unsigned()?).ok()?;
    let segment_count = input.unsigned()?;
    let pending = input.unsigned()?;
    let checksum = input.unsigned()?;
    if input.unsigned()? != pending_check(pending, checksum) {
        return None;
    }
    let data = input.buffer()?;
    let shape = Shape {
        segment_length,
        segment_count,
    };
    StaticFilter::from_parts(seed, items, bits, error, shape, data, pending, checksum)
}

/// What makes a damaged pending count an error: XXH3 of it and the checksum.
fn pending_check(pending: u64, checksum: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&pending.to_le_bytes());
    bytes[8..].copy_from_slice(&checksum.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}
