//! CBF.* — the counting Bloom filter commands (docs/cbf.md): parse, look up, call the core,
//! reply, replicate. Arguments, validation order, replies and error strings follow the BF
//! equivalents (COMPAT §1) wherever the meaning is the same; new filters take BF's defaults.

use super::args::{existing, find_keyword, option_letter, propagate};
use super::config;
use super::errors;
use super::ffi::{reply_integers, tracked, Args, Key, KeyState};
use super::types::COUNTING_TYPE;
use crate::filter::bloom::LinkError;
use crate::filter::bloom_dump::DumpError;
use crate::filter::counting::{CountingAdd, CountingChain, MAX_GROWTH};
use crate::filter::counting_dump;
use crate::filter::fmt::format_g;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

fn max_bytes() -> u64 {
    config::MAX_FILTER_BYTES.get()
}

/// The reply when a new filter cannot be made (as BF's).
fn create_error(e: LinkError) -> RedisError {
    match e {
        LinkError::Invalid => error(errors::COULD_NOT_CREATE_BF),
        LinkError::TooLarge => error(errors::TOO_LARGE),
        LinkError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
    }
}

/// Parameters of a filter a command creates; defaults are BF's.
struct NewFilter {
    capacity: u64,
    error: f64,
    growth: u32,
    scaling: bool,
}

impl NewFilter {
    fn defaults() -> Self {
        NewFilter {
            capacity: config::BF_INITIAL_SIZE.get(),
            error: config::BF_ERROR_RATE.get_f64(),
            growth: config::BF_EXPANSION.get() as u32,
            scaling: config::BF_EXPANSION.get() != 0,
        }
    }

    fn create(&self) -> Result<CountingChain, RedisError> {
        CountingChain::new(
            self.capacity,
            self.error,
            self.growth,
            self.scaling,
            max_bytes(),
        )
        .map_err(create_error)
    }
}

/// The filter in a key opened for writing, created from `params` if the key is empty
/// (`None`: the key must exist).
fn filter_for_write<'k>(
    key: &'k Key,
    params: Option<&NewFilter>,
) -> Result<&'k mut CountingChain, RedisError> {
    match key.state::<CountingChain>(&COUNTING_TYPE) {
        KeyState::Ours(chain) => Ok(chain),
        KeyState::Other => Err(RedisError::WrongType),
        KeyState::Empty => match params {
            Some(params) => key.set(&COUNTING_TYPE, Box::new(params.create()?)),
            None => Err(error(errors::NOT_FOUND)),
        },
    }
}

/// The filter in a key opened for reading, or `None` for a missing key or another type
/// (the read-only item queries answer 0 then, as BF.EXISTS does).
fn filter_or_none(key: &Key) -> Option<&CountingChain> {
    match key.state::<CountingChain>(&COUNTING_TYPE) {
        KeyState::Ours(chain) => Some(chain),
        _ => None,
    }
}

/// One item's reply element: 1 for every add; `Full` also ends a multi-item command.
fn add_reply(outcome: CountingAdd) -> RedisValue {
    match outcome {
        CountingAdd::Added => RedisValue::Integer(1),
        CountingAdd::Full => RedisValue::StaticError(errors::NONSCALING_FULL),
        CountingAdd::GrowFailed(LinkError::TooLarge) => RedisValue::StaticError(errors::TOO_LARGE),
        CountingAdd::GrowFailed(_) => RedisValue::StaticError(errors::PROBLEM_INSERTING),
    }
}

/// Adds items in order; stops after the first "filter is full" element, as BF does.
fn add_items(chain: &mut CountingChain, args: &Args, from: usize) -> Vec<RedisValue> {
    let max_bytes = max_bytes();
    let mut replies = Vec::with_capacity(args.len() - from);
    for i in from..args.len() {
        let outcome = chain.add(chain.hash(args.bytes(i)), max_bytes);
        replies.push(add_reply(outcome));
        if outcome == CountingAdd::Full {
            break;
        }
    }
    replies
}

