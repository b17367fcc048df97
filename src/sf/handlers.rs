//! The SF.* commands (docs/static.md): build, query, dump and load a static filter.
//!
//! **Replication.** `SF.BUILD key rate ITEMS ...` is replicated as it came: the build is
//! a function of the distinct items and the error rate alone (sizing from the item count,
//! seeds tried from 0 in order, the seed that peels recorded), so a replica or an AOF
//! replay makes the master's bytes, and writes from the master or the AOF are trusted
//! (no ceiling: a replica never refuses what its master built). `SF.BUILD ... FROM
//! source` is replicated as the SF.LOADCHUNK sequence of the built filter: its result
//! depends on another key, which the replica need not hold the same way (another
//! database layout, a source changed by a later write already in its stream). LOADCHUNK
//! goes as it came.

use crate::api::args::Args;
use crate::api::events::notify_event;
use crate::api::keys::{existing, ours, Key, KeyState};
use crate::api::replication::{is_trusted, log_divergence, replicate, Replicated};
use crate::api::replies::{reply_bool, reply_field_values, ArrayReply, FieldValue, Resp2Fields};
use crate::errors;
use crate::sf::value::STATIC_TYPE;
use redbloom_core::static_filter::dump as static_dump;
use redbloom_core::static_filter::{build_with as build_filter, item_key, BuildError};
use redbloom_core::static_filter::{Encoding, Layout, StaticFilter};
use redis_module::{Context, RedisError, RedisResult, RedisValue};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The memory ceiling of a new filter (none for a write from the master or the AOF).
pub(super) fn max_bytes(ctx: &Context) -> u64 {
    use redbloom_core::memory::Ceiling;
    crate::write::Limit::of(ctx).limit_for(0)
}

/// The error rate at argument `i`: BF.RESERVE's parse and errors, then the static
/// filter's range (below 0.5, at least 2^-32).
fn error_rate(args: &Args, i: usize) -> Result<f64, RedisError> {
    let rate = args.double(i).ok_or(error(errors::BAD_ERROR_RATE))?;
    if !(rate > 0.0 && rate < 1.0) {
        return Err(error(errors::ERROR_RATE_RANGE));
    }
    if rate >= 0.5 {
        return Err(error(errors::SF_ERROR_RATE_TOO_HIGH));
    }
    if redbloom_core::static_filter::bits_for(rate).is_none() {
        return Err(error(errors::SF_ERROR_RATE_TOO_LOW));
    }
    Ok(rate)
}

pub(super) fn build_error(e: BuildError) -> RedisError {
    match e {
        BuildError::BadErrorRate => error(errors::ERROR_RATE_RANGE),
        BuildError::TooManyItems => error(errors::SF_TOO_MANY_ITEMS),
        BuildError::TooLarge => error(crate::write::too_large()),
        BuildError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
        BuildError::Unpeelable => error(errors::SF_BUILD_FAILED),
    }
}

/// The structure SF.BUILD was asked for (`ENCODING RIBBON|FUSE` after the rate; the
/// ribbon when absent), and the index of the word ITEMS or FROM. Unchecked: [`build`]
/// refused any other word before.
pub(super) fn encoding_of(args: &Args) -> Encoding {
    parse_encoding(args).map_or(Encoding::default(), |(e, _)| e)
}

fn parse_encoding(args: &Args) -> Result<(Encoding, usize), RedisError> {
    if !args.bytes(3).eq_ignore_ascii_case(b"ENCODING") {
        return Ok((Encoding::default(), 3));
    }
    if args.len() < 7 {
        return Err(RedisError::WrongArity);
    }
    let name = args.bytes(4);
    let encoding = if name.eq_ignore_ascii_case(b"RIBBON") {
        Encoding::Ribbon
    } else if name.eq_ignore_ascii_case(b"FUSE") {
        Encoding::Fuse
    } else {
        return Err(error(errors::SF_BAD_ENCODING));
    };
    Ok((encoding, 5))
}

