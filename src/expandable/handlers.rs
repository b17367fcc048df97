//! The XF.* commands (docs/xf.md): parse, look up, call the core, reply, and report what
//! changed to [`Write`], which replicates the effect.
//!
//! **Replication.** The structure is a pure function of its parameters and of the order of
//! its inserts and deletes (no time, no randomness), so a replica or an AOF replay that
//! receives the same parameters and items builds the master's bytes. A filter created by
//! a command goes as `XF.RESERVE key <rate> CAPACITY <n>` with both parameters explicit
//! (not this server's defaults: valkey-bloom's idea), then its items as `XF.MADD`; a
//! command that created nothing and applied every item goes as received; XF.DEL only
//! when it deleted; XF.LOADCHUNK as received. Writes from the master or the AOF are
//! trusted: no memory ceiling applies to them.

use super::value::{Loading, XfValue, EXPANDABLE_TYPE};
use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{existing, ours, Key, KeyState};
use crate::api::replies::{reply_bool, reply_field_values, ArrayReply, FieldValue, Resp2Fields};
use crate::errors;
use crate::stats::tracked;
use crate::write::{Creation, Write};
use redbloom_core::expandable::{XFilter, XfError, XfParams};
use redbloom_core::fmt::shortest;
use redbloom_core::limits::{XF_DEFAULT_CAPACITY, XF_DEFAULT_ERROR_RATE};
use redbloom_core::memory::Ceiling;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The reply to what the core refused: its own text (`XfError`'s Display is the reply) for
/// XF's own refusals; the texts every family shares from errors.rs; the ceiling names the
/// limit that refused (`bf.max-filter-bytes` or the memory left under maxmemory).
fn refused(e: XfError) -> String {
    match e {
        XfError::TooLarge => crate::write::too_large().to_string(),
        XfError::OutOfMemory => errors::INSUFFICIENT_MEMORY.to_string(),
        XfError::BadData => errors::RECEIVED_BAD_DATA.to_string(),
        e => e.to_string(),
    }
}

/// XF.RESERVE with both parameters explicit: what recreates a filter made from `params`
/// on a replica or from the AOF, whatever their defaults.
fn creation(params: &XfParams) -> Creation {
    Creation {
        name: "RESERVE",
        args: vec![
            shortest(params.error_rate).into_bytes(),
            b"CAPACITY".to_vec(),
            params.initial_capacity.to_string().into_bytes(),
        ],
    }
}

/// Stores a new filter made from `params` in the empty `key`.
fn create_in<'k>(
    key: &'k Key,
    params: XfParams,
    write: &mut Write,
) -> Result<&'k mut XfValue, RedisError> {
    let filter = XFilter::new(params, write.max_bytes()).map_err(|e| match e {
        XfError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
        e => RedisError::String(refused(e)),
    })?;
    write.created(creation(&params));
    key.set(&EXPANDABLE_TYPE, Box::new(XfValue::Ready(filter)))
}

/// The parameters of a filter created by XF.ADD or XF.MADD on an empty key.
fn defaults() -> XfParams {
    XfParams {
        error_rate: XF_DEFAULT_ERROR_RATE,
        initial_capacity: XF_DEFAULT_CAPACITY,
    }
}

/// XF.RESERVE key error_rate [CAPACITY capacity]
pub fn reserve(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 && args.len() != 5 {
        return Err(RedisError::WrongArity);
    }
    let error_rate = args.double(2).ok_or(error(errors::BAD_ERROR_RATE))?;
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(error(errors::ERROR_RATE_RANGE));
    }
    let mut params = XfParams {
        error_rate,
        ..defaults()
    };
    if args.len() == 5 {
        if !args.bytes(3).eq_ignore_ascii_case(b"CAPACITY") {
            return Err(error(errors::UNKNOWN_ARGUMENT));
        }
        let capacity = args.integer(4).ok_or(error(errors::BAD_CAPACITY))?;
        if capacity <= 0 {
            return Err(error(errors::CAPACITY_RANGE));
        }
        params.initial_capacity = capacity as u64;
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<XfValue>(&EXPANDABLE_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    create_in(&key, params, &mut write)?;
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The complete filter of a key opened for writing, created with the defaults when the
/// key is empty.
fn filter_for_write<'k>(key: &'k Key, write: &mut Write) -> Result<&'k mut XfValue, RedisError> {
    let value = match key.state::<XfValue>(&EXPANDABLE_TYPE) {
        KeyState::Ours(value) => value,
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Empty => create_in(key, defaults(), write)?,
    };
    match value {
        XfValue::Ready(_) => Ok(value),
        XfValue::Loading(_) => Err(error(errors::XF_INCOMPLETE)),
    }
}

