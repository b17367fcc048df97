//! RedisBloom 8.12's cell sizes: counters of 1, 2, 4 and 8 bytes, the atomic arithmetic
//! (overflow and underflow refused whole, the count capped), merges of equal cell sizes,
//! and the two RDB encodings.

use super::rdb::{load_cms, save_cms, save_cms_v1, CMS_CELL_SIZE_ENCODING, CMS_ENCODING};
use super::*;
use crate::rdb::{Field, Fields};
use proptest::prelude::*;

const SIZES: [u8; 4] = [1, 2, 4, 8];

fn sketch(width: u64, depth: u64, cell_size: u8) -> CountMinSketch {
    CountMinSketch::new(width, depth, cell_size, u64::MAX).unwrap()
}

/// Counter `cell` read from the stored bytes (little-endian, `cell_size` bytes).
fn counter(cms: &CountMinSketch, cell: usize) -> u64 {
    let size = usize::from(cms.cell_size());
    let mut bytes = [0u8; 8];
    bytes[..size].copy_from_slice(&cms.counter_bytes_le()[cell * size..(cell + 1) * size]);
    u64::from_le_bytes(bytes)
}

/// The cells of `item` in a sketch of `width` (row-major, row `r` seeded with `r`).
fn cells_of(item: &[u8], width: u64, depth: u64) -> Vec<usize> {
    (0..depth)
        .map(|row| (u64::from(murmur2::murmur2(item, row as u32)) % width + row * width) as usize)
        .collect()
}

#[test]
fn cell_sizes_are_1_2_4_and_8() {
    for n in 0..=9 {
        assert_eq!(is_cell_size(n), [1, 2, 4, 8].contains(&n), "{n}");
    }
    assert_eq!(cell_max(1), 255);
    assert_eq!(cell_max(2), 65_535);
    assert_eq!(cell_max(4), 4_294_967_295);
    assert_eq!(cell_max(8), 9_223_372_036_854_775_807);
    assert_eq!(
        CountMinSketch::new(3, 2, 3, u64::MAX),
        Err(CmsError::InvalidDimensions)
    );
}

#[test]
fn counters_are_little_endian_of_the_cell_size() {
    for size in SIZES {
        let mut cms = sketch(7, 3, size);
        assert_eq!(cms.allocated_bytes(), 21 * u64::from(size));
        assert_eq!(cms.incr_by(b"foo", 200), Increment::Estimate(200));
        let cells = cells_of(b"foo", 7, 3);
        for cell in 0..21 {
            let want = if cells.contains(&cell) { 200 } else { 0 };
            assert_eq!(counter(&cms, cell), want, "size {size} cell {cell}");
        }
        let at = cells[0] * usize::from(size);
        assert_eq!(cms.counter_bytes_le()[at], 200);
        assert_eq!(cms.cell_size(), size);
    }
}

#[test]
fn memory_usage_counts_the_cells() {
    // 4 bytes: RedisBloom 2.4.20's 8 + 8 per counter; the others 8 + their bytes.
    for (size, usage) in [(1, 1008), (2, 2008), (4, 8008), (8, 8008)] {
        assert_eq!(sketch(100, 10, size).mem_usage(), usage, "{size}");
        assert!(CountMinSketch::new(100, 10, size, usage).is_ok());
        assert_eq!(
            CountMinSketch::new(100, 10, size, usage - 1),
            Err(CmsError::TooLarge)
        );
    }
}

