//! Top-K (TOPK.*): RedisBloom's HeavyKeeper — its buckets, fingerprints, decay and heap,
//! so a structure loaded from RedisBloom's RDB or DUMP answers every read identically.
//!
//! A Top-K is `depth` rows of `width` buckets, each a fingerprint and a 32-bit counter,
//! and a min-heap of `k` entries (fingerprint, item, count). An item's fingerprint is
//! `MurmurHash2(item, seed = 1919)`; its bucket in row `i` is `MurmurHash2(item, seed =
//! i) mod width`. Adding an item raises the counter of each bucket that is empty or holds
//! its fingerprint; a bucket held by another fingerprint instead decays, once per unit
//! of the increment, with probability `decay^count` (from a table of `decay^i`, `i <
//! 256`), and passes to the item when it reaches 0. The largest of the item's counters
//! then updates the heap: in place if the item is there, else in place of the smallest
//! entry when it is at least that entry's count.
//!
//! # The decay draw
//!
//! RedisBloom draws with the C library's `rand()`, so its replicas and AOF replays build
//! different structures. Here every draw comes from a generator held in the value
//! (SplitMix64 over a 64-bit state; a new Top-K starts at state 0), advanced only by
//! draws: the same value given the same commands becomes the same value, on a replica or
//! in an AOF replay. The state is saved in the RDB value inside RedisBloom's own layout,
//! in the eight bytes of the first heap entry where RedisBloom writes its item pointer
//! (which it never reads back: it replaces every pointer with the item it loads next),
//! so the bytes stay loadable by RedisBloom and a value from RedisBloom loads with its
//! pointer's bits as the state ([`rdb`]).
//!
//! Every computation a replica must repeat is exact IEEE arithmetic: the decay table is
//! built by repeated multiplication and `decay^count` beyond it by squaring, not with the
//! C library's `pow`, which may differ between machines.

#[cfg(test)]
mod decay_tests;
mod health;
pub mod rdb;
#[cfg(test)]
mod tests;

use crate::hash::{murmur2_32, Columns, RowHashes, HASH_LANES};
use crate::memory::{prefetch, zeroed_bytes, OutOfMemory};

/// The fingerprint seed (RedisBloom's `GA`).
pub const FINGERPRINT_SEED: u32 = 1919;
/// Entries of the decay table (RedisBloom's `TOPK_DECAY_LOOKUP_TABLE`).
pub const DECAY_TABLE: usize = 256;
/// TOPK.RESERVE's defaults: width, depth, decay.
pub const DEFAULT_WIDTH: u32 = 8;
pub const DEFAULT_DEPTH: u32 = 7;
pub const DEFAULT_DECAY: f64 = 0.9;
/// The largest TOPK.INCRBY increment.
pub const MAX_INCREMENT: u32 = 100_000;

/// Bytes of one bucket as stored: fingerprint and count, little-endian `u32`s.
pub const BUCKET_BYTES: u64 = 8;
/// Bytes of one heap entry as RedisBloom stores it (its `HeapBucket` on 64-bit
/// machines: fingerprint, item length, item pointer, count, padding).
pub const HEAP_ENTRY_BYTES: u64 = 24;
/// Bytes held here per heap entry before its item: the entry and its fingerprint's copy.
pub const HELD_PER_ENTRY: u64 = std::mem::size_of::<HeapEntry>() as u64 + 4;
/// RedisBloom's `sizeof(TopK)`, the fixed part of its MEMORY USAGE.
pub const HEADER_BYTES: u64 = 2088;

/// Why a Top-K could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopKError {
    /// k, width or depth is 0, or the decay is outside `(0, 1]` (TOPK.RESERVE's checks).
    Invalid,
    /// The structure would exceed the caller's memory ceiling.
    TooLarge,
    /// The allocator refused it.
    OutOfMemory,
}

impl From<OutOfMemory> for TopKError {
    fn from(_: OutOfMemory) -> Self {
        TopKError::OutOfMemory
    }
}

