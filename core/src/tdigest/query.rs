//! The t-digest's queries (TDIGEST.CDF, QUANTILE, TRIMMED_MEAN, RANK, REVRANK, BYRANK,
//! BYREVRANK): t-digest-c's walks over the merged centroids, the same doubles in the same
//! order.

use super::{c_max, c_min, c_to_i64, half_round_down, weighted_average, TDigest};

impl TDigest {
    /// The fraction of observations at or below `val`, half of those equal (TDIGEST.CDF;
    /// t-digest-c's `td_cdf`, after merging the buffer). NaN when nothing is merged.
    pub fn cdf(&mut self, val: f64) -> f64 {
        // An overflow leaves the digest as it was; RedisBloom ignores it here too.
        let _ = self.compress();
        self.cdf_merged(val)
    }

    fn cdf_merged(&self, val: f64) -> f64 {
        if self.merged_nodes == 0 {
            return f64::NAN;
        }
        if val < self.min {
            return 0.0;
        }
        if val > self.max {
            return 1.0;
        }
        let (means, weights) = (&self.means, &self.weights);
        if self.merged_nodes == 1 {
            let width = self.max - self.min;
            if val - self.min <= width {
                return 0.5;
            }
            return (val - self.min) / width;
        }
        let n = self.merged_nodes;
        let left_mean = means[0];
        let left_weight = weights[0] as f64;
        let merged_weight = self.merged_weight as f64;
        if val < left_mean {
            let width = left_mean - self.min;
            if width > 0.0 {
                if val == self.min {
                    return 0.5 / merged_weight;
                }
                return (1.0 + (val - self.min) / width * (left_weight / 2.0 - 1.0))
                    / merged_weight;
            }
            return 0.0;
        }
        let right_mean = means[n - 1];
        let right_weight = weights[n - 1] as f64;
        if val > right_mean {
            let width = self.max - right_mean;
            if width > 0.0 {
                if val == self.max {
                    return 1.0 - 0.5 / merged_weight;
                }
                let dq =
                    (1.0 + (self.max - val) / width * (right_weight / 2.0 - 1.0)) / merged_weight;
                return 1.0 - dq;
            }
            return 1.0;
        }
        let mut weight_so_far = 0f64;
        let mut it = 0usize;
        while it < n - 1 {
            if means[it] == val {
                let mut dw = 0f64;
                while it < n && means[it] == val {
                    dw += weights[it] as f64;
                    it += 1;
                }
                return (weight_so_far + dw / 2.0) / self.merged_weight as f64;
            } else if means[it] <= val && val < means[it + 1] {
                let node_weight = weights[it] as f64;
                let node_weight_next = weights[it + 1] as f64;
                let node_mean = means[it];
                let node_mean_next = means[it + 1];
                if node_mean_next - node_mean > 0.0 {
                    let mut left_excluded = 0f64;
                    let mut right_excluded = 0f64;
                    if node_weight == 1.0 {
                        if node_weight_next == 1.0 {
                            return (weight_so_far + 1.0) / merged_weight;
                        }
                        left_excluded = 0.5;
                    } else if node_weight_next == 1.0 {
                        right_excluded = 0.5;
                    }
                    let dw = (node_weight + node_weight_next) / 2.0;
                    let dw_no_singleton = dw - left_excluded - right_excluded;
                    let base = weight_so_far + node_weight / 2.0 + left_excluded;
                    return (base
                        + dw_no_singleton * (val - node_mean) / (node_mean_next - node_mean))
                        / merged_weight;
                }
                let dw = (node_weight + node_weight_next) / 2.0;
                return (weight_so_far + dw) / merged_weight;
            } else {
                weight_so_far += weights[it] as f64;
            }
            it += 1;
        }
        1.0 - 0.5 / merged_weight
    }

