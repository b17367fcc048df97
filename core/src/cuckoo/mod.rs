//! Cuckoo filter core, byte-identical with RedisBloom 2.4.20 (COMPAT §8, §4.3, §4.5).
//!
//! A filter is a list of sub-filters ("SubCF"s), oldest first. Each sub-filter is a flat
//! byte array of `buckets × bucket_size` fingerprint slots: bucket `j` occupies bytes
//! `[j·bs, (j+1)·bs)`, a slot holds a fingerprint 1..=255 and 0 means empty.
//!
//! Nothing here knows about Redis: the command layer parses and range-checks arguments,
//! produces the literal error strings and enforces the per-command max-expansions guard;
//! this module does the sizing, hashing, slot placement and every overflow / allocation
//! check, and never panics on any input.
//!
//! Error mapping for the command layer (see [`CuckooError`]):
//! * creation: `InvalidParams` / `CapacityTooSmall` → `ERR Could not create filter`;
//!   `Overflow` / `OutOfMemory` → `ERR Insufficient memory to create filter`;
//!   `TooLarge` → the memory-ceiling message.
//! * insert: `NoSpace` → `Filter is full` (or `-1` in CF.INSERT);
//!   `Overflow` / `OutOfMemory` → growth failure (`Memory allocation failure` at 2.4.20 /
//!   `ERR Insufficient memory` at HEAD, or `-1`); `TooLarge` → the ceiling message (or `-1`).

pub mod dump;

use std::fmt;

use crate::hash::murmur64a;
use crate::{sparse_copy, zeroed_bytes};

/// Multiplier RedisBloom uses to derive the alternate bucket from a fingerprint.
pub const ALT_HASH_MULTIPLIER: u64 = 0x5bd1e995;
/// Largest bucket count of a sub-filter (RedisBloom keeps it in a 56-bit field).
pub const MAX_BUCKETS: u64 = (1 << 56) - 1;
/// Largest number of sub-filters (RedisBloom keeps the count in a u16).
pub const MAX_SUB_FILTERS: usize = u16::MAX as usize;
/// Largest accepted bucket size (slots per bucket).
pub const MAX_BUCKET_SIZE: u16 = 255;
/// Largest accepted (stored, already rounded) expansion.
pub const MAX_EXPANSION: u16 = 32768;

/// RedisBloom's defaults (CF.ADD auto-creation and RDB encver < 4).
pub const DEFAULT_CAPACITY: u64 = 1024;
pub const DEFAULT_BUCKET_SIZE: u16 = 2;
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
pub const DEFAULT_EXPANSION: u16 = 1;
/// Default max-expansions guard of the command layer (`CF_MAX_EXPANSIONS`); not enforced here.
pub const DEFAULT_MAX_EXPANSIONS: usize = 32;

/// Why an operation failed. Every variant is a distinct reply at the command layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuckooError {
    /// A parameter or stored field is outside the accepted range (bucket size 0 or > 255,
    /// max iterations 0, expansion > 32768, bucket count 0 / not a power of two, data
    /// length mismatch, sub-filter count 0 or > 65535, ...).
    InvalidParams,
    /// `capacity < 2 × bucket_size` at creation (`ERR Could not create filter`).
    CapacityTooSmall,
    /// A size exceeds RedisBloom's layout limits: 65535 sub-filters, 2^56−1 buckets, or a
    /// byte-size multiplication/addition that overflows.
    Overflow,
    /// The filter's bucket data would exceed the caller's `max_bytes` ceiling.
    TooLarge,
    /// The allocator refused the buffer.
    OutOfMemory,
    /// Insert found no slot and the filter does not grow (expansion 0).
    NoSpace,
    /// A LOADCHUNK position/length pair was rejected (COMPAT §7.4).
    BadChunk,
}

impl CuckooError {
    /// True for the errors the growth step can produce (`Overflow`, `TooLarge`, `OutOfMemory`).
    pub fn is_grow_failure(self) -> bool {
        matches!(
            self,
            CuckooError::Overflow | CuckooError::TooLarge | CuckooError::OutOfMemory
        )
    }
}

impl fmt::Display for CuckooError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            CuckooError::InvalidParams => "invalid cuckoo filter parameters",
            CuckooError::CapacityTooSmall => "capacity smaller than twice the bucket size",
            CuckooError::Overflow => "cuckoo filter size limits exceeded",
            CuckooError::TooLarge => "cuckoo filter would exceed the memory ceiling",
            CuckooError::OutOfMemory => "allocation failed",
            CuckooError::NoSpace => "filter is full",
            CuckooError::BadChunk => "bad chunk",
        };
        f.write_str(s)
    }
}

impl std::error::Error for CuckooError {}

/// Next power of two ≥ `n`, as RedisBloom's `getNextN2` (0 → 0, 1 → 1); `None` above 2^63.
#[inline]
pub fn next_pow2(n: u64) -> Option<u64> {
    if n == 0 {
        Some(0)
    } else {
        n.checked_next_power_of_two()
    }
}

/// The stored expansion for a requested one (COMPAT §8.1): next power of two, 0 → 0, 1 → 1.
/// `None` when the request exceeds 32768 (the stored field is a u16 and 65536 would not fit).
pub fn round_expansion(expansion: u16) -> Option<u16> {
    if expansion > MAX_EXPANSION {
        return None;
    }
    // ≤ 32768 → its next power of two is ≤ 32768 and fits.
    next_pow2(u64::from(expansion)).and_then(|e| u16::try_from(e).ok())
}

/// Base bucket count for a capacity (COMPAT §8.1): next power of two ≥ ⌊capacity / bs⌋,
/// 0 → 1. `None` when `bucket_size` is 0 or the power of two does not fit in a u64
/// (the command layer never passes such a capacity; it is an `Overflow`).
pub fn base_buckets(capacity: u64, bucket_size: u16) -> Option<u64> {
    let per = capacity.checked_div(u64::from(bucket_size))?;
    match next_pow2(per)? {
        0 => Some(1),
        n => Some(n),
    }
}

/// Growth factor `expansion^n` computed as RedisBloom does: a double `pow`, converted to
/// an integer (Rust's `as` saturates where C is undefined; any saturated value fails the
/// 56-bit check that follows anyway).
#[inline]
fn growth_factor(expansion: u16, n: usize) -> u64 {
    f64::from(expansion).powf(n as f64) as u64
}

/// Bucket count of sub-filter number `n` for a base count and an expansion, with
/// RedisBloom's 56-bit limit (`growth > MAX_BUCKETS / base` fails). `None` on overflow or
/// a zero result.
pub fn sub_filter_buckets(base: u64, expansion: u16, n: usize) -> Option<u64> {
    if base == 0 {
        return None;
    }
    let growth = growth_factor(expansion, n);
    if growth == 0 || growth > MAX_BUCKETS / base {
        return None;
    }
    Some(base * growth)
}

/// The hash of one item, computed once per command (COMPAT §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooHash {
    /// Fingerprint, 1..=255.
    pub fp: u8,
    /// Primary hash (= MurmurHash64A(item, 0)).
    pub h1: u64,
    /// Secondary hash: `h1 XOR (fp × 0x5bd1e995)`.
    pub h2: u64,
}

impl CuckooHash {
    /// Hash an item: h = MurmurHash64A(item, 0), fp = h mod 255 + 1.
    #[inline]
    pub fn new(item: &[u8]) -> Self {
        let h = murmur64a(item, 0);
        // h % 255 < 255, so + 1 fits in a u8.
        let fp = (h % 255) as u8 + 1;
        CuckooHash {
            fp,
            h1: h,
            h2: alt_index(h, fp),
        }
    }
}

