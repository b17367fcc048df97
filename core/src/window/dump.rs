//! WBF.SCANDUMP / WBF.LOADCHUNK: a versioned little-endian header, then the slices' bit
//! array in chunks laid out like BF's (≤ 16 MiB, iterator = 1 + byte offset past the chunk).
//!
//! Header (all fields little-endian, packed), 72 + 8 × slices bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `WBF1` (format version 1) |
//! | 4 | 8 | capacity (items per window) |
//! | 12 | 8 | error rate (f64) |
//! | 20 | 8 | window in ms (0: a counted window) |
//! | 28 | 8 | start of generation 0 in ms (0 for a counted window) |
//! | 36 | 8 | number of the newest generation |
//! | 44 | 4 | k (slices per item) |
//! | 48 | 4 | l (generations per window) |
//! | 52 | 8 | generation size (adds) |
//! | 60 | 8 | bits per slice |
//! | 68 | 4 | ring index of the newest slice |
//!
//! then per slice, in ring order, the u64 number of adds of its generation.

use crate::bloom::dump::{self as bloom_dump, DumpError};
use crate::le_reader::Reader;
use crate::window::{WindowFilter, WindowShape, MAX_K};

/// The first four bytes of every window-filter header.
pub const MAGIC: &[u8; 4] = b"WBF1";
pub const FIXED_HEADER_LEN: usize = 72;

/// The header SCANDUMP returns for iterator 0.
pub fn header(filter: &WindowFilter) -> Vec<u8> {
    let mut out = Vec::with_capacity(FIXED_HEADER_LEN + 8 * filter.counts.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&filter.capacity.to_le_bytes());
    out.extend_from_slice(&filter.error.to_le_bytes());
    out.extend_from_slice(&filter.window.to_le_bytes());
    out.extend_from_slice(&filter.base.to_le_bytes());
    out.extend_from_slice(&filter.generation.to_le_bytes());
    out.extend_from_slice(&filter.shape.k.to_le_bytes());
    out.extend_from_slice(&filter.shape.l.to_le_bytes());
    out.extend_from_slice(&filter.shape.generation_size.to_le_bytes());
    out.extend_from_slice(&filter.shape.slice_bits.to_le_bytes());
    out.extend_from_slice(&filter.newest.to_le_bytes());
    for count in &filter.counts {
        out.extend_from_slice(&count.to_le_bytes());
    }
    out
}

/// An empty-bits filter from a LOADCHUNK header; its bits arrive in later chunks. Checks,
/// in order (any failure → `BadData`): length ≥ 72; magic; k and l in 1..=64; length
/// exactly 72 + 8 × (k + l); the shape exactly the one this code makes for the capacity
/// and error; the memory within `max_bytes`; the bit array allocated fallibly; then every
/// check of [`WindowFilter::is_valid`] (ring index, generation, counts, times).
pub fn filter_from_header(data: &[u8], max_bytes: u64) -> Result<WindowFilter, DumpError> {
    if data.len() < FIXED_HEADER_LEN || &data[..4] != MAGIC {
        return Err(DumpError::BadData);
    }
    let mut fields = Reader(&data[4..]);
    let capacity = fields.u64();
    let error = fields.f64();
    let window = fields.u64();
    let base = fields.u64();
    let generation = fields.u64();
    let k = fields.u32();
    let l = fields.u32();
    let generation_size = fields.u64();
    let slice_bits = fields.u64();
    let newest = fields.u32();
    if !(1..=MAX_K).contains(&k) || !(1..=MAX_K).contains(&l) {
        return Err(DumpError::BadData);
    }
    let slices = (k + l) as usize;
    if data.len() != FIXED_HEADER_LEN + 8 * slices {
        return Err(DumpError::BadData);
    }
    let shape = WindowShape {
        k,
        l,
        generation_size,
        slice_bits,
    };
    if WindowShape::new(capacity, error) != Ok(shape)
        || shape.mem_usage().is_none_or(|used| used > max_bytes)
    {
        return Err(DumpError::BadData);
    }
    let counts: Vec<u64> = (0..slices).map(|_| fields.u64()).collect();
    let bytes = shape.data_bytes().ok_or(DumpError::BadData)?;
    let bits = crate::zeroed_bytes(bytes).map_err(|_| DumpError::BadData)?;
    WindowFilter::from_parts(
        capacity, error, window, base, generation, shape, newest, counts, bits,
    )
    .ok_or(DumpError::BadData)
}

/// The chunk SCANDUMP returns for iterator `iter` ≥ 1: as BF's, over the bit array.
/// `None` past the end.
pub fn chunk(filter: &WindowFilter, iter: i64) -> Option<(i64, &[u8])> {
    bloom_dump::chunk_of(std::iter::once(filter.bits.as_slice()), iter)
}

/// LOADCHUNK of a data chunk, with BF's checks and errors: `BadData` for a negative start,
/// `NoLink` when the start lies outside the array, `TooBig` when the chunk would run past
/// its end.
pub fn load_chunk(filter: &mut WindowFilter, iter: i64, data: &[u8]) -> Result<(), DumpError> {
    bloom_dump::load_chunk_into(
        std::iter::once(filter.bits.as_mut_slice()),
        iter,
        data,
        |_, _| {},
    )
}
