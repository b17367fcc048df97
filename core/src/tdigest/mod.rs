//! The t-digest (TDIGEST.*): the merging t-digest RedisBloom uses (t-digest-c), with its
//! buffer sizes, sort, scale function and interpolations, so that a digest built by the
//! same commands holds the same centroids and answers every query with the same doubles,
//! bit for bit.
//!
//! A digest keeps up to `cap = 6 × compression + 10` centroids (a mean and an integer
//! weight each): the merged ones at the front, sorted by mean, then the samples added
//! since the last merge ("unmerged"). When the buffer is one short of full, or before any
//! query, the whole buffer is sorted (RedisBloom's quicksort with a central pivot, which
//! orders equal means as it does) and merged in one pass from the left: a centroid
//! absorbs its right neighbour while the combined weight `w` satisfies
//! `w × compression / (2π n ln n) <= q (1 − q)` at both ends of the combined centroid
//! (`n` the total weight, `q` the quantile). Every operation below is the same IEEE
//! double operation, in the same order, as RedisBloom's C (compiled without fast-math or
//! contraction), and uses the same C idioms where they matter (`a > b ? a : b`,
//! conversions to `long long`).
//!
//! The queries are in `query.rs`, the RDB layout in [`rdb`].

mod health;
mod query;
pub mod rdb;
#[cfg(test)]
mod tests;

use std::f64::consts::PI;

/// The compression TDIGEST.CREATE uses without COMPRESSION (RedisBloom's).
pub const DEFAULT_COMPRESSION: i64 = 100;

/// The largest compression whose capacity fits RedisBloom's `int` field
/// (`6 × c + 10 <= i32::MAX`).
pub const MAX_COMPRESSION: i64 = (i32::MAX as i64 - 10) / 6;

/// Why a digest could not be made or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TDigestError {
    /// The compression is below 1 or beyond what RedisBloom's capacity can hold.
    InvalidCompression,
    /// The digest would exceed the caller's memory ceiling (as [`TDigest::mem_usage`]
    /// counts it).
    TooLarge,
    /// The allocator refused the centroids.
    OutOfMemory,
    /// A total weight would overflow (RedisBloom's `overflow detected`).
    Overflow,
}

/// A merging t-digest. Equal digests hold equal centroids (the owner's bookkeeping,
/// [`TDigest::stamp`] and [`TDigest::take_merge_due`], does not count).
#[derive(Clone, Debug)]
pub struct TDigest {
    compression: f64,
    min: f64,
    max: f64,
    cap: usize,
    merged_nodes: usize,
    unmerged_nodes: usize,
    total_compressions: i64,
    merged_weight: i64,
    unmerged_weight: i64,
    /// Means of the merged centroids, then of the unmerged samples.
    means: Vec<f64>,
    /// Their weights, in the same order.
    weights: Vec<i64>,
    /// How many saves wrote this digest merged while it had a buffer (RedisBloom merges
    /// the stored digest at each): see [`TDigest::take_merge_due`].
    merge_due: std::cell::Cell<u32>,
    /// The owner's number (see [`TDigest::stamp`]).
    stamp: u64,
}

