//! Option parsing shared by every command family: keyword search, first-letter options.

use crate::api::args::Args;

/// The first argument at or after `from` equal to `keyword` (ASCII case-insensitive).
/// Starting after the positional arguments keeps a key named like a keyword a key.
pub fn find_keyword(args: &Args, from: usize, keyword: &str) -> Option<usize> {
    (from..args.len()).find(|&i| args.bytes(i).eq_ignore_ascii_case(keyword.as_bytes()))
}

/// The first byte of an option token, lower-cased (RedisBloom's *.INSERT dispatch).
pub fn option_letter(token: &[u8], index: usize) -> Option<u8> {
    token.get(index).map(u8::to_ascii_lowercase)
}
