use super::*;
use crate::bloom::AddOutcome;
use crate::testing::{source_items, source_orders};

fn chain_of(items: impl IntoIterator<Item = u32>, capacity: u64, blocked: bool) -> Chain {
    let mut chain = Chain::with_layout(capacity, 0.01, 2, true, blocked, u64::MAX).unwrap();
    for i in items {
        let pair = chain.hash(&i.to_le_bytes());
        assert_ne!(
            chain.add(pair, u64::MAX),
            AddOutcome::GrowFailed(crate::bloom::LinkError::TooLarge)
        );
    }
    chain
}

fn holds(chain: &Chain, i: u32) -> bool {
    chain.contains(chain.hash(&i.to_le_bytes()))
}

/// The false-positive rate `redbloom inspect` estimates: 1 − Π(1 − fill^k).
fn estimated_fp(chain: &Chain) -> f64 {
    let miss: f64 = chain
        .links()
        .iter()
        .map(|l| 1.0 - (count_ones(l.data()) as f64 / l.bits() as f64).powi(l.hashes() as i32))
        .product();
    1.0 - miss
}

/// Every order of empty, one-item and full sources in a merge of three (`BF.MERGE m 3 a b
/// c` with `b` empty and `c` holding `y` answers `y`), over links of one page and of
/// several pages, in both layouts: the union holds every item any source holds, the
/// intersection of single links every item all hold.
#[test]
fn merges_with_empty_full_and_one_item_sources_in_every_position() {
    for capacity in [50u32, 20_000] {
        for blocked in [false, true] {
            for kinds in source_orders() {
                let sets: Vec<_> = (0..3u32)
                    .map(|p| source_items(kinds[p as usize], p, capacity))
                    .collect();
                let chains: Vec<Chain> = sets
                    .iter()
                    .map(|set| chain_of(set.clone(), u64::from(capacity), blocked))
                    .collect();
                let one_page = chains[0].links()[0].data().len() <= 4096;
                assert_eq!(one_page, capacity == 50);
                let refs: Vec<&Chain> = chains.iter().collect();
                let union = Chain::merge(&refs, MergeOp::Union, u64::MAX).unwrap();
                let context = format!("{kinds:?}, capacity {capacity}, blocked {blocked}");
                for set in &sets {
                    assert!(set.clone().all(|i| holds(&union, i)), "{context}");
                }
                let both = Chain::merge(&refs, MergeOp::Intersect, u64::MAX).unwrap();
                for i in sets[0].clone() {
                    if chains.iter().all(|c| holds(c, i)) {
                        assert!(holds(&both, i), "{context}");
                    }
                }
            }
        }
    }
}

#[test]
fn union_of_two_10k_filters_holds_all_20k_at_the_estimated_rate() {
    for blocked in [false, true] {
        let a = chain_of(0..10_000, 10_000, blocked);
        let b = chain_of(10_000..20_000, 10_000, blocked);
        let merged = Chain::merge(&[&a, &b], MergeOp::Union, u64::MAX).unwrap();
        assert!((0..20_000).all(|i| holds(&merged, i)), "blocked {blocked}");
        assert_eq!(merged.links().len(), 1);
        // Disjoint sets: the fill estimate is close to the true 20,000.
        let items = merged.items();
        assert!((19_700..=20_300).contains(&items), "{items}");
        let probes = 1_000_000u32..1_200_000;
        let fps = probes.clone().filter(|&i| holds(&merged, i)).count() as f64;
        let measured = fps / probes.len() as f64;
        let estimate = estimated_fp(&merged);
        assert!(
            measured <= 1.5 * estimate && measured >= estimate / 1.5,
            "blocked {blocked}: measured {measured}, estimated {estimate}"
        );
    }
}

#[test]
fn union_has_the_longest_links_and_exact_counts_where_one_holds_a_link() {
    let one = chain_of(0..50, 100, false);
    let three = chain_of(1_000..1_600, 100, false);
    assert_eq!((one.links().len(), three.links().len()), (1, 3));
    let merged = Chain::merge(&[&one, &three], MergeOp::Union, u64::MAX).unwrap();
    assert_eq!(merged.links().len(), 3);
    assert!((0..50).chain(1_000..1_600).all(|i| holds(&merged, i)));
    // Links 1 and 2 only the second filter has: copied, with its counts.
    for i in 1..3 {
        assert_eq!(merged.links()[i], three.links()[i]);
    }
    let link0 = merged.links()[0].items();
    assert!((100..=150).contains(&link0), "{link0}");
    assert_eq!(
        merged.items(),
        link0 + three.links()[1].items() + three.links()[2].items()
    );
    // The OR itself, byte for byte.
    let or: Vec<u8> = one.links()[0]
        .data()
        .iter()
        .zip(three.links()[0].data())
        .map(|(x, y)| x | y)
        .collect();
    assert_eq!(merged.links()[0].data(), &or[..]);
    // The operands are untouched, the merged filter keeps growing as any other.
    let mut grown = merged.clone();
    for i in 5_000..8_000 {
        grown.add(grown.hash(&u32::to_le_bytes(i)), u64::MAX);
    }
    assert!(grown.links().len() > 3);
}

