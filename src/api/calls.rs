//! The server's calls on every key command's path (open, type, value, close), on the
//! one-double replies and on the INFO-style replies, called without testing their
//! `Option` each time (a test and a branch per call, ~5 % of a TDIGEST.MIN's own
//! instructions): [`check`] makes sure at load that each is there, and the module refuses
//! to load otherwise (every server redbloom supports has them all).

use redis_module::raw;

/// Whether the server gave every call this file hands out; the first missing one is
/// named. Run at load, before any command is registered.
pub fn check() -> Result<(), String> {
    let present = unsafe {
        [
            ("OpenKey", { raw::RedisModule_OpenKey }.is_some()),
            ("CloseKey", { raw::RedisModule_CloseKey }.is_some()),
            ("KeyType", { raw::RedisModule_KeyType }.is_some()),
            (
                "ModuleTypeGetType",
                { raw::RedisModule_ModuleTypeGetType }.is_some(),
            ),
            (
                "ModuleTypeGetValue",
                { raw::RedisModule_ModuleTypeGetValue }.is_some(),
            ),
            (
                "ReplyWithDouble",
                { raw::RedisModule_ReplyWithDouble }.is_some(),
            ),
            ("ReplyWithMap", { raw::RedisModule_ReplyWithMap }.is_some()),
            (
                "ReplyWithSimpleString",
                { raw::RedisModule_ReplyWithSimpleString }.is_some(),
            ),
            (
                "ReplyWithLongLong",
                { raw::RedisModule_ReplyWithLongLong }.is_some(),
            ),
        ]
    };
    match present.iter().find(|(_, present)| !present) {
        Some((name, _)) => Err(format!("the server has no RedisModule_{name}")),
        None => Ok(()),
    }
}

// Each call below is `unsafe` as the server's own is: its pointers must be what the server
// gave (the command's context, a key it opened and has not closed).

type Ctx = *mut raw::RedisModuleCtx;
type KeyHandle = *mut raw::RedisModuleKey;

/// `RedisModule_OpenKey`.
#[inline(always)]
pub(super) unsafe fn open_key(ctx: Ctx, name: *mut raw::RedisModuleString, mode: i32) -> KeyHandle {
    // SAFETY: present (`check`); the arguments are the caller's, as for the call itself.
    unsafe { raw::RedisModule_OpenKey.unwrap_unchecked()(ctx, name, mode).cast() }
}

/// `RedisModule_CloseKey`.
#[inline(always)]
pub(super) unsafe fn close_key(key: KeyHandle) {
    // SAFETY: present (`check`); `key` is an open key.
    unsafe { raw::RedisModule_CloseKey.unwrap_unchecked()(key) }
}

/// `RedisModule_KeyType`.
#[inline(always)]
pub(super) unsafe fn key_type(key: KeyHandle) -> i32 {
    // SAFETY: present (`check`); `key` is an open key.
    unsafe { raw::RedisModule_KeyType.unwrap_unchecked()(key) }
}

/// `RedisModule_ModuleTypeGetType`.
#[inline(always)]
pub(super) unsafe fn module_type_of(key: KeyHandle) -> *mut raw::RedisModuleType {
    // SAFETY: present (`check`); `key` is an open key.
    unsafe { raw::RedisModule_ModuleTypeGetType.unwrap_unchecked()(key) }
}

/// `RedisModule_ModuleTypeGetValue`.
#[inline(always)]
pub(super) unsafe fn module_value_of(key: KeyHandle) -> *mut std::ffi::c_void {
    // SAFETY: present (`check`); `key` is an open key.
    unsafe { raw::RedisModule_ModuleTypeGetValue.unwrap_unchecked()(key) }
}

/// `RedisModule_ReplyWithDouble`.
#[inline(always)]
pub(super) unsafe fn reply_with_double(ctx: Ctx, value: f64) {
    // SAFETY: present (`check`); `ctx` is the command's context.
    unsafe { raw::RedisModule_ReplyWithDouble.unwrap_unchecked()(ctx, value) };
}

/// `RedisModule_ReplyWithMap`.
#[inline(always)]
pub(super) unsafe fn reply_with_map(ctx: Ctx, len: std::os::raw::c_long) {
    // SAFETY: present (`check`); `ctx` is the command's context.
    unsafe { raw::RedisModule_ReplyWithMap.unwrap_unchecked()(ctx, len) };
}

/// The server's `RedisModule_ReplyWithSimpleString`, for a reply that makes many calls.
pub(super) type SimpleStringFn =
    unsafe extern "C" fn(Ctx, *const std::os::raw::c_char) -> std::os::raw::c_int;

/// The server's `RedisModule_ReplyWithLongLong`, for a reply that makes many calls.
pub(super) type LongLongFn =
    unsafe extern "C" fn(Ctx, std::os::raw::c_longlong) -> std::os::raw::c_int;

/// `RedisModule_ReplyWithSimpleString` itself.
#[inline(always)]
pub(super) fn simple_string_fn() -> SimpleStringFn {
    // SAFETY: present (`check`); reading the pointer the server set at load.
    unsafe { raw::RedisModule_ReplyWithSimpleString.unwrap_unchecked() }
}

/// `RedisModule_ReplyWithLongLong` itself.
#[inline(always)]
pub(super) fn long_long_fn() -> LongLongFn {
    // SAFETY: present (`check`); reading the pointer the server set at load.
    unsafe { raw::RedisModule_ReplyWithLongLong.unwrap_unchecked() }
}
