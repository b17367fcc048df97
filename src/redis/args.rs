//! Argument helpers shared by every command family.

use super::errors;
use super::ffi::{Args, Key, KeyState};
use redis_module::native_types::RedisType;
use redis_module::RedisError;

/// The first argument at or after `from` equal to `keyword` (ASCII case-insensitive).
/// Starting after the positional arguments keeps a key named like a keyword a key.
pub fn find_keyword(args: &Args, from: usize, keyword: &str) -> Option<usize> {
    (from..args.len()).find(|&i| args.bytes(i).eq_ignore_ascii_case(keyword.as_bytes()))
}

/// The first byte of an option token, lower-cased (RedisBloom's *.INSERT dispatch).
pub fn option_letter(token: &[u8], index: usize) -> Option<u8> {
    token.get(index).map(u8::to_ascii_lowercase)
}

/// The value a command that needs an existing filter finds: `ERR not found` when the key
/// is empty, WRONGTYPE when it holds anything else.
pub fn existing<'k, T>(key: &'k Key, of: &RedisType) -> Result<&'k mut T, RedisError> {
    match key.state::<T>(of) {
        KeyState::Ours(value) => Ok(value),
        KeyState::Empty => Err(RedisError::Str(errors::NOT_FOUND)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}
