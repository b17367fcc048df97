//! Unit and property tests of the Cuckoo SCANDUMP codec.

use super::*;
use crate::cuckoo::{CuckooHash, CuckooParams};
use proptest::prelude::*;

const BIG: u64 = u64::MAX;

fn hdr(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bs: u16,
    mi: u16,
    exp: u16,
) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [items, buckets, deletes, filters] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [bs, mi, exp] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

fn reserve(p: CuckooParams) -> CuckooFilter {
    CuckooFilter::new(p, BIG).unwrap()
}

#[test]
fn header_of_hello() {
    let mut f = reserve(CuckooParams {
        capacity: 1000,
        ..Default::default()
    });
    f.insert(&CuckooHash::new(b"hello"), BIG).unwrap();
    assert_eq!(
        hex::encode(header(&f)),
        "0100000000000000000200000000000000000000000000000100000000000000020014000100"
    );
    assert_eq!(hex::encode(header(&f)).len(), 76);
    let g = filter_from_header(&header(&f), BIG).unwrap();
    assert_eq!(g.debug_string(), f.debug_string());
    assert!(g.sub_filters()[0].data().iter().all(|&b| b == 0));
}

#[test]
fn header_rejections() {
    let ok = hdr(1, 512, 0, 1, 2, 20, 1);
    assert!(filter_from_header(&ok, BIG).is_ok());
    let e = |v: Vec<u8>| filter_from_header(&v, BIG).unwrap_err();
    let inv = CuckooError::InvalidParams;
    // Length.
    assert_eq!(e(vec![]), inv);
    assert_eq!(e(ok[..37].to_vec()), inv);
    let mut long = ok.clone();
    long.extend_from_slice(&[0; 8]); // the stale 46-byte layout
    assert_eq!(e(long), inv);
    // Bucket size (u16 field): 0 and 256..=65535.
    for bs in [0, 256, 1000, u16::MAX] {
        assert_eq!(e(hdr(1, 512, 0, 1, bs, 20, 1)), inv, "bs {bs}");
    }
    assert!(filter_from_header(&hdr(1, 4, 0, 1, 255, 20, 1), BIG).is_ok());
    // Bucket count: 0, not a power of two, ≥ 2^56.
    for nb in [0, 3, 1000, 1 << 56, 1 << 63, u64::MAX, (1 << 56) - 1] {
        assert_eq!(e(hdr(1, nb, 0, 1, 2, 20, 1)), inv, "nb {nb}");
    }
    // 2^40 buckets: fails cleanly under a ceiling, no allocation attempted.
    assert_eq!(
        filter_from_header(&hdr(1, 1 << 40, 0, 1, 1, 1, 1), 1 << 30).unwrap_err(),
        CuckooError::TooLarge
    );
    // 2^55 × 255 bytes: the allocator refuses.
    assert_eq!(
        e(hdr(1, 1 << 55, 0, 1, 255, 1, 1)),
        CuckooError::OutOfMemory
    );
    // Number of filters: 0, > 65535 (not truncated: 65537 would be 1 in RedisBloom).
    for nf in [0, 65536, 65537, 1 << 32, u64::MAX] {
        assert_eq!(e(hdr(1, 1, 0, nf, 1, 20, 1)), inv, "nf {nf}");
    }
    assert_eq!(
        filter_from_header(&hdr(1, 1, 0, 65535, 1, 20, 1), BIG)
            .unwrap()
            .num_filters(),
        65535
    );
    // Max iterations 0.
    assert_eq!(e(hdr(1, 512, 0, 1, 2, 0, 1)), inv);
    assert!(filter_from_header(&hdr(1, 512, 0, 1, 2, u16::MAX, 1), BIG).is_ok());
    // Expansion 0 with more than one filter; expansion > 32768; not a power of two.
    assert_eq!(e(hdr(1, 512, 0, 2, 2, 20, 0)), inv);
    assert!(filter_from_header(&hdr(1, 512, 0, 1, 2, 20, 0), BIG).is_ok());
    for exp in [32769, 65535, 3, 6] {
        assert_eq!(e(hdr(1, 512, 0, 1, 2, 20, exp)), inv, "exp {exp}");
    }
    // Grown sizes: 2^40 × 32768^2 exceeds 2^56 − 1.
    assert_eq!(e(hdr(1, 1 << 40, 0, 3, 1, 1, 32768)), CuckooError::Overflow);
    // Ceiling counts every sub-filter: 4 × 2 + 8 × 2 = 24 bytes.
    let two = hdr(1, 4, 0, 2, 2, 20, 2);
    assert!(filter_from_header(&two, 24).is_ok());
    assert_eq!(
        filter_from_header(&two, 23).unwrap_err(),
        CuckooError::TooLarge
    );
    // The test_cuckoo.py overflow header: 2^32 buckets, bs 1 → rejected by a 1 GiB ceiling.
    assert_eq!(
        filter_from_header(&hdr(0, 1 << 32, 0, 1, 1, 1, 1), 1 << 30).unwrap_err(),
        CuckooError::TooLarge
    );
    // Numbers of items/deletes are not validated.
    let f = filter_from_header(&hdr(u64::MAX, 8, u64::MAX, 1, 2, 20, 1), BIG).unwrap();
    assert_eq!((f.num_items(), f.num_deletes()), (u64::MAX, u64::MAX));
}

