//! The window filter's RDB decoder (`rdb::load_window`) over a field stream built from the
//! input, then the loaded filter in use. Input: [encver byte][u16 fields length][fields]
//! [operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::wbf_rdb(data));
