//! The WBF.* commands (docs/wbf.md): parse, look up, call the core with the time, reply,
//! replicate.
//!
//! **Time.** The master's clock decides: every write whose effect depends on the time
//! (RESERVE, and an add that ends a generation of a timed window) reaches replicas and the
//! AOF as `WBF.AT key <ms> <RESERVE|ADD|MADD> ...`, which carries the master's time (as
//! Redis replicates EXPIRE as PEXPIREAT); every other write does the same at any time
//! before the next generation and is replicated as it came (see [`add_at`]). Replicas and
//! AOF replay thus make the master's bytes exactly. `WBF.AT` is accepted only from the master link and while the AOF
//! loads. Reads use the local clock. This process's clock never runs back: a wall clock
//! stepping backwards holds the time still until it catches up, so nothing expires early
//! and nothing a read saw expire comes back.

use crate::api::args::Args;
use crate::api::events::notify_event;
use crate::api::keys::{existing, ours, Key, KeyState};
use crate::api::replication::{is_trusted, replicate, Replicated};
use crate::api::replies::{reply_bool, reply_field_values, ArrayReply, FieldValue, Resp2Fields};
use crate::errors;
use crate::options::find_keyword;
use crate::stats::tracked;
use crate::types::WINDOW_TYPE;
use redbloom_core::bloom::link::LinkError;
use redbloom_core::hash::HashPair;
use redbloom_core::window::dump as window_dump;
use redbloom_core::window::WindowFilter;
use redis_module::{Context, RedisError, RedisResult, RedisValue};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The command replicas and the AOF receive for every write but LOADCHUNK.
const AT_COMMAND: &str = "WBF.AT";

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// Milliseconds since the epoch, never less than a value this process returned before.
fn now_ms() -> u64 {
    static LATEST: AtomicU64 = AtomicU64::new(0);
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    LATEST.fetch_max(wall, Ordering::Relaxed).max(wall)
}

/// The reply when a new filter cannot be made.
fn create_error(e: LinkError) -> RedisError {
    match e {
        LinkError::Invalid => error(errors::COULD_NOT_CREATE_BF),
        LinkError::TooLarge => error(crate::write::too_large()),
        LinkError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
    }
}

/// Replicates a write made at `time`, and publishes the keyspace event `wbf.<sub>`. A
/// write that arrived with its time, and any write to a counted window (which never reads
/// the time), is replicated as it came; a client's write to a timed window as
/// `WBF.AT key time <sub> args[from..]`. RESERVE always carries its time (the window may
/// be timed).
fn propagate_at(ctx: &Context, args: &Args, time: u64, sub: &Sub, from: usize, verbatim: bool) {
    if verbatim {
        ctx.replicate_verbatim();
    } else {
        let time = time.to_string();
        let mut parts = vec![
            Replicated::Arg(1),
            Replicated::Bytes(time.as_bytes()),
            Replicated::Bytes(sub.word),
        ];
        parts.extend((from..args.len()).map(Replicated::Arg));
        replicate(ctx, args, AT_COMMAND, &parts);
    }
    notify_event(ctx, sub.event, args, 1);
}

/// A write's sub-command in `WBF.AT` and its keyspace event.
struct Sub {
    word: &'static [u8],
    event: &'static [u8],
}

const RESERVE: Sub = Sub {
    word: b"RESERVE",
    event: b"wbf.reserve",
};
const ADD: Sub = Sub {
    word: b"ADD",
    event: b"wbf.add",
};
const MADD: Sub = Sub {
    word: b"MADD",
    event: b"wbf.madd",
};

/// The memory ceiling of a new filter: `bf.max-filter-bytes` and the memory left under
/// maxmemory; none for a write from the master or the AOF (it was checked where the write
/// was accepted; a replica never refuses what its master did).
fn max_bytes(ctx: &Context) -> u64 {
    use redbloom_core::memory::Ceiling;
    crate::write::Limit::of(ctx).limit_for(0)
}

