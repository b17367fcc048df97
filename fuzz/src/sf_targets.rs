//! The static filter's fuzz targets: its SCANDUMP header and chunk loader, and its RDB
//! decoder, each followed by using what was accepted (lookups, SCANDUMP → LOADCHUNK and
//! RDB save → load give back the same filter; a refused chunk changes nothing).

use crate::{fields_from, load_chunks, Input, MAX_BYTES};
use redbloom_core::rdb::{self, Fields};
use redbloom_core::static_filter::dump as static_dump;
use redbloom_core::static_filter::{item_key, StaticFilter};

/// Uses an accepted filter: lookups of input items never panic, and both round trips
/// give back the same filter.
fn exercise(filter: StaticFilter, input: &mut Input) {
    for _ in 0..crate::MAX_OPS {
        if input.is_empty() {
            break;
        }
        let _ = filter.contains(item_key(&input.item()));
    }
    let mut fields = Fields::default();
    rdb::save_static(&filter, &mut fields);
    let back = rdb::load_static(&mut fields, rdb::STATIC_ENCODING);
    assert_eq!(back.as_ref(), Some(&filter), "RDB round trip");
    let sequence = static_dump::load_sequence(&filter);
    let mut loaded =
        static_dump::filter_from_header(&sequence[0].1, u64::MAX).expect("own header loads");
    for (iter, data) in &sequence[1..] {
        static_dump::load_chunk(&mut loaded, *iter, data).expect("own chunk loads");
    }
    assert_eq!(loaded, filter, "SCANDUMP round trip");
}

/// The static filter's header and chunk loader. Input: [u16 header length][header]
/// [u16 chunks length][(i64 iterator, u16 length, data)...][lookups].
pub fn sf_dump(data: &[u8]) {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut filter) = static_dump::filter_from_header(header, MAX_BYTES) else {
        return;
    };
    load_chunks(&mut filter, input.split(), static_dump::load_chunk);
    exercise(filter, &mut input);
}

/// The static filter's RDB decoder. Input: [encver byte][u16 fields length][fields]
/// [lookups].
pub fn sf_rdb(data: &[u8]) {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 5) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = rdb::load_static(&mut fields, encver) else {
        return;
    };
    exercise(filter, &mut input);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::seeds::{dump_seed, rdb_seed, with_len, Seed};
    use redbloom_core::rdb::Field;
    use redbloom_core::static_filter::{build_with, Encoding};
    use std::path::Path;

    /// Seeds 0–3: binary fuse filters (RDB encoding 1); 4–7: ribbon filters (encoding 2);
    /// 8–11: encoding 3 (seed 11: 12,000 items at 0.3, 50 of them bumped).
    const SEEDS: usize = 12;

    fn filters() -> Vec<StaticFilter> {
        [Encoding::Fuse, Encoding::StandardRibbon, Encoding::Ribbon]
            .iter()
            .flat_map(|&encoding| {
                let last = if encoding == Encoding::Ribbon {
                    (12_000, 0.3)
                } else {
                    (200, 1e-5)
                };
                [(0u64, 0.1), (3, 0.01), (40, 1e-3), last]
                    .into_iter()
                    .map(move |(n, error)| {
                        let keys = (0..n)
                            .map(|i| item_key(format!("i{i}").as_bytes()))
                            .collect();
                        build_with(keys, error, u64::MAX, encoding).unwrap()
                    })
            })
            .collect()
    }

    /// The seeds reach the accepting paths (a target fed only refused inputs checks
    /// nothing).
    #[test]
    fn the_seeds_are_accepted() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for i in 0..SEEDS {
            let seed = std::fs::read(dir.join("sf_rdb").join(format!("seed{i}"))).unwrap();
            let mut input = Input::new(&seed);
            let encver = i32::from(input.u8().unwrap() % 5) - 1;
            let mut fields = fields_from(&mut input.split());
            assert!(
                rdb::load_static(&mut fields, encver).is_some(),
                "sf_rdb seed{i}"
            );
            let seed = std::fs::read(dir.join("sf_dump").join(format!("seed{i}"))).unwrap();
            let mut input = Input::new(&seed);
            let len = usize::from(input.u16());
            let mut f = static_dump::filter_from_header(input.bytes(len), MAX_BYTES).unwrap();
            let mut chunks = input.split();
            let (iter, len) = (chunks.i64(), usize::from(chunks.u16()));
            static_dump::load_chunk(&mut f, iter, chunks.bytes(len)).unwrap();
            assert!(f.is_complete(), "sf_dump seed{i}");
        }
    }

    /// The SF targets' seeds (written by `seeds::write_seeds`).
    pub(crate) fn sf_seeds() -> Vec<Seed> {
        let mut seeds: Vec<Seed> = Vec::new();
        let mut write = |target: &'static str, name: &str, data: &[u8]| {
            seeds.push((target, name.to_string(), data.to_vec()));
        };
        let lookups: Vec<u8> = (0..40u8).flat_map(|i| [2, b'i', b'0' + i % 10]).collect();
        for (i, filter) in filters().into_iter().enumerate() {
            let sequence = static_dump::load_sequence(&filter);
            let chunks = sequence[1..].iter().map(|(iter, data)| (*iter, &data[..]));
            let seed = dump_seed(with_len(&sequence[0].1), chunks, &lookups);
            write("sf_dump", &format!("seed{i}"), &seed);
            let mut fields = Fields::default();
            rdb::save_static(&filter, &mut fields);
            // The encoding byte: 2 is encoding 1 (untagged), 3 encoding 2, 4 encoding 3.
            let encver = match filter.encoding() {
                Encoding::Fuse => {
                    assert_eq!(fields.fields.remove(0), Field::Unsigned(1));
                    2
                }
                Encoding::StandardRibbon => 3,
                Encoding::Ribbon => 4,
            };
            write(
                "sf_rdb",
                &format!("seed{i}"),
                &rdb_seed(encver, &fields, &lookups),
            );
        }
        seeds
    }
}
