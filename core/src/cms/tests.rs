//! The sketch against values computed by hand from RedisBloom's definitions, and the RDB
//! codec against hostile streams.

use super::rdb::{load_cms, save_cms, CMS_ENCODING};
use super::*;
use crate::rdb::{Field, Fields};
use crate::testing::{random_fields, random_streams};
use proptest::prelude::*;

/// An applied increment's reply.
fn est(n: u64) -> Increment {
    Increment::Estimate(n)
}

fn sketch(width: u64, depth: u64) -> CountMinSketch {
    CountMinSketch::new(width, depth, 4, u64::MAX).unwrap()
}

/// Counter `cell` of a sketch, read from its stored bytes.
fn counter(cms: &CountMinSketch, cell: usize) -> u32 {
    let b = &cms.counter_bytes_le()[cell * 4..cell * 4 + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[test]
fn each_row_hashes_with_its_index_as_the_seed() {
    let mut cms = sketch(1000, 5);
    assert_eq!(cms.incr_by(b"foo", 7), est(7));
    for row in 0..5u64 {
        let col = u64::from(murmur2::murmur2(b"foo", row as u32)) % 1000;
        assert_eq!(counter(&cms, (row * 1000 + col) as usize), 7, "row {row}");
    }
    let nonzero = (0..5000).filter(|&c| counter(&cms, c) != 0).count();
    assert_eq!(nonzero, 5);
    assert_eq!(cms.query(b"foo"), 7);
    assert_eq!(cms.query(b"bar"), 0);
    assert_eq!(cms.count(), 7);
}

#[test]
fn known_murmur2_values() {
    // MurmurHash2 (Appleby's reference), seeds 0 and 1, as RedisBloom's deps/murmur2.
    assert_eq!(murmur2::murmur2(b"", 0), 0);
    assert_eq!(murmur2::murmur2(b"", 1), 0x5bd1_5e36);
    assert_eq!(crate::hash::murmur2_32(b"", 1), 0x5bd1_5e36);
}

#[test]
fn the_estimate_is_the_smallest_counter() {
    // Width 1: every item shares each row's only counter.
    let mut cms = sketch(1, 3);
    cms.incr_by(b"a", 2);
    assert_eq!(cms.incr_by(b"b", 3), est(5));
    assert_eq!(cms.query(b"zzz"), 5);
}

#[test]
fn counters_saturate_and_the_count_wraps() {
    let mut cms = sketch(2, 2);
    let max = u64::from(u32::MAX);
    assert_eq!(cms.incr_by(b"x", i64::from(u32::MAX) - 1), est(max - 1));
    assert_eq!(cms.incr_by(b"x", 5), Increment::Overflow);
    assert_eq!(cms.query(b"x"), max, "applied, saturated");
    assert_eq!(cms.count(), max + 4);
    assert_eq!(cms.incr_by(b"x", 0), Increment::Overflow);
    // An increment of 2^32 or more saturates at once (RedisBloom compares the wrapped
    // sum with the increment).
    let mut big = sketch(2, 2);
    assert_eq!(big.incr_by(b"x", 1 << 32), Increment::Overflow);
    assert_eq!(big.query(b"x"), max);
    big.incr_by(b"y", i64::MAX);
    big.incr_by(b"y", i64::MAX);
    big.incr_by(b"y", 4);
    assert_eq!(
        big.count(),
        (1u64 << 32).wrapping_add(u64::MAX - 1).wrapping_add(4)
    );
}

#[test]
fn dimensions_are_checked_as_redisbloom_does() {
    assert_eq!(
        CountMinSketch::new(0, 5, 4, u64::MAX),
        Err(CmsError::InvalidDimensions)
    );
    assert_eq!(
        CountMinSketch::new(5, 0, 4, u64::MAX),
        Err(CmsError::InvalidDimensions)
    );
    assert_eq!(
        CountMinSketch::new(i64::MAX as u64, 2, 4, u64::MAX),
        Err(CmsError::InvalidDimensions)
    );
    assert_eq!(
        CountMinSketch::new(1 << 62, 1, 4, u64::MAX),
        Err(CmsError::Overflow)
    );
    // 10^9 × 10^9 counters: RedisBloom asks the allocator for 4·10^18 bytes and aborts.
    assert_eq!(
        CountMinSketch::new(1_000_000_000, 1_000_000_000, 4, 4 << 30),
        Err(CmsError::TooLarge)
    );
    // Without a ceiling the allocator refuses, and that is an error, not an abort.
    assert_eq!(
        CountMinSketch::new(1_000_000_000, 1_000_000_000, 4, u64::MAX),
        Err(CmsError::OutOfMemory)
    );
    // The ceiling counts what MEMORY USAGE reports: 8 + 8 bytes per counter.
    assert!(CountMinSketch::new(100, 10, 4, 8008).is_ok());
    assert_eq!(
        CountMinSketch::new(100, 10, 4, 8007),
        Err(CmsError::TooLarge)
    );
    let cms = sketch(100, 10);
    assert_eq!(cms.mem_usage(), 8008);
    assert_eq!(cms.allocated_bytes(), 4000);
}

#[test]
fn dims_from_prob_match_redisbloom() {
    // RedisBloom 2.4.20: CMS.INITBYPROB k 0.001 0.01 → width 2000, depth 7.
    assert_eq!(dims_from_prob(0.001, 0.01), Some((2000, 7)));
    assert_eq!(dims_from_prob(0.01, 0.001), Some((200, 10)));
    assert_eq!(dims_from_prob(0.5, 0.5), Some((4, 1)));
    // A probability that rounds to 1 in single precision gives depth 0, one that rounds
    // to 0 an infinite depth; a tiny error a width beyond 2^63: all refused.
    assert_eq!(dims_from_prob(0.1, 0.999_999_999), None);
    assert_eq!(dims_from_prob(0.1, 1e-50), None);
    assert_eq!(dims_from_prob(1e-300, 0.5), None);
    assert_eq!(dims_from_prob(f64::MIN_POSITIVE, 0.5), None);
}

#[test]
fn merge_weighs_and_checks_like_redisbloom() {
    let mut a = sketch(10, 3);
    let mut b = sketch(10, 3);
    a.incr_by(b"x", 3);
    b.incr_by(b"x", 2);
    b.incr_by(b"y", 10);
    let mut dest = sketch(10, 3);
    dest.incr_by(b"old", 99);
    dest.merge(&[(&a, 2), (&b, 1)]).unwrap().apply(&mut dest);
    assert_eq!(dest.query(b"x"), 8);
    assert_eq!(dest.query(b"y"), b.query(b"y"));
    assert_eq!(dest.count(), 6 + 12);
    assert_eq!(dest.query(b"old"), dest.query(b"never-added"));
    // A negative weight may cancel, but no counter may end below 0.
    let mut again = dest.clone();
    let merged = again.merge(&[(&a, 1), (&a, -1)]).unwrap();
    merged.apply(&mut again);
    assert_eq!(again.query(b"x"), 0);
    assert_eq!(again.count(), 0);
    assert_eq!(
        dest.merge(&[(&a, -1)]).unwrap_err(),
        CmsError::MergeOverflow
    );
    // Beyond u32::MAX, and products beyond i64.
    assert_eq!(
        dest.merge(&[(&a, i64::from(u32::MAX))]).unwrap_err(),
        CmsError::MergeOverflow
    );
    assert_eq!(
        dest.merge(&[(&a, i64::MAX)]).unwrap_err(),
        CmsError::MergeOverflow
    );
    let other = sketch(11, 3);
    assert_eq!(
        dest.merge(&[(&other, 1)]).unwrap_err(),
        CmsError::DimensionsDiffer
    );
    // Merging a sketch into itself (in place) doubles it.
    let before = dest.clone();
    let merged = dest.merge(&[(&before, 2)]).unwrap();
    merged.apply(&mut dest);
    assert_eq!(dest.query(b"x"), 16);
    assert_eq!(dest.count(), 36);
}

#[test]
fn merged_count_checks_the_exact_product() {
    // The count is unsigned; its product with the weight must fit an i64.
    let mut a = sketch(2, 1);
    a.incr_by(b"q", 1 << 62);
    a.incr_by(b"q", 1 << 62); // count 2^63: as an i64 it would be negative
    assert_eq!(a.merge(&[(&a, 1)]).unwrap_err(), CmsError::MergeOverflow);
    // Counters that cancel (both saturated) while the counts do not: a negative count.
    let mut big = sketch(2, 1);
    big.incr_by(b"q", 1 << 40);
    let mut small = sketch(2, 1);
    small.incr_by(b"q", 1 << 32);
    assert!(small.merge(&[(&big, 1), (&small, -1)]).is_ok());
    assert_eq!(
        small.merge(&[(&small, 1), (&big, -1)]).unwrap_err(),
        CmsError::MergeOverflow
    );
}

#[test]
fn rdb_fields_are_redisbloom_s() {
    let mut cms = sketch(3, 2);
    cms.incr_by(b"a", 1);
    let mut fields = Fields::default();
    save_cms(&cms, &mut fields);
    assert_eq!(
        fields.fields[..3],
        [Field::Unsigned(3), Field::Unsigned(2), Field::Unsigned(1)]
    );
    assert_eq!(
        fields.fields[3],
        Field::Buffer(cms.counter_bytes_le().to_vec())
    );
    assert_eq!(load_cms(&mut fields, CMS_ENCODING), Some(cms));
}

#[test]
fn loading_refuses_inconsistent_values() {
    let stream = |w: u64, d: u64, len: usize| Fields {
        fields: vec![
            Field::Unsigned(w),
            Field::Unsigned(d),
            Field::Unsigned(0),
            Field::Buffer(vec![0; len]),
        ],
        read_at: 0,
    };
    assert!(load_cms(&mut stream(3, 2, 24), 0).is_some());
    assert!(load_cms(&mut stream(3, 2, 24), 1).is_none());
    assert!(load_cms(&mut stream(3, 2, 23), 0).is_none());
    assert!(load_cms(&mut stream(3, 2, 25), 0).is_none());
    assert!(load_cms(&mut stream(0, 2, 0), 0).is_none());
    assert!(load_cms(&mut stream(2, 0, 0), 0).is_none());
    // width × depth × 4 wrapping to the buffer's length.
    assert!(load_cms(&mut stream(1 << 62, 1, 0), 0).is_none());
    assert!(load_cms(&mut stream(1 << 31, 1 << 31, 0), 0).is_none());
}

proptest! {
    #[test]
    fn random_streams_never_panic(raw in random_streams()) {
        if let Some(raw) = raw {
            let mut fields = random_fields(raw, 64);
            if let Some(cms) = load_cms(&mut fields, CMS_ENCODING) {
                let _ = cms.query(b"x");
            }
        }
    }

    #[test]
    fn estimates_never_undercount(items in proptest::collection::vec((0u8..50, 0u64..1000), 1..200)) {
        let mut cms = sketch(16, 3);
        let mut truth = std::collections::HashMap::new();
        for (item, by) in &items {
            cms.incr_by(&[*item], *by as i64);
            *truth.entry(*item).or_insert(0u64) += by;
        }
        for (item, count) in truth {
            prop_assert!(cms.query(&[item]) >= count);
        }
    }
}
