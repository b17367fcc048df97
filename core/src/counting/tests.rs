//! Unit and property tests of the counting filter (sizing, counters, growth, deletion,
//! validation, RDB fields).

use super::*;
use crate::bloom::chain::Chain;
use crate::hash::HashPair;
use crate::rdb::{load_counting, save_counting, Field, Fields, COUNTING_ENCODING};
use proptest::prelude::*;
use std::collections::HashMap;

fn pair(item: &[u8]) -> HashPair {
    HashPair::wide(item)
}

fn add(chain: &mut CountingChain, item: &[u8]) -> CountingAdd {
    chain.add(pair(item), u64::MAX)
}

#[test]
fn same_sizing_and_positions_as_bloom() {
    for (capacity, error, scaling) in [
        (100, 0.01, true),
        (100, 0.001, true),
        (1000, 0.05, true),
        (3, 0.01, false),
        (50000, 0.0005, false),
    ] {
        let bf = Chain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
        let cbf = CountingChain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
        let (b, c) = (&bf.links()[0], &cbf.links[0]);
        assert_eq!(
            (b.entries(), b.error(), b.bpe(), b.hashes(), b.bits()),
            (c.entries, c.error, c.bpe, c.hashes, c.bits)
        );
        assert_eq!(c.bytes(), 4 * b.bytes());
        assert_eq!(cbf.options, bf.options());
        for item in [&b""[..], b"a", b"hello", b"user:12345"] {
            let p = pair(item);
            assert_eq!(
                b.positions(p).collect::<Vec<_>>(),
                c.positions(p).collect::<Vec<_>>()
            );
        }
    }
    // Reserved 0.01/100: BF 144 bytes / 1152 bits / 8 hashes; CBF 4 × 144 bytes.
    let cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    let l = &cbf.links[0];
    assert_eq!((l.bits, l.hashes, l.bytes()), (1152, 8, 576));
    assert_eq!(cbf.mem_usage(), 32 + 64 + 576);
}

#[test]
fn counters_are_nibbles_low_first() {
    let mut cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    // "a" → positions 1034 539 172 829 462 1119 752 257 (COMPAT §5.5).
    add(&mut cbf, b"a");
    let link = &cbf.links[0];
    assert_eq!(link.counters[517], 0x01, "1034 even → low nibble");
    assert_eq!(link.counters[269], 0x10, "539 odd → high nibble");
    assert_eq!(link.counters.iter().filter(|&&b| b != 0).count(), 8);
    add(&mut cbf, b"a");
    assert_eq!(cbf.links[0].counters[517], 0x02);
    assert_eq!(cbf.count(pair(b"a")), 2);
}

#[test]
fn chain_grows_like_bloom() {
    let mut bf = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
    let mut cbf = CountingChain::new(10, 0.01, 2, true, u64::MAX).unwrap();
    for i in 0..200 {
        let item = format!("item{i}");
        bf.add(bf.hash(item.as_bytes()), u64::MAX);
        add(&mut cbf, item.as_bytes());
    }
    assert_eq!(cbf.items, 200);
    let shapes = |entries: Vec<(u64, f64, u64, u32)>| entries;
    assert_eq!(
        shapes(
            cbf.links
                .iter()
                .map(|l| (l.entries, l.error, l.bits, l.hashes))
                .collect()
        ),
        shapes(
            bf.links()
                .iter()
                .map(|l| (l.entries(), l.error(), l.bits(), l.hashes()))
                .take(cbf.links.len())
                .collect()
        )
    );
    assert_eq!(cbf.links[0].error, 0.005);
    assert_eq!(cbf.links[1].entries, 20);
    assert_eq!(cbf.links[1].error, 0.0025);
    assert_eq!(cbf.links.iter().map(|l| l.items).sum::<u64>(), cbf.items);
}

#[test]
fn repeated_adds_go_to_the_link_that_holds_the_item() {
    let mut cbf = CountingChain::new(2, 0.01, 2, true, u64::MAX).unwrap();
    add(&mut cbf, b"x");
    add(&mut cbf, b"y");
    add(&mut cbf, b"z"); // grows
    assert_eq!(cbf.links.len(), 2);
    for _ in 0..5 {
        add(&mut cbf, b"x");
    }
    assert_eq!(cbf.links.len(), 2);
    assert_eq!((cbf.links[0].items, cbf.links[1].items), (7, 1));
    assert_eq!(cbf.count(pair(b"x")), 6);
    assert_eq!(cbf.items, 8);
}

