//! The expandable filter's fuzz targets: its SCANDUMP header and chunk loader, and its RDB
//! decoder (what RESTORE and RDB loading run), each followed by using what was accepted:
//! adds under a small ceiling, lookups, counts and deletes, no false negative for an item
//! added and not deleted, and SCANDUMP → LOADCHUNK and RDB save → load give back the same
//! bytes (a refused chunk changes nothing).

use crate::{fields_from, Input, MAX_BYTES, MAX_OPS};
use redbloom_core::expandable::dump::{self as xf_dump, Loader};
use redbloom_core::expandable::rdb::{encode, load_xf, XF_ENCODING};
use redbloom_core::expandable::XFilter;

/// The filter's RDB fields: what must survive every round trip. (Not `==`: a loaded
/// filter's partitions are allocated to the byte, a grown one's in steps.)
fn bytes_of(f: &XFilter) -> redbloom_core::rdb::Fields {
    encode(f)
}

/// Both round trips give back the same filter.
fn round_trips(filter: &XFilter) {
    let mut fields = encode(filter);
    let back = load_xf(&mut fields, XF_ENCODING).expect("own RDB fields load");
    assert_eq!(bytes_of(&back), bytes_of(filter), "RDB round trip");
    let sequence = xf_dump::load_sequence(filter);
    let mut loader = Loader::from_header(&sequence[0].1, u64::MAX).expect("own header loads");
    for (iter, data) in &sequence[1..] {
        loader.load_chunk(*iter, data).expect("own chunk loads");
    }
    let loaded = loader.finish().expect("own dump completes");
    assert_eq!(bytes_of(&loaded), bytes_of(filter), "SCANDUMP round trip");
}

/// Uses an accepted filter: operations from the input (0 add, 1 check, 2 count, 3 delete
/// an added item, 4 round trips), then every item added and not deleted is found.
fn exercise(mut filter: XFilter, input: &mut Input) {
    let mut added: Vec<Vec<u8>> = Vec::new();
    for _ in 0..MAX_OPS {
        let Some(op) = input.u8() else {
            break;
        };
        let item = input.item();
        let h = XFilter::hash(&item);
        match op % 5 {
            0 => {
                let before = bytes_of(&filter);
                match filter.insert(h, MAX_BYTES) {
                    Ok(()) => added.push(item),
                    Err(_) => assert_eq!(bytes_of(&filter), before, "a refused add changed it"),
                }
            }
            1 => {
                let _ = filter.contains(h);
            }
            2 => {
                let n = filter.count(h);
                let times = added.iter().filter(|a| **a == item).count() as u64;
                assert!(n >= times, "count {n} below the {times} adds");
            }
            3 => {
                if let Some(at) = added.iter().position(|a| *a == item) {
                    assert!(filter.delete(h), "an added item not deleted");
                    added.swap_remove(at);
                }
            }
            _ => round_trips(&filter),
        }
    }
    for item in &added {
        assert!(filter.contains(XFilter::hash(item)), "a false negative");
    }
    round_trips(&filter);
}

/// The header and chunk loader (XF.LOADCHUNK). Input: [u16 header length][header]
/// [u16 chunks length][(i64 iterator, u16 length, data)...][operations].
pub fn xf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut loader) = Loader::from_header(header, MAX_BYTES) else {
        return;
    };
    let mut chunks = input.split();
    while !chunks.is_empty() {
        let iter = chunks.i64();
        let len = usize::from(chunks.u16());
        let data = chunks.bytes(len);
        let before = loader.loaded();
        if loader.load_chunk(iter, data).is_err() {
            assert_eq!(loader.loaded(), before, "a refused chunk changed the load");
        }
    }
    if !loader.is_complete() {
        return;
    }
    let Ok(filter) = loader.finish() else {
        return;
    };
    exercise(filter, &mut input);
}

