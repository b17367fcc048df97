//! BF.* — the scalable Bloom filter commands (COMPAT §1): parse, look up, call the core,
//! reply, replicate.

use super::args::{existing, find_keyword, option_letter, propagate};
use super::config;
use super::errors;
use super::ffi::{tracked, Args, ArrayReply, Key, KeyState};
use super::types::BLOOM_TYPE;
use crate::filter::bloom::LinkError;
use crate::filter::bloom_dump::{self, DumpError};
use crate::filter::chain::{AddOutcome, Chain};
use crate::filter::fmt::format_g;
use crate::filter::hash::HashPair;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// Largest EXPANSION accepted (HEAD's range; 2.4.20 accepted anything and lost items).
const MAX_EXPANSION: i64 = 32768;

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The reply when a new filter cannot be made.
fn create_error(e: LinkError) -> RedisError {
    match e {
        LinkError::Invalid => error(errors::COULD_NOT_CREATE_BF),
        LinkError::TooLarge => error(errors::TOO_LARGE),
        LinkError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
    }
}

/// Parameters of a filter a command creates.
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

    fn create(&self) -> Result<Chain, RedisError> {
        Chain::new(
            self.capacity,
            self.error,
            self.growth,
            self.scaling,
            config::MAX_FILTER_BYTES.get(),
        )
        .map_err(create_error)
    }
}

/// The filter in a key opened for writing, created from `params` if the key is empty
/// (`None`: the key must exist).
fn filter_for_write<'k>(
    key: &'k Key,
    params: Option<&NewFilter>,
) -> Result<&'k mut Chain, RedisError> {
    match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Ours(chain) => Ok(chain),
        KeyState::Other => Err(RedisError::WrongType),
        KeyState::Empty => match params {
            Some(params) => key.set(&BLOOM_TYPE, Box::new(params.create()?)),
            None => Err(error(errors::NOT_FOUND)),
        },
    }
}

/// One item's reply: 1 added, 0 present, or an error; `Full` also ends a multi-item command.
fn add_reply(outcome: AddOutcome) -> Result<i64, &'static str> {
    match outcome {
        AddOutcome::Added => Ok(1),
        AddOutcome::Exists => Ok(0),
        AddOutcome::Full => Err(errors::NONSCALING_FULL),
        AddOutcome::GrowFailed(LinkError::TooLarge) => Err(errors::TOO_LARGE),
        AddOutcome::GrowFailed(_) => Err(errors::PROBLEM_INSERTING),
    }
}

/// Adds the items from argument `from` on, in order, one reply element each; stops after
/// the first "filter is full" element, as RedisBloom does.
fn add_items(chain: &mut Chain, args: &Args, from: usize, reply: &mut ArrayReply) {
    let pairs: Vec<HashPair> = (from..args.len())
        .map(|i| chain.hash(args.bytes(i)))
        .collect();
    chain.add_each(&pairs, config::MAX_FILTER_BYTES.get(), |outcome| {
        match add_reply(outcome) {
            Ok(value) => reply.integer(value),
            Err(text) => reply.error(text),
        }
        outcome != AddOutcome::Full
    });
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
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
    // With the bf-expansion-factor config at 0, new filters are non-scaling by default.
    params.scaling = params.scaling && find_keyword(args, 4, "NONSCALING").is_none();
    if let Some(at) = find_keyword(args, 4, "EXPANSION") {
        if at + 1 >= args.len() {
            return Err(error(errors::NO_EXPANSION));
        }
        if !params.scaling {
            return Err(error(errors::NONSCALING_CANNOT_EXPAND));
        }
        let expansion = args.integer(at + 1).ok_or(error(errors::BAD_EXPANSION))?;
        if !(0..=MAX_EXPANSION).contains(&expansion) {
            return Err(error(errors::EXPANSION_RANGE));
        }
        if expansion == 0 {
            params.scaling = false;
        } else {
            params.growth = expansion as u32;
        }
    }
    let key = Key::open(ctx, args, 1, true);
    match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    key.set(&BLOOM_TYPE, Box::new(params.create()?))?;
    propagate(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// BF.ADD key item
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, Some(&NewFilter::defaults()))?;
    let outcome = tracked(chain, |c| {
        c.add(c.hash(args.bytes(2)), config::MAX_FILTER_BYTES.get())
    });
    propagate(ctx, args);
    add_reply(outcome).map(RedisValue::Integer).map_err(error)
}

