//! SF.SCANDUMP / SF.LOADCHUNK: a versioned little-endian header, then the data words in
//! chunks of at most 16 MiB (iterator = 1 + byte offset past the chunk, as BF's).
//!
//! A binary fuse filter's header (all fields little-endian, packed), 52 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `SF01` (format version 1) |
//! | 4 | 8 | seed |
//! | 12 | 8 | distinct items |
//! | 20 | 4 | fingerprint bits |
//! | 24 | 8 | requested error rate (f64) |
//! | 32 | 4 | segment length |
//! | 36 | 8 | segment count |
//! | 44 | 8 | checksum of the fields and the data |
//!
//! A ribbon filter's header, 56 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `SF02` (format version 2) |
//! | 4 | 8 | seed |
//! | 12 | 8 | distinct items |
//! | 20 | 4 | lower column count `r` |
//! | 24 | 8 | requested error rate (f64) |
//! | 32 | 8 | blocks |
//! | 40 | 8 | blocks with `r` columns |
//! | 48 | 8 | checksum of the fields and the data |
//!
//! Encoding 3's header (a ribbon with bumped keys), 64 bytes: the ribbon's with the magic
//! `SF03` and, between the blocks with `r` columns and the checksum, the number of
//! bumped keys (8 bytes).
//!
//! Loading is all-or-nothing for the data: the header makes a filter that answers no
//! item (it is incomplete); chunks must come in order, each exactly where the previous
//! one ended; the chunk that completes the data is accepted only if the checksum of the
//! whole filter matches, and a refused chunk changes nothing.

use super::{Bumped, Layout, Ribbon, Shape, StaticFilter};
use crate::bloom::dump::{chunk_of, DumpError, MAX_CHUNK};
use crate::le_reader::Reader;
use xxhash_rust::xxh3::Xxh3;

/// The first four bytes of a binary fuse filter's header.
pub const MAGIC: &[u8; 4] = b"SF01";
pub const HEADER_LEN: usize = 52;
/// The first four bytes of a ribbon filter's header.
pub const RIBBON_MAGIC: &[u8; 4] = b"SF02";
pub const RIBBON_HEADER_LEN: usize = 56;
/// The first four bytes of encoding 3's header.
pub const BUMPED_MAGIC: &[u8; 4] = b"SF03";
pub const BUMPED_HEADER_LEN: usize = 64;

/// The length of the header that starts with `magic` (its first four bytes), if known.
pub fn header_len(magic: &[u8]) -> Option<usize> {
    match magic.get(..4)? {
        m if m == MAGIC => Some(HEADER_LEN),
        m if m == RIBBON_MAGIC => Some(RIBBON_HEADER_LEN),
        m if m == BUMPED_MAGIC => Some(BUMPED_HEADER_LEN),
        _ => None,
    }
}

/// The header SCANDUMP returns for iterator 0.
pub fn header(filter: &StaticFilter) -> Vec<u8> {
    let mut out = Vec::with_capacity(BUMPED_HEADER_LEN);
    out.extend_from_slice(match filter.layout {
        Layout::Fuse(_) => MAGIC,
        Layout::Ribbon(_) => RIBBON_MAGIC,
        Layout::Bumped(_) => BUMPED_MAGIC,
    });
    out.extend_from_slice(&filter.seed.to_le_bytes());
    out.extend_from_slice(&filter.items.to_le_bytes());
    out.extend_from_slice(&filter.bits.to_le_bytes());
    out.extend_from_slice(&filter.error.to_le_bytes());
    match filter.layout {
        Layout::Fuse(shape) => {
            out.extend_from_slice(&shape.segment_length.to_le_bytes());
            out.extend_from_slice(&shape.segment_count.to_le_bytes());
        }
        Layout::Ribbon(r) => {
            out.extend_from_slice(&r.blocks.to_le_bytes());
            out.extend_from_slice(&r.lower_blocks.to_le_bytes());
        }
        Layout::Bumped(b) => {
            out.extend_from_slice(&b.ribbon.blocks.to_le_bytes());
            out.extend_from_slice(&b.ribbon.lower_blocks.to_le_bytes());
            out.extend_from_slice(&b.bumped.to_le_bytes());
        }
    }
    out.extend_from_slice(&filter.checksum.to_le_bytes());
    out
}

/// The data chunk that ends at byte `iter − 1 + len`: the loaded data from byte
/// `iter − 1`, up to 16 MiB, with the next iterator; `None` past the loaded data.
pub fn chunk(filter: &StaticFilter, iter: i64) -> Option<(i64, &[u8])> {
    let loaded = filter.loaded() as usize;
    chunk_of(std::iter::once(&filter.data[..loaded]), iter)
}

