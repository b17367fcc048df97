//! The module's INFO section: the callback Redis calls for `INFO bf` / `INFO modules`.

use super::panic::catch_panic;
use redis_module::{raw, Context};
use std::ffi::c_int;

/// Replaces the INFO callback the `redis_module!` macro registered with ours.
pub fn register_info(ctx: &Context, callback: fn(&redis_module::InfoContext)) {
    static CALLBACK: std::sync::OnceLock<fn(&redis_module::InfoContext)> =
        std::sync::OnceLock::new();
    let _ = CALLBACK.set(callback);
    extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
        if let Some(callback) = CALLBACK.get() {
            let _ = catch_panic("info", || callback(&redis_module::InfoContext::new(ctx)));
        }
    }
    unsafe { raw::RedisModule_RegisterInfoFunc.unwrap()(ctx.ctx, Some(info)) };
}
