//! The ribbon layout: no false negatives, the rate asked (not far below it), the memory
//! near the bound, determinism, adversarial inputs, the encoding's persistence.

use super::dump::{self, load_sequence};
use super::rdb::{self, load_static, save_static, STATIC_ENCODING};
use super::*;
use crate::rdb::Fields;
use proptest::prelude::*;

pub(super) fn keys_of(prefix: &str, n: u64) -> Vec<u64> {
    (0..n)
        .map(|i| item_key(format!("{prefix}{i}").as_bytes()))
        .collect()
}

/// The share of `n` absent keys the filter finds.
pub(super) fn fp_rate(f: &StaticFilter, n: u64) -> f64 {
    let hits = (0..n)
        .filter(|i| f.contains(item_key(format!("absent:{i}").as_bytes())))
        .count();
    hits as f64 / n as f64
}

fn built(n: u64, error: f64) -> StaticFilter {
    build(keys_of("item:", n), error, u64::MAX).expect("builds")
}

#[test]
fn builds_are_ribbons_unless_the_fuse_is_asked() {
    let keys = keys_of("e", 100);
    assert_eq!(
        build(keys.clone(), 0.01, u64::MAX).unwrap().encoding(),
        Encoding::Ribbon
    );
    let fuse = build_with(keys, 0.01, u64::MAX, Encoding::Fuse).unwrap();
    assert_eq!((fuse.encoding(), fuse.bits()), (Encoding::Fuse, 7));
}

#[test]
fn every_item_is_found_at_every_width_and_size() {
    for n in [0u64, 1, 2, 3, 5, 31, 100, 129, 1000, 20_000] {
        for error in [
            0.49,
            0.3,
            0.25,
            0.01,
            0.003,
            1e-6,
            (-31f64).exp2(),
            (-32f64).exp2(),
        ] {
            let keys = keys_of("k", n);
            let f = build(keys.clone(), error, u64::MAX).unwrap();
            assert_eq!(f.items(), n);
            assert!(f.guaranteed_error() <= error, "n {n} error {error}");
            assert!(f.is_complete());
            for &k in &keys {
                assert!(f.contains(k), "n {n} error {error}: a false negative");
            }
        }
    }
}

#[test]
fn the_rate_is_the_one_asked_not_far_below() {
    for (error, n) in [(0.01, 100_000u64), (0.05, 50_000), (0.3, 20_000)] {
        let f = built(n, error);
        let guaranteed = f.guaranteed_error();
        assert!(
            guaranteed <= error && guaranteed > 0.98 * error,
            "{error}: {guaranteed}"
        );
        let fp = fp_rate(&f, 400_000);
        assert!(
            fp <= error * 1.06 && fp >= error * 0.9,
            "{error}: measured {fp}"
        );
    }
}

#[test]
fn memory_is_near_the_bound() {
    let f = built(200_000, 0.01);
    // log2(100) = 6.64; 7.0 asked of 1M and 10M items.
    assert!(f.bits_per_item() < 7.0, "{}", f.bits_per_item());
    assert_eq!(f.bits(), 6);
    // log2(10^4) = 13.29; 13.7 asked (encoding 2 took 13.85).
    let f = built(200_000, 0.0001);
    assert!(f.bits_per_item() < 13.6, "{}", f.bits_per_item());
}

#[test]
fn duplicates_one_and_two_items_and_order() {
    let mut keys = keys_of("d", 500);
    let once = build(keys.clone(), 0.01, u64::MAX).unwrap();
    keys.extend(keys_of("d", 500));
    keys.reverse();
    let twice = build(keys, 0.01, u64::MAX).unwrap();
    assert_eq!(once, twice);
    assert_eq!(twice.items(), 500);
    for keys in [
        vec![7u64],
        vec![7, 7, 7],
        vec![1, 2],
        vec![2, 1, 2, 1],
        vec![0, u64::MAX],
    ] {
        let f = build(keys.clone(), 0.001, u64::MAX).unwrap();
        assert!(keys.iter().all(|&k| f.contains(k)), "{keys:?}");
        assert_eq!(f.seed(), FIRST_SEED, "{keys:?}");
    }
    // A million copies of one key are one item.
    let f = build(vec![42; 1_000_000], 0.01, u64::MAX).unwrap();
    assert_eq!((f.items(), f.slots()), (1, 128));
}

