//! The CMS RDB decoder (`rdb::load_cms`) over a field stream built from the input, then
//! the loaded sketch in use. Input: [encver byte][u16 fields length][fields][operations].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redbloom_fuzz::targets::cms_rdb(data));
