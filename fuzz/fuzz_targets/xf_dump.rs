//! The expandable filter's SCANDUMP header and chunk loader, then the loaded filter in use.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::xf_targets::xf_dump(data));