/// SF.BUILD key error_rate [ENCODING RIBBON|FUSE] ITEMS item [item ...] |
/// SF.BUILD key error_rate [ENCODING RIBBON|FUSE] FROM source
pub fn build(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 5 {
        return Err(RedisError::WrongArity);
    }
    let rate = error_rate(args, 2)?;
    let (_, at) = parse_encoding(args)?;
    let word = args.bytes(at);
    let from = if word.eq_ignore_ascii_case(b"ITEMS") {
        false
    } else if word.eq_ignore_ascii_case(b"FROM") {
        if args.len() != at + 2 {
            return Err(RedisError::WrongArity);
        }
        true
    } else {
        return Err(error(errors::SF_ITEMS_OR_FROM));
    };
    let key = Key::open(ctx, args, 1, true);
    match key.state::<StaticFilter>(&STATIC_TYPE) {
        KeyState::Empty => {}
        _ => return Err(error(errors::ITEM_EXISTS)),
    }
    if from {
        return super::from::build_from(ctx, args, rate, &key);
    }
    let keys = (at + 1..args.len())
        .map(|i| item_key(args.bytes(i)))
        .collect();
    build_and_store(ctx, args, &key, keys, rate, false)
}

/// Builds the filter of `keys` and stores it in the empty `key`.
pub(super) fn build_and_store(
    ctx: &Context,
    args: &Args,
    key: &Key,
    keys: Vec<u64>,
    rate: f64,
    from: bool,
) -> RedisResult {
    let filter = build_filter(keys, rate, max_bytes(ctx), encoding_of(args)).map_err(|e| {
        let refused = build_error(e);
        // From the master or the AOF the build had succeeded: say that the data now differ.
        if is_trusted(ctx) {
            log_divergence(ctx, args, &format!("{refused:?}"));
        }
        refused
    })?;
    store(ctx, args, key, filter, from)
}

/// Stores a built filter in the empty `key`, replicates it (the command as it came, or
/// for FROM the SF.LOADCHUNK sequence of the filter), notifies `sf.build` and answers OK.
pub(super) fn store(
    ctx: &Context,
    args: &Args,
    key: &Key,
    filter: StaticFilter,
    from: bool,
) -> RedisResult {
    let stored = key.set(&STATIC_TYPE, Box::new(filter))?;
    if from {
        let header = static_dump::header(stored);
        let chunk = |iter: &[u8], data: &[u8]| {
            let parts = [
                Replicated::Arg(1),
                Replicated::Bytes(iter),
                Replicated::Bytes(data),
            ];
            replicate(ctx, args, "SF.LOADCHUNK", &parts);
        };
        chunk(b"1", &header);
        let mut iter = 1;
        while let Some((next, data)) = static_dump::chunk(stored, iter) {
            chunk(next.to_string().as_bytes(), data);
            iter = next;
        }
    } else {
        ctx.replicate_verbatim();
    }
    notify_event(ctx, b"sf.build", args, 1);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The filter of an item query: `None` for a missing key or another type (0 for every
/// item, as BF.EXISTS answers); an incomplete filter is an error.
fn queried(key: &Key) -> Result<Option<&StaticFilter>, RedisError> {
    match ours::<StaticFilter>(key, &STATIC_TYPE) {
        Some(f) if !f.is_complete() => Err(error(errors::SF_INCOMPLETE)),
        found => Ok(found),
    }
}

/// SF.EXISTS key item — 1 if the item may be in the set (false positives at the error
/// rate), 0 if it is not, and for a missing key.
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = queried(&key)?.is_some_and(|f| f.contains(item_key(args.bytes(2))));
    reply_bool(ctx, found)
}

/// SF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = queried(&key)?;
    let mut reply = ArrayReply::with_len(ctx, args.len() - 2);
    match filter {
        Some(f) => {
            let keys: Vec<u64> = (2..args.len()).map(|i| item_key(args.bytes(i))).collect();
            f.contains_each(&keys, |hit| reply.boolean(hit));
        }
        None => (2..args.len()).for_each(|_| reply.boolean(false)),
    }
    reply.finish()
}

