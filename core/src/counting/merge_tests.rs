use super::*;
use crate::hash::HashPair;

fn chain_of(items: &[(u32, u32)], capacity: u64) -> CountingChain {
    let mut chain = CountingChain::new(capacity, 0.01, 2, true, u64::MAX).unwrap();
    for &(item, times) in items {
        for _ in 0..times {
            chain.add(pair(item), u64::MAX);
        }
    }
    chain
}

fn pair(i: u32) -> HashPair {
    HashPair::wide(&i.to_le_bytes())
}

/// Every order of empty, one-item and full sources in a merge of three, over counter
/// arrays of one page and of several: the union holds every item any source holds, with
/// at least the sum of the counts; the intersection every item all hold.
#[test]
fn merges_with_empty_full_and_one_item_sources_in_every_position() {
    use crate::testing::{source_items, source_orders};
    for capacity in [50u32, 5_000] {
        for kinds in source_orders() {
            let sets: Vec<Vec<(u32, u32)>> = (0..3u32)
                .map(|p| {
                    source_items(kinds[p as usize], p, capacity)
                        .map(|i| (i, 1))
                        .collect()
                })
                .collect();
            let chains: Vec<CountingChain> = sets
                .iter()
                .map(|set| chain_of(set, u64::from(capacity)))
                .collect();
            let refs: Vec<&CountingChain> = chains.iter().collect();
            let union = CountingChain::merge(&refs, MergeOp::Union, u64::MAX).unwrap();
            assert!(union.is_valid());
            let context = format!("{kinds:?}, capacity {capacity}");
            for &(i, _) in sets.iter().flatten() {
                let sum: u64 = chains.iter().map(|c| c.count(pair(i))).sum();
                assert!(union.count(pair(i)) >= sum.min(15), "{context}");
            }
            let both = CountingChain::merge(&refs, MergeOp::Intersect, u64::MAX).unwrap();
            for &(i, _) in &sets[0] {
                if chains.iter().all(|c| c.contains(pair(i))) {
                    assert!(both.contains(pair(i)), "{context}");
                }
            }
        }
    }
}

#[test]
fn counts_add_and_the_result_is_valid() {
    let a = chain_of(&[(1, 2), (2, 1), (3, 4)], 1000);
    let b = chain_of(&[(1, 3), (4, 1)], 1000);
    let merged = CountingChain::merge(&[&a, &b], MergeOp::Union, u64::MAX).unwrap();
    assert!(merged.is_valid());
    assert_eq!(merged.items(), a.items() + b.items());
    for (item, want) in [(1, 5), (2, 1), (3, 4), (4, 1), (5, 0)] {
        assert!(merged.count(pair(item)) >= want, "item {item}");
        assert_eq!(merged.count(pair(item)), want, "item {item}");
    }
    // The delete rule still holds: the copies can be taken away one by one.
    let mut m = merged;
    for _ in 0..5 {
        assert!(m.delete(pair(1)));
    }
    assert!(!m.contains(pair(1)) || m.count(pair(1)) == 0);
    assert!(m.contains(pair(3)));
}

#[test]
fn counters_saturate_and_stay_saturated() {
    let a = chain_of(&[(7, 10)], 1000);
    let b = chain_of(&[(7, 9)], 1000);
    let merged = CountingChain::merge(&[&a, &b], MergeOp::Union, u64::MAX).unwrap();
    assert_eq!(merged.count(pair(7)), u64::from(COUNTER_MAX));
    assert!(merged.has_saturated_counter());
    let mut m = merged;
    assert!(m.delete(pair(7)));
    assert_eq!(m.count(pair(7)), u64::from(COUNTER_MAX));
}

#[test]
fn links_are_merged_pairwise_and_the_longest_sets_the_count() {
    let few: Vec<(u32, u32)> = (0..40).map(|i| (i, 1)).collect();
    let many: Vec<(u32, u32)> = (1_000..1_400).map(|i| (i, 1)).collect();
    let one = chain_of(&few, 100);
    let three = chain_of(&many, 100);
    assert_eq!((one.links().len(), three.links().len()), (1, 3));
    let merged = CountingChain::merge(&[&one, &three], MergeOp::Union, u64::MAX).unwrap();
    assert!(merged.is_valid());
    assert_eq!(merged.links().len(), 3);
    assert_eq!(merged.links()[2], three.links()[2]);
    assert!((0..40)
        .chain(1_000..1_400)
        .all(|i| merged.contains(pair(i))));
}

#[test]
fn intersection_takes_the_smaller_counter() {
    let a = chain_of(&[(1, 3), (2, 1), (3, 2)], 1000);
    let b = chain_of(&[(1, 2), (3, 5), (4, 1)], 1000);
    let both = CountingChain::merge(&[&a, &b], MergeOp::Intersect, u64::MAX).unwrap();
    assert!(both.is_valid());
    assert_eq!(both.count(pair(1)), 2);
    assert_eq!(both.count(pair(3)), 2);
    assert!(both.items() <= 4);
    let grown: Vec<(u32, u32)> = (0..300).map(|i| (i, 1)).collect();
    let grown = chain_of(&grown, 1000 / 10);
    let a100 = chain_of(&[(1, 1)], 100);
    assert_eq!(
        CountingChain::merge(&[&a100, &grown], MergeOp::Intersect, u64::MAX),
        Err(MergeError::MultiLink(1))
    );
}

#[test]
fn other_shapes_are_refused() {
    let base = CountingChain::new(1000, 0.01, 2, true, u64::MAX).unwrap();
    for other in [
        CountingChain::new(1000, 0.02, 2, true, u64::MAX).unwrap(),
        CountingChain::new(999, 0.01, 2, true, u64::MAX).unwrap(),
        CountingChain::new(1000, 0.01, 3, true, u64::MAX).unwrap(),
        CountingChain::new(1000, 0.01, 2, false, u64::MAX).unwrap(),
    ] {
        assert_eq!(
            CountingChain::merge(&[&base, &other], MergeOp::Union, u64::MAX),
            Err(MergeError::ShapeDiffers(1))
        );
    }
    assert_eq!(
        CountingChain::merge(&[&base], MergeOp::Union, base.mem_usage() - 1),
        Err(MergeError::TooLarge)
    );
}

proptest::proptest! {
    // A fixed seed, and sources that are empty or of one item on purpose.
    #![proptest_config(crate::testing::fixed_config("counting merges", 256))]
    /// Union: CBF.COUNT of the result is at least the sum of the operands' counts (no
    /// counter saturating with these multiplicities), and every item any operand holds is
    /// held; the result is a valid filter.
    #[test]
    fn union_counts_at_least_the_sum(
        sets in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(Vec::new()),
                proptest::collection::vec((0u32..500, 1u32..3), 1..2),
                proptest::collection::vec((0u32..500, 1u32..3), 0..150),
            ],
            1..5,
        ),
        capacity in 1u64..100,
    ) {
        let chains: Vec<CountingChain> = sets.iter().map(|s| chain_of(s, capacity)).collect();
        let refs: Vec<&CountingChain> = chains.iter().collect();
        let merged = CountingChain::merge(&refs, MergeOp::Union, u64::MAX).unwrap();
        proptest::prop_assert!(merged.is_valid());
        for i in 0..500u32 {
            let sum: u64 = chains.iter().map(|c| c.count(pair(i))).sum();
            if !merged.has_saturated_counter() {
                proptest::prop_assert!(merged.count(pair(i)) >= sum);
            }
            if sum > 0 {
                proptest::prop_assert!(merged.contains(pair(i)));
            }
        }
    }
}
