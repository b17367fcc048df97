//! CF.SCANDUMP / CF.LOADCHUNK wire format (COMPAT §7.3–7.5), byte-identical with
//! RedisBloom 2.4.20, with HEAD's validation and the extra hardening of the COMPAT decisions
//! (more than 65535 sub-filters rejected, every size computation overflow-checked, fallible
//! allocation under a memory ceiling, no out-of-bounds write and no panic on any input).
//!
//! Header (38 bytes, little-endian, packed): off 0 u64 numItems; off 8 u64 numBuckets (base);
//! off 16 u64 numDeletes; off 24 u64 numFilters; off 32 u16 bucketSize; off 34 u16
//! maxIterations; off 36 u16 expansion.
//!
//! Chunks: positions are 1 + byte offset into the concatenation of the sub-filters' data,
//! oldest first. A chunk is returned with the position just *after* it, and LOADCHUNK gets
//! that same position back.
//!
//! Command-layer rules that are not here: SCANDUMP with an iterator < 0 is `Invalid
//! position`; a filter with `num_items() == 0` answers `[0, nil]` even for iterator 0
//! ([`scandump`] implements both, so it can be used directly); the AOF rewrite emits the
//! header and every chunk even when the filter is empty (use [`header`] and [`chunk`]).
//! LOADCHUNK with iterator 1 on an empty key: data of length ≠ 38 is `Invalid header`
//! (check [`HEADER_LEN`] first), any error of [`filter_from_header`] is `Couldn't create
//! filter!`; any error of [`load_chunk`] is `Couldn't load chunk!`.

use crate::cuckoo::{CuckooError, CuckooFilter, CuckooParts};

/// Exact length of a CF dump header.
pub const HEADER_LEN: usize = 38;
/// Largest chunk SCANDUMP returns (sub-filters up to this size are returned whole).
pub const MAX_CHUNK: u64 = 16 * 1024 * 1024;

/// The 38-byte header of a filter (SCANDUMP iterator 0, AOF rewrite, LOADCHUNK 1).
pub fn header(f: &CuckooFilter) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&f.num_items().to_le_bytes());
    h[8..16].copy_from_slice(&f.num_buckets().to_le_bytes());
    h[16..24].copy_from_slice(&f.num_deletes().to_le_bytes());
    h[24..32].copy_from_slice(&(f.num_filters() as u64).to_le_bytes());
    h[32..34].copy_from_slice(&f.bucket_size().to_le_bytes());
    h[34..36].copy_from_slice(&f.max_iterations().to_le_bytes());
    h[36..38].copy_from_slice(&f.expansion().to_le_bytes());
    h
}

