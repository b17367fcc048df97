//! The expandable filter (XF.*): a fingerprint filter that grows from a handful of items
//! to billions with the false-positive rate it was asked for, lookups that read the same
//! few cache lines at every size, deletes and counts (docs/xf.md has the design, its
//! proofs and its figures).
//!
//! **Hash bits.** An item is the 64-bit XXH3 of its bytes under [`XF_SEED`] ([`XFilter::hash`]).
//! The table is a directory of partitions grown by linear hashing: at level `ℓ` with split
//! pointer `s` there are `2^ℓ + s` partitions; an item's partition is `h mod 2^ℓ`, or
//! `h mod 2^(ℓ+1)` when that is below `s` (partition `p` then has level `ℓ_p = ℓ + 1`).
//! The top [`BUCKET_BITS`] bits of `h` choose the mini-bucket inside the partition; the
//! fingerprint is bits `[ℓ_p, ℓ_p + len)`.
//!
//! **Growth.** When the entries exceed `LAMBDA · BUCKETS` per partition, the partition at
//! the split pointer splits: each entry moves to `j` or `j + 2^ℓ` by its lowest
//! fingerprint bit, which it then drops (the bit becomes an address bit). An entry with no
//! bit left (a *void* entry, matching its whole mini-bucket) is copied into both halves.
//! New entries get longer fingerprints as the filter grows (the widening schedule of
//! [`XFilter::new_len`]) so that the union bound of the false-positive rate, kept exactly
//! as a histogram of each entry's total of hash bits, stays below the error rate for ever.

mod batch;
pub mod dump;
#[cfg(test)]
mod figures;
mod health;
mod partition;
pub mod rdb;
#[cfg(test)]
mod tests;

pub use dump::{chunk, header, Loader};
pub use partition::{Partition, BUCKETS, BUCKET_BITS, MAX_ENTRIES, MAX_LEN};

use partition::{make_slot, slot_len, slot_matches};
use std::fmt;

/// The seed of the item hash.
pub const XF_SEED: u64 = 0x5846_5f69_7465_6d73; // "XF_items"
/// Most entries per mini-bucket on average before the next split.
pub const LAMBDA: f64 = 1.0;
/// The widening schedule's offset `K`: generation `g` spends `K / ((g+K)(g+K+1))` of the
/// error budget (the shares sum to 1 over all generations).
pub const WIDEN_K: u64 = 16;
/// Partitions per directory segment (the directory never moves more than one segment).
pub const SEGMENT: usize = 1024;
/// Highest level (the directory's address bits).
pub const MAX_LEVEL: u32 = 40;
/// The fixed part of [`XFilter::memory_bytes`]: the value's own fields.
pub const XF_OVERHEAD: usize = std::mem::size_of::<XFilter>();

/// What a filter is created with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XfParams {
    pub error_rate: f64,
    pub initial_capacity: u64,
}

impl Default for XfParams {
    fn default() -> XfParams {
        XfParams {
            error_rate: crate::limits::XF_DEFAULT_ERROR_RATE,
            initial_capacity: crate::limits::XF_DEFAULT_CAPACITY,
        }
    }
}

/// Why an XF operation failed (nothing was changed). `Display` is the reply text of XF's
/// own refusals; for the ceiling, the allocator and bad data the module replies the texts
/// every family shares (src/errors.rs), and `Display` only describes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XfError {
    /// The error rate is not in `[XF_MIN_ERROR_RATE, 1)`.
    BadErrorRate,
    /// The capacity is 0 or above [`crate::limits::XF_MAX_CAPACITY`].
    BadCapacity,
    /// The filter would exceed the caller's memory ceiling.
    TooLarge,
    /// The allocator refused.
    OutOfMemory,
    /// The item's partition holds [`MAX_ENTRIES`] entries (an item added that many times).
    PartitionFull,
    /// The filter has used every hash bit (far beyond any memory).
    MaxSize,
    /// A dump or RDB payload is malformed or inconsistent.
    BadData,
    /// A LOADCHUNK iterator is not where the loaded data ends.
    BadOffset,
}

impl fmt::Display for XfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            XfError::BadErrorRate => "ERR error rate must be in [1e-9, 1)",
            XfError::BadCapacity => "ERR capacity must be in [1, 2^40]",
            XfError::TooLarge => "the filter would exceed the memory ceiling",
            XfError::OutOfMemory => "allocation failed",
            XfError::PartitionFull => "ERR item added too many times",
            XfError::MaxSize => "ERR the filter has reached its largest size",
            XfError::BadData => "malformed or inconsistent XF data",
            XfError::BadOffset => "ERR invalid offset - no chunk found",
        })
    }
}

