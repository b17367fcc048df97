//! Keyspace notifications (class `d`, module events).

use super::args::Args;
use redis_module::{raw, Context};
use std::ffi::{c_char, c_int};

/// Publishes a keyspace event named after the command (`bf.add`, `cf.del`, ...) for the
/// key at argument 1, of class `d` (module events).
pub fn notify_write(ctx: &Context, args: &Args) {
    notify_event(ctx, args.bytes(0), args, 1);
}

/// Publishes the keyspace event `event` (lower-cased; class `d`, module events) for the
/// key at argument `key` of `args`.
pub fn notify_event(ctx: &Context, event: &[u8], args: &Args, key: usize) {
    let mut name = [0u8; 32];
    if event.len() >= name.len() {
        return;
    }
    for (dst, src) in name.iter_mut().zip(event) {
        *dst = src.to_ascii_lowercase();
    }
    unsafe {
        raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_NOTIFY_MODULE as c_int,
            name.as_ptr().cast::<c_char>(),
            args.raw(key),
        );
    }
}