#[test]
fn the_union_of_overlapping_filters_is_estimated_from_its_fill() {
    let a = chain_of(0..6_000, 20_000, false);
    let b = chain_of(3_000..9_000, 20_000, false);
    let merged = Chain::merge(&[&a, &b], MergeOp::Union, u64::MAX).unwrap();
    let items = merged.items();
    assert!((8_800..=9_200).contains(&items), "{items}");
}

#[test]
fn intersection_holds_the_common_items() {
    let a = chain_of(0..3_000, 10_000, false);
    let b = chain_of(2_000..5_000, 10_000, false);
    let both = Chain::merge(&[&a, &b], MergeOp::Intersect, u64::MAX).unwrap();
    assert!((2_000..3_000).all(|i| holds(&both, i)));
    let strays = (0..2_000).chain(3_000..5_000).filter(|&i| holds(&both, i));
    assert!(strays.count() < 100);
    let and: Vec<u8> = a.links()[0]
        .data()
        .iter()
        .zip(b.links()[0].data())
        .map(|(x, y)| x & y)
        .collect();
    assert_eq!(both.links()[0].data(), &and[..]);
    assert!(both.items() <= 3_000);
    let scaled = chain_of(0..30_000, 10_000, false);
    assert_eq!(
        Chain::merge(&[&a, &scaled], MergeOp::Intersect, u64::MAX),
        Err(MergeError::MultiLink(1))
    );
}

#[test]
fn shapes_that_differ_are_refused_naming_the_first() {
    let base = Chain::new(1000, 0.01, 2, true, u64::MAX).unwrap();
    let others = [
        Chain::new(1000, 0.001, 2, true, u64::MAX).unwrap(),
        Chain::new(2000, 0.01, 2, true, u64::MAX).unwrap(),
        Chain::new(1000, 0.01, 4, true, u64::MAX).unwrap(),
        Chain::new(1000, 0.01, 2, false, u64::MAX).unwrap(),
        Chain::with_layout(1000, 0.01, 2, true, true, u64::MAX).unwrap(),
    ];
    for other in &others {
        assert_eq!(
            Chain::merge(&[&base, &base, other, &base], MergeOp::Union, u64::MAX),
            Err(MergeError::ShapeDiffers(2))
        );
    }
    assert_eq!(
        Chain::merge(&[], MergeOp::Union, u64::MAX),
        Err(MergeError::NoOperands)
    );
}

#[test]
fn the_ceiling_applies_to_the_result() {
    let a = chain_of(0..10, 1000, false);
    let mem = a.mem_usage();
    assert_eq!(
        Chain::merge(&[&a, &a], MergeOp::Union, mem - 1),
        Err(MergeError::TooLarge)
    );
    assert!(Chain::merge(&[&a, &a], MergeOp::Union, mem).is_ok());
}

proptest::proptest! {
    // A fixed seed, and sources that are empty or of one item on purpose (the edge cases
    // of the page kernels), so a bug these cases reach is found on every run.
    #![proptest_config(crate::testing::fixed_config("bloom merges", 256))]
    /// No false negative, whatever the shapes: every item any operand holds, the union
    /// holds; every item all hold, the intersection holds; the result has the longest's
    /// links and a count between the largest operand's and the sum.
    #[test]
    fn merges_have_no_false_negatives(
        sets in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(Vec::new()),
                proptest::collection::vec(0u32..2_000, 1..2),
                proptest::collection::vec(0u32..2_000, 0..400),
            ],
            1..5,
        ),
        capacity in 1u64..200,
        growth in 1u32..4,
        scaling: bool,
        blocked: bool,
    ) {
        let chains: Vec<Chain> = sets.iter().map(|set| {
            let mut c = Chain::with_layout(capacity, 0.01, growth, scaling, blocked, u64::MAX).unwrap();
            for &i in set {
                c.add(c.hash(&i.to_le_bytes()), u64::MAX);
            }
            c
        }).collect();
        let refs: Vec<&Chain> = chains.iter().collect();
        let union = Chain::merge(&refs, MergeOp::Union, u64::MAX).unwrap();
        let longest = chains.iter().map(|c| c.links().len()).max().unwrap();
        proptest::prop_assert_eq!(union.links().len(), longest);
        for c in &chains {
            for i in 0..2_000u32 {
                if holds(c, i) {
                    proptest::prop_assert!(holds(&union, i));
                }
            }
        }
        let largest = chains.iter().map(Chain::items).max().unwrap();
        let sum: u64 = chains.iter().map(Chain::items).sum();
        proptest::prop_assert!(union.items() >= largest && union.items() <= sum);
        match Chain::merge(&refs, MergeOp::Intersect, u64::MAX) {
            Ok(both) => {
                for i in 0..2_000u32 {
                    if chains.iter().all(|c| holds(c, i)) {
                        proptest::prop_assert!(holds(&both, i));
                    }
                }
            }
            Err(e) => proptest::prop_assert!(matches!(e, MergeError::MultiLink(_))),
        }
    }
}
