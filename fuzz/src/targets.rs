//! The body of every fuzz target, as a plain function: `fuzz_targets/<name>.rs` hands
//! libFuzzer's input to it, and the seed test below runs each target's seed corpus
//! (`seeds/<name>/`) through it, so `make test` keeps every target compiling and its seeds
//! passing without the fuzzing toolchain.

use crate::{
    exercise_chain, exercise_counting, exercise_cuckoo, exercise_window, fields_from, load_chunks,
    Input, MAX_BYTES,
};
use redbloom_core::bloom::chain::{AddOutcome, Chain};
use redbloom_core::bloom::dump as bloom_dump;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::cuckoo::dump::{self as cuckoo_dump, ScanDump};
use redbloom_core::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
use redbloom_core::rdb::{self, Fields};
use redbloom_core::window::dump as window_dump;

/// BF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
/// in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
/// [filter operations].
pub fn bf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut chain) = bloom_dump::chain_from_header(header, MAX_BYTES) else {
        return;
    };
    assert!(chain.links_are_consistent());
    load_chunks(&mut chain, input.split(), bloom_dump::load_chunk);
    exercise_chain(chain, &mut input);
}

/// CF.LOADCHUNK: a 38-byte header (any bytes), then data chunks at any positions, then the
/// filter in use. Input: [38-byte header][u16 chunks length][(i64 pos, u16 len, data)...]
/// [filter operations].
pub fn cf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let header = input.bytes(cuckoo_dump::HEADER_LEN);
    let Ok(mut filter) = cuckoo_dump::filter_from_header(header, MAX_BYTES) else {
        return;
    };
    load_chunks(&mut filter, input.split(), cuckoo_dump::load_chunk);
    exercise_cuckoo(filter, &mut input);
}

/// CBF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
/// in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
/// [filter operations].
pub fn cbf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut chain) = counting_dump::chain_from_header(header, MAX_BYTES) else {
        return;
    };
    assert!(chain.is_valid());
    load_chunks(&mut chain, input.split(), counting_dump::load_chunk);
    exercise_counting(chain, &mut input);
}

/// The BF RDB decoder (`rdb::load_chain`) over a field stream built from the input, then
/// the loaded filter in use. Input: [encver byte][u16 fields length][fields][operations].
pub fn bf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 7) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(chain) = rdb::load_chain(&mut fields, encver) else {
        return;
    };
    assert!(chain.links_are_consistent());
    exercise_chain(chain, &mut input);
}

/// The CF RDB decoder (`rdb::load_cuckoo`) over a field stream built from the input, then
/// the loaded filter in use. Input: [encver byte][u16 fields length][fields][operations].
pub fn cf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 7) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = rdb::load_cuckoo(&mut fields, encver) else {
        return;
    };
    exercise_cuckoo(filter, &mut input);
}

/// The counting filter's RDB decoder (`rdb::load_counting`) over a field stream built from
/// the input, then the loaded filter in use. Input: [encver byte][u16 fields length][fields]
/// [operations].
pub fn cbf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 4) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(chain) = rdb::load_counting(&mut fields, encver) else {
        return;
    };
    assert!(chain.is_valid());
    exercise_counting(chain, &mut input);
}

/// The Count-Min Sketch's RDB decoder (`rdb::load_cms`, encodings 0 and 1: every cell
/// size) over a field stream built from the input, then the loaded sketch in use:
/// increments and decrements (a refused one changes nothing), queries, a merge into
/// itself, and its fields saved and loaded back (encoding 0 as the module writes it, and
/// RedisBloom 8.12's encoding 1). Input: [encver byte][u16 fields length][fields][operations].
pub fn cms_rdb(data: &[u8]) {
    use redbloom_core::cms::Increment;
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 4) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(mut cms) = rdb::load_cms(&mut fields, encver) else {
        return;
    };
    while let Some(op) = input.u8() {
        let item = input.item();
        match op % 3 {
            0 => {
                let before = cms.clone();
                match cms.incr_by(&item, input.i64()) {
                    Increment::Estimate(estimate) => assert_eq!(cms.query(&item), estimate),
                    Increment::Underflow => assert_eq!(cms, before),
                    Increment::Overflow if cms.cell_size() != 4 => assert_eq!(cms, before),
                    Increment::Overflow => {}
                }
            }
            1 => {
                let _ = cms.query(&item);
            }
            _ => {
                let copy = cms.clone();
                if let Ok(merged) = cms.merge(&[(&copy, input.i64())]) {
                    merged.apply(&mut cms);
                }
            }
        }
    }
    let mut saved = Fields::default();
    rdb::save_cms(&cms, &mut saved);
    assert_eq!(
        rdb::load_cms(&mut saved, rdb::CMS_ENCODING).as_ref(),
        Some(&cms)
    );
    let mut v1 = Fields::default();
    rdb::save_cms_v1(&cms, &mut v1);
    assert_eq!(
        rdb::load_cms(&mut v1, rdb::CMS_CELL_SIZE_ENCODING).as_ref(),
        Some(&cms)
    );
}

