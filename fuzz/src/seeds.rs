//! `cargo test --manifest-path fuzz/Cargo.toml -- --ignored` rewrites `fuzz/seeds/`.
use super::*;
use redbloom_core::cuckoo::CuckooParams;
use std::path::Path;

fn write(target: &str, name: &str, data: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), data).unwrap();
}

fn ops() -> Vec<u8> {
    // add "a", add "bc", check "a", dump, add "a", round trip.
    vec![0, 1, b'a', 1, 2, b'b', b'c', 5, 1, b'a', 9, 1, 1, b'a', 7]
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

#[test]
#[ignore]
fn write_seeds() {
    for (i, chain) in chains().into_iter().enumerate() {
        // bf_dump: [u16 header len][header][chunk ops][filter ops]
        let header = bloom_dump::header(&chain);
        let mut seed = (header.len() as u16).to_le_bytes().to_vec();
        seed.extend_from_slice(&header);
        let mut chunks = Vec::new();
        let mut iter = 1;
        while let Some((next, data)) = bloom_dump::chunk(&chain, iter) {
            chunks.extend_from_slice(&next.to_le_bytes());
            chunks.extend_from_slice(&(data.len() as u16).to_le_bytes());
            chunks.extend_from_slice(data);
            iter = next;
        }
        seed.extend_from_slice(&(chunks.len() as u16).to_le_bytes());
        seed.extend_from_slice(&chunks);
        seed.extend_from_slice(&ops());
        write("bf_dump", &format!("seed{i}"), &seed);
        // bf_rdb: [encver][u16 fields len][fields][filter ops]
        let mut fields = Fields::default();
        rdb::save_chain(&chain, &mut fields);
        let enc = encode_fields(&fields);
        let mut seed = vec![5];
        seed.extend_from_slice(&(enc.len() as u16).to_le_bytes());
        seed.extend_from_slice(&enc);
        seed.extend_from_slice(&ops());
        write("bf_rdb", &format!("seed{i}"), &seed);
    }
    for (i, f) in cuckoos().into_iter().enumerate() {
        let mut seed = cuckoo_dump::header(&f).to_vec();
        let mut chunks = Vec::new();
        let mut pos = 1;
        while let Some((next, data)) = cuckoo_dump::chunk(&f, pos) {
            chunks.extend_from_slice(&next.to_le_bytes());
            chunks.extend_from_slice(&(data.len() as u16).to_le_bytes());
            chunks.extend_from_slice(data);
            pos = next;
        }
        seed.extend_from_slice(&(chunks.len() as u16).to_le_bytes());
        seed.extend_from_slice(&chunks);
        seed.extend_from_slice(&ops());
        write("cf_dump", &format!("seed{i}"), &seed);
        let mut fields = Fields::default();
        rdb::save_cuckoo(&f, &mut fields);
        let enc = encode_fields(&fields);
        let mut seed = vec![5];
        seed.extend_from_slice(&(enc.len() as u16).to_le_bytes());
        seed.extend_from_slice(&enc);
        seed.extend_from_slice(&ops());
        write("cf_rdb", &format!("seed{i}"), &seed);
    }
    for (i, filter) in windows().into_iter().enumerate() {
        let header = window_dump::header(&filter);
        let mut seed = (header.len() as u16).to_le_bytes().to_vec();
        seed.extend_from_slice(&header);
        let mut chunks = Vec::new();
        let mut iter = 1;
        while let Some((next, data)) = window_dump::chunk(&filter, iter) {
            chunks.extend_from_slice(&next.to_le_bytes());
            chunks.extend_from_slice(&(data.len() as u16).to_le_bytes());
            chunks.extend_from_slice(data);
            iter = next;
        }
        seed.extend_from_slice(&(chunks.len() as u16).to_le_bytes());
        seed.extend_from_slice(&chunks);
        seed.extend_from_slice(&ops());
        write("wbf_dump", &format!("seed{i}"), &seed);
        let mut fields = Fields::default();
        rdb::save_window(&filter, &mut fields);
        let enc = encode_fields(&fields);
        let mut seed = vec![2];
        seed.extend_from_slice(&(enc.len() as u16).to_le_bytes());
        seed.extend_from_slice(&enc);
        seed.extend_from_slice(&ops());
        write("wbf_rdb", &format!("seed{i}"), &seed);
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
}
