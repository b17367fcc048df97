//! CBF.SCANDUMP / CBF.LOADCHUNK: a versioned little-endian header, then the counter arrays
//! in chunks laid out exactly like BF's (≤ 16 MiB, never spanning links, iterator = 1 +
//! byte offset past the chunk in the concatenation of the links' arrays, oldest first).
//!
//! Header (all fields little-endian, packed), 24 + 52 × nlinks bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `CBF1` (format version 1; no BF or CF header begins like this and has this length) |
//! | 4 | 8 | total items |
//! | 12 | 4 | number of links (≥ 1; exactly 1 if non-scaling) |
//! | 16 | 4 | options: 5 (scaling) or 13 (non-scaling) |
//! | 20 | 4 | growth (≤ 32768) |
//!
//! then per link, oldest first (52 bytes each): u64 counter-array bytes, u64 counters,
//! u64 items in the link, f64 error, f64 bits per entry, u32 hashes, u64 entries.

use crate::bloom::dump::{self as bloom_dump, DumpError};
use crate::counting::{CountingChain, CountingLink, CBF_LINK_OVERHEAD, CBF_OVERHEAD};
use crate::le_reader::Reader;

/// The first four bytes of every counting-filter header.
pub const MAGIC: &[u8; 4] = b"CBF1";
pub const CHAIN_HEADER_LEN: usize = 24;
pub const LINK_HEADER_LEN: usize = 52;

/// The header SCANDUMP returns for iterator 0.
pub fn header(chain: &CountingChain) -> Vec<u8> {
    let mut out = Vec::with_capacity(CHAIN_HEADER_LEN + LINK_HEADER_LEN * chain.links.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&chain.items.to_le_bytes());
    out.extend_from_slice(&(chain.links.len() as u32).to_le_bytes());
    out.extend_from_slice(&chain.options.to_le_bytes());
    out.extend_from_slice(&chain.growth.to_le_bytes());
    for link in &chain.links {
        out.extend_from_slice(&link.bytes().to_le_bytes());
        out.extend_from_slice(&link.bits.to_le_bytes());
        out.extend_from_slice(&link.items.to_le_bytes());
        out.extend_from_slice(&link.error.to_le_bytes());
        out.extend_from_slice(&link.bpe.to_le_bytes());
        out.extend_from_slice(&link.hashes.to_le_bytes());
        out.extend_from_slice(&link.entries.to_le_bytes());
    }
    out
}

/// A zero-counter filter from a LOADCHUNK header; its counters arrive in later chunks.
/// Checks, in order (any failure → `BadData`): length ≥ 24; magic; at least one link;
/// length exactly 24 + 52 × nlinks; options 5 or 13 and growth ≤ 32768; one link if
/// non-scaling; every link exactly the link this code makes for its entries and error
/// (so its counters, hashes and array length are consistent and bounded); the sum of link
/// items without overflow; the memory (as `mem_usage` counts it) within `max_bytes`;
/// every array allocated fallibly; the sum of link items equal to the total.
pub fn chain_from_header(data: &[u8], max_bytes: u64) -> Result<CountingChain, DumpError> {
    if data.len() < CHAIN_HEADER_LEN || &data[..4] != MAGIC {
        return Err(DumpError::BadData);
    }
    let mut fields = Reader(&data[4..]);
    let items = fields.u64();
    let nlinks = fields.u32();
    let options = fields.u32();
    let growth = fields.u32();
    let expected_len = CHAIN_HEADER_LEN as u64 + LINK_HEADER_LEN as u64 * u64::from(nlinks);
    if nlinks == 0
        || data.len() as u64 != expected_len
        || !CountingChain::options_are_valid(options, growth)
    {
        return Err(DumpError::BadData);
    }
    let scaling = options & crate::bloom::link::OPT_NO_SCALING == 0;
    if !scaling && nlinks != 1 {
        return Err(DumpError::BadData);
    }
    let mut links: Vec<CountingLink> = Vec::new();
    links
        .try_reserve_exact(nlinks as usize)
        .map_err(|_| DumpError::BadData)?;
    let mut used = CBF_OVERHEAD;
    let mut items_in_links = 0u64;
    for _ in 0..nlinks {
        let bytes = fields.u64();
        let bits = fields.u64();
        let link_items = fields.u64();
        let error = fields.f64();
        let bpe = fields.f64();
        let hashes = fields.u32();
        let entries = fields.u64();
        if !CountingLink::fields_are_valid(entries, error, bpe, hashes, bits, bytes, options) {
            return Err(DumpError::BadData);
        }
        items_in_links = items_in_links
            .checked_add(link_items)
            .ok_or(DumpError::BadData)?;
        used = used
            .checked_add(CBF_LINK_OVERHEAD)
            .and_then(|u| u.checked_add(bytes))
            .filter(|&u| u <= max_bytes)
            .ok_or(DumpError::BadData)?;
        let counters = crate::zeroed_bytes(bytes).map_err(|_| DumpError::BadData)?;
        links.push(CountingLink::from_parts(
            (entries, error, bpe, hashes, bits),
            link_items,
            counters,
        ));
    }
    if items_in_links != items {
        return Err(DumpError::BadData);
    }
    Ok(CountingChain {
        items,
        links,
        options,
        growth,
    })
}

