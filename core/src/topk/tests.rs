//! The Top-K against RedisBloom's definitions worked by hand, HeavyKeeper's properties
//! (heavy hitters are listed, counts never exceed the truth), determinism across save and
//! load, and the RDB codec against hostile streams.

use super::rdb::{heap_records, load_topk, save_topk, TOPK_ENCODING};
use super::*;
use crate::rdb::{Field, Fields};
use crate::testing::{apply_field_edits, field_edits, random_fields, random_streams};
use proptest::prelude::*;
use std::collections::HashMap;

fn topk(k: u32, width: u32, depth: u32, decay: f64) -> TopK {
    TopK::new(k, width, depth, decay, u64::MAX).unwrap()
}

fn saved(t: &TopK) -> Fields {
    let mut fields = Fields::default();
    save_topk(t, &mut fields);
    fields
}

fn reloaded(t: &TopK) -> TopK {
    load_topk(&mut saved(t), TOPK_ENCODING).unwrap()
}

#[test]
fn an_item_takes_its_bucket_in_every_row_with_its_fingerprint() {
    let mut t = topk(3, 50, 4, 0.9);
    assert_eq!(t.add(b"foo", 5), None);
    let fp = murmur2::murmur2(b"foo", 1919);
    for row in 0..4u32 {
        let col = murmur2::murmur2(b"foo", row) % 50;
        let at = (row * 50 + col) as usize * 8;
        let b = &t.bucket_bytes()[at..at + 8];
        assert_eq!(b[..4], fp.to_le_bytes(), "row {row}");
        assert_eq!(b[4..], 5u32.to_le_bytes(), "row {row}");
    }
    let taken = t.bucket_bytes().chunks(8).filter(|b| b != &[0; 8]).count();
    assert_eq!(taken, 4);
    assert!(t.query(b"foo"));
    assert!(!t.query(b"bar"));
    assert_eq!(t.count(b"foo"), 5);
    assert_eq!(t.count(b"bar"), 0);
    assert_eq!(t.add(b"foo", 2), None);
    assert_eq!(t.count(b"foo"), 7);
    assert_eq!(t.rng_state(), 0, "no collision, no draw");
}

#[test]
fn what_topk_reserve_refuses_is_refused() {
    for (k, width, depth, decay) in [
        (0, 1, 1, 0.9),
        (1, 0, 1, 0.9),
        (1, 1, 0, 0.9),
        (1, 1, 1, 0.0),
        (1, 1, 1, 1.5),
    ] {
        assert_eq!(
            TopK::new(k, width, depth, decay, u64::MAX).unwrap_err(),
            TopKError::Invalid
        );
    }
    assert_eq!(
        TopK::new(u32::MAX, u32::MAX, u32::MAX, 0.9, 1 << 40).unwrap_err(),
        TopKError::TooLarge
    );
    // Without a ceiling (a trusted write): beyond the address space, an allocation
    // failure, not a panic.
    assert_eq!(
        TopK::new(u32::MAX, u32::MAX, u32::MAX, 0.9, u64::MAX).unwrap_err(),
        TopKError::OutOfMemory
    );
}

#[test]
fn defaults_and_decay_table_are_redisbloom_s() {
    assert_eq!((DEFAULT_WIDTH, DEFAULT_DEPTH, DEFAULT_DECAY), (8, 7, 0.9));
    let t = topk(1, 1, 1, 0.9);
    assert_eq!(t.table[0], 1.0);
    assert_eq!(t.table[1], 0.9);
    assert_eq!(t.table[2], 0.9 * 0.9);
    assert!((t.table[255] - 0.9f64.powi(255)).abs() < 1e-25);
    // Above the table: table[255]^(count / 255) × table[count % 255].
    assert_eq!(t.decay_chance(255), t.table[255]);
    assert_eq!(t.decay_chance(256), t.table[255] * t.table[1]);
    assert_eq!(
        t.decay_chance(510),
        t.table[255] * t.table[255] * t.table[0]
    );
    assert_eq!(power(0.5, 10), 1.0 / 1024.0);
    // RedisBloom's MEMORY USAGE: sizeof(TopK) + 8 per bucket + 24 per heap entry.
    assert_eq!(topk(10, 8, 7, 0.9).mem_usage(), 2088 + 8 * 7 * 8 + 10 * 24);
}

