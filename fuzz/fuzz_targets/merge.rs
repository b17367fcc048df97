//! Merges (BF, CBF, CF; union and intersection) of filters of random shapes filled with
//! random items: no false negative, counts within their bounds, the result survives
//! SCANDUMP → LOADCHUNK and RDB save → load; every refusal the documented one.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::merge::merge(data));