impl std::error::Error for XfError {}

/// XF.INFO's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct XfInfo {
    pub error_rate: f64,
    /// Items added and not deleted.
    pub items: u64,
    /// Entries stored (items plus the copies of void entries).
    pub entries: u64,
    /// Entries before the next split.
    pub capacity: u64,
    /// Splits since creation.
    pub expansions: u32,
    pub partitions: u64,
    /// [`XFilter::memory_bytes`].
    pub bytes: u64,
    /// Memory per item, in bits (0 when empty).
    pub bits_per_item: f64,
    /// The false-positive rate the structure guarantees now (union bound).
    pub fp_bound: f64,
}

/// An expandable filter (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct XFilter {
    pub(crate) error_rate: f64,
    pub(crate) initial_capacity: u64,
    /// The level at creation.
    pub(crate) level0: u32,
    pub(crate) level: u32,
    /// Partitions `< split` have level `level + 1`.
    pub(crate) split: u64,
    pub(crate) items: u64,
    pub(crate) entries: u64,
    /// Entries by their total of hash bits `T = ℓ_p + BUCKET_BITS + len` (0..=64).
    pub(crate) hist: [u64; 65],
    /// The partitions, [`SEGMENT`] per segment.
    pub(crate) segments: Vec<Vec<Partition>>,
    /// [`XFilter::memory_bytes`], kept on every change.
    pub(crate) bytes: usize,
}

/// The level whose `2^level` partitions hold `capacity` items at the split load.
pub(crate) fn level_for(capacity: u64) -> u32 {
    let per = LAMBDA * BUCKETS as f64;
    let mut level = 0;
    while (per * (1u64 << level) as f64) < capacity as f64 && level < MAX_LEVEL {
        level += 1;
    }
    level
}

/// A split computed before anything changes.
struct SplitPlan {
    low: Partition,
    high: Partition,
    voids: u64,
    /// Bytes the split adds.
    growth: usize,
}

/// Bytes the directory entry of a partition takes.
pub(crate) const PARTITION_BYTES: usize = std::mem::size_of::<Partition>();

impl XFilter {
    /// An empty filter, or `BadErrorRate`/`BadCapacity`, `TooLarge` when its empty
    /// partitions alone would exceed `max_bytes`.
    pub fn new(p: XfParams, max_bytes: u64) -> Result<XFilter, XfError> {
        if !(p.error_rate >= crate::limits::XF_MIN_ERROR_RATE && p.error_rate < 1.0) {
            return Err(XfError::BadErrorRate);
        }
        if p.initial_capacity == 0 || p.initial_capacity > crate::limits::XF_MAX_CAPACITY {
            return Err(XfError::BadCapacity);
        }
        let level0 = level_for(p.initial_capacity);
        let count = 1u64 << level0;
        if Self::empty_bytes(count) > max_bytes {
            return Err(XfError::TooLarge);
        }
        let mut f = XFilter {
            error_rate: p.error_rate,
            initial_capacity: p.initial_capacity,
            level0,
            level: level0,
            split: 0,
            items: 0,
            entries: 0,
            hist: [0; 65],
            segments: Vec::new(),
            bytes: 0,
        };
        for _ in 0..count {
            f.push_partition(Partition::empty())?;
        }
        f.bytes = f.recount_bytes();
        if f.new_len(level0, 0, level0) > MAX_LEN {
            return Err(XfError::BadErrorRate);
        }
        Ok(f)
    }

    /// What `count` empty partitions take, with the fixed part.
    fn empty_bytes(count: u64) -> u64 {
        let per = (PARTITION_BYTES + BUCKETS / 8) as u64;
        (XF_OVERHEAD as u64).saturating_add(count.saturating_mul(per))
    }