    /// t-digest-c's `td_internal_iterate_centroids_to_index`: the value at rank `index`,
    /// continuing from `walk` (the weight so far and the centroid reached), which
    /// successive ascending indexes share.
    fn value_at_index(&self, index: f64, left_weight: f64, walk: &mut (f64, usize)) -> f64 {
        let n = self.merged_nodes;
        // The merged centroids alone: the walk's indices then need no bounds checks.
        let (means, weights) = (&self.means[..n], &self.weights[..n]);
        if left_weight > 1.0 && index < left_weight / 2.0 {
            return self.min + (index - 1.0) / (left_weight / 2.0 - 1.0) * (means[0] - self.min);
        }
        if index > self.merged_weight.wrapping_sub(1) as f64 {
            return self.max;
        }
        let right_weight = weights[n - 1] as f64;
        let right_mean = means[n - 1];
        let merged_weight = self.merged_weight as f64;
        if right_weight > 1.0 && merged_weight - index <= right_weight / 2.0 {
            return self.max
                - (merged_weight - index - 1.0) / (right_weight / 2.0 - 1.0)
                    * (self.max - right_mean);
        }
        while walk.1 < n - 1 {
            let i = walk.1;
            let node_weight = weights[i] as f64;
            let node_weight_next = weights[i + 1] as f64;
            let node_mean = means[i];
            let node_mean_next = means[i + 1];
            let dw = (node_weight + node_weight_next) / 2.0;
            if walk.0 + dw > index {
                let mut left_unit = 0f64;
                if node_weight == 1.0 {
                    if index - walk.0 < 0.5 {
                        return node_mean;
                    }
                    left_unit = 0.5;
                }
                let mut right_unit = 0f64;
                if node_weight_next == 1.0 {
                    if walk.0 + dw - index <= 0.5 {
                        return node_mean_next;
                    }
                    right_unit = 0.5;
                }
                let z1 = index - walk.0 - left_unit;
                let z2 = walk.0 + dw - index - right_unit;
                return weighted_average(node_mean, z2, node_mean_next, z1);
            }
            walk.0 += dw;
            walk.1 += 1;
        }
        let z1 = index - merged_weight - right_weight / 2.0;
        let z2 = right_weight / 2.0 - z1;
        weighted_average(right_mean, z1, self.max, z2)
    }

    /// The value below which a fraction `q` of the observations falls (t-digest-c's
    /// `td_quantile`, after merging the buffer): NaN outside `[0, 1]` or when nothing is
    /// merged.
    // C's range check, which a NaN passes (kept as written).
    #[allow(clippy::manual_range_contains)]
    pub fn quantile(&mut self, q: f64) -> f64 {
        let _ = self.compress();
        if q < 0.0 || q > 1.0 || self.merged_nodes == 0 {
            return f64::NAN;
        }
        if self.merged_nodes == 1 {
            return self.means[0];
        }
        let index = q * self.merged_weight as f64;
        if index < 1.0 {
            return self.min;
        }
        let left_weight = self.weights[0] as f64;
        let mut walk = (left_weight / 2.0, 0usize);
        self.value_at_index(index, left_weight, &mut walk)
    }

    /// The values at several quantiles, one walk over the centroids for the whole list
    /// (t-digest-c's `td_quantiles`; TDIGEST.QUANTILE passes each ascending run of its
    /// arguments). The quantiles are in `[0, 1]`.
    pub fn quantiles(&mut self, qs: &[f64], out: &mut Vec<f64>) {
        self.quantiles_each(qs, |v| out.push(v));
    }

    /// [`quantiles`](Self::quantiles), each value given to `each` in order.
    #[allow(clippy::manual_range_contains)]
    fn quantiles_each(&mut self, qs: &[f64], mut each: impl FnMut(f64)) {
        let _ = self.compress();
        let n = self.merged_nodes;
        if n == 0 {
            qs.iter().for_each(|_| each(f64::NAN));
            return;
        }
        if n == 1 {
            let only = self.means[0];
            for &q in qs {
                each(if q < 0.0 || q > 1.0 { f64::NAN } else { only });
            }
            return;
        }
        let left_weight = self.weights[0] as f64;
        let mut walk = (left_weight / 2.0, 0usize);
        for &q in qs {
            let index = q * self.merged_weight as f64;
            each(self.value_at_index(index, left_weight, &mut walk));
        }
    }

    /// TDIGEST.QUANTILE's values: RedisBloom splits its arguments into ascending runs and
    /// answers each run with one walk ([`quantiles`](Self::quantiles)).
    pub fn quantiles_by_runs(&mut self, qs: &[f64]) -> Vec<f64> {
        let mut values = Vec::with_capacity(qs.len());
        self.quantiles_by_runs_each(qs, |v| values.push(v));
        values
    }

    /// [`quantiles_by_runs`](Self::quantiles_by_runs), each value given to `each` in order
    /// (a reply written as the values come, without a vector of them).
    pub fn quantiles_by_runs_each(&mut self, qs: &[f64], mut each: impl FnMut(f64)) {
        let mut start = 0;
        while start < qs.len() {
            let mut end = start + 1;
            while end < qs.len() && qs[end - 1] <= qs[end] {
                end += 1;
            }
            self.quantiles_each(&qs[start..end], &mut each);
            start = end;
        }
    }

