//! The Count-Min Sketch's RDB layout (`CMSk-TYPE`, encoding 0), RedisBloom's: width,
//! depth and count as unsigned fields, then the counters as one string of `width × depth`
//! little-endian `u32`s. DUMP payloads carry the same fields, so they move both ways.

use super::CountMinSketch;
use crate::rdb::{FieldReader, FieldWriter};

/// The encoding version of the Count-Min Sketch type (RedisBloom's `CMS_ENC_VER`).
pub const CMS_ENCODING: i32 = 0;

/// Writes a sketch in encoding 0.
pub fn save_cms(cms: &CountMinSketch, out: &mut impl FieldWriter) {
    out.unsigned(cms.width);
    out.unsigned(cms.depth);
    out.unsigned(cms.count);
    out.buffer(&cms.counters);
}

/// Reads a sketch of encoding 0. The counter string must be exactly `width × depth × 4`
/// bytes and both dimensions within what CMS.INITBYDIM accepts (RedisBloom 2.4.20 checked
/// neither and read past its buffer; 2.6 checks the length).
pub fn load_cms(input: &mut impl FieldReader, encver: i32) -> Option<CountMinSketch> {
    if encver != CMS_ENCODING {
        return None;
    }
    let width = input.unsigned()?;
    let depth = input.unsigned()?;
    let count = input.unsigned()?;
    let counters = input.buffer()?;
    CountMinSketch::from_parts(width, depth, count, counters)
}