#[test]
fn each_cell_size_holds_up_to_its_maximum_and_refuses_past_it() {
    for size in [1, 2, 8] {
        let max = cell_max(size);
        let mut cms = sketch(10, 4, size);
        assert_eq!(
            cms.incr_by(b"x", (max - 1) as i64),
            Increment::Estimate(max - 1)
        );
        assert_eq!(cms.incr_by(b"x", 1), Increment::Estimate(max));
        assert_eq!(cms.query(b"x"), max);
        let before = cms.clone();
        assert_eq!(cms.incr_by(b"x", 1), Increment::Overflow, "{size}");
        assert_eq!(
            cms, before,
            "size {size}: a refused increment changes nothing"
        );
        assert_eq!(cms.incr_by(b"x", i64::MAX), Increment::Overflow);
        assert_eq!(cms, before);
        // 0 is applied (nothing passes the maximum).
        assert_eq!(cms.incr_by(b"x", 0), Increment::Estimate(max));
        assert_eq!(cms.count(), max);
    }
}

#[test]
fn an_increment_is_refused_whole_when_one_row_would_overflow() {
    // `b` shares row 0's counter with `a` but not row 1's: a's 200 leaves no room for
    // 100 more in 1 byte in row 0 only; row 1's counter must not move either.
    let (width, depth) = (8, 2);
    let a = cells_of(b"a", width, depth);
    let b = (0..1000u32)
        .map(|i| format!("b{i}").into_bytes())
        .find(|b| {
            let cells = cells_of(b, width, depth);
            cells[0] == a[0] && cells[1] != a[1]
        })
        .unwrap();
    for (size, first, then) in [(1, 200, 100), (2, 65_000, 600)] {
        let mut cms = sketch(width, depth, size);
        cms.incr_by(b"a", first);
        let before = cms.clone();
        assert_eq!(cms.incr_by(&b, then), Increment::Overflow);
        assert_eq!(cms, before);
        assert_eq!(counter(&cms, cells_of(&b, width, depth)[1]), 0);
    }
}

#[test]
fn decrements_apply_only_when_every_counter_holds_enough() {
    for size in SIZES {
        let mut cms = sketch(10, 3, size);
        let empty = cms.clone();
        assert_eq!(cms.incr_by(b"x", -1), Increment::Underflow, "{size}");
        assert_eq!(cms, empty);
        cms.incr_by(b"x", 5);
        assert_eq!(cms.incr_by(b"x", -3), Increment::Estimate(2));
        assert_eq!(cms.count(), 2);
        let before = cms.clone();
        assert_eq!(cms.incr_by(b"x", -3), Increment::Underflow);
        assert_eq!(cms, before);
        assert_eq!(cms.incr_by(b"x", i64::MIN), Increment::Underflow);
        assert_eq!(cms.incr_by(b"x", -2), Increment::Estimate(0));
        assert_eq!(cms.count(), 0);
    }
}

#[test]
fn decrements_keep_the_count_at_least_0() {
    // Counters restored above the count: a decrement empties the count, no wrap.
    let cells = cells_of(b"x", 2, 2);
    let mut raw = vec![0u8; 4];
    for cell in cells {
        raw[cell] = 9;
    }
    let mut cms = CountMinSketch::from_parts(2, 2, 1, 1, raw).unwrap();
    assert_eq!(cms.incr_by(b"x", -4), Increment::Estimate(5));
    assert_eq!(cms.count(), 0);
}

#[test]
fn the_count_is_capped_at_i64_max() {
    let mut cms = sketch(1000, 2, 8);
    cms.incr_by(b"a", i64::MAX);
    assert_eq!(cms.count(), COUNT_CAP);
    assert_eq!(cms.incr_by(b"b", 5), Increment::Estimate(5));
    assert_eq!(cms.count(), COUNT_CAP);
    assert_eq!(cms.incr_by(b"b", -5), Increment::Estimate(0));
    assert_eq!(cms.count(), COUNT_CAP - 5);
    // 4-byte sketches keep 2.4.20's wrapping count for positive increments.
    let mut four = sketch(10, 2, 4);
    four.incr_by(b"a", i64::MAX);
    four.incr_by(b"a", i64::MAX);
    four.incr_by(b"a", 2);
    assert_eq!(four.count(), 0);
}

