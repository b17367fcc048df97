//! The expandable filter's fuzz targets: its SCANDUMP header and chunk loader, and its RDB
//! decoder, each followed by using what was accepted (adds, deletes and lookups under the
//! memory ceiling with no false negative, then SCANDUMP → LOADCHUNK and RDB save → load give
//! back the same filter; a refused chunk changes nothing).

use crate::{fields_from, load_chunks, Input, MAX_BYTES, MAX_OPS};
use redbloom_core::expandable::dump::{load_sequence, Loader};
use redbloom_core::expandable::rdb::{load_xf, save_xf, XF_ENCODING};
use redbloom_core::expandable::XFilter;
use redbloom_core::rdb::Fields;

/// Uses an accepted filter: adds (op 0), deletes of an item added before (op 1) and
/// lookups (op 2) of input items; every item added and not deleted is found; both round
/// trips give back the same filter.
fn exercise(mut f: XFilter, input: &mut Input) {
    let mut added: Vec<Vec<u8>> = Vec::new();
    for _ in 0..MAX_OPS {
        let Some(op) = input.u8() else { break };
        let item = input.item();
        let h = XFilter::hash(&item);
        match op % 3 {
            0 => {
                let before = f.clone();
                match f.insert(h, MAX_BYTES) {
                    Ok(()) => added.push(item),
                    Err(_) => assert_eq!(f, before, "a refused add changed the filter"),
                }
            }
            1 => {
                if let Some(at) = added.iter().position(|a| *a == item) {
                    assert!(f.delete(h), "an added item was not found to delete");
                    added.swap_remove(at);
                }
            }
            _ => {
                let _ = (f.contains(h), f.count(h));
            }
        }
        for a in &added {
            assert!(f.contains(XFilter::hash(a)), "false negative");
        }
    }
    let mut fields = Fields::default();
    save_xf(&f, &mut fields);
    assert_eq!(
        load_xf(&mut fields, XF_ENCODING).as_ref(),
        Some(&f),
        "RDB round trip"
    );
    let sequence = load_sequence(&f);
    let mut loader = Loader::from_header(&sequence[0].1, u64::MAX).expect("own header loads");
    for (iter, data) in &sequence[1..] {
        loader.load_chunk(*iter, data).expect("own chunk loads");
    }
    assert_eq!(loader.finish().as_ref(), Ok(&f), "SCANDUMP round trip");
}

/// The header and chunk loader. Input: [u16 header length][header]
/// [u16 chunks length][(i64 iterator, u16 length, data)...][ops].
pub fn xf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut loader) = Loader::from_header(header, MAX_BYTES) else {
        return;
    };
    load_chunks(
        &mut loader,
        input.split(),
        |l: &mut Loader, iter, data: &[u8]| l.load_chunk(iter, data),
    );
    let Ok(f) = loader.finish() else {
        return;
    };
    exercise(f, &mut input);
}

/// The RDB decoder. Input: [encver byte][u16 fields length][fields][ops].
pub fn xf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 3);
    let mut fields = fields_from(&mut input.split());
    let Some(f) = load_xf(&mut fields, encver) else {
        return;
    };
    exercise(f, &mut input);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::seeds::{dump_seed, rdb_seed, with_len, Seed};
    use redbloom_core::expandable::XfParams;
    use std::path::Path;

    const SEEDS: usize = 4;

    fn filters() -> Vec<XFilter> {
        [(0u64, 0.1), (3, 0.01), (40, 1e-3), (300, 0.05)]
            .iter()
            .map(|&(n, error_rate)| {
                let params = XfParams {
                    error_rate,
                    initial_capacity: 1,
                };
                let mut f = XFilter::new(params, u64::MAX).unwrap();
                for i in 0..n {
                    f.insert(XFilter::hash(format!("i{i}").as_bytes()), u64::MAX)
                        .unwrap();
                }
                f
            })
            .collect()
    }

    fn ops() -> Vec<u8> {
        (0..40u8)
            .flat_map(|i| [i % 3, 2, b'i', b'0' + i % 10])
            .collect()
    }

    /// The seeds reach the accepting paths.
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
            let mut l = Loader::from_header(input.bytes(len), MAX_BYTES).unwrap();
            let mut chunks = input.split();
            while !chunks.is_empty() {
                let (iter, len) = (chunks.i64(), usize::from(chunks.u16()));
                l.load_chunk(iter, chunks.bytes(len)).unwrap();
            }
            assert!(l.finish().is_ok(), "xf_dump seed{i}");
        }
    }

    /// The XF targets' seeds (written by `seeds::write_seeds`).
    pub(crate) fn xf_seeds() -> Vec<Seed> {
        let mut seeds: Vec<Seed> = Vec::new();
        for (i, f) in filters().into_iter().enumerate() {
            let sequence = load_sequence(&f);
            let chunks = sequence[1..].iter().map(|(iter, data)| (*iter, &data[..]));
            let seed = dump_seed(with_len(&sequence[0].1), chunks, &ops());
            seeds.push(("xf_dump", format!("seed{i}"), seed));
            let mut fields = Fields::default();
            save_xf(&f, &mut fields);
            let seed = rdb_seed(XF_ENCODING as u8, &fields, &ops());
            seeds.push(("xf_rdb", format!("seed{i}"), seed));
        }
        seeds
    }
}
