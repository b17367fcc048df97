//! CBF.DEL and CBF.COUNT, the commands BF.* has no counterpart of.

use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{existing, Key};
use crate::api::replies::reply_bool;
use crate::bf::filter_or_none;
use crate::stats::tracked;
use crate::types::COUNTING_TYPE;
use crate::write::Write;
use redbloom_core::counting::CountingChain;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// CBF.COUNT key item — the estimated multiplicity; 0 for a missing key or a key of
/// another type (the EXISTS rule).
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let n = filter_or_none::<CountingChain>(&key).map_or(0, |c| c.count(c.hash(args.bytes(2))));
    Ok(RedisValue::Integer(n as i64))
}

/// CBF.DEL key item — true (RESP2: 1) if one copy was removed, false (0) if not (absent,
/// or positive in several links). Missing key → `ERR not found`, other type → WRONGTYPE.
/// Replicated only when a copy was removed; its event is published whenever the key is a
/// counting filter.
pub fn del(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let deleted = tracked(chain, |c| c.delete(c.hash(args.bytes(2))));
    if deleted {
        write.as_received();
    }
    notify_write(ctx, args);
    reply_bool(ctx, deleted)
}
