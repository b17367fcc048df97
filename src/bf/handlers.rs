//! The BF.* commands, generic over [`BloomKind`]: BF.* runs them on `Chain`, CBF.* on
//! `CountingChain`. Parse, look up, call the core, reply, and report what changed to
//! [`Write`] (which replicates the effect).

use super::{
    error, filter_for_write, filter_or_none, BloomKind, NewFilter, BLOCKED, MAX_EXPANSION,
};
use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{existing_in, Key, KeyState};
use crate::api::replies::{reply_bool, reply_fields, ArrayReply, Field, Resp2Fields};
use crate::errors;
use crate::options::{find_keyword, option_letter};
use crate::stats::tracked;
use crate::write::Write;
use redbloom_core::bloom::chain::AddOutcome;
use redbloom_core::bloom::link::LinkError;
use redbloom_core::hash::HashPair;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// One item's reply: true (RESP2: 1) added, false (0) present, or an error; `Full` also
/// ends a multi-item command.
fn add_reply(outcome: AddOutcome) -> Result<bool, &'static str> {
    match outcome {
        AddOutcome::Added => Ok(true),
        AddOutcome::Exists => Ok(false),
        AddOutcome::Full => Err(errors::NONSCALING_FULL),
        AddOutcome::GrowFailed(LinkError::TooLarge) => Err(crate::write::too_large()),
        AddOutcome::GrowFailed(_) => Err(errors::PROBLEM_INSERTING),
    }
}

/// Adds the items from argument `from` on, in order, one reply element each; stops after
/// the first "filter is full" element, as RedisBloom does.
fn add_items<'a, F: BloomKind>(
    filter: &mut F,
    args: &'a Args<'a>,
    from: usize,
    reply: &mut ArrayReply,
    write: &mut Write<'a>,
) {
    let pairs: Vec<HashPair> = (from..args.len())
        .map(|i| filter.hash(args.bytes(i)))
        .collect();
    write.items_from(from);
    let mut next = from;
    let limit = write.limit();
    filter.add_each(&pairs, limit, |outcome| {
        let item = next;
        next += 1;
        match add_reply(outcome) {
            Ok(added) => {
                if outcome == AddOutcome::Added {
                    write.added(item);
                }
                reply.boolean(added)
            }
            Err(text) => {
                write.item_failed(text);
                reply.error(text)
            }
        }
        outcome != AddOutcome::Full
    });
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING] [BLOCKED]
pub fn reserve<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    let blocked = F::HAS_BLOCKED && find_keyword(args, 4, BLOCKED).is_some();
    // BLOCKED is one argument more than RedisBloom's longest form.
    if !(4..=7 + usize::from(blocked)).contains(&args.len()) {
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
    let mut write = Write::new(ctx, args);
    let mut params = NewFilter {
        capacity: capacity as u64,
        error: error_rate,
        // BF.RESERVE states the layout: the config is for filters created implicitly.
        blocked,
        ..NewFilter::defaults::<F>()
    };
    // With the bf-expansion-factor config at 0, new filters are non-scaling by default —
    // but not those the master or the AOF creates: they state how they scale.
    params.scaling =
        (params.scaling || write.is_trusted()) && find_keyword(args, 4, "NONSCALING").is_none();
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
    match key.state_in::<F>(F::data_types()) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    params.create_in::<F>(&key, &mut write)?;
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// BF.ADD key item
pub fn add<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write::<F>(&key, Some(&NewFilter::defaults::<F>()), &mut write)?;
    write.items_from(2);
    let outcome = tracked(chain, |c| c.add(c.hash(args.bytes(2)), &write));
    if outcome == AddOutcome::Added {
        write.added(2);
    }
    notify_write(ctx, args);
    reply_bool(ctx, add_reply(outcome).map_err(error)?)
}

/// BF.MADD key item [item ...]
pub fn madd<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write::<F>(&key, Some(&NewFilter::defaults::<F>()), &mut write)?;
    let mut reply = ArrayReply::postponed(ctx);
    tracked(chain, |c| add_items(c, args, 2, &mut reply, &mut write));
    notify_write(ctx, args);
    reply.finish()
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [BLOCKED]
/// ITEMS item...
/// Options are recognised by their first letters, as RedisBloom does.
pub fn insert<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let mut params = NewFilter::defaults::<F>();
    let mut expansion = i64::from(params.growth);
    let mut capacity = params.capacity as i64;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut items_at = None;
    let mut i = 2;
    while i < args.len() {
        let token = args.bytes(i);
        if F::HAS_BLOCKED && token.eq_ignore_ascii_case(BLOCKED.as_bytes()) {
            params.blocked = true;
            i += 1;
            continue;
        }
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

    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let chain = filter_for_write::<F>(&key, (!nocreate).then_some(&params), &mut write)?;
    let mut reply = ArrayReply::postponed(ctx);
    tracked(chain, |c| {
        add_items(c, args, items_at, &mut reply, &mut write)
    });
    notify_write(ctx, args);
    reply.finish()
}

