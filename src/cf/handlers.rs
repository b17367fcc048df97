//! The CF.* commands (COMPAT §2): parse, look up, call the core, reply, and report what
//! changed to [`Write`] (which replicates the effect).

use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{existing, ours, Key, KeyState};
use crate::api::replies::{reply_bool, reply_bools, reply_fields, ArrayReply, Field, Resp2Fields};
use crate::config;
use crate::errors;
use crate::options::{find_keyword, option_letter};
use crate::stats::tracked;
use crate::types::CUCKOO_TYPE;
use crate::write::{Creation, Write};
use redbloom_core::cuckoo::dump::{self as cuckoo_dump, ScanDump, HEADER_LEN};
use redbloom_core::cuckoo::{
    CuckooError, CuckooFilter, CuckooHash, CuckooParams, MAX_BUCKET_SIZE, MAX_EXPANSION,
};
use redis_module::{Context, RedisError, RedisResult, RedisValue};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The reply when a new filter cannot be made.
fn create_error(e: CuckooError) -> RedisError {
    error(match e {
        CuckooError::TooLarge => crate::write::too_large(),
        CuckooError::Overflow | CuckooError::OutOfMemory => errors::INSUFFICIENT_MEMORY_TO_CREATE,
        _ => errors::COULD_NOT_CREATE_CF,
    })
}

/// Stores a new filter made from `params` in an empty `key` opened for writing.
fn create_in<'k>(
    key: &'k Key,
    params: CuckooParams,
    write: &mut Write,
) -> Result<&'k mut CuckooFilter, RedisError> {
    let filter = CuckooFilter::new(params, write.max_bytes()).map_err(create_error)?;
    let filter = key.set(&CUCKOO_TYPE, Box::new(filter))?;
    write.created(creation(params));
    Ok(filter)
}

/// CF.RESERVE with every parameter explicit: what recreates a new filter made from
/// `params` on a replica or from the AOF.
fn creation(params: CuckooParams) -> Creation {
    Creation {
        name: "RESERVE",
        args: vec![
            params.capacity.to_string().into_bytes(),
            b"BUCKETSIZE".to_vec(),
            params.bucket_size.to_string().into_bytes(),
            b"MAXITERATIONS".to_vec(),
            params.max_iterations.to_string().into_bytes(),
            b"EXPANSION".to_vec(),
            params.expansion.to_string().into_bytes(),
        ],
    }
}

/// The filter in a key opened for writing, created with `capacity` when the key is empty
/// (`None`: the key must exist).
fn filter_for_write<'k>(
    key: &'k Key,
    capacity: Option<u64>,
    write: &mut Write,
) -> Result<&'k mut CuckooFilter, RedisError> {
    match key.state::<CuckooFilter>(&CUCKOO_TYPE) {
        KeyState::Ours(filter) => Ok(filter),
        KeyState::Other => Err(RedisError::WrongType),
        KeyState::Empty => match capacity {
            Some(capacity) => {
                let params = CuckooParams {
                    capacity,
                    ..config::cf_defaults()
                };
                create_in(key, params, write)
            }
            None => Err(error(errors::NOT_FOUND)),
        },
    }
}

/// RedisBloom refuses a whole insert command once a filter has this many sub-filters
/// (the `cf-max-expansions` config; not for a write from the master or the AOF).
fn check_expansions(filter: &CuckooFilter, write: &Write) -> Result<(), RedisError> {
    if filter.num_filters() as u64 >= config::CF_MAX_EXPANSIONS.get() && !write.is_trusted() {
        return Err(error(errors::MAX_EXPANSIONS_REACHED));
    }
    Ok(())
}

/// An optional `KEYWORD value` of CF.RESERVE, searched after the positional arguments.
fn reserve_option(
    args: &Args,
    keyword: &str,
    range: std::ops::RangeInclusive<i64>,
    parse_error: &'static str,
    range_error: &'static str,
) -> Result<Option<u16>, RedisError> {
    let Some(at) = find_keyword(args, 3, keyword) else {
        return Ok(None);
    };
    let value = (at + 1 < args.len())
        .then(|| args.integer(at + 1))
        .flatten()
        .ok_or(error(parse_error))?;
    if !range.contains(&value) {
        return Err(error(range_error));
    }
    Ok(Some(value as u16))
}

