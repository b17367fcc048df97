//! Keyspace notifications (class `d`, module events) and the server events the module
//! follows (fork children: counted, and their end).

use super::args::Args;
use redis_module::{raw, Context};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// How many fork children (BGSAVE, AOF rewrite, a replica's full sync, ...) the server
/// has started since the module loaded.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The number of fork children started so far.
pub fn forks() -> u64 {
    FORKS.load(Ordering::Relaxed)
}

/// What runs when the server has forgotten a fork child (after its done handler, if it
/// has one; or killed at shutdown, without it).
static ON_CHILD_DIED: OnceLock<fn()> = OnceLock::new();

/// Runs `f` on the main thread each time a fork child has ended, from now on (the first
/// `f` given stays).
pub fn on_fork_child_died(f: fn()) {
    let _ = ON_CHILD_DIED.set(f);
}

unsafe extern "C" fn on_fork_child(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    if subevent == raw::REDISMODULE_SUBEVENT_FORK_CHILD_BORN {
        FORKS.fetch_add(1, Ordering::Relaxed);
    } else if subevent == raw::REDISMODULE_SUBEVENT_FORK_CHILD_DIED {
        if let Some(f) = ON_CHILD_DIED.get() {
            super::panic::catch_panic("a fork child's end", f);
        }
    }
}

/// Counts fork children from now on (the event fires in the parent, after the fork).
pub fn watch_forks(ctx: &Context) -> Result<(), String> {
    let subscribe = unsafe { raw::RedisModule_SubscribeToServerEvent }
        .ok_or("the server has no server events")?;
    let event = raw::RedisModuleEvent {
        id: raw::REDISMODULE_EVENT_FORK_CHILD,
        dataver: 1,
    };
    let status = unsafe { subscribe(ctx.ctx, event, Some(on_fork_child)) };
    if status == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err("could not subscribe to fork child events".to_string())
    }
}

/// Publishes a keyspace event named after the command (`bf.add`, `cf.del`, ...) for the
/// key at argument 1, of class `d` (module events).
pub fn notify_write(ctx: &Context, args: &Args) {
    notify_event(ctx, args.bytes(0), args, 1);
}

/// [`notify_write`] for a handler that runs one command only: its event name, lower-case,
/// given (the copy and lower-casing of the name were a third of a single TDIGEST.ADD's
/// module-side overhead against RedisBloom's).
pub fn notify_command(ctx: &Context, event: &CStr, args: &Args) {
    unsafe {
        raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_NOTIFY_MODULE as c_int,
            event.as_ptr(),
            args.raw(1),
        );
    }
}

/// Publishes the keyspace event `event` (lower-cased; class `d`, module events) for the
/// key at argument `key` of `args`.
pub fn notify_event(ctx: &Context, event: &[u8], args: &Args, key: usize) {
    let mut name = [0u8; 32];
    if event.len() >= name.len() {
        return;
    }
    // The whole fixed-size buffer at once (a few vector instructions, where a loop over
    // the name's bytes was ~60 instructions of a single TDIGEST.ADD).
    name[..event.len()].copy_from_slice(event);
    name.make_ascii_lowercase();
    unsafe {
        raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_NOTIFY_MODULE as c_int,
            name.as_ptr().cast::<c_char>(),
            args.raw(key),
        );
    }
}

/// Keyspace events a write raised while it ran (bit `i`: [`RAISED_EVENTS`]`[i]`), published
/// for the command's key (argument 1) when the command ends. Written and read on the main
/// thread only.
static RAISED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The events [`raise`] can ask for (class `d`): a filter crossed its asked false-positive
/// rate, or its capacity.
pub const RAISED_EVENTS: [&CStr; 2] = [c"health.over_fp_rate", c"health.over_capacity"];

/// Asks for the events of `bits` (see [`RAISED_EVENTS`]) at the end of the command.
pub fn raise(bits: u8) {
    let pending = RAISED.load(Ordering::Relaxed);
    RAISED.store(pending | bits, Ordering::Relaxed);
}