/// The smallest sets at every width, 1 to 32 bits (a one-block ribbon, every key at
/// offset 0, partly mixed widths): built at the first seed, every key found; the empty
/// set builds too and holds no item.
#[test]
fn the_smallest_sets_build_at_every_width() {
    for exponent in 1..=32 {
        // r = exponent columns (2^-32 is the smallest rate taken).
        let error = if exponent < 32 { 0.9 } else { 1.0 } * (-f64::from(exponent)).exp2();
        let empty = build(Vec::new(), error, u64::MAX).unwrap();
        assert_eq!(
            (empty.items(), empty.seed(), empty.slots()),
            (0, FIRST_SEED, 128)
        );
        for keys in [vec![3u64], vec![3, 4], vec![4, 3, 4], keys_of("w", 3)] {
            let f = build(keys.clone(), error, u64::MAX).unwrap();
            assert_eq!(f.seed(), FIRST_SEED, "{exponent} {keys:?}");
            assert!(keys.iter().all(|&k| f.contains(k)), "{exponent} {keys:?}");
        }
    }
}

#[test]
fn an_inconsistent_system_retries_with_the_next_seed_and_more_room() {
    // Found by search: of the sets s0: .. s29: of 50,000 keys, this one alone fails at
    // the first seed.
    let retried = build_with(
        keys_of("s28:", 50_000),
        0.01,
        u64::MAX,
        Encoding::StandardRibbon,
    )
    .unwrap();
    assert_eq!(retried.seed(), FIRST_SEED + 1);
    let Layout::Ribbon(layout) = retried.layout() else {
        panic!("a ribbon");
    };
    assert_eq!(layout, Ribbon::for_items(50_000, retried.seed(), 6, 0.01));
    let again = StaticFilter::from_parts(
        retried.seed,
        retried.items,
        retried.bits,
        retried.error,
        retried.layout,
        retried.data.clone(),
        0,
        retried.checksum,
    );
    assert_eq!(again.as_ref(), Some(&retried));
    // Whatever the set, the last attempts have room enough.
    let last = Ribbon::for_items(1_000_000, MAX_ATTEMPTS - 1, 6, 0.01);
    assert!(last.slots() as f64 > 1.15e6, "{}", last.slots());
}

#[test]
fn rdb_and_scandump_round_trip_and_refuse_damage() {
    let cases = [
        (0u64, 0.01),
        (1, 0.2),
        (3000, 1e-4),
        (1000, 0.01),
        (20_000, 1e-4),
    ];
    for ((n, error), encoding) in cases
        .into_iter()
        .flat_map(|c| [(c, Encoding::Ribbon), (c, Encoding::StandardRibbon)])
    {
        let f = build_with(keys_of("item:", n), error, u64::MAX, encoding).unwrap();
        let mut fields = Fields::default();
        save_static(&f, &mut fields);
        assert_eq!(
            load_static(&mut fields.clone(), STATIC_ENCODING).as_ref(),
            Some(&f)
        );
        // Under encoding 1 (no tag) the same fields are refused, and encoding 3's under
        // encoding 2; encoding 2's load under 2.
        assert_eq!(load_static(&mut fields.clone(), 1), None);
        let under2 = load_static(&mut fields.clone(), rdb::TAGGED_ENCODING);
        if encoding == Encoding::Ribbon {
            assert_eq!(under2, None);
        } else {
            assert_eq!(under2.as_ref(), Some(&f));
        }
        for i in 0..fields.fields.len() {
            let mut damaged = fields.clone();
            match &mut damaged.fields[i] {
                crate::rdb::Field::Unsigned(v) => *v ^= 1,
                crate::rdb::Field::Double(v) => *v *= 1.5,
                crate::rdb::Field::Buffer(b) if !b.is_empty() => b[0] ^= 1,
                crate::rdb::Field::Buffer(_) => continue,
            }
            assert_eq!(
                load_static(&mut damaged, STATIC_ENCODING),
                None,
                "field {i}"
            );
        }
        let seq = load_sequence(&f);
        let magic = match encoding {
            Encoding::Ribbon => dump::BUMPED_MAGIC,
            _ => dump::RIBBON_MAGIC,
        };
        assert_eq!(&seq[0].1[..4], magic);
        assert_eq!(dump::header_len(magic), Some(seq[0].1.len()));
        let mut loaded = dump::filter_from_header(&seq[0].1, u64::MAX).unwrap();
        for (iter, chunk) in &seq[1..] {
            dump::load_chunk(&mut loaded, *iter, chunk).unwrap();
        }
        assert_eq!(loaded, f);
        for byte in 4..seq[0].1.len() {
            let mut header = seq[0].1.clone();
            header[byte] ^= 0x10;
            // Refused, or (a larger bumped count: more data than the chunks bring) never
            // complete, so never answering.
            let refused = match dump::filter_from_header(&header, u64::MAX) {
                Err(_) => true,
                Ok(mut partial) => {
                    seq[1..]
                        .iter()
                        .any(|(iter, chunk)| dump::load_chunk(&mut partial, *iter, chunk).is_err())
                        || !partial.is_complete()
                }
            };
            assert!(refused || seq.len() == 1, "header byte {byte}");
        }
    }
}

