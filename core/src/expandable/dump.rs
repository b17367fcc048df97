//! XF.SCANDUMP / XF.LOADCHUNK, and the byte form the RDB encoding reuses.
//!
//! The header (iterator 0's data; all fields little-endian, packed), 580 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `XF01` (format version 1) |
//! | 4 | 8 | error rate (f64) |
//! | 12 | 8 | initial capacity |
//! | 20 | 4 | level at creation |
//! | 24 | 4 | level |
//! | 28 | 8 | split pointer |
//! | 36 | 8 | items |
//! | 44 | 8 | entries |
//! | 52 | 8 | bytes of all the partitions' records |
//! | 60 | 520 | the histogram: entries by total hash bits T = 0..=64 (65 × u64) |
//!
//! A chunk: the index of its first partition (u64), the number of partitions (u32),
//! each partition's record — entries (u32), width (u8), its bit array's words (u64 each,
//! as many as `BUCKETS + entries · (width + 1)` bits take) — then the XXH3 of everything
//! before it (u64). A chunk holds whole partitions, up to
//! [`XF_CHUNK_BYTES`](crate::limits::XF_CHUNK_BYTES) of records (at least one). Its
//! iterator is 1 + the index of the partition after it; the first chunk is asked for
//! with iterator 1.
//!
//! Loading ([`Loader`]) is all or nothing: the header is checked and sized against the
//! memory ceiling before anything is allocated, each chunk must come in order and is
//! checked whole (checksum, every partition's structure) before it is kept, and
//! [`Loader::finish`] checks the totals (partitions, entries, histogram recomputed from
//! the entries) before a filter exists.

use super::partition::{Partition, BUCKETS, BUCKET_BITS, MAX_ENTRIES, MAX_LEN};
use super::{level_for, XFilter, XfError, MAX_LEVEL, PARTITION_BYTES, XF_OVERHEAD};
use crate::le_reader::Reader;
use crate::limits::{XF_CHUNK_BYTES, XF_MAX_CAPACITY, XF_MIN_ERROR_RATE};
use xxhash_rust::xxh3::xxh3_64;

/// The first four bytes of the header.
pub const MAGIC: &[u8; 4] = b"XF01";
pub const HEADER_LEN: usize = 60 + 65 * 8;
/// A partition record's fixed part: entries and width.
const RECORD_HEAD: usize = 5;
/// A chunk's fixed part: first index, count, checksum.
const CHUNK_FIXED: usize = 8 + 4 + 8;

fn record_len(p: &Partition) -> usize {
    RECORD_HEAD + p.heap_bytes()
}