/// Top-K's RDB decoder (`rdb::load_topk`) over a field stream built from the input, then
/// the loaded value in use: adds with increments up to TOPK.INCRBY's limit, queries,
/// counts, the list (sorted, no count 0), and its fields saved and loaded back. Input:
/// [encver byte][u16 fields length][fields][operations].
pub fn topk_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 3) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(mut topk) = rdb::load_topk(&mut fields, encver) else {
        return;
    };
    while let Some(op) = input.u8() {
        let item = input.item();
        match op % 4 {
            0 => {
                let by = u32::from(input.u16()) % (redbloom_core::topk::MAX_INCREMENT + 1);
                let _ = topk.add(&item, by);
            }
            1 => {
                let _ = topk.query(&item);
            }
            2 => {
                let _ = topk.count(&item);
            }
            _ => {
                let list = topk.list();
                assert!(list.windows(2).all(|w| w[0].count >= w[1].count));
                assert!(list.iter().all(|e| e.count != 0));
                assert_eq!(list.len(), topk.listed_entries() as usize);
            }
        }
    }
    let mut saved = Fields::default();
    rdb::save_topk(&topk, &mut saved);
    let back = rdb::load_topk(&mut saved, rdb::TOPK_ENCODING).expect("a saved Top-K loads");
    let mut again = Fields::default();
    rdb::save_topk(&back, &mut again);
    assert_eq!(again, {
        let mut first = Fields::default();
        rdb::save_topk(&topk, &mut first);
        first
    });
}

/// The t-digest's RDB decoder (`rdb::load_tdigest`) over a field stream built from the
/// input, then the loaded digest in use: adds, every query, merges into itself, a reset;
/// its fields saved and loaded back give the digest merged. Input: [encver byte][u16
/// fields length][fields][operations].
pub fn tdigest_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 3) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(mut digest) = rdb::load_tdigest(&mut fields, encver) else {
        return;
    };
    while let Some(op) = input.u8() {
        let x = f64::from_bits(input.u64());
        match op % 8 {
            0 if x.is_finite() => {
                let _ = digest.add(x, 1);
            }
            1 => {
                let q = (x.abs() % 1.0).min(1.0);
                let _ = digest.quantile(if q.is_nan() { 0.5 } else { q });
            }
            2 if !x.is_nan() => {
                let _ = digest.cdf(x);
            }
            3 if !x.is_nan() => {
                let _ = digest.rank(x, op & 8 != 0);
            }
            4 => {
                let _ = digest.by_rank((x.to_bits() >> 1) as i64 % 1000, op & 8 != 0);
            }
            5 => {
                let _ = digest.trimmed_mean(0.1, 0.9);
            }
            6 => {
                let mut copy = digest.clone();
                if copy.compress().is_ok() {
                    let _ = digest.add_centroids_of(&copy);
                }
            }
            _ => {
                if op == 255 {
                    digest.reset();
                }
            }
        }
    }
    let mut saved = Fields::default();
    rdb::save_tdigest(&digest, &mut saved);
    let mut merged = digest.clone();
    if merged.compress().is_ok() {
        let loaded = rdb::load_tdigest(&mut saved, rdb::TDIGEST_ENCODING);
        // Weights are saved as doubles (RedisBloom's layout): exact below 2^53. A buffer
        // that cannot merge (a total weight at most 1) is saved without its nodes' values
        // and loads as zero nodes, as in RedisBloom.
        if (0..1 << 53).contains(&merged.size()) && !merged.has_unmerged() {
            assert_eq!(loaded, Some(merged));
        } else {
            assert!(loaded.is_some(), "a saved digest must load");
        }
    }
}

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

