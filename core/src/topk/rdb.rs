//! Top-K's RDB layout (`TopK-TYPE`, encoding 0), RedisBloom's (2.4.20 and 2.6 write the
//! same): `k`, width and depth as unsigned fields, the decay as a double, the buckets as
//! one string (`width × depth` pairs of little-endian `u32`: fingerprint, count), the
//! heap as one string of `k` 24-byte records (RedisBloom's `HeapBucket` on 64-bit
//! machines: fingerprint `u32`, item length `u32`, an 8-byte item pointer, count `u32`,
//! 4 bytes of padding), then one string per heap entry: its item and a NUL byte, a lone
//! NUL for none.
//!
//! RedisBloom ignores the pointers it reads (it replaces each with the item string that
//! follows) and the padding; redbloom writes the decay generator's state in the first
//! record's pointer bytes, zeros in the others, and reads the first pointer back as the
//! state. RedisBloom saves an item only up to its first NUL byte (`strlen`); redbloom
//! saves the whole item, which RedisBloom loads and matches in full.

use super::{HeapEntry, TopK, HEAP_ENTRY_BYTES};
use crate::rdb::{FieldReader, FieldWriter};

/// The encoding version of the Top-K type (RedisBloom's `TOPK_ENC_VER`).
pub const TOPK_ENCODING: i32 = 0;

/// The heap as RedisBloom's records, the generator state in the first pointer.
pub fn heap_records(topk: &TopK) -> Vec<u8> {
    let mut out = Vec::with_capacity(topk.heap.len() * HEAP_ENTRY_BYTES as usize);
    for (i, entry) in topk.heap.iter().enumerate() {
        out.extend_from_slice(&entry.fp.to_le_bytes());
        out.extend_from_slice(&entry.itemlen.to_le_bytes());
        let pointer = if i == 0 { topk.rng } else { 0 };
        out.extend_from_slice(&pointer.to_le_bytes());
        out.extend_from_slice(&entry.count.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
    }
    out
}

/// Writes a Top-K in encoding 0.
pub fn save_topk(topk: &TopK, out: &mut impl FieldWriter) {
    out.unsigned(u64::from(topk.k));
    out.unsigned(u64::from(topk.width));
    out.unsigned(u64::from(topk.depth));
    out.double(topk.decay);
    out.buffer(&topk.buckets);
    out.buffer(&heap_records(topk));
    let mut item = Vec::new();
    for entry in &topk.heap {
        item.clear();
        item.extend_from_slice(entry.bytes());
        item.push(0);
        out.buffer(&item);
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads a Top-K of encoding 0. Refused: a dimension of 0 or above `u32::MAX`, a decay
/// outside `(0, 1]` (what TOPK.RESERVE refuses), buckets that are not `width × depth ×
/// 8` bytes, a heap that is not `k × 24`, an item string that is empty or does not end
/// with a NUL byte, fewer item strings than `k`.
pub fn load_topk(input: &mut impl FieldReader, encver: i32) -> Option<TopK> {
    if encver != TOPK_ENCODING {
        return None;
    }
    let dimension = |v: u64| u32::try_from(v).ok().filter(|&v| v >= 1);
    let k = dimension(input.unsigned()?)?;
    let width = dimension(input.unsigned()?)?;
    let depth = dimension(input.unsigned()?)?;
    let decay = input.double()?;
    if !super::valid_decay(decay) {
        return None;
    }
    let buckets = input.buffer()?;
    if buckets.len() as u128 != u128::from(width) * u128::from(depth) * 8 {
        return None;
    }
    let records = input.buffer()?;
    if records.len() as u64 != u64::from(k) * HEAP_ENTRY_BYTES {
        return None;
    }
    let rng = u64::from_le_bytes(records[8..16].try_into().ok()?);
    let mut heap = super::empty_heap(k).ok()?;
    for (entry, record) in heap
        .iter_mut()
        .zip(records.chunks_exact(HEAP_ENTRY_BYTES as usize))
    {
        let mut item = input.buffer()?;
        if item.pop() != Some(0) {
            return None;
        }
        *entry = HeapEntry {
            fp: u32_at(record, 0),
            itemlen: u32_at(record, 4),
            count: u32_at(record, 16),
            item: (!item.is_empty()).then(|| item.into_boxed_slice()),
        };
    }
    TopK::from_parts(k, width, depth, decay, buckets, heap, rng)
}