fn u64_at(b: &[u8; HEADER_LEN], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

fn u16_at(b: &[u8; HEADER_LEN], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// Decode and validate a header and allocate the (zeroed) sub-filters it describes
/// (LOADCHUNK iterator 1). Checks (COMPAT §7.3, HEAD's list plus hardening): length exactly
/// 38; bucketSize 1..=255; maxIterations ≥ 1; expansion ≤ 32768 and 0 or a power of two;
/// numFilters 1..=65535 (no 16-bit truncation); not (expansion 0 and numFilters > 1);
/// numBuckets a power of two in 1..=2^56−1; every sub-filter's `numBuckets × expansion^i`
/// within 2^56−1 and its byte size without overflow; the total within `max_bytes`
/// (`TooLarge`) — all before any allocation; then fallible allocation (`OutOfMemory`).
/// numItems / numDeletes are taken as they are.
pub fn filter_from_header(bytes: &[u8], max_bytes: u64) -> Result<CuckooFilter, CuckooError> {
    let b: &[u8; HEADER_LEN] = bytes.try_into().map_err(|_| CuckooError::InvalidParams)?;
    let parts = CuckooParts {
        num_items: u64_at(b, 0),
        num_buckets: u64_at(b, 8),
        num_deletes: u64_at(b, 16),
        bucket_size: u64::from(u16_at(b, 32)),
        max_iterations: u64::from(u16_at(b, 34)),
        expansion: u64::from(u16_at(b, 36)),
    };
    CuckooFilter::with_layout(parts, u64_at(b, 24), max_bytes)
}

/// Find the sub-filter holding byte `offset` of the concatenated data: `(index, offset
/// within it)`, or `Err(rest)` when past the end (`rest` = offset − total size).
fn locate(f: &CuckooFilter, mut offset: u64) -> Result<(usize, u64), u64> {
    let subs = f.sub_filters();
    // Expansion 1: every sub-filter has the same size (the layout is checked on every
    // load), and there can be 65535 of them — a walk per chunk would make a full dump or an
    // AOF rewrite quadratic.
    if let (1, Some(first), Some(last)) = (f.expansion(), subs.first(), subs.last()) {
        let size = first.data().len() as u64;
        if size > 0 && last.data().len() as u64 == size {
            let i = offset / size;
            if i >= subs.len() as u64 {
                return Err(offset - size * subs.len() as u64);
            }
            return Ok((i as usize, offset % size));
        }
    }
    for (i, sub) in subs.iter().enumerate() {
        let size = sub.data().len() as u64;
        if offset < size {
            return Ok((i, offset));
        }
        offset -= size;
    }
    Err(offset)
}

/// SCANDUMP chunk at `pos` ≥ 1 (COMPAT §7.4): `Some((next, data))`, or `None` for the end
/// (`[0, nil]`) — also for `pos` ≤ 0, which the command layer handles before calling.
/// A sub-filter of at most 16 MiB is returned whole, from its start, even when `pos` points
/// into its middle, with `next = pos + its size`; a larger one is returned from `pos` in
/// pieces of at most 16 MiB that never cross into the next sub-filter.
pub fn chunk(f: &CuckooFilter, pos: i64) -> Option<(i64, &[u8])> {
    if pos < 1 {
        return None;
    }
    let (i, off) = locate(f, (pos - 1) as u64).ok()?;
    let data = f.sub_filters()[i].data();
    let size = data.len() as u64;
    let piece = if size <= MAX_CHUNK {
        data
    } else {
        let len = MAX_CHUNK.min(size - off);
        // off < size and off + len ≤ size: in bounds.
        &data[off as usize..(off + len) as usize]
    };
    let next = pos.checked_add(i64::try_from(piece.len()).ok()?)?;
    Some((next, piece))
}

/// LOADCHUNK of `data` at `pos` (COMPAT §7.4), with RedisBloom's checks: empty data,
/// `pos ≤ 0` and `pos − 1 < len` are rejected; the start offset `pos − len − 1` is located
/// oldest → newest, and — RedisBloom quirk — an offset past the end of all sub-filters lands
/// in the last sub-filter at `offset − total size`; the write must then fit inside that
/// sub-filter. Never writes out of bounds; every failure is `BadChunk`.
pub fn load_chunk(f: &mut CuckooFilter, pos: i64, data: &[u8]) -> Result<(), CuckooError> {
    let len = data.len() as u64;
    if len == 0 || pos <= 0 {
        return Err(CuckooError::BadChunk);
    }
    let before = (pos - 1) as u64;
    if before < len {
        return Err(CuckooError::BadChunk);
    }
    let (i, off) = match locate(f, before - len) {
        Ok(found) => found,
        Err(rest) => (
            f.num_filters()
                .checked_sub(1)
                .ok_or(CuckooError::BadChunk)?,
            rest,
        ),
    };
    let end = off.checked_add(len).ok_or(CuckooError::BadChunk)?;
    if end > f.sub_filters()[i].data().len() as u64 {
        return Err(CuckooError::BadChunk);
    }
    // end ≤ data length, so both bounds fit in usize.
    f.overwrite(i, off as usize, data);
    Ok(())
}

/// One CF.SCANDUMP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanDump<'a> {
    /// `[1, header]` (iterator 0 of a non-empty filter).
    Header([u8; HEADER_LEN]),
    /// `[next, data]`.
    Chunk(i64, &'a [u8]),
    /// `[0, nil]`.
    End,
}

/// The whole CF.SCANDUMP reply logic after the key lookup (COMPAT §2.9): `None` for an
/// iterator < 0 (`Invalid position`); `End` for a filter with no items (even at 0);
/// `Header` at 0; otherwise [`chunk`].
pub fn scandump(f: &CuckooFilter, iter: i64) -> Option<ScanDump<'_>> {
    if iter < 0 {
        return None;
    }
    if f.num_items() == 0 {
        return Some(ScanDump::End);
    }
    if iter == 0 {
        return Some(ScanDump::Header(header(f)));
    }
    Some(match chunk(f, iter) {
        Some((next, data)) => ScanDump::Chunk(next, data),
        None => ScanDump::End,
    })
}

#[cfg(test)]
#[path = "dump_tests.rs"]
mod tests;

/// Replays of RedisBloom 2.4.20's reference fixtures (`tests/fixtures/redisbloom-2.4.20`
/// of this crate): the commands that built each CF key run through this core must give the
/// same replies, the same query answers and a byte-identical SCANDUMP transcript; loading
/// the transcript must give the same filter.
#[cfg(test)]
#[path = "dump_fixture_tests.rs"]
mod fixture_tests;
