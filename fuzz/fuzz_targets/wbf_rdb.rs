//! The window filter's RDB decoder (`rdb::load_window`) over a field stream built from the
//! input, then the loaded filter in use. Input: [encver byte][u16 fields length][fields]
//! [operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::rdb;
use redbloom_fuzz::{exercise_window, fields_from, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 4) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = rdb::load_window(&mut fields, encver) else {
        return;
    };
    assert!(filter.is_valid());
    exercise_window(filter, &mut input);
});