/// `index XOR (fp × 0x5bd1e995)` (not yet reduced modulo the bucket count).
#[inline]
pub fn alt_index(index: u64, fp: u8) -> u64 {
    index ^ u64::from(fp).wrapping_mul(ALT_HASH_MULTIPLIER)
}

/// Creation parameters as given to CF.RESERVE (before rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooParams {
    /// Requested capacity (≥ 2 × bucket_size).
    pub capacity: u64,
    /// Slots per bucket, 1..=255.
    pub bucket_size: u16,
    /// Kick-out attempts, 1..=65535.
    pub max_iterations: u16,
    /// Requested expansion, 0..=32768 (rounded up to a power of two when stored).
    pub expansion: u16,
}

impl Default for CuckooParams {
    /// RedisBloom's defaults: capacity 1024, bucket size 2, max iterations 20, expansion 1.
    fn default() -> Self {
        CuckooParams {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
        }
    }
}

/// One sub-filter: `buckets` buckets of the filter's bucket size.
#[derive(Clone, PartialEq, Eq)]
pub struct SubFilter {
    buckets: u64,
    data: Vec<u8>,
    /// Number of empty (zero) slots in `data`, kept in step with every write so that an
    /// insert can pass over full sub-filters without reading them.
    free: u64,
}

impl SubFilter {
    fn new(buckets: u64, data: Vec<u8>) -> Self {
        let free = zero_count(&data);
        SubFilter {
            buckets,
            data,
            free,
        }
    }

    /// A sub-filter over freshly zeroed data (no need to count).
    fn zeroed(buckets: u64, data: Vec<u8>) -> Self {
        SubFilter {
            buckets,
            free: data.len() as u64,
            data,
        }
    }

    /// True when no slot is empty (nothing can be placed here without a kick-out).
    #[inline]
    fn is_full(&self) -> bool {
        self.free == 0
    }

    /// Number of buckets (a power of two).
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The slot bytes (`buckets × bucket_size`).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Byte offset of the bucket of `hash` as RedisBloom's lookup path computes it:
    /// `((hash mod N) × bs)` truncated to 32 bits (COMPAT §8.2, quirk 12). The truncated
    /// value is never larger than the true offset, so the bucket stays in bounds.
    #[inline]
    fn lookup_offset(&self, hash: u64, bs: usize) -> usize {
        ((hash % self.buckets).wrapping_mul(bs as u64) as u32) as usize
    }

    /// Byte offset of bucket `index` with full 64-bit arithmetic (kick-out, compaction scan).
    #[inline]
    fn full_offset(&self, index: u64, bs: usize) -> usize {
        // index < buckets and buckets × bs == data.len(), so this fits in usize.
        (index as usize) * bs
    }

    #[inline]
    fn bucket(&self, offset: usize, bs: usize) -> &[u8] {
        &self.data[offset..offset + bs]
    }

    /// First empty slot in bucket(h1), then bucket(h2); returns its byte index.
    #[inline]
    fn find_available(&self, h1: u64, h2: u64, bs: usize) -> Option<usize> {
        for h in [h1, h2] {
            let off = self.lookup_offset(h, bs);
            if let Some(s) = self.bucket(off, bs).iter().position(|&b| b == 0) {
                return Some(off + s);
            }
        }
        None
    }

    #[inline]
    fn contains(&self, h: &CuckooHash, bs: usize) -> bool {
        [h.h1, h.h2].iter().any(|&x| {
            let off = self.lookup_offset(x, bs);
            self.bucket(off, bs).contains(&h.fp)
        })
    }

    #[inline]
    fn count(&self, h: &CuckooHash, bs: usize) -> u64 {
        [h.h1, h.h2]
            .iter()
            .map(|&x| {
                let off = self.lookup_offset(x, bs);
                self.bucket(off, bs).iter().filter(|&&b| b == h.fp).count() as u64
            })
            .sum()
    }

    /// The first slot equal to fp in bucket(h1), else in bucket(h2) (the one CF.DEL clears).
    #[inline]
    fn find_fp(&self, h: &CuckooHash, bs: usize) -> Option<usize> {
        [h.h1, h.h2].iter().find_map(|&x| {
            let off = self.lookup_offset(x, bs);
            self.bucket(off, bs)
                .iter()
                .position(|&b| b == h.fp)
                .map(|s| off + s)
        })
    }
}

/// Number of zero bytes (empty slots), eight at a time.
fn zero_count(data: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut words = data.chunks_exact(8);
    let mut zeros = 0u64;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        // The high bit of each byte of `nonzero` is set iff that byte of x is not 0.
        let nonzero = (((x & LOW7) + LOW7) | x) & !LOW7;
        zeros += 8 - u64::from(nonzero.count_ones());
    }
    zeros + words.remainder().iter().filter(|&&b| b == 0).count() as u64
}

impl fmt::Debug for SubFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let used = self.data.iter().filter(|&&b| b != 0).count();
        f.debug_struct("SubFilter")
            .field("buckets", &self.buckets)
            .field("bytes", &self.data.len())
            .field("used_slots", &used)
            .finish()
    }
}

/// The stored fields of a filter (RDB §4.3 / header §7.3), used to rebuild one.
///
/// Fields are u64 as they come from RDB `Unsigned` values; [`CuckooFilter::from_parts`]
/// range-checks them instead of truncating like RedisBloom does.
///
/// RDB encver < 4 stores only numFilters, numBuckets and numItems (then one data buffer per
/// sub-filter): the command layer fills `num_deletes = 0`, `bucket_size = 2`,
/// `max_iterations = 20`, `expansion = 1` (RedisBloom 2.4.20's compile-time defaults; HEAD
/// uses the current config defaults instead) and gives every sub-filter `num_buckets`
/// buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuckooParts {
    pub num_buckets: u64,
    pub num_items: u64,
    pub num_deletes: u64,
    pub bucket_size: u64,
    pub max_iterations: u64,
    pub expansion: u64,
}

/// A scalable Cuckoo filter (RedisBloom's `CuckooFilter`).
#[derive(Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    /// Base bucket count (the first sub-filter's at creation; grown ones multiply it).
    num_buckets: u64,
    num_items: u64,
    num_deletes: u64,
    bucket_size: u16,
    max_iterations: u16,
    /// Stored expansion (0 or a power of two ≤ 32768).
    expansion: u16,
    /// Sub-filters, oldest first; never empty.
    filters: Vec<SubFilter>,
    /// How many sub-filters have an empty slot: an insert stops scanning once it has seen
    /// them all (with tens of thousands of full sub-filters this keeps inserts O(1)).
    non_full: usize,
    /// Total bytes of bucket data (checked against the ceiling on every growth step).
    data_len: u64,
}

impl fmt::Debug for CuckooFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("num_buckets", &self.num_buckets)
            .field("num_items", &self.num_items)
            .field("num_deletes", &self.num_deletes)
            .field("bucket_size", &self.bucket_size)
            .field("max_iterations", &self.max_iterations)
            .field("expansion", &self.expansion)
            .field("filters", &self.filters)
            .field("non_full", &self.non_full)
            .field("data_len", &self.data_len)
            .finish()
    }
}