/// The RDB decoder (RDB loading, RESTORE). Input: [encver byte][u16 fields length][fields]
/// [operations].
pub fn xf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 3);
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = load_xf(&mut fields, encver) else {
        return;
    };
    exercise(filter, &mut input);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::seeds::{dump_seed, rdb_seed, with_len, Seed};
    use redbloom_core::expandable::XfParams;
    use std::path::Path;

    const SEEDS: usize = 4;

    /// Filters of 0, 3, 300 and 600 items (the last two split partitions), all under the
    /// targets' ceiling so their adds can grow them.
    fn filters() -> Vec<XFilter> {
        [(0u64, 0.1, 1), (3, 0.01, 100), (300, 0.01, 16), (600, 0.001, 100)]
            .iter()
            .map(|&(n, error_rate, initial_capacity)| {
                let params = XfParams {
                    error_rate,
                    initial_capacity,
                };
                let mut f = XFilter::new(params, u64::MAX).unwrap();
                for i in 0..n {
                    f.insert(XFilter::hash(format!("i{i}").as_bytes()), u64::MAX)
                        .unwrap();
                }
                assert!(f.memory_bytes() as u64 <= MAX_BYTES, "{}", f.memory_bytes());
                f
            })
            .collect()
    }

    /// The operations every seed ends with: adds, checks, a count, a delete, round trips.
    fn ops() -> Vec<u8> {
        let mut ops = Vec::new();
        for i in 0..30u8 {
            ops.extend_from_slice(&[0, 2, b'n', b'0' + i % 10]);
            ops.extend_from_slice(&[1, 2, b'i', b'0' + i % 10]);
        }
        ops.extend_from_slice(&[2, 2, b'n', b'1', 3, 2, b'n', b'1', 4, 0]);
        ops
    }

    /// The seeds reach the accepting paths (a target fed only refused inputs checks
    /// nothing).
    #[test]
    fn the_seeds_are_accepted() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for i in 0..SEEDS {
            let seed = std::fs::read(dir.join("xf_rdb").join(format!("seed{i}"))).unwrap();
            let mut input = Input::new(&seed);
            let encver = i32::from(input.u8().unwrap() % 3);
            let mut fields = fields_from(&mut input.split());
            assert!(load_xf(&mut fields, encver).is_some(), "xf_rdb seed{i}");
            let seed = std::fs::read(dir.join("xf_dump").join(format!("seed{i}"))).unwrap();
            let mut input = Input::new(&seed);
            let len = usize::from(input.u16());
            let mut loader = Loader::from_header(input.bytes(len), MAX_BYTES).unwrap();
            let mut chunks = input.split();
            while !chunks.is_empty() {
                let (iter, len) = (chunks.i64(), usize::from(chunks.u16()));
                loader.load_chunk(iter, chunks.bytes(len)).unwrap();
            }
            assert!(loader.finish().is_ok(), "xf_dump seed{i}");
            // And the targets run them through.
            xf_dump(&seed);
            xf_rdb(&std::fs::read(dir.join("xf_rdb").join(format!("seed{i}"))).unwrap());
        }
    }

    /// The XF targets' seeds (written by `seeds::write_seeds`).
    pub(crate) fn xf_seeds() -> Vec<Seed> {
        let mut seeds: Vec<Seed> = Vec::new();
        for (i, filter) in filters().into_iter().enumerate() {
            let sequence = xf_dump::load_sequence(&filter);
            let chunks = sequence[1..].iter().map(|(iter, data)| (*iter, &data[..]));
            let seed = dump_seed(with_len(&sequence[0].1), chunks, &ops());
            seeds.push(("xf_dump", format!("seed{i}"), seed));
            // The encoding byte: 1 is XF_ENCODING.
            let seed = rdb_seed(XF_ENCODING as u8, &encode(&filter), &ops());
            seeds.push(("xf_rdb", format!("seed{i}"), seed));
        }
        seeds
    }
}
