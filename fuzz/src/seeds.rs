//! The seed corpus (`fuzz/seeds/<target>/`), made by the current encoders:
//! `cargo test --manifest-path fuzz/Cargo.toml -- --ignored` rewrites it, and
//! [`committed_seeds_are_the_encoders_output`] (in `make test`) fails when a committed seed
//! is not byte for byte what the encoders make now — so no seed passes only because it
//! holds an old checksum or layout.
use super::*;
use redbloom_core::cms::CountMinSketch;
use redbloom_core::cuckoo::CuckooParams;
use std::path::Path;

/// A seed: its target, file name and bytes.
pub(crate) type Seed = (&'static str, String, Vec<u8>);

fn seeds_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds")
}

/// Every seed the encoders make (those of the SF and XF targets from `sf_targets` and
/// `xf_targets`).
fn encoder_seeds() -> Vec<Seed> {
    let mut seeds = family_seeds();
    seeds.extend(crate::sf_targets::tests::sf_seeds());
    seeds.extend(crate::xf_targets::tests::xf_seeds());
    seeds
}

/// `cargo test --manifest-path fuzz/Cargo.toml write_seeds -- --ignored`
#[test]
#[ignore]
fn write_seeds() {
    for (target, name, data) in encoder_seeds() {
        let dir = seeds_dir().join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    }
}

/// Each committed seed the encoders make is their current output, byte for byte.
#[test]
fn committed_seeds_are_the_encoders_output() {
    let seeds = encoder_seeds();
    assert!(seeds.len() >= 30, "{} seeds", seeds.len());
    for (target, name, data) in &seeds {
        let path = seeds_dir().join(target).join(name);
        let committed = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run write_seeds)", path.display()));
        assert!(
            &committed == data,
            "{} differs from what the encoders make now: rewrite it with `cargo test \
             --manifest-path fuzz/Cargo.toml write_seeds -- --ignored`",
            path.display()
        );
    }
}

/// `header` after its length (a u16), as the dump targets read a variable-size header.
pub(crate) fn with_len(header: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u16).to_le_bytes().to_vec();
    out.extend_from_slice(header);
    out
}

/// A dump target's seed: `head`, then the chunks ([u16 length of them all], each
/// [i64 iter][u16 length][data]), then `ops`.
pub(crate) fn dump_seed<'a>(
    mut head: Vec<u8>,
    chunks: impl IntoIterator<Item = (i64, &'a [u8])>,
    ops: &[u8],
) -> Vec<u8> {
    let mut section = Vec::new();
    for (iter, data) in chunks {
        section.extend_from_slice(&iter.to_le_bytes());
        section.extend_from_slice(&(data.len() as u16).to_le_bytes());
        section.extend_from_slice(data);
    }
    head.extend_from_slice(&(section.len() as u16).to_le_bytes());
    head.extend_from_slice(&section);
    head.extend_from_slice(ops);
    head
}

/// Every chunk a SCANDUMP-style `chunk` function hands out, from the first.
fn chunks_of<'a>(chunk: impl Fn(i64) -> Option<(i64, &'a [u8])>) -> Vec<(i64, &'a [u8])> {
    std::iter::successors(chunk(1), |&(next, _)| chunk(next)).collect()
}

/// An RDB target's seed: [encver][u16 length][the fields, encoded][ops].
pub(crate) fn rdb_seed(encver: u8, fields: &Fields, ops: &[u8]) -> Vec<u8> {
    let enc = encode_fields(fields);
    let mut seed = vec![encver];
    seed.extend_from_slice(&(enc.len() as u16).to_le_bytes());
    seed.extend_from_slice(&enc);
    seed.extend_from_slice(ops);
    seed
}

fn ops() -> Vec<u8> {
    // add "a", add "bc", check "a", dump, add "a", round trip.
    vec![0, 1, b'a', 1, 2, b'b', b'c', 5, 1, b'a', 9, 1, 1, b'a', 7]
}

/// cms_rdb's operations: "x" by 300 (past a 1-byte cell), by -400 (an underflow), by -9,
/// a query of "x", a merge into itself with weight 2.
fn cms_ops() -> Vec<u8> {
    let mut ops = Vec::new();
    for by in [300i64, -400, -9] {
        ops.extend_from_slice(&[0, 1, b'x']);
        ops.extend_from_slice(&by.to_le_bytes());
    }
    ops.extend_from_slice(&[1, 1, b'x', 2, 1, b'x']);
    ops.extend_from_slice(&2i64.to_le_bytes());
    ops
}

fn chains() -> Vec<Chain> {
    let mut out = Vec::new();
    // The last two have the cache-local layout: seeds with its header and option bit.
    for (cap, err, growth, scaling, blocked, n) in [
        (10, 0.1, 2, true, false, 1),
        (5, 0.01, 2, true, false, 30),
        (3, 0.01, 2, false, false, 3),
        (5, 0.01, 2, true, true, 30),
        (3, 0.001, 2, false, true, 3),
    ] {
        let mut chain = Chain::with_layout(cap, err, growth, scaling, blocked, u64::MAX).unwrap();
        for i in 0..n {
            chain.add(chain.hash(format!("{i}").as_bytes()), u64::MAX);
        }
        out.push(chain);
    }
    out
}

