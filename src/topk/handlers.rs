//! The TOPK.* commands: RedisBloom 2.4.20's checks in its order, with its error texts;
//! replies as 2.4.20 (RESP2: items as simple strings) and 2.6 (RESP3: items as bulk
//! strings, TOPK.QUERY booleans, TOPK.INFO a map with the decay a double).
//!
//! Writes replicate as received: the decay draws come from the generator held in the
//! value (core `topk`), so a replica or an AOF replay that applies the same writes to
//! the same value builds the same value. TOPK.INCRBY checks every increment before it
//! adds anything; a bad one is a single error reply (RedisBloom 2.4.20/2.6 announce the
//! array, add the pairs before it and send one error in place of the rest).

use crate::api::args::Args;
use crate::api::events::{notify_command, notify_write};
use crate::api::keys::{Key, KeyState};
use crate::api::replication::replicate_verbatim;
use crate::api::replies::{reply_bools, reply_integers, ArrayReply, FieldsReply};
use crate::errors;
use crate::stats::tracked;
use crate::types::TOPK_TYPE;
use crate::write::Write;
use redbloom_core::topk::{
    valid_decay, TopK, TopKError, DEFAULT_DECAY, DEFAULT_DEPTH, DEFAULT_WIDTH, MAX_INCREMENT,
};
use redis_module::{Context, RedisError, RedisResult, RedisValue};
use std::ffi::CStr;

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The Top-K in `key`: `TopK: key does not exist` when empty, WRONGTYPE for anything else.
#[inline(always)]
fn existing(key: &Key) -> Result<&mut TopK, RedisError> {
    match key.state::<TopK>(&TOPK_TYPE) {
        KeyState::Ours(topk) => Ok(topk),
        KeyState::Empty => Err(error(errors::TOPK_KEY_DOES_NOT_EXIST)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// Argument `i` as a dimension: an integer in `1..=u32::MAX`.
fn dimension(args: &Args, i: usize, invalid: &'static str) -> Result<u32, RedisError> {
    args.integer(i)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&v| v >= 1)
        .ok_or(error(invalid))
}

/// TOPK.RESERVE key topk [width depth decay]. Any existing key (of any type) is `TopK:
/// key already exists`, checked before the arguments.
pub fn reserve(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 && args.len() != 6 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    if !matches!(key.state::<TopK>(&TOPK_TYPE), KeyState::Empty) {
        return Err(error(errors::TOPK_KEY_EXISTS));
    }
    let k = dimension(args, 2, errors::TOPK_INVALID_K)?;
    let (width, depth, decay) = if args.len() == 6 {
        let width = dimension(args, 3, errors::TOPK_INVALID_WIDTH)?;
        let depth = dimension(args, 4, errors::TOPK_INVALID_DEPTH)?;
        let decay = args.double(5).filter(|&d| valid_decay(d));
        (
            width,
            depth,
            decay.ok_or(error(errors::TOPK_INVALID_DECAY))?,
        )
    } else {
        (DEFAULT_WIDTH, DEFAULT_DEPTH, DEFAULT_DECAY)
    };
    let mut write = Write::new(ctx, args);
    let topk = TopK::new(k, width, depth, decay, write.max_bytes()).map_err(|e| {
        error(match e {
            TopKError::TooLarge => crate::write::too_large(),
            TopKError::OutOfMemory => errors::INSUFFICIENT_MEMORY,
            // Checked above, with RedisBloom's texts.
            TopKError::Invalid => errors::TOPK_INVALID_K,
        })
    })?;
    key.set(&TOPK_TYPE, Box::new(topk))?;
    write.as_received();
    drop(write);
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Replies with what [`TopK::add`] expelled: the item, or null.
fn expelled(reply: &mut ArrayReply, item: Option<&[u8]>) {
    match item {
        Some(item) => reply.item(item),
        None => reply.null(),
    }
}

/// Applies `(argument of the item, increment)` pairs to the Top-K of `args[1]` and
/// replies with an array of what each expelled; replicated as received, published as
/// `event`.
fn apply(
    ctx: &Context,
    args: &Args,
    topk: &mut TopK,
    pairs: &[(usize, u32)],
    event: &CStr,
) -> RedisResult {
    let mut reply = ArrayReply::with_len(ctx, pairs.len());
    tracked(topk, |topk| {
        for &(at, increment) in pairs {
            topk.add_then(args.bytes(at), increment, |item| expelled(&mut reply, item));
        }
    });
    replicate_verbatim(ctx);
    notify_command(ctx, event, args);
    reply.finish()
}

/// TOPK.ADD key item [item ...]
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let topk = existing(&key)?;
    let pairs = args.parse_each(2..args.len(), |at| Ok::<_, RedisError>((at, 1)))?;
    apply(ctx, args, topk, &pairs, c"topk.add")
}

/// TOPK.INCRBY key item increment [item increment ...]: every increment (an integer in
/// `0..=100000`) is checked before any is applied.
pub fn incrby(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let topk = existing(&key)?;
    let pairs = args.parse_each((2..args.len()).step_by(2), |at| {
        let increment = args
            .integer(at + 1)
            .and_then(|v| u32::try_from(v).ok())
            .filter(|&v| v <= MAX_INCREMENT);
        increment
            .map(|v| (at, v))
            .ok_or(error(errors::TOPK_INVALID_INCREMENT))
    })?;
    apply(ctx, args, topk, &pairs, c"topk.incrby")
}

/// TOPK.QUERY key item [item ...] (RESP3: booleans).
pub fn query(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let topk = existing(&key)?;
    reply_bools(ctx, (2..args.len()).map(|i| topk.query(args.bytes(i))))
}

/// TOPK.COUNT key item [item ...]
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let topk = existing(&key)?;
    reply_integers(
        ctx,
        (2..args.len()).map(|i| i64::from(topk.count(args.bytes(i)))),
    )
}

/// Whether `word` is what RedisBloom takes for WITHCOUNT: C's `strncasecmp(word,
/// "WITHCOUNT", len)` is 0 — a prefix of it in any case, the empty word included, or the
/// whole keyword followed by a NUL (the comparison stops at a NUL both strings share:
/// `WITHCOUNT\0…`).
fn is_withcount(word: &[u8]) -> bool {
    const KEYWORD: &[u8] = b"WITHCOUNT";
    for (i, &c) in word.iter().enumerate() {
        let k = KEYWORD.get(i).copied().unwrap_or(0);
        if !c.eq_ignore_ascii_case(&k) {
            return false;
        }
        if c == 0 {
            return true;
        }
    }
    true
}

/// TOPK.LIST key [WITHCOUNT]: the keyword is checked before the key.
pub fn list(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 && args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let with_count = args.len() == 3;
    if with_count && !is_withcount(args.bytes(2)) {
        return Err(error(errors::TOPK_WITHCOUNT_EXPECTED));
    }
    let key = Key::open(ctx, args, 1, false);
    let topk = existing(&key)?;
    let listed = topk.list();
    let per_entry = if with_count { 2 } else { 1 };
    let mut reply = ArrayReply::with_len(ctx, listed.len() * per_entry);
    for entry in listed {
        reply.item(entry.bytes());
        if with_count {
            reply.integer(i64::from(entry.count));
        }
    }
    reply.finish()
}

/// TOPK.INFO key: k, width, depth, decay (RESP3: a map, the decay a double).
#[inline(always)]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let topk = existing(&key)?;
    let reply = FieldsReply::labelled(ctx, 4);
    reply.integer(c"k", i64::from(topk.k()));
    reply.integer(c"width", i64::from(topk.width()));
    reply.integer(c"depth", i64::from(topk.depth()));
    reply.double(c"decay", topk.decay());
    reply.finish()
}
