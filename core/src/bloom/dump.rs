//! BF.SCANDUMP / BF.LOADCHUNK: the packed little-endian header and the bit-array chunks
//! (COMPAT §7.1, §7.2), with every check that keeps a hostile dump from reaching memory
//! outside a filter.

use crate::bloom::chain::{Chain, CHAIN_OVERHEAD, LINK_OVERHEAD};
use crate::bloom::link::{
    fields_are_consistent, options_are_loadable, Link, LinkShape, OPT_BLOCKED,
};
use crate::le_reader::Reader;

/// Largest chunk SCANDUMP returns; chunks never span links.
pub const MAX_CHUNK: u64 = 16 * 1024 * 1024;

const CHAIN_HEADER_LEN: usize = 20;
const LINK_HEADER_LEN: usize = 53;

/// What ends the header of a blocked chain (after RedisBloom's fields, which RedisBloom
/// would refuse already for the option bit and the length): redbloom's name and the
/// layout's version, so a dump says whose it is and a future layout can be told apart.
pub const BLOCKED_TRAILER: [u8; 8] = *b"redblk\x00\x01";

/// Why a header or chunk was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpError {
    /// Malformed or inconsistent data, or a filter too large to allocate.
    BadData,
    /// The chunk's position lies in no link.
    NoLink,
    /// The chunk would run past the end of its link.
    TooBig,
}

/// The header SCANDUMP returns for iterator 0: the chain, then each link's metadata.
pub fn header(chain: &Chain) -> Vec<u8> {
    let mut out = Vec::with_capacity(CHAIN_HEADER_LEN + LINK_HEADER_LEN * chain.links.len());
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
        out.push(link.n2);
    }
    if chain.is_blocked() {
        out.extend_from_slice(&BLOCKED_TRAILER);
    }
    out
}

/// An empty-bit filter from a LOADCHUNK header; its bits arrive in later chunks.
/// `max_bytes` caps the filter's memory as `Chain::mem_usage` counts it.
pub fn chain_from_header(data: &[u8], max_bytes: u64) -> Result<Chain, DumpError> {
    if data.len() < CHAIN_HEADER_LEN {
        return Err(DumpError::BadData);
    }
    let mut fields = Reader(data);
    let items = fields.u64();
    let nlinks = fields.u32();
    let options = fields.u32();
    let growth = fields.u32();
    let blocked = options & OPT_BLOCKED != 0;
    let trailer_len = if blocked { BLOCKED_TRAILER.len() } else { 0 };
    let expected_len =
        CHAIN_HEADER_LEN as u64 + LINK_HEADER_LEN as u64 * u64::from(nlinks) + trailer_len as u64;
    if nlinks == 0
        || data.len() as u64 != expected_len
        || !options_are_loadable(u64::from(options))
        || (blocked && !data.ends_with(&BLOCKED_TRAILER))
    {
        return Err(DumpError::BadData);
    }
    let link_check = if blocked {
        super::blocked::fields_are_consistent
    } else {
        fields_are_consistent
    };
    let mut links: Vec<Link> = Vec::new();
    links
        .try_reserve_exact(nlinks as usize)
        .map_err(|_| DumpError::BadData)?;
    let mut used = CHAIN_OVERHEAD;
    let mut items_in_links = 0u64;
    for _ in 0..nlinks {
        let bytes = fields.u64();
        let bits = fields.u64();
        let link_items = fields.u64();
        let error = fields.f64();
        let bpe = fields.f64();
        let hashes = fields.u32();
        let entries = fields.u64();
        let n2 = fields.u8();
        if !link_check(error, bpe, hashes, bits, bytes, n2) {
            return Err(DumpError::BadData);
        }
        items_in_links = items_in_links
            .checked_add(link_items)
            .ok_or(DumpError::BadData)?;
        used = used
            .checked_add(LINK_OVERHEAD)
            .and_then(|u| u.checked_add(bytes))
            .filter(|&u| u <= max_bytes)
            .ok_or(DumpError::BadData)?;
        let shape = LinkShape {
            entries,
            error,
            bpe,
            hashes,
            bits,
            bytes,
            n2,
            blocked,
        };
        let mut link = Link::new(shape, u64::MAX).map_err(|_| DumpError::BadData)?;
        link.items = link_items;
        links.push(link);
    }
    if items_in_links != items {
        return Err(DumpError::BadData);
    }
    Ok(Chain::from_parts(items, links, options, growth))
}

