//! The digest against RedisBloom's own answers (known-answer tests: the commands and
//! replies RedisBloom 2.4.20 gave, in core/tests/fixtures/redisbloom-2.4.20/, replayed on
//! the core and every double compared bit for bit), against values worked out by hand
//! from t-digest-c's definitions, and the RDB codec against hostile streams.

use super::rdb::{load_tdigest, save_tdigest, TDIGEST_ENCODING};
use super::*;
use crate::rdb::{Field, Fields};
use crate::testing::{apply_field_edits, field_edits, random_fields, random_streams};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::HashMap;

fn digest(compression: i64) -> TDigest {
    TDigest::new(compression, u64::MAX).unwrap()
}

fn saved(d: &TDigest) -> Fields {
    let mut fields = Fields::default();
    save_tdigest(d, &mut fields);
    fields
}

fn fixture(name: &str) -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/redisbloom-2.4.20/"
    );
    serde_json::from_str(&std::fs::read_to_string(format!("{path}{name}")).unwrap()).unwrap()
}

/// The elements of a RESP2 reply as text: bulk strings, integers, simple strings.
fn elements(resp: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = resp.split("\r\n");
    while let Some(line) = lines.next() {
        match line.chars().next() {
            Some('$') if line != "$-1" => out.push(lines.next().unwrap().to_string()),
            Some(':') | Some('+') => out.push(line[1..].to_string()),
            _ => {}
        }
    }
    out
}

/// A double as RedisBloom's reply spells it (`%.17g`, `inf`, `nan`, `-nan`), compared
/// bit for bit (NaN: its sign).
fn same_double(got: f64, want: &str) -> bool {
    match want {
        "nan" => got.is_nan() && got.is_sign_positive(),
        "-nan" => got.is_nan() && got.is_sign_negative(),
        _ => want.parse::<f64>().unwrap().to_bits() == got.to_bits(),
    }
}

/// Replays TDIGEST.* commands on the core as RedisBloom runs them (successful ones and
/// MERGEs refused for overflow, which merge their sources in place first), comparing
/// each reply; counts the doubles and ranks compared.
struct Replay {
    digests: HashMap<String, TDigest>,
    doubles: usize,
}

impl Replay {
    fn run(&mut self, argv: &[&str], resp: &str) {
        let failed = resp.starts_with('-');
        let name = argv[0].to_ascii_uppercase();
        let want = elements(resp);
        let Some(key) = argv.get(1).map(|k| k.to_string()) else {
            return;
        };
        let nums = |from: usize| -> Vec<f64> { argv[from..].iter().map(|a| parse(a)).collect() };
        match name.as_str() {
            "FLUSHALL" => self.digests.clear(),
            "TDIGEST.CREATE" if !failed => {
                let c = argv
                    .get(3)
                    .map_or(DEFAULT_COMPRESSION, |c| c.parse().unwrap());
                self.digests.insert(key, digest(c));
            }
            "TDIGEST.RESET" if !failed => self.digests.get_mut(&key).unwrap().reset(),
            "TDIGEST.ADD" if !failed => {
                let d = self.digests.get_mut(&key).unwrap();
                for v in nums(2) {
                    d.add(v, 1).unwrap();
                }
            }
            "TDIGEST.MERGE" => self.merge(argv, resp),
            _ if failed || !self.digests.contains_key(&key) => {}
            "TDIGEST.INFO" => {
                let d = &self.digests[&key];
                let got = [
                    d.compression_i64(),
                    d.capacity() as i64,
                    d.merged_nodes() as i64,
                    d.unmerged_nodes() as i64,
                    d.merged_weight(),
                    d.unmerged_weight(),
                    d.size(),
                    d.total_compressions(),
                    d.mem_usage() as i64,
                ];
                let want: Vec<i64> = want
                    .iter()
                    .skip(1)
                    .step_by(2)
                    .map(|v| v.parse().unwrap())
                    .collect();
                assert_eq!(got.to_vec(), want, "{argv:?}");
            }
            _ => {
                let d = self.digests.get_mut(&key).unwrap();
                let got: Vec<f64> = match name.as_str() {
                    "TDIGEST.MIN" => vec![if d.size() > 0 { d.min() } else { f64::NAN }],
                    "TDIGEST.MAX" => vec![if d.size() > 0 { d.max() } else { f64::NAN }],
                    "TDIGEST.QUANTILE" => d.quantiles_by_runs(&nums(2)),
                    "TDIGEST.CDF" => nums(2).into_iter().map(|v| d.cdf(v)).collect(),
                    "TDIGEST.TRIMMED_MEAN" => {
                        vec![d.trimmed_mean(parse(argv[2]), parse(argv[3]))]
                    }
                    "TDIGEST.RANK" | "TDIGEST.REVRANK" => {
                        let reverse = name == "TDIGEST.REVRANK";
                        let got: Vec<String> = nums(2)
                            .into_iter()
                            .map(|v| d.rank(v, reverse).to_string())
                            .collect();
                        assert_eq!(got, want, "{argv:?}");
                        self.doubles += got.len();
                        return;
                    }
                    "TDIGEST.BYRANK" | "TDIGEST.BYREVRANK" => {
                        let reverse = name == "TDIGEST.BYREVRANK";
                        argv[2..]
                            .iter()
                            .map(|r| d.by_rank(r.parse().unwrap(), reverse))
                            .collect()
                    }
                    _ => return,
                };
                assert_eq!(got.len(), want.len(), "{argv:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(same_double(*g, w), "{argv:?}: {g:e} vs {w}");
                    self.doubles += 1;
                }
            }
        }
    }