#[test]
fn header_layout_sizes() {
    let f = filter_from_header(&hdr(5, 8, 1, 3, 3, 7, 4), BIG).unwrap();
    let sizes: Vec<u64> = f.sub_filters().iter().map(|s| s.buckets()).collect();
    assert_eq!(sizes, vec![8, 32, 128]);
    assert_eq!(f.data_bytes(), 3 * (8 + 32 + 128));
    assert_eq!(header(&f).to_vec(), hdr(5, 8, 1, 3, 3, 7, 4));
}

/// 64 buckets × 2 then 128 × 2 (expansion 2): sub-filter sizes 128 and 256.
fn two_filters() -> CuckooFilter {
    filter_from_header(&hdr(1, 64, 0, 2, 2, 20, 2), BIG).unwrap()
}

#[test]
fn chunk_positions() {
    let f = two_filters();
    assert_eq!(chunk(&f, 1).map(|(n, d)| (n, d.len())), Some((129, 128)));
    assert_eq!(chunk(&f, 129).map(|(n, d)| (n, d.len())), Some((385, 256)));
    assert_eq!(chunk(&f, 385), None);
    // Mid sub-filter: the whole sub-filter from its start, next = pos + size.
    assert_eq!(chunk(&f, 50).map(|(n, d)| (n, d.len())), Some((178, 128)));
    assert_eq!(chunk(&f, 384).map(|(n, d)| (n, d.len())), Some((640, 256)));
    for pos in [0, -1, i64::MIN, i64::MAX, 386, 1 << 40] {
        assert_eq!(chunk(&f, pos), None, "{pos}");
    }
    // scandump wrapper.
    assert_eq!(scandump(&f, -1), None);
    assert_eq!(scandump(&f, 0), Some(ScanDump::Header(header(&f))));
    assert!(matches!(scandump(&f, 1), Some(ScanDump::Chunk(129, _))));
    assert_eq!(scandump(&f, 385), Some(ScanDump::End));
    let empty = filter_from_header(&hdr(0, 64, 0, 1, 2, 20, 2), BIG).unwrap();
    assert_eq!(scandump(&empty, 0), Some(ScanDump::End));
    assert_eq!(scandump(&empty, 1), Some(ScanDump::End));
    assert!(chunk(&empty, 1).is_some());
}