/// Command sequences on the core: adds, deletes, compactions, SCANDUMP → LOADCHUNK
/// restores (chunks in any order) and RDB save → load, on one Bloom and one Cuckoo filter
/// created with parameters from the input. After every step the item counts match a model;
/// at the end every item added (and, for Cuckoo, not deleted) is found.
pub fn ops(data: &[u8]) {
    let mut input = Input::new(data);
    let p = input.bytes(6).to_vec();
    let p = |i: usize| p.get(i).copied().unwrap_or(0);
    let capacity = 1 + u64::from(p(0) % 64);
    let error = [0.5, 0.1, 0.01, 0.001, 1e-6][usize::from(p(1) % 5)];
    let growth = u32::from(p(2) % 5);
    let scaling = p(2) & 0x80 == 0;
    let blocked = p(1) & 0x80 != 0;
    let mut chain = Chain::with_layout(capacity, error, growth, scaling, blocked, MAX_BYTES)
        .expect("BF create");
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
        assert_eq!(chain.items(), bf_added);
        assert_eq!(cuckoo.num_items(), cf_items.len() as u64);
    }
    for item in &bf_items {
        assert!(chain.contains(chain.hash(item)), "BF false negative");
    }
    for item in &cf_items {
        assert!(cuckoo.contains(&CuckooHash::new(item)), "CF false negative");
    }
}

/// WBF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
/// in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
/// [filter operations].
pub fn wbf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut filter) = window_dump::filter_from_header(header, MAX_BYTES) else {
        return;
    };
    assert!(filter.is_valid());
    load_chunks(&mut filter, input.split(), window_dump::load_chunk);
    exercise_window(filter, &mut input);
}

/// The window filter's RDB decoder (`rdb::load_window`) over a field stream built from the
/// input, then the loaded filter in use. Input: [encver byte][u16 fields length][fields]
/// [operations].
pub fn wbf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 4) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = rdb::load_window(&mut fields, encver) else {
        return;
    };
    assert!(filter.is_valid());
    exercise_window(filter, &mut input);
}

/// A target's entry point: one input.
pub type Target = fn(&[u8]);

/// Every target by name, as `fuzz_targets/` and `seeds/` name them.
pub const ALL: [(&str, Target); 17] = [
    ("bf_dump", bf_dump),
    ("cf_dump", cf_dump),
    ("cbf_dump", cbf_dump),
    ("bf_rdb", bf_rdb),
    ("cf_rdb", cf_rdb),
    ("cbf_rdb", cbf_rdb),
    ("wbf_dump", wbf_dump),
    ("wbf_rdb", wbf_rdb),
    ("cms_rdb", cms_rdb),
    ("topk_rdb", topk_rdb),
    ("tdigest_rdb", tdigest_rdb),
    ("sf_dump", crate::sf_targets::sf_dump),
    ("sf_rdb", crate::sf_targets::sf_rdb),
    ("xf_dump", crate::xf_targets::xf_dump),
    ("xf_rdb", crate::xf_targets::xf_rdb),
    ("ops", ops),
    ("merge", crate::merge::merge),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn dir(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
    }

    /// Each target's seeds run through it without a failure, and every target has seeds.
    #[test]
    fn every_seed_passes_its_target() {
        for (name, target) in super::ALL {
            let mut seeds = 0;
            for entry in std::fs::read_dir(dir("seeds").join(name)).expect("a seed directory") {
                let path = entry.unwrap().path();
                target(&std::fs::read(&path).unwrap());
                seeds += 1;
            }
            assert!(seeds > 0, "{name} has no seeds");
        }
    }

    /// The list above is every target of `fuzz_targets/`.
    #[test]
    fn every_target_is_listed() {
        let mut files: Vec<String> = std::fs::read_dir(dir("fuzz_targets"))
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        files.sort();
        let mut listed: Vec<String> = super::ALL.iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed);
    }
}