/// Check the fields shared by header and RDB loads. `num_filters` is the sub-filter count.
pub(crate) fn validate_fields(
    num_buckets: u64,
    bucket_size: u64,
    max_iterations: u64,
    expansion: u64,
    num_filters: u64,
) -> Result<(), CuckooError> {
    let ok = (1..=u64::from(MAX_BUCKET_SIZE)).contains(&bucket_size)
        && (1..=u64::from(u16::MAX)).contains(&max_iterations)
        && expansion <= u64::from(MAX_EXPANSION)
        // Decision (COMPAT leaves it open): only 0 or a power of two, as every filter
        // RedisBloom creates has; otherwise grown sub-filters would get bucket counts that
        // are not powers of two and the alternate index would stop being an involution.
        && (expansion == 0 || expansion.is_power_of_two())
        && (1..=MAX_SUB_FILTERS as u64).contains(&num_filters)
        && !(expansion == 0 && num_filters > 1)
        && (1..=MAX_BUCKETS).contains(&num_buckets)
        && num_buckets.is_power_of_two();
    if ok {
        Ok(())
    } else {
        Err(CuckooError::InvalidParams)
    }
}

impl CuckooFilter {
    /// A deep copy, or `None` if memory cannot be had (COPY of a large filter).
    pub fn try_clone(&self) -> Option<CuckooFilter> {
        let mut filters = Vec::new();
        filters.try_reserve_exact(self.filters.len()).ok()?;
        for sub in &self.filters {
            let data = sparse_copy(&sub.data).ok()?;
            filters.push(SubFilter {
                buckets: sub.buckets,
                data,
                free: sub.free,
            });
        }
        Some(CuckooFilter { filters, ..*self })
    }

    /// Create a filter (CF.RESERVE / auto-creation, COMPAT §8.1) with one sub-filter.
    ///
    /// `max_bytes` bounds the bucket data (`TooLarge` instead of allocating more).
    pub fn new(params: CuckooParams, max_bytes: u64) -> Result<Self, CuckooError> {
        let CuckooParams {
            capacity,
            bucket_size,
            max_iterations,
            expansion,
        } = params;
        if bucket_size == 0 || bucket_size > MAX_BUCKET_SIZE || max_iterations == 0 {
            return Err(CuckooError::InvalidParams);
        }
        let expansion = round_expansion(expansion).ok_or(CuckooError::InvalidParams)?;
        if capacity < 2 * u64::from(bucket_size) {
            return Err(CuckooError::CapacityTooSmall);
        }
        let num_buckets = base_buckets(capacity, bucket_size).ok_or(CuckooError::Overflow)?;
        let mut filter = CuckooFilter {
            num_buckets,
            num_items: 0,
            num_deletes: 0,
            bucket_size,
            max_iterations,
            expansion,
            filters: Vec::new(),
            non_full: 0,
            data_len: 0,
        };
        filter.grow(max_bytes)?;
        Ok(filter)
    }

    /// Build a filter from stored fields and sub-filters `(buckets, data)`, oldest first
    /// (RDB load). Validates, never panics: bucket size 1..=255, max iterations 1..=65535,
    /// expansion 0 or a power of two ≤ 32768, 1..=65535 sub-filters, not (expansion 0 and
    /// more than one sub-filter), every bucket count (base included) a non-zero power of
    /// two ≤ 2^56−1, sub-filter `i` with exactly `num_buckets × expansion^i` buckets (the
    /// layout a dump header describes), and every data length == bucket_size × buckets.
    /// num_items / num_deletes are taken as they are (RedisBloom does not check them).
    /// No memory ceiling applies: the buffers already exist.
    pub fn from_parts(
        parts: CuckooParts,
        sub_filters: Vec<(u64, Vec<u8>)>,
    ) -> Result<Self, CuckooError> {
        validate_fields(
            parts.num_buckets,
            parts.bucket_size,
            parts.max_iterations,
            parts.expansion,
            sub_filters.len() as u64,
        )?;
        let bs = parts.bucket_size;
        let mut filters = Vec::new();
        filters
            .try_reserve_exact(sub_filters.len())
            .map_err(|_| CuckooError::OutOfMemory)?;
        for (i, (buckets, data)) in sub_filters.into_iter().enumerate() {
            if buckets == 0 || buckets > MAX_BUCKETS || !buckets.is_power_of_two() {
                return Err(CuckooError::InvalidParams);
            }
            // Sub-filter i has `num_buckets × expansion^i` buckets, as growth makes them and
            // as a SCANDUMP header describes them: any other layout could not be restored
            // from its own AOF rewrite (LOADCHUNK would refuse the chunks).
            if sub_filter_buckets(parts.num_buckets, parts.expansion as u16, i) != Some(buckets) {
                return Err(CuckooError::InvalidParams);
            }
            let len = buckets.checked_mul(bs).ok_or(CuckooError::Overflow)?;
            if data.len() as u64 != len {
                return Err(CuckooError::InvalidParams);
            }
            filters.push(SubFilter::new(buckets, data));
        }
        let non_full = filters.iter().filter(|s| !s.is_full()).count();
        // Each length is bucket_size × buckets ≤ 255 × (2^56 − 1) and there are at most
        // 65535 of them: the sum fits in a u64.
        let data_len = filters.iter().map(|s| s.data.len() as u64).sum();
        // The ranges were checked above, so these conversions are exact.
        Ok(CuckooFilter {
            num_buckets: parts.num_buckets,
            num_items: parts.num_items,
            num_deletes: parts.num_deletes,
            bucket_size: bs as u16,
            max_iterations: parts.max_iterations as u16,
            expansion: parts.expansion as u16,
            filters,
            non_full,
            data_len,
        })
    }

    /// Build an empty-slotted filter from header fields (used by the dump codec): the
    /// sub-filter sizes follow `num_buckets × expansion^i`; every check of
    /// [`validate_fields`] plus the 56-bit limit per sub-filter, overflow-checked byte
    /// sizes and the `max_bytes` ceiling on the total, all before allocating anything.
    pub(crate) fn with_layout(
        parts: CuckooParts,
        num_filters: u64,
        max_bytes: u64,
    ) -> Result<Self, CuckooError> {
        validate_fields(
            parts.num_buckets,
            parts.bucket_size,
            parts.max_iterations,
            parts.expansion,
            num_filters,
        )?;
        let bs = parts.bucket_size;
        let expansion = parts.expansion as u16;
        let n = num_filters as usize;
        let mut total: u64 = 0;
        for i in 0..n {
            let buckets =
                sub_filter_buckets(parts.num_buckets, expansion, i).ok_or(CuckooError::Overflow)?;
            let bytes = buckets.checked_mul(bs).ok_or(CuckooError::Overflow)?;
            total = total.checked_add(bytes).ok_or(CuckooError::Overflow)?;
            if usize::try_from(total).is_err() {
                return Err(CuckooError::Overflow);
            }
            if total > max_bytes {
                return Err(CuckooError::TooLarge);
            }
        }
        let mut filters = Vec::new();
        filters
            .try_reserve_exact(n)
            .map_err(|_| CuckooError::OutOfMemory)?;
        for i in 0..n {
            // Recomputed: identical to the checked values above.
            let buckets =
                sub_filter_buckets(parts.num_buckets, expansion, i).ok_or(CuckooError::Overflow)?;
            let data = zeroed_bytes(buckets * bs).map_err(|_| CuckooError::OutOfMemory)?;
            filters.push(SubFilter::zeroed(buckets, data));
        }
        let non_full = filters.len();
        Ok(CuckooFilter {
            num_buckets: parts.num_buckets,
            num_items: parts.num_items,
            num_deletes: parts.num_deletes,
            bucket_size: bs as u16,
            max_iterations: parts.max_iterations as u16,
            expansion,
            filters,
            non_full,
            data_len: total,
        })
    }

