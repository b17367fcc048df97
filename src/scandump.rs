//! SCANDUMP and LOADCHUNK of the families whose dump is a header at iterator 0 and then
//! numbered chunks (WBF, SF): one reply shape, `[next, data]`, and `[0, ""]` after the last
//! chunk; and the one reply to a refused chunk (every family's).

use crate::api::args::Args;
use crate::api::events::notify_event;
use crate::api::keys::{existing, Key, KeyState};
use crate::api::types::ModuleValue;
use crate::errors;
use redbloom_core::bloom::dump::DumpError;
use redbloom_core::memory::Ceiling;
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

/// The reply to a chunk `load_chunk` refused.
pub fn chunk_error(e: DumpError) -> RedisError {
    RedisError::Str(match e {
        DumpError::BadData => errors::RECEIVED_BAD_DATA,
        DumpError::NoLink => errors::NO_LINK_FOUND,
        DumpError::TooBig => errors::CHUNK_TOO_BIG,
    })
}

/// `FAMILY.LOADCHUNK key iterator data` into a value of type `of`: iterator 1 on an empty
/// key is the header (`from_header`, under the write's memory ceiling), later iterators
/// the chunks `load` takes in order (a refused chunk changes nothing). Replicated as
/// received; `event` is the keyspace event of a load.
pub fn loadchunk<T: ModuleValue>(
    ctx: &Context,
    args: &Args,
    of: &RedisType,
    event: &[u8],
    from_header: fn(&[u8], u64) -> Result<T, DumpError>,
    load: fn(&mut T, i64, &[u8]) -> Result<(), DumpError>,
) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .ok_or(RedisError::Str(errors::LOADCHUNK_NOT_NUMERIC))?;
    let data = args.bytes(3);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<T>(of) {
        KeyState::Empty if iter == 1 => {
            let max_bytes = crate::write::Limit::of(ctx).limit_for(0);
            let value = from_header(data, max_bytes)
                .map_err(|_| RedisError::Str(errors::RECEIVED_BAD_DATA))?;
            key.set(of, Box::new(value))?;
        }
        KeyState::Empty => return Err(RedisError::Str(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Ours(value) => load(value, iter, data).map_err(chunk_error)?,
    }
    ctx.replicate_verbatim();
    notify_event(ctx, event, args, 1);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
