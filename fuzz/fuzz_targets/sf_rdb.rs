//! The static filter's RDB decoder (`rdb::load_static`) over a field stream built from the input, then the loaded filter in use.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::sf_targets::sf_rdb(data));