#[test]
fn chunk_of_large_sub_filter_is_split() {
    // 2^24 + 2^25 bytes: sub-filters of 16 MiB (whole) and 32 MiB (two pieces).
    let f = filter_from_header(&hdr(1, 1 << 23, 0, 2, 2, 1, 2), BIG).unwrap();
    // RedisBloom's 16 MiB written out: the constant itself is under test.
    let m: i64 = 16 << 20;
    assert_eq!(
        chunk(&f, 1).map(|(n, d)| (n, d.len())),
        Some((1 + m, m as usize))
    );
    assert_eq!(
        chunk(&f, 1 + m).map(|(n, d)| (n, d.len())),
        Some((1 + 2 * m, m as usize))
    );
    assert_eq!(
        chunk(&f, 1 + 2 * m).map(|(n, d)| (n, d.len())),
        Some((1 + 3 * m, m as usize))
    );
    assert_eq!(chunk(&f, 1 + 3 * m), None);
    // From a mid offset of the big one: up to the end of that sub-filter only.
    assert_eq!(
        chunk(&f, 1 + m + 10).map(|(n, d)| (n, d.len())),
        Some((1 + 2 * m + 10, m as usize))
    );
    assert_eq!(
        chunk(&f, 1 + 2 * m + 10).map(|(n, d)| (n, d.len())),
        Some((1 + 3 * m, m as usize - 10))
    );
}

#[test]
fn load_chunk_rejections() {
    let mut f = two_filters();
    let pristine = f.clone();
    let bad = CuckooError::BadChunk;
    assert_eq!(load_chunk(&mut f, 129, &[]), Err(bad));
    for pos in [0, -1, i64::MIN] {
        assert_eq!(load_chunk(&mut f, pos, b"1"), Err(bad), "{pos}");
    }
    // pos − 1 < len.
    assert_eq!(load_chunk(&mut f, 4, b"abcd"), Err(bad));
    assert_eq!(load_chunk(&mut f, 4, &[0u8; 37]), Err(bad));
    assert_eq!(load_chunk(&mut f, 5, b"abcd"), Ok(())); // offset 0
                                                        // Crossing the end of a sub-filter.
    assert_eq!(load_chunk(&mut f, 1 + 127 + 2, b"ab"), Err(bad));
    // Past the end: huge positions are rejected unless they land inside the last one.
    assert_eq!(load_chunk(&mut f, i64::MAX, b"1"), Err(bad));
    assert_eq!(load_chunk(&mut f, 922337203685477588, b"1"), Err(bad));
    assert_eq!(load_chunk(&mut f, i64::MAX, &[1u8; 300]), Err(bad));
    // The whole data of a sub-filter at the wrong place.
    assert_eq!(load_chunk(&mut f, 129 + 1, &[1u8; 128]), Err(bad));
    let mut g = pristine.clone();
    assert_eq!(load_chunk(&mut g, 129, &[1u8; 128]), Ok(()));
    assert!(g.sub_filters()[0].data().iter().all(|&b| b == 1));
    assert_eq!(load_chunk(&mut g, 385, &[2u8; 256]), Ok(()));
    assert!(g.sub_filters()[1].data().iter().all(|&b| b == 2));
    // Too big for any sub-filter.
    assert_eq!(load_chunk(&mut g, 1000, &[3u8; 257]), Err(bad));
}

#[test]
fn load_chunk_past_the_end_lands_in_last_sub_filter() {
    // Total size 384; offset 384 + 10 → last sub-filter (256 bytes) at offset 10.
    let mut f = two_filters();
    let pos = 384 + 10 + 4 + 1;
    assert_eq!(load_chunk(&mut f, pos, &[9, 9, 9, 9]), Ok(()));
    assert_eq!(&f.sub_filters()[1].data()[10..14], &[9, 9, 9, 9]);
    assert!(f.sub_filters()[0].data().iter().all(|&b| b == 0));
    // Offset 384 + 254 with 4 bytes crosses the end of the last one: rejected.
    let pos = 384 + 254 + 4 + 1;
    assert_eq!(load_chunk(&mut f, pos, &[7; 4]), Err(CuckooError::BadChunk));
    // Offset 384 + 256 + 1: reduced offset 257 ≥ 256: rejected.
    assert_eq!(
        load_chunk(&mut f, 384 + 257 + 1 + 1, &[7]),
        Err(CuckooError::BadChunk)
    );
}

