//! CF.SCANDUMP / CF.LOADCHUNK wire format (COMPAT §7.3–7.5), byte-identical with
//! RedisBloom 2.4.20, with HEAD's validation and the extra hardening of the COMPAT decisions
//! (more than 65535 sub-filters rejected, every size computation overflow-checked, fallible
//! allocation under a memory ceiling, no out-of-bounds write and no panic on any input).
//!
//! Header (38 bytes, little-endian, packed): off 0 u64 numItems; off 8 u64 numBuckets (base);
//! off 16 u64 numDeletes; off 24 u64 numFilters; off 32 u16 bucketSize; off 34 u16
//! maxIterations; off 36 u16 expansion.
//!
//! Chunks: positions are 1 + byte offset into the concatenation of the sub-filters' data,
//! oldest first. A chunk is returned with the position just *after* it, and LOADCHUNK gets
//! that same position back.
//!
//! Command-layer rules that are not here: SCANDUMP with an iterator < 0 is `Invalid
//! position`; a filter with `num_items() == 0` answers `[0, nil]` even for iterator 0
//! ([`scandump`] implements both, so it can be used directly); the AOF rewrite emits the
//! header and every chunk even when the filter is empty (use [`header`] and [`chunk`]).
//! LOADCHUNK with iterator 1 on an empty key: data of length ≠ 38 is `Invalid header`
//! (check [`HEADER_LEN`] first), any error of [`filter_from_header`] is `Couldn't create
//! filter!`; any error of [`load_chunk`] is `Couldn't load chunk!`.

use crate::cuckoo::{CuckooError, CuckooFilter, CuckooParts};

/// Exact length of a CF dump header.
pub const HEADER_LEN: usize = 38;
/// Largest chunk SCANDUMP returns (sub-filters up to this size are returned whole).
pub const MAX_CHUNK: u64 = 16 * 1024 * 1024;

/// The 38-byte header of a filter (SCANDUMP iterator 0, AOF rewrite, LOADCHUNK 1).
pub fn header(f: &CuckooFilter) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&f.num_items().to_le_bytes());
    h[8..16].copy_from_slice(&f.num_buckets().to_le_bytes());
    h[16..24].copy_from_slice(&f.num_deletes().to_le_bytes());
    h[24..32].copy_from_slice(&(f.num_filters() as u64).to_le_bytes());
    h[32..34].copy_from_slice(&f.bucket_size().to_le_bytes());
    h[34..36].copy_from_slice(&f.max_iterations().to_le_bytes());
    h[36..38].copy_from_slice(&f.expansion().to_le_bytes());
    h
}