/// WBF.RESERVE key error_rate capacity [WINDOW ms], its arguments from `at` on
/// (error_rate at `at`).
fn reserve_at(ctx: &Context, args: &Args, at: usize, time: u64, explicit: bool) -> RedisResult {
    let extra = args.len() - at;
    if !(2..=4).contains(&extra) {
        return Err(RedisError::WrongArity);
    }
    let error_rate = args.double(at).ok_or(error(errors::BAD_ERROR_RATE))?;
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(error(errors::ERROR_RATE_RANGE));
    }
    let capacity = args.integer(at + 1).ok_or(error(errors::BAD_CAPACITY))?;
    if capacity <= 0 {
        return Err(error(errors::CAPACITY_RANGE));
    }
    let window = match find_keyword(args, at + 2, "WINDOW") {
        Some(i) if i == at + 2 => {
            let ms = (i + 1 < args.len())
                .then(|| args.integer(i + 1))
                .flatten()
                .filter(|&ms| ms >= 1 && i + 2 == args.len())
                .ok_or(error(errors::BAD_WINDOW))?;
            Some(ms as u64)
        }
        _ if extra > 2 => return Err(error(errors::UNKNOWN_ARGUMENT)),
        _ => None,
    };
    let key = Key::open(ctx, args, 1, true);
    match key.state::<WindowFilter>(&WINDOW_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::ITEM_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    let filter = WindowFilter::new(capacity as u64, error_rate, window, time, max_bytes(ctx))
        .map_err(create_error)?;
    key.set(&WINDOW_TYPE, Box::new(filter))?;
    propagate_at(ctx, args, time, &RESERVE, at, explicit);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// WBF.ADD / WBF.MADD: the items from `from` on; `multi` replies an array. `explicit` is
/// the time of a `WBF.AT`; else the time is the clock's.
///
/// Only a write that ends generations by time depends on the time it runs at; any other
/// write does the same at every time before the next generation starts. So a client's
/// write is replicated as it came unless it ends a generation (then as `WBF.AT` with its
/// time: once per generation, not per add), and a write as it came from the master or the
/// AOF runs at the newest generation's start: it ends no generation by time, as on the
/// master.
fn add_at(
    ctx: &Context,
    args: &Args,
    from: usize,
    explicit: Option<u64>,
    multi: bool,
) -> RedisResult {
    let count = args.len().saturating_sub(from);
    if count == 0 || (!multi && count != 1) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    let filter = existing::<WindowFilter>(&key, &WINDOW_TYPE)?;
    let sub = if multi { &MADD } else { &ADD };
    // `None`: as it came from the master or the AOF, the write ends no generation by
    // time, as on the master (whatever the time here, and even where no time maps to the
    // newest generation: with WINDOW below the number of generations, several generations
    // start in the same millisecond).
    let (time, verbatim) = match explicit {
        Some(time) => (Some(time), true),
        None => {
            let now = now_ms();
            if filter.due_shifts(now) == 0 {
                (Some(now), true)
            } else if is_trusted(ctx) {
                (None, true)
            } else {
                (Some(now), false)
            }
        }
    };
    let propagated = time.unwrap_or_default();
    if multi {
        let pairs: Vec<HashPair> = (from..args.len())
            .map(|i| HashPair::wide(args.bytes(i)))
            .collect();
        let mut reply = ArrayReply::with_len(ctx, pairs.len());
        tracked(filter, |f| {
            f.add_each(&pairs, time, |new| reply.boolean(new))
        });
        propagate_at(ctx, args, propagated, sub, from, verbatim);
        reply.finish()
    } else {
        let pair = HashPair::wide(args.bytes(from));
        let new = tracked(filter, |f| match time {
            Some(time) => f.add(pair, time),
            None => f.add_untimed(pair),
        });
        propagate_at(ctx, args, propagated, sub, from, verbatim);
        reply_bool(ctx, new)
    }
}

/// WBF.RESERVE key error_rate capacity [WINDOW milliseconds]
pub fn reserve(ctx: &Context, args: &Args) -> RedisResult {
    if !(4..=6).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    reserve_at(ctx, args, 2, now_ms(), false)
}

/// WBF.ADD key item — 1 if the item was not in the window, 0 if it was; it stays a full
/// window from now either way. A missing key is `ERR not found`.
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    add_at(ctx, args, 2, None, false)
}

/// WBF.MADD key item [item ...]
pub fn madd(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    add_at(ctx, args, 2, None, true)
}