/// The chunk SCANDUMP returns for iterator `iter` ≥ 1: bytes from global offset `iter − 1`
/// of the concatenated bit arrays, up to 16 MiB and never past the end of that link,
/// with the next iterator. `None` past the end (and for iterators < 1).
pub fn chunk(chain: &Chain, iter: i64) -> Option<(i64, &[u8])> {
    chunk_of(chain.links.iter().map(|link| link.data.as_slice()), iter)
}

/// LOADCHUNK of a data chunk: `iter` is the iterator SCANDUMP returned *after* this chunk,
/// so the chunk starts at `iter − len`.
pub fn load_chunk(chain: &mut Chain, iter: i64, data: &[u8]) -> Result<(), DumpError> {
    let mut replaced = (0, 0);
    load_chunk_into(
        chain.links.iter_mut().map(|link| link.data.as_mut_slice()),
        iter,
        data,
        |link, old| replaced = (link, crate::health::set_bits(old)),
    )?;
    // The link's set bits: those of the bytes replaced out, those of the chunk in.
    let link = &mut chain.links[replaced.0];
    link.ones = link.ones - replaced.1 + crate::health::set_bits(data);
    Ok(())
}

/// [`chunk`] over any sequence of arrays (the counting filter's counters use it too).
pub(crate) fn chunk_of<'a>(
    arrays: impl Iterator<Item = &'a [u8]>,
    iter: i64,
) -> Option<(i64, &'a [u8])> {
    let mut offset = u64::try_from(iter).ok()?.checked_sub(1)?;
    for array in arrays {
        let size = array.len() as u64;
        if offset < size {
            let len = MAX_CHUNK.min(size - offset);
            let start = offset as usize;
            return Some((iter + len as i64, &array[start..start + len as usize]));
        }
        offset -= size;
    }
    None
}

