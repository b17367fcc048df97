//! The counting filter's RDB decoder (`rdb::load_counting`) over a field stream built from
//! the input, then the loaded filter in use. Input: [encver byte][u16 fields length][fields]
//! [operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::rdb;
use redbloom_fuzz::{exercise_counting, fields_from, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 4) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(chain) = rdb::load_counting(&mut fields, encver) else {
        return;
    };
    assert!(chain.is_valid());
    exercise_counting(chain, &mut input);
});