/// BF.MADD key item [item ...]
pub fn madd(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, Some(&NewFilter::defaults()))?;
    let mut reply = ArrayReply::postponed(ctx);
    tracked(chain, |c| add_items(c, args, 2, &mut reply));
    propagate(ctx, args);
    reply.finish()
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item...
/// Options are recognised by their first letters, as RedisBloom does.
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
    if !(0..=MAX_EXPANSION).contains(&expansion) {
        return Err(error(errors::EXPANSION_RANGE));
    }
    params.capacity = capacity as u64;
    params.growth = expansion as u32;
    params.scaling = !nonscaling && expansion != 0;

    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write(&key, (!nocreate).then_some(&params))?;
    let mut reply = ArrayReply::postponed(ctx);
    tracked(chain, |c| add_items(c, args, items_at, &mut reply));
    propagate(ctx, args);
    reply.finish()
}

/// BF.EXISTS key item — 0 for a missing key or a key of another type, as RedisBloom does.
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Ours(chain) => chain.contains(chain.hash(args.bytes(2))),
        _ => false,
    };
    Ok(RedisValue::Integer(i64::from(found)))
}

/// BF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let mut reply = ArrayReply::with_len(ctx, args.len() - 2);
    match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Ours(chain) => {
            let pairs: Vec<HashPair> = (2..args.len()).map(|i| chain.hash(args.bytes(i))).collect();
            chain.contains_each(&pairs, |hit| reply.integer(i64::from(hit)));
        }
        _ => (2..args.len()).for_each(|_| reply.integer(0)),
    }
    reply.finish()
}

/// BF.CARD key — 0 for a missing key.
pub fn card(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Ours(chain) => Ok(RedisValue::Integer(chain.items as i64)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<Chain>(&key, &BLOOM_TYPE)?;
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

/// BF.DEBUG key — the chain size, then one line per link.
pub fn debug(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<Chain>(&key, &BLOOM_TYPE)?;
    let width = if chain.force64() { 64 } else { 32 };
    let mut lines = Vec::with_capacity(chain.links.len() + 1);
    lines.push(RedisValue::BulkString(format!("size:{}", chain.items)));
    for link in &chain.links {
        lines.push(RedisValue::BulkString(format!(
            "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
            link.bytes(),
            link.bits,
            link.hashes,
            width,
            link.entries,
            link.items,
            format_g(link.error)
        )));
    }
    Ok(RedisValue::Array(lines))
}

/// BF.SCANDUMP key iterator — the header at 0, then bit-array chunks; `[0, ""]` at the end.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let chain = existing::<Chain>(&key, &BLOOM_TYPE)?;
    let iter = args.integer(2).ok_or(error(errors::SCANDUMP_NOT_NUMERIC))?;
    let (next, data) = if iter == 0 {
        (1, bloom_dump::header(chain))
    } else {
        match bloom_dump::chunk(chain, iter) {
            Some((next, data)) => (next, data.to_vec()),
            None => (0, Vec::new()),
        }
    };
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(next),
        RedisValue::StringBuffer(data),
    ]))
}

/// BF.LOADCHUNK key iterator data — iterator 1 on an empty key is the header.
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .ok_or(error(errors::LOADCHUNK_NOT_NUMERIC))?;
    let data = args.bytes(3);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<Chain>(&BLOOM_TYPE) {
        KeyState::Empty if iter == 1 => {
            let chain = bloom_dump::chain_from_header(data, config::MAX_FILTER_BYTES.get())
                .map_err(|_| error(errors::RECEIVED_BAD_DATA))?;
            key.set(&BLOOM_TYPE, Box::new(chain))?;
        }
        KeyState::Empty => return Err(error(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Ours(chain) => {
            bloom_dump::load_chunk(chain, iter, data).map_err(|e| {
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