#[test]
fn a_hostile_header_never_over_allocates() {
    let f = built(10, 0.01);
    let mut header = dump::header(&f);
    header[32..40].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    assert!(dump::filter_from_header(&header, 1 << 30).is_err());
    header[32..40].copy_from_slice(&(1u64 << 24).to_le_bytes());
    assert!(dump::filter_from_header(&header, 1 << 20).is_err());
    // Encoding 3: more bumped keys than items.
    let mut header = dump::header(&f);
    assert_eq!(&header[..4], dump::BUMPED_MAGIC);
    header[48..56].copy_from_slice(&(u64::MAX / 16).to_le_bytes());
    assert!(dump::filter_from_header(&header, u64::MAX).is_err());
    header[48..56].copy_from_slice(&11u64.to_le_bytes());
    assert!(dump::filter_from_header(&header, u64::MAX).is_err());
    header[48..56].copy_from_slice(&10u64.to_le_bytes());
    let partial = dump::filter_from_header(&header, u64::MAX).unwrap();
    assert_eq!(partial.data().len() as u64, partial.pending());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn no_false_negatives_and_deterministic(
        keys in proptest::collection::vec(any::<u64>(), 0..3000),
        exp in 1.1f64..20.0,
    ) {
        let error = (-exp).exp2();
        let f = build(keys.clone(), error, u64::MAX).unwrap();
        prop_assert!(keys.iter().all(|&k| f.contains(k)));
        prop_assert!(f.guaranteed_error() <= error);
        let mut reversed = keys.clone();
        reversed.reverse();
        prop_assert_eq!(build(reversed, error, u64::MAX).unwrap(), f);
    }
}

#[test]
fn contains_each_answers_as_contains() {
    // Large enough for the prefetching path (data over 1 MiB), and a small one.
    for (n, error) in [(400_000u64, 1e-6), (1000, 0.01)] {
        let f = built(n, error);
        let keys: Vec<u64> = (0..20_000u64)
            .map(|i| {
                item_key(format!("{}{}", if i % 3 == 0 { "item:" } else { "x" }, i).as_bytes())
            })
            .collect();
        let mut answers = Vec::new();
        f.contains_each(&keys, |hit| answers.push(hit));
        let one_by_one: Vec<bool> = keys.iter().map(|&k| f.contains(k)).collect();
        assert_eq!(answers, one_by_one, "{n}");
        for (i, &hit) in answers.iter().enumerate() {
            if i % 3 == 0 && (i as u64) < n {
                assert!(hit, "item:{i} of {n}");
            }
        }
    }
}

proptest! {
    #[test]
    fn parity_is_the_count_of_ones_mod_2(x in any::<u128>()) {
        prop_assert_eq!(ribbon::parity(x), x.count_ones() & 1);
    }
}

/// The bit-sliced lookup answers as the column-at-a-time one on any bytes: every width,
/// mixed and unmixed layouts (one block: every key starts at offset 0 in the only block;
/// many: keys in the last block), random data (some keys match by chance at few columns).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[test]
fn bit_sliced_lookups_answer_as_one_column_at_a_time() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut agreed, mut matched) = (0u64, 0u64);
    for r in 1..=ribbon::MAX_COLUMNS {
        for (blocks, lower_blocks) in [(1, 0), (1, 1), (3, 1), (6, 0), (6, 6), (9, 4)] {
            // At 32 columns every block has 32 (a consistent layout has no wider one).
            let layout = Ribbon {
                blocks,
                lower_blocks: if r == ribbon::MAX_COLUMNS {
                    blocks
                } else {
                    lower_blocks
                },
            };
            let len = layout.data_len(r).unwrap() as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            for _ in 0..2000 {
                let h = next();
                let expected = ribbon::contains(&layout, r, &data, h);
                assert_eq!(
                    super::ribbon_query::contains(&layout, r, &data, h),
                    expected,
                    "r {r}, {layout:?}, h {h:#x}"
                );
                agreed += 1;
                matched += u64::from(expected);
            }
        }
    }
    // Both answers occur (at one and two columns, random bytes match often).
    assert!(
        matched > 1000 && matched < agreed / 2,
        "{matched} of {agreed}"
    );
}