/// CF.RESERVE key capacity [BUCKETSIZE bs] [MAXITERATIONS mi] [EXPANSION exp]
pub fn reserve(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let capacity = args.integer(2).ok_or(error(errors::CF_BAD_CAPACITY))?;
    let mut params = CuckooParams {
        capacity: 0,
        ..config::cf_defaults()
    };
    if let Some(mi) = reserve_option(
        args,
        "MAXITERATIONS",
        1..=65535,
        errors::PARSE_MAXITERATIONS,
        errors::MAXITERATIONS_RANGE,
    )? {
        params.max_iterations = mi;
    }
    if let Some(bs) = reserve_option(
        args,
        "BUCKETSIZE",
        1..=i64::from(MAX_BUCKET_SIZE),
        errors::PARSE_BUCKETSIZE,
        errors::BUCKETSIZE_RANGE,
    )? {
        params.bucket_size = bs;
    }
    if let Some(exp) = reserve_option(
        args,
        "EXPANSION",
        0..=i64::from(MAX_EXPANSION),
        errors::PARSE_EXPANSION,
        errors::CF_EXPANSION_RANGE,
    )? {
        params.expansion = exp;
    }
    if capacity < 2 * i64::from(params.bucket_size) {
        return Err(error(errors::CF_CAPACITY_TOO_SMALL));
    }
    params.capacity = capacity as u64;
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<CuckooFilter>(&CUCKOO_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    create_in(&key, params, &mut write)?;
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// One insert; `Ok(false)` only for NX when the item is present. A failed insert leaves
/// the filter unchanged (the kick-out is undone, a failed growth adds nothing).
fn insert_one(
    filter: &mut CuckooFilter,
    args: &Args,
    i: usize,
    nx: bool,
    write: &mut Write,
) -> Result<bool, CuckooError> {
    let hash = CuckooHash::new(args.bytes(i));
    let inserted = if nx {
        filter.insert_if_absent(&hash, &*write)
    } else {
        filter.insert(&hash, &*write).map(|()| true)
    };
    if inserted == Ok(true) {
        write.added(i);
    }
    inserted
}

/// CF.INSERT/CF.INSERTNX's element for an item that found no space (RESP2; CF.INSERTNX in
/// RESP3 too).
const NO_SPACE: i64 = -1;

/// Whether the command name ends in NX (CF.ADDNX, CF.INSERTNX), as RedisBloom decides it.
fn is_nx(args: &Args) -> bool {
    args.bytes(0)
        .last()
        .is_some_and(|c| c.eq_ignore_ascii_case(&b'x'))
}

/// CF.ADD key item / CF.ADDNX key item
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let filter = filter_for_write(&key, Some(config::CF_INITIAL_SIZE.get()), &mut write)?;
    check_expansions(filter, &write)?;
    let nx = is_nx(args);
    write.items_from(2);
    let reply = match tracked(filter, |f| insert_one(f, args, 2, nx, &mut write)) {
        Ok(inserted) => Ok(inserted),
        // Nothing changed: the kick-out was undone and the filter does not grow.
        Err(CuckooError::NoSpace) => return Err(error(errors::FILTER_FULL)),
        Err(CuckooError::TooLarge) => Err(error(crate::write::too_large())),
        Err(_) => Err(error(errors::INSUFFICIENT_MEMORY)),
    };
    notify_write(ctx, args);
    reply_bool(ctx, reply?)
}

/// CF.INSERT / CF.INSERTNX key [CAPACITY cap] [NOCREATE] ITEMS item [item ...]
pub fn insert(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let mut capacity = config::CF_INITIAL_SIZE.get();
    let mut nocreate = false;
    let mut items_at = None;
    let mut i = 2;
    while i < args.len() {
        match option_letter(args.bytes(i), 0) {
            Some(b'c') => {
                if i + 1 >= args.len() {
                    return Err(RedisError::WrongArity);
                }
                let value = args.integer(i + 1).ok_or(error(errors::CF_BAD_CAPACITY))?;
                // Checked against this server's default bucket size, so not for a write
                // from the master or the AOF: it reaches an existing filter there.
                if value < 2 * i64::from(config::cf_defaults().bucket_size) && !write.is_trusted() {
                    return Err(error(errors::CF_CAPACITY_TOO_SMALL));
                }
                capacity = value as u64;
                i += 2;
            }
            Some(b'i') => {
                items_at = Some(i + 1);
                break;
            }
            Some(b'n') => {
                nocreate = true;
                i += 1;
            }
            _ => return Err(error(errors::UNKNOWN_ARGUMENT)),
        }
    }
    let items_at = match items_at {
        Some(at) if at < args.len() => at,
        _ => return Err(RedisError::WrongArity),
    };
    let key = Key::open(ctx, args, 1, true);
    let filter = filter_for_write(&key, (!nocreate).then_some(capacity), &mut write)?;
    check_expansions(filter, &write)?;
    let nx = is_nx(args);
    write.items_from(items_at);
    let outcomes = tracked(filter, |f| {
        (items_at..args.len())
            .map(|i| match insert_one(f, args, i, nx, &mut write) {
                Ok(inserted) => Some(inserted),
                Err(e) => {
                    write.item_failed(&e.to_string());
                    None
                }
            })
            .collect::<Vec<Option<bool>>>()
    });
    notify_write(ctx, args);
    // CF.INSERTNX keeps integers in RESP3 too (1 inserted, 0 present, -1 no space), as
    // 2.6 does; CF.INSERT's elements are booleans there (no space → false).
    let mut reply = ArrayReply::with_len(ctx, outcomes.len());
    for outcome in outcomes {
        match outcome {
            _ if !nx => reply.boolean_or(outcome, NO_SPACE),
            Some(inserted) => reply.integer(i64::from(inserted)),
            None => reply.integer(NO_SPACE),
        }
    }
    reply.finish()
}

/// The filter of a read-only command, or `None` for a missing key or another type
/// (CF.EXISTS, CF.MEXISTS and CF.COUNT answer 0 for those, as RedisBloom does).
fn filter_or_none(key: &Key) -> Option<&CuckooFilter> {
    ours(key, &CUCKOO_TYPE)
}

/// CF.EXISTS key item
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = filter_or_none(&key).is_some_and(|f| f.contains(&CuckooHash::new(args.bytes(2))));
    reply_bool(ctx, found)
}