#[test]
fn the_heap_keeps_the_k_largest_and_expels_the_smallest() {
    let mut t = topk(2, 1000, 5, 0.9);
    assert_eq!(t.add(b"a", 10), None);
    assert_eq!(t.add(b"b", 20), None);
    // Heap full: c (5) is below the minimum (10), nothing changes in the heap.
    assert_eq!(t.add(b"c", 5), None);
    assert!(!t.query(b"c"));
    // c reaches 15 > 10: a is expelled and named.
    assert_eq!(t.add(b"c", 10).as_deref(), Some(&b"a"[..]));
    let list: Vec<(&[u8], u32)> = t.list().iter().map(|e| (e.bytes(), e.count)).collect();
    assert_eq!(list, vec![(&b"b"[..], 20), (&b"c"[..], 15)]);
    assert_eq!(t.count(b"a"), 10, "its buckets still count it");
}

#[test]
fn an_increment_of_zero_enters_a_heap_with_free_slots_at_count_zero() {
    // RedisBloom: count 0 ≥ heap minimum 0, the item takes slot 0 (listed by QUERY, not
    // by LIST, which stops at the first count 0).
    let mut t = topk(3, 100, 2, 0.9);
    assert_eq!(t.add(b"z", 0), None);
    assert!(t.query(b"z"));
    assert!(t.list().is_empty());
    // The sift-down moves an equal child up: z left slot 0 for slot 1, so the next zero
    // increment takes the free slot 0 and expels nothing, and moves z back to slot 0...
    assert_eq!(t.heap()[1].bytes(), b"z");
    assert_eq!(t.add(b"y", 0), None);
    assert_eq!(t.heap()[0].bytes(), b"z");
    // ...where the third one replaces it and names it.
    assert_eq!(t.add(b"w", 0).as_deref(), Some(&b"z"[..]));
    assert!(!t.query(b"z"));
    assert!(t.query(b"y") && t.query(b"w"));
}

#[test]
fn list_orders_by_count_keeping_heap_order_among_equals() {
    let mut t = topk(4, 1000, 3, 0.9);
    for item in [&b"p"[..], b"q", b"r", b"s"] {
        t.add(item, 3);
    }
    let heap_order: Vec<&[u8]> = t.heap().iter().map(|e| e.bytes()).collect();
    let listed: Vec<&[u8]> = t.list().iter().map(|e| e.bytes()).collect();
    assert_eq!(
        listed, heap_order,
        "all equal: the stable sort keeps heap order"
    );
}

#[test]
fn collisions_decay_with_the_held_generator() {
    // One bucket per row: every other item collides and draws.
    let mut a = topk(2, 1, 1, 0.9);
    a.add(b"x", 3);
    a.add(b"y", 10);
    assert_ne!(a.rng_state(), 0);
    let mut b = topk(2, 1, 1, 0.9);
    b.add(b"x", 3);
    b.add(b"y", 10);
    assert_eq!(a, b, "the same commands give the same value");
    // With decay 1 every draw decays: the third takes the bucket to 0 and y gets the
    // increment left at that draw, 8 (RedisBloom counts the taking unit in).
    let mut sure = topk(2, 1, 1, 1.0);
    sure.add(b"x", 3);
    sure.add(b"y", 10);
    assert_eq!(sure.count(b"y"), 8);
    assert_eq!(sure.count(b"x"), 0);
}

#[test]
fn a_reloaded_value_goes_on_as_the_original() {
    // A replica loads the master's RDB, then receives the same writes.
    let mut master = topk(5, 4, 3, 0.8);
    let mut n = 0u32;
    let ops = |t: &mut TopK, from: u32| {
        for i in from..from + 300 {
            let item = format!("i{}", i % 23);
            t.add(item.as_bytes(), i % 7 + 1);
        }
    };
    ops(&mut master, n);
    let mut replica = reloaded(&master);
    assert_eq!(replica, master);
    n += 300;
    ops(&mut master, n);
    ops(&mut replica, n);
    assert_eq!(replica, master);
    assert_eq!(saved(&replica), saved(&master));
}