    /// Add a sub-filter (COMPAT §8.1 grow step). Fails with `Overflow` at 65535 sub-filters
    /// or past the 56-bit bucket / byte-size limits, `TooLarge` when the filter's total
    /// bucket data would exceed `max_bytes`, `OutOfMemory` when allocation fails. On error
    /// the filter is unchanged.
    pub fn grow(&mut self, max_bytes: u64) -> Result<(), CuckooError> {
        let n = self.filters.len();
        if n >= MAX_SUB_FILTERS {
            return Err(CuckooError::Overflow);
        }
        let buckets =
            sub_filter_buckets(self.num_buckets, self.expansion, n).ok_or(CuckooError::Overflow)?;
        let bytes = buckets
            .checked_mul(u64::from(self.bucket_size))
            .ok_or(CuckooError::Overflow)?;
        if usize::try_from(bytes).is_err() {
            return Err(CuckooError::Overflow);
        }
        let total = self
            .data_len
            .checked_add(bytes)
            .ok_or(CuckooError::Overflow)?;
        if total > max_bytes {
            return Err(CuckooError::TooLarge);
        }
        self.filters
            .try_reserve(1)
            .map_err(|_| CuckooError::OutOfMemory)?;
        let data = zeroed_bytes(bytes).map_err(|_| CuckooError::OutOfMemory)?;
        self.filters.push(SubFilter::zeroed(buckets, data));
        self.non_full += 1;
        self.data_len = total;
        Ok(())
    }

