//! The static filter's SCANDUMP header and chunk loader, then the loaded filter in use.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::sf_targets::sf_dump(data));
