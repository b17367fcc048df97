//! WBF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
//! in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
//! [filter operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::window_dump;
use redbloom_fuzz::{exercise_window, Input, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let len = usize::from(input.u16());
    let header = input.bytes(len);
    let Ok(mut filter) = window_dump::filter_from_header(header, MAX_BYTES) else {
        return;
    };
    assert!(filter.is_valid());
    let mut chunks = input.split();
    while !chunks.is_empty() {
        let iter = chunks.i64();
        let len = usize::from(chunks.u16());
        let data = chunks.bytes(len);
        let before = filter.clone();
        if window_dump::load_chunk(&mut filter, iter, data).is_err() {
            assert_eq!(filter, before, "a refused chunk changed the filter");
        }
    }
    exercise_window(filter, &mut input);
});