fn u64_at(b: &[u8; HEADER_LEN], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

fn u16_at(b: &[u8; HEADER_LEN], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// Decode and validate a header and allocate the (zeroed) sub-filters it describes
/// (LOADCHUNK iterator 1). Checks (COMPAT §7.3, HEAD's list plus hardening): length exactly
/// 38; bucketSize 1..=255; maxIterations ≥ 1; expansion ≤ 32768 and 0 or a power of two;
/// numFilters 1..=65535 (no 16-bit truncation); not (expansion 0 and numFilters > 1);
/// numBuckets a power of two in 1..=2^56−1; every sub-filter's `numBuckets × expansion^i`
/// within 2^56−1 and its byte size without overflow; the total within `max_bytes`
/// (`TooLarge`) — all before any allocation; then fallible allocation (`OutOfMemory`).
/// numItems / numDeletes are taken as they are.
pub fn filter_from_header(bytes: &[u8], max_bytes: u64) -> Result<CuckooFilter, CuckooError> {
    let b: &[u8; HEADER_LEN] = bytes.try_into().map_err(|_| CuckooError::InvalidParams)?;
    let parts = CuckooParts {
        num_items: u64_at(b, 0),
        num_buckets: u64_at(b, 8),
        num_deletes: u64_at(b, 16),
        bucket_size: u64::from(u16_at(b, 32)),
        max_iterations: u64::from(u16_at(b, 34)),
        expansion: u64::from(u16_at(b, 36)),
    };
    CuckooFilter::with_layout(parts, u64_at(b, 24), max_bytes)
}

/// Find the sub-filter holding byte `offset` of the concatenated data: `(index, offset
/// within it)`, or `Err(rest)` when past the end (`rest` = offset − total size).
fn locate(f: &CuckooFilter, mut offset: u64) -> Result<(usize, u64), u64> {
    let subs = f.sub_filters();
    // Expansion 1: every sub-filter has the same size (the layout is checked on every
    // load), and there can be 65535 of them — a walk per chunk would make a full dump or an
    // AOF rewrite quadratic.
    if let (1, Some(first), Some(last)) = (f.expansion(), subs.first(), subs.last()) {
        let size = first.data().len() as u64;
        if size > 0 && last.data().len() as u64 == size {
            let i = offset / size;
            if i >= subs.len() as u64 {
                return Err(offset - size * subs.len() as u64);
            }
            return Ok((i as usize, offset % size));
        }
    }
    for (i, sub) in subs.iter().enumerate() {
        let size = sub.data().len() as u64;
        if offset < size {
            return Ok((i, offset));
        }
        offset -= size;
    }
    Err(offset)
}

/// SCANDUMP chunk at `pos` ≥ 1 (COMPAT §7.4): `Some((next, data))`, or `None` for the end
/// (`[0, nil]`) — also for `pos` ≤ 0, which the command layer handles before calling.
/// A sub-filter of at most 16 MiB is returned whole, from its start, even when `pos` points
/// into its middle, with `next = pos + its size`; a larger one is returned from `pos` in
/// pieces of at most 16 MiB that never cross into the next sub-filter.
pub fn chunk(f: &CuckooFilter, pos: i64) -> Option<(i64, &[u8])> {
    if pos < 1 {
        return None;
    }
    let (i, off) = locate(f, (pos - 1) as u64).ok()?;
    let data = f.sub_filters()[i].data();
    let size = data.len() as u64;
    let piece = if size <= MAX_CHUNK {
        data
    } else {
        let len = MAX_CHUNK.min(size - off);
        // off < size and off + len ≤ size: in bounds.
        &data[off as usize..(off + len) as usize]
    };
    let next = pos.checked_add(i64::try_from(piece.len()).ok()?)?;
    Some((next, piece))
}

/// LOADCHUNK of `data` at `pos` (COMPAT §7.4), with RedisBloom's checks: empty data,
/// `pos ≤ 0` and `pos − 1 < len` are rejected; the start offset `pos − len − 1` is located
/// oldest → newest, and — RedisBloom quirk — an offset past the end of all sub-filters lands
/// in the last sub-filter at `offset − total size`; the write must then fit inside that
/// sub-filter. Never writes out of bounds; every failure is `BadChunk`.
pub fn load_chunk(f: &mut CuckooFilter, pos: i64, data: &[u8]) -> Result<(), CuckooError> {
    let len = data.len() as u64;
    if len == 0 || pos <= 0 {
        return Err(CuckooError::BadChunk);
    }
    let before = (pos - 1) as u64;
    if before < len {
        return Err(CuckooError::BadChunk);
    }
    let (i, off) = match locate(f, before - len) {
        Ok(found) => found,
        Err(rest) => (
            f.num_filters()
                .checked_sub(1)
                .ok_or(CuckooError::BadChunk)?,
            rest,
        ),
    };
    let end = off.checked_add(len).ok_or(CuckooError::BadChunk)?;
    if end > f.sub_filters()[i].data().len() as u64 {
        return Err(CuckooError::BadChunk);
    }
    // end ≤ data length, so both bounds fit in usize.
    f.overwrite(i, off as usize, data);
    Ok(())
}

/// One CF.SCANDUMP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanDump<'a> {
    /// `[1, header]` (iterator 0 of a non-empty filter).
    Header([u8; HEADER_LEN]),
    /// `[next, data]`.
    Chunk(i64, &'a [u8]),
    /// `[0, nil]`.
    End,
}

/// The whole CF.SCANDUMP reply logic after the key lookup (COMPAT §2.9): `None` for an
/// iterator < 0 (`Invalid position`); `End` for a filter with no items (even at 0);
/// `Header` at 0; otherwise [`chunk`].
pub fn scandump(f: &CuckooFilter, iter: i64) -> Option<ScanDump<'_>> {
    if iter < 0 {
        return None;
    }
    if f.num_items() == 0 {
        return Some(ScanDump::End);
    }
    if iter == 0 {
        return Some(ScanDump::Header(header(f)));
    }
    Some(match chunk(f, iter) {
        Some((next, data)) => ScanDump::Chunk(next, data),
        None => ScanDump::End,
    })
}

#[cfg(test)]
mod tests {
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
                            prop_assert!(matches!(
                                e,
                                CuckooError::TooLarge | CuckooError::Overflow
                            ));
                        }
                        Ok(false)
                    }
                }
            },
        );
        // The edits must reach refusals too.
        assert!(counts.refused >= 100, "{counts:?}");
    }
}