    /// TDIGEST.MERGE as RedisBloom runs it (its argument errors change nothing).
    fn merge(&mut self, argv: &[&str], resp: &str) {
        if resp.starts_with('-') && !resp.contains("overflow") {
            return;
        }
        let n: usize = argv[2].parse().unwrap();
        let sources: Vec<String> = argv[3..3 + n].iter().map(|s| s.to_string()).collect();
        let rest: Vec<String> = argv[3 + n..]
            .iter()
            .map(|s| s.to_ascii_uppercase())
            .collect();
        let given = rest
            .iter()
            .position(|a| a == "COMPRESSION")
            .map(|i| argv[3 + n + i + 1].parse::<i64>().unwrap());
        let over = rest.iter().any(|a| a == "OVERRIDE");
        let dest = self.digests.get(argv[1]).cloned();
        let compression = match (given, &dest) {
            (Some(c), _) => c,
            (None, Some(d)) if !over => d.compression_i64(),
            _ => sources
                .iter()
                .map(|s| self.digests[s].compression_i64())
                .max()
                .unwrap(),
        };
        let mut to = digest(compression);
        if let (Some(_), false) = (&dest, over) {
            let d = self.digests.get_mut(argv[1]).unwrap();
            d.compress().unwrap();
            to.add_centroids_of(d).unwrap();
        }
        for s in &sources {
            let from = self.digests.get_mut(s).unwrap();
            from.compress().unwrap();
            if to.add_centroids_of(from).is_err() {
                assert!(resp.contains("overflow"), "{argv:?}");
                return;
            }
        }
        assert_eq!(resp, "+OK\r\n", "{argv:?}");
        self.digests.insert(argv[1].to_string(), to);
    }
}

fn parse(a: &str) -> f64 {
    match a {
        "inf" | "+inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        // strtod's hexadecimal form (Redis parses doubles with it).
        _ if a.starts_with("0x") => i64::from_str_radix(&a[2..], 16).unwrap() as f64,
        _ => a.parse().unwrap(),
    }
}