/// The chunk SCANDUMP returns for iterator `iter` ≥ 1: as BF's, over the concatenated
/// counter arrays (≤ 16 MiB, never past the end of a link). `None` past the end.
pub fn chunk(chain: &CountingChain, iter: i64) -> Option<(i64, &[u8])> {
    bloom_dump::chunk_of(
        chain.links.iter().map(|link| link.counters.as_slice()),
        iter,
    )
}

/// LOADCHUNK of a data chunk, with BF's checks and errors: `BadData` for a negative start,
/// `NoLink` when the start lies in no link, `TooBig` when the chunk would run past the end
/// of its link.
pub fn load_chunk(chain: &mut CountingChain, iter: i64, data: &[u8]) -> Result<(), DumpError> {
    let mut replaced = (0, (0, 0));
    bloom_dump::load_chunk_into(
        chain
            .links
            .iter_mut()
            .map(|link| link.counters.as_mut_slice()),
        iter,
        data,
        |link, old| replaced = (link, super::link::tally(old)),
    )?;
    // The link's counts: those of the counters replaced out, those of the chunk in.
    let link = &mut chain.links[replaced.0];
    let (nonzero, saturated) = super::link::tally(data);
    link.nonzero = link.nonzero - replaced.1 .0 + nonzero;
    link.saturated = link.saturated - replaced.1 .1 + saturated;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::chain::Chain;
    use crate::bloom::dump::{self as bloom_dump, MAX_CHUNK};
    use crate::hash::HashPair;
    use proptest::prelude::*;

    fn filter_with(capacity: u64, items: usize) -> CountingChain {
        let mut cbf = CountingChain::new(capacity, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..items {
            cbf.add(HashPair::wide(i.to_string().as_bytes()), u64::MAX);
        }
        cbf
    }

    fn chunks(chain: &CountingChain) -> Vec<(i64, Vec<u8>)> {
        let mut out = Vec::new();
        let mut iter = 1;
        while let Some((next, data)) = chunk(chain, iter) {
            out.push((next, data.to_vec()));
            iter = next;
        }
        out
    }

    fn restore(chain: &CountingChain) -> CountingChain {
        let mut copy = chain_from_header(&header(chain), u64::MAX).unwrap();
        for (iter, data) in chunks(chain) {
            load_chunk(&mut copy, iter, &data).unwrap();
        }
        copy
    }

    #[test]
    fn header_layout() {
        let mut cbf = CountingChain::new(10, 0.1, 2, true, u64::MAX).unwrap();
        cbf.add(HashPair::wide(b"item1"), u64::MAX);
        // The BF example of COMPAT §7.1 with the magic, 4 × the bytes and no n2.
        assert_eq!(
            hex::encode(header(&cbf)),
            "43424631 0100000000000000 01000000 05000000 02000000 \
             2000000000000000 4000000000000000 0100000000000000 9a9999999999a93f \
             4af7d49edef01840 05000000 0a00000000000000"
                .replace(' ', "")
        );
        // Positions 11 0 53 42 31: counter p in byte p/2, low nibble when p is even.
        let all = chunks(&cbf);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0, 33);
        let nonzero: Vec<(usize, u8)> = all[0]
            .1
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != 0)
            .map(|(i, &b)| (i, b))
            .collect();
        assert_eq!(
            nonzero,
            vec![(0, 0x01), (5, 0x10), (15, 0x10), (21, 0x01), (26, 0x10)]
        );
        assert_eq!(chunk(&cbf, 33), None);
        assert_eq!(chunk(&cbf, 0), None);
        assert_eq!(chunk(&cbf, -5), None);
    }

    #[test]
    fn chunks_follow_bloom_arithmetic() {
        let cbf = filter_with(10, 100);
        let mut bf = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..100 {
            bf.add(bf.hash(i.to_string().as_bytes()), u64::MAX);
        }
        let lens: Vec<usize> = chunks(&cbf).iter().map(|(_, d)| d.len()).collect();
        assert_eq!(lens, vec![64, 128, 288, 640]);
        // Same link sizes ×4 → the same iterator walk as BF's over arrays 4× as long.
        let bf_lens: Vec<usize> = {
            let mut out = Vec::new();
            let mut iter = 1;
            while let Some((next, data)) = bloom_dump::chunk(&bf, iter) {
                out.push(data.len() * 4);
                iter = next;
            }
            out
        };
        assert_eq!(lens, bf_lens);
        assert_eq!(chunk(&cbf, 5).map(|(n, d)| (n, d.len())), Some((65, 60)));
        assert_eq!(restore(&cbf), cbf);
    }

    #[test]
    fn sixteen_mib_chunks_never_span_links() {
        // 0.01 / 5M: a BF link of 5 990 664 bytes, counters 23 962 656 bytes → 2 chunks.
        let cbf = CountingChain::new(5_000_000, 0.01, 2, false, u64::MAX).unwrap();
        let bytes = cbf.links[0].bytes() as i64;
        let all: Vec<(i64, usize)> = chunks(&cbf).iter().map(|(n, d)| (*n, d.len())).collect();
        // RedisBloom's 16 MiB written out: the constant itself is under test.
        let m: i64 = 16 << 20;
        assert_eq!(MAX_CHUNK as i64, m);
        assert_eq!(
            all,
            vec![(1 + m, m as usize), (1 + bytes, (bytes - m) as usize)]
        );
        assert_eq!(restore(&cbf), cbf);
    }

    #[test]
    fn header_checks() {
        let cbf = filter_with(5, 50);
        assert!(cbf.links.len() >= 3);
        let good = header(&cbf);
        assert_eq!(good.len(), 24 + 52 * cbf.links.len());
        assert!(chain_from_header(&good, u64::MAX).is_ok());
        let with = |at: usize, bytes: &[u8]| {
            let mut h = good.clone();
            h[at..at + bytes.len()].copy_from_slice(bytes);
            chain_from_header(&h, u64::MAX)
        };
        let bad = Err(DumpError::BadData);
        assert_eq!(with(0, b"CBF2"), bad, "magic/version");
        assert_eq!(with(4, &[0xff; 8]), bad, "total items");
        assert_eq!(with(12, &[0; 4]), bad, "no links");
        assert_eq!(with(12, &[0xff; 4]), bad, "link count vs length");
        assert_eq!(with(16, &7u32.to_le_bytes()), bad, "options");
        assert_eq!(
            with(16, &13u32.to_le_bytes()),
            bad,
            "non-scaling with links > 1"
        );
        assert_eq!(with(20, &40000u32.to_le_bytes()), bad, "growth");
        // First link at 24: bytes, bits, items, error, bpe, hashes, entries.
        assert_eq!(with(24, &[0xff; 8]), bad, "counter bytes");
        assert_eq!(with(24 + 8, &(1u64 << 40).to_le_bytes()), bad, "bits");
        assert_eq!(
            with(24 + 16, &1u64.to_le_bytes()),
            bad,
            "link items vs total"
        );
        assert_eq!(with(24 + 24, &0.5f64.to_le_bytes()), bad, "error");
        assert_eq!(with(24 + 32, &3.0f64.to_le_bytes()), bad, "bpe");
        assert_eq!(with(24 + 40, &1100u32.to_le_bytes()), bad, "hashes");
        assert_eq!(with(24 + 44, &1000u64.to_le_bytes()), bad, "entries");
        // HEAD's huge-allocation corruption (high bytes of bytes and bits).
        let mut h = good.clone();
        h[24 + 7] = 0x03;
        h[24 + 15] = 0x18;
        assert_eq!(chain_from_header(&h, u64::MAX), bad);
        // Lengths and the ceiling.
        assert_eq!(chain_from_header(&good[..23], u64::MAX), bad);
        assert_eq!(chain_from_header(&good[..good.len() - 1], u64::MAX), bad);
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(chain_from_header(&longer, u64::MAX), bad);
        assert_eq!(chain_from_header(&good, cbf.mem_usage() - 1), bad);
        assert!(chain_from_header(&good, cbf.mem_usage()).is_ok());
        // A BF header is never a CBF header.
        let bf = Chain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        assert_eq!(chain_from_header(&bloom_dump::header(&bf), u64::MAX), bad);
        assert!(bloom_dump::chain_from_header(&good, u64::MAX).is_err());
    }

    #[test]
    fn chunk_checks_as_bloom() {
        let mut cbf = filter_with(10, 1); // one link of 64 bytes
        assert_eq!(
            load_chunk(&mut cbf, i64::MIN, b"1"),
            Err(DumpError::BadData)
        );
        assert_eq!(load_chunk(&mut cbf, 4, &[0; 37]), Err(DumpError::BadData));
        assert_eq!(load_chunk(&mut cbf, 0, b""), Err(DumpError::BadData));
        assert_eq!(load_chunk(&mut cbf, 4, b"abcd"), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut cbf, 65, &[0; 65]), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut cbf, 66, &[0; 65]), Err(DumpError::TooBig));
        assert_eq!(load_chunk(&mut cbf, 66, &[0; 1]), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut cbf, i64::MAX, &[]), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut cbf, 5, b"abcd"), Ok(()));
        assert_eq!(&cbf.links[0].counters[..4], b"abcd");
        assert_eq!(load_chunk(&mut cbf, 65, &[7; 64]), Ok(()));
        assert!(cbf.links[0].counters.iter().all(|&b| b == 7));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// SCANDUMP → LOADCHUNK is the identity (counters, counts, shape), deletes included.
        #[test]
        fn dump_then_load_is_identity(
            items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..300),
            deletes in proptest::collection::vec(any::<usize>(), 0..50),
            capacity in 1u64..64,
            growth in 1u32..4,
            scaling in any::<bool>(),
        ) {
            let mut cbf = CountingChain::new(capacity, 0.01, growth, scaling, u64::MAX).unwrap();
            for item in &items {
                cbf.add(HashPair::wide(item), u64::MAX);
            }
            for d in deletes {
                if !items.is_empty() {
                    cbf.delete(HashPair::wide(&items[d % items.len()]));
                }
            }
            prop_assert_eq!(restore(&cbf), cbf);
        }
    }

    /// A counting filter from a strategy's parameters: capacity, error, growth, scaling,
    /// items added (wide hashes of their numbers), items deleted again.
    fn built(
        (capacity, error, growth, scaling, n, deletes): (u64, f64, u32, bool, usize, usize),
    ) -> CountingChain {
        let mut cbf = CountingChain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
        for i in 0..n {
            cbf.add(HashPair::wide(&(i as u64).to_le_bytes()), u64::MAX);
        }
        for i in 0..deletes.min(n) {
            cbf.delete(HashPair::wide(&(i as u64).to_le_bytes()));
        }
        cbf
    }

    fn sources() -> impl Strategy<Value = (u64, f64, u32, bool, usize, usize)> {
        (
            1u64..100,
            prop_oneof![Just(0.01), Just(0.1), Just(0.001)],
            1u32..4,
            any::<bool>(),
            0usize..200,
            0usize..40,
        )
    }

    /// Headers and chunks of real filters, then mutated (or, now and then, random bytes
    /// after the magic): nothing panics; an accepted header is a valid filter within the
    /// ceiling, kept byte for byte; an unchanged one is accepted and its own chunks
    /// restore the filter; a refused chunk changes nothing, an accepted one no shape.
    #[test]
    fn arbitrary_headers_and_chunks_never_panic() {
        use crate::testing::{apply_byte_edits, byte_edits, run_counting, ByteEdit};
        use std::cell::Cell;
        const LIMIT: u64 = 1 << 20;
        let chunk_edit = (
            any::<usize>(),
            prop_oneof![Just(0i64), -3i64..3, any::<i64>()],
            byte_edits(),
        );
        let random = prop_oneof![
            6 => Just(None),
            1 => proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        ];
        let chunks_accepted = Cell::new(0u32);
        run_counting(
            "counting arbitrary_headers_and_chunks_never_panic",
            500,
            150,
            (sources(), byte_edits(), chunk_edit, random),
            |(params, edits, (pick, delta, data_edits), random)| {
                let source = built(params);
                let good = header(&source);
                let edited = match random {
                    Some(bytes) => [MAGIC.as_slice(), &bytes].concat(),
                    None => apply_byte_edits(&good, &edits),
                };
                let accepted = match chain_from_header(&edited, LIMIT) {
                    Ok(cbf) => {
                        prop_assert!(cbf.is_valid());
                        prop_assert!(cbf.mem_usage() <= LIMIT);
                        prop_assert_eq!(header(&cbf), edited.clone());
                        true
                    }
                    Err(_) => {
                        prop_assert!(edited != good || source.mem_usage() > LIMIT);
                        false
                    }
                };
                if source.mem_usage() <= LIMIT {
                    let all = chunks(&source);
                    let mut copy = chain_from_header(&good, LIMIT).unwrap();
                    for (iter, data) in &all {
                        load_chunk(&mut copy, *iter, data).unwrap();
                    }
                    prop_assert_eq!(&copy, &source);
                    let (iter, data) = &all[pick % all.len()];
                    let data = apply_byte_edits(data, &data_edits);
                    let before = copy.clone();
                    match load_chunk(&mut copy, iter.wrapping_add(delta), &data) {
                        Ok(()) => {
                            prop_assert_eq!(header(&copy), header(&before));
                            chunks_accepted.set(chunks_accepted.get() + 1);
                        }
                        Err(_) => {
                            let resized = data_edits
                                .iter()
                                .any(|e| matches!(e, ByteEdit::Truncate(_) | ByteEdit::Append(_)));
                            prop_assert!(delta != 0 || resized);
                            prop_assert_eq!(&copy, &before);
                        }
                    }
                    let _ = chunk(&copy, iter.wrapping_add(delta));
                }
                Ok(accepted)
            },
        );
        assert!(
            chunks_accepted.get() >= 150,
            "{} chunks accepted",
            chunks_accepted.get()
        );
    }

    /// Valid headers of real filters (several links, deletes) with bytes overwritten:
    /// nothing panics; whatever is accepted is a valid filter within the ceiling, kept
    /// byte for byte; an unchanged header is accepted.
    #[test]
    fn corrupted_headers_never_panic() {
        use crate::testing::{apply_byte_edits, byte_edits, run_counting};
        const LIMIT: u64 = 1 << 20;
        let counts = run_counting(
            "corrupted_headers_never_panic",
            800,
            250,
            (sources(), byte_edits()),
            |(params, edits)| {
                let source = built(params);
                let good = header(&source);
                let h = apply_byte_edits(&good, &edits);
                match chain_from_header(&h, LIMIT) {
                    Ok(cbf) => {
                        prop_assert!(cbf.is_valid());
                        prop_assert!(cbf.mem_usage() <= LIMIT);
                        prop_assert_eq!(header(&cbf), h);
                        Ok(true)
                    }
                    Err(_) => {
                        prop_assert!(h != good || source.mem_usage() > LIMIT);
                        Ok(false)
                    }
                }
            },
        );
        assert!(counts.refused >= 200, "{counts:?}");
    }
}