/// CBF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING] — BF.RESERVE's
/// arity, validation order and errors.
pub fn reserve(ctx: &Context, args: &Args) -> RedisResult {
    if !(4..=7).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let error_rate = args.double(2).ok_or(error(errors::BAD_ERROR_RATE))?;
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(error(errors::ERROR_RATE_RANGE));
    }
    let capacity = args.integer(3).ok_or(error(errors::BAD_CAPACITY))?;
    if capacity <= 0 {
        return Err(error(errors::CAPACITY_RANGE));
    }
    let mut params = NewFilter {
        capacity: capacity as u64,
        error: error_rate,
        ..NewFilter::defaults()
    };
    params.scaling = params.scaling && find_keyword(args, 4, "NONSCALING").is_none();
    if let Some(at) = find_keyword(args, 4, "EXPANSION") {
        if at + 1 >= args.len() {
            return Err(error(errors::NO_EXPANSION));
        }
        if !params.scaling {
            return Err(error(errors::NONSCALING_CANNOT_EXPAND));
        }
        let expansion = args.integer(at + 1).ok_or(error(errors::BAD_EXPANSION))?;
        if !(0..=i64::from(MAX_GROWTH)).contains(&expansion) {
            return Err(error(errors::EXPANSION_RANGE));
        }
        if expansion == 0 {
            params.scaling = false;
        } else {
            params.growth = expansion as u32;
        }
    }
    let key = Key::open(ctx, args, 1, true);
    match key.state::<CountingChain>(&COUNTING_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    key.set(&COUNTING_TYPE, Box::new(params.create()?))?;
    propagate(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// CBF.ADD key item — always 1 (every add counts); the filter is created with BF's
/// defaults if the key is empty.
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, Some(&NewFilter::defaults()))?;
    let outcome = tracked(chain, |c| c.add(c.hash(args.bytes(2)), max_bytes()));
    propagate(ctx, args);
    match add_reply(outcome) {
        RedisValue::StaticError(text) => Err(error(text)),
        reply => Ok(reply),
    }
}

/// CBF.MADD key item [item ...]
pub fn madd(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, Some(&NewFilter::defaults()))?;
    let replies = tracked(chain, |c| add_items(c, args, 2));
    propagate(ctx, args);
    Ok(RedisValue::Array(replies))
}

/// CBF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item...
/// Options are recognised by their first letters, exactly as BF.INSERT does.
pub fn insert(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut params = NewFilter::defaults();
    let mut expansion = i64::from(params.growth);
    let mut capacity = params.capacity as i64;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut items_at = None;
    let mut i = 2;
    while i < args.len() {
        let token = args.bytes(i);
        match option_letter(token, 0) {
            Some(b'i') => {
                items_at = Some(i + 1);
                break;
            }
            Some(letter @ (b'e' | b'c')) => {
                if i + 1 >= args.len() {
                    return Err(RedisError::WrongArity);
                }
                if letter == b'c' {
                    capacity = args
                        .integer(i + 1)
                        .ok_or(error(errors::INSERT_BAD_CAPACITY))?;
                } else if option_letter(token, 1) == Some(b'r') {
                    params.error = args
                        .double(i + 1)
                        .ok_or(error(errors::INSERT_BAD_ERROR_RATE))?;
                } else {
                    expansion = args
                        .integer(i + 1)
                        .ok_or(error(errors::INSERT_BAD_EXPANSION))?;
                }
                i += 2;
            }
            Some(b'n') => {
                if option_letter(token, 2) == Some(b'c') {
                    nocreate = true;
                } else {
                    nonscaling = true;
                }
                i += 1;
            }
            _ => return Err(error(errors::UNKNOWN_ARGUMENT)),
        }
    }
    let items_at = match items_at {
        Some(at) if at < args.len() => at,
        _ => return Err(RedisError::WrongArity),
    };
    if !(params.error > 0.0 && params.error < 1.0) || capacity < 1 {
        return Err(error(errors::BAD_ARGUMENT));
    }
    if !(0..=i64::from(MAX_GROWTH)).contains(&expansion) {
        return Err(error(errors::EXPANSION_RANGE));
    }
    params.capacity = capacity as u64;
    params.growth = expansion as u32;
    params.scaling = !nonscaling && expansion != 0;

    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, (!nocreate).then_some(&params))?;
    let replies = tracked(chain, |c| add_items(c, args, items_at));
    propagate(ctx, args);
    Ok(RedisValue::Array(replies))
}

/// CBF.EXISTS key item — 0 for a missing key or a key of another type, as BF.EXISTS.
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = filter_or_none(&key).is_some_and(|c| c.contains(c.hash(args.bytes(2))));
    Ok(RedisValue::Integer(i64::from(found)))
}

/// CBF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = filter_or_none(&key);
    reply_integers(
        ctx,
        (2..args.len()).map(|i| chain.map_or(0, |c| i64::from(c.contains(c.hash(args.bytes(i)))))),
    )
}