/// Replays of RedisBloom 2.4.20's reference fixtures (tests/fixtures/redisbloom-2.4.20):
/// the commands that built each CF key run through this core must give the same replies,
/// the same query answers and a byte-identical SCANDUMP transcript; loading the transcript
/// must give the same filter.
#[cfg(test)]
mod fixture_tests {
    use super::*;
    use crate::cuckoo::{CuckooHash, CuckooParams, DEFAULT_MAX_EXPANSIONS};
    use serde_json::{json, Value};
    use std::collections::HashMap;

    const BIG: u64 = u64::MAX;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../tests/fixtures/redisbloom-2.4.20/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    fn arg(v: &Value) -> Vec<u8> {
        match v {
            Value::String(s) => s
                .chars()
                .map(|c| u8::try_from(u32::from(c)).expect("latin-1 argument"))
                .collect(),
            Value::Object(o) => hex::decode(o["hex"].as_str().unwrap()).unwrap(),
            other => panic!("bad argv element {other}"),
        }
    }

    /// Expand an item-set spec to (item bytes, exception key).
    fn items(spec: &Value, sets: &Value) -> Vec<(Vec<u8>, String)> {
        let num = |k: &str, d: i64| spec.get(k).and_then(Value::as_i64).unwrap_or(d);
        if let Some(fmt) = spec.get("format").and_then(Value::as_str) {
            let step = num("step", 1);
            let mut out = Vec::new();
            let mut n = num("start", 0);
            while n < num("stop", 0) {
                let s = fmt.replace("{n}", &n.to_string());
                out.push((s.clone().into_bytes(), s));
                n += step;
            }
            out
        } else {
            let set = sets[spec["set"].as_str().unwrap()].as_array().unwrap();
            let start = num("start", 0) as usize;
            let stop = num("stop", set.len() as i64) as usize;
            set[start..stop]
                .iter()
                .map(|h| {
                    let h = h.as_str().unwrap();
                    (hex::decode(h).unwrap(), h.to_string())
                })
                .collect()
        }
    }

    /// A test-only stand-in for the Redis layer: just enough of CF.* (2.4.20 replies) to
    /// replay the fixtures.
    #[derive(Default)]
    struct Db {
        keys: HashMap<Vec<u8>, CuckooFilter>,
    }

    fn err(s: &str) -> Value {
        json!({ "error": s })
    }

    fn option(argv: &[Vec<u8>], name: &str) -> Option<u16> {
        argv.iter()
            .position(|a| a.eq_ignore_ascii_case(name.as_bytes()))
            .map(|i| std::str::from_utf8(&argv[i + 1]).unwrap().parse().unwrap())
    }

    impl Db {
        fn insert_one(f: &mut CuckooFilter, item: &[u8], nx: bool) -> Result<bool, CuckooError> {
            let h = CuckooHash::new(item);
            if nx {
                f.insert_if_absent(&h, BIG)
            } else {
                f.insert(&h, BIG).map(|()| true)
            }
        }