#[test]
fn an_8_byte_counter_above_i64_max_is_read_and_refuses_increments() {
    let cms = CountMinSketch::from_parts(1, 1, 0, 8, u64::MAX.to_le_bytes().to_vec());
    let mut cms = cms.unwrap();
    assert_eq!(cms.query(b"x"), u64::MAX);
    assert_eq!(cms.incr_by(b"x", 1), Increment::Overflow);
    assert_eq!(cms.incr_by(b"x", -1), Increment::Estimate(u64::MAX - 1));
    assert_eq!(
        cms.merge(&[(&cms, 1)]).unwrap_err(),
        CmsError::MergeOverflow
    );
}

#[test]
fn merges_need_equal_cell_sizes_and_stay_under_the_maximum() {
    for size in SIZES {
        let max = cell_max(size);
        let mut a = sketch(10, 3, size);
        a.incr_by(b"x", (max / 2 + 1) as i64);
        let mut dest = sketch(10, 3, size);
        dest.merge(&[(&a, 1)]).unwrap().apply(&mut dest);
        assert_eq!(dest.query(b"x"), max / 2 + 1);
        assert_eq!(
            dest.merge(&[(&a, 1), (&a, 1)]).unwrap_err(),
            CmsError::MergeOverflow,
            "{size}"
        );
        let mut exact = sketch(10, 3, size);
        exact.incr_by(b"x", (max / 2) as i64);
        let mut top = sketch(10, 3, size);
        top.merge(&[(&exact, 2), (&dest, 0)])
            .unwrap()
            .apply(&mut top);
        assert_eq!(top.query(b"x"), max - max % 2);
        for other in SIZES.into_iter().filter(|&o| o != size) {
            assert_eq!(
                dest.merge(&[(&sketch(10, 3, other), 1)]).unwrap_err(),
                CmsError::CellSizeDiffers
            );
        }
        // Dimensions are compared first.
        assert_eq!(
            dest.merge(&[(&sketch(11, 3, if size == 1 { 2 } else { 1 }), 1)])
                .unwrap_err(),
            CmsError::DimensionsDiffer
        );
    }
}

fn v1_stream(w: u64, d: u64, size: u64, len: usize) -> Fields {
    Fields {
        fields: vec![
            Field::Unsigned(w),
            Field::Unsigned(d),
            Field::Unsigned(7),
            Field::Unsigned(size),
            Field::Buffer(vec![1; len]),
        ],
        read_at: 0,
    }
}

#[test]
fn rdb_round_trips_each_cell_size() {
    for size in SIZES {
        let mut cms = sketch(5, 3, size);
        cms.incr_by(b"a", 100);
        cms.incr_by(b"b", 3);
        let mut fields = Fields::default();
        save_cms(&cms, &mut fields);
        let bytes = Field::Buffer(cms.counter_bytes_le().to_vec());
        let head = [Field::Unsigned(5), Field::Unsigned(3), Field::Unsigned(103)];
        let mut want = head.to_vec();
        want.push(bytes.clone());
        if size != 4 {
            // Encoding 0 with the cell size after the counters.
            want.push(Field::Unsigned(u64::from(size)));
        }
        assert_eq!(fields.fields, want, "{size}");
        assert_eq!(load_cms(&mut fields, CMS_ENCODING).as_ref(), Some(&cms));
        // RedisBloom 8.12's encoding 1: the cell size before the counters.
        let mut v1 = Fields::default();
        save_cms_v1(&cms, &mut v1);
        let mut want = head.to_vec();
        want.extend([Field::Unsigned(u64::from(size)), bytes]);
        assert_eq!(v1.fields, want);
        assert_eq!(load_cms(&mut v1, CMS_CELL_SIZE_ENCODING), Some(cms));
    }
}

