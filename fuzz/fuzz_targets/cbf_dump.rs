//! CBF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
//! in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
//! [filter operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::counting_dump;
use redbloom_fuzz::{exercise_counting, Input, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut chain) = counting_dump::chain_from_header(header, MAX_BYTES) else {
        return;
    };
    assert!(chain.is_valid());
    let mut chunks = input.split();
    while !chunks.is_empty() {
        let iter = chunks.i64();
        let len = usize::from(chunks.u16());
        let data = chunks.bytes(len);
        let before = chain.clone();
        if counting_dump::load_chunk(&mut chain, iter, data).is_err() {
            assert_eq!(chain, before, "a refused chunk changed the filter");
        }
    }
    exercise_counting(chain, &mut input);
});