        fn exec(&mut self, argv: &[Vec<u8>]) -> Value {
            let cmd = String::from_utf8(argv[0].to_ascii_uppercase()).unwrap();
            let key = argv[1].clone();
            let num = |s: &[u8]| -> u64 { std::str::from_utf8(s).unwrap().parse().unwrap() };
            match cmd.as_str() {
                "TYPE" => match self.keys.get(&key) {
                    Some(_) => json!("MBbloomCF"),
                    None => json!("none"),
                },
                "CF.RESERVE" => {
                    if self.keys.contains_key(&key) {
                        return err("ERR item exists");
                    }
                    let p = CuckooParams {
                        capacity: num(&argv[2]),
                        bucket_size: option(argv, "BUCKETSIZE").unwrap_or(2),
                        max_iterations: option(argv, "MAXITERATIONS").unwrap_or(20),
                        expansion: option(argv, "EXPANSION").unwrap_or(1),
                    };
                    self.keys.insert(key, CuckooFilter::new(p, BIG).unwrap());
                    json!("OK")
                }
                "CF.ADD" | "CF.ADDNX" => {
                    let f = self.keys.entry(key).or_insert_with(|| {
                        CuckooFilter::new(CuckooParams::default(), BIG).unwrap()
                    });
                    if f.num_filters() >= DEFAULT_MAX_EXPANSIONS {
                        return err("Maximum expansions reached");
                    }
                    match Self::insert_one(f, &argv[2], cmd.ends_with('X')) {
                        Ok(true) => json!(1),
                        Ok(false) => json!(0),
                        Err(CuckooError::NoSpace) => err("Filter is full"),
                        Err(_) => err("Memory allocation failure"),
                    }
                }
                "CF.INSERT" | "CF.INSERTNX" => {
                    let mut capacity = 1024;
                    let mut i = 2;
                    while !argv[i].eq_ignore_ascii_case(b"ITEMS") {
                        if argv[i].eq_ignore_ascii_case(b"CAPACITY") {
                            capacity = num(&argv[i + 1]);
                            i += 1;
                        }
                        i += 1;
                    }
                    let f = self.keys.entry(key).or_insert_with(|| {
                        CuckooFilter::new(
                            CuckooParams {
                                capacity,
                                ..Default::default()
                            },
                            BIG,
                        )
                        .unwrap()
                    });
                    if f.num_filters() >= DEFAULT_MAX_EXPANSIONS {
                        return err("Maximum expansions reached");
                    }
                    let nx = cmd.ends_with('X');
                    let replies: Vec<Value> = argv[i + 1..]
                        .iter()
                        .map(|it| match Self::insert_one(f, it, nx) {
                            Ok(true) => json!(1),
                            Ok(false) => json!(0),
                            Err(_) => json!(-1),
                        })
                        .collect();
                    json!(replies)
                }
                "CF.DEL" => match self.keys.get_mut(&key) {
                    Some(f) => json!(u8::from(f.delete(&CuckooHash::new(&argv[2])))),
                    None => err("Not found"),
                },
                "CF.COMPACT" => match self.keys.get_mut(&key) {
                    Some(f) => {
                        f.compact(true);
                        json!("OK")
                    }
                    None => err("Cuckoo filter was not found"),
                },
                "CF.EXISTS" | "CF.MEXISTS" | "CF.COUNT" => {
                    let f = self.keys.get(&key);
                    let one = |it: &[u8]| -> u64 {
                        let h = CuckooHash::new(it);
                        match f {
                            None => 0,
                            Some(f) if cmd == "CF.COUNT" => f.count(&h),
                            Some(f) => u64::from(f.contains(&h)),
                        }
                    };
                    if cmd == "CF.MEXISTS" {
                        json!(argv[2..].iter().map(|a| one(a)).collect::<Vec<_>>())
                    } else {
                        json!(one(&argv[2]))
                    }
                }
                "CF.INFO" => {
                    let f = &self.keys[&key];
                    json!([
                        "Size",
                        f.mem_usage(),
                        "Number of buckets",
                        f.num_buckets(),
                        "Number of filters",
                        f.num_filters(),
                        "Number of items inserted",
                        f.num_items(),
                        "Number of items deleted",
                        f.num_deletes(),
                        "Bucket size",
                        f.bucket_size(),
                        "Expansion rate",
                        f.expansion(),
                        "Max iterations",
                        f.max_iterations()
                    ])
                }
                "CF.DEBUG" => json!(self.keys[&key].debug_string()),
                other => panic!("unsupported command {other}"),
            }
        }

        /// Run one manifest record (literal or `each`), asserting every reply.
        fn run(&mut self, rec: &Value, sets: &Value, ctx: &str) -> usize {
            if let Some(argv) = rec.get("argv") {
                let argv: Vec<Vec<u8>> = argv.as_array().unwrap().iter().map(arg).collect();
                let got = self.exec(&argv);
                assert_eq!(got, rec["reply"], "{ctx}: {}", rec["argv"]);
                return 1;
            }
            let template = rec["each"].as_array().unwrap();
            let list = items(&rec["items"], sets);
            assert_eq!(list.len() as u64, rec["count"].as_u64().unwrap(), "{ctx}");
            for (item, name) in &list {
                let argv: Vec<Vec<u8>> = template
                    .iter()
                    .map(|t| if t == "{item}" { item.clone() } else { arg(t) })
                    .collect();
                let want = rec["exceptions"].get(name).unwrap_or(&rec["default"]);
                assert_eq!(&self.exec(&argv), want, "{ctx}: {} {name}", template[0]);
            }
            list.len()
        }
    }

