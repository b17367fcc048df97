//! The expandable filter's behaviour: no false negative through inserts, deletes, splits,
//! void copies and reloads; the false-positive bound at every size; deterministic bytes;
//! the limits; the loaders' checks.

use super::dump::{chunk, header, load_sequence, load_sequence_sized, Loader};
use super::rdb::{load_xf, save_xf, XF_ENCODING};
use super::*;
use crate::rdb::{Field, Fields};

fn params(error_rate: f64, initial_capacity: u64) -> XfParams {
    XfParams {
        error_rate,
        initial_capacity,
    }
}

fn key(i: u64) -> u64 {
    XFilter::hash(&i.to_le_bytes())
}

fn filled(n: u64, error_rate: f64) -> XFilter {
    let mut f = XFilter::new(params(error_rate, 100), u64::MAX).unwrap();
    for i in 0..n {
        f.insert(key(i), u64::MAX).unwrap();
    }
    f
}

/// Every invariant a filter keeps: the histogram and memory recounted, entries, levels.
fn check_invariants(f: &XFilter) {
    let mut hist = [0u64; 65];
    let mut entries = 0;
    for (j, p) in f.segments.iter().flatten().enumerate() {
        let lp = f.level_of(j as u64) + BUCKET_BITS;
        assert!(
            p.is_valid(|len| hist[(lp + len) as usize] += 1),
            "partition {j}"
        );
        entries += u64::from(p.entries());
    }
    assert_eq!(hist, f.hist);
    assert_eq!(entries, f.entries);
    assert_eq!(f.memory_bytes(), f.recount_bytes());
    let parts: usize = f.segments.iter().map(Vec::len).sum();
    assert_eq!(parts as u64, f.partitions());
}

fn reload(f: &XFilter) -> XFilter {
    let seq = load_sequence(f);
    let mut loader = Loader::from_header(&seq[0].1, u64::MAX).unwrap();
    for (iter, data) in &seq[1..] {
        loader.load_chunk(*iter, data).unwrap();
    }
    loader.finish().unwrap()
}

#[test]
fn added_items_are_found_through_every_split() {
    let mut f = XFilter::new(params(0.01, 100), u64::MAX).unwrap();
    for i in 0..60_000u64 {
        f.insert(key(i), u64::MAX).unwrap();
        if i % 4999 == 0 {
            check_invariants(&f);
            assert!((0..=i).all(|k| f.contains(key(k))), "after {i}");
        }
    }
    assert!((0..60_000).all(|k| f.contains(key(k))));
    assert_eq!(f.items(), 60_000);
    assert!(f.partitions() > 200);
    check_invariants(&f);
}

#[test]
fn the_bound_stays_below_the_error_rate_at_every_size() {
    for eps in [0.01, 0.001, 0.1] {
        let mut f = XFilter::new(params(eps, 100), u64::MAX).unwrap();
        for i in 0..200_000u64 {
            f.insert(key(i), u64::MAX).unwrap();
            if i % 1000 == 0 {
                assert!(f.fp_bound() <= eps, "{eps} at {i}: {}", f.fp_bound());
            }
        }
        // The measured rate on absent items agrees.
        let fp = (1_000_000..1_200_000u64)
            .filter(|&i| f.contains(key(i)))
            .count();
        assert!((fp as f64) < eps * 200_000.0, "{eps}: {fp}");
    }
}

#[test]
fn void_entries_are_copied_to_both_halves() {
    // At 10 % the first generation's fingerprints are short: they run out of bits after a
    // few doublings and become void entries, copied on each split.
    let mut f = XFilter::new(params(0.1, 100), u64::MAX).unwrap();
    let first: Vec<u64> = (0..256).map(key).collect();
    for &h in &first {
        f.insert(h, u64::MAX).unwrap();
    }
    for i in 256..400_000u64 {
        f.insert(key(i), u64::MAX).unwrap();
    }
    assert!(f.entries() > f.items(), "void copies exist");
    assert!(first.iter().all(|&h| f.contains(h)));
    check_invariants(&f);
    // Deleting every item leaves no entry but the void copies of deleted... none:
    for i in 0..400_000u64 {
        assert!(f.delete(key(i)), "{i}");
    }
    assert_eq!(f.items(), 0);
    check_invariants(&f);
}