/// Inserts the item in argument `i` under the write's ceiling.
fn insert_one(
    filter: &mut XFilter,
    args: &Args,
    i: usize,
    write: &mut Write,
) -> Result<(), XfError> {
    let limit = write.limit_for(filter.memory_bytes() as u64);
    filter.insert(XFilter::hash(args.bytes(i)), limit)?;
    write.added(i);
    Ok(())
}

/// XF.ADD key item — always inserts (an item added twice is there twice, as CF.ADD).
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let value = filter_for_write(&key, &mut write)?;
    write.items_from(2);
    let inserted = tracked(value, |v| match v {
        XfValue::Ready(f) => insert_one(f, args, 2, &mut write),
        XfValue::Loading(_) => Ok(()),
    });
    notify_write(ctx, args);
    match inserted {
        Ok(()) => reply_bool(ctx, true),
        Err(e) => {
            let text = refused(e);
            write.item_failed(&text);
            Err(RedisError::String(text))
        }
    }
}

/// XF.MADD key item [item ...] — per item 1, or the error that refused it (the memory
/// ceiling); a refused item changes nothing.
pub fn madd(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let value = filter_for_write(&key, &mut write)?;
    write.items_from(2);
    let outcomes: Vec<Result<(), XfError>> = tracked(value, |v| match v {
        XfValue::Ready(f) => (2..args.len())
            .map(|i| insert_one(f, args, i, &mut write))
            .collect(),
        XfValue::Loading(_) => Vec::new(),
    });
    notify_write(ctx, args);
    let mut reply = ArrayReply::with_len(ctx, outcomes.len());
    for outcome in outcomes {
        match outcome {
            Ok(()) => reply.boolean(true),
            Err(e) => {
                let text = refused(e);
                write.item_failed(&text);
                reply.error(&text);
            }
        }
    }
    reply.finish()
}

/// The complete filter of a read: `None` for a missing key or another type (every item
/// answers 0, as BF.EXISTS and CF.EXISTS do); a filter still loading is an error.
fn queried(key: &Key) -> Result<Option<&XFilter>, RedisError> {
    match ours::<XfValue>(key, &EXPANDABLE_TYPE) {
        Some(XfValue::Ready(f)) => Ok(Some(f)),
        Some(XfValue::Loading(_)) => Err(error(errors::XF_INCOMPLETE)),
        None => Ok(None),
    }
}

/// XF.EXISTS key item — 1 if the item may be in the filter, 0 if it is not.
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = queried(&key)?.is_some_and(|f| f.contains(XFilter::hash(args.bytes(2))));
    reply_bool(ctx, found)
}

/// XF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = queried(&key)?;
    let mut reply = ArrayReply::with_len(ctx, args.len() - 2);
    match filter {
        Some(f) => {
            let hashes: Vec<u64> = (2..args.len())
                .map(|i| XFilter::hash(args.bytes(i)))
                .collect();
            f.contains_each(&hashes, |hit| reply.boolean(hit));
        }
        None => (2..args.len()).for_each(|_| reply.boolean(false)),
    }
    reply.finish()
}

/// XF.COUNT key item — the entries matching the item (an upper bound of its adds minus
/// its deletes, as CF.COUNT); 0 for a missing key.
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let n = queried(&key)?.map_or(0, |f| f.count(XFilter::hash(args.bytes(2))));
    Ok(RedisValue::Integer(n as i64))
}

