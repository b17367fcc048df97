//! Command sequences on the core: adds, deletes, compactions, SCANDUMP → LOADCHUNK
//! restores (chunks in any order) and RDB save → load, on one Bloom and one Cuckoo filter
//! created with parameters from the input. After every step the item counts match a model;
//! at the end every item added (and, for Cuckoo, not deleted) is found.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::ops(data));
