//! Shared pieces of the fuzz targets: a byte reader over the fuzz input, the field-stream
//! encoding of RDB values, and "use the filter" drivers that check the promises on whatever
//! a decoder accepted: no panic, no false negative for an item added and not deleted, and
//! every accepted filter survives SCANDUMP → LOADCHUNK and RDB save → load unchanged (that is
//! what AOF rewrites, replicas and restarts rely on).

use redbloom_core::bloom::chain::{AddOutcome, Chain};
use redbloom_core::bloom::dump as bloom_dump;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::{CountingAdd, CountingChain};
use redbloom_core::cuckoo::dump as cuckoo_dump;
use redbloom_core::cuckoo::{CuckooFilter, CuckooHash};
use redbloom_core::hash::HashPair;
use redbloom_core::rdb::{self, Field, Fields};
use redbloom_core::window::dump as window_dump;
use redbloom_core::window::WindowFilter;

pub mod merge;
pub mod sf_targets;
pub mod targets;
pub mod xf_targets;

/// Memory ceiling of every filter the targets create or grow (keeps runs fast and small).
pub const MAX_BYTES: u64 = 1 << 12;

/// Most operations one input drives.
pub const MAX_OPS: usize = 96;

/// Reads the fuzz input front to back; reads past the end give zeros / empty slices.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let b = self.bytes(N);
        out[..b.len()].copy_from_slice(b);
        out
    }
    pub fn u8(&mut self) -> Option<u8> {
        let b = self.bytes(1);
        b.first().copied()
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
    pub fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.array())
    }
    /// A short item (0–7 bytes): few distinct items, so duplicates and deletes meet.
    pub fn item(&mut self) -> Vec<u8> {
        let len = usize::from(self.u8().unwrap_or(0) % 8);
        self.bytes(len).to_vec()
    }
    /// A split: the next `u16` bytes as their own input, the rest stays.
    pub fn split(&mut self) -> Input<'a> {
        let n = usize::from(self.u16());
        Input::new(self.bytes(n))
    }
}

/// Feeds the chunks `[(i64 iterator, u16 length, data)...]` of `chunks` to `load` (a
/// LOADCHUNK decoder), in order; a chunk it refuses must leave the filter as it was.
pub fn load_chunks<F: Clone + PartialEq + std::fmt::Debug, E>(
    filter: &mut F,
    mut chunks: Input<'_>,
    load: impl Fn(&mut F, i64, &[u8]) -> Result<(), E>,
) {
    while !chunks.is_empty() {
        let iter = chunks.i64();
        let len = usize::from(chunks.u16());
        let data = chunks.bytes(len);
        let before = filter.clone();
        if load(filter, iter, data).is_err() {
            assert_eq!(*filter, before, "a refused chunk changed the filter");
        }
    }
}

/// An RDB field stream from bytes: tag byte, then the value (small unsigned, full unsigned,
/// double bits, or a buffer with a 16-bit length).
pub fn fields_from(input: &mut Input) -> Fields {
    let mut fields = Vec::new();
    while let Some(tag) = input.u8() {
        fields.push(match tag % 4 {
            0 => Field::Unsigned(u64::from(input.u8().unwrap_or(0))),
            1 => Field::Unsigned(input.u64()),
            2 => Field::Double(f64::from_bits(input.u64())),
            _ => {
                let len = usize::from(input.u16());
                Field::Buffer(input.bytes(len).to_vec())
            }
        });
    }
    Fields { fields, read_at: 0 }
}