    /// The mean of the observations between the quantiles `low` and `high` (t-digest-c's
    /// `td_trimmed_mean`, after merging the buffer).
    pub fn trimmed_mean(&mut self, low: f64, high: f64) -> f64 {
        let _ = self.compress();
        if self.merged_nodes == 0 || !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
            return f64::NAN;
        }
        if self.merged_nodes == 1 {
            return self.means[0];
        }
        let leftmost = (self.merged_weight as f64 * low).floor();
        let rightmost = (self.merged_weight as f64 * high).ceil();
        let mut count_done = 0f64;
        let mut trimmed_sum = 0f64;
        let mut trimmed_count = 0f64;
        for i in 0..self.merged_nodes {
            let n_weight = self.weights[i] as f64;
            let mut count_add = n_weight;
            count_add -= c_min(c_max(0.0, leftmost - count_done), count_add);
            count_add = c_min(c_max(0.0, rightmost - count_done), count_add);
            count_done += n_weight;
            trimmed_sum += self.means[i] * count_add;
            trimmed_count += count_add;
            if count_done >= rightmost {
                break;
            }
        }
        trimmed_sum / trimmed_count
    }

    /// TDIGEST.RANK (`reverse` false) / REVRANK of values (none NaN): -2 when empty,
    /// -1 / the size beyond the extremes, else the CDF scaled to the size and rounded as
    /// RedisBloom rounds it. The size is read once, before the first CDF merges the
    /// buffer (past 2^53 the merged total rounds, so the size read after would differ),
    /// as RedisBloom reads it.
    pub fn ranks(&mut self, vals: &[f64], reverse: bool) -> Vec<i64> {
        self.ranks_at_size(self.size(), vals, reverse)
    }

    /// [`ranks`](Self::ranks) for a digest whose size was `size` before its owner merged
    /// its buffer for this query.
    pub fn ranks_at_size(&mut self, size: i64, vals: &[f64], reverse: bool) -> Vec<i64> {
        let mut ranks = Vec::with_capacity(vals.len());
        self.ranks_at_size_each(size, vals, reverse, |r| ranks.push(r));
        ranks
    }

    /// [`ranks_at_size`](Self::ranks_at_size), each rank given to `each` in order.
    pub fn ranks_at_size_each(
        &mut self,
        size: i64,
        vals: &[f64],
        reverse: bool,
        mut each: impl FnMut(i64),
    ) {
        let size = size as f64;
        let (min, max) = (self.min, self.max);
        let rank_of = |d: &mut TDigest, val: f64| {
            if size == 0.0 {
                -2.0
            } else if val < min {
                if reverse {
                    size
                } else {
                    -1.0
                }
            } else if val > max {
                if reverse {
                    -1.0
                } else {
                    size
                }
            } else {
                let scaled = d.cdf(val) * size;
                if reverse {
                    (size - scaled.round()).round()
                } else {
                    half_round_down(scaled)
                }
            }
        };
        vals.iter().for_each(|&v| each(c_to_i64(rank_of(self, v))));
    }

    /// [`ranks`](Self::ranks) of one value.
    pub fn rank(&mut self, val: f64, reverse: bool) -> i64 {
        self.ranks(&[val], reverse)[0]
    }

    /// TDIGEST.BYRANK (`reverse` false) / BYREVRANK of ranks (none negative): NaN when
    /// empty, the minimum (maximum) at rank 0, ±inf at or beyond the size, else the
    /// quantile `rank / size`. The size is read once, before the first quantile merges
    /// the buffer, as RedisBloom reads it ([`ranks`](Self::ranks)).
    pub fn by_ranks(&mut self, ranks: &[i64], reverse: bool) -> Vec<f64> {
        self.by_ranks_at_size(self.size(), ranks, reverse)
    }

    /// [`by_ranks`](Self::by_ranks) for a digest whose size was `size` before its owner
    /// merged its buffer for this query.
    pub fn by_ranks_at_size(&mut self, size: i64, ranks: &[i64], reverse: bool) -> Vec<f64> {
        let mut values = Vec::with_capacity(ranks.len());
        self.by_ranks_at_size_each(size, ranks, reverse, |v| values.push(v));
        values
    }

    /// [`by_ranks_at_size`](Self::by_ranks_at_size), each value given to `each` in order.
    pub fn by_ranks_at_size_each(
        &mut self,
        size: i64,
        ranks: &[i64],
        reverse: bool,
        mut each: impl FnMut(f64),
    ) {
        let size = size as f64;
        let (min, max) = (self.min, self.max);
        let value_of = |d: &mut TDigest, rank: i64| {
            let rank = rank as f64;
            if size == 0.0 {
                f64::NAN
            } else if rank == 0.0 {
                if reverse {
                    max
                } else {
                    min
                }
            } else if rank >= size {
                if reverse {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                let at = if reverse { size - rank - 1.0 } else { rank };
                d.quantile(at / size)
            }
        };
        ranks.iter().for_each(|&r| each(value_of(self, r)));
    }

    /// [`by_ranks`](Self::by_ranks) of one rank.
    pub fn by_rank(&mut self, rank: i64, reverse: bool) -> f64 {
        self.by_ranks(&[rank], reverse)[0]
    }
}
