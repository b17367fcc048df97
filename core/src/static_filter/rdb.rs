//! The static filter's RDB layout (`RBstaticF`): redbloom's own type and encoding.

use super::{Layout, Ribbon, Shape, StaticFilter};
use crate::rdb::{FieldReader, FieldWriter};

/// Current encoding version of the static filter type (2: a layout tag first, fuse or
/// ribbon). Encoding 1 (binary fuse filters only, no tag) still loads.
pub const STATIC_ENCODING: i32 = 2;
/// Encoding 1: a binary fuse filter's fields, untagged.
pub const FUSE_ONLY_ENCODING: i32 = 1;
/// Encoding 2's layout tags.
const TAG_FUSE: u64 = 1;
const TAG_RIBBON: u64 = 2;

/// Writes a static filter in encoding 2: the layout tag (1 fuse, 2 ribbon), seed, items,
/// bits, requested error rate, the two size fields (segment length and count; blocks and
/// lower blocks), pending bytes, checksum, a check of the last two ([`pending_check`]: the
/// checksum covers the complete filter, not how much of it is loaded), the data words.
/// After the tag, a fuse filter's fields are encoding 1's.
pub fn save_static(filter: &StaticFilter, out: &mut impl FieldWriter) {
    let (tag, size) = match filter.layout {
        Layout::Fuse(s) => (TAG_FUSE, [u64::from(s.segment_length), s.segment_count]),
        Layout::Ribbon(r) => (TAG_RIBBON, [r.blocks, r.lower_blocks]),
    };
    out.unsigned(tag);
    out.unsigned(filter.seed);
    out.unsigned(filter.items);
    out.unsigned(u64::from(filter.bits));
    out.double(filter.error);
    out.unsigned(size[0]);
    out.unsigned(size[1]);
    out.unsigned(filter.pending);
    out.unsigned(filter.checksum);
    out.unsigned(pending_check(filter.pending, filter.checksum));
    out.buffer(&filter.data);
}

/// Reads a static filter; it must pass every check of [`StaticFilter::from_parts`] (for a
/// complete filter, the checksum over every field and the data). The memory ceiling is
/// not applied: the data already exists.
pub fn load_static(input: &mut impl FieldReader, encver: i32) -> Option<StaticFilter> {
    let ribbon = match encver {
        FUSE_ONLY_ENCODING => false,
        STATIC_ENCODING => match input.unsigned()? {
            TAG_FUSE => false,
            TAG_RIBBON => true,
            _ => return None,
        },
        _ => return None,
    };
    let seed = input.unsigned()?;
    let items = input.unsigned()?;
    let bits = u32::try_from(input.unsigned()?).ok()?;
    let error = input.double()?;
    let size = [input.unsigned()?, input.unsigned()?];
    let pending = input.unsigned()?;
    let checksum = input.unsigned()?;
    if input.unsigned()? != pending_check(pending, checksum) {
        return None;
    }
    let data = input.buffer()?;
    let layout = if ribbon {
        Layout::Ribbon(Ribbon {
            blocks: size[0],
            lower_blocks: size[1],
        })
    } else {
        Layout::Fuse(Shape {
            segment_length: u32::try_from(size[0]).ok()?,
            segment_count: size[1],
        })
    };
    StaticFilter::from_parts(seed, items, bits, error, layout, data, pending, checksum)
}

/// What makes a damaged pending count an error: XXH3 of it and the checksum.
fn pending_check(pending: u64, checksum: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&pending.to_le_bytes());
    bytes[8..].copy_from_slice(&checksum.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}