#[test]
fn deletes_never_cause_a_false_negative_for_the_others() {
    let mut f = XFilter::new(params(0.01, 100), u64::MAX).unwrap();
    for i in 0..50_000u64 {
        f.insert(key(i), u64::MAX).unwrap();
        if i % 3 == 0 {
            assert!(f.delete(key(i / 3 * 2)) || i / 3 * 2 > i);
        }
    }
    check_invariants(&f);
    let deleted: std::collections::HashSet<u64> = (0..50_000u64)
        .filter(|i| i % 3 == 0)
        .map(|i| i / 3 * 2)
        .filter(|&d| d <= 50_000)
        .collect();
    for i in 0..50_000u64 {
        if !deleted.contains(&i) {
            assert!(f.contains(key(i)), "{i}");
        }
    }
}

#[test]
fn count_and_delete_of_duplicates() {
    let mut f = XFilter::new(params(0.01, 100), u64::MAX).unwrap();
    let h = XFilter::hash(b"dup");
    for _ in 0..5 {
        f.insert(h, u64::MAX).unwrap();
    }
    assert_eq!(f.count(h), 5);
    assert_eq!(f.items(), 5);
    for k in (0..5).rev() {
        assert!(f.delete(h));
        assert_eq!(f.count(h), k);
    }
    assert!(!f.delete(h));
    assert!(!f.contains(h));
    assert_eq!(f.items(), 0);
    assert_eq!(
        f.memory_bytes(),
        XFilter::new(params(0.01, 100), u64::MAX)
            .unwrap()
            .memory_bytes()
    );
}

#[test]
fn the_same_operations_give_the_same_bytes() {
    let a = filled(30_000, 0.01);
    let b = filled(30_000, 0.01);
    assert_eq!(a, b);
    assert_eq!(load_sequence(&a), load_sequence(&b));
}

#[test]
fn params_out_of_range_are_refused() {
    assert_eq!(
        XFilter::new(params(0.0, 100), u64::MAX),
        Err(XfError::BadErrorRate)
    );
    assert_eq!(
        XFilter::new(params(1.0, 100), u64::MAX),
        Err(XfError::BadErrorRate)
    );
    assert_eq!(
        XFilter::new(params(f64::NAN, 100), u64::MAX),
        Err(XfError::BadErrorRate)
    );
    assert_eq!(
        XFilter::new(params(1e-10, 100), u64::MAX),
        Err(XfError::BadErrorRate)
    );
    assert!(XFilter::new(params(1e-9, 100), u64::MAX).is_ok());
    assert_eq!(
        XFilter::new(params(0.01, 0), u64::MAX),
        Err(XfError::BadCapacity)
    );
    assert_eq!(
        XFilter::new(params(0.01, (1 << 40) + 1), u64::MAX),
        Err(XfError::BadCapacity)
    );
    assert_eq!(
        XFilter::new(params(0.01, 1 << 30), 1 << 20),
        Err(XfError::TooLarge)
    );
    let f = XFilter::new(params(0.01, 100_000), u64::MAX).unwrap();
    assert_eq!(f.partitions(), 512);
    assert_eq!(f.capacity(), 512 * 256);
}

#[test]
fn an_insert_past_the_ceiling_changes_nothing() {
    let mut f = filled(5000, 0.01);
    let ceiling = f.memory_bytes() as u64;
    let before = f.clone();
    let mut refused = 0;
    for i in 5000..6000u64 {
        match f.insert(key(i), ceiling) {
            Ok(()) => {}
            Err(e) => {
                assert_eq!(e, XfError::TooLarge);
                refused += 1;
            }
        }
    }
    assert!(refused > 900, "{refused}");
    assert!(f.memory_bytes() as u64 <= ceiling);
    assert!((0..5000).all(|i| f.contains(key(i))));
    let mut g = before.clone();
    assert_eq!(g.insert(key(99_999), 0), Err(XfError::TooLarge));
    assert!(g == before);
}