/// The header SCANDUMP returns for iterator 0.
pub fn header(f: &XFilter) -> Vec<u8> {
    let data: u64 = f
        .segments
        .iter()
        .flatten()
        .map(|p| record_len(p) as u64)
        .sum();
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&f.error_rate.to_le_bytes());
    out.extend_from_slice(&f.initial_capacity.to_le_bytes());
    out.extend_from_slice(&f.level0.to_le_bytes());
    out.extend_from_slice(&f.level.to_le_bytes());
    out.extend_from_slice(&f.split.to_le_bytes());
    out.extend_from_slice(&f.items.to_le_bytes());
    out.extend_from_slice(&f.entries.to_le_bytes());
    out.extend_from_slice(&data.to_le_bytes());
    for n in f.hist {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

/// The chunk SCANDUMP returns for iterator `iter` (≥ 1): the partitions from `iter − 1`
/// on, with the iterator of the next chunk; `None` past the last partition.
pub fn chunk(f: &XFilter, iter: i64) -> Option<(i64, Vec<u8>)> {
    chunk_sized(f, iter, XF_CHUNK_BYTES)
}

/// [`chunk`] with chunks of up to `limit` bytes of records.
pub(crate) fn chunk_sized(f: &XFilter, iter: i64, limit: usize) -> Option<(i64, Vec<u8>)> {
    let first = u64::try_from(iter).ok()?.checked_sub(1)?;
    let (end, bytes) = chunk_end(f, first, limit)?;
    let mut out = Vec::with_capacity(CHUNK_FIXED + bytes);
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&((end - first) as u32).to_le_bytes());
    for j in first..end {
        let p = f.partition(j);
        out.extend_from_slice(&p.entries.to_le_bytes());
        out.push(p.width);
        for w in p.words.iter() {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    let sum = xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Some((end as i64 + 1, out))
}

/// Where the chunk starting at partition `first` ends, and its record bytes.
fn chunk_end(f: &XFilter, first: u64, limit: usize) -> Option<(u64, usize)> {
    let total = f.partitions();
    if first >= total {
        return None;
    }
    let mut end = first;
    let mut bytes = 0usize;
    while end < total {
        let len = record_len(f.partition(end));
        if end > first && bytes + len > limit {
            break;
        }
        bytes += len;
        end += 1;
    }
    Some((end, bytes))
}

/// How many chunks [`chunk`] splits `f` into.
pub fn chunk_count(f: &XFilter) -> u64 {
    let mut n = 0;
    let mut first = 0;
    while let Some((end, _)) = chunk_end(f, first, XF_CHUNK_BYTES) {
        n += 1;
        first = end;
    }
    n
}

/// Every (iterator, data) pair XF.LOADCHUNK needs to rebuild `f`: the header at 0, then
/// the chunks.
pub fn load_sequence(f: &XFilter) -> Vec<(i64, Vec<u8>)> {
    load_sequence_sized(f, XF_CHUNK_BYTES)
}

/// [`load_sequence`] with chunks of up to `limit` bytes of records.
pub(crate) fn load_sequence_sized(f: &XFilter, limit: usize) -> Vec<(i64, Vec<u8>)> {
    let mut out = vec![(0, header(f))];
    let mut iter = 1;
    while let Some((next, data)) = chunk_sized(f, iter, limit) {
        out.push((next, data));
        iter = next;
    }
    out
}

/// A filter being loaded from a header and its chunks (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Loader {
    f: XFilter,
    /// Record bytes the header announced, and those loaded so far.
    data: u64,
    loaded: u64,
    loaded_parts: u64,
    max_bytes: u64,
}

impl Loader {
    /// Checks a header: every field in range and consistent, and the filter it announces
    /// within `max_bytes` (nothing is allocated for it yet).
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Loader, XfError> {
        if bytes.len() != HEADER_LEN || &bytes[..4] != MAGIC {
            return Err(XfError::BadData);
        }
        let mut r = Reader(&bytes[4..]);
        let error_rate = r.f64();
        let initial_capacity = r.u64();
        let level0 = r.u32();
        let level = r.u32();
        let split = r.u64();
        let items = r.u64();
        let entries = r.u64();
        let data = r.u64();
        let mut hist = [0u64; 65];
        for n in &mut hist {
            *n = r.u64();
        }
        let ok = (XF_MIN_ERROR_RATE..1.0).contains(&error_rate)
            && (1..=XF_MAX_CAPACITY).contains(&initial_capacity)
            && level0 == level_for(initial_capacity)
            && (level0..MAX_LEVEL).contains(&level)
            && split < 1u64 << level
            && items <= entries
            && hist.iter().try_fold(0u64, |a, &n| a.checked_add(n)) == Some(entries);
        if !ok {
            return Err(XfError::BadData);
        }
        let parts = (1u64 << level) + split;
        // Each partition's record holds at least its header and bitmap.
        let least = (RECORD_HEAD + BUCKETS / 8) as u64;
        if data < parts.saturating_mul(least) {
            return Err(XfError::BadData);
        }
        let dir = parts.saturating_mul(PARTITION_BYTES as u64);
        if (XF_OVERHEAD as u64)
            .saturating_add(dir)
            .saturating_add(data)
            > max_bytes
        {
            return Err(XfError::TooLarge);
        }
        let f = XFilter {
            error_rate,
            initial_capacity,
            level0,
            level,
            split,
            items,
            entries,
            hist,
            segments: Vec::new(),
            bytes: 0,
        };
        Ok(Loader {
            f,
            data,
            loaded: 0,
            loaded_parts: 0,
            max_bytes,
        })
    }

    /// Partitions loaded so far.
    pub fn partitions_loaded(&self) -> u64 {
        self.loaded_parts
    }

    /// Whether every partition arrived.
    pub fn is_complete(&self) -> bool {
        self.loaded_parts == self.f.partitions()
    }

    /// Takes the chunk SCANDUMP returned with iterator `iter`: it must start where the
    /// loaded partitions end and pass every check; a refused chunk changes nothing.
    pub fn load_chunk(&mut self, iter: i64, bytes: &[u8]) -> Result<(), XfError> {
        if bytes.len() < CHUNK_FIXED {
            return Err(XfError::BadData);
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
            return Err(XfError::BadData);
        }
        let mut r = Reader(body);
        let first = r.u64();
        let count = u64::from(r.u32());
        let end = first.checked_add(count).ok_or(XfError::BadData)?;
        if first != self.loaded_parts || u64::try_from(iter).ok() != end.checked_add(1) {
            return Err(XfError::BadOffset);
        }
        if count == 0 || end > self.f.partitions() {
            return Err(XfError::BadData);
        }
        let records = (body.len() - 12) as u64;
        if records > (XF_CHUNK_BYTES + RECORD_HEAD) as u64 * 2
            || self.loaded.saturating_add(records) > self.data
        {
            return Err(XfError::BadData);
        }
        let mut rest = &body[12..];
        let mut parts = Vec::new();
        for j in first..end {
            let p = read_partition(&mut rest).ok_or(XfError::BadData)?;
            let lp = self.f.level_of(j) + BUCKET_BITS;
            let mut fits = true;
            if !p.is_valid(|len| fits &= lp + len <= 64) || !fits {
                return Err(XfError::BadData);
            }
            parts.push(p);
        }
        if !rest.is_empty() {
            return Err(XfError::BadData);
        }
        for p in parts {
            if let Err(e) = self.f.push_partition(p) {
                self.f.truncate_partitions(first);
                return Err(e);
            }
        }
        self.loaded += records;
        self.loaded_parts = end;
        Ok(())
    }

    /// The loaded filter, once every partition arrived and the totals agree with the
    /// header.
    pub fn finish(self) -> Result<XFilter, XfError> {
        let Loader {
            mut f,
            data,
            loaded,
            max_bytes,
            ..
        } = self;
        let parts: usize = f.segments.iter().map(Vec::len).sum();
        if parts as u64 != f.partitions() || loaded != data {
            return Err(XfError::BadData);
        }
        let mut hist = [0u64; 65];
        let mut entries = 0u64;
        for (j, p) in f.segments.iter().flatten().enumerate() {
            let lp = f.level_of(j as u64) + BUCKET_BITS;
            p.is_valid(|len| hist[((lp + len) as usize).min(64)] += 1);
            entries += u64::from(p.entries);
        }
        if entries != f.entries || hist != f.hist {
            return Err(XfError::BadData);
        }
        f.bytes = f.recount_bytes();
        if f.bytes as u64 > max_bytes {
            return Err(XfError::TooLarge);
        }
        Ok(f)
    }
}

/// One partition record from the front of `rest` (words unchecked: see
/// [`Partition::is_valid`]).
fn read_partition(rest: &mut &[u8]) -> Option<Partition> {
    if rest.len() < RECORD_HEAD {
        return None;
    }
    let entries = u32::from_le_bytes(rest[..4].try_into().ok()?);
    let width = rest[4];
    if entries > MAX_ENTRIES || u32::from(width) > MAX_LEN + 1 {
        return None;
    }
    let bits = BUCKETS + entries as usize * (usize::from(width) + 1);
    let n = bits.div_ceil(64);
    let body = rest.get(RECORD_HEAD..RECORD_HEAD + n * 8)?;
    let words: Vec<u64> = body
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    *rest = &rest[RECORD_HEAD + n * 8..];
    Some(Partition {
        words: words.into_boxed_slice(),
        entries,
        width,
    })
}