#[test]
fn rdb_fields_are_redisbloom_s_layout() {
    let mut t = topk(2, 3, 2, 0.5);
    t.add(b"ab", 1);
    t.rng = 0x0102_0304_0506_0708;
    let fields = saved(&t);
    assert_eq!(
        fields.fields[..4],
        [
            Field::Unsigned(2),
            Field::Unsigned(3),
            Field::Unsigned(2),
            Field::Double(0.5)
        ]
    );
    assert_eq!(fields.fields[4], Field::Buffer(t.bucket_bytes().to_vec()));
    let Field::Buffer(records) = &fields.fields[5] else {
        panic!("heap records")
    };
    assert_eq!(records.len(), 48);
    // Slot 0 is the free one (count 0) after a single add: `ab` moved to slot 1.
    assert_eq!(records[8..16], 0x0102_0304_0506_0708u64.to_le_bytes());
    let fp = murmur2::murmur2(b"ab", 1919);
    assert_eq!(records[24..28], fp.to_le_bytes());
    assert_eq!(records[28..32], 2u32.to_le_bytes());
    assert_eq!(records[32..40], [0; 8]);
    assert_eq!(records[40..44], 1u32.to_le_bytes());
    assert_eq!(fields.fields[6], Field::Buffer(vec![0]));
    assert_eq!(fields.fields[7], Field::Buffer(b"ab\0".to_vec()));
    assert_eq!(fields.fields.len(), 8);
    assert_eq!(reloaded(&t), t);
}

#[test]
fn items_redisbloom_cut_at_a_nul_load_and_never_match() {
    // RedisBloom saves `strlen(item) + 1` bytes: "a\0b" is saved as "a\0" with length 3.
    let mut t = topk(1, 10, 2, 0.9);
    t.add(b"a\0b", 4);
    let mut fields = saved(&t);
    assert_eq!(fields.fields[6], Field::Buffer(b"a\0b\0".to_vec()));
    fields.fields[6] = Field::Buffer(b"a\0".to_vec());
    let cut = load_topk(&mut fields, TOPK_ENCODING).unwrap();
    assert_eq!(cut.heap()[0].bytes(), b"a");
    assert_eq!(cut.heap()[0].itemlen, 3);
    assert!(!cut.query(b"a\0b"));
    assert!(!cut.query(b"a"));
    // redbloom's own save keeps the whole item.
    assert!(reloaded(&t).query(b"a\0b"));
    // An empty item is saved as a lone NUL and loads as no item (still matched by "").
    let mut e = topk(1, 10, 2, 0.9);
    e.add(b"", 2);
    let back = reloaded(&e);
    assert_eq!(back.heap()[0].item, None);
    assert!(back.query(b""));
    assert_eq!(back.list().len(), 1);
}

#[test]
fn loading_refuses_inconsistent_values() {
    let t = {
        let mut t = topk(2, 3, 2, 0.9);
        t.add(b"x", 1);
        t
    };
    let good = saved(&t);
    assert!(load_topk(&mut good.clone(), 0).is_some());
    assert!(load_topk(&mut good.clone(), 1).is_none());
    let with = |i: usize, f: Field| {
        let mut s = good.clone();
        s.fields[i] = f;
        load_topk(&mut s, 0)
    };
    for (i, f) in [
        (0, Field::Unsigned(0)),
        (0, Field::Unsigned(1 << 32)),
        (0, Field::Unsigned(3)),
        (1, Field::Unsigned(0)),
        (1, Field::Unsigned(4)),
        (2, Field::Unsigned(0)),
        (2, Field::Unsigned(1 << 40)),
        (3, Field::Double(0.0)),
        (3, Field::Double(1.5)),
        (3, Field::Double(f64::NAN)),
        (3, Field::Unsigned(1)),
        (4, Field::Buffer(vec![0; 47])),
        (5, Field::Buffer(vec![0; 47])),
        (6, Field::Buffer(vec![])),
        (7, Field::Buffer(b"x".to_vec())),
    ] {
        assert!(with(i, f.clone()).is_none(), "field {i}: {f:?}");
    }
    let mut short = good.clone();
    short.fields.pop();
    assert!(load_topk(&mut short, 0).is_none());
    assert_eq!(heap_records(&t).len(), 48);
}

/// A stream of `n` items: `heavy` items each `per_heavy` times, then distinct light
/// ones, shuffled by a fixed permutation.
fn skewed(heavy: usize, per_heavy: usize, light: usize) -> Vec<String> {
    let mut items = Vec::new();
    for h in 0..heavy {
        items.extend(std::iter::repeat_n(format!("heavy{h}"), per_heavy));
    }
    items.extend((0..light).map(|l| format!("light{l}")));
    let n = items.len();
    let mut out = Vec::with_capacity(n);
    let step = 7919 % n.max(1);
    let mut at = 0;
    for _ in 0..n {
        out.push(items[at].clone());
        at = (at + step.max(1)) % n;
    }
    out
}