#[test]
fn a_hot_item_fills_its_partition_then_is_refused() {
    let mut f = XFilter::new(params(0.01, 100), u64::MAX).unwrap();
    let h = XFilter::hash(b"hot");
    for _ in 0..MAX_ENTRIES {
        f.insert(h, u64::MAX).unwrap();
    }
    let before = f.clone();
    assert_eq!(f.insert(h, u64::MAX), Err(XfError::PartitionFull));
    assert!(f == before);
    assert_eq!(f.count(h), u64::from(MAX_ENTRIES));
}

#[test]
fn a_dump_reloads_to_the_same_filter() {
    for n in [0u64, 1, 300, 40_000] {
        let f = filled(n, 0.01);
        let g = reload(&f);
        assert_eq!(g, f);
        let mut fields = Fields::default();
        save_xf(&f, &mut fields);
        assert_eq!(load_xf(&mut fields, XF_ENCODING), Some(f.clone()));
    }
}

#[test]
fn chunks_are_bounded_and_in_order() {
    let f = filled(40_000, 0.01);
    let seq = load_sequence_sized(&f, 4096);
    assert!(seq.len() > 10, "{}", seq.len());
    for (_, data) in &seq[1..] {
        assert!(data.len() <= 4096 + 20);
    }
    assert_eq!(load_sequence(&f).len(), 2);
    assert_eq!(chunk(&f, 0), None);
    assert_eq!(chunk(&f, -5), None);
    assert_eq!(chunk(&f, f.partitions() as i64 + 1), None);
    // Out of order, repeated or damaged chunks are refused and change nothing.
    let mut loader = Loader::from_header(&seq[0].1, u64::MAX).unwrap();
    assert_eq!(
        loader.load_chunk(seq[2].0, &seq[2].1),
        Err(XfError::BadOffset)
    );
    loader.load_chunk(seq[1].0, &seq[1].1).unwrap();
    assert_eq!(
        loader.load_chunk(seq[1].0, &seq[1].1),
        Err(XfError::BadOffset)
    );
    let mut bad = seq[2].1.clone();
    bad[40] ^= 4;
    assert_eq!(loader.load_chunk(seq[2].0, &bad), Err(XfError::BadData));
    assert_eq!(loader.partitions_loaded(), seq[1].0 as u64 - 1);
    for (iter, data) in &seq[2..] {
        loader.load_chunk(*iter, data).unwrap();
    }
    assert_eq!(loader.finish().unwrap(), f);
}

#[test]
fn an_unfinished_load_or_a_lying_header_is_refused() {
    let f = filled(3000, 0.01);
    let seq = load_sequence(&f);
    let loader = Loader::from_header(&seq[0].1, u64::MAX).unwrap();
    assert_eq!(loader.finish(), Err(XfError::BadData));
    // A header whose items or histogram disagree with the chunks.
    for at in [36usize, 44, 60 + 8 * 20] {
        let mut h = header(&f);
        h[at] ^= 1;
        let r = Loader::from_header(&h, u64::MAX).and_then(|mut l| {
            for (iter, data) in &seq[1..] {
                l.load_chunk(*iter, data)?;
            }
            l.finish()
        });
        assert_eq!(r, Err(XfError::BadData), "{at}");
    }
    assert_eq!(
        Loader::from_header(&seq[0].1, 1000).err(),
        Some(XfError::TooLarge)
    );
    assert_eq!(
        Loader::from_header(&seq[0].1[..100], u64::MAX).err(),
        Some(XfError::BadData)
    );
}