/// Every (iterator, data) pair SF.LOADCHUNK needs to rebuild `filter`: the header at 1,
/// then the chunks (AOF rewrite, replication of a build).
pub fn load_sequence(filter: &StaticFilter) -> Vec<(i64, Vec<u8>)> {
    let mut out = vec![(1, header(filter))];
    let mut iter = 1;
    while let Some((next, data)) = chunk(filter, iter) {
        out.push((next, data.to_vec()));
        iter = next;
    }
    out
}

/// An incomplete filter from a LOADCHUNK header: zeroed data, all of it pending. Any
/// malformed header, one [`StaticFilter::from_parts`] refuses, or one whose filter would
/// exceed `max_bytes` or cannot be allocated is `BadData`.
pub fn filter_from_header(data: &[u8], max_bytes: u64) -> Result<StaticFilter, DumpError> {
    let magic = match data.get(..4) {
        Some(m) if m == MAGIC && data.len() == HEADER_LEN => MAGIC,
        Some(m) if m == RIBBON_MAGIC && data.len() == RIBBON_HEADER_LEN => RIBBON_MAGIC,
        Some(m) if m == BUMPED_MAGIC && data.len() == BUMPED_HEADER_LEN => BUMPED_MAGIC,
        _ => return Err(DumpError::BadData),
    };
    let mut fields = Reader(&data[4..]);
    let seed = fields.u64();
    let items = fields.u64();
    let bits = fields.u32();
    let error = fields.f64();
    let layout = if magic == MAGIC {
        Layout::Fuse(Shape {
            segment_length: fields.u32(),
            segment_count: fields.u64(),
        })
    } else {
        let r = Ribbon {
            blocks: fields.u64(),
            lower_blocks: fields.u64(),
        };
        if magic == RIBBON_MAGIC {
            Layout::Ribbon(r)
        } else {
            Layout::Bumped(Bumped {
                ribbon: r,
                bumped: fields.u64(),
            })
        }
    };
    let checksum = fields.u64();
    if !(1..=super::MAX_BITS).contains(&bits) || !layout.is_consistent(bits, error, items) {
        return Err(DumpError::BadData);
    }
    let len = layout.data_len(bits).ok_or(DumpError::BadData)?;
    if super::SF_OVERHEAD.saturating_add(len) > max_bytes {
        return Err(DumpError::BadData);
    }
    let bytes = crate::zeroed_bytes(len).map_err(|_| DumpError::BadData)?;
    StaticFilter::from_parts(seed, items, bits, error, layout, bytes, len, checksum)
        .ok_or(DumpError::BadData)
}

/// LOADCHUNK of a data chunk: `iter` is the iterator SCANDUMP returned after it, so the
/// chunk starts at `iter − 1 − len`, which must be where the loaded data ends. A chunk
/// that completes the data must make the checksum match. Errors: `BadData` (a bad
/// iterator, an empty chunk, a checksum mismatch), `NoLink` (a complete filter, or a
/// chunk elsewhere than the next position), `TooBig` (past the end of the data).
pub fn load_chunk(filter: &mut StaticFilter, iter: i64, data: &[u8]) -> Result<(), DumpError> {
    let len = data.len() as u64;
    let end = u64::try_from(iter)
        .ok()
        .filter(|&end| end >= 1 && end > len && !data.is_empty())
        .ok_or(DumpError::BadData)?;
    let start = end - 1 - len;
    if filter.is_complete() || start != filter.loaded() {
        return Err(DumpError::NoLink);
    }
    if len > filter.pending || len > MAX_CHUNK {
        return Err(DumpError::TooBig);
    }
    let (from, to) = (start as usize, (start + len) as usize);
    if len == filter.pending {
        let mut hash = Xxh3::with_seed(super::params_hash(
            filter.seed,
            filter.items,
            filter.bits,
            filter.error,
            filter.layout,
        ));
        hash.update(&filter.data[..from]);
        hash.update(data);
        // The last word, from the loaded data and this chunk.
        let total = filter.data.len();
        let mut last = [0u8; 8];
        for (k, byte) in last.iter_mut().enumerate() {
            let pos = total - 8 + k;
            *byte = if pos >= from {
                data[pos - from]
            } else {
                filter.data[pos]
            };
        }
        let clear_tail = tail_clear_of(filter, u64::from_le_bytes(last));
        if hash.digest() != filter.checksum || !clear_tail {
            return Err(DumpError::BadData);
        }
    }
    crate::copy_changed_pages(&mut filter.data[from..to], data);
    filter.pending -= len;
    Ok(())
}

/// Whether `last`, the data's last word, leaves the bits past the last slot clear.
pub(crate) fn tail_clear_of(filter: &StaticFilter, last: u64) -> bool {
    let Layout::Fuse(shape) = filter.layout else {
        // Ribbon data are whole 128-bit words.
        return true;
    };
    let used = shape.slots_len() * u64::from(filter.bits);
    used.is_multiple_of(64) || last >> (used % 64) == 0
}