/// Publishes the events raised while the command ran (one relaxed load when none was).
#[inline(always)]
pub(super) fn publish_raised(ctx: &Context, args: &Args) {
    let bits = RAISED.load(Ordering::Relaxed);
    if bits != 0 {
        publish(ctx, args, bits);
    }
}

#[cold]
#[inline(never)]
fn publish(ctx: &Context, args: &Args, bits: u8) {
    RAISED.store(0, Ordering::Relaxed);
    if args.len() < 2 {
        return;
    }
    for (i, event) in RAISED_EVENTS.iter().enumerate() {
        if bits & (1 << i) != 0 {
            notify_command(ctx, event, args);
        }
    }
}

/// What runs when a key may have changed: `Some(name)` for a keyspace event naming the
/// key (in any database), `None` for a change of whole databases (FLUSHDB, FLUSHALL, a
/// SWAPDB, a replica's or DEBUG RELOAD's emptying).
pub type KeyChanged = fn(Option<&[u8]>);

static ON_KEY_CHANGED: OnceLock<KeyChanged> = OnceLock::new();

/// Every keyspace event class but the module class (`d`, which the module's own writes
/// publish, to filters only) and key misses: each write of a SET, sorted set or hash,
/// and of the generic kind (DEL, RENAME, EXPIRE, MOVE, ...), expiries and evictions.
const KEY_CHANGE_EVENTS: c_int = raw::REDISMODULE_NOTIFY_ALL & !raw::REDISMODULE_NOTIFY_MODULE;

unsafe extern "C" fn on_keyspace_event(
    _ctx: *mut raw::RedisModuleCtx,
    _type: c_int,
    _event: *const c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    if let Some(f) = ON_KEY_CHANGED.get() {
        let mut len = 0usize;
        let ptr = unsafe { raw::RedisModule_StringPtrLen.unwrap()(key, &mut len) };
        if !ptr.is_null() {
            let name = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
            super::panic::catch_panic("a keyspace event", || f(Some(name)));
        }
    }
    0
}

unsafe extern "C" fn on_databases_changed(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut c_void,
) {
    if let Some(f) = ON_KEY_CHANGED.get() {
        super::panic::catch_panic("a database change", || f(None));
    }
}

/// Calls `f` on the main thread, from now on, for each change of whole databases, and
/// once [`follow_key_writes`] was called, for each write that may change a key (the
/// callback filters; it runs within the writing command and must not write).
pub fn watch_key_changes(ctx: &Context, f: KeyChanged) -> Result<(), String> {
    let _ = ON_KEY_CHANGED.set(f);
    let subscribe = unsafe { raw::RedisModule_SubscribeToServerEvent }
        .ok_or("the server has no server events")?;
    for id in [
        raw::REDISMODULE_EVENT_FLUSHDB,
        raw::REDISMODULE_EVENT_SWAPDB,
    ] {
        let event = raw::RedisModuleEvent { id, dataver: 1 };
        if unsafe { subscribe(ctx.ctx, event, Some(on_databases_changed)) }
            != raw::REDISMODULE_OK as c_int
        {
            return Err("could not subscribe to flush and swapdb events".to_string());
        }
    }
    Ok(())
}

/// Whether the module follows keyspace events (subscribed once, on the first need).
static FOLLOWING_WRITES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Subscribes to keyspace events for [`watch_key_changes`]'s callback, the first time it
/// is called (true once subscribed). Not at load: the server then runs the callback for
/// every write of every client (measured: 5-17 % of the throughput of pipelined SET),
/// which a server that never needs it should not pay.
pub fn follow_key_writes(ctx: &Context) -> bool {
    if FOLLOWING_WRITES.load(Ordering::Relaxed) {
        return true;
    }
    let Some(keyspace) = (unsafe { raw::RedisModule_SubscribeToKeyspaceEvents }) else {
        return false;
    };
    let status = unsafe { keyspace(ctx.ctx, KEY_CHANGE_EVENTS, Some(on_keyspace_event)) };
    let ok = status == raw::REDISMODULE_OK as c_int;
    FOLLOWING_WRITES.store(ok, Ordering::Relaxed);
    ok
}
