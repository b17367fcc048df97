//! The CMS.* commands: RedisBloom 2.4.20's checks in its order, with its error texts;
//! replies as 2.4.20 (RESP2) and 2.6 (RESP3: CMS.INFO is a map). Every write is
//! deterministic, so it replicates as received, except CMS.INITBYPROB, which replicates
//! the dimensions it chose (`CMS.INITBYDIM key width depth`: no replica recomputes them
//! with its own floating point).

use crate::api::args::Args;
use crate::api::events::{notify_command, notify_write};
use crate::api::keys::{Key, KeyState};
use crate::api::replication::replicate_verbatim;
use crate::api::replies::{reply_integers, ArrayReply, FieldsReply};
use crate::errors;
use crate::stats::tracked;
use crate::types::CMS_TYPE;
use crate::write::{Creation, Write};
use redbloom_core::cms::{dims_from_prob, CmsError, CountMinSketch};
use redis_module::{Context, RedisError, RedisResult, RedisValue};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The sketch in `key`: `CMS: key does not exist` when empty, WRONGTYPE for anything else.
fn existing(key: &Key) -> Result<&mut CountMinSketch, RedisError> {
    match key.state::<CountMinSketch>(&CMS_TYPE) {
        KeyState::Ours(cms) => Ok(cms),
        KeyState::Empty => Err(error(errors::CMS_KEY_DOES_NOT_EXIST)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

fn create_error(e: CmsError) -> RedisError {
    error(match e {
        CmsError::TooLarge => errors::TOO_LARGE,
        CmsError::InvalidDimensions => errors::CMS_INVALID_INIT_ARGUMENTS,
        _ => errors::CMS_INSUFFICIENT_MEMORY,
    })
}

/// The width and depth CMS.INITBYDIM / CMS.INITBYPROB ask for (arguments 2 and 3).
fn dimensions(args: &Args, by_prob: bool) -> Result<(u64, u64), RedisError> {
    if !by_prob {
        let width = args.integer(2).filter(|&w| w >= 1);
        let width = width.ok_or(error(errors::CMS_INVALID_WIDTH))?;
        let depth = args.integer(3).filter(|&d| d >= 1);
        let depth = depth.ok_or(error(errors::CMS_INVALID_DEPTH))?;
        return Ok((width as u64, depth as u64));
    }
    let in_range = |x: &f64| *x > 0.0 && *x < 1.0;
    let overestimation = args.double(2).filter(in_range);
    let overestimation = overestimation.ok_or(error(errors::CMS_INVALID_OVERESTIMATION))?;
    let prob = args.double(3).filter(in_range);
    let prob = prob.ok_or(error(errors::CMS_INVALID_PROB))?;
    dims_from_prob(overestimation, prob).ok_or(error(errors::CMS_INVALID_INIT_ARGUMENTS))
}

/// CMS.INITBYDIM key width depth / CMS.INITBYPROB key error probability. Any existing key
/// (of any type) is `CMS: key already exists`, checked before the arguments.
pub fn init(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    if !matches!(key.state::<CountMinSketch>(&CMS_TYPE), KeyState::Empty) {
        return Err(error(errors::CMS_KEY_EXISTS));
    }
    let by_prob = args.bytes(0).eq_ignore_ascii_case(b"cms.initbyprob");
    let (width, depth) = dimensions(args, by_prob)?;
    let mut write = Write::new(ctx, args);
    let cms = CountMinSketch::new(width, depth, write.max_bytes()).map_err(create_error)?;
    key.set(&CMS_TYPE, Box::new(cms))?;
    if by_prob {
        write.created(Creation {
            name: "INITBYDIM",
            args: vec![
                width.to_string().into_bytes(),
                depth.to_string().into_bytes(),
            ],
        });
    } else {
        write.as_received();
    }
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// CMS.INCRBY key item increment [item increment ...]. Every increment is parsed before
/// any is applied; an item whose estimate reaches `u32::MAX` gets `CMS: INCRBY overflow`
/// in its place of the array (its increment is applied, as RedisBloom does).
pub fn incrby(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let cms = existing(&key)?;
    let pairs = (args.len() - 2) / 2;
    let increments = args.parse_each((3..args.len()).step_by(2), |at| {
        let value = args
            .integer(at)
            .ok_or(error(errors::CMS_CANNOT_PARSE_NUMBER))?;
        if value < 0 {
            return Err(error(errors::CMS_NEGATIVE_NUMBER));
        }
        Ok(value as u64)
    })?;
    let mut reply = ArrayReply::with_len(ctx, pairs);
    tracked(cms, |cms| {
        for (pair, &value) in increments.iter().enumerate() {
            match cms.incr_by(args.bytes(2 + 2 * pair), value) {
                u32::MAX => reply.error(errors::CMS_INCRBY_OVERFLOW),
                estimate => reply.integer(i64::from(estimate)),
            }
        }
    });
    // Every increment was applied: the command as received is the effect.
    replicate_verbatim(ctx);
    notify_command(ctx, c"cms.incrby", args);
    reply.finish()
}

/// CMS.QUERY key item [item ...]
pub fn query(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let cms = existing(&key)?;
    reply_integers(
        ctx,
        (2..args.len()).map(|i| i64::from(cms.query(args.bytes(i)))),
    )
}

/// Where CMS.MERGE's WEIGHTS keyword is among the arguments after numkeys (the first
/// one, any case: RedisBloom's search), as an offset from argument 3.
fn weights_at(args: &Args) -> Option<usize> {
    (3..args.len()).position(|i| args.bytes(i).eq_ignore_ascii_case(b"WEIGHTS"))
}

/// CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight [weight ...]]. The
/// destination must exist; each source's weight is parsed, then the source looked up
/// and its dimensions compared, one source after the other; the merge is checked in full
/// before the destination changes. A source may be the destination.
pub fn merge(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let dest_key = Key::open(ctx, args, 1, true);
    let (width, depth) = {
        let dest = existing(&dest_key)?;
        (dest.width(), dest.depth())
    };
    let numkeys = args.integer(2).ok_or(error(errors::CMS_INVALID_NUMKEYS))?;
    if numkeys <= 0 {
        return Err(error(errors::CMS_NUMKEYS_NOT_POSITIVE));
    }
    let after = (args.len() - 3) as i128;
    let weights = weights_at(args);
    match weights {
        None if i128::from(numkeys) != after => {
            return Err(error(errors::CMS_WRONG_NUMBER_OF_KEYS))
        }
        Some(at) if at as i128 != i128::from(numkeys) || after != 1 + 2 * i128::from(numkeys) => {
            return Err(error(errors::CMS_WRONG_NUMBER_OF_KEYS_WEIGHTS))
        }
        _ => {}
    }
    let numkeys = numkeys as usize;
    let mut sources = Vec::with_capacity(numkeys);
    for i in 0..numkeys {
        let weight = match weights {
            None => 1,
            Some(_) => args
                .integer(4 + numkeys + i)
                .ok_or(error(errors::CMS_INVALID_WEIGHT))?,
        };
        let key = Key::open(ctx, args, 3 + i, false);
        match key.state_shared::<CountMinSketch>(&CMS_TYPE)? {
            None => return Err(error(errors::CMS_KEY_DOES_NOT_EXIST)),
            Some(s) if s.width() != width || s.depth() != depth => {
                return Err(error(errors::CMS_DIMENSIONS_DIFFER))
            }
            Some(_) => {}
        }
        sources.push((key, weight));
    }
    let merged = {
        let mut refs = Vec::with_capacity(numkeys);
        for (key, weight) in &sources {
            if let Some(source) = key.state_shared::<CountMinSketch>(&CMS_TYPE)? {
                refs.push((source, *weight));
            }
        }
        let dest = dest_key.state_shared::<CountMinSketch>(&CMS_TYPE)?;
        let dest = dest.ok_or(error(errors::CMS_KEY_DOES_NOT_EXIST))?;
        dest.merge(&refs).map_err(|e| {
            error(match e {
                CmsError::DimensionsDiffer => errors::CMS_DIMENSIONS_DIFFER,
                CmsError::MergeOverflow => errors::CMS_MERGE_OVERFLOW,
                _ => errors::INSUFFICIENT_MEMORY,
            })
        })?
    };
    drop(sources);
    let mut write = Write::new(ctx, args);
    tracked(existing(&dest_key)?, |dest| merged.apply(dest));
    write.as_received();
    drop(write);
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// CMS.INFO key: width, depth, count (RESP3: a map).
#[inline(always)]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let cms = existing(&key)?;
    let reply = FieldsReply::labelled(ctx, 3);
    reply.integer(c"width", cms.width() as i64);
    reply.integer(c"depth", cms.depth() as i64);
    // An unsigned 64-bit sum, replied as RedisBloom does: its bits as an i64.
    reply.integer(c"count", cms.count() as i64);
    reply.finish()
}
