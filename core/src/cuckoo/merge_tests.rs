use super::*;
use crate::cuckoo::{CuckooHash, CuckooParams, MAX_SUB_FILTERS};

fn filter(capacity: u64, expansion: u16) -> CuckooFilter {
    let params = CuckooParams {
        capacity,
        expansion,
        ..Default::default()
    };
    CuckooFilter::new(params, u64::MAX).unwrap()
}

fn hash(i: u32) -> CuckooHash {
    CuckooHash::new(&i.to_le_bytes())
}

fn filled(capacity: u64, expansion: u16, items: impl IntoIterator<Item = u32>) -> CuckooFilter {
    let mut f = filter(capacity, expansion);
    for i in items {
        f.insert(&hash(i), u64::MAX).unwrap();
    }
    f
}

fn merge(operands: &[&CuckooFilter]) -> Result<CuckooFilter, MergeError> {
    CuckooFilter::merge(operands, u64::MAX, MAX_SUB_FILTERS)
}

/// Every order of empty, one-item and full sources in a merge of three, over sub-filters
/// of one page and of several: every item any source holds is held, the counts add.
#[test]
fn merges_with_empty_full_and_one_item_sources_in_every_position() {
    use crate::testing::{source_items, source_orders};
    for capacity in [100u32, 5_000] {
        for kinds in source_orders() {
            let sets: Vec<_> = (0..3u32)
                .map(|p| source_items(kinds[p as usize], p, capacity))
                .collect();
            let filters: Vec<CuckooFilter> = sets
                .iter()
                .map(|set| filled(u64::from(capacity), 1, set.clone()))
                .collect();
            let refs: Vec<&CuckooFilter> = filters.iter().collect();
            let merged = merge(&refs).unwrap();
            let context = format!("{kinds:?}, capacity {capacity}");
            let sum: u64 = filters.iter().map(CuckooFilter::num_items).sum();
            assert_eq!(merged.num_items(), sum, "{context}");
            for i in sets.iter().flat_map(Clone::clone) {
                assert!(merged.contains(&hash(i)), "{context}: {i}");
            }
        }
    }
}

#[test]
fn every_fingerprint_is_kept_and_counts_add() {
    let a = filled(1000, 1, 0..400);
    let b = filled(1000, 1, (300..700).chain(0..5));
    let merged = merge(&[&a, &b]).unwrap();
    assert!((0..700).all(|i| merged.contains(&hash(i))));
    assert_eq!(merged.num_items(), 805);
    for i in 0..800 {
        assert!(merged.count(&hash(i)) >= a.count(&hash(i)) + b.count(&hash(i)));
    }
    let slots: usize = merged
        .sub_filters()
        .iter()
        .map(|s| s.data().iter().filter(|&&b| b != 0).count())
        .sum();
    assert_eq!(slots, 805);
    // A deletion takes one copy away, as CF.DEL does.
    let mut m = merged;
    assert!(m.delete(&hash(3)));
    assert!(m.delete(&hash(3)));
    assert!(!m.delete(&hash(3)));
}

#[test]
fn the_union_grows_as_adds_would() {
    let a = filled(500, 1, 0..350);
    let b = filled(500, 1, 1_000..1_350);
    assert_eq!((a.num_filters(), b.num_filters()), (1, 1));
    let merged = merge(&[&a, &b]).unwrap();
    assert!(merged.num_filters() >= 2);
    assert!((0..350)
        .chain(1_000..1_350)
        .all(|i| merged.contains(&hash(i))));
    // Refused when growth is not allowed, or not large enough for the fingerprints.
    assert_eq!(
        CuckooFilter::merge(&[&a, &b], u64::MAX, 1),
        Err(MergeError::MaxFilters)
    );
    assert_eq!(
        CuckooFilter::merge(&[&a, &b], a.data_bytes(), MAX_SUB_FILTERS),
        Err(MergeError::TooLarge)
    );
    let a2 = filled(500, 2, 0..350);
    let b2 = filled(500, 2, 1_000..1_350);
    assert_eq!(merge(&[&a2, &b2]), Err(MergeError::NoSpace));
    let a0 = filled(500, 0, 0..350);
    let b0 = filled(500, 0, 1_000..1_350);
    assert_eq!(merge(&[&a0, &b0]), Err(MergeError::NoSpace));
}