/// Header + every chunk, as the AOF rewrite emits them (also for an empty filter).
fn dump(f: &CuckooFilter) -> (Vec<u8>, Vec<(i64, Vec<u8>)>) {
    let mut chunks = Vec::new();
    let mut pos = 1;
    while let Some((next, data)) = chunk(f, pos) {
        chunks.push((next, data.to_vec()));
        pos = next;
    }
    (header(f).to_vec(), chunks)
}

fn restore(h: &[u8], chunks: &[(i64, Vec<u8>)]) -> Result<CuckooFilter, CuckooError> {
    let mut f = filter_from_header(h, BIG)?;
    for (pos, data) in chunks {
        load_chunk(&mut f, *pos, data)?;
    }
    Ok(f)
}

#[test]
fn round_trip_with_many_sub_filters() {
    let mut f = reserve(CuckooParams {
        capacity: 4,
        bucket_size: 1,
        ..Default::default()
    });
    for i in 0..2000u32 {
        f.insert(&CuckooHash::new(i.to_string().as_bytes()), BIG)
            .unwrap();
    }
    assert!(f.num_filters() > 32);
    let (h, chunks) = dump(&f);
    assert_eq!(chunks.len(), f.num_filters());
    assert_eq!(restore(&h, &chunks).unwrap(), f);
}

/// Found by fuzz/cf_dump (a slow unit): with 65535 sub-filters every chunk walked the
/// list, so a full dump and restore (an AOF rewrite) was quadratic.
#[test]
fn many_equal_sub_filters_dump_and_restore_in_linear_time() {
    let mut f = filter_from_header(&hdr(7, 1, 0, 65535, 2, 20, 1), BIG).unwrap();
    for i in 0..65535usize {
        f.overwrite(i, i % 2, &[(i % 255) as u8 + 1]);
    }
    let started = std::time::Instant::now();
    let mut copy = filter_from_header(&header(&f), BIG).unwrap();
    let mut pos = 1;
    let mut chunks = 0;
    while let Some((next, data)) = chunk(&f, pos) {
        load_chunk(&mut copy, next, data).unwrap();
        pos = next;
        chunks += 1;
    }
    assert_eq!(chunks, 65535);
    assert_eq!(copy, f);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Past the end: the RedisBloom quirk still lands in the last sub-filter.
    let total = 2 * 65535;
    assert_eq!(load_chunk(&mut copy, total + 1 + 1 + 1, &[9]), Ok(()));
    assert_eq!(copy.sub_filters()[65534].data()[1], 9);
    assert_eq!(chunk(&f, total + 1), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn dump_then_load_is_identity(
        bs in 1u16..=5,
        mi in 1u16..=40,
        exp in 0u16..=8,
        extra in 0u64..200,
        items in proptest::collection::vec(any::<u16>(), 0..400),
        dels in proptest::collection::vec(any::<u16>(), 0..100),
    ) {
        let mut f = reserve(CuckooParams {
            capacity: 2 * u64::from(bs) + extra,
            bucket_size: bs,
            max_iterations: mi,
            expansion: exp,
        });
        for i in &items {
            let _ = f.insert(&CuckooHash::new(&i.to_le_bytes()), BIG);
        }
        for i in &dels {
            f.delete(&CuckooHash::new(&i.to_le_bytes()));
        }
        let (h, chunks) = dump(&f);
        prop_assert_eq!(restore(&h, &chunks).unwrap(), f.clone());
        // Through the SCANDUMP cursor protocol too (non-empty filters only).
        let mut it = 0;
        let mut g: Option<CuckooFilter> = None;
        loop {
            match scandump(&f, it).unwrap() {
                ScanDump::Header(h) => {
                    g = Some(filter_from_header(&h, BIG).unwrap());
                    it = 1;
                }
                ScanDump::Chunk(next, data) => {
                    load_chunk(g.as_mut().unwrap(), next, data).unwrap();
                    it = next;
                }
                ScanDump::End => break,
            }
        }
        if f.num_items() != 0 {
            prop_assert_eq!(g.unwrap(), f);
        } else {
            prop_assert!(g.is_none());
        }
    }

    #[test]
    fn arbitrary_header_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
        let _ = filter_from_header(&bytes, 1 << 20);
    }
}

