//! Keeps the redis-module crate from logging a warning nobody can act on. Its entry point
//! (`redis_module!`'s `RedisModule_OnLoad`) looks up `RedisModule_RegisterDefragCallbacks`
//! — global start/end-of-cycle callbacks, which only Redis 8 has — and logs "Skip register
//! defrag callbacks …" at warning level when the server lacks it, although redbloom
//! registers no such callbacks: its values defragment through their types' `defrag`
//! methods ([`super::types`]), which Redis 7.0 and Valkey have.
//!
//! The module API's pointers are filled by `RedisModule_GetApi`, which leaves a pointer
//! unchanged when the server has no such function. So before the entry point runs (when
//! the library is loaded) the pointer is preset to [`no_global_callbacks`]: a server that
//! has the API overwrites it with its own, one that lacks it keeps the preset. The crate
//! calls the pointer only when start/end callbacks were declared, and redbloom declares
//! none, so the preset is never called.

use redis_module::raw;
use std::os::raw::c_int;

/// What the preset would answer if it were called: registering nothing succeeds.
extern "C" fn no_global_callbacks(
    _ctx: *mut raw::RedisModuleCtx,
    _start: raw::RedisModuleDefragFunc,
    _end: raw::RedisModuleDefragFunc,
) -> c_int {
    raw::REDISMODULE_OK as c_int
}

extern "C" fn preset() {
    // SAFETY: runs once, from the loader, before any code of the module reads the pointer.
    unsafe {
        let current = raw::RedisModule_RegisterDefragCallbacks;
        if current.is_none() {
            raw::RedisModule_RegisterDefragCallbacks = Some(no_global_callbacks);
        }
    }
}

/// Runs [`preset`] when the dynamic loader initialises the library.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static PRESET_ON_LOAD: extern "C" fn() = preset;