/// SF.CARD key — the distinct items; 0 for a missing key.
pub fn card(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state::<StaticFilter>(&STATIC_TYPE) {
        KeyState::Ours(filter) => Ok(RedisValue::Integer(filter.items() as i64)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// SF.INFO key [ITEMS | BITS | BITSPERITEM | ERROR | SIZE]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing::<StaticFilter>(&key, &STATIC_TYPE)?;
    let fields = [
        (
            "Number of items",
            FieldValue::Integer(filter.items() as i64),
        ),
        (
            "Fingerprint bits",
            FieldValue::Integer(i64::from(filter.bits())),
        ),
        ("Bits per item", FieldValue::Double(filter.bits_per_item())),
        ("Error rate", FieldValue::Double(filter.guaranteed_error())),
        ("Size", FieldValue::Integer(filter.mem_usage() as i64)),
    ];
    if args.len() == 2 {
        return reply_field_values(ctx, &fields, Resp2Fields::Labelled);
    }
    let wanted = args.bytes(2).to_ascii_lowercase();
    let index = ["items", "bits", "bitsperitem", "error", "size"]
        .iter()
        .position(|name| name.as_bytes() == wanted.as_slice())
        .ok_or(error(errors::INVALID_INFO_VALUE))?;
    reply_field_values(ctx, &fields[index..=index], Resp2Fields::ValuesOnly)
}

/// SF.DEBUG key — the filter's items, then its construction: fingerprint bits (a ribbon's
/// lower column count), requested error rate, seed, segments (a ribbon: `encoding:ribbon`,
/// blocks, blocks of `bits` columns; encoding 3: `encoding:ribbon3`, the same and the
/// bumped keys), slots, bytes, bytes still to load.
pub fn debug(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let f = existing::<StaticFilter>(&key, &STATIC_TYPE)?;
    let layout = match f.layout() {
        Layout::Fuse(shape) => format!(
            "segment_length:{} segments:{}",
            shape.segment_length, shape.segment_count
        ),
        Layout::Ribbon(r) => format!(
            "encoding:ribbon blocks:{} lower_blocks:{}",
            r.blocks, r.lower_blocks
        ),
        Layout::Bumped(b) => format!(
            "encoding:ribbon3 blocks:{} lower_blocks:{} bumped:{}",
            b.ribbon.blocks, b.ribbon.lower_blocks, b.bumped
        ),
    };
    Ok(RedisValue::Array(vec![
        RedisValue::BulkString(format!("items:{}", f.items())),
        RedisValue::BulkString(format!(
            "bits:{} error:{} seed:{} {layout} slots:{} bytes:{} pending:{}",
            f.bits(),
            f.requested_error(),
            f.seed(),
            f.slots(),
            f.data().len(),
            f.pending()
        )),
    ]))
}

/// SF.SCANDUMP key iterator — the header at 0, then data chunks; `[0, ""]` at the end.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    crate::scandump::scandump::<StaticFilter>(
        ctx,
        args,
        &STATIC_TYPE,
        static_dump::header,
        static_dump::chunk,
    )
}

/// SF.LOADCHUNK key iterator data — iterator 1 on an empty key is the header (the filter
/// then answers no item until its data is complete); chunks follow in order, and the one
/// that completes the data must match the header's checksum. A refused chunk changes
/// nothing.
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    crate::scandump::loadchunk::<StaticFilter>(
        ctx,
        args,
        &STATIC_TYPE,
        b"sf.loadchunk",
        static_dump::filter_from_header,
        |f, iter, data| crate::stats::tracked(f, |f| static_dump::load_chunk(f, iter, data)),
    )
}
