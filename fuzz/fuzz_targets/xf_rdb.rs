//! The expandable filter's RDB decoder (rdb::load_xf) over a field stream built from the input, then the loaded filter in use.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::xf_targets::xf_rdb(data));