    /// Insert one copy of the item (CF.ADD, COMPAT §8.3): first empty slot newest → oldest,
    /// else kick-out in the newest sub-filter, undone exactly on failure; then `NoSpace` if
    /// the expansion is 0, else grow (with `max_bytes`, errors as [`Self::grow`]) and retry.
    pub fn insert(&mut self, h: &CuckooHash, max_bytes: u64) -> Result<(), CuckooError> {
        let bs = usize::from(self.bucket_size);
        loop {
            if let Some((s, i)) = self.find_available(h, bs) {
                self.set_slot(s, i, h.fp);
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            if self.kick_out(h) {
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            if self.expansion == 0 {
                return Err(CuckooError::NoSpace);
            }
            self.grow(max_bytes)?;
        }
    }

    /// CF.ADDNX: `Ok(false)` if the item is already present (nothing changes), else
    /// [`Self::insert`] and `Ok(true)`.
    pub fn insert_if_absent(
        &mut self,
        h: &CuckooHash,
        max_bytes: u64,
    ) -> Result<bool, CuckooError> {
        if self.contains(h) {
            return Ok(false);
        }
        self.insert(h, max_bytes).map(|()| true)
    }

    /// The first empty slot for `h`, sub-filters newest → oldest, bucket(h1) then
    /// bucket(h2): `(sub-filter, byte index)`. Full sub-filters are passed over unread, and
    /// the scan stops once every sub-filter with an empty slot has been looked at.
    fn find_available(&self, h: &CuckooHash, bs: usize) -> Option<(usize, usize)> {
        let mut left = self.non_full;
        for (s, sub) in self.filters.iter().enumerate().rev() {
            if left == 0 {
                break;
            }
            if sub.is_full() {
                continue;
            }
            left -= 1;
            if let Some(i) = sub.find_available(h.h1, h.h2, bs) {
                return Some((s, i));
            }
        }
        None
    }

    /// Store `value` in byte `i` of sub-filter `s`, keeping the empty-slot counts; returns
    /// the byte it replaced.
    fn set_slot(&mut self, s: usize, i: usize, value: u8) -> u8 {
        let sub = &mut self.filters[s];
        let was_full = sub.is_full();
        let old = std::mem::replace(&mut sub.data[i], value);
        match (old == 0, value == 0) {
            (true, false) => sub.free -= 1,
            (false, true) => sub.free += 1,
            _ => {}
        }
        match (was_full, sub.is_full()) {
            (false, true) => self.non_full -= 1,
            (true, false) => self.non_full += 1,
            _ => {}
        }
        old
    }

    /// Recount every sub-filter's empty slots and the data size (after compaction
    /// rewrote slots directly and dropped sub-filters).
    fn recount(&mut self) {
        for sub in &mut self.filters {
            sub.free = zero_count(&sub.data);
        }
        self.non_full = self.filters.iter().filter(|s| !s.is_full()).count();
        self.data_len = self.filters.iter().map(|s| s.data.len() as u64).sum();
    }

    /// Copy `data` into sub-filter `s` at byte `off` (LOADCHUNK); the caller has checked
    /// that it fits. Only the overwritten range is recounted.
    pub(crate) fn overwrite(&mut self, s: usize, off: usize, data: &[u8]) {
        let sub = &mut self.filters[s];
        let was_full = sub.is_full();
        let range = off..off + data.len();
        let before = zero_count(&sub.data[range.clone()]);
        crate::copy_changed_pages(&mut sub.data[range], data);
        sub.free = sub.free - before + zero_count(data);
        match (was_full, sub.is_full()) {
            (false, true) => self.non_full -= 1,
            (true, false) => self.non_full += 1,
            _ => {}
        }
    }

    /// Kick-out in the newest sub-filter; true if the fingerprint found a home. On failure
    /// the table is restored byte for byte.
    fn kick_out(&mut self, h: &CuckooHash) -> bool {
        let bs = usize::from(self.bucket_size);
        let max_iter = self.max_iterations;
        let Some(last) = self.filters.len().checked_sub(1) else {
            return false;
        };
        let n = self.filters[last].buckets;
        let mut fp = h.fp;
        let mut victim = 0usize;
        let mut index = h.h1 % n;
        for _ in 0..max_iter {
            let off = self.filters[last].full_offset(index, bs);
            fp = self.set_slot(last, off + victim, fp);
            index = alt_index(index, fp) % n;
            let off = self.filters[last].full_offset(index, bs);
            if let Some(s) = self.filters[last]
                .bucket(off, bs)
                .iter()
                .position(|&b| b == 0)
            {
                self.set_slot(last, off + s, fp);
                return true;
            }
            victim = (victim + 1) % bs;
        }
        for _ in 0..max_iter {
            victim = (victim + bs - 1) % bs;
            index = alt_index(index, fp) % n;
            let off = self.filters[last].full_offset(index, bs);
            fp = self.set_slot(last, off + victim, fp);
        }
        false
    }

    /// CF.EXISTS: the fingerprint is in either candidate bucket of some sub-filter.
    pub fn contains(&self, h: &CuckooHash) -> bool {
        let bs = usize::from(self.bucket_size);
        self.filters.iter().any(|sub| sub.contains(h, bs))
    }

    /// CF.COUNT: slots equal to the fingerprint in bucket(h1) plus bucket(h2), summed over
    /// every sub-filter; a bucket that is both candidates is counted twice (quirk 12).
    pub fn count(&self, h: &CuckooHash) -> u64 {
        let bs = usize::from(self.bucket_size);
        self.filters
            .iter()
            .fold(0u64, |acc, sub| acc.wrapping_add(sub.count(h, bs)))
    }

    /// CF.DEL (COMPAT §8.5): remove one copy, newest → oldest. On success the counters move
    /// (wrapping) and, with more than one sub-filter and deletes > 10 % of items, the filter
    /// compacts with `continue = false`. Returns whether a copy was removed.
    pub fn delete(&mut self, h: &CuckooHash) -> bool {
        let bs = usize::from(self.bucket_size);
        let found = self
            .filters
            .iter()
            .enumerate()
            .rev()
            .find_map(|(s, sub)| sub.find_fp(h, bs).map(|i| (s, i)));
        let Some((s, i)) = found else {
            return false;
        };
        self.set_slot(s, i, 0);
        self.num_items = self.num_items.wrapping_sub(1);
        self.num_deletes = self.num_deletes.wrapping_add(1);
        if self.filters.len() > 1 && self.num_deletes as f64 > self.num_items as f64 * 0.10 {
            self.compact(false);
        }
        true
    }

    /// Compaction (COMPAT §8.6): move fingerprints of newer sub-filters into older ones,
    /// dropping the newest while it empties; with `cont == false` stop at the first
    /// sub-filter that could not be emptied. Always resets `num_deletes` to 0.
    /// CF.COMPACT uses `cont = true`.
    pub fn compact(&mut self, cont: bool) {
        let bs = usize::from(self.bucket_size);
        let mut j = self.filters.len();
        while j > 1 {
            j -= 1;
            let complete = self.compact_single(j, bs);
            if !complete && !cont {
                break;
            }
        }
        self.recount();
        self.num_deletes = 0;
    }

    /// Relocate every fingerprint of sub-filter `j` into sub-filters `0..j`; drop `j` if it
    /// emptied and is the newest. Returns false if some fingerprint stayed.
    fn compact_single(&mut self, j: usize, bs: usize) -> bool {
        let (older, rest) = self.filters.split_at_mut(j);
        let Some(cur) = rest.first_mut() else {
            return true;
        };
        let mut complete = true;
        for b in 0..cur.buckets {
            let base = cur.full_offset(b, bs);
            for s in 0..bs {
                let fp = cur.data[base + s];
                if fp == 0 {
                    continue;
                }
                let alt = alt_index(b, fp);
                let mut placed = false;
                for target in older.iter_mut() {
                    if let Some(i) = target.find_available(b, alt, bs) {
                        target.data[i] = fp;
                        placed = true;
                        break;
                    }
                }
                if placed {
                    cur.data[base + s] = 0;
                } else {
                    complete = false;
                }
            }
        }
        if complete && j + 1 == self.filters.len() {
            self.filters.pop();
        }
        complete
    }

    /// Items inserted minus items deleted (wrapping; a loaded header may lie).
    pub fn num_items(&self) -> u64 {
        self.num_items
    }

    /// Deletes since the last compaction.
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes
    }

    /// Number of sub-filters (1..=65535).
    pub fn num_filters(&self) -> usize {
        self.filters.len()
    }

    /// Base bucket count (CF.INFO "Number of buckets", RDB field 2, header offset 8).
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// Slots per bucket (1..=255).
    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    /// Kick-out iterations (1..=65535).
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    /// Stored (rounded) expansion, 0 or a power of two ≤ 32768.
    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    /// The sub-filters, oldest first (RDB save: each one's `buckets()` and `data()`).
    pub fn sub_filters(&self) -> &[SubFilter] {
        &self.filters
    }

    /// Total bytes of bucket data over all sub-filters.
    pub fn data_bytes(&self) -> u64 {
        self.data_len
    }

    /// RedisBloom's mem_usage / CF.INFO Size (COMPAT §4.5):
    /// `40 + Σ (16 + bucket_size × buckets_i)`.
    pub fn mem_usage(&self) -> u64 {
        self.filters.iter().fold(40u64, |acc, s| {
            acc.saturating_add(16).saturating_add(s.data.len() as u64)
        })
    }

    /// The CF.DEBUG reply text.
    pub fn debug_string(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size,
            self.num_buckets,
            self.num_items,
            self.num_deletes,
            self.filters.len(),
            self.max_iterations,
            self.expansion
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BIG: u64 = u64::MAX;

    fn params(
        capacity: u64,
        bucket_size: u16,
        max_iterations: u16,
        expansion: u16,
    ) -> CuckooParams {
        CuckooParams {
            capacity,
            bucket_size,
            max_iterations,
            expansion,
        }
    }

    fn reserve(capacity: u64) -> CuckooFilter {
        CuckooFilter::new(
            CuckooParams {
                capacity,
                ..Default::default()
            },
            BIG,
        )
        .unwrap()
    }

    fn add(f: &mut CuckooFilter, item: &[u8]) -> Result<(), CuckooError> {
        f.insert(&CuckooHash::new(item), BIG)
    }

    #[test]
    fn creation_rounding() {
        // COMPAT §8.1 examples.
        for (cap, bs, want) in [
            (1000, 2, 512),
            (10, 2, 8),
            (10000, 2, 8192),
            (64, 1, 64),
            (9, 2, 4),
        ] {
            assert_eq!(base_buckets(cap, bs), Some(want), "{cap}/{bs}");
            let f = CuckooFilter::new(params(cap, bs, 20, 1), BIG).unwrap();
            assert_eq!(f.num_buckets(), want);
            assert_eq!(f.sub_filters()[0].buckets(), want);
            assert_eq!(f.sub_filters()[0].data().len() as u64, want * u64::from(bs));
        }
        assert_eq!(base_buckets(1, 2), Some(1)); // 0 → 1
        for (e, want) in [
            (3, 4),
            (30000, 32768),
            (0, 0),
            (1, 1),
            (2, 2),
            (5, 8),
            (32768, 32768),
        ] {
            assert_eq!(round_expansion(e), Some(want), "{e}");
            let f = CuckooFilter::new(params(64, 2, 20, e), BIG).unwrap();
            assert_eq!(f.expansion(), want);
        }
        assert_eq!(round_expansion(32769), None);
        assert_eq!(round_expansion(u16::MAX), None);
    }

    #[test]
    fn creation_failures() {
        let e = |p| CuckooFilter::new(p, BIG).unwrap_err();
        assert_eq!(e(params(100, 0, 20, 1)), CuckooError::InvalidParams);
        assert_eq!(e(params(1000, 256, 20, 1)), CuckooError::InvalidParams);
        assert_eq!(e(params(100, 2, 0, 1)), CuckooError::InvalidParams);
        assert_eq!(e(params(100, 2, 20, 32769)), CuckooError::InvalidParams);
        assert_eq!(e(params(3, 2, 20, 1)), CuckooError::CapacityTooSmall);
        assert!(CuckooFilter::new(params(4, 2, 20, 1), BIG).is_ok());
        // i64::MAX capacity: 2^62 buckets fail the 56-bit check (COMPAT §2.1).
        assert_eq!(e(params(i64::MAX as u64, 2, 20, 1)), CuckooError::Overflow);
        assert_eq!(e(params(u64::MAX, 1, 20, 1)), CuckooError::Overflow);
        // 2^55 buckets pass the layout checks but exceed the ceiling.
        assert_eq!(
            CuckooFilter::new(params(1 << 56, 2, 20, 1), 1 << 30).unwrap_err(),
            CuckooError::TooLarge
        );
        // 2^55 × 255 bytes cannot be allocated.
        assert_eq!(e(params(255 << 55, 255, 20, 1)), CuckooError::OutOfMemory);
        // Ceiling is inclusive: 1000 → 512 buckets × 2 = 1024 bytes.
        assert!(CuckooFilter::new(params(1000, 2, 20, 1), 1024).is_ok());
        assert_eq!(
            CuckooFilter::new(params(1000, 2, 20, 1), 1023).unwrap_err(),
            CuckooError::TooLarge
        );
    }

    #[test]
    fn grow_failures_leave_filter_unchanged() {
        let mut f = CuckooFilter::new(params(1000, 2, 20, 2), BIG).unwrap();
        // Next sub-filter: 1024 × 2 = 2048 bytes, total 3072.
        assert_eq!(f.grow(3071), Err(CuckooError::TooLarge));
        assert_eq!(f.num_filters(), 1);
        assert_eq!(f.grow(3072), Ok(()));
        assert_eq!(f.sub_filters()[1].buckets(), 1024);
        // 56-bit limit: base 2^41 with expansion 2^15: the next growth 2^15 > (2^56 − 1) /
        // 2^41. (A loaded filter can no longer pair such a base with a small sub-filter: the
        // layout must be `base × expansion^i`.)
        let loaded = CuckooFilter::from_parts(
            CuckooParts {
                num_buckets: 1 << 41,
                num_items: 0,
                num_deletes: 0,
                bucket_size: 1,
                max_iterations: 1,
                expansion: 32768,
            },
            vec![(4, vec![0; 4])],
        );
        assert_eq!(loaded, Err(CuckooError::InvalidParams));
        assert_eq!(sub_filter_buckets(1 << 40, 32768, 1), Some(1 << 55));
        assert_eq!(sub_filter_buckets(1 << 41, 32768, 1), None);
        assert_eq!(sub_filter_buckets(1, 32768, 3), Some(1 << 45));
        assert_eq!(sub_filter_buckets(1, 32768, 4), None);
        assert_eq!(sub_filter_buckets(1 << 55, 1, 0), Some(1 << 55));
        assert_eq!(sub_filter_buckets(1 << 56, 1, 0), None);
        assert_eq!(sub_filter_buckets(4, 0, 1), None);
        assert_eq!(sub_filter_buckets(4, 0, 0), Some(4));
    }

    #[test]
    fn sub_filter_cap_is_65535() {
        let parts = CuckooParts {
            num_buckets: 1,
            num_items: 0,
            num_deletes: 0,
            bucket_size: 1,
            max_iterations: 1,
            expansion: 1,
        };
        let mut f = CuckooFilter::with_layout(parts, 65535, BIG).unwrap();
        assert_eq!(f.num_filters(), 65535);
        assert_eq!(f.grow(BIG), Err(CuckooError::Overflow));
        // A full filter at the cap: the insert fails with the grow error, unchanged.
        let full: Vec<(u64, Vec<u8>)> = (0..65535).map(|_| (1u64, vec![7u8])).collect();
        let mut g = CuckooFilter::from_parts(parts, full).unwrap();
        let before = g.clone();
        let h = (0u32..)
            .map(|i| CuckooHash::new(i.to_string().as_bytes()))
            .find(|h| h.fp != 7)
            .unwrap();
        assert_eq!(g.insert(&h, BIG), Err(CuckooError::Overflow));
        assert_eq!(g, before);
        assert_eq!(g.insert_if_absent(&h, BIG), Err(CuckooError::Overflow));
        assert_eq!(
            g.insert_if_absent(
                &CuckooHash {
                    fp: 7,
                    h1: 0,
                    h2: 0
                },
                BIG
            ),
            Ok(false)
        );
    }

    #[test]
    fn hash_of_hello() {
        let h = CuckooHash::new(b"hello");
        assert_eq!(h.h1, 0x1e68d17c457bf117);
        assert_eq!(h.fp, 159);
        assert_eq!(h.h1 % 512, 279);
        assert_eq!(h.h2 % 512, 156);
        let mut f = reserve(1000);
        add(&mut f, b"hello").unwrap();
        let data = f.sub_filters()[0].data();
        assert_eq!(data[558], 159);
        assert_eq!(data.iter().filter(|&&b| b != 0).count(), 1);
        assert_eq!(f.num_items(), 1);
        assert!(f.contains(&h));
        assert_eq!(f.count(&h), 1);
    }

    #[test]
    fn lookup_offset_truncates_to_32_bits() {
        // Only the bucket count matters for the offset computation.
        let sub = SubFilter::new(1 << 33, Vec::new());
        let h = (1u64 << 32) + 5;
        // (h mod 2^33) × 2 = 2^33 + 10, truncated to 32 bits → 10; the kick-out keeps 64 bits.
        assert_eq!(sub.lookup_offset(h, 2), 10);
        assert_eq!(sub.full_offset(h % (1 << 33), 2) as u64, (1 << 33) + 10);
        let small = SubFilter::new(512, vec![0; 1024]);
        assert_eq!(small.lookup_offset(0x1e68d17c457bf117, 2), 558);
    }

    /// The empty-slot bookkeeping equals a fresh count.
    fn assert_counts(f: &CuckooFilter) {
        let mut fresh = f.clone();
        fresh.recount();
        assert_eq!(&fresh, f);
    }

    #[test]
    fn zero_count_matches_a_plain_count() {
        let data: Vec<u8> = (0..1000u32)
            .map(|i| [0, 1, 0x80, 0x7f, 0xff][(i * 7 % 5) as usize])
            .collect();
        for len in [0, 1, 7, 8, 9, 63, 64, 999, 1000] {
            let plain = data[..len].iter().filter(|&&b| b == 0).count() as u64;
            assert_eq!(zero_count(&data[..len]), plain, "{len}");
        }
        assert_eq!(zero_count(&[0; 24]), 24);
        assert_eq!(zero_count(&[0xff; 24]), 0);
    }

    #[test]
    fn empty_slot_counts_follow_every_write() {
        let mut f = CuckooFilter::new(params(64, 1, 20, 1), BIG).unwrap();
        for i in 0..1000 {
            add(&mut f, i.to_string().as_bytes()).unwrap();
            if i % 97 == 0 {
                assert_counts(&f);
            }
        }
        assert_counts(&f);
        for i in (0..1000).step_by(7) {
            f.delete(&CuckooHash::new(i.to_string().as_bytes()));
        }
        assert_counts(&f);
        f.compact(true);
        assert_counts(&f);
        crate::cuckoo::dump::load_chunk(&mut f, 1 + 64, &[0; 64]).unwrap();
        assert_counts(&f);
        crate::cuckoo::dump::load_chunk(&mut f, 1 + 64, &[9; 64]).unwrap();
        assert_counts(&f);
        let mut tiny = CuckooFilter::new(params(2, 1, 20, 1), BIG).unwrap();
        for _ in 0..3000 {
            add(&mut tiny, b"1").unwrap();
        }
        assert_eq!(tiny.num_filters(), 1500);
        assert_eq!(tiny.non_full, 0);
        assert_counts(&tiny);
    }

    #[test]
    fn item1_in_tiny_filter() {
        let mut f = reserve(8);
        add(&mut f, b"item1").unwrap();
        assert_eq!(f.sub_filters()[0].data(), &[0, 0, 0, 0, 7, 0, 0, 0]);
    }

    #[test]
    fn empty_item_hashes_to_zero() {
        let h = CuckooHash::new(b"");
        assert_eq!((h.h1, h.fp), (0, 1));
        assert_eq!(h.h2, ALT_HASH_MULTIPLIER);
    }

    fn fill(p: CuckooParams, n: u32) -> CuckooFilter {
        let mut f = CuckooFilter::new(p, BIG).unwrap();
        for i in 0..n {
            add(&mut f, i.to_string().as_bytes()).unwrap();
        }
        f
    }

    #[test]
    fn verified_growth_outcomes() {
        // COMPAT §8.3 / test_cuckoo.py bucket_size and expansion tests.
        let cases = [
            (params(64, 1, 20, 1), 18, "bktsize:1 buckets:64 items:1000 deletes:0 filters:18 max_iterations:20 expansion:1"),
            (params(64, 2, 20, 1), 17, "bktsize:2 buckets:32 items:1000 deletes:0 filters:17 max_iterations:20 expansion:1"),
            (params(256, 4, 500, 1), 4, "bktsize:4 buckets:64 items:1000 deletes:0 filters:4 max_iterations:500 expansion:1"),
            (params(64, 2, 20, 2), 5, "bktsize:2 buckets:32 items:1000 deletes:0 filters:5 max_iterations:20 expansion:2"),
            (params(64, 2, 500, 4), 3, "bktsize:2 buckets:32 items:1000 deletes:0 filters:3 max_iterations:500 expansion:4"),
        ];
        for (p, filters, debug) in cases {
            let f = fill(p, 1000);
            assert_eq!(f.num_filters(), filters, "{p:?}");
            assert_eq!(f.debug_string(), debug);
            for i in 0..1000u32 {
                assert!(f.contains(&CuckooHash::new(i.to_string().as_bytes())));
            }
        }
    }

    #[test]
    fn max_expansions_scenario() {
        // CF.RESERVE cf 4: the command layer refuses once num_filters ≥ 32 before a command.
        let p = params(4, 2, 20, 1);
        let f = fill(p, 123); // "0".."122"
        assert!(
            f.num_filters() < DEFAULT_MAX_EXPANSIONS,
            "{}",
            f.num_filters()
        );
        let f = fill(p, 124); // "0".."123"
        assert_eq!(f.num_filters(), DEFAULT_MAX_EXPANSIONS);
        // So adds 1..=124 pass the guard and the 125th is refused.
    }

    #[test]
    fn mem_usage_formula() {
        assert_eq!(reserve(1000).mem_usage(), 1080);
        let f = CuckooFilter::new(params(9, 2, 20, 0), BIG).unwrap();
        assert_eq!(f.mem_usage(), 64);
        let mut g = CuckooFilter::new(params(64, 2, 20, 2), BIG).unwrap();
        g.grow(BIG).unwrap();
        // 40 + (16 + 64) + (16 + 128)
        assert_eq!(g.mem_usage(), 264);
        assert_eq!(g.data_bytes(), 192);
    }

    #[test]
    fn expansion_zero_reports_no_space() {
        let mut f = CuckooFilter::new(params(4, 2, 20, 0), BIG).unwrap();
        assert_eq!(f.num_buckets(), 2);
        for i in 1..=4 {
            add(&mut f, i.to_string().as_bytes()).unwrap();
        }
        let before = f.clone();
        for i in [b"5", b"6"] {
            assert_eq!(add(&mut f, i), Err(CuckooError::NoSpace));
            // The failed kick-out was undone exactly.
            assert_eq!(f, before);
        }
        assert_eq!(f.num_items(), 4);
        assert_eq!(f.num_filters(), 1);
    }

    #[test]
    fn ceiling_applies_to_growth_during_insert() {
        let mut f = CuckooFilter::new(params(4, 2, 20, 1), 4).unwrap();
        let mut err = None;
        for i in 0..100u32 {
            if let Err(e) = f.insert(&CuckooHash::new(i.to_string().as_bytes()), 4) {
                err = Some(e);
                break;
            }
        }
        assert_eq!(err, Some(CuckooError::TooLarge));
        assert_eq!(f.num_filters(), 1);
        assert!(CuckooError::TooLarge.is_grow_failure());
        assert!(!CuckooError::NoSpace.is_grow_failure());
    }

    #[test]
    fn nx_multiset_and_delete() {
        let mut f = reserve(1000);
        let k1 = CuckooHash::new(b"k1");
        assert!(!f.contains(&k1));
        assert_eq!(f.insert_if_absent(&k1, BIG), Ok(true));
        assert_eq!(f.insert_if_absent(&k1, BIG), Ok(false));
        assert_eq!(f.count(&k1), 1);
        f.insert(&k1, BIG).unwrap();
        assert_eq!(f.count(&k1), 2);
        assert!(f.delete(&k1));
        assert_eq!(f.count(&k1), 1);
        assert!(f.delete(&k1));
        assert_eq!(f.count(&k1), 0);
        assert!(!f.delete(&k1));
        assert_eq!((f.num_items(), f.num_deletes()), (0, 2));
        // Single sub-filter: no auto-compaction, deletes stay.
        assert_eq!(
            f.debug_string(),
            "bktsize:2 buckets:512 items:0 deletes:2 filters:1 max_iterations:20 expansion:1"
        );
    }

    #[test]
    fn count_double_counts_coinciding_buckets() {
        // With one bucket both candidates coincide.
        let mut f = CuckooFilter::new(params(2, 1, 20, 0), BIG).unwrap();
        assert_eq!(f.num_buckets(), 2);
        // Find an item whose two buckets coincide in N = 2: fp·M even ⇔ fp even.
        let item = (0..1000u32)
            .map(|i| i.to_string())
            .find(|s| CuckooHash::new(s.as_bytes()).fp % 2 == 0)
            .unwrap();
        let h = CuckooHash::new(item.as_bytes());
        f.insert(&h, BIG).unwrap();
        assert_eq!(f.count(&h), 2);
    }

    #[test]
    fn num_items_wraps_on_lying_counters() {
        let mut f = CuckooFilter::from_parts(
            CuckooParts {
                num_buckets: 4,
                num_items: 0,
                num_deletes: u64::MAX,
                bucket_size: 2,
                max_iterations: 20,
                expansion: 1,
            },
            vec![(4, vec![0; 8])],
        )
        .unwrap();
        let h = CuckooHash::new(b"x");
        f.insert(&h, BIG).unwrap();
        f.insert(&h, BIG).unwrap();
        assert_eq!(f.num_items(), 2);
        let mut g = f.clone();
        // Force a lie: items 0 with a copy present.
        g.num_items = 0;
        assert!(g.delete(&h));
        assert_eq!(g.num_items(), u64::MAX);
        assert_eq!(g.num_deletes(), 0); // wrapped from u64::MAX
    }

    #[test]
    fn auto_compaction_threshold() {
        // Two sub-filters; deletes > 10 % of items trigger compact(false).
        let mut f = fill(params(64, 2, 20, 1), 80);
        assert!(f.num_filters() >= 2);
        let items = f.num_items();
        let mut deleted = 0u64;
        for i in 0..80u32 {
            assert!(f.delete(&CuckooHash::new(i.to_string().as_bytes())));
            deleted += 1;
            if (deleted as f64) > ((items - deleted) as f64) * 0.10 {
                assert_eq!(f.num_deletes(), 0, "compaction must reset deletes");
                break;
            }
            assert_eq!(f.num_deletes(), deleted);
        }
        for i in deleted as u32..80 {
            assert!(f.contains(&CuckooHash::new(i.to_string().as_bytes())));
        }
    }

    #[test]
    fn compaction_drops_emptied_newest() {
        let mut f = fill(params(64, 2, 20, 1), 200);
        assert_eq!(f.num_filters(), 4);
        for i in 0..190u32 {
            // Deleting a lot: compaction eventually merges everything into fewer filters.
            assert!(f.delete(&CuckooHash::new(i.to_string().as_bytes())));
        }
        f.compact(true);
        assert_eq!(f.num_deletes(), 0);
        assert_eq!(f.num_items(), 10);
        assert_eq!(f.num_filters(), 1);
        for i in 190..200u32 {
            assert!(f.contains(&CuckooHash::new(i.to_string().as_bytes())));
        }
        // Compacting a single filter only resets the delete counter.
        let mut g = reserve(100);
        let h = CuckooHash::new(b"a");
        g.insert(&h, BIG).unwrap();
        g.insert(&h, BIG).unwrap();
        g.delete(&h);
        let before = g.sub_filters().to_vec();
        g.compact(true);
        assert_eq!(g.sub_filters(), &before[..]);
        assert_eq!(g.num_deletes(), 0);
    }

    fn parts(
        num_buckets: u64,
        bucket_size: u64,
        max_iterations: u64,
        expansion: u64,
    ) -> CuckooParts {
        CuckooParts {
            num_buckets,
            num_items: 3,
            num_deletes: 1,
            bucket_size,
            max_iterations,
            expansion,
        }
    }

    #[test]
    fn from_parts_validation() {
        let ok =
            CuckooFilter::from_parts(parts(4, 2, 20, 2), vec![(4, vec![0; 8]), (8, vec![0; 16])])
                .unwrap();
        assert_eq!(
            (ok.num_items(), ok.num_deletes(), ok.num_filters()),
            (3, 1, 2)
        );
        assert_eq!(ok.mem_usage(), 40 + 16 + 8 + 16 + 16);
        let bad = |p: CuckooParts, subs: Vec<(u64, Vec<u8>)>| {
            CuckooFilter::from_parts(p, subs).unwrap_err()
        };
        let one = || vec![(4u64, vec![0u8; 8])];
        assert_eq!(bad(parts(4, 2, 20, 1), vec![]), CuckooError::InvalidParams);
        assert_eq!(
            bad(parts(4, 0, 20, 1), vec![(4, vec![])]),
            CuckooError::InvalidParams
        );
        assert_eq!(bad(parts(4, 256, 20, 1), one()), CuckooError::InvalidParams);
        assert_eq!(bad(parts(4, 2, 0, 1), one()), CuckooError::InvalidParams);
        assert_eq!(
            bad(parts(4, 2, 65536, 1), one()),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 32769), one()),
            CuckooError::InvalidParams
        );
        assert_eq!(bad(parts(4, 2, 20, 3), one()), CuckooError::InvalidParams);
        assert_eq!(bad(parts(0, 2, 20, 1), one()), CuckooError::InvalidParams);
        assert_eq!(bad(parts(3, 2, 20, 1), one()), CuckooError::InvalidParams);
        assert_eq!(
            bad(parts(1 << 56, 2, 20, 1), one()),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 0), vec![(4, vec![0; 8]), (4, vec![0; 8])]),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 1), vec![(4, vec![0; 7])]),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 1), vec![(0, vec![])]),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 1), vec![(6, vec![0; 12])]),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 2, 20, 1), vec![(1 << 56, vec![])]),
            CuckooError::InvalidParams
        );
        assert_eq!(
            bad(parts(4, 255, 20, 1), vec![(1 << 55, vec![])]),
            CuckooError::InvalidParams
        );
        let many: Vec<(u64, Vec<u8>)> = (0..65536).map(|_| (1u64, vec![0u8; 1])).collect();
        assert_eq!(bad(parts(1, 1, 20, 1), many), CuckooError::InvalidParams);
        let max: Vec<(u64, Vec<u8>)> = (0..65535).map(|_| (1u64, vec![0u8; 1])).collect();
        assert_eq!(
            CuckooFilter::from_parts(parts(1, 1, 20, 1), max)
                .unwrap()
                .num_filters(),
            65535
        );
        // encver < 4 mapping: defaults, every sub-filter with the base bucket count.
        let legacy = CuckooFilter::from_parts(
            CuckooParts {
                num_buckets: 512,
                num_items: 0,
                num_deletes: 0,
                bucket_size: u64::from(DEFAULT_BUCKET_SIZE),
                max_iterations: u64::from(DEFAULT_MAX_ITERATIONS),
                expansion: u64::from(DEFAULT_EXPANSION),
            },
            vec![(512, vec![0; 1024])],
        )
        .unwrap();
        assert_eq!(legacy, reserve(1000));
    }

    /// Items with pairwise distinct fingerprints: deletes can never remove another item's
    /// copy, so "no false negatives" is exact for them (with shared fingerprints a delete
    /// may legitimately take another item's identical copy, as in RedisBloom).
    fn distinct_fp_items() -> Vec<Vec<u8>> {
        let mut seen = [false; 256];
        let mut out = Vec::new();
        for i in 0u32.. {
            let s = format!("p{i}").into_bytes();
            let fp = CuckooHash::new(&s).fp as usize;
            if !seen[fp] {
                seen[fp] = true;
                out.push(s);
                if out.len() == 48 {
                    break;
                }
            }
        }
        out
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(usize),
        AddNx(usize),
        Del(usize),
        Compact(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0usize..48).prop_map(Op::Add),
            1 => (0usize..48).prop_map(Op::AddNx),
            3 => (0usize..48).prop_map(Op::Del),
            1 => any::<bool>().prop_map(Op::Compact),
        ]
    }

    fn small_params() -> impl Strategy<Value = CuckooParams> {
        (1u16..=4, 1u16..=30, 1u16..=4, 0u64..=40).prop_map(|(bs, mi, exp, extra)| CuckooParams {
            capacity: 2 * u64::from(bs) + extra,
            bucket_size: bs,
            max_iterations: mi,
            expansion: exp,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn no_false_negatives(p in small_params(), ops in proptest::collection::vec(op(), 0..300)) {
            let items = distinct_fp_items();
            let mut f = CuckooFilter::new(p, BIG).unwrap();
            let mut model = [0u32; 48];
            for op in ops {
                match op {
                    Op::Add(i) => {
                        f.insert(&CuckooHash::new(&items[i]), BIG).unwrap();
                        model[i] += 1;
                    }
                    Op::AddNx(i) => {
                        let inserted = f.insert_if_absent(&CuckooHash::new(&items[i]), BIG).unwrap();
                        // Distinct fingerprints: no false positives among these items either.
                        prop_assert_eq!(inserted, model[i] == 0);
                        if inserted {
                            model[i] += 1;
                        }
                    }
                    Op::Del(i) => {
                        let removed = f.delete(&CuckooHash::new(&items[i]));
                        prop_assert_eq!(removed, model[i] > 0);
                        model[i] = model[i].saturating_sub(1);
                    }
                    Op::Compact(c) => f.compact(c),
                }
                for (i, &m) in model.iter().enumerate() {
                    if m > 0 {
                        prop_assert!(f.contains(&CuckooHash::new(&items[i])));
                        prop_assert!(f.count(&CuckooHash::new(&items[i])) >= u64::from(m));
                    }
                }
            }
            prop_assert_eq!(f.num_items(), model.iter().map(|&m| u64::from(m)).sum::<u64>());
        }

        #[test]
        // Distinct items: copies of one item share both buckets in every sub-filter, so
        // each 2 × bucket-size copies force a new sub-filter (growing geometrically with the
        // expansion) — RedisBloom's behaviour too, but a random case could then need
        // gigabytes. Multisets of a few copies are covered by `no_false_negatives`.
        fn any_items_added_are_found(p in small_params(), items in proptest::collection::hash_set(proptest::collection::vec(any::<u8>(), 0..12), 0..200)) {
            let mut f = CuckooFilter::new(p, BIG).unwrap();
            for it in &items {
                f.insert(&CuckooHash::new(it), BIG).unwrap();
            }
            for it in &items {
                prop_assert!(f.contains(&CuckooHash::new(it)));
            }
            // Deleting every added item (a multiset) always succeeds.
            for it in &items {
                prop_assert!(f.delete(&CuckooHash::new(it)));
            }
            prop_assert_eq!(f.num_items(), 0);
            prop_assert!(f.sub_filters().iter().all(|s| s.data().iter().all(|&b| b == 0)));
        }
    }
}