#[test]
fn the_true_heavy_hitters_are_listed() {
    let stream = skewed(10, 500, 20_000);
    let mut t = topk(10, 2000, 5, 0.9);
    let mut truth: HashMap<&str, u32> = HashMap::new();
    for item in &stream {
        t.add(item.as_bytes(), 1);
        *truth.entry(item.as_str()).or_default() += 1;
    }
    let listed: Vec<&[u8]> = t.list().iter().map(|e| e.bytes()).collect();
    for h in 0..10 {
        let name = format!("heavy{h}");
        assert!(listed.contains(&name.as_bytes()), "{name} in {listed:?}");
    }
    for e in t.list() {
        let real = truth[std::str::from_utf8(e.bytes()).unwrap()];
        assert!(e.count <= real, "{:?}: {} > {real}", e.bytes(), e.count);
        assert!(
            e.count * 10 >= real * 9,
            "{:?}: {} of {real}",
            e.bytes(),
            e.count
        );
    }
}

proptest! {
    #[test]
    fn counts_never_exceed_the_truth(ops in proptest::collection::vec((0u8..40, 0u32..50), 1..300),
                                     k in 1u32..8, width in 1u32..20, depth in 1u32..5) {
        let mut t = topk(k, width, depth, 0.9);
        let mut truth: HashMap<u8, u64> = HashMap::new();
        for (item, by) in &ops {
            t.add(&[*item], *by);
            *truth.entry(*item).or_default() += u64::from(*by);
        }
        for (item, real) in &truth {
            prop_assert!(u64::from(t.count(&[*item])) <= *real);
        }
        for e in t.list() {
            prop_assert!(u64::from(e.count) <= truth[&e.bytes()[0]]);
        }
        prop_assert!(t.list().windows(2).all(|w| w[0].count >= w[1].count));
        prop_assert_eq!(t.listed_entries() as usize, t.list().len());
        prop_assert_eq!(&reloaded(&t), &t);
    }

    #[test]
    fn random_streams_never_panic(raw in random_streams()) {
        if let Some(raw) = raw {
            let mut fields = random_fields(raw, 64);
            if let Some(mut t) = load_topk(&mut fields, TOPK_ENCODING) {
                t.add(b"x", 3);
                let _ = (t.query(b"x"), t.count(b"y"), t.list());
            }
        }
    }

    #[test]
    fn edited_values_load_or_are_refused_and_never_panic(edits in field_edits()) {
        let mut t = topk(3, 4, 2, 0.9);
        for i in 0..20u8 {
            t.add(&[i % 6], u32::from(i));
        }
        let fields = apply_field_edits(&saved(&t), &edits);
        if let Some(mut t) = load_topk(&mut fields.clone(), TOPK_ENCODING) {
            t.add(b"x", 100);
            let _ = (t.query(b"x"), t.count(b"x"), t.list());
            prop_assert_eq!(&reloaded(&t), &t);
        }
    }
}

/// The search's shortcuts (fingerprint blocks, the per-low-byte counts) against a plain
/// scan of the heap, with items that come and go and a reused allocation when the
/// expelled item has the new one's length.
#[test]
fn the_heap_search_agrees_with_a_scan_of_the_heap() {
    let mut t = topk(37, 50, 4, 0.9);
    let scan = |t: &TopK, item: &[u8]| {
        let fp = crate::hash::murmur2_32(item, FINGERPRINT_SEED);
        (0..t.heap.len()).rev().find(|&i| t.heap[i].is(fp, item))
    };
    for round in 0..3000u32 {
        let item = format!("item{}", (round * 7919) % 211).into_bytes();
        let expelled = t.add(&item, 1 + round % 3);
        if let Some(expelled) = expelled {
            assert!(!t.query(&expelled) || scan(&t, &expelled).is_some());
        }
        for probe in [item.as_slice(), b"item5", b"absent", b""] {
            let fp = crate::hash::murmur2_32(probe, FINGERPRINT_SEED);
            assert_eq!(t.find(fp, probe), scan(&t, probe), "round {round}");
        }
        let mut counts = [0u32; 256];
        for (i, e) in t.heap.iter().enumerate() {
            counts[low_byte(e.fp)] += 1;
            assert_eq!(t.fps[i / LANES][i % LANES], e.fp, "fingerprint {i}");
        }
        assert_eq!(counts, t.fp_counts, "round {round}");
    }
}
