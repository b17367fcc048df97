//! The memory the server has left under `maxmemory`.

use redis_module::{raw, Context};

/// Bytes the server may still allocate before reaching `maxmemory`, counted as eviction
/// counts them (used memory without replication and AOF buffers); `u64::MAX` without a
/// `maxmemory`. `RedisModule_GetUsedMemoryRatio` is 0 without one, so the INFO lookup of
/// `maxmemory` happens only when one is set.
pub fn memory_left(ctx: &Context) -> u64 {
    let Some(ratio) = (unsafe { raw::RedisModule_GetUsedMemoryRatio }) else {
        return u64::MAX;
    };
    let ratio = unsafe { ratio() } as f64;
    if ratio <= 0.0 || ratio.is_nan() {
        return u64::MAX;
    }
    let Some(maxmemory) = maxmemory(ctx) else {
        return u64::MAX;
    };
    let used = (ratio * maxmemory as f64).min(u64::MAX as f64) as u64;
    maxmemory.saturating_sub(used)
}

/// The `maxmemory` setting, from INFO memory; `None` when unset (0) or unknown.
fn maxmemory(ctx: &Context) -> Option<u64> {
    let (get, field, free) = unsafe {
        (
            raw::RedisModule_GetServerInfo?,
            raw::RedisModule_ServerInfoGetFieldUnsigned?,
            raw::RedisModule_FreeServerInfo?,
        )
    };
    let info = unsafe { get(ctx.ctx, c"memory".as_ptr()) };
    if info.is_null() {
        return None;
    }
    let mut err: std::ffi::c_int = 0;
    let value = unsafe { field(info, c"maxmemory".as_ptr(), &mut err) };
    unsafe { free(ctx.ctx, info) };
    (err == 0 && value > 0).then_some(value)
}
