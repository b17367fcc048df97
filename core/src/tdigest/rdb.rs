//! The t-digest's RDB layout (`TDIS-TYPE`, encoding 0), RedisBloom's (2.4.20 and 2.6.x
//! write and read the same): compression, min and max as doubles; capacity, merged
//! nodes, unmerged nodes and total compressions as signed fields; merged and unmerged
//! weight as doubles; then the merged centroids' means and their weights, each as doubles.
//! The digest is saved merged (RedisBloom compresses before saving, so the buffer is
//! empty), except a digest of a single observation, which t-digest-c never merges: it is
//! saved with one unmerged node and no centroid. DUMP payloads carry the same fields.

use super::{capacity_for, TDigest, MAX_COMPRESSION};
use crate::rdb::{FieldReader, FieldWriter};

/// The encoding version of the t-digest type (RedisBloom's `TDIGEST_ENC_VER`).
pub const TDIGEST_ENCODING: i32 = 0;

/// 2^63 as a double: the first weight that does not fit an `i64`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Writes a digest in encoding 0, as RedisBloom writes it after merging its buffer (this
/// digest is left as it is, a merged copy is written, and the digest notes it:
/// [`TDigest::take_merge_due`]).
pub fn save_tdigest(digest: &TDigest, out: &mut impl FieldWriter) {
    if digest.has_unmerged() {
        digest.note_saved_merged();
        let mut merged = digest.clone();
        // A total that cannot merge is saved as it stands, as RedisBloom would.
        let _ = merged.compress();
        return write_fields(&merged, out);
    }
    write_fields(digest, out)
}

fn write_fields(d: &TDigest, out: &mut impl FieldWriter) {
    out.double(d.compression);
    out.double(d.min);
    out.double(d.max);
    out.unsigned(d.cap as u64);
    out.unsigned(d.merged_nodes as u64);
    out.unsigned(d.unmerged_nodes as u64);
    out.unsigned(d.total_compressions as u64);
    out.double(d.merged_weight as f64);
    out.double(d.unmerged_weight as f64);
    for &mean in &d.means[..d.merged_nodes] {
        out.double(mean);
    }
    for &weight in &d.weights[..d.merged_nodes] {
        out.double(weight as f64);
    }
}

/// Whether `mean` cannot follow `last` in a digest RedisBloom saved: it is below it by
/// more than the rounding of t-digest-c's merge can overshoot (the merged mean
/// `m + (m' − m) × w' / w` may land a few units in the last place past `m'`, before a
/// neighbour equal to `m'`). NaN follows anything: t-digest-c makes NaN means (∞ − ∞ in
/// that merge, from values near ±1.8e308) and sorts them anywhere.
fn out_of_order(last: f64, mean: f64) -> bool {
    mean < last && last - mean > last.abs() * (8.0 * f64::EPSILON)
}

/// Whether weights summing to `sum` can belong to a digest of merged weight
/// `merged_weight` as RedisBloom saves it: exactly, while every number involved is below
/// 2^53; above, doubles round (t-digest-c keeps the merged weight as the double of the
/// total, and the RDB holds each weight as a double), so within the rounding of the
/// `n + 1` numbers involved.
fn adds_up(sum: i128, merged_weight: i64, n: usize) -> bool {
    const EXACT: i128 = 1 << 53;
    if sum < EXACT && i128::from(merged_weight) < EXACT {
        return sum == i128::from(merged_weight);
    }
    let slack = (n as f64 + 1.0) * merged_weight.max(1) as f64 * f64::EPSILON;
    ((sum - i128::from(merged_weight)).abs() as f64) <= slack
}

/// A double holding a whole number in `0..2^63`.
fn whole(x: f64) -> Option<i64> {
    ((0.0..TWO_POW_63).contains(&x) && x.fract() == 0.0).then_some(x as i64)
}

/// Reads a digest of encoding 0, refusing what RedisBloom never writes: a compression
/// that is not a whole number in `1..=MAX_COMPRESSION`, a capacity other than the
/// compression's, more merged nodes than the capacity, an unmerged buffer (other than a
/// single observation's), means out of order (beyond rounding: [`out_of_order`]),
/// weights that are not whole numbers of at least 1, a merged weight other than their
/// sum (beyond the rounding of doubles past 2^53: [`adds_up`]), NaN extremes or a minimum above the maximum of a non-empty digest. Infinite and
/// NaN means load: RedisBloom writes them (a merge of centroids near ±1.8e308 overflows),
/// and so can infinite extremes.
///
/// A single observation's digest (one unmerged node of weight 1, no centroid) comes back
/// with that node: its value is both the minimum and the maximum. (RedisBloom loads a
/// zero node there instead, of mean 0 and weight 0: docs/differences.md.)
pub fn load_tdigest(input: &mut impl FieldReader, encver: i32) -> Option<TDigest> {
    if encver != TDIGEST_ENCODING {
        return None;
    }
    let compression = input.double()?;
    let min = input.double()?;
    let max = input.double()?;
    let cap = input.unsigned()? as i64;
    let merged_nodes = input.unsigned()? as i64;
    let unmerged_nodes = input.unsigned()? as i64;
    let total_compressions = input.unsigned()? as i64;
    let merged_weight = whole(input.double()?)?;
    let unmerged_weight = whole(input.double()?)?;
    let compression_whole = whole(compression)?;
    if !(1..=MAX_COMPRESSION).contains(&compression_whole)
        || cap as u64 != capacity_for(compression_whole) as u64
        || !(0..=cap).contains(&merged_nodes)
        || total_compressions < 0
        || min.is_nan()
        || max.is_nan()
    {
        return None;
    }
    let single = match (merged_nodes, unmerged_nodes, unmerged_weight) {
        (_, 0, 0) => false,
        (0, 1, 1) if merged_weight == 0 && min == max && min.is_finite() => true,
        _ => return None,
    };
    let merged_nodes = merged_nodes as usize;
    let mut means: Vec<f64> = Vec::with_capacity(merged_nodes.min(4096));
    let mut last = f64::NEG_INFINITY;
    for _ in 0..merged_nodes {
        let mean = input.double()?;
        if out_of_order(last, mean) {
            return None;
        }
        if !mean.is_nan() {
            last = mean;
        }
        means.push(mean);
    }
    let mut weights = Vec::with_capacity(merged_nodes.min(4096));
    let mut sum = 0i128;
    for _ in 0..merged_nodes {
        let weight = whole(input.double()?).filter(|&w| w >= 1)?;
        sum += i128::from(weight);
        weights.push(weight);
    }
    if !adds_up(sum, merged_weight, merged_nodes) || (merged_nodes > 0 && min > max) {
        return None;
    }
    let mut digest = TDigest::from_parts(
        compression,
        min,
        max,
        cap as usize,
        total_compressions,
        merged_weight,
        means,
        weights,
    );
    if single {
        digest.means.push(min);
        digest.weights.push(1);
        digest.unmerged_nodes = 1;
        digest.unmerged_weight = 1;
    }
    Some(digest)
}
