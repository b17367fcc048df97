//! The t-digest RDB decoder (`rdb::load_tdigest`) over a field stream built from the
//! input, then the loaded digest in use. Input: [encver byte][u16 fields length][fields]
//! [operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::tdigest_rdb(data));