/// CBF.COUNT key item — the estimated multiplicity; 0 for a missing key or a key of
/// another type (the EXISTS rule).
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let n = filter_or_none(&key).map_or(0, |c| c.count(c.hash(args.bytes(2))));
    Ok(RedisValue::Integer(n as i64))
}

/// CBF.DEL key item — 1 if one copy was removed, 0 if not (absent, or positive in several
/// links). Missing key → `ERR not found`, other type → WRONGTYPE. Replicated whenever the
/// key is a counting filter.
pub fn del(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let deleted = tracked(chain, |c| c.delete(c.hash(args.bytes(2))));
    propagate(ctx, args);
    Ok(RedisValue::Integer(i64::from(deleted)))
}

/// CBF.CARD key — adds minus successful deletes; 0 for a missing key.
pub fn card(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state::<CountingChain>(&COUNTING_TYPE) {
        KeyState::Ours(chain) => Ok(RedisValue::Integer(chain.items as i64)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// CBF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION] — BF.INFO's fields.
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let expansion = if chain.is_scaling() {
        RedisValue::Integer(i64::from(chain.growth))
    } else {
        RedisValue::Null
    };
    let fields = [
        ("Capacity", RedisValue::Integer(chain.capacity() as i64)),
        ("Size", RedisValue::Integer(chain.mem_usage() as i64)),
        (
            "Number of filters",
            RedisValue::Integer(chain.links.len() as i64),
        ),
        (
            "Number of items inserted",
            RedisValue::Integer(chain.items as i64),
        ),
        ("Expansion rate", expansion),
    ];
    if args.len() == 2 {
        let mut reply = Vec::with_capacity(10);
        for (label, value) in fields {
            reply.push(RedisValue::SimpleStringStatic(label));
            reply.push(value);
        }
        return Ok(RedisValue::Array(reply));
    }
    let wanted = args.bytes(2).to_ascii_lowercase();
    let index = ["capacity", "size", "filters", "items", "expansion"]
        .iter()
        .position(|name| name.as_bytes() == wanted.as_slice())
        .ok_or(error(errors::INVALID_INFO_VALUE))?;
    let value = fields.into_iter().nth(index).map(|(_, v)| v);
    Ok(RedisValue::Array(value.into_iter().collect()))
}

/// CBF.DEBUG key — the filter's item count, then one line per link, as BF.DEBUG with
/// `counters:` for `bits:` (bytes are the counter array's).
pub fn debug(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let mut lines = Vec::with_capacity(chain.links.len() + 1);
    lines.push(RedisValue::BulkString(format!("size:{}", chain.items)));
    for link in &chain.links {
        lines.push(RedisValue::BulkString(format!(
            "bytes:{} counters:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
            link.bytes(),
            link.bits,
            link.hashes,
            link.entries,
            link.items,
            format_g(link.error)
        )));
    }
    Ok(RedisValue::Array(lines))
}

/// CBF.SCANDUMP key iterator — the header at 0, then counter-array chunks; `[0, ""]` at
/// the end.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let iter = args.integer(2).ok_or(error(errors::SCANDUMP_NOT_NUMERIC))?;
    let (next, data) = if iter == 0 {
        (1, counting_dump::header(chain))
    } else {
        match counting_dump::chunk(chain, iter) {
            Some((next, data)) => (next, data.to_vec()),
            None => (0, Vec::new()),
        }
    };
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(next),
        RedisValue::StringBuffer(data),
    ]))
}

/// CBF.LOADCHUNK key iterator data — iterator 1 on an empty key is the header.
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .ok_or(error(errors::LOADCHUNK_NOT_NUMERIC))?;
    let data = args.bytes(3);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<CountingChain>(&COUNTING_TYPE) {
        KeyState::Empty if iter == 1 => {
            let chain = counting_dump::chain_from_header(data, max_bytes())
                .map_err(|_| error(errors::RECEIVED_BAD_DATA))?;
            key.set(&COUNTING_TYPE, Box::new(chain))?;
        }
        KeyState::Empty => return Err(error(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Ours(chain) => {
            counting_dump::load_chunk(chain, iter, data).map_err(|e| {
                error(match e {
                    DumpError::BadData => errors::RECEIVED_BAD_DATA,
                    DumpError::NoLink => errors::NO_LINK_FOUND,
                    DumpError::TooBig => errors::CHUNK_TOO_BIG,
                })
            })?;
        }
    }
    propagate(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