/// WBF.AT key milliseconds RESERVE|ADD|MADD args... — a write at the master's time, as
/// replicas and the AOF receive it; refused from clients.
pub fn at(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 5 {
        return Err(RedisError::WrongArity);
    }
    if !is_trusted(ctx) {
        return Err(error(errors::AT_FROM_CLIENT));
    }
    let time = args
        .integer(2)
        .filter(|&t| t >= 0)
        .ok_or(error(errors::BAD_TIME))? as u64;
    let sub = args.bytes(3);
    if sub.eq_ignore_ascii_case(b"RESERVE") {
        reserve_at(ctx, args, 4, time, true)
    } else if sub.eq_ignore_ascii_case(b"ADD") {
        add_at(ctx, args, 4, Some(time), false)
    } else if sub.eq_ignore_ascii_case(b"MADD") {
        add_at(ctx, args, 4, Some(time), true)
    } else {
        Err(error(errors::UNKNOWN_ARGUMENT))
    }
}

/// The filter of a read-only query, or `None` for a missing key or another type (the
/// item queries answer 0 for those, as BF.EXISTS does).
fn filter_or_none(key: &Key) -> Option<&WindowFilter> {
    ours(key, &WINDOW_TYPE)
}

/// WBF.EXISTS key item — 1 if the item was added within the window (false positives
/// aside), 0 otherwise and for a missing key.
pub fn exists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let found =
        filter_or_none(&key).is_some_and(|f| f.contains(HashPair::wide(args.bytes(2)), now_ms()));
    reply_bool(ctx, found)
}

/// WBF.MEXISTS key item [item ...]
pub fn mexists(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let mut reply = ArrayReply::with_len(ctx, args.len() - 2);
    match filter_or_none(&key) {
        Some(filter) => {
            let pairs: Vec<HashPair> = (2..args.len())
                .map(|i| HashPair::wide(args.bytes(i)))
                .collect();
            filter.contains_each(&pairs, now_ms(), |hit| reply.boolean(hit));
        }
        None => (2..args.len()).for_each(|_| reply.boolean(false)),
    }
    reply.finish()
}

/// WBF.CARD key — adds within the window; 0 for a missing key.
pub fn card(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    match key.state::<WindowFilter>(&WINDOW_TYPE) {
        KeyState::Ours(filter) => Ok(RedisValue::Integer(filter.items(now_ms()) as i64)),
        KeyState::Empty => Ok(RedisValue::Integer(0)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// WBF.INFO key [CAPACITY | WINDOW | ERROR | SIZE | GENERATIONS | ITEMS]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if !(2..=3).contains(&args.len()) {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let filter = existing::<WindowFilter>(&key, &WINDOW_TYPE)?;
    let window = match filter.window() {
        0 => FieldValue::Null,
        ms => FieldValue::Integer(ms as i64),
    };
    let fields = [
        ("Capacity", FieldValue::Integer(filter.capacity() as i64)),
        ("Window", window),
        ("Error rate", FieldValue::Double(filter.error())),
        ("Size", FieldValue::Integer(filter.mem_usage() as i64)),
        (
            "Generations",
            FieldValue::Integer(i64::from(filter.shape().l)),
        ),
        (
            "Number of items in the window",
            FieldValue::Integer(filter.items(now_ms()) as i64),
        ),
    ];
    if args.len() == 2 {
        return reply_field_values(ctx, &fields, Resp2Fields::Labelled);
    }
    let wanted = args.bytes(2).to_ascii_lowercase();
    let index = [
        "capacity",
        "window",
        "error",
        "size",
        "generations",
        "items",
    ]
    .iter()
    .position(|name| name.as_bytes() == wanted.as_slice())
    .ok_or(error(errors::INVALID_INFO_VALUE))?;
    // RESP2: `[value]`; RESP3: a one-entry map, as BF.INFO key FIELD.
    reply_field_values(ctx, &fields[index..=index], Resp2Fields::ValuesOnly)
}

/// WBF.SCANDUMP key iterator — the header at 0, then bit-array chunks; `[0, ""]` at the end.
pub fn scandump(ctx: &Context, args: &Args) -> RedisResult {
    crate::scandump::scandump::<WindowFilter>(
        ctx,
        args,
        &WINDOW_TYPE,
        window_dump::header,
        window_dump::chunk,
    )
}

/// WBF.LOADCHUNK key iterator data — iterator 1 on an empty key is the header (which holds
/// the times: the restored filter expires as the dumped one would).
pub fn loadchunk(ctx: &Context, args: &Args) -> RedisResult {
    crate::scandump::loadchunk::<WindowFilter>(
        ctx,
        args,
        &WINDOW_TYPE,
        b"wbf.loadchunk",
        window_dump::filter_from_header,
        window_dump::load_chunk,
    )
}