#[test]
fn an_rdb_stream_with_a_missing_or_extra_field_is_refused() {
    let f = filled(3000, 0.01);
    let mut fields = Fields::default();
    save_xf(&f, &mut fields);
    let mut short = fields.clone();
    short.fields.pop();
    assert_eq!(load_xf(&mut short, XF_ENCODING), None);
    let mut wrong = fields.clone();
    wrong.fields[1] = Field::Unsigned(99);
    assert_eq!(load_xf(&mut wrong, XF_ENCODING), None);
    assert_eq!(load_xf(&mut fields.clone(), XF_ENCODING + 1), None);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn operations_keep_every_invariant(ops in proptest::collection::vec((0u64..400, any::<bool>()), 0..2000)) {
            let mut f = XFilter::new(params(0.05, 1), u64::MAX).unwrap();
            let mut model: std::collections::HashMap<u64, u64> = Default::default();
            for (item, add) in ops {
                let h = key(item);
                if add {
                    f.insert(h, u64::MAX).unwrap();
                    *model.entry(item).or_default() += 1;
                } else if model.get(&item).copied().unwrap_or(0) > 0 {
                    prop_assert!(f.delete(h));
                    *model.get_mut(&item).unwrap() -= 1;
                }
            }
            check_invariants(&f);
            for (&item, &n) in &model {
                prop_assert!(f.count(key(item)) >= n);
                if n > 0 {
                    prop_assert!(f.contains(key(item)));
                }
            }
            prop_assert_eq!(&reload(&f), &f);
        }

        #[test]
        fn damaged_chunks_never_load_wrong_or_panic(n in 0u64..3000, at in any::<usize>(), bit in 0u8..8) {
            let f = filled(n, 0.01);
            let seq = load_sequence(&f);
            let which = at % seq.len();
            let mut seq2 = seq.clone();
            let data = &mut seq2[which].1;
            let pos = (at / seq.len()) % data.len();
            data[pos] ^= 1 << bit;
            let r = Loader::from_header(&seq2[0].1, u64::MAX).and_then(|mut l| {
                for (iter, data) in &seq2[1..] {
                    l.load_chunk(*iter, data)?;
                }
                l.finish()
            });
            if let Ok(g) = r {
                // Only the header's items count (not derivable) or the error rate may
                // differ undetected; the entries are the same.
                prop_assert_eq!(&g.segments, &f.segments);
            }
        }

        #[test]
        fn random_bytes_never_panic(header in proptest::collection::vec(any::<u8>(), 0..700),
                                    data in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(mut l) = Loader::from_header(&header, 1 << 30) {
                let _ = l.load_chunk(2, &data);
                let _ = l.finish();
            }
        }
    }
}

/// Moves every buffer it is offered (a copy into a new allocation) and asks to pause
/// every `every` buffers.
struct Mover {
    offered: usize,
    every: usize,
}

impl crate::memory::Relocator for Mover {
    fn relocate<T>(&mut self, v: &mut Vec<T>) {
        let mut moved = Vec::with_capacity(v.capacity());
        moved.append(v);
        *v = moved;
        self.offered += 1;
    }
    fn should_stop(&mut self) -> bool {
        self.offered.is_multiple_of(self.every)
    }
}

#[test]
fn relocation_offers_every_buffer_and_changes_nothing() {
    let mut f = filled(20_000, 0.01);
    let before = f.clone();
    let mut r = Mover {
        offered: 0,
        every: 25,
    };
    let mut cursor = f.relocate(0, &mut r);
    let mut calls = 1;
    while let Some(c) = cursor {
        cursor = f.relocate(c, &mut r);
        calls += 1;
    }
    assert!(f == before);
    assert_eq!(f.memory_bytes(), f.recount_bytes());
    let dir = 1 + f.segments.len();
    assert_eq!(r.offered, dir + f.partitions() as usize);
    assert!(calls > 3, "{calls}");
    assert_eq!(f.relocate(f.partitions() + 5, &mut r), None);
}
