//! Command sequences on the core: adds, deletes, compactions, SCANDUMP → LOADCHUNK
//! restores (chunks in any order) and RDB save → load, on one Bloom and one Cuckoo filter
//! created with parameters from the input. After every step the item counts match a model;
//! at the end every item added (and, for Cuckoo, not deleted) is found.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::bloom_dump;
use redbloom::filter::chain::{AddOutcome, Chain};
use redbloom::filter::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
use redbloom::filter::cuckoo_dump::{self, ScanDump};
use redbloom::filter::rdb::{self, Fields};
use redbloom_fuzz::{Input, MAX_BYTES};

/// Restores a Bloom filter from its SCANDUMP, the chunks in an order taken from the input.
fn bf_restore(chain: &Chain, input: &mut Input) -> Chain {
    let mut copy = bloom_dump::chain_from_header(&bloom_dump::header(chain), MAX_BYTES)
        .expect("header refused");
    let mut chunks = Vec::new();
    let mut iter = 1;
    while let Some((next, data)) = bloom_dump::chunk(chain, iter) {
        chunks.push((next, data.to_vec()));
        iter = next;
    }
    while !chunks.is_empty() {
        let at = usize::from(input.u8().unwrap_or(0)) % chunks.len();
        let (next, data) = chunks.swap_remove(at);
        bloom_dump::load_chunk(&mut copy, next, &data).expect("chunk refused");
    }
    assert_eq!(&copy, chain);
    copy
}

/// Restores a Cuckoo filter as a client does: SCANDUMP from 0 until `[0, nil]`, then
/// LOADCHUNK of every piece in an order taken from the input.
fn cf_restore(filter: &CuckooFilter, input: &mut Input) -> Option<CuckooFilter> {
    let Some(ScanDump::Header(header)) = cuckoo_dump::scandump(filter, 0) else {
        assert_eq!(filter.num_items(), 0);
        return None;
    };
    let mut copy = cuckoo_dump::filter_from_header(&header, MAX_BYTES).expect("header refused");
    let mut chunks = Vec::new();
    let mut pos = 1;
    while let Some(ScanDump::Chunk(next, data)) = cuckoo_dump::scandump(filter, pos) {
        chunks.push((next, data.to_vec()));
        pos = next;
    }
    while !chunks.is_empty() {
        let at = usize::from(input.u8().unwrap_or(0)) % chunks.len();
        let (next, data) = chunks.swap_remove(at);
        cuckoo_dump::load_chunk(&mut copy, next, &data).expect("chunk refused");
    }
    assert_eq!(&copy, filter);
    Some(copy)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let p = input.bytes(6).to_vec();
    let p = |i: usize| p.get(i).copied().unwrap_or(0);
    let capacity = 1 + u64::from(p(0) % 64);
    let error = [0.5, 0.1, 0.01, 0.001, 1e-6][usize::from(p(1) % 5)];
    let growth = u32::from(p(2) % 5);
    let scaling = p(2) & 0x80 == 0;
    let blocked = p(1) & 0x80 != 0;
    let mut chain =
        Chain::with_layout(capacity, error, growth, scaling, blocked, MAX_BYTES).expect("BF create");
    let bucket_size = 1 + u16::from(p(3) % 8);
    let params = CuckooParams {
        capacity: 2 * u64::from(bucket_size) + u64::from(p(4) % 64),
        bucket_size,
        max_iterations: 1 + u16::from(p(5) % 32),
        expansion: u16::from(p(3) >> 4) % 5,
    };
    let mut cuckoo = CuckooFilter::new(params, MAX_BYTES).expect("CF create");

    let mut bf_items: Vec<Vec<u8>> = Vec::new();
    let mut bf_added = 0u64;
    let mut cf_items: Vec<Vec<u8>> = Vec::new();
    for _ in 0..256 {
        let Some(op) = input.u8() else { break };
        match op % 14 {
            0..=2 => {
                let item = input.item();
                match chain.add(chain.hash(&item), MAX_BYTES) {
                    AddOutcome::Added => {
                        bf_added += 1;
                        bf_items.push(item);
                    }
                    AddOutcome::Exists => bf_items.push(item),
                    AddOutcome::Full => assert!(!scaling),
                    AddOutcome::GrowFailed(_) => {}
                }
            }
            3 => chain = bf_restore(&chain, &mut input),
            4 => {
                let mut fields = Fields::default();
                rdb::save_chain(&chain, &mut fields);
                chain = rdb::load_chain(&mut fields, rdb::BLOOM_ENCODING).expect("BF RDB");
            }
            5..=7 => {
                let item = input.item();
                if cuckoo.insert(&CuckooHash::new(&item), MAX_BYTES).is_ok() {
                    cf_items.push(item);
                }
            }
            8 => {
                let item = input.item();
                if let Ok(true) = cuckoo.insert_if_absent(&CuckooHash::new(&item), MAX_BYTES) {
                    cf_items.push(item);
                }
            }
            9 | 10 if !cf_items.is_empty() => {
                let at = usize::from(input.u8().unwrap_or(0)) % cf_items.len();
                let item = cf_items.swap_remove(at);
                assert!(cuckoo.delete(&CuckooHash::new(&item)));
            }
            11 => cuckoo.compact(op & 0x80 != 0),
            12 => {
                if let Some(copy) = cf_restore(&cuckoo, &mut input) {
                    cuckoo = copy;
                }
            }
            _ => {
                let mut fields = Fields::default();
                rdb::save_cuckoo(&cuckoo, &mut fields);
                cuckoo = rdb::load_cuckoo(&mut fields, rdb::CUCKOO_ENCODING).expect("CF RDB");
            }
        }
        assert_eq!(chain.items, bf_added);
        assert_eq!(cuckoo.num_items(), cf_items.len() as u64);
    }
    for item in &bf_items {
        assert!(chain.contains(chain.hash(item)), "BF false negative");
    }
    for item in &cf_items {
        assert!(cuckoo.contains(&CuckooHash::new(item)), "CF false negative");
    }
});
