//! The Top-K RDB decoder (`rdb::load_topk`) over a field stream built from the input, then
//! the loaded value in use. Input: [encver byte][u16 fields length][fields][operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::topk_rdb(data));