/// One heap entry: an item with its fingerprint and count. `item` is `None` for a slot
/// never filled, or one whose item RedisBloom saved as empty (it loads those as no item).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapEntry {
    pub fp: u32,
    /// The item's length as recorded (RedisBloom keeps it apart from the item, which it
    /// saves only up to its first NUL byte: such an item never matches again).
    pub itemlen: u32,
    pub count: u32,
    pub item: Option<Box<[u8]>>,
}

impl HeapEntry {
    /// The item's bytes (empty without an item).
    pub fn bytes(&self) -> &[u8] {
        self.item.as_deref().unwrap_or(&[])
    }

    fn is(&self, fp: u32, item: &[u8]) -> bool {
        self.fp == fp && self.itemlen as usize == item.len() && self.bytes() == item
    }
}

/// A Top-K. A plain value: equal structures hold equal bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct TopK {
    k: u32,
    width: u32,
    depth: u32,
    decay: f64,
    /// `width`, as a row's hash is reduced by it.
    columns: Columns,
    /// `width × depth` buckets, row after row: fingerprint and count, little-endian.
    buckets: Vec<u8>,
    /// `k` entries, a min-heap by count (as RedisBloom keeps it).
    heap: Vec<HeapEntry>,
    /// The entries' fingerprints, in heap order: the search for an item scans these
    /// contiguous 4 bytes per entry, not the entries, a block at a time.
    fps: Vec<FpBlock>,
    /// How many entries have a fingerprint of each low byte: an item whose fingerprint's
    /// count is 0 is in no entry, and [`Self::find`] does not scan (most absent items).
    fp_counts: [u32; 256],
    /// How many entries have a count other than 0 (what TOPK.LIST lists at most).
    listed: u32,
    /// The decay draw's generator state.
    rng: u64,
    /// `decay^i` for `i < 256`.
    table: [f64; DECAY_TABLE],
}

/// `decay^i` for `i < 256`, by repeated multiplication.
fn decay_table(decay: f64) -> [f64; DECAY_TABLE] {
    let mut table = [1.0; DECAY_TABLE];
    for i in 1..DECAY_TABLE {
        table[i] = table[i - 1] * decay;
    }
    table
}

/// `base^exp` by squaring: the same bits on every machine.
fn power(mut base: f64, mut exp: u32) -> f64 {
    let mut acc = 1.0;
    while exp > 0 {
        if exp & 1 == 1 {
            acc *= base;
        }
        base *= base;
        exp >>= 1;
    }
    acc
}

/// SplitMix64 (Steele, Lea and Flood; Vigna's `splitmix64.c`): advances `state` by the
/// golden-ratio gamma and returns the mixed state.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether `decay` is one TOPK.RESERVE accepts: in `(0, 1]`.
pub fn valid_decay(decay: f64) -> bool {
    decay > 0.0 && decay <= 1.0
}

/// How many fingerprints [`TopK::find`] compares at once.
const LANES: usize = 16;

/// `LANES` fingerprints of consecutive heap entries (the last block padded with zeros,
/// past the heap's end).
type FpBlock = [u32; LANES];

/// The index of a fingerprint in [`TopK::fp_counts`].
#[inline]
fn low_byte(fp: u32) -> usize {
    (fp & 0xff) as usize
}

/// The fingerprints of `heap` in blocks, or an error instead of an abort.
fn fingerprints(heap: &[HeapEntry]) -> Result<Vec<FpBlock>, OutOfMemory> {
    let blocks = heap.len().div_ceil(LANES);
    let mut fps = Vec::new();
    fps.try_reserve_exact(blocks).map_err(|_| OutOfMemory)?;
    fps.resize(blocks, [0; LANES]);
    for (i, entry) in heap.iter().enumerate() {
        fps[i / LANES][i % LANES] = entry.fp;
    }
    Ok(fps)
}