    fn transcript_of(f: &CuckooFilter) -> Vec<Value> {
        let mut out = Vec::new();
        let mut it = 0;
        loop {
            match scandump(f, it).unwrap() {
                ScanDump::Header(h) => {
                    out.push(json!([1, hex::encode(h)]));
                    it = 1;
                }
                ScanDump::Chunk(next, data) => {
                    out.push(json!([next, hex::encode(data)]));
                    it = next;
                }
                ScanDump::End => {
                    out.push(json!([0, null]));
                    return out;
                }
            }
        }
    }

    /// Replay, query, dump and load every CF key of one fixture group; returns the number
    /// of keys checked.
    fn check_group(group: &str) -> usize {
        let manifest = fixture(&format!("{group}.manifest.json"));
        let scans = fixture(&format!("{group}.scandump.json"));
        let sets = &manifest["item_sets"];
        let mut checked = 0;
        for k in manifest["keys"].as_array().unwrap() {
            if k["kind"] != "cf" {
                continue;
            }
            let name = k["key"].as_str().unwrap();
            let mut db = Db::default();
            for op in k["ops"].as_array().unwrap() {
                db.run(op, sets, &format!("{name} op"));
            }
            let mut queries = 0;
            for q in k["queries"].as_array().unwrap() {
                queries += db.run(q, sets, &format!("{name} query"));
            }
            assert!(queries > 100, "{name}");
            let f = db.keys[name.as_bytes()].clone();

            // RDB path: the fields and sub-filters RDB save writes rebuild the same filter.
            let rebuilt = CuckooFilter::from_parts(
                CuckooParts {
                    num_buckets: f.num_buckets(),
                    num_items: f.num_items(),
                    num_deletes: f.num_deletes(),
                    bucket_size: u64::from(f.bucket_size()),
                    max_iterations: u64::from(f.max_iterations()),
                    expansion: u64::from(f.expansion()),
                },
                f.sub_filters()
                    .iter()
                    .map(|s| (s.buckets(), s.data().to_vec()))
                    .collect(),
            )
            .unwrap();
            assert_eq!(rebuilt, f, "{name} from_parts");

            // SCANDUMP transcript, byte for byte.
            let want = scans["keys"][name]["replies"].as_array().unwrap();
            assert_eq!(&transcript_of(&f), want, "{name} transcript");

            // LOADCHUNK the transcript into a fresh filter.
            if want.len() > 1 {
                let h = hex::decode(want[0][1].as_str().unwrap()).unwrap();
                assert_eq!(h.len(), HEADER_LEN);
                let mut g = filter_from_header(&h, BIG).unwrap();
                for r in &want[1..want.len() - 1] {
                    let data = hex::decode(r[1].as_str().unwrap()).unwrap();
                    load_chunk(&mut g, r[0].as_i64().unwrap(), &data).unwrap();
                }
                assert_eq!(g, f, "{name} loaded");
                let mut loaded = Db::default();
                loaded.keys.insert(name.as_bytes().to_vec(), g);
                for q in k["queries"].as_array().unwrap() {
                    loaded.run(q, sets, &format!("{name} loaded query"));
                }
            } else {
                // Empty filter: SCANDUMP cannot carry it, the AOF form (header + chunks) can.
                assert_eq!(f.num_items(), 0);
                let mut g = filter_from_header(&header(&f), BIG).unwrap();
                let mut pos = 1;
                while let Some((next, data)) = chunk(&f, pos) {
                    load_chunk(&mut g, next, data).unwrap();
                    pos = next;
                }
                assert_eq!(g, f);
            }
            checked += 1;
        }
        checked
    }

    #[test]
    fn cuckoo_group_matches_redisbloom() {
        // cf:default, cf:grown, cf:compacted, cf:noexp, cf:empty.
        assert_eq!(check_group("cuckoo"), 5);
    }

    #[test]
    fn mixed_group_matches_redisbloom() {
        // cf:bin (binary items), cf:insert.
        assert_eq!(check_group("mixed"), 2);
    }
}