/// The inverse of [`fields_from`] (seed generation).
pub fn encode_fields(fields: &Fields) -> Vec<u8> {
    let mut out = Vec::new();
    for field in &fields.fields {
        match field {
            Field::Unsigned(v) if *v < 256 => out.extend_from_slice(&[0, *v as u8]),
            Field::Unsigned(v) => {
                out.push(1);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Field::Double(v) => {
                out.push(2);
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            Field::Buffer(b) => {
                out.push(3);
                out.extend_from_slice(&(b.len() as u16).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    out
}

/// A Bloom filter survives a full SCANDUMP → LOADCHUNK and an RDB save → load unchanged.
pub fn bf_round_trip(chain: &Chain) {
    let header = bloom_dump::header(chain);
    let mut copy = bloom_dump::chain_from_header(&header, u64::MAX)
        .unwrap_or_else(|e| panic!("the header of an accepted filter is refused: {e:?}"));
    let mut iter = 1;
    while let Some((next, data)) = bloom_dump::chunk(chain, iter) {
        bloom_dump::load_chunk(&mut copy, next, data).expect("a chunk of SCANDUMP is refused");
        iter = next;
    }
    assert_eq!(&copy, chain, "SCANDUMP → LOADCHUNK changed the filter");
    let mut fields = Fields::default();
    rdb::save_chain(chain, &mut fields);
    let loaded = rdb::load_chain(&mut fields, rdb::BLOOM_ENCODING);
    assert_eq!(
        loaded.as_ref(),
        Some(chain),
        "RDB save → load changed the filter"
    );
}

/// A Cuckoo filter survives the AOF-rewrite sequence (header + every chunk) and an RDB
/// save → load unchanged.
pub fn cf_round_trip(filter: &CuckooFilter) {
    let header = cuckoo_dump::header(filter);
    let mut copy = cuckoo_dump::filter_from_header(&header, u64::MAX)
        .unwrap_or_else(|e| panic!("the header of an accepted filter is refused: {e:?}"));
    let mut pos = 1;
    while let Some((next, data)) = cuckoo_dump::chunk(filter, pos) {
        cuckoo_dump::load_chunk(&mut copy, next, data).expect("a chunk of SCANDUMP is refused");
        pos = next;
    }
    assert_eq!(&copy, filter, "SCANDUMP → LOADCHUNK changed the filter");
    let mut fields = Fields::default();
    rdb::save_cuckoo(filter, &mut fields);
    let loaded = rdb::load_cuckoo(&mut fields, rdb::CUCKOO_ENCODING);
    assert_eq!(
        loaded.as_ref(),
        Some(filter),
        "RDB save → load changed the filter"
    );
}

/// Uses a Bloom filter a decoder accepted: adds, checks, dumps. Every item whose add was
/// acknowledged (added, or already present) must be found afterwards.
pub fn exercise_chain(mut chain: Chain, input: &mut Input) {
    let mut acknowledged: Vec<Vec<u8>> = Vec::new();
    for _ in 0..MAX_OPS {
        let Some(op) = input.u8() else { break };
        match op % 8 {
            0..=4 => {
                let item = input.item();
                let pair = chain.hash(&item);
                match chain.add(pair, MAX_BYTES) {
                    AddOutcome::Added | AddOutcome::Exists => acknowledged.push(item),
                    AddOutcome::Full | AddOutcome::GrowFailed(_) => {}
                }
            }
            5 => {
                let item = input.item();
                let _ = chain.contains(chain.hash(&item));
            }
            6 => {
                let _ = (chain.capacity(), chain.mem_usage());
                let iter = input.i64();
                let _ = bloom_dump::chunk(&chain, iter);
            }
            _ => bf_round_trip(&chain),
        }
    }
    for item in &acknowledged {
        assert!(chain.contains(chain.hash(item)), "false negative {item:?}");
    }
    bf_round_trip(&chain);
}

/// Uses a Cuckoo filter a decoder accepted: inserts, deletes (only of items inserted, as a
/// client may), counts, compacts, dumps. Items inserted and not deleted must be found.
pub fn exercise_cuckoo(mut filter: CuckooFilter, input: &mut Input) {
    let mut inserted: Vec<Vec<u8>> = Vec::new();
    // Every operation walks every sub-filter, and a failing insert runs 2 × max-iterations
    // kick-out steps: with thousands of sub-filters (a header may ask for 65535) or tens of
    // thousands of iterations, a few operations cover the same code as many.
    let heavy = filter.num_filters() > 64 || filter.max_iterations() > 200;
    let ops = if heavy { 8 } else { MAX_OPS };
    for _ in 0..ops {
        let Some(op) = input.u8() else { break };
        match op % 10 {
            0..=2 => {
                let item = input.item();
                if filter.insert(&CuckooHash::new(&item), MAX_BYTES).is_ok() {
                    inserted.push(item);
                }
            }
            3 => {
                let item = input.item();
                let h = CuckooHash::new(&item);
                let present = filter.contains(&h);
                match filter.insert_if_absent(&h, MAX_BYTES) {
                    Ok(true) => {
                        assert!(!present);
                        inserted.push(item);
                    }
                    Ok(false) => assert!(present),
                    Err(_) => assert!(!present),
                }
            }
            4 | 5 if !inserted.is_empty() => {
                let at = usize::from(input.u8().unwrap_or(0)) % inserted.len();
                let item = inserted.swap_remove(at);
                assert!(
                    filter.delete(&CuckooHash::new(&item)),
                    "an inserted item could not be deleted"
                );
            }
            6 => filter.compact(op & 0x80 != 0),
            7 => {
                let h = CuckooHash::new(&input.item());
                let count = filter.count(&h);
                assert_eq!(count > 0, filter.contains(&h));
            }
            8 => {
                let pos = input.i64();
                let _ = cuckoo_dump::scandump(&filter, pos);
                let _ = (filter.mem_usage(), filter.debug_string());
            }
            _ => cf_round_trip(&filter),
        }
    }
    for item in &inserted {
        assert!(
            filter.contains(&CuckooHash::new(item)),
            "false negative {item:?}"
        );
    }
    cf_round_trip(&filter);
}

/// A counting filter survives the AOF-rewrite sequence (header + every chunk) and an RDB
/// save → load unchanged.
pub fn cbf_round_trip(chain: &CountingChain) {
    let header = counting_dump::header(chain);
    let mut copy = counting_dump::chain_from_header(&header, u64::MAX)
        .unwrap_or_else(|e| panic!("the header of an accepted filter is refused: {e:?}"));
    let mut iter = 1;
    while let Some((next, data)) = counting_dump::chunk(chain, iter) {
        counting_dump::load_chunk(&mut copy, next, data).expect("a chunk of SCANDUMP is refused");
        iter = next;
    }
    assert_eq!(&copy, chain, "SCANDUMP → LOADCHUNK changed the filter");
    let mut fields = Fields::default();
    rdb::save_counting(chain, &mut fields);
    let loaded = rdb::load_counting(&mut fields, rdb::COUNTING_ENCODING);
    assert_eq!(
        loaded.as_ref(),
        Some(chain),
        "RDB save → load changed the filter"
    );
}

/// Uses a counting filter a decoder accepted: adds, deletes (only of items added, as a
/// client may), counts, dumps. An item added more often than deleted must be found.
pub fn exercise_counting(mut chain: CountingChain, input: &mut Input) {
    let mut added: Vec<Vec<u8>> = Vec::new();
    for _ in 0..MAX_OPS {
        let Some(op) = input.u8() else { break };
        match op % 8 {
            0..=3 => {
                let item = input.item();
                let pair = chain.hash(&item);
                if chain.add(pair, MAX_BYTES) == CountingAdd::Added {
                    added.push(item);
                }
            }
            4 if !added.is_empty() => {
                let at = usize::from(input.u8().unwrap_or(0)) % added.len();
                let item = added.swap_remove(at);
                // A refused delete (several links positive) leaves the item counted.
                if !chain.delete(chain.hash(&item)) {
                    added.push(item);
                }
            }
            5 => {
                let item = input.item();
                let pair = chain.hash(&item);
                let _ = (chain.contains(pair), chain.count(pair));
            }
            6 => {
                let _ = (chain.capacity(), chain.mem_usage());
                let _ = counting_dump::chunk(&chain, input.i64());
            }
            _ => cbf_round_trip(&chain),
        }
    }
    for item in &added {
        assert!(chain.contains(chain.hash(item)), "false negative {item:?}");
    }
    cbf_round_trip(&chain);
}

/// A window filter survives the AOF-rewrite sequence (header + every chunk) and an RDB
/// save → load unchanged.
pub fn wbf_round_trip(filter: &WindowFilter) {
    let header = window_dump::header(filter);
    let mut copy = window_dump::filter_from_header(&header, u64::MAX)
        .unwrap_or_else(|e| panic!("the header of an accepted filter is refused: {e:?}"));
    let mut iter = 1;
    while let Some((next, data)) = window_dump::chunk(filter, iter) {
        window_dump::load_chunk(&mut copy, next, data).expect("a chunk of SCANDUMP is refused");
        iter = next;
    }
    assert_eq!(&copy, filter, "SCANDUMP → LOADCHUNK changed the filter");
    let mut fields = Fields::default();
    rdb::save_window(filter, &mut fields);
    let loaded = rdb::load_window(&mut fields, rdb::WINDOW_ENCODING);
    assert_eq!(
        loaded.as_ref(),
        Some(filter),
        "RDB save → load changed the filter"
    );
}

/// Uses a window filter a decoder accepted: adds at times that move forwards and back,
/// reads, dumps. An item is found right after its add; a counted window finds its last
/// `l · g` adds; a timed window that received no more adds than its capacity finds every
/// item within a window of its add (measured in the latest time a write saw); reads never
/// change the filter.
pub fn exercise_window(mut filter: WindowFilter, input: &mut Input) {
    let fresh = filter.counts().iter().all(|&c| c == 0);
    let mut now = filter.base();
    let mut written = now;
    let mut adds: Vec<(Vec<u8>, u64)> = Vec::new();
    for _ in 0..MAX_OPS {
        let Some(op) = input.u8() else { break };
        match op % 8 {
            0..=3 => {
                now = now.saturating_add(u64::from(input.u16()));
                let item = input.item();
                let pair = HashPair::wide(&item);
                filter.add(pair, now);
                assert!(
                    filter.contains(pair, now),
                    "false negative right after the add"
                );
                written = written.max(now);
                adds.push((item, now));
            }
            4 => now = now.saturating_sub(u64::from(input.u16())),
            5 => {
                let before = filter.clone();
                let at = now.saturating_add(u64::from(input.u16()));
                let _ = (
                    filter.contains(HashPair::wide(&input.item()), at),
                    filter.items(at),
                );
                assert_eq!(filter, before, "a read changed the filter");
            }
            6 => {
                let _ = (filter.mem_usage(), filter.stored_items());
                let _ = window_dump::chunk(&filter, input.i64());
            }
            _ => wbf_round_trip(&filter),
        }
    }
    let keep = (u64::from(filter.shape().l) * filter.shape().generation_size) as usize;
    if !filter.is_timed() {
        for (item, _) in adds.iter().rev().take(keep) {
            assert!(
                filter.contains(HashPair::wide(item), now),
                "false negative {item:?}"
            );
        }
    } else if fresh && adds.len() as u64 <= filter.capacity() {
        for (item, at) in &adds {
            if written < at.saturating_add(filter.window()) {
                assert!(
                    filter.contains(HashPair::wide(item), written),
                    "false negative {item:?}"
                );
            }
        }
    }
    wbf_round_trip(&filter);
}

#[cfg(test)]
mod seeds;