#[test]
fn encoding_1_payloads_are_checked() {
    assert_eq!(
        load_cms(&mut v1_stream(3, 2, 2, 12), 1)
            .unwrap()
            .cell_size(),
        2
    );
    assert_eq!(
        load_cms(&mut v1_stream(3, 2, 4, 24), 1)
            .unwrap()
            .cell_size(),
        4
    );
    for (what, mut stream) in [
        ("cell size 0", v1_stream(3, 2, 0, 0)),
        ("cell size 3", v1_stream(3, 2, 3, 18)),
        ("cell size 16", v1_stream(3, 2, 16, 96)),
        ("cell size 2^32 + 2", v1_stream(3, 2, (1 << 32) + 2, 12)),
        ("short", v1_stream(3, 2, 8, 47)),
        ("long", v1_stream(3, 2, 1, 7)),
        ("4-byte length for 8-byte cells", v1_stream(3, 2, 8, 24)),
        ("width 0", v1_stream(0, 2, 1, 0)),
        ("a product that wraps", v1_stream(1 << 61, 8, 8, 0)),
        ("an over-allocation", v1_stream(1 << 40, 1 << 20, 8, 16)),
    ] {
        assert!(load_cms(&mut stream, 1).is_none(), "{what}");
    }
    // Encoding 1's order read as encoding 0 (the cell size is not a string), and encoding
    // 0's read as encoding 1, are refused; so is an encoding 2.
    assert!(load_cms(&mut v1_stream(3, 2, 2, 12), 0).is_none());
    assert!(load_cms(&mut v1_stream(3, 2, 2, 12), 2).is_none());
    let mut v0 = Fields::default();
    save_cms(&sketch(3, 2, 4), &mut v0);
    assert!(load_cms(&mut v0, 1).is_none());
}

#[test]
fn encoding_0_trailers_are_checked() {
    let trailer = |len: usize, size: u64| Fields {
        fields: vec![
            Field::Unsigned(3),
            Field::Unsigned(2),
            Field::Unsigned(0),
            Field::Buffer(vec![0; len]),
            Field::Unsigned(size),
        ],
        read_at: 0,
    };
    assert!(load_cms(&mut trailer(6, 1), 0).is_some());
    assert!(load_cms(&mut trailer(48, 8), 0).is_some());
    // A 4 is never written as a trailer; a size that does not match the length, or none.
    assert!(load_cms(&mut trailer(6, 4), 0).is_none());
    assert!(load_cms(&mut trailer(6, 2), 0).is_none());
    assert!(load_cms(&mut trailer(12, 3), 0).is_none());
    assert!(load_cms(&mut trailer(7, 1), 0).is_none());
}

proptest! {
    /// Any sequence of increments and decrements: a refused one leaves the sketch equal; an
    /// applied one changes the count by its amount; every counter is the sum of what was
    /// applied to the items hashed to it; the RDB fields load back equal.
    #[test]
    fn atomic_arithmetic_holds(
        size in proptest::sample::select(SIZES.to_vec()),
        ops in proptest::collection::vec((0u8..6, -300i64..300), 1..120),
    ) {
        let mut cms = sketch(4, 3, size);
        let mut net = [0i64; 6];
        for (item, delta) in ops {
            let before = cms.clone();
            match cms.incr_by(&[item], delta) {
                Increment::Estimate(e) => {
                    net[usize::from(item)] += delta;
                    prop_assert_eq!(e, cms.query(&[item]));
                    prop_assert_eq!(cms.count() as i64, before.count() as i64 + delta);
                }
                _ => prop_assert_eq!(&cms, &before),
            }
        }
        for cell in 0..12 {
            let sum: i64 = (0..6u8)
                .filter(|&i| cells_of(&[i], 4, 3).contains(&cell))
                .map(|i| net[usize::from(i)])
                .sum();
            prop_assert_eq!(counter(&cms, cell) as i64, sum);
        }
        let mut fields = Fields::default();
        save_cms(&cms, &mut fields);
        prop_assert_eq!(load_cms(&mut fields, CMS_ENCODING), Some(cms));
    }
}
