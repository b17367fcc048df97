//! Every bit of every SCANDUMP header byte flipped in turn, for each family whose dump
//! starts with a header (BF, CBF, CF, WBF; SF's, whose checksum covers it, is swept in
//! `static_filter/tests.rs`): the decoder refuses the header, or it keeps what it read —
//! the filter it makes writes back exactly that header, lengths included, and the genuine
//! chunks then load or are refused without a panic. A decoder that accepted a length
//! field and went on with another length (or dropped a field) fails here.

use crate::bloom::{dump as bloom_dump, Chain};
use crate::counting::{dump as counting_dump, CountingChain};
use crate::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash, CuckooParams};
use crate::hash::HashPair;
use crate::window::{dump as window_dump, WindowFilter};

/// A ceiling that refuses the huge lengths a flipped high bit makes.
const MAX_BYTES: u64 = 1 << 24;

/// Flips each bit of `header`; `load` decodes it and loads `chunks`, returning the header
/// the decoded filter writes (or `None`, refused).
fn sweep(
    family: &str,
    header: &[u8],
    chunks: &[(i64, Vec<u8>)],
    load: impl Fn(&[u8], &[(i64, Vec<u8>)]) -> Option<Vec<u8>>,
) {
    assert_eq!(
        load(header, chunks).as_deref(),
        Some(header),
        "{family}: genuine"
    );
    let mut accepted = 0;
    for at in 0..header.len() {
        for bit in 0..8 {
            let mut h = header.to_vec();
            h[at] ^= 1 << bit;
            if let Some(written) = load(&h, chunks) {
                accepted += 1;
                assert!(
                    written == h,
                    "{family}: byte {at} bit {bit} read as another header"
                );
            }
        }
    }
    assert!(accepted > 0, "{family}: no flip accepted");
}

#[test]
fn bloom_headers() {
    for blocked in [false, true] {
        let mut chain = Chain::with_layout(100, 0.01, 2, true, blocked, u64::MAX).unwrap();
        for i in 0..250u32 {
            chain.add(chain.hash(&i.to_le_bytes()), u64::MAX);
        }
        let chunks: Vec<(i64, Vec<u8>)> =
            std::iter::successors(bloom_dump::chunk(&chain, 1), |&(n, _)| {
                bloom_dump::chunk(&chain, n)
            })
            .map(|(n, d)| (n, d.to_vec()))
            .collect();
        sweep("bf", &bloom_dump::header(&chain), &chunks, |h, chunks| {
            let mut c = bloom_dump::chain_from_header(h, MAX_BYTES).ok()?;
            for (iter, data) in chunks {
                let _ = bloom_dump::load_chunk(&mut c, *iter, data);
            }
            Some(bloom_dump::header(&c))
        });
    }
}

#[test]
fn counting_headers() {
    let mut chain = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    for i in 0..250u32 {
        chain.add(HashPair::wide(&i.to_le_bytes()), u64::MAX);
    }
    let chunks: Vec<(i64, Vec<u8>)> =
        std::iter::successors(counting_dump::chunk(&chain, 1), |&(n, _)| {
            counting_dump::chunk(&chain, n)
        })
        .map(|(n, d)| (n, d.to_vec()))
        .collect();
    sweep(
        "cbf",
        &counting_dump::header(&chain),
        &chunks,
        |h, chunks| {
            let mut c = counting_dump::chain_from_header(h, MAX_BYTES).ok()?;
            for (iter, data) in chunks {
                let _ = counting_dump::load_chunk(&mut c, *iter, data);
            }
            Some(counting_dump::header(&c))
        },
    );
}

#[test]
fn cuckoo_headers() {
    let params = CuckooParams {
        capacity: 64,
        expansion: 2,
        ..Default::default()
    };
    let mut f = CuckooFilter::new(params, u64::MAX).unwrap();
    for i in 0..150u32 {
        f.insert(&CuckooHash::new(&i.to_le_bytes()), u64::MAX)
            .unwrap();
    }
    let chunks: Vec<(i64, Vec<u8>)> =
        std::iter::successors(cuckoo_dump::chunk(&f, 1), |&(n, _)| {
            cuckoo_dump::chunk(&f, n)
        })
        .map(|(n, d)| (n, d.to_vec()))
        .collect();
    sweep("cf", &cuckoo_dump::header(&f), &chunks, |h, chunks| {
        let mut c = cuckoo_dump::filter_from_header(h, MAX_BYTES).ok()?;
        for (iter, data) in chunks {
            let _ = cuckoo_dump::load_chunk(&mut c, *iter, data);
        }
        Some(cuckoo_dump::header(&c).to_vec())
    });
}

#[test]
fn window_headers() {
    for window in [None, Some(60_000)] {
        let mut f = WindowFilter::new(200, 0.01, window, 1_000, u64::MAX).unwrap();
        for i in 0..500u32 {
            f.add(HashPair::wide(&i.to_le_bytes()), 1_000 + u64::from(i));
        }
        let chunks: Vec<(i64, Vec<u8>)> =
            std::iter::successors(window_dump::chunk(&f, 1), |&(n, _)| {
                window_dump::chunk(&f, n)
            })
            .map(|(n, d)| (n, d.to_vec()))
            .collect();
        sweep("wbf", &window_dump::header(&f), &chunks, |h, chunks| {
            let mut c = window_dump::filter_from_header(h, MAX_BYTES).ok()?;
            for (iter, data) in chunks {
                let _ = window_dump::load_chunk(&mut c, *iter, data);
            }
            Some(window_dump::header(&c))
        });
    }
}
