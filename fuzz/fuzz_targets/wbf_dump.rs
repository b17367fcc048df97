//! WBF.LOADCHUNK: a header (any bytes), then data chunks at any iterators, then the filter
//! in use. Input: [u16 header length][header][u16 chunks length][(i64 iter, u16 len, data)...]
//! [filter operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::wbf_dump(data));