impl PartialEq for TDigest {
    fn eq(&self, other: &Self) -> bool {
        self.compression.to_bits() == other.compression.to_bits()
            && self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
            && self.cap == other.cap
            && self.merged_nodes == other.merged_nodes
            && self.unmerged_nodes == other.unmerged_nodes
            && self.total_compressions == other.total_compressions
            && self.merged_weight == other.merged_weight
            && self.unmerged_weight == other.unmerged_weight
            && self.weights == other.weights
            && self.means.len() == other.means.len()
            && self
                .means
                .iter()
                .zip(&other.means)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

/// C's `x > y ? x : y`.
#[inline]
fn c_max(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

/// C's `x < y ? x : y`.
#[inline]
fn c_min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

fn weighted_average_sorted(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    let x = (x1 * w1 + x2 * w2) / (w1 + w2);
    c_max(x1, c_min(x, x2))
}

fn weighted_average(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    if x1 <= x2 {
        weighted_average_sorted(x1, w1, x2, w2)
    } else {
        weighted_average_sorted(x2, w2, x1, w1)
    }
}

/// A double converted to `long long` as x86-64 does it (`cvttsd2si`): truncated, and
/// `i64::MIN` for NaN and anything out of range (RedisBloom replies such ranks).
#[inline]
pub fn c_to_i64(x: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// RedisBloom's `_halfRoundDown`: rounds to nearest, halves towards zero.
pub fn half_round_down(f: f64) -> f64 {
    let int_part = f.trunc();
    let frac_part = if f.is_infinite() { 0.0 } else { f - int_part };
    if frac_part.abs() <= 0.5 {
        return int_part;
    }
    if int_part >= 0.0 {
        int_part + 1.0
    } else {
        int_part - 1.0
    }
}

/// t-digest-c's `_tdigest_long_long_add_safe(a, b)`, as its x86-64 build computes it:
/// `a <= LLONG_MAX - b` for `b >= 0`, and for a negative `b` `a >= LLONG_MAX - b`, whose
/// subtraction wraps (so `b = i64::MIN`, a merged weight that rounded to 2^63, lets any
/// `a >= -1` through).
fn add_fits(a: i64, b: i64) -> bool {
    let limit = i64::MAX.wrapping_sub(b);
    if b < 0 {
        a >= limit
    } else {
        a <= limit
    }
}

/// t-digest-c's overflow check of a total weight: the scale function's denominator must
/// be finite.
fn total_overflows(unmerged: f64, total: f64) -> bool {
    unmerged == f64::INFINITY
        || total == f64::INFINITY
        || 2.0 * PI * total * total.ln() == f64::INFINITY
}

/// The sort of t-digest-c (`td_qsort`): quicksort on the means with a central pivot and
/// Lomuto's partition, moving the weights along, over `means[start..=end]`. Equal means
/// end where that algorithm leaves them, so merges of equal means match RedisBloom's.
/// Iterative (the sub-ranges are disjoint, so the order they are sorted in is immaterial).
fn sort_centroids(means: &mut [f64], weights: &mut [i64]) {
    if means.len() < 2 {
        return;
    }
    let mut ranges = vec![(0usize, means.len() - 1)];
    while let Some((start, end)) = ranges.pop() {
        if start >= end {
            continue;
        }
        if end - start == 1 {
            if means[start] > means[end] {
                means.swap(start, end);
                weights.swap(start, end);
            }
            continue;
        }
        if means[start..=end].iter().all(|&m| m == means[start]) {
            // All means equal: each partition moves the central element to the front and
            // the front one to the end, and goes on with the rest; done here in one pass
            // instead of one scan per element (same result).
            let mut start = start;
            while end - start >= 2 {
                let pivot_idx = (end + start) / 2;
                means.swap(pivot_idx, end);
                weights.swap(pivot_idx, end);
                means.swap(start, end);
                weights.swap(start, end);
                start += 1;
            }
            continue;
        }
        let pivot_idx = (end + start) / 2;
        let pivot_mean = means[pivot_idx];
        means.swap(pivot_idx, end);
        weights.swap(pivot_idx, end);
        // `i` is one past the last element smaller than the pivot.
        let mut i = start;
        for j in start..end {
            if means[j] < pivot_mean {
                means.swap(i, j);
                weights.swap(i, j);
                i += 1;
            }
        }
        means.swap(i, end);
        weights.swap(i, end);
        if i > start {
            ranges.push((start, i - 1));
        }
        ranges.push((i + 1, end));
    }
}

/// RedisBloom's capacity for a compression: `6 × (size_t)compression + 10`.
pub fn capacity_for(compression: i64) -> usize {
    6 * compression as usize + 10
}

/// What MEMORY USAGE and TDIGEST.INFO report for a capacity (RedisBloom's formula: the
/// size of a pointer plus two arrays of `cap` 8-byte values).
pub fn usage_for(cap: usize) -> u64 {
    8 + 16 * cap as u64
}

impl TDigest {
    /// An empty digest of `compression` whose [`mem_usage`](Self::mem_usage) is at most
    /// `max_bytes`. `InvalidCompression` below 1, where RedisBloom's capacity formula
    /// gives none (its `allocation failed`) and past [`MAX_COMPRESSION`]; the ceiling is
    /// checked before the latter, so a compression too large for any memory is refused
    /// as too large.
    pub fn new(compression: i64, max_bytes: u64) -> Result<Self, TDigestError> {
        if compression < 1 || compression as u64 > (usize::MAX / 8 / 6 - 10) as u64 {
            return Err(TDigestError::InvalidCompression);
        }
        let usage = (compression as u64)
            .saturating_mul(6)
            .saturating_add(10)
            .saturating_mul(16)
            .saturating_add(8);
        if usage > max_bytes {
            return Err(TDigestError::TooLarge);
        }
        if compression > MAX_COMPRESSION {
            return Err(TDigestError::InvalidCompression);
        }
        let cap = capacity_for(compression);
        let mut means = Vec::new();
        let mut weights = Vec::new();
        means
            .try_reserve_exact(cap)
            .map_err(|_| TDigestError::OutOfMemory)?;
        weights
            .try_reserve_exact(cap)
            .map_err(|_| TDigestError::OutOfMemory)?;
        Ok(TDigest {
            compression: compression as f64,
            min: f64::MAX,
            max: -f64::MAX,
            cap,
            merged_nodes: 0,
            unmerged_nodes: 0,
            total_compressions: 0,
            merged_weight: 0,
            unmerged_weight: 0,
            means,
            weights,
            merge_due: std::cell::Cell::new(0),
            stamp: 0,
        })
    }

    /// How many saves have written this digest merged while its buffer held samples
    /// since this was last asked (and forgets it). RedisBloom merges the stored digest
    /// each time it saves it (DUMP); this crate's save leaves it as it is, so its owner
    /// can merge it when it next uses it, where it can tell replicas. The count matters
    /// only for a buffer that cannot merge ([`merge_empties_buffer`](Self::merge_empties_buffer)),
    /// which each of RedisBloom's merges sorts once more.
    #[inline]
    pub fn take_merge_due(&self) -> u32 {
        self.merge_due.replace(0).min(rdb::MAX_SAVES_COUNTED + 1)
    }

    /// Whether a save wrote this digest merged since [`take_merge_due`](Self::take_merge_due)
    /// was last asked (it would answer more than 0), without forgetting it.
    #[inline]
    pub fn merge_is_due(&self) -> bool {
        self.merge_due.get() != 0
    }

    /// The saves since the last use ([`take_merge_due`](Self::take_merge_due)).
    pub(crate) fn note_saved_merged(&self) -> u32 {
        let before = self.merge_due.get();
        self.merge_due.set(before.saturating_add(1));
        before
    }

    /// A number the owner keeps with the digest (redbloom: how many fork children the
    /// server had started when the digest was last used). Not part of the digest's value.
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    pub fn set_stamp(&mut self, stamp: u64) {
        self.stamp = stamp;
    }

    /// Empties the digest (TDIGEST.RESET): its compression and capacity stay.
    pub fn reset(&mut self) {
        self.min = f64::MAX;
        self.max = -f64::MAX;
        self.merged_nodes = 0;
        self.merged_weight = 0;
        self.unmerged_nodes = 0;
        self.unmerged_weight = 0;
        self.total_compressions = 0;
        self.means.clear();
        self.weights.clear();
    }

    pub fn compression(&self) -> f64 {
        self.compression
    }

    /// The compression as TDIGEST.INFO and MERGE read it (C's `(long long)` of the double).
    #[inline]
    pub fn compression_i64(&self) -> i64 {
        c_to_i64(self.compression)
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }

    pub fn merged_nodes(&self) -> usize {
        self.merged_nodes
    }

    pub fn unmerged_nodes(&self) -> usize {
        self.unmerged_nodes
    }

    pub fn merged_weight(&self) -> i64 {
        self.merged_weight
    }

    pub fn unmerged_weight(&self) -> i64 {
        self.unmerged_weight
    }

    pub fn total_compressions(&self) -> i64 {
        self.total_compressions
    }

    /// The number of observations (merged and unmerged weight).
    pub fn size(&self) -> i64 {
        self.merged_weight.wrapping_add(self.unmerged_weight)
    }

    /// The smallest value added (`f64::MAX` when empty, as RedisBloom keeps it).
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The largest value added (`-f64::MAX` when empty).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The centroids (merged, then unmerged): means and weights.
    pub fn centroids(&self) -> (&[f64], &[i64]) {
        (&self.means, &self.weights)
    }

    /// What MEMORY USAGE reports (RedisBloom's formula, [`usage_for`]).
    pub fn mem_usage(&self) -> u64 {
        usage_for(self.cap)
    }

    /// Bytes actually held by the centroid arrays.
    pub fn allocated_bytes(&self) -> u64 {
        8 * (self.means.capacity() + self.weights.capacity()) as u64
    }

    /// A copy, or `None` when the allocator refuses its arrays (COPY).
    pub fn try_clone(&self) -> Option<TDigest> {
        let mut means = Vec::new();
        let mut weights = Vec::new();
        means.try_reserve_exact(self.means.capacity()).ok()?;
        weights.try_reserve_exact(self.weights.capacity()).ok()?;
        means.extend_from_slice(&self.means);
        weights.extend_from_slice(&self.weights);
        Some(TDigest {
            compression: self.compression,
            min: self.min,
            max: self.max,
            cap: self.cap,
            merged_nodes: self.merged_nodes,
            unmerged_nodes: self.unmerged_nodes,
            total_compressions: self.total_compressions,
            merged_weight: self.merged_weight,
            unmerged_weight: self.unmerged_weight,
            means,
            weights,
            merge_due: self.merge_due.clone(),
            stamp: self.stamp,
        })
    }

    /// Offers the centroid arrays to a relocating allocator (the server's active
    /// defragmentation); both in one step, so nothing to resume.
    pub fn relocate(&mut self, relocator: &mut impl crate::memory::Relocator) -> Option<u64> {
        relocator.relocate(&mut self.means);
        relocator.relocate(&mut self.weights);
        None
    }

    /// Whether a query would merge buffered samples first (and so change the digest).
    pub fn has_unmerged(&self) -> bool {
        self.unmerged_nodes > 0
    }

    /// Adds `weight` observations of `mean` (TDIGEST.ADD adds weight 1; MERGE adds the
    /// centroids of its sources). `Overflow` is RedisBloom's `overflow detected`; nothing
    /// changes then.
    pub fn add(&mut self, mean: f64, weight: i64) -> Result<(), TDigestError> {
        if self.merged_nodes + self.unmerged_nodes + 1 >= self.cap {
            self.compress()?;
        }
        if self.merged_nodes + self.unmerged_nodes >= self.cap {
            return Err(TDigestError::Overflow);
        }
        if !add_fits(self.unmerged_weight, weight) {
            return Err(TDigestError::Overflow);
        }
        let new_unmerged = self.unmerged_weight.wrapping_add(weight);
        if !add_fits(new_unmerged, self.merged_weight) {
            return Err(TDigestError::Overflow);
        }
        let new_total = new_unmerged.wrapping_add(self.merged_weight);
        if total_overflows(new_unmerged as f64, new_total as f64) {
            return Err(TDigestError::Overflow);
        }
        if self.means.len() == self.means.capacity() {
            let more = self.cap - self.means.len();
            self.means
                .try_reserve_exact(more)
                .map_err(|_| TDigestError::OutOfMemory)?;
            self.weights
                .try_reserve_exact(more)
                .map_err(|_| TDigestError::OutOfMemory)?;
        }
        if mean < self.min {
            self.min = mean;
        }
        if mean > self.max {
            self.max = mean;
        }
        self.means.push(mean);
        self.weights.push(weight);
        self.unmerged_nodes += 1;
        self.unmerged_weight = new_unmerged;
        Ok(())
    }

    /// Whether [`compress`](Self::compress) would empty the buffer: false when the total
    /// weight is at most 1 (a single observation, or a merged weight that rounded to 2^63
    /// and became `i64::MIN`) or overflows, where t-digest-c's `td_compress` sorts the
    /// buffer and leaves it, so that every query sorts it again.
    pub fn merge_empties_buffer(&self) -> bool {
        let total_weight = self.merged_weight as f64 + self.unmerged_weight as f64;
        self.unmerged_nodes > 0
            && !total_overflows(self.unmerged_weight as f64, total_weight)
            && total_weight > 1.0
            && self.compression / (2.0 * PI * total_weight * total_weight.ln()) != f64::INFINITY
    }

    /// Sorts and merges the buffer (t-digest-c's `td_compress`). With a total weight of
    /// at most 1 the buffer is sorted but stays unmerged, as there.
    #[inline]
    pub fn compress(&mut self) -> Result<(), TDigestError> {
        if self.unmerged_nodes == 0 {
            return Ok(());
        }
        self.compress_buffer()
    }

    /// [`Self::compress`] of a buffer holding samples.
    fn compress_buffer(&mut self) -> Result<(), TDigestError> {
        let n = self.merged_nodes + self.unmerged_nodes;
        sort_centroids(&mut self.means[..n], &mut self.weights[..n]);
        let total_weight = self.merged_weight as f64 + self.unmerged_weight as f64;
        if total_overflows(self.unmerged_weight as f64, total_weight) {
            return Err(TDigestError::Overflow);
        }
        if total_weight <= 1.0 {
            return Ok(());
        }
        let denom = 2.0 * PI * total_weight * total_weight.ln();
        if denom == f64::INFINITY {
            return Err(TDigestError::Overflow);
        }
        let normalizer = self.compression / denom;
        if normalizer == f64::INFINITY {
            return Err(TDigestError::Overflow);
        }
        let (means, weights) = (&mut self.means, &mut self.weights);
        let mut cur = 0usize;
        let mut weight_so_far = 0f64;
        for i in 1..n {
            let proposed_weight = weights[cur] as f64 + weights[i] as f64;
            let z = proposed_weight * normalizer;
            let q0 = weight_so_far / total_weight;
            let q2 = (weight_so_far + proposed_weight) / total_weight;
            if z <= q0 * (1.0 - q0) && z <= q2 * (1.0 - q2) {
                weights[cur] = weights[cur].wrapping_add(weights[i]);
                let delta = means[i] - means[cur];
                let weighted_delta = (delta * weights[i] as f64) / weights[cur] as f64;
                means[cur] += weighted_delta;
            } else {
                weight_so_far += weights[cur] as f64;
                cur += 1;
                weights[cur] = weights[i];
                means[cur] = means[i];
            }
        }
        self.merged_nodes = cur + 1;
        self.means.truncate(cur + 1);
        self.weights.truncate(cur + 1);
        // C's conversion: a total that rounded to 2^63 becomes i64::MIN.
        self.merged_weight = c_to_i64(total_weight);
        self.unmerged_nodes = 0;
        self.unmerged_weight = 0;
        self.total_compressions = self.total_compressions.wrapping_add(1);
        Ok(())
    }

    /// Adds every centroid of `from` (merged first) to this digest, after merging both
    /// buffers (t-digest-c's `td_merge`; `from` is compressed in place, as there).
    pub fn merge_from(&mut self, from: &mut TDigest) -> Result<(), TDigestError> {
        self.compress()?;
        from.compress()?;
        self.add_centroids_of(from)
    }

    /// [`merge_from`](Self::merge_from) of a source already compressed (a digest that is
    /// its own source, or a source read through a shared reference after
    /// [`compress`](Self::compress)).
    pub fn add_centroids_of(&mut self, from: &TDigest) -> Result<(), TDigestError> {
        self.compress()?;
        for (&mean, &weight) in from.means.iter().zip(&from.weights) {
            self.add(mean, weight)?;
        }
        Ok(())
    }

    /// A digest from stored parts (RDB, DUMP), checked: see [`rdb::load_tdigest`]. The
    /// last `unmerged_nodes` of the centroids are the buffer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        compression: f64,
        (min, max): (f64, f64),
        cap: usize,
        total_compressions: i64,
        (merged_weight, unmerged_weight): (i64, i64),
        unmerged_nodes: usize,
        means: Vec<f64>,
        weights: Vec<i64>,
    ) -> Self {
        TDigest {
            compression,
            min,
            max,
            cap,
            merged_nodes: means.len() - unmerged_nodes,
            unmerged_nodes,
            total_compressions,
            merged_weight,
            unmerged_weight,
            means,
            weights,
            merge_due: std::cell::Cell::new(0),
            stamp: 0,
        }
    }
}