/// BF.EXISTS key item — 0 for a missing key or a key of another type, as RedisBloom does.
pub fn exists<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found = filter_or_none::<F>(&key).is_some_and(|f| f.contains(f.hash(args.bytes(2))));
    reply_bool(ctx, found)
}

/// BF.MEXISTS key item [item ...]
pub fn mexists<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let mut reply = ArrayReply::with_len(ctx, args.len() - 2);
    match filter_or_none::<F>(&key) {
        Some(chain) => {
            let pairs: Vec<HashPair> = (2..args.len()).map(|i| chain.hash(args.bytes(i))).collect();
            chain.contains_each(&pairs, |hit| reply.boolean(hit));
        }
        _ => (2..args.len()).for_each(|_| reply.boolean(false)),
    }
    reply.finish()
}

/// BF.CARD key — 0 for a missing key.
pub fn card<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state_in::<F>(F::data_types()) {
        KeyState::Ours(filter) => Ok(RedisValue::Integer(filter.summary().items as i64)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
pub fn info<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let summary = existing_in::<F>(&key, F::data_types())?.summary();
    let mut fields: Vec<Field> = vec![
        ("Capacity", Some(summary.capacity as i64)),
        ("Size", Some(summary.size as i64)),
        ("Number of filters", Some(summary.filters as i64)),
        ("Number of items inserted", Some(summary.items as i64)),
        ("Expansion rate", summary.growth.map(i64::from)),
    ];
    let mut names = vec!["capacity", "size", "filters", "items", "expansion"];
    // Only a blocked filter has the field, so a classic filter's reply stays RedisBloom's.
    if summary.blocked {
        fields.push(("Blocked", Some(1)));
        names.push("blocked");
    }
    if args.len() == 2 {
        return reply_fields(ctx, &fields, Resp2Fields::Labelled);
    }
    let wanted = args.bytes(2).to_ascii_lowercase();
    let index = names
        .iter()
        .position(|name| name.as_bytes() == wanted.as_slice())
        .ok_or(error(errors::INVALID_INFO_VALUE))?;
    // RESP2: `[value]`; RESP3: a one-entry map keyed by the field's label (as 2.6).
    reply_fields(ctx, &fields[index..=index], Resp2Fields::ValuesOnly)
}

/// BF.DEBUG key — the chain size, then one line per link.
pub fn debug<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing_in::<F>(&key, F::data_types())?;
    let mut lines = vec![RedisValue::BulkString(format!(
        "size:{}",
        filter.summary().items
    ))];
    lines.extend(filter.debug_lines().into_iter().map(RedisValue::BulkString));
    Ok(RedisValue::Array(lines))
}

/// BF.SCANDUMP key iterator — the header at 0, then bit-array chunks; `[0, ""]` at the end.
pub fn scandump<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing_in::<F>(&key, F::data_types())?;
    let iter = args.integer(2).ok_or(error(errors::SCANDUMP_NOT_NUMERIC))?;
    let (next, data) = if iter == 0 {
        (1, filter.dump_header())
    } else {
        match filter.dump_chunk(iter) {
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
pub fn loadchunk<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let iter = args
        .integer(2)
        .ok_or(error(errors::LOADCHUNK_NOT_NUMERIC))?;
    let data = args.bytes(3);
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    match key.state_in::<F>(F::data_types()) {
        KeyState::Empty if iter == 1 => {
            let filter = F::from_dump_header(data, write.max_bytes())
                .map_err(|_| error(errors::RECEIVED_BAD_DATA))?;
            write.marked_if(filter.is_blocked());
            key.set(filter.stored_type(), Box::new(filter))?;
        }
        KeyState::Empty => return Err(error(errors::NOT_FOUND)),
        KeyState::Other => return Err(RedisError::WrongType),
        KeyState::Ours(filter) => {
            write.marked_if(filter.is_blocked());
            // Tracked: a chunk changes the fill, so the health alerts.
            crate::stats::tracked(filter, |f| f.load_dump_chunk(iter, data))
                .map_err(crate::scandump::chunk_error)?;
        }
    }
    write.as_received();
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// BF.BLOCKEDWRITE key — does nothing (redbloom's own). It precedes each write to a
/// BLOCKED filter that replicas and the AOF receive (`types::BLOCKED_WRITE`), so that
/// RedisBloom, which does not know it, refuses the write instead of misapplying it.
pub fn blocked_write(_ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    Ok(RedisValue::SimpleStringStatic("OK"))
}