/// The index of `item`'s bucket in `row` of a sketch `width` wide (RedisBloom computes
/// `row × width + column` in 32 bits).
#[inline]
fn bucket_index(columns: Columns, width: u32, item: &RowHashes, row: u32) -> u32 {
    row.wrapping_mul(width)
        .wrapping_add(columns.of(item.row(row)))
}

/// The bucket `index` of `buckets`: (fingerprint, count).
#[inline]
fn bucket_in(buckets: &[u8], index: usize) -> (u32, u32) {
    let b = &buckets[index * 8..index * 8 + 8];
    (
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
    )
}

#[inline]
fn set_bucket_in(buckets: &mut [u8], index: usize, fp: u32, count: u32) {
    let b = &mut buckets[index * 8..index * 8 + 8];
    b[..4].copy_from_slice(&fp.to_le_bytes());
    b[4..].copy_from_slice(&count.to_le_bytes());
}

/// The next draw in `[0, 1)` from the generator `rng`: the top 53 bits of its next output.
#[inline]
fn draw_from(rng: &mut u64) -> f64 {
    (splitmix64(rng) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The chance a bucket at `count` decays: `decay^count`, from the table below 256
/// and, as RedisBloom, `table[255]^(count / 255) × table[count % 255]` above.
#[inline]
fn decay_chance(table: &[f64; DECAY_TABLE], count: u32) -> f64 {
    match table.get(count as usize) {
        Some(&chance) => chance,
        None => {
            let last = table[DECAY_TABLE - 1];
            power(last, count / 255) * table[(count % 255) as usize]
        }
    }
}

/// `k` empty heap entries, or an error instead of an abort.
fn empty_heap(k: u32) -> Result<Vec<HeapEntry>, OutOfMemory> {
    let mut heap = Vec::new();
    heap.try_reserve_exact(k as usize)
        .map_err(|_| OutOfMemory)?;
    heap.resize_with(k as usize, HeapEntry::default);
    Ok(heap)
}

impl TopK {
    /// An empty Top-K (every dimension at least 1, `decay` in `(0, 1]`, as TOPK.RESERVE
    /// checks) whose [`footprint`](Self::footprint) is at most `max_bytes`.
    pub fn new(
        k: u32,
        width: u32,
        depth: u32,
        decay: f64,
        max_bytes: u64,
    ) -> Result<Self, TopKError> {
        if k == 0 || width == 0 || depth == 0 || !valid_decay(decay) {
            return Err(TopKError::Invalid);
        }
        if Self::footprint_of(k, width, depth) > max_bytes {
            return Err(TopKError::TooLarge);
        }
        // Without a ceiling (a trusted write) the size may not even be addressable.
        let bytes = (u64::from(width) * u64::from(depth)).checked_mul(BUCKET_BYTES);
        let buckets = zeroed_bytes(bytes.ok_or(TopKError::OutOfMemory)?)?;
        let heap = empty_heap(k)?;
        let fps = fingerprints(&heap)?;
        Ok(Self::assembled(
            [k, width, depth],
            decay,
            buckets,
            (heap, fps),
            0,
        ))
    }

    fn assembled(
        [k, width, depth]: [u32; 3],
        decay: f64,
        buckets: Vec<u8>,
        (heap, fps): (Vec<HeapEntry>, Vec<FpBlock>),
        rng: u64,
    ) -> Self {
        TopK {
            k,
            width,
            depth,
            decay,
            columns: Columns::new(width),
            buckets,
            listed: heap.iter().filter(|e| e.count != 0).count() as u32,
            fp_counts: heap.iter().fold([0; 256], |mut counts, e| {
                counts[low_byte(e.fp)] += 1;
                counts
            }),
            heap,
            fps,
            rng,
            table: decay_table(decay),
        }
    }

    /// A Top-K from stored parts: `None` unless every dimension is at least 1, `decay`
    /// in `(0, 1]`, the buckets exactly `width × depth × 8` bytes and the heap `k`
    /// entries (or when memory cannot be had).
    pub fn from_parts(
        k: u32,
        width: u32,
        depth: u32,
        decay: f64,
        buckets: Vec<u8>,
        heap: Vec<HeapEntry>,
        rng: u64,
    ) -> Option<Self> {
        let sized = k >= 1
            && width >= 1
            && depth >= 1
            && valid_decay(decay)
            && buckets.len() as u128 == u128::from(width) * u128::from(depth) * 8
            && heap.len() as u64 == u64::from(k);
        if !sized {
            return None;
        }
        let fps = fingerprints(&heap).ok()?;
        Some(Self::assembled(
            [k, width, depth],
            decay,
            buckets,
            (heap, fps),
            rng,
        ))
    }

    /// The bytes a Top-K of these dimensions holds here (buckets, heap slots, the value
    /// itself), before any item: what the memory ceiling is compared with.
    pub fn footprint_of(k: u32, width: u32, depth: u32) -> u64 {
        let bytes = u128::from(width) * u128::from(depth) * u128::from(BUCKET_BYTES)
            + u128::from(k) * u128::from(HELD_PER_ENTRY)
            + std::mem::size_of::<TopK>() as u128;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// RedisBloom's MEMORY USAGE: `sizeof(TopK)` + 8 bytes per bucket + 24 per heap
    /// entry (it does not count the items).
    pub fn mem_usage(&self) -> u64 {
        let bytes = u128::from(HEADER_BYTES)
            + u128::from(self.width) * u128::from(self.depth) * u128::from(BUCKET_BYTES)
            + u128::from(self.k) * u128::from(HEAP_ENTRY_BYTES);
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// Bytes held: buckets, heap slots and items.
    pub fn allocated_bytes(&self) -> u64 {
        let items: u64 = self.heap.iter().map(|e| e.bytes().len() as u64).sum();
        self.buckets.len() as u64 + self.heap.len() as u64 * HELD_PER_ENTRY + items
    }

    pub fn k(&self) -> u32 {
        self.k
    }
    pub fn width(&self) -> u32 {
        self.width
    }
    pub fn depth(&self) -> u32 {
        self.depth
    }
    pub fn decay(&self) -> f64 {
        self.decay
    }
    /// The decay draw's generator state.
    pub fn rng_state(&self) -> u64 {
        self.rng
    }
    /// The buckets as stored: fingerprint and count, little-endian `u32`s, row after row.
    pub fn bucket_bytes(&self) -> &[u8] {
        &self.buckets
    }
    /// The heap, in heap order.
    pub fn heap(&self) -> &[HeapEntry] {
        &self.heap
    }
    /// The buckets' buffer, for active defragmentation.
    pub fn buckets_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buckets
    }

    /// The bucket `index`: (fingerprint, count).
    #[inline]
    fn bucket(&self, index: usize) -> (u32, u32) {
        bucket_in(&self.buckets, index)
    }

    #[cfg(test)]
    fn set_bucket(&mut self, index: usize, fp: u32, count: u32) {
        set_bucket_in(&mut self.buckets, index, fp, count);
    }

    /// [`decay_chance`] in this sketch's table.
    #[cfg(test)]
    fn decay_chance(&self, count: u32) -> f64 {
        decay_chance(&self.table, count)
    }

    /// The index of `item`'s bucket in `row` ([`bucket_index`]).
    #[inline]
    fn bucket_of(&self, item: &RowHashes, row: u32) -> u32 {
        bucket_index(self.columns, self.width, item, row)
    }

    /// The next draw in `[0, 1)` ([`draw_from`] the sketch's generator).
    #[cfg(test)]
    fn draw(&mut self) -> f64 {
        draw_from(&mut self.rng)
    }

    /// The heap entry holding `item` (searched from the last entry, as RedisBloom does):
    /// the fingerprints are compared a block of 16 at a time (a loop without an early exit
    /// over a fixed-size array, which the compiler vectorizes), the entries only where one
    /// matched.
    fn find(&self, fp: u32, item: &[u8]) -> Option<usize> {
        if self.fp_counts[low_byte(fp)] == 0 {
            return None;
        }
        for (b, block) in self.fps.iter().enumerate().rev() {
            if block.iter().fold(false, |hit, &f| hit | (f == fp)) {
                let base = b * LANES;
                let found = (0..LANES).rev().map(|j| base + j).find(|&i| {
                    block[i - base] == fp && self.heap.get(i).is_some_and(|e| e.is(fp, item))
                });
                if found.is_some() {
                    return found;
                }
            }
        }
        None
    }

    /// Sets the fingerprint of entry `at` in [`Self::fps`].
    fn set_fp(&mut self, at: usize, fp: u32) {
        self.fps[at / LANES][at % LANES] = fp;
    }

    /// Sets entry `at`'s count, keeping [`Self::listed_entries`] current.
    fn recount(&mut self, at: usize, count: u32) {
        let entry = &mut self.heap[at];
        self.listed = self.listed + u32::from(count != 0) - u32::from(entry.count != 0);
        entry.count = count;
    }

    /// How many entries have a count other than 0 (TOPK.LIST's length).
    pub fn listed_entries(&self) -> u32 {
        self.listed
    }

    /// RedisBloom's sift-down from `start` (its comparisons exactly: a child with an
    /// equal count still moves up on the first step).
    fn heapify_down(&mut self, start: usize) {
        let heap = &mut self.heap;
        let len = heap.len();
        if len < 2 || (len - 2) / 2 < start {
            return;
        }
        let smaller = |heap: &[HeapEntry], child: usize| {
            if child + 1 < len && heap[child].count > heap[child + 1].count {
                child + 1
            } else {
                child
            }
        };
        let mut child = smaller(heap, 2 * start + 1);
        if heap[child].count > heap[start].count {
            return;
        }
        let top = heap[start].count;
        let mut at = start;
        loop {
            heap.swap(at, child);
            at = child;
            if (len - 2) / 2 < child {
                break;
            }
            child = smaller(heap, 2 * child + 1);
            if heap[child].count >= top {
                break;
            }
        }
        // The entries moved along one path: their fingerprints follow.
        let mut i = at;
        loop {
            let fp = self.heap[i].fp;
            self.set_fp(i, fp);
            if i == start {
                break;
            }
            i = (i - 1) / 2;
        }
    }

    /// Adds `item` `increment` times (TOPK.ADD: 1; TOPK.INCRBY: up to 100 000). Returns
    /// what RedisBloom replies for it: the item the heap expelled to make room, if any
    /// (`None`: no entry was replaced, or the replaced slot held no item).
    pub fn add(&mut self, item: &[u8], increment: u32) -> Option<Box<[u8]>> {
        let mut expelled = None;
        self.add_then(item, increment, |item| expelled = item.map(Box::from));
        expelled
    }

    /// [`Self::add`], handing the expelled item to `expelled` before its entry takes
    /// `item`: an entry whose item has the new one's length keeps its allocation (no
    /// allocation and free per expelled item).
    pub fn add_then(&mut self, item: &[u8], increment: u32, expelled: impl FnOnce(Option<&[u8]>)) {
        let hashed = RowHashes::new(item, Some(FINGERPRINT_SEED));
        // The buckets of the first rows are requested from memory at once: they are far
        // apart, and each row's work then waits for at most its own (TOPK.ADD ×100 takes
        // 10 % less server CPU).
        let mut first = [0u32; HASH_LANES - 1];
        for (row, index) in first.iter_mut().enumerate().take(self.depth as usize) {
            *index = self.bucket_of(&hashed, row as u32);
            prefetch(&self.buckets, *index as usize * BUCKET_BYTES as usize);
        }
        let fp = hashed.lead();
        let heap_min = self.heap[0].count;
        // The fields the rows need, as locals: the loop's writes to the buckets' bytes
        // then cannot make the compiler reload them.
        let (columns, width) = (self.columns, self.width);
        let mut rng = self.rng;
        let table = &self.table;
        let buckets = &mut self.buckets[..];
        let mut max_count = 0u32;
        for row in 0..self.depth {
            let index = match first.get(row as usize) {
                Some(&index) => index,
                None => bucket_index(columns, width, &hashed, row),
            } as usize;
            let (bucket_fp, count) = bucket_in(buckets, index);
            if count == 0 || bucket_fp == fp {
                // The item's own bucket, or an empty one, which takes it (from count 0).
                let count = count.wrapping_add(increment);
                set_bucket_in(buckets, index, fp, count);
                max_count = max_count.max(count);
            } else {
                let mut count = count;
                let mut left = increment;
                let mut taken = false;
                while left > 0 {
                    if draw_from(&mut rng) < decay_chance(table, count) {
                        count -= 1;
                        if count == 0 {
                            set_bucket_in(buckets, index, fp, left);
                            max_count = max_count.max(left);
                            taken = true;
                            break;
                        }
                    }
                    left -= 1;
                }
                if !taken {
                    set_bucket_in(buckets, index, bucket_fp, count);
                }
            }
        }
        self.rng = rng;
        if max_count < heap_min {
            return expelled(None);
        }
        if let Some(at) = self.find(fp, item) {
            // Not the larger of the two: the item's counters may have decayed.
            self.recount(at, max_count);
            self.heapify_down(at);
            return expelled(None);
        }
        self.recount(0, max_count);
        let entry = &mut self.heap[0];
        expelled(entry.item.as_deref());
        match &mut entry.item {
            Some(old) if old.len() == item.len() => old.copy_from_slice(item),
            slot => *slot = Some(item.into()),
        }
        self.fp_counts[low_byte(entry.fp)] -= 1;
        self.fp_counts[low_byte(fp)] += 1;
        entry.fp = fp;
        entry.itemlen = item.len() as u32;
        self.set_fp(0, fp);
        self.heapify_down(0);
    }

    /// Whether `item` is in the heap (TOPK.QUERY).
    pub fn query(&self, item: &[u8]) -> bool {
        self.find(murmur2_32(item, FINGERPRINT_SEED), item)
            .is_some()
    }

    /// TOPK.COUNT's estimate, as RedisBloom computes it: the largest counter holding the
    /// item's fingerprint, counting only those at least the heap's minimum when the item
    /// is in the heap.
    pub fn count(&self, item: &[u8]) -> u32 {
        let hashed = RowHashes::new(item, Some(FINGERPRINT_SEED));
        let fp = hashed.lead();
        let heap_min = self.heap[0].count;
        let in_heap = self.find(fp, item).is_some();
        (0..self.depth)
            .map(|row| self.bucket(self.bucket_of(&hashed, row) as usize))
            .filter(|&(bucket_fp, count)| bucket_fp == fp && (!in_heap || count >= heap_min))
            .map(|(_, count)| count)
            .max()
            .unwrap_or(0)
    }

    /// TOPK.LIST: the heap's entries by count, largest first (equal counts in heap
    /// order, as the stable sort of RedisBloom's C library leaves them), up to the first
    /// with count 0.
    pub fn list(&self) -> Vec<&HeapEntry> {
        let mut sorted: Vec<&HeapEntry> = self.heap.iter().collect();
        sorted.sort_by_key(|e| std::cmp::Reverse(e.count));
        sorted.into_iter().take_while(|e| e.count != 0).collect()
    }

    /// An independent copy (COPY), or `None` when memory cannot be had.
    pub fn try_clone(&self) -> Option<Self> {
        let buckets = crate::memory::sparse_copy(&self.buckets).ok()?;
        let mut heap = Vec::new();
        heap.try_reserve_exact(self.heap.len()).ok()?;
        heap.extend(self.heap.iter().cloned());
        let fps = fingerprints(&heap).ok()?;
        let dims = [self.k, self.width, self.depth];
        Some(Self::assembled(
            dims,
            self.decay,
            buckets,
            (heap, fps),
            self.rng,
        ))
    }
}
