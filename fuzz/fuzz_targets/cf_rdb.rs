//! The CF RDB decoder (`rdb::load_cuckoo`) over a field stream built from the input, then
//! the loaded filter in use. Input: [encver byte][u16 fields length][fields][operations].
#![no_main]

use libfuzzer_sys::fuzz_target;
use redbloom::filter::rdb;
use redbloom_fuzz::{exercise_cuckoo, fields_from, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let encver = i32::from(input.u8().unwrap_or(0) % 7) - 1;
    let mut fields = fields_from(&mut input.split());
    let Some(filter) = rdb::load_cuckoo(&mut fields, encver) else {
        return;
    };
    exercise_cuckoo(filter, &mut input);
});
