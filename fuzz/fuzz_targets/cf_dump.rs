//! CF.LOADCHUNK: a 38-byte header (any bytes), then data chunks at any positions, then the
//! filter in use. Input: [38-byte header][u16 chunks length][(i64 pos, u16 len, data)...]
//! [filter operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::cf_dump(data));
