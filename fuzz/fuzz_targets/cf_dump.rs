//! CF.LOADCHUNK: a 38-byte header (any bytes), then data chunks at any positions, then the
//! filter in use. Input: [38-byte header][u16 chunks length][(i64 pos, u16 len, data)...]
//! [filter operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::cuckoo_dump;
use redbloom_fuzz::{exercise_cuckoo, Input, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let header = input.bytes(cuckoo_dump::HEADER_LEN);
    let Ok(mut filter) = cuckoo_dump::filter_from_header(header, MAX_BYTES) else {
        return;
    };
    let mut chunks = input.split();
    while !chunks.is_empty() {
        let pos = chunks.i64();
        let len = usize::from(chunks.u16());
        let data = chunks.bytes(len);
        let before = filter.clone();
        if cuckoo_dump::load_chunk(&mut filter, pos, data).is_err() {
            assert_eq!(filter, before, "a refused chunk changed the filter");
        }
    }
    exercise_cuckoo(filter, &mut input);
});