#[test]
fn delete_semantics() {
    let mut cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    let x = pair(b"x");
    add(&mut cbf, b"x");
    add(&mut cbf, b"x");
    assert_eq!((cbf.count(x), cbf.items), (2, 2));
    assert!(cbf.delete(x));
    assert!(cbf.contains(x));
    assert_eq!((cbf.count(x), cbf.items), (1, 1));
    assert!(cbf.delete(x));
    assert!(!cbf.contains(x));
    assert_eq!((cbf.count(x), cbf.items), (0, 0));
    let before = cbf.clone();
    assert!(!cbf.delete(x));
    assert_eq!(cbf, before);
    assert!(cbf.links[0].counters.iter().all(|&b| b == 0));
}

#[test]
fn delete_refuses_when_several_links_test_positive() {
    // Force the item positive in two links by adding it to each directly.
    let mut cbf = CountingChain::new(1, 0.01, 2, true, u64::MAX).unwrap();
    add(&mut cbf, b"a");
    add(&mut cbf, b"b"); // second link
    let p = pair(b"a");
    cbf.links[1].increment(p);
    cbf.links[1].items += 1;
    cbf.items += 1;
    let before = cbf.clone();
    assert!(!cbf.delete(p));
    assert_eq!(cbf, before);
    assert_eq!(cbf.count(p), 2);
}

#[test]
fn saturated_counters_stay() {
    let mut cbf = CountingChain::new(100, 0.01, 2, false, u64::MAX).unwrap();
    let p = pair(b"hot");
    for _ in 0..20 {
        assert_eq!(cbf.add(p, u64::MAX), CountingAdd::Added);
    }
    assert_eq!(cbf.count(p), 15);
    assert_eq!(cbf.items, 20);
    assert!(cbf.has_saturated_counter());
    for _ in 0..30 {
        assert!(cbf.delete(p));
    }
    assert_eq!(cbf.count(p), 15, "saturated counters are never decremented");
    assert!(cbf.contains(p));
    assert_eq!(cbf.items, 0);
    assert!(!cbf.delete(pair(b"cold")) || cbf.contains(pair(b"cold")));
}

#[test]
fn non_scaling_filter_fills_up_but_takes_repeats() {
    let mut cbf = CountingChain::new(3, 0.01, 2, false, u64::MAX).unwrap();
    assert_eq!(cbf.options, 13);
    for item in [&b"a"[..], b"b", b"c"] {
        assert_eq!(add(&mut cbf, item), CountingAdd::Added);
    }
    assert_eq!(add(&mut cbf, b"d"), CountingAdd::Full);
    assert_eq!(add(&mut cbf, b"a"), CountingAdd::Added);
    assert_eq!(cbf.items, 4);
    assert!(cbf.delete(pair(b"b")));
    assert_eq!(add(&mut cbf, b"d"), CountingAdd::Full, "a still at 4 ≥ 3");
    assert!(cbf.delete(pair(b"a")));
    assert_eq!(
        add(&mut cbf, b"d"),
        CountingAdd::Added,
        "deletes free capacity"
    );
}

#[test]
fn growth_failures_and_ceiling() {
    let mut cbf = CountingChain::new(2, 0.01, 0, true, u64::MAX).unwrap();
    add(&mut cbf, b"a");
    add(&mut cbf, b"b");
    let before = cbf.clone();
    assert_eq!(
        add(&mut cbf, b"c"),
        CountingAdd::GrowFailed(LinkError::Invalid)
    );
    assert_eq!(cbf, before);

    let mut cbf = CountingChain::new(100, 0.01, 2, true, 2000).unwrap();
    let mut outcome = CountingAdd::Added;
    for i in 0..400 {
        outcome = cbf.add(pair(i.to_string().as_bytes()), 2000);
        if outcome != CountingAdd::Added {
            break;
        }
    }
    assert_eq!(outcome, CountingAdd::GrowFailed(LinkError::TooLarge));
    assert!(cbf.mem_usage() <= 2000);
    assert_eq!(
        CountingChain::new(100, 0.01, 2, true, 600),
        Err(LinkError::TooLarge)
    );
    assert!(CountingChain::new(100, 0.01, 2, true, 672).is_ok());
    assert_eq!(
        CountingChain::new(0, 0.01, 2, true, u64::MAX),
        Err(LinkError::Invalid)
    );
}