fn cuckoos() -> Vec<CuckooFilter> {
    let mut out = Vec::new();
    for (capacity, bucket_size, expansion, n) in [(8, 2, 1, 3), (4, 1, 2, 12), (16, 4, 0, 10)] {
        let params = CuckooParams {
            capacity,
            bucket_size,
            max_iterations: 20,
            expansion,
        };
        let mut f = CuckooFilter::new(params, u64::MAX).unwrap();
        for i in 0..n {
            let _ = f.insert(&CuckooHash::new(format!("{i}").as_bytes()), u64::MAX);
        }
        out.push(f);
    }
    out
}

fn windows() -> Vec<WindowFilter> {
    let mut out = Vec::new();
    for (cap, err, window, n) in [
        (10, 0.1, None, 30),
        (20, 0.01, Some(500), 10),
        (4, 0.3, Some(3), 9),
    ] {
        let mut f = WindowFilter::new(cap, err, window, 1000, u64::MAX).unwrap();
        for i in 0..n {
            f.add(HashPair::wide(format!("{i}").as_bytes()), 1000 + 7 * i);
        }
        out.push(f);
    }
    out
}

/// The seeds of the BF, CF and WBF codecs, the command sequences and the merges.
fn family_seeds() -> Vec<Seed> {
    let mut seeds: Vec<Seed> = Vec::new();
    let mut write = |target: &'static str, name: &str, data: &[u8]| {
        seeds.push((target, name.to_string(), data.to_vec()));
    };
    for (i, chain) in chains().into_iter().enumerate() {
        // bf_dump: [u16 header len][header][chunks][filter ops]
        let head = with_len(&bloom_dump::header(&chain));
        let chunks = chunks_of(|iter| bloom_dump::chunk(&chain, iter));
        write(
            "bf_dump",
            &format!("seed{i}"),
            &dump_seed(head, chunks, &ops()),
        );
        // bf_rdb: [encver][u16 fields len][fields][filter ops]
        let mut fields = Fields::default();
        rdb::save_chain(&chain, &mut fields);
        write("bf_rdb", &format!("seed{i}"), &rdb_seed(5, &fields, &ops()));
    }
    for (i, f) in cuckoos().into_iter().enumerate() {
        let head = cuckoo_dump::header(&f).to_vec();
        let chunks = chunks_of(|pos| cuckoo_dump::chunk(&f, pos));
        write(
            "cf_dump",
            &format!("seed{i}"),
            &dump_seed(head, chunks, &ops()),
        );
        let mut fields = Fields::default();
        rdb::save_cuckoo(&f, &mut fields);
        write("cf_rdb", &format!("seed{i}"), &rdb_seed(5, &fields, &ops()));
    }
    for (i, filter) in windows().into_iter().enumerate() {
        let head = with_len(&window_dump::header(&filter));
        let chunks = chunks_of(|iter| window_dump::chunk(&filter, iter));
        write(
            "wbf_dump",
            &format!("seed{i}"),
            &dump_seed(head, chunks, &ops()),
        );
        let mut fields = Fields::default();
        rdb::save_window(&filter, &mut fields);
        write(
            "wbf_rdb",
            &format!("seed{i}"),
            &rdb_seed(2, &fields, &ops()),
        );
    }
    // cms_rdb: a sketch of each cell size as the module writes it (encoding 0, encver byte
    // 1) and as RedisBloom 8.12 does (encoding 1, encver byte 2).
    for size in [1u8, 2, 4, 8] {
        let mut cms = CountMinSketch::new(5, 3, size, u64::MAX).unwrap();
        cms.incr_by(b"x", 9);
        let mut v0 = Fields::default();
        rdb::save_cms(&cms, &mut v0);
        let name = format!("seed_cell{size}_v0");
        write("cms_rdb", &name, &rdb_seed(1, &v0, &cms_ops()));
        let mut v1 = Fields::default();
        rdb::save_cms_v1(&cms, &mut v1);
        let name = format!("seed_cell{size}_v1");
        write("cms_rdb", &name, &rdb_seed(2, &v1, &cms_ops()));
    }
    write("ops", "seed0", &[0u8; 64]);
    // merge: [family][shape][other shape][op][operands, odd one, items...] per family,
    // union and intersection, one shape and one odd operand.
    for family in 0u8..3 {
        for (op, odd) in [(0u8, 0u8), (1, 0), (0, 0x81)] {
            let mut seed = vec![family, 9, 1, 2, 9, 1, 2, op, 2, odd];
            for operand in 0u8..3 {
                seed.push(12);
                for i in 0u8..12 {
                    seed.extend_from_slice(&[1, operand.wrapping_add(i) % 7]);
                }
            }
            write("merge", &format!("seed{family}{op}{odd}"), &seed);
        }
    }
    let mut mixed: Vec<u8> = (0..=255u8).collect();
    mixed.extend((0..=255u8).rev());
    write("ops", "seed1", &mixed);
    seeds
}
