//! The CMS.* commands: RedisBloom 2.4.20's checks in its order, with its error texts;
//! replies as 2.4.20 (RESP2) and 2.6 (RESP3: CMS.INFO is a map); RedisBloom 8.12's
//! `CELL_SIZE`, negative increments and `cell_size` INFO pair as docs/compat.md ("Count-Min
//! Sketch") states them. Every write is deterministic, so it replicates as received, except
//! CMS.INITBYPROB, which replicates the dimensions it chose (`CMS.INITBYDIM key width depth
//! [CELL_SIZE n]`: no replica recomputes them with its own floating point).

use crate::api::args::Args;
use crate::api::events::{notify_command, notify_write};
use crate::api::keys::{Key, KeyState};
use crate::api::replication::replicate_verbatim;
use crate::api::replies::{reply_integers, ArrayReply, FieldsReply};
use crate::errors;
use crate::stats::tracked;
use crate::types::CMS_TYPE;
use crate::write::{Creation, Write};
use redbloom_core::cms::DEFAULT_CELL_SIZE;
use redbloom_core::cms::{dims_from_prob, is_cell_size, CmsError, CountMinSketch, Increment};
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

/// The optional `CELL_SIZE n` (arguments 4 and 5): `None` when absent.
fn cell_size(args: &Args) -> Result<Option<u8>, RedisError> {
    if args.len() == 4 {
        return Ok(None);
    }
    if !args.bytes(4).eq_ignore_ascii_case(b"CELL_SIZE") {
        return Err(error(errors::UNKNOWN_ARGUMENT));
    }
    let size = args.integer(5).filter(|&n| n > 0 && is_cell_size(n as u64));
    let size = size.ok_or(error(errors::CMS_CELL_SIZE_INVALID))?;
    Ok(Some(size as u8))
}

/// CMS.INITBYDIM key width depth [CELL_SIZE n] / CMS.INITBYPROB key error probability
/// [CELL_SIZE n]. Any existing key (of any type) is `CMS: key already exists`, checked
/// before the arguments; the cell size is checked after the dimensions.
pub fn init(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 && args.len() != 6 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    if !matches!(key.state::<CountMinSketch>(&CMS_TYPE), KeyState::Empty) {
        return Err(error(errors::CMS_KEY_EXISTS));
    }
    let by_prob = args.bytes(0).eq_ignore_ascii_case(b"cms.initbyprob");
    let (width, depth) = dimensions(args, by_prob)?;
    let given = cell_size(args)?;
    let size = given.unwrap_or(DEFAULT_CELL_SIZE);
    let mut write = Write::new(ctx, args);
    let cms = CountMinSketch::new(width, depth, size, write.max_bytes()).map_err(create_error)?;
    key.set(&CMS_TYPE, Box::new(cms))?;
    if by_prob {
        let mut effect = vec![
            width.to_string().into_bytes(),
            depth.to_string().into_bytes(),
        ];
        // A cell size given is replicated as given (a sketch made without one replicates
        // as RedisBloom 2.4.20 reads it).
        if let Some(size) = given {
            effect.push(b"CELL_SIZE".to_vec());
            effect.push(size.to_string().into_bytes());
        }
        write.created(Creation {
            name: "INITBYDIM",
            args: effect,
        });
    } else {
        write.as_received();
    }
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// CMS.INCRBY key item increment [item increment ...]. Every increment is parsed before
/// any is applied, then each is applied in turn ([`CountMinSketch::incr_by`]): an item
/// whose increment overflows gets `CMS: INCRBY overflow` in its place of the array (a
/// 4-byte sketch's positive increment is applied and saturated, as RedisBloom 2.4.20 does;
/// any other is refused), one whose decrement would take a counter below 0 `CMS: INCRBY
/// underflow` (refused).
pub fn incrby(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let cms = existing(&key)?;
    let pairs = (args.len() - 2) / 2;
    let increments = args.parse_each((3..args.len()).step_by(2), |at| {
        args.integer(at)
            .ok_or(error(errors::CMS_CANNOT_PARSE_NUMBER))
    })?;
    let mut reply = ArrayReply::with_len(ctx, pairs);
    tracked(cms, |cms| {
        for (pair, &value) in increments.iter().enumerate() {
            match cms.incr_by(args.bytes(2 + 2 * pair), value) {
                Increment::Estimate(estimate) => reply.integer(as_reply(estimate)),
                Increment::Overflow => reply.error(errors::CMS_INCRBY_OVERFLOW),
                Increment::Underflow => reply.error(errors::CMS_INCRBY_UNDERFLOW),
            }
        }
    });
    // Each increment is applied or refused by the sketch's state alone, so a replica
    // given the same command does the same: the command as received is the effect.
    replicate_verbatim(ctx);
    notify_command(ctx, c"cms.incrby", args);
    reply.finish()
}

/// An estimate as a reply integer: an 8-byte counter loaded above `i64::MAX` is reported
/// as `i64::MAX` (the largest a reply integer holds).
fn as_reply(estimate: u64) -> i64 {
    i64::try_from(estimate).unwrap_or(i64::MAX)
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
        (2..args.len()).map(|i| as_reply(cms.query(args.bytes(i)))),
    )
}

/// Where CMS.MERGE's WEIGHTS keyword is among the arguments after numkeys (the first
/// one, any case: RedisBloom's search), as an offset from argument 3.
fn weights_at(args: &Args) -> Option<usize> {
    (3..args.len()).position(|i| args.bytes(i).eq_ignore_ascii_case(b"WEIGHTS"))
}

/// CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight [weight ...]]. The
/// destination must exist; each source's weight is parsed, then the source looked up
/// and its dimensions, then its cell size, compared, one source after the other; the merge is checked in full
/// before the destination changes. A source may be the destination.
pub fn merge(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let dest_key = Key::open(ctx, args, 1, true);
    let (width, depth, size) = {
        let dest = existing(&dest_key)?;
        (dest.width(), dest.depth(), dest.cell_size())
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
            Some(s) if s.cell_size() != size => return Err(error(errors::CMS_CELL_SIZE_DIFFERS)),
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
                CmsError::CellSizeDiffers => errors::CMS_CELL_SIZE_DIFFERS,
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

/// CMS.INFO key: width, depth, count, and `cell_size` when it is not 4 (RESP3: a map).
/// A 4-byte sketch answers as RedisBloom 2.4.20 / 2.6 did, three pairs, which client
/// libraries' own tests compare exactly (docs/compat.md, "Count-Min Sketch").
#[inline(always)]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let cms = existing(&key)?;
    let size = cms.cell_size();
    let reply = FieldsReply::labelled(ctx, if size == DEFAULT_CELL_SIZE { 3 } else { 4 });
    reply.integer(c"width", cms.width() as i64);
    reply.integer(c"depth", cms.depth() as i64);
    // An unsigned 64-bit sum, replied as RedisBloom does: its bits as an i64.
    reply.integer(c"count", cms.count() as i64);
    if size != DEFAULT_CELL_SIZE {
        reply.integer(c"cell_size", i64::from(size));
    }
    reply.finish()
}