#[test]
fn mem_usage_is_four_times_the_bloom_arrays() {
    for (error, capacity, scaling) in [
        (0.001, 100, true),
        (0.01, 100, true),
        (0.05, 1000, true),
        (0.01, 3, false),
    ] {
        let bf = Chain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
        let cbf = CountingChain::new(capacity, error, 2, scaling, u64::MAX).unwrap();
        assert_eq!(cbf.mem_usage(), bf.mem_usage() + 3 * bf.links()[0].bytes());
    }
}

/// Measured false-positive rate of `cbf` over `probes` items never added.
fn fp_rate(cbf: &CountingChain, probes: u64) -> f64 {
    let hits = (0..probes)
        .filter(|i| cbf.contains(pair(format!("probe:{i}").as_bytes())))
        .count();
    hits as f64 / probes as f64
}

#[test]
fn false_positive_rate_within_bounds() {
    // Reserved for 10 000 at 1%, filled to capacity; scaling (first link at 0.5%),
    // non-scaling (exactly 1%), and a filter that had to grow 4 times.
    for (capacity, scaling) in [(10_000, true), (10_000, false), (1_000, true)] {
        let mut cbf = CountingChain::new(capacity, 0.01, 2, scaling, u64::MAX).unwrap();
        for i in 0..10_000 {
            assert_eq!(
                add(&mut cbf, format!("item:{i}").as_bytes()),
                CountingAdd::Added
            );
        }
        let rate = fp_rate(&cbf, 100_000);
        assert!(
            rate <= 0.015,
            "capacity {capacity} scaling {scaling}: {rate}"
        );
    }
}

#[test]
fn validation_rejects_inconsistent_links() {
    let cbf = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    assert!(cbf.is_valid());
    let opts = cbf.options;
    let good = cbf.links[0].clone();
    let mutations: [fn(&mut CountingLink); 8] = [
        |l| l.bits += 64,
        |l| l.bits -= 2,
        |l| {
            l.counters.pop();
        },
        |l| l.hashes += 1,
        |l| l.error = 1.0,
        |l| l.entries *= 2,
        |l| l.bpe *= 1.0 + 1e-12,
        |l| {
            l.bpe = 1e12;
            l.hashes = (crate::bloom::link::LN2 * 1e12).ceil() as u32
        },
    ];
    for (i, mutate) in mutations.iter().enumerate() {
        let mut bad = good.clone();
        mutate(&mut bad);
        assert!(!bad.is_valid(opts), "mutation {i}");
    }
    let mut bad = cbf.clone();
    bad.items = 1;
    assert!(!bad.is_valid());
    let mut bad = cbf.clone();
    bad.options = 7;
    assert!(!bad.is_valid());
    let mut bad = cbf.clone();
    bad.growth = MAX_GROWTH + 1;
    assert!(!bad.is_valid());
    let mut bad = CountingChain::new(100, 0.01, 2, false, u64::MAX).unwrap();
    bad.links.push(bad.links[0].clone());
    assert!(!bad.is_valid(), "non-scaling with two links");
}

