//! The expandable filter's RDB layout (`RBexpandF`): redbloom's own type. The fields are
//! the SCANDUMP header ([`dump`](super::dump)) as one buffer, the number of chunks, then
//! each chunk as a buffer, so a load runs the same checks as XF.LOADCHUNK.

use super::dump::{chunk, chunk_count, header, Loader};
use super::XFilter;
use crate::rdb::{FieldReader, FieldWriter};

/// Current encoding version of the expandable filter type.
pub const XF_ENCODING: i32 = 1;

/// Writes `f`: the header, the chunk count, the chunks.
pub fn save_xf(f: &XFilter, out: &mut impl FieldWriter) {
    out.buffer(&header(f));
    out.unsigned(chunk_count(f));
    let mut iter = 1;
    while let Some((next, data)) = chunk(f, iter) {
        out.buffer(&data);
        iter = next;
    }
}

/// Reads a filter written by [`save_xf`]; anything malformed or inconsistent is `None`.
/// The memory ceiling is not applied (the data already exists), but nothing is allocated
/// beyond what the stream holds.
pub fn load_xf(input: &mut impl FieldReader, encver: i32) -> Option<XFilter> {
    if encver != XF_ENCODING {
        return None;
    }
    let mut loader = Loader::from_header(&input.buffer()?, u64::MAX).ok()?;
    let chunks = input.unsigned()?;
    for _ in 0..chunks {
        let data = input.buffer()?;
        let iter = data
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8")))?
            .checked_add(1)?;
        let count = data
            .get(8..12)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4")))?;
        let next = i64::try_from(iter.checked_add(u64::from(count))?).ok()?;
        loader.load_chunk(next, &data).ok()?;
    }
    loader.finish().ok()
}

/// The whole filter as bytes (the fields of [`save_xf`] in a [`crate::rdb::Fields`]
/// stream, for tools and tests).
pub fn encode(f: &XFilter) -> crate::rdb::Fields {
    let mut out = crate::rdb::Fields::default();
    save_xf(f, &mut out);
    out
}