    /// The 64-bit hash of an item.
    pub fn hash(item: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(item, XF_SEED)
    }

    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }
    pub fn initial_capacity(&self) -> u64 {
        self.initial_capacity
    }
    pub fn items(&self) -> u64 {
        self.items
    }
    pub fn entries(&self) -> u64 {
        self.entries
    }
    /// Partitions in the directory.
    pub fn partitions(&self) -> u64 {
        (1u64 << self.level) + self.split
    }
    /// Splits since creation.
    pub fn expansions(&self) -> u64 {
        self.partitions() - (1u64 << self.level0)
    }
    /// Entries the filter holds before its next split.
    pub fn capacity(&self) -> u64 {
        (LAMBDA * (BUCKETS as u64 * self.partitions()) as f64) as u64
    }

    pub(crate) fn partition(&self, j: u64) -> &Partition {
        &self.segments[j as usize / SEGMENT][j as usize % SEGMENT]
    }
    pub(crate) fn partition_mut(&mut self, j: u64) -> &mut Partition {
        &mut self.segments[j as usize / SEGMENT][j as usize % SEGMENT]
    }

    /// The partition of hash `h` and its level.
    #[inline]
    pub(crate) fn address(&self, h: u64) -> (u64, u32) {
        Self::address_at(h, self.level, self.split)
    }

    /// The level of partition `j`.
    pub(crate) fn level_of(&self, j: u64) -> u32 {
        if j < self.split || j >= 1u64 << self.level {
            self.level + 1
        } else {
            self.level
        }
    }

    #[inline]
    fn bucket_of(h: u64) -> usize {
        (h >> (64 - BUCKET_BITS)) as usize
    }

    /// The fingerprint length of an entry inserted at level `level` into partition `p` of
    /// level `lp` (docs/xf.md, "The false-positive budget"). Generation `g = level −
    /// level0` adds `N_g = λ · BUCKETS · 2^level` entries (twice that for generation 0,
    /// which also fills the initial partitions) and may spend `ε · K / ((g+K)(g+K+1))` of
    /// the bound, so each of its entries gets `T* = level + b + log2 x` hash bits with
    /// `x = λ · m_g · (g+K)(g+K+1) / (K · ε)`. `T*` is rarely whole: partition `p` gets
    /// `⌊log2 x⌋ + 1` bits when `u(p) < 2 (1 − 2^⌊log2 x⌋ / x)`, where `u(p)` is `p`'s bit
    /// reversal as a fraction (a van der Corput sequence: any prefix of the partitions
    /// takes the upper length in the right proportion), `⌊log2 x⌋` otherwise — the mix
    /// whose mean `2^−len` is `1/x`. A partition already split (`lp = level + 1`) has one
    /// address bit more, so its entries take one fingerprint bit less for the same `T`.
    /// Only exactly rounded operations and integer comparisons: the same on every machine.
    pub(crate) fn new_len(&self, level: u32, p: u64, lp: u32) -> u32 {
        let g = u64::from(level - self.level0);
        let first = if g == 0 { 2.0 } else { 1.0 };
        let share = ((g + WIDEN_K) * (g + WIDEN_K + 1)) as f64 / WIDEN_K as f64;
        let x = LAMBDA * first * share / self.error_rate;
        let mut low = 0u32;
        while low < 63 && ((1u64 << (low + 1)) as f64) <= x {
            low += 1;
        }
        let upper = 2.0 * (1.0 - (1u64 << low) as f64 / x);
        let u = (p.reverse_bits() >> 11) as f64 / (1u64 << 53) as f64;
        let len = low + u32::from(u < upper);
        len.saturating_sub(lp - level)
    }

    /// The partition of hash `h` and its level, at level `level` and split pointer `split`.
    #[inline]
    fn address_at(h: u64, level: u32, split: u64) -> (u64, u32) {
        let p = h & ((1u64 << level) - 1);
        if p < split {
            (h & ((1u64 << (level + 1)) - 1), level + 1)
        } else {
            (p, level)
        }
    }

    /// Adds the item of hash `h` (always: an item added twice has two entries). May split
    /// one partition first (bounded work: one partition's entries). Every check is made
    /// before anything changes: on error nothing changed.
    pub fn insert(&mut self, h: u64, max_bytes: u64) -> Result<(), XfError> {
        let due = (self.entries as f64) >= LAMBDA * (BUCKETS as u64 * self.partitions()) as f64;
        let plan = if due { Some(self.plan_split()?) } else { None };
        let (level, split) = match plan {
            Some(_) if self.split + 1 == 1u64 << self.level => (self.level + 1, 0),
            Some(_) => (self.level, self.split + 1),
            None => (self.level, self.split),
        };
        let (p, lp) = Self::address_at(h, level, split);
        let len = self.new_len(level, p, lp);
        let t = lp + BUCKET_BITS + len;
        if len > MAX_LEN || t > 64 {
            return Err(XfError::MaxSize);
        }
        let part = match &plan {
            Some(s) if p == self.split => &s.low,
            Some(s) if p == self.partitions() => &s.high,
            _ => self.partition(p),
        };
        if part.entries() >= MAX_ENTRIES {
            return Err(XfError::PartitionFull);
        }
        let width = part.width().max(len + 1) as usize;
        let new_bits = BUCKETS + (part.entries() as usize + 1) * (width + 1);
        let growth = (new_bits.div_ceil(64) * 8).saturating_sub(part.heap_bytes());
        let split_growth = plan.as_ref().map_or(0, |s| s.growth);
        if (self.bytes as u64).saturating_add((growth + split_growth) as u64) > max_bytes {
            return Err(XfError::TooLarge);
        }
        if let Some(s) = plan {
            self.apply_split(s)?;
        }
        let slot = make_slot(h >> lp, len);
        let before = self.partition(p).heap_bytes();
        self.partition_mut(p).insert(Self::bucket_of(h), slot);
        self.bytes = self.bytes + self.partition(p).heap_bytes() - before;
        self.hist[t as usize] += 1;
        self.entries += 1;
        self.items += 1;
        Ok(())
    }

    /// The split of the partition at the split pointer (see the module docs), not yet
    /// applied.
    fn plan_split(&self) -> Result<SplitPlan, XfError> {
        if self.level + 1 >= MAX_LEVEL {
            return Err(XfError::MaxSize);
        }
        let mut low = Vec::new();
        let mut high = Vec::new();
        let mut voids = 0u64;
        for (q, slot) in self.partition(self.split).decode() {
            if slot == 1 {
                low.push((q, 1));
                high.push((q, 1));
                voids += 1;
            } else {
                let child = if slot & 1 == 0 { &mut low } else { &mut high };
                child.push((q, slot >> 1));
            }
        }
        let (low, high) = (Partition::encode(&low), Partition::encode(&high));
        if low.entries() > MAX_ENTRIES || high.entries() > MAX_ENTRIES {
            return Err(XfError::PartitionFull);
        }
        let old = self.partition(self.split).heap_bytes();
        let growth =
            (low.heap_bytes() + high.heap_bytes() + self.push_growth()).saturating_sub(old);
        Ok(SplitPlan {
            low,
            high,
            voids,
            growth,
        })
    }

    /// Applies a split: fails only when the allocator refuses the directory's room, and
    /// then changes nothing.
    fn apply_split(&mut self, s: SplitPlan) -> Result<(), XfError> {
        let j = self.split;
        let old = self.partition(j).heap_bytes();
        let dir_before = self.dir_bytes();
        let high_bytes = s.high.heap_bytes();
        self.push_partition(s.high)?;
        self.bytes =
            self.bytes - old + s.low.heap_bytes() + high_bytes + self.dir_bytes() - dir_before;
        *self.partition_mut(j) = s.low;
        // Each void entry (T = ℓ + b) became two at T + 1; the others keep their T.
        let t = (self.level + BUCKET_BITS) as usize;
        self.hist[t] -= s.voids;
        self.hist[t + 1] += 2 * s.voids;
        self.entries += s.voids;
        self.split += 1;
        if self.split == 1u64 << self.level {
            self.level += 1;
            self.split = 0;
        }
        Ok(())
    }

    /// Directory bytes [`Self::push_partition`] would add.
    fn push_growth(&self) -> usize {
        let (len, cap) = (self.segments.len(), self.segments.capacity());
        let outer = if len == cap {
            ((cap * 2).max(4) - cap) * std::mem::size_of::<Vec<Partition>>()
        } else {
            0
        };
        match self.segments.last() {
            Some(s) if s.len() < SEGMENT && s.len() == s.capacity() => {
                s.len().min(SEGMENT - s.len()) * PARTITION_BYTES
            }
            Some(s) if s.len() < SEGMENT => 0,
            _ => PARTITION_BYTES + outer,
        }
    }

    /// The directory's allocations: the segment list and each segment's partitions.
    fn dir_bytes(&self) -> usize {
        self.segments.capacity() * std::mem::size_of::<Vec<Partition>>()
            + self.segments.iter().map(Vec::capacity).sum::<usize>() * PARTITION_BYTES
    }

    /// Drops the partitions from index `n` on (a loader undoing a refused chunk).
    pub(crate) fn truncate_partitions(&mut self, n: u64) {
        let n = n as usize;
        self.segments.truncate(n.div_ceil(SEGMENT));
        if let Some(last) = self.segments.last_mut() {
            last.truncate(n - (n.div_ceil(SEGMENT) - 1) * SEGMENT);
        }
    }

    /// Appends a partition; when the allocator refuses, nothing changed.
    pub(crate) fn push_partition(&mut self, p: Partition) -> Result<(), XfError> {
        if self.segments.last().is_none_or(|s| s.len() == SEGMENT) {
            let mut seg = Vec::new();
            seg.try_reserve_exact(1).map_err(|_| XfError::OutOfMemory)?;
            self.segments
                .try_reserve(1)
                .map_err(|_| XfError::OutOfMemory)?;
            seg.push(p);
            self.segments.push(seg);
            return Ok(());
        }
        let seg = self.segments.last_mut().expect("a segment");
        if seg.len() == seg.capacity() {
            let more = seg.len().clamp(1, SEGMENT - seg.len());
            seg.try_reserve_exact(more)
                .map_err(|_| XfError::OutOfMemory)?;
        }
        seg.push(p);
        Ok(())
    }

    /// Whether the item of hash `h` may have been added (never false for an added item
    /// not deleted).
    pub fn contains(&self, h: u64) -> bool {
        let (p, lp) = self.address(h);
        let fp = h >> lp;
        let part = self.partition(p);
        // The run's line is requested before the bitmap is scanned: two misses overlap.
        Self::prefetch_run(part, h);
        part.bucket(Self::bucket_of(h)).any(|s| slot_matches(s, fp))
    }

    /// How many entries match the item of hash `h` (at least the times it was added and
    /// not deleted).
    pub fn count(&self, h: u64) -> u64 {
        let (p, lp) = self.address(h);
        let fp = h >> lp;
        self.partition(p)
            .bucket(Self::bucket_of(h))
            .filter(|&s| slot_matches(s, fp))
            .count() as u64
    }

    /// Removes the longest entry matching the item of hash `h`; false when none matches.
    pub fn delete(&mut self, h: u64) -> bool {
        let (p, lp) = self.address(h);
        let fp = h >> lp;
        let q = Self::bucket_of(h);
        let part = self.partition(p);
        let (first, n) = part.run(q);
        let mut best: Option<(usize, u32)> = None;
        for i in first..first + n {
            let s = part.slot(i);
            if slot_matches(s, fp) {
                let len = slot_len(s).unwrap_or(0);
                if best.is_none_or(|(_, l)| len > l) {
                    best = Some((i, len));
                }
            }
        }
        let Some((i, len)) = best else {
            return false;
        };
        let before = part.heap_bytes();
        self.partition_mut(p).remove(q, i);
        self.bytes = self.bytes + self.partition(p).heap_bytes() - before;
        self.hist[(lp + BUCKET_BITS + len) as usize] -= 1;
        self.entries -= 1;
        self.items = self.items.saturating_sub(1);
        true
    }

    /// The union bound of the false-positive rate: Σ entries 2^−T.
    pub fn fp_bound(&self) -> f64 {
        self.hist
            .iter()
            .enumerate()
            .map(|(t, &n)| n as f64 * (-(t as f64)).exp2())
            .sum()
    }

    /// What MEMORY USAGE reports: the fixed part, the directory's allocations and every
    /// partition's bit array.
    pub fn memory_bytes(&self) -> usize {
        self.bytes
    }

    /// [`Self::memory_bytes`] counted from the parts (O(partitions)).
    pub(crate) fn recount_bytes(&self) -> usize {
        let heap: usize = self
            .segments
            .iter()
            .flatten()
            .map(Partition::heap_bytes)
            .sum();
        XF_OVERHEAD + self.dir_bytes() + heap
    }

    /// XF.INFO's figures.
    pub fn info(&self) -> XfInfo {
        let bytes = self.memory_bytes() as u64;
        XfInfo {
            error_rate: self.error_rate,
            items: self.items,
            entries: self.entries,
            capacity: self.capacity(),
            expansions: u32::try_from(self.expansions()).unwrap_or(u32::MAX),
            partitions: self.partitions(),
            bytes,
            bits_per_item: if self.items == 0 {
                0.0
            } else {
                bytes as f64 * 8.0 / self.items as f64
            },
            fp_bound: self.fp_bound(),
        }
    }
}
