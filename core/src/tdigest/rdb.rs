//! The t-digest's RDB layout (`TDIS-TYPE`, encoding 0), RedisBloom's (2.4.20 and 2.6.x
//! write and read the same): compression, min and max as doubles; capacity, merged
//! nodes, unmerged nodes and total compressions as signed fields; merged and unmerged
//! weight as doubles; then the merged centroids' means and their weights, each as doubles.
//! The digest is saved merged (RedisBloom compresses before saving, so the buffer is
//! empty), except a digest whose buffer cannot merge (a single observation, which
//! t-digest-c never merges, or a total weight that rounded to 2^63): it is saved with its
//! unmerged node count and weight but without those nodes. DUMP payloads carry the same
//! fields.

use super::{c_to_i64, capacity_for, TDigest, MAX_COMPRESSION};
use crate::rdb::{FieldReader, FieldWriter};

/// The encoding version of the t-digest type (RedisBloom's `TDIGEST_ENC_VER`).
pub const TDIGEST_ENCODING: i32 = 0;

/// The most saves between two uses whose sorts of a buffer that cannot merge are
/// repeated (each is a sort of the whole buffer): [`save_tdigest`],
/// [`TDigest::take_merge_due`].
pub const MAX_SAVES_COUNTED: u32 = 64;

/// Writes a digest in encoding 0, as RedisBloom writes it after merging its buffer (this
/// digest is left as it is, a merged copy is written, and the digest notes it:
/// [`TDigest::take_merge_due`]).
pub fn save_tdigest(digest: &TDigest, out: &mut impl FieldWriter) {
    if digest.has_unmerged() {
        let earlier_saves = digest.note_saved_merged();
        let mut merged = digest.clone();
        // A total that cannot merge is saved as it stands, as RedisBloom would: sorted,
        // once by each save since the last use (up to MAX_SAVES_COUNTED) and this one.
        for _ in 0..=earlier_saves.min(MAX_SAVES_COUNTED) {
            let _ = merged.compress();
        }
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

/// Reads a digest of encoding 0. Refused is only what would break this crate's
/// bookkeeping or size its arrays wrongly, none of which a writer (RedisBloom 2.4.20, 2.6,
/// 8.2 or redbloom) produces: a compression that is not a whole number in
/// `1..=MAX_COMPRESSION` (TDIGEST.CREATE and MERGE take integers), a capacity other than
/// the compression's (t-digest-c sizes its arrays by the compression and then trusts the
/// stored capacity), more nodes than the capacity (docs/compat.md, "Load-time checks").
///
/// Everything else loads as RedisBloom loads it, since RedisBloom writes it: NaN and
/// infinite means in any order (a merge of values near ±1.8e308 makes them; NaN sorts
/// anywhere), a minimum above the maximum (a digest of NaN centroids), weights of 0 (a
/// node RedisBloom read back from its own RDB), a merged weight that is not the
/// centroids' sum (doubles round past 2^53; RedisBloom's reloaded zero node). Weights
/// are doubles converted to `long long` as t-digest-c's x86-64 build converts them
/// ([`c_to_i64`]: a merged weight that rounded to 2^63 is `i64::MIN`). Unmerged nodes,
/// whose values are not saved, load as RedisBloom loads them: of mean 0 and weight 0,
/// with the saved unmerged weight.
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
    let cap = input.unsigned()?;
    let merged_nodes = input.unsigned()?;
    let unmerged_nodes = input.unsigned()?;
    let total_compressions = input.unsigned()? as i64;
    let merged_weight = c_to_i64(input.double()?);
    let unmerged_weight = c_to_i64(input.double()?);
    let whole_compression =
        compression.fract() == 0.0 && (1.0..=MAX_COMPRESSION as f64).contains(&compression);
    if !whole_compression
        || cap != capacity_for(compression as i64) as u64
        || merged_nodes > cap
        || unmerged_nodes > cap - merged_nodes
    {
        return None;
    }
    let (merged_nodes, unmerged_nodes) = (merged_nodes as usize, unmerged_nodes as usize);
    let single = merged_nodes == 0
        && unmerged_nodes == 1
        && unmerged_weight == 1
        && merged_weight == 0
        && min == max
        && min.is_finite();
    let mut means: Vec<f64> = Vec::with_capacity(merged_nodes.min(4096));
    for _ in 0..merged_nodes {
        means.push(input.double()?);
    }
    let mut weights = Vec::with_capacity(merged_nodes.min(4096));
    for _ in 0..merged_nodes {
        weights.push(c_to_i64(input.double()?));
    }
    let (node_mean, node_weight) = if single { (min, 1) } else { (0.0, 0) };
    let (means, weights) = with_nodes(means, weights, unmerged_nodes, node_mean, node_weight)?;
    Some(TDigest::from_parts(
        compression,
        (min, max),
        cap as usize,
        total_compressions,
        (merged_weight, unmerged_weight),
        unmerged_nodes,
        means,
        weights,
    ))
}

/// `means` and `weights` followed by `count` nodes of `mean` and `weight`: arrays
/// allocated zeroed (fresh pages, resident only once written, as RedisBloom's calloc'd
/// arrays are), so a stored count of unsaved nodes costs no memory until used; `None`
/// when the allocator refuses them.
fn with_nodes(
    means: Vec<f64>,
    weights: Vec<i64>,
    count: usize,
    mean: f64,
    weight: i64,
) -> Option<(Vec<f64>, Vec<i64>)> {
    if count == 0 {
        return Some((means, weights));
    }
    let n = means.len() + count;
    let mut all_means: Vec<f64> = bytemuck::allocation::try_zeroed_vec(n).ok()?;
    let mut all_weights: Vec<i64> = bytemuck::allocation::try_zeroed_vec(n).ok()?;
    all_means[..means.len()].copy_from_slice(&means);
    all_weights[..weights.len()].copy_from_slice(&weights);
    if weight != 0 || mean.to_bits() != 0 {
        all_means[means.len()..].fill(mean);
        all_weights[weights.len()..].fill(weight);
    }
    Some((all_means, all_weights))
}