/// Chunks at any position with any data (real chunks moved and edited among them):
/// a refused chunk is `BadChunk` and changes nothing, an accepted one changes no size.
#[test]
fn arbitrary_chunks_never_panic() {
    use crate::testing::{apply_byte_edits, byte_edits, run_counting};
    let source = two_filters();
    let (_, real) = dump(&source);
    let real_chunk = (
        any::<usize>(),
        prop_oneof![3 => Just(0i64), 1 => -3i64..3],
        byte_edits(),
    )
        .prop_map(move |(pick, delta, edits)| {
            let (pos, data) = &real[pick % real.len()];
            (pos + delta, apply_byte_edits(data, &edits))
        });
    let strategy = prop_oneof![
        1 => (
            prop_oneof![any::<i64>(), 0i64..2000, (0i64..8).prop_map(|k| i64::MAX - k)],
            proptest::collection::vec(any::<u8>(), 0..600),
        ),
        2 => real_chunk,
    ];
    run_counting(
        "cuckoo arbitrary_chunks_never_panic",
        400,
        100,
        strategy,
        |(pos, data)| {
            let mut f = source.clone();
            let accepted = match load_chunk(&mut f, pos, &data) {
                Ok(()) => {
                    prop_assert!(!data.is_empty());
                    prop_assert_eq!(f.data_bytes(), source.data_bytes());
                    prop_assert_eq!(header(&f), header(&source));
                    true
                }
                Err(e) => {
                    prop_assert_eq!(e, CuckooError::BadChunk);
                    prop_assert_eq!(&f, &source);
                    false
                }
            };
            let _ = chunk(&f, pos);
            let _ = scandump(&f, pos);
            Ok(accepted)
        },
    );
}

/// Headers that start as valid ones (every bucket size, iteration count, expansion and
/// sub-filter count a filter can have) and then have bytes changed: an accepted header
/// is kept byte for byte, gives zeroed data within the ceiling; an unchanged one is
/// refused only for its size.
#[test]
fn plausible_header_never_panics() {
    const LIMIT: u64 = 1 << 20;
    let valid = (
        any::<u64>(),
        0u32..14,
        any::<u64>(),
        1u64..5,
        prop_oneof![1u16..=8, 1u16..=255],
        prop_oneof![1u16..=100, 1u16..=u16::MAX],
        prop_oneof![Just(0u16), (0u32..16).prop_map(|s| 1u16 << s)],
    );
    let counts = crate::testing::run_counting(
        "plausible_header_never_panics",
        600,
        150,
        (valid, crate::testing::byte_edits()),
        |((items, nb_shift, deletes, nf, bs, mi, exp), edits)| {
            let nf = if exp == 0 { 1 } else { nf };
            let nb = 1u64 << nb_shift;
            let h = hdr(items, nb, deletes, nf, bs, mi, exp);
            let size: u128 = (0..nf as u32)
                .map(|i| u128::from(nb * u64::from(bs)) * u128::from(exp.max(1)).pow(i))
                .sum();
            let edited = crate::testing::apply_byte_edits(&h, &edits);
            match filter_from_header(&edited, LIMIT) {
                Ok(f) => {
                    prop_assert!(f.data_bytes() <= LIMIT);
                    prop_assert_eq!(header(&f).to_vec(), edited);
                    prop_assert!(f
                        .sub_filters()
                        .iter()
                        .all(|s| s.data().iter().all(|&b| b == 0)));
                    if h == header(&f) {
                        prop_assert_eq!(u128::from(f.data_bytes()), size);
                    }
                    Ok(true)
                }
                Err(e) => {
                    if edited == h {
                        prop_assert!(size > u128::from(LIMIT), "valid header refused: {:?}", e);
                        prop_assert!(matches!(e, CuckooError::TooLarge | CuckooError::Overflow));
                    }
                    Ok(false)
                }
            }
        },
    );
    // The edits must reach refusals too.
    assert!(counts.refused >= 100, "{counts:?}");
}