/// CF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = filter_or_none(&key);
    reply_bools(
        ctx,
        (2..args.len())
            .map(|i| filter.is_some_and(|f| f.contains(&CuckooHash::new(args.bytes(i))))),
    )
}

/// CF.COUNT key item — slots holding the item's fingerprint (may over-count).
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let n = filter_or_none(&key).map_or(0, |f| f.count(&CuckooHash::new(args.bytes(2))));
    Ok(RedisValue::Integer(n as i64))
}

/// CF.DEL key item — replicated only when it deleted; its event is published either way.
pub fn del(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let KeyState::Ours(filter) = key.state::<CuckooFilter>(&CUCKOO_TYPE) else {
        return Err(error(errors::CF_NOT_FOUND));
    };
    notify_write(ctx, args);
    let deleted = tracked(filter, |f| f.delete(&CuckooHash::new(args.bytes(2))));
    if deleted {
        write.as_received();
    }
    reply_bool(ctx, deleted)
}

/// CF.COMPACT key
pub fn compact(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let KeyState::Ours(filter) = key.state::<CuckooFilter>(&CUCKOO_TYPE) else {
        return Err(error(errors::CF_COMPACT_NOT_FOUND));
    };
    // With one sub-filter and no deletes counted, compaction has nothing to change.
    if filter.num_filters() > 1 || filter.num_deletes() > 0 {
        tracked(filter, |f| f.compact(true));
        write.as_received();
    }
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// CF.INFO key
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing::<CuckooFilter>(&key, &CUCKOO_TYPE)?;
    let fields: [Field; 8] = [
        ("Size", Some(filter.mem_usage() as i64)),
        ("Number of buckets", Some(filter.num_buckets() as i64)),
        ("Number of filters", Some(filter.num_filters() as i64)),
        ("Number of items inserted", Some(filter.num_items() as i64)),
        ("Number of items deleted", Some(filter.num_deletes() as i64)),
        ("Bucket size", Some(i64::from(filter.bucket_size()))),
        ("Expansion rate", Some(i64::from(filter.expansion()))),
        ("Max iterations", Some(i64::from(filter.max_iterations()))),
    ];
    reply_fields(ctx, &fields, Resp2Fields::Labelled)
}

/// CF.DEBUG key
pub fn debug(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing::<CuckooFilter>(&key, &CUCKOO_TYPE)?;
    Ok(RedisValue::BulkString(filter.debug_string()))
}

/// CF.SCANDUMP key iterator — the header at 0, then whole sub-filters (or 16 MiB pieces);
/// `[0, nil]` at the end and for an empty filter.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .filter(|&i| i >= 0)
        .ok_or(error(errors::INVALID_POSITION))?;
    let key = Key::open(ctx, args, 1, false);
    let filter = existing::<CuckooFilter>(&key, &CUCKOO_TYPE)?;
    let (next, data) = match cuckoo_dump::scandump(filter, iter) {
        Some(ScanDump::Header(header)) => (1, RedisValue::StringBuffer(header.to_vec())),
        Some(ScanDump::Chunk(next, data)) => (next, RedisValue::StringBuffer(data.to_vec())),
        Some(ScanDump::End) | None => (0, RedisValue::Null),
    };
    Ok(RedisValue::Array(vec![RedisValue::Integer(next), data]))
}

/// CF.LOADCHUNK key iterator data — iterator 1 is the 38-byte header for an empty key.
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let iter = args
        .integer(2)
        .filter(|&i| i != 0)
        .ok_or(error(errors::INVALID_POSITION))?;
    let data = args.bytes(3);
    if iter == 1 {
        match key.state::<CuckooFilter>(&CUCKOO_TYPE) {
            KeyState::Empty => {}
            KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
            KeyState::Other => return Err(RedisError::WrongType),
        }
        if data.len() != HEADER_LEN {
            return Err(error(errors::INVALID_HEADER));
        }
        let filter = cuckoo_dump::filter_from_header(data, write.max_bytes())
            .map_err(|_| error(errors::COULD_NOT_CREATE_FILTER_FROM_HEADER))?;
        key.set(&CUCKOO_TYPE, Box::new(filter))?;
    } else {
        let filter = existing::<CuckooFilter>(&key, &CUCKOO_TYPE)?;
        tracked(filter, |f| cuckoo_dump::load_chunk(f, iter, data))
            .map_err(|_| error(errors::COULD_NOT_LOAD_CHUNK))?;
    }
    write.as_received();
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
