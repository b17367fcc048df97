//! Module timers (`RedisModule_CreateTimer`): work that runs later on the main thread,
//! between the server's other events; and the thread's CPU clock, to time such work.

use super::panic::catch_panic;
use redis_module::{raw, Context};
use std::ffi::c_void;

/// A timer's identity, to stop it.
pub type TimerId = raw::RedisModuleTimerID;

/// What a timer runs: the context of the callback (its database is the one selected where
/// the timer was started) and the data given.
pub type TimerCallback = fn(&Context, usize);

unsafe extern "C" fn fire(ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    // SAFETY: `start` boxed the callback and its data; a timer fires once.
    let (callback, data) = *unsafe { Box::from_raw(data.cast::<(TimerCallback, usize)>()) };
    let context = Context::new(ctx);
    catch_panic("a timer", || callback(&context, data));
}

/// Runs `callback(ctx, data)` on the main thread in `ms` milliseconds (0: at the next
/// turn of the event loop, after the clients ready meanwhile were served).
pub fn start(ctx: &Context, ms: i64, callback: TimerCallback, data: usize) -> TimerId {
    let boxed = Box::into_raw(Box::new((callback, data)));
    unsafe { raw::RedisModule_CreateTimer.unwrap()(ctx.ctx, ms, Some(fire), boxed.cast()) }
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`): beside a wall-clock
/// duration, what of it the thread ran rather than waited for a core.
pub fn thread_cpu() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
