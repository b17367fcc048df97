//! SCANDUMP of the families whose dump is a header at iterator 0 and then numbered chunks
//! (WBF, SF): one reply shape, `[next, data]`, and `[0, ""]` after the last chunk.

use crate::api::args::Args;
use crate::api::keys::{existing, Key};
use crate::errors;
use redis_module::native_types::RedisType;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// A family's chunk reader: the chunk at an iterator and the iterator after it.
pub type Chunk<T> = fn(&T, i64) -> Option<(i64, &[u8])>;

/// `FAMILY.SCANDUMP key iterator` over a value of type `of`: `header` at 0, then what
/// `chunk` gives for the iterator (`None`: the dump is over).
pub fn scandump<T>(
    ctx: &Context,
    args: &Args,
    of: &RedisType,
    header: fn(&T) -> Vec<u8>,
    chunk: Chunk<T>,
) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let value = existing::<T>(&key, of)?;
    let iter = args
        .integer(2)
        .ok_or(RedisError::Str(errors::SCANDUMP_NOT_NUMERIC))?;
    let (next, data) = if iter == 0 {
        (1, header(value))
    } else {
        match chunk(value, iter) {
            Some((next, data)) => (next, data.to_vec()),
            None => (0, Vec::new()),
        }
    };
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(next),
        RedisValue::StringBuffer(data),
    ]))
}