#[test]
fn rdb_fields_round_trip_and_corruption_fails() {
    let mut cbf = CountingChain::new(10, 0.01, 2, true, u64::MAX).unwrap();
    for i in 0..50 {
        add(&mut cbf, i.to_string().as_bytes());
    }
    let mut good = Fields::default();
    save_counting(&cbf, &mut good);
    assert_eq!(good.fields.len(), 4 + 7 * cbf.links.len());
    assert_eq!(
        load_counting(&mut good.clone(), COUNTING_ENCODING),
        Some(cbf.clone())
    );
    let load = |f: &Fields, encver| load_counting(&mut f.clone(), encver);
    assert!(load(&good, 0).is_none());
    assert!(load(&good, 2).is_none());
    for (index, field) in [
        (0, Field::Unsigned(49)),
        (1, Field::Unsigned(0)),
        (1, Field::Unsigned(u64::MAX)),
        (2, Field::Unsigned(12)),
        (3, Field::Unsigned(40000)),
        (4, Field::Unsigned(1000)),
        (5, Field::Double(0.0)),
        (6, Field::Unsigned(9)),
        (7, Field::Double(9.0)),
        (8, Field::Unsigned(1 << 40)),
        (9, Field::Buffer(vec![0; 8])),
        (10, Field::Unsigned(11)),
        (9, Field::Unsigned(3)),
    ] {
        let mut f = good.clone();
        f.fields[index] = field.clone();
        assert!(load(&f, 1).is_none(), "field {index} = {field:?}");
    }
    let mut f = good;
    f.fields.truncate(10);
    assert!(load(&f, 1).is_none());
}

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    /// Delete the n-th (mod count) item currently in the multiset.
    Delete(usize),
    /// Delete an item never added (only applied when it tests absent).
    DeleteAbsent(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..60).prop_map(Op::Add),
        2 => any::<usize>().prop_map(Op::Delete),
        1 => any::<u16>().prop_map(Op::DeleteAbsent),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Ground truth is a multiset: after any sequence of adds and deletes of added
    /// items, no false negative, count ≥ true count (no counter saturated), CARD and
    /// the links' counts follow every add and successful delete, and a refused delete
    /// changes no byte.
    #[test]
    fn multiset_model(
        ops in proptest::collection::vec(op(), 1..400),
        capacity in 1u64..40,
        growth in 1u32..4,
        error in prop_oneof![Just(0.01), Just(0.1), Just(0.3)],
        scaling in any::<bool>(),
    ) {
        let mut cbf = CountingChain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
        let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
        for op in ops {
            match op {
                Op::Add(n) => {
                    let item = vec![n];
                    match cbf.add(pair(&item), u64::MAX) {
                        CountingAdd::Added => *truth.entry(item).or_default() += 1,
                        CountingAdd::Full => prop_assert!(!scaling),
                        CountingAdd::GrowFailed(e) => prop_assert!(false, "grow failed {e:?}"),
                    }
                }
                Op::Delete(n) => {
                    let mut present: Vec<&Vec<u8>> =
                        truth.iter().filter(|(_, &c)| c > 0).map(|(k, _)| k).collect();
                    if present.is_empty() {
                        continue;
                    }
                    present.sort();
                    let item = present[n % present.len()].clone();
                    let before = cbf.clone();
                    if cbf.delete(pair(&item)) {
                        *truth.get_mut(&item).unwrap() -= 1;
                    } else {
                        prop_assert_eq!(&cbf, &before);
                    }
                }
                Op::DeleteAbsent(n) => {
                    let item = format!("absent:{n}").into_bytes();
                    let p = pair(&item);
                    if !cbf.contains(p) {
                        let before = cbf.clone();
                        prop_assert!(!cbf.delete(p));
                        prop_assert_eq!(&cbf, &before);
                    }
                }
            }
            let saturated = cbf.has_saturated_counter();
            for (item, &n) in &truth {
                if n > 0 {
                    prop_assert!(cbf.contains(pair(item)), "false negative {:?}", item);
                    if !saturated {
                        prop_assert!(cbf.count(pair(item)) >= n);
                    }
                }
            }
            prop_assert_eq!(cbf.items, truth.values().sum::<u64>());
            prop_assert_eq!(cbf.links.iter().map(|l| l.items).sum::<u64>(), cbf.items);
            prop_assert!(cbf.is_valid());
        }
    }

    /// RDB save → load is the identity.
    #[test]
    fn rdb_save_then_load_is_identity(
        items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..300),
        deletes in proptest::collection::vec(any::<usize>(), 0..50),
        capacity in 1u64..64,
        growth in 1u32..4,
        scaling in any::<bool>(),
    ) {
        let mut cbf = CountingChain::new(capacity, 0.01, growth, scaling, u64::MAX).unwrap();
        for item in &items {
            cbf.add(pair(item), u64::MAX);
        }
        for d in deletes {
            if !items.is_empty() {
                cbf.delete(pair(&items[d % items.len()]));
            }
        }
        let mut fields = Fields::default();
        save_counting(&cbf, &mut fields);
        prop_assert_eq!(load_counting(&mut fields, COUNTING_ENCODING), Some(cbf));
    }
}