fn replay(records: &[Value], replay: &mut Replay) {
    for record in records {
        let argv: Vec<&str> = record["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        replay.run(&argv, record["resp"].as_str().unwrap());
    }
}

#[test]
fn redisbloom_s_answers_bit_for_bit() {
    let mut r = Replay {
        digests: HashMap::new(),
        doubles: 0,
    };
    replay(
        fixture("tdigest.commands.json")["commands"]
            .as_array()
            .unwrap(),
        &mut r,
    );
    assert!(r.doubles > 1000, "{}", r.doubles);
    let m = fixture("tdigest.manifest.json");
    let mut r = Replay {
        digests: HashMap::new(),
        doubles: 0,
    };
    for key in m["keys"].as_array().unwrap() {
        replay(key["ops"].as_array().unwrap(), &mut r);
    }
    for key in m["keys"].as_array().unwrap() {
        replay(key["queries"].as_array().unwrap(), &mut r);
    }
    assert!(r.doubles > 500, "{}", r.doubles);
}

#[test]
fn capacity_and_memory_are_redisbloom_s() {
    let d = digest(100);
    assert_eq!(d.capacity(), 610);
    assert_eq!(d.mem_usage(), 9768);
    assert_eq!(digest(1).capacity(), 16);
    assert_eq!(
        TDigest::new(0, u64::MAX),
        Err(TDigestError::InvalidCompression)
    );
    assert_eq!(
        TDigest::new(MAX_COMPRESSION + 1, u64::MAX),
        Err(TDigestError::InvalidCompression)
    );
    assert_eq!(
        TDigest::new(i64::MAX, u64::MAX),
        Err(TDigestError::InvalidCompression)
    );
    assert_eq!(TDigest::new(100, 9767), Err(TDigestError::TooLarge));
    // 8 + 16 × (6 × 20 000 000 + 10) bytes exceed 1 GiB.
    assert_eq!(
        TDigest::new(20_000_000, 1 << 30),
        Err(TDigestError::TooLarge)
    );
}

#[test]
fn one_observation_stays_unmerged_as_in_t_digest_c() {
    let mut d = digest(10);
    d.add(4.0, 1).unwrap();
    assert!(d.quantile(0.5).is_nan());
    assert!(d.cdf(4.0).is_nan());
    assert_eq!((d.merged_nodes(), d.unmerged_nodes()), (0, 1));
    assert_eq!(d.rank(4.0, false), i64::MIN);
    // It is saved with no centroid and loads back as itself.
    let mut fields = saved(&d);
    assert_eq!(fields.fields.len(), 9);
    let loaded = load_tdigest(&mut fields, TDIGEST_ENCODING).unwrap();
    assert_eq!(loaded, d);
}

#[test]
fn hand_worked_values() {
    // Two observations: each its own centroid (weight 1).
    let mut d = digest(100);
    d.add(1.0, 1).unwrap();
    d.add(3.0, 1).unwrap();
    assert_eq!(d.quantile(0.0), 1.0);
    assert_eq!(d.quantile(1.0), 3.0);
    // index 1 = weight so far 0.5 + 0.5 into the pair of singletons: the right one.
    assert_eq!(d.quantile(0.5), 3.0);
    assert_eq!(d.cdf(1.0), 0.25);
    assert_eq!(d.cdf(2.0), 0.5);
    assert_eq!(d.cdf(3.0), 0.75);
    assert_eq!(d.trimmed_mean(0.0, 1.0), 2.0);
    assert_eq!(d.total_compressions(), 1);
    // The buffer merges when one short of the capacity (16 for compression 1).
    let mut small = digest(1);
    for i in 0..15 {
        small.add(f64::from(i), 1).unwrap();
    }
    assert_eq!((small.merged_nodes(), small.unmerged_nodes()), (0, 15));
    small.add(15.0, 1).unwrap();
    assert_eq!(small.unmerged_nodes(), 1);
    assert_eq!(small.total_compressions(), 1);
    assert!(small.merged_nodes() < 15);
}

#[test]
fn the_sort_is_t_digest_c_s_quicksort() {
    // Equal means with different weights: t-digest-c's partition leaves them in this
    // order (worked through by hand: pivot index 2 swapped to the end, Lomuto's scan
    // moves 1 and 0 left, the pivot lands at 2 with weight 3, the left pair is swapped).
    let mut means = [2.0, 1.0, 2.0, 0.0, 2.0];
    let mut weights = [1, 2, 3, 4, 5];
    sort_centroids(&mut means, &mut weights);
    assert_eq!(means, [0.0, 1.0, 2.0, 2.0, 2.0]);
    assert_eq!(weights, [4, 2, 3, 1, 5]);
    let mut means: Vec<f64> = (0..1000).map(|i| f64::from((i * 7919) % 1000)).collect();
    let mut weights: Vec<i64> = (0..1000).collect();
    sort_centroids(&mut means, &mut weights);
    assert!(means.windows(2).all(|w| w[0] <= w[1]));
    assert!(means
        .iter()
        .zip(&weights)
        .all(|(&m, &w)| m == f64::from(((w * 7919) % 1000) as i32)));
}

#[test]
fn a_copy_is_equal_and_independent() {
    let mut d = digest(7);
    for v in [3.0, 1.0, 2.0] {
        d.add(v, 1).unwrap();
    }
    let mut copy = d.try_clone().unwrap();
    assert_eq!(copy, d);
    assert_eq!(copy.capacity(), d.capacity());
    copy.add(9.0, 1).unwrap();
    assert_ne!(copy, d);
    assert_eq!(d.size(), 3);
}

/// t-digest-c's `td_qsort`, transcribed as written (recursive), for comparison.
fn reference_qsort(means: &mut [f64], weights: &mut [i64], start: usize, end: usize) {
    if start >= end {
        return;
    }
    if end - start == 1 {
        if means[start] > means[end] {
            means.swap(start, end);
            weights.swap(start, end);
        }
        return;
    }
    let pivot_idx = (end + start) / 2;
    let pivot = means[pivot_idx];
    means.swap(pivot_idx, end);
    weights.swap(pivot_idx, end);
    let mut i = start as isize - 1;
    for j in start..end {
        if means[j] < pivot {
            i += 1;
            means.swap(i as usize, j);
            weights.swap(i as usize, j);
        }
    }
    let p = (i + 1) as usize;
    means.swap(p, end);
    weights.swap(p, end);
    if p > start {
        reference_qsort(means, weights, start, p - 1);
    }
    reference_qsort(means, weights, p + 1, end);
}

proptest! {
    #[test]
    fn the_sort_is_the_reference_sort(pairs in proptest::collection::vec((0u8..4, 1i64..5), 0..300)) {
        let mut means: Vec<f64> = pairs.iter().map(|p| f64::from(p.0)).collect();
        let mut weights: Vec<i64> = pairs.iter().map(|p| p.1).collect();
        let (mut m2, mut w2) = (means.clone(), weights.clone());
        sort_centroids(&mut means, &mut weights);
        if !m2.is_empty() {
            let end = m2.len() - 1;
            reference_qsort(&mut m2, &mut w2, 0, end);
        }
        prop_assert_eq!(weights, w2);
        prop_assert_eq!(means, m2);
    }
}

#[test]
fn c_conversions() {
    assert_eq!(c_to_i64(f64::NAN), i64::MIN);
    assert_eq!(c_to_i64(1e19), i64::MIN);
    assert_eq!(c_to_i64(-2.9), -2);
    assert_eq!(half_round_down(2.5), 2.0);
    assert_eq!(half_round_down(2.51), 3.0);
    assert_eq!(half_round_down(-2.5), -2.0);
    assert_eq!(half_round_down(-2.6), -3.0);
    assert_eq!(half_round_down(f64::INFINITY), f64::INFINITY);
}

/// t-digest-c's `_tdigest_long_long_add_safe` as compiled for x86-64 (its `LLONG_MAX - b`
/// wraps for a negative `b`), and a total that rounds to 2^63 (`i64::MIN` after C's
/// conversion), after which an add still fits, as in RedisBloom (`ADD d 5` is OK there).
#[test]
fn weight_checks_and_conversions_are_t_digest_c_s() {
    assert!(add_fits(i64::MAX - 1, 1));
    assert!(!add_fits(i64::MAX, 1));
    assert!(add_fits(-1, i64::MIN));
    assert!(add_fits(1, i64::MIN));
    assert!(add_fits(5, -3));
    let mut d = digest(100);
    d.add(1.0, 1 << 62).unwrap();
    d.add(2.0, (1 << 62) - 1).unwrap();
    // The exact total is 2^63 - 1; as a double it is 2^63, which C converts to i64::MIN.
    d.compress().unwrap();
    assert_eq!(d.merged_weight(), i64::MIN);
    d.add(5.0, 1).unwrap();
    assert_eq!(d.size(), i64::MIN + 1);
    // The buffer can no longer merge (a total weight below 1): each merge only sorts it.
    assert!(!d.merge_empties_buffer());
    assert_eq!(d.quantile(0.5), 1.0);
    assert_eq!(d.unmerged_nodes(), 1);
}

#[test]
fn overflow_is_refused_and_changes_nothing() {
    let mut d = digest(5);
    d.add(1.0, i64::MAX - 1).unwrap();
    let before = d.clone();
    assert_eq!(d.add(2.0, 2), Err(TDigestError::Overflow));
    assert_eq!(d, before);
    d.add(2.0, 1).unwrap();
}

#[test]
fn loader_refuses_only_what_breaks_the_layout() {
    let mut d = digest(5);
    for v in [1.0, 2.0, 2.0, 3.0, 10.0] {
        d.add(v, 1).unwrap();
    }
    d.compress().unwrap();
    let good = saved(&d);
    assert_eq!(
        load_tdigest(&mut good.clone(), TDIGEST_ENCODING).unwrap(),
        d
    );
    assert!(load_tdigest(&mut good.clone(), 1).is_none());
    let n = d.merged_nodes();
    let edit = |i: usize, f: Field| {
        let mut g = good.clone();
        g.fields[i] = f;
        load_tdigest(&mut g, TDIGEST_ENCODING)
    };
    // Refused: what would size the arrays wrongly.
    assert!(edit(0, Field::Double(f64::NAN)).is_none());
    assert!(edit(0, Field::Double(5.5)).is_none());
    assert!(edit(0, Field::Double(0.0)).is_none());
    assert!(edit(3, Field::Unsigned(41)).is_none());
    assert!(edit(4, Field::Unsigned(41)).is_none());
    assert!(edit(5, Field::Unsigned(40 - n as u64 + 1)).is_none());
    let mut short = good.clone();
    short.fields.pop();
    assert!(load_tdigest(&mut short, TDIGEST_ENCODING).is_none());
    // Loaded as RedisBloom loads them (it writes them all).
    let zero_nodes = edit(5, Field::Unsigned(2)).unwrap();
    assert_eq!(zero_nodes.unmerged_nodes(), 2);
    assert_eq!(&zero_nodes.centroids().0[n..], &[0.0, 0.0]);
    assert_eq!(&zero_nodes.centroids().1[n..], &[0, 0]);
    assert_eq!(edit(7, Field::Double(4.0)).unwrap().merged_weight(), 4);
    assert_eq!(
        edit(7, Field::Double(9_223_372_036_854_775_808.0))
            .unwrap()
            .merged_weight(),
        i64::MIN
    );
    assert_eq!(
        edit(7, Field::Double(-9_223_372_036_854_775_808.0))
            .unwrap()
            .merged_weight(),
        i64::MIN
    );
    assert!(edit(9, Field::Double(f64::NAN)).is_some());
    assert!(edit(9 + n - 1, Field::Double(f64::INFINITY)).is_some());
    assert!(edit(9, Field::Double(100.0)).is_some(), "unsorted");
    assert_eq!(edit(9 + n, Field::Double(0.0)).unwrap().centroids().1[0], 0);
    assert_eq!(
        edit(9 + n, Field::Double(f64::NAN)).unwrap().centroids().1[0],
        i64::MIN
    );
    assert!(edit(1, Field::Double(100.0)).is_some(), "min above max");
    // Past 2^53 the saved weights are rounded doubles: they load as they are.
    let mut big = digest(5);
    big.add(1.0, (1 << 60) + 1).unwrap();
    big.add(2.0, (1 << 58) + 3).unwrap();
    big.compress().unwrap();
    let loaded = load_tdigest(&mut saved(&big), TDIGEST_ENCODING).unwrap();
    assert_eq!(loaded.size(), big.size());
}

/// Every query and write on a digest loaded from odd but loadable fields: no panic.
fn exercise(mut d: TDigest) {
    let _ = d.clone().quantile(0.5);
    let _ = d.clone().quantiles_by_runs(&[0.0, 0.3, 1.0, 0.2]);
    let _ = d.clone().cdf(0.0);
    let _ = d.clone().trimmed_mean(0.1, 0.9);
    let _ = d.clone().ranks(&[-1.0, 0.0, 1.0, 1e300], false);
    let _ = d.clone().ranks(&[-1.0, 0.0, 1.0], true);
    let _ = d.clone().by_ranks(&[0, 1, 2, i64::MAX], false);
    let _ = d.clone().by_ranks(&[0, 1, 2, i64::MAX], true);
    let mut other = d.clone();
    let _ = d.merge_from(&mut other);
    for v in [1.0, -f64::MAX, f64::MAX] {
        let _ = d.add(v, 1);
    }
    let _ = d.compress();
    let _ = d.quantile(0.5);
}

proptest! {
    #[test]
    fn saved_digests_load_back_equal(values in proptest::collection::vec(-1e9f64..1e9, 0..400), c in 1i64..60) {
        let mut d = digest(c);
        for v in values {
            d.add(v, 1).unwrap();
        }
        let mut fields = saved(&d);
        let loaded = load_tdigest(&mut fields, TDIGEST_ENCODING).unwrap();
        let mut merged = d.clone();
        let _ = merged.compress();
        prop_assert_eq!(loaded, merged);
    }

    #[test]
    fn edited_streams_never_panic(values in proptest::collection::vec(-1e3f64..1e3, 0..80), edits in field_edits()) {
        let mut d = digest(3);
        for v in values {
            d.add(v, 1).unwrap();
        }
        let fields = apply_field_edits(&saved(&d), &edits);
        if let Some(loaded) = load_tdigest(&mut fields.clone(), TDIGEST_ENCODING) {
            exercise(loaded);
        }
    }

    #[test]
    fn random_streams_never_panic(raw in random_streams()) {
        if let Some(raw) = raw {
            let mut fields = random_fields(raw, 64);
            if let Some(d) = load_tdigest(&mut fields, TDIGEST_ENCODING) {
                exercise(d);
            }
        }
    }

    #[test]
    fn queries_stay_within_the_observed_range(values in proptest::collection::vec(-1e6f64..1e6, 2..300), q in 0f64..=1.0) {
        let mut d = digest(20);
        for &v in &values {
            d.add(v, 1).unwrap();
        }
        let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let x = d.quantile(q);
        prop_assert!(x >= lo && x <= hi, "{} not in [{}, {}]", x, lo, hi);
        let p = d.cdf(x);
        prop_assert!((0.0..=1.0).contains(&p));
    }
}