/// The key whose hash under `seed` is `h` ([`mix`] inverted: its multipliers' inverses).
fn unmix(h: u64, seed: u64) -> u64 {
    let inverse = |a: u64| {
        // Newton's iteration doubles the correct low bits: 3 → 96.
        let mut x = a;
        for _ in 0..5 {
            x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        }
        x
    };
    let mut x = h ^ (h >> 33);
    x = x.wrapping_mul(inverse(0xc4ce_b9fe_1a85_ec53));
    x ^= x >> 33;
    x = x.wrapping_mul(inverse(0xff51_afd7_ed55_8ccd));
    x ^= x >> 33;
    x.wrapping_sub(seed)
}

/// Encoding 3 keeps the keys whose equations are inconsistent aside: at the room it
/// gives, some are bumped in 200,000 keys; each is found (the list), each other key by
/// the ribbon; the bumped hashes ascend and their blocks are marked; the rate is the
/// ribbon's.
#[test]
fn inconsistent_keys_are_bumped_and_found() {
    let keys = keys_of("b", 200_000);
    let f = build(keys.clone(), 0.0001, u64::MAX).unwrap();
    let Layout::Bumped(b) = f.layout() else {
        panic!("encoding 3");
    };
    assert_eq!(f.seed(), FIRST_SEED);
    assert!(b.bumped > 50 && b.bumped < 600, "{}", b.bumped);
    assert!(keys.iter().all(|&k| f.contains(k)));
    let ribbon_len = b.ribbon_len(f.bits()).unwrap() as usize;
    let (ribbon, rest) = f.data().split_at(ribbon_len);
    let list: Vec<u64> = rest[b.bitmap_len() as usize..]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(list.len() as u64, b.bumped);
    assert!(list.windows(2).all(|w| w[0] < w[1]));
    let missed: Vec<u64> = keys
        .iter()
        .map(|&k| mix(k, f.seed()))
        .filter(|&h| !ribbon::contains(&b.ribbon, f.bits(), ribbon, h))
        .collect();
    // Every bumped key's hash is listed (a bumped key may still meet the ribbon's check
    // by chance, at 2^-13).
    assert!(missed.iter().all(|h| list.binary_search(h).is_ok()));
    assert!(
        missed.len() as u64 + 1 >= b.bumped,
        "{} {}",
        missed.len(),
        b.bumped
    );
    assert_eq!(f.guaranteed_error(), b.ribbon.error_rate(f.bits()));
    let fp = fp_rate(&f, 2_000_000);
    assert!((0.7e-4..=1.3e-4).contains(&fp), "{fp}");
    // The same keys under encoding 2 need more room and no list.
    let standard = build_with(keys, 0.0001, u64::MAX, Encoding::StandardRibbon).unwrap();
    assert!(standard.mem_usage() > f.mem_usage());
}

/// A set whose hashes under the first seed all start in block 0 (crafted by inverting
/// the hash) would bump most keys: the next seed is tried, and builds without trouble.
#[test]
fn an_adversarial_set_is_rebuilt_with_the_next_seed() {
    let keys: Vec<u64> = (1..=2000u64).map(|i| unmix(i << 20, FIRST_SEED)).collect();
    assert!(keys.iter().all(|&k| mix(k, FIRST_SEED) < 1 << 32));
    let f = build(keys.clone(), 0.01, u64::MAX).unwrap();
    assert_eq!(f.seed(), FIRST_SEED + 1);
    let Layout::Bumped(b) = f.layout() else {
        panic!("encoding 3");
    };
    assert!(b.bumped * 64 <= 2000, "{}", b.bumped);
    assert!(keys.iter().all(|&k| f.contains(k)));
    // Under encoding 2 the first seed fails (inconsistent) and another one works.
    let standard = build_with(keys, 0.01, u64::MAX, Encoding::StandardRibbon).unwrap();
    assert!(standard.seed() > FIRST_SEED);
}