#[test]
fn fingerprints_of_grown_sub_filters_find_their_buckets() {
    // Expansion 2: sub-filter i has 2^i times the buckets; a fingerprint of sub-filter i
    // may go into sub-filters 0..=i of the result, never beyond. Merged into an empty
    // filter, every one finds a place: the result grows as the source did.
    let a = filled(64, 2, 0..300);
    assert!(a.num_filters() >= 3);
    let merged = merge(&[&filter(64, 2), &a]).unwrap();
    assert!((0..300).all(|i| merged.contains(&hash(i))));
    assert_eq!(merged.num_items(), a.num_items());
    assert!(merged.num_filters() <= a.num_filters());
}

#[test]
fn other_shapes_are_refused() {
    let base = filter(1000, 1);
    let other_buckets = filter(5000, 1);
    let other_expansion = filter(1000, 2);
    let other_size = CuckooFilter::new(
        CuckooParams {
            capacity: 1000,
            bucket_size: 4,
            ..Default::default()
        },
        u64::MAX,
    )
    .unwrap();
    let other_iterations = CuckooFilter::new(
        CuckooParams {
            capacity: 1000,
            max_iterations: 50,
            ..Default::default()
        },
        u64::MAX,
    )
    .unwrap();
    for other in [other_buckets, other_expansion, other_size, other_iterations] {
        assert_eq!(
            merge(&[&base, &base, &other]),
            Err(MergeError::ShapeDiffers(2))
        );
    }
    assert_eq!(merge(&[]), Err(MergeError::NoOperands));
}

/// A sub-filter of 4 GiB (allocated zeroed: never touched) is refused before anything is
/// copied: its lookups truncate offsets to 32 bits, so its fingerprints' buckets are unknown.
#[test]
fn a_sub_filter_of_4_gib_is_refused() {
    let params = CuckooParams {
        capacity: 1 << 32,
        bucket_size: 1,
        ..Default::default()
    };
    let Ok(huge) = CuckooFilter::new(params, u64::MAX) else {
        return; // no address space for it here
    };
    assert_eq!(huge.data_bytes(), 1 << 32);
    let small = filter(1000, 1);
    assert_eq!(merge(&[&small, &huge]), Err(MergeError::ShapeDiffers(1)));
    assert_eq!(merge(&[&huge, &huge]), Err(MergeError::HugeSubFilter));
}

proptest::proptest! {
    // A fixed seed, and sources that are empty or of one item on purpose.
    #![proptest_config(crate::testing::fixed_config("cuckoo merges", 256))]
    /// No false negatives and the counts add, whatever is merged, when it fits.
    #[test]
    fn merged_filters_hold_every_item(
        sets in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(Vec::new()),
                proptest::collection::vec(0u32..3_000, 1..2),
                proptest::collection::vec(0u32..3_000, 0..300),
            ],
            1..5,
        ),
        capacity in 4u64..300,
        expansion in 0u16..3,
    ) {
        let filters: Vec<CuckooFilter> = sets.iter().map(|set| {
            let mut f = filter(capacity, expansion);
            for &i in set {
                let _ = f.insert(&hash(i), u64::MAX);
            }
            f
        }).collect();
        let refs: Vec<&CuckooFilter> = filters.iter().collect();
        match merge(&refs) {
            Ok(merged) => {
                let sum: u64 = filters.iter().map(CuckooFilter::num_items).sum();
                proptest::prop_assert_eq!(merged.num_items(), sum);
                for f in &filters {
                    for i in 0..3_000u32 {
                        if f.contains(&hash(i)) {
                            proptest::prop_assert!(merged.contains(&hash(i)));
                        }
                    }
                }
            }
            Err(e) => proptest::prop_assert!(matches!(e, MergeError::NoSpace)),
        }
    }
}
