//! The Count-Min Sketch's RDB layouts (`CMSk-TYPE`). DUMP payloads carry the same fields, so
//! they move both ways.
//!
//! - Encoding 0, RedisBloom's: width, depth and count as unsigned fields, then the counters
//!   as one string of `width × depth` little-endian `u32`s.
//! - Encoding 1, RedisBloom 8.12's (read only): width, depth, count, cell size, then the
//!   counters as one string of `width × depth × cell size` bytes.
//!
//! Redis writes one encoding version per module type (the registered one, in every value's
//! type id), so the type stays registered as encoding 0 and a 4-byte sketch is written as
//! RedisBloom 2.4.20 writes it. A sketch of 1-, 2- or 8-byte cells cannot be expressed in
//! encoding 0: it is written under encoding 0 as width, depth, count, its counters
//! (`width × depth × cell size` bytes) and the cell size after them. Every RedisBloom since
//! 2.6 refuses it (its counter string is not `width × depth × 4` bytes); redbloom tells the
//! two apart by that length, which for 1, 2 and 8 never equals `width × depth × 4`.

use super::{is_cell_size, CountMinSketch, DEFAULT_CELL_SIZE};
use crate::rdb::{FieldReader, FieldWriter};

/// The encoding version the Count-Min Sketch type is registered with (RedisBloom's
/// `CMS_ENC_VER` before 8.12).
pub const CMS_ENCODING: i32 = 0;

/// RedisBloom 8.12's encoding, with the cell size before the counters.
pub const CMS_CELL_SIZE_ENCODING: i32 = 1;

/// Writes a sketch in encoding 0 (a cell size other than 4 after the counters).
pub fn save_cms(cms: &CountMinSketch, out: &mut impl FieldWriter) {
    out.unsigned(cms.width);
    out.unsigned(cms.depth);
    out.unsigned(cms.count);
    out.buffer(&cms.counters);
    if cms.cell_size != DEFAULT_CELL_SIZE {
        out.unsigned(u64::from(cms.cell_size));
    }
}

/// Writes a sketch in RedisBloom 8.12's encoding 1 (tests and tools: the module writes
/// [`save_cms`]).
pub fn save_cms_v1(cms: &CountMinSketch, out: &mut impl FieldWriter) {
    out.unsigned(cms.width);
    out.unsigned(cms.depth);
    out.unsigned(cms.count);
    out.unsigned(u64::from(cms.cell_size));
    out.buffer(&cms.counters);
}

/// Reads a sketch of encoding 0 or 1. The counter string must be exactly `width × depth ×
/// cell size` bytes, the cell size 1, 2, 4 or 8, and both dimensions within what
/// CMS.INITBYDIM accepts (RedisBloom 2.4.20 checked neither and read past its buffer; 2.6
/// checks the length). Nothing is allocated from a size before the string that must match
/// it has been read.
pub fn load_cms(input: &mut impl FieldReader, encver: i32) -> Option<CountMinSketch> {
    let width = input.unsigned()?;
    let depth = input.unsigned()?;
    let count = input.unsigned()?;
    match encver {
        CMS_ENCODING => {
            let counters = input.buffer()?;
            let cells = width.checked_mul(depth)?;
            let cell_size = match cells.checked_mul(u64::from(DEFAULT_CELL_SIZE)) {
                Some(bytes) if bytes == counters.len() as u64 => u64::from(DEFAULT_CELL_SIZE),
                _ => input
                    .unsigned()
                    .filter(|&size| size != 4 && is_cell_size(size))?,
            };
            CountMinSketch::from_parts(width, depth, count, cell_size, counters)
        }
        CMS_CELL_SIZE_ENCODING => {
            let cell_size = input.unsigned().filter(|&size| is_cell_size(size))?;
            let counters = input.buffer()?;
            CountMinSketch::from_parts(width, depth, count, cell_size, counters)
        }
        _ => None,
    }
}