/// XF.DEL key item — removes one entry of the item; replicated only when it deleted.
/// Deleting an item never added may remove another item's entry (a false negative), as
/// for CF.DEL.
pub fn del(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let value = match key.state::<XfValue>(&EXPANDABLE_TYPE) {
        KeyState::Ours(value) => value,
        KeyState::Empty => return Err(error(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
    };
    if matches!(value, XfValue::Loading(_)) {
        return Err(error(errors::XF_INCOMPLETE));
    }
    let deleted = tracked(value, |v| match v {
        XfValue::Ready(f) => f.delete(XFilter::hash(args.bytes(2))),
        XfValue::Loading(_) => false,
    });
    notify_write(ctx, args);
    if deleted {
        write.as_received();
    }
    reply_bool(ctx, deleted)
}

/// XF.CARD key — items added and not deleted; 0 for a missing key.
pub fn card(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state::<XfValue>(&EXPANDABLE_TYPE) {
        KeyState::Ours(XfValue::Ready(f)) => Ok(RedisValue::Integer(f.items() as i64)),
        KeyState::Ours(XfValue::Loading(_)) => Err(error(errors::XF_INCOMPLETE)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// The complete filter of an existing key (XF.INFO, XF.DEBUG, XF.SCANDUMP).
fn complete(key: &Key) -> Result<&XFilter, RedisError> {
    match existing::<XfValue>(key, &EXPANDABLE_TYPE)? {
        XfValue::Ready(f) => Ok(f),
        XfValue::Loading(_) => Err(error(errors::XF_INCOMPLETE)),
    }
}

/// XF.INFO's fields, in reply order, with the names that ask for one of them.
const INFO_FIELDS: [(&str, &str); 8] = [
    ("Error rate", "error"),
    ("Number of items", "items"),
    ("Capacity", "capacity"),
    ("Expansions", "expansions"),
    ("Partitions", "partitions"),
    ("Size", "size"),
    ("Bits per item", "bitsperitem"),
    ("Error rate bound", "bound"),
];

/// XF.INFO key [ERROR | ITEMS | CAPACITY | EXPANSIONS | PARTITIONS | SIZE | BITSPERITEM |
/// BOUND] — the error rate asked, the items, the items the filter holds before its next
/// split, the levels it has grown, its partitions, its bytes, its bits per item and the
/// false-positive rate its entries guarantee now (a union bound, kept exactly).
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let i = complete(&key)?.info();
    let values = [
        FieldValue::Double(i.error_rate),
        FieldValue::Integer(i.items as i64),
        FieldValue::Integer(i.capacity as i64),
        FieldValue::Integer(i64::from(i.expansions)),
        FieldValue::Integer(i.partitions as i64),
        FieldValue::Integer(i.bytes as i64),
        FieldValue::Double(i.bits_per_item),
        FieldValue::Double(i.fp_bound),
    ];
    let fields: Vec<(&'static str, FieldValue)> = INFO_FIELDS
        .iter()
        .zip(values)
        .map(|(&(label, _), value)| (label, value))
        .collect();
    if args.len() == 2 {
        return reply_field_values(ctx, &fields, Resp2Fields::Labelled);
    }
    let wanted = args.bytes(2).to_ascii_lowercase();
    let index = INFO_FIELDS
        .iter()
        .position(|(_, name)| name.as_bytes() == wanted.as_slice())
        .ok_or(error(errors::INVALID_INFO_VALUE))?;
    reply_field_values(ctx, &fields[index..=index], Resp2Fields::ValuesOnly)
}

/// XF.DEBUG key — one line: items, entries, partitions, expansions, bytes, the rate asked
/// and the rate guaranteed now.
pub fn debug(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let i = complete(&key)?.info();
    Ok(RedisValue::BulkString(format!(
        "items:{} entries:{} partitions:{} expansions:{} capacity:{} bytes:{} error:{} bound:{}",
        i.items,
        i.entries,
        i.partitions,
        i.expansions,
        i.capacity,
        i.bytes,
        shortest(i.error_rate),
        shortest(i.fp_bound)
    )))
}

/// XF.SCANDUMP key iterator — the header at 0, then data chunks; `[0, ""]` at the end.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = complete(&key)?;
    let iter = args.integer(2).ok_or(error(errors::SCANDUMP_NOT_NUMERIC))?;
    let (next, data) = if iter == 0 {
        (1, redbloom_core::expandable::header(filter))
    } else {
        redbloom_core::expandable::chunk(filter, iter).unwrap_or((0, Vec::new()))
    };
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(next),
        RedisValue::StringBuffer(data),
    ]))
}

/// XF.LOADCHUNK key iterator data — iterator 1 on an empty key is the header; the filter
/// then answers no command but LOADCHUNK until its last chunk has come and the whole
/// filter has passed every check. A refused chunk changes nothing (the key stays as it
/// was: absent for a refused header).
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .ok_or(error(errors::LOADCHUNK_NOT_NUMERIC))?;
    let data = args.bytes(3);
    let key = Key::open(ctx, args, 1, true);
    match key.state::<XfValue>(&EXPANDABLE_TYPE) {
        KeyState::Empty if iter == 1 => {
            let max_bytes = crate::write::Limit::of(ctx).limit_for(0);
            let value =
                Loading::start(data, max_bytes).map_err(|e| RedisError::String(refused(e)))?;
            key.set(&EXPANDABLE_TYPE, Box::new(value))?;
        }
        KeyState::Empty => return Err(error(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Ours(XfValue::Ready(_)) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Ours(value) => tracked(value, |v| v.load_chunk(iter, data))
            .map_err(|e| RedisError::String(refused(e)))?,
    }
    ctx.replicate_verbatim();
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