/// A counting filter's RDB fields from a strategy's parameters (several links,
/// deletes).
fn saved_fields(capacity: u64, scaling: bool, n: u8, deletes: u8) -> (CountingChain, Fields) {
    let mut cbf = CountingChain::new(capacity, 0.01, 2, scaling, u64::MAX).unwrap();
    for i in 0..n {
        add(&mut cbf, &[i]);
    }
    for i in 0..deletes.min(n) {
        cbf.delete(pair(&[i]));
    }
    let mut fields = Fields::default();
    save_counting(&cbf, &mut fields);
    (cbf, fields)
}

/// RDB field streams of real filters, then edited (or, now and then, random), under
/// any encoding version: nothing panics; whatever loads is valid and saves back to the
/// same fields; an unedited stream of the current encoding loads as the filter.
#[test]
fn arbitrary_fields_never_panic() {
    use crate::testing::{apply_field_edits, field_edits, run_counting};
    let random = prop_oneof![
        6 => Just(None),
        1 => proptest::option::of(proptest::collection::vec(
            (0u8..3, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..40)),
            0..40,
        )),
    ];
    let encver = prop_oneof![4 => Just(COUNTING_ENCODING), 1 => -1i32..3];
    run_counting(
        "counting arbitrary_fields_never_panic",
        500,
        150,
        (
            (1u64..20, any::<bool>(), any::<u8>(), 0u8..20),
            field_edits(),
            random,
            encver,
        ),
        |((capacity, scaling, n, deletes), edits, random, encver)| {
            let (_, good) = saved_fields(capacity, scaling, n, deletes);
            let mut fields = match random {
                Some(raw) => Fields {
                    fields: raw
                        .into_iter()
                        .map(|(kind, n, bytes)| match kind {
                            0 => Field::Unsigned(n % 1000),
                            1 => Field::Double(f64::from_bits(n)),
                            _ => Field::Buffer(bytes),
                        })
                        .collect(),
                    read_at: 0,
                },
                None => apply_field_edits(&good, &edits),
            };
            let stream = fields.fields.clone();
            match load_counting(&mut fields, encver) {
                Some(cbf) => {
                    prop_assert!(cbf.is_valid());
                    let mut again = Fields::default();
                    save_counting(&cbf, &mut again);
                    prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                    Ok(true)
                }
                None => {
                    prop_assert!(stream != good.fields || encver != COUNTING_ENCODING);
                    Ok(false)
                }
            }
        },
    );
    let (source, mut good) = saved_fields(5, true, 40, 3);
    assert_eq!(load_counting(&mut good, COUNTING_ENCODING), Some(source));
}

/// A valid field stream with exactly one edit (a field replaced, nudged, resized,
/// removed, a data byte changed...): nothing panics; whatever loads is valid and saves
/// back to the same fields.
#[test]
fn corrupted_fields_never_panic() {
    use crate::testing::{apply_field_edits, field_edit, run_counting};
    let counts = run_counting(
        "counting corrupted_fields_never_panic",
        400,
        60,
        (
            (1u64..20, any::<bool>(), any::<u8>(), 0u8..20),
            field_edit(),
        ),
        |((capacity, scaling, n, deletes), edit)| {
            let (_, good) = saved_fields(capacity, scaling, n, deletes);
            let mut fields = apply_field_edits(&good, &[edit]);
            let stream = fields.fields.clone();
            match load_counting(&mut fields, COUNTING_ENCODING) {
                Some(cbf) => {
                    prop_assert!(cbf.is_valid());
                    let mut again = Fields::default();
                    save_counting(&cbf, &mut again);
                    prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                    Ok(true)
                }
                None => Ok(false),
            }
        },
    );
    assert!(counts.refused >= 100, "{counts:?}");
}
