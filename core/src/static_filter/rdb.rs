//! The static filter's RDB layout (`RBstaticF`): redbloom's own type and encoding.

use super::{Bumped, Layout, Ribbon, Shape, StaticFilter};
use crate::rdb::{FieldReader, FieldWriter};

/// Current encoding version of the static filter type (3: encoding 2's fields, and the
/// tag 3 for a ribbon with bumped keys). Encodings 1 and 2 still load.
pub const STATIC_ENCODING: i32 = 3;
/// Encoding 2: a layout tag first (fuse or ribbon), then encoding 1's fields or a ribbon's.
pub const TAGGED_ENCODING: i32 = 2;
/// Encoding 1: a binary fuse filter's fields, untagged.
pub const FUSE_ONLY_ENCODING: i32 = 1;
/// The layout tags (encoding 2: fuse and ribbon; encoding 3 adds the bumped ribbon).
const TAG_FUSE: u64 = 1;
const TAG_RIBBON: u64 = 2;
const TAG_BUMPED: u64 = 3;

/// Writes a static filter in encoding 3: the layout tag (1 fuse, 2 ribbon, 3 ribbon with
/// bumped keys, whose bumped count follows the two size fields), seed, items,
/// bits, requested error rate, the two size fields (segment length and count; blocks and
/// lower blocks), pending bytes, checksum, a check of the last two ([`pending_check`]: the
/// checksum covers the complete filter, not how much of it is loaded), the data words.
/// After the tag, a fuse filter's fields are encoding 1's.
pub fn save_static(filter: &StaticFilter, out: &mut impl FieldWriter) {
    let (tag, size) = match filter.layout {
        Layout::Fuse(s) => (TAG_FUSE, [u64::from(s.segment_length), s.segment_count]),
        Layout::Ribbon(r) => (TAG_RIBBON, [r.blocks, r.lower_blocks]),
        Layout::Bumped(b) => (TAG_BUMPED, [b.ribbon.blocks, b.ribbon.lower_blocks]),
    };
    out.unsigned(tag);
    out.unsigned(filter.seed);
    out.unsigned(filter.items);
    out.unsigned(u64::from(filter.bits));
    out.double(filter.error);
    out.unsigned(size[0]);
    out.unsigned(size[1]);
    if let Layout::Bumped(b) = filter.layout {
        out.unsigned(b.bumped);
    }
    out.unsigned(filter.pending);
    out.unsigned(filter.checksum);
    out.unsigned(pending_check(filter.pending, filter.checksum));
    out.buffer(&filter.data);
}

/// Reads a static filter; it must pass every check of [`StaticFilter::from_parts`] (for a
/// complete filter, the checksum over every field and the data). The memory ceiling is
/// not applied: the data already exists.
pub fn load_static(input: &mut impl FieldReader, encver: i32) -> Option<StaticFilter> {
    let tag = match encver {
        FUSE_ONLY_ENCODING => TAG_FUSE,
        TAGGED_ENCODING | STATIC_ENCODING => match input.unsigned()? {
            TAG_BUMPED if encver == TAGGED_ENCODING => return None,
            tag @ (TAG_FUSE | TAG_RIBBON | TAG_BUMPED) => tag,
            _ => return None,
        },
        _ => return None,
    };
    let seed = input.unsigned()?;
    let items = input.unsigned()?;
    let bits = u32::try_from(input.unsigned()?).ok()?;
    let error = input.double()?;
    let size = [input.unsigned()?, input.unsigned()?];
    let bumped = if tag == TAG_BUMPED {
        input.unsigned()?
    } else {
        0
    };
    let pending = input.unsigned()?;
    let checksum = input.unsigned()?;
    if input.unsigned()? != pending_check(pending, checksum) {
        return None;
    }
    let data = input.buffer()?;
    let ribbon = Ribbon {
        blocks: size[0],
        lower_blocks: size[1],
    };
    let layout = match tag {
        TAG_RIBBON => Layout::Ribbon(ribbon),
        TAG_BUMPED => Layout::Bumped(Bumped { ribbon, bumped }),
        _ => Layout::Fuse(Shape {
            segment_length: u32::try_from(size[0]).ok()?,
            segment_count: size[1],
        }),
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
