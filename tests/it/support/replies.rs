//! Expected replies, by their RESP2 shape, for tests to compare with.

use super::resp::Reply;

pub fn err(text: &str) -> Reply {
    Reply::err(text)
}

pub fn int(n: i64) -> Reply {
    Reply::Int(n)
}

pub fn ok() -> Reply {
    Reply::ok()
}

pub fn ints(values: &[i64]) -> Reply {
    Reply::int_array(values)
}