/// [`load_chunk`] over any sequence of arrays; `replacing` sees the index of the array
/// written and the bytes the chunk replaces, before they are.
pub(crate) fn load_chunk_into<'a>(
    arrays: impl Iterator<Item = &'a mut [u8]>,
    iter: i64,
    data: &[u8],
    replacing: impl FnOnce(usize, &[u8]),
) -> Result<(), DumpError> {
    let len = data.len() as u64;
    let end = u64::try_from(iter)
        .ok()
        .filter(|&end| end >= 1 && end >= len)
        .ok_or(DumpError::BadData)?;
    let mut offset = (end - len).checked_sub(1).ok_or(DumpError::NoLink)?;
    for (index, array) in arrays.enumerate() {
        let size = array.len() as u64;
        if offset < size {
            if len > size - offset {
                return Err(DumpError::TooBig);
            }
            let start = offset as usize;
            replacing(index, &array[start..start + data.len()]);
            crate::copy_changed_pages(&mut array[start..start + data.len()], data);
            return Ok(());
        }
        offset -= size;
    }
    Err(DumpError::NoLink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::chain::AddOutcome;
    use proptest::prelude::*;

    fn filter_with(error: f64, capacity: u64, items: &[&str]) -> Chain {
        let mut chain = Chain::new(capacity, error, 2, true, u64::MAX).unwrap();
        for item in items {
            let pair = chain.hash(item.as_bytes());
            chain.add(pair, u64::MAX);
        }
        chain
    }

    /// Every (iterator, data) pair of a full SCANDUMP after the header.
    fn chunks(chain: &Chain) -> Vec<(i64, Vec<u8>)> {
        let mut out = Vec::new();
        let mut iter = 1;
        while let Some((next, data)) = chunk(chain, iter) {
            out.push((next, data.to_vec()));
            iter = next;
        }
        out
    }

    fn restore(chain: &Chain) -> Chain {
        let mut copy = chain_from_header(&header(chain), u64::MAX).unwrap();
        for (iter, data) in chunks(chain) {
            load_chunk(&mut copy, iter, &data).unwrap();
        }
        copy
    }

    #[test]
    fn header_examples_of_compat() {
        let chain = Chain::new(10, 0.1, 2, true, u64::MAX).unwrap();
        let mut chain = chain;
        chain.add(chain.hash(b"item1"), u64::MAX);
        assert_eq!(
            hex::encode(header(&chain)),
            "0100000000000000010000000500000002000000\
             0800000000000000400000000000000001000000000000009a9999999999a93f\
             4af7d49edef0184005000000 0a0000000000000000"
                .replace(' ', "")
        );
        assert_eq!(
            chunks(&chain),
            vec![(9, vec![1, 8, 0, 0x80, 0, 4, 0x20, 0])]
        );

        let chain = filter_with(0.01, 100, &["hello"]);
        assert_eq!(
            hex::encode(header(&chain)),
            "0100000000000000010000000500000002000000\
             900000000000000080040000000000000100000000000000\
             7b14ae47e17a743fe9862fb2350e2640080000006400000000000000 00"
                .replace(' ', "")
        );
        let all = chunks(&chain);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0, 145);
        let nonzero: Vec<(usize, u8)> = all[0]
            .1
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != 0)
            .map(|(i, &b)| (i, b))
            .collect();
        assert_eq!(
            nonzero,
            vec![
                (9, 0x20),
                (12, 0x02),
                (62, 0x02),
                (64, 0x20),
                (67, 0x02),
                (98, 0x20),
                (101, 0x02),
                (119, 0x20)
            ]
        );
        assert_eq!(chunk(&chain, 145), None);
        assert_eq!(chunk(&chain, -1), None);
        assert_eq!(chunk(&chain, 0), None);
    }

    #[test]
    fn chunks_stop_at_link_boundaries_and_restore_exactly() {
        let items: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        let chain = filter_with(0.01, 10, &refs);
        let lens: Vec<usize> = chunks(&chain).iter().map(|(_, d)| d.len()).collect();
        assert_eq!(lens, vec![16, 32, 72, 160]);
        // Mid-link iterators continue to that link's end.
        assert_eq!(chunk(&chain, 5).map(|(n, d)| (n, d.len())), Some((17, 12)));
        assert_eq!(restore(&chain), chain);
    }

    #[test]
    fn header_checks_of_compat() {
        let items: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        let mut chain = Chain::new(5, 0.01, 2, true, u64::MAX).unwrap();
        for item in refs {
            let pair = chain.hash(item.as_bytes());
            assert_ne!(
                chain.add(pair, u64::MAX),
                AddOutcome::GrowFailed(crate::bloom::link::LinkError::Invalid)
            );
        }
        assert!(chain.links.len() >= 2);
        let good = header(&chain);
        assert!(chain_from_header(&good, u64::MAX).is_ok());
        let corrupt = |range: std::ops::Range<usize>, value: u8| {
            let mut h = good.clone();
            h[range].iter_mut().for_each(|b| *b = value);
            chain_from_header(&h, u64::MAX)
        };
        // COMPAT §10.1 scandump_invalid_header cases.
        assert_eq!(corrupt(72..80, 0), Err(DumpError::BadData));
        assert_eq!(corrupt(12..16, 0xff), Err(DumpError::BadData));
        assert_eq!(corrupt(0..4, 0xff), Err(DumpError::BadData));
        let mut h = good.clone();
        h[0..8].fill(0xff);
        h[36..44].fill(0xff);
        assert_eq!(chain_from_header(&h, u64::MAX), Err(DumpError::BadData));
        // Huge bytes/bits (HEAD's test sets byte 27 = 0x03 and byte 35 = 0x18).
        let mut h = good.clone();
        h[27] = 0x03;
        h[35] = 0x18;
        assert_eq!(chain_from_header(&h, u64::MAX), Err(DumpError::BadData));
        // Consistent but beyond the ceiling.
        assert_eq!(chain_from_header(&good, 100), Err(DumpError::BadData));
        // Lengths and counts.
        assert_eq!(
            chain_from_header(&good[..19], u64::MAX),
            Err(DumpError::BadData)
        );
        assert_eq!(
            chain_from_header(&good[..good.len() - 1], u64::MAX),
            Err(DumpError::BadData)
        );
        let mut h = good.clone();
        h[8..12].fill(0);
        assert_eq!(
            chain_from_header(&h[..20], u64::MAX),
            Err(DumpError::BadData)
        );
        // n2 beyond 63, and n2 larger than the bit count allows.
        let last = good.len() - 1;
        assert_eq!(corrupt(last..last + 1, 64), Err(DumpError::BadData));
        assert_eq!(corrupt(last..last + 1, 20), Err(DumpError::BadData));
        // Hash count inconsistent with bits per entry.
        assert_eq!(corrupt(60..61, 99), Err(DumpError::BadData));
    }

    #[test]
    fn chunk_checks_of_compat() {
        let mut chain = filter_with(0.01, 10, &["a"]);
        assert_eq!(
            load_chunk(&mut chain, i64::MIN, b"1"),
            Err(DumpError::BadData)
        );
        assert_eq!(
            load_chunk(&mut chain, 922337203685477588, b"1"),
            Err(DumpError::NoLink)
        );
        assert_eq!(load_chunk(&mut chain, 4, &[0; 37]), Err(DumpError::BadData));
        assert_eq!(load_chunk(&mut chain, 4, b"abcd"), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut chain, 17, &[0; 17]), Err(DumpError::NoLink));
        assert_eq!(load_chunk(&mut chain, 18, &[0; 17]), Err(DumpError::TooBig));
        assert_eq!(load_chunk(&mut chain, 0, b""), Err(DumpError::BadData));
        assert_eq!(
            load_chunk(&mut chain, i64::MAX, &[]),
            Err(DumpError::NoLink)
        );
        let before = chain.clone();
        assert_eq!(load_chunk(&mut chain, 5, b"abcd"), Ok(()));
        assert_eq!(&chain.links[0].data[..4], b"abcd");
        assert_ne!(chain, before);
    }

    /// Chunks are at most RedisBloom's 16 MiB, never span arrays, and load back where
    /// SCANDUMP said; a chunk one byte too long for its array is `TooBig`.
    #[test]
    fn chunks_of_large_arrays_are_16_mib_pieces() {
        let m: i64 = 16 << 20;
        let big = vec![1u8; (m + 5) as usize];
        let small = vec![2u8; 3];
        let arrays = || [big.as_slice(), small.as_slice()].into_iter();
        let lens = |iter| chunk_of(arrays(), iter).map(|(next, d)| (next, d.len()));
        assert_eq!(lens(1), Some((1 + m, m as usize)));
        assert_eq!(lens(1 + m), Some((1 + m + 5, 5)));
        assert_eq!(lens(1 + m + 5), Some((1 + m + 8, 3)));
        assert_eq!(lens(1 + m + 8), None);
        assert_eq!(lens(3), Some((3 + m, m as usize)));
        assert_eq!(lens(m), Some((m + 6, 6)));
        let mut a = vec![0u8; (m + 5) as usize];
        let mut b = vec![0u8; 3];
        let mut load = |iter, data: &[u8]| {
            load_chunk_into(
                [a.as_mut_slice(), b.as_mut_slice()].into_iter(),
                iter,
                data,
                |_, _| {},
            )
        };
        assert_eq!(load(1 + m, &big[..m as usize]), Ok(()));
        assert_eq!(load(1 + m + 5, &[1; 5]), Ok(()));
        assert_eq!(load(1 + m + 8, &[2; 3]), Ok(()));
        assert_eq!(load(1 + m + 6, &[9; 6]), Err(DumpError::TooBig));
        assert_eq!(load(1 + m + 9, &[9; 1]), Err(DumpError::NoLink));
        assert_eq!((a, b), (big, small));
    }

    proptest! {
        #[test]
        fn dump_then_load_is_identity(
            items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..300),
            capacity in 1u64..64,
            growth in 1u32..4,
        ) {
            let mut chain = Chain::new(capacity, 0.01, growth, true, u64::MAX).unwrap();
            for item in &items {
                let pair = chain.hash(item);
                chain.add(pair, u64::MAX);
            }
            prop_assert_eq!(restore(&chain), chain);
        }
    }

    /// Headers and chunks of real filters, then mutated (or, now and then, random bytes):
    /// nothing panics; an accepted header is kept byte for byte and is a consistent filter
    /// within the ceiling; an unchanged one is accepted, and its own chunks restore the
    /// filter; a refused chunk changes nothing, an accepted one changes no shape.
    #[test]
    fn arbitrary_headers_and_chunks_never_panic() {
        use crate::testing::{apply_byte_edits, byte_edits, run_counting};
        use std::cell::Cell;
        const LIMIT: u64 = 1 << 20;
        let source = (
            1u64..200,
            prop_oneof![Just(0.01), Just(0.1), Just(0.001)],
            1u32..4,
            any::<bool>(),
            0usize..400,
        );
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
            "bloom arbitrary_headers_and_chunks_never_panic",
            500,
            150,
            (source, byte_edits(), chunk_edit, random),
            |((capacity, error, growth, scaling, n), edits, (pick, delta, data_edits), random)| {
                let mut source = Chain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
                for i in 0..n {
                    source.add(source.hash(&(i as u64).to_le_bytes()), u64::MAX);
                }
                let good = header(&source);
                let edited = random.unwrap_or_else(|| apply_byte_edits(&good, &edits));
                let accepted = match chain_from_header(&edited, LIMIT) {
                    Ok(chain) => {
                        prop_assert!(chain.links_are_consistent());
                        prop_assert!(chain.mem_usage() <= LIMIT);
                        prop_assert_eq!(header(&chain), edited.clone());
                        prop_assert!(chain.links.iter().all(|l| l.data.iter().all(|&b| b == 0)));
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
                            prop_assert!(
                                delta != 0
                                    || data_edits.iter().any(|e| !matches!(
                                        e,
                                        crate::testing::ByteEdit::Set(..)
                                            | crate::testing::ByteEdit::Flip(..)
                                    ))
                            );
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
}
