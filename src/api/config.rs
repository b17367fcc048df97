//! Module configs: what the `redis-module` crate's registration leaves to do.

use redis_module::{raw, Context};

/// Applies the config file's values to the module configs registered so far.
pub fn load_configs(ctx: &Context) {
    if let Some(load) = unsafe { raw::RedisModule_LoadConfigs } {
        unsafe { load(ctx.ctx) };
    }
}

/// The server's version as `0x00MMmmpp` (Valkey answers its own, 8.1.x), or 0 when the
/// server cannot say.
pub fn server_version() -> i32 {
    match unsafe { raw::RedisModule_GetServerVersion } {
        Some(version) => unsafe { version() },
        None => 0,
    }
}

/// Whether module configs may be registered without the module's name as prefix (and with
/// an alias, `name|alias`): Redis 8.0 and later. Redis 7.x and Valkey 8 refuse the flag
/// ("Invalid flag(s) for configuration"); Valkey, whose version is 8 too, is told apart
/// by the `valkey_version` of its INFO.
pub fn supports_unprefixed_configs(ctx: &Context) -> bool {
    server_version() >= 0x0008_0000 && ctx.server_info("server").field("valkey_version").is_none()
}

/// `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION` (Valkey 9): the module's keys may
/// move by atomic slot migration (`CLUSTER MIGRATESLOTS`). The redis-module crate has no
/// constant for it; Valkey 9 refuses a migration while a loaded module lacks it.
const HANDLE_ATOMIC_SLOT_MIGRATION: i32 = 1 << 5;

/// The module options the server knows (`RedisModule_GetModuleOptionsAll`), 0 when it
/// cannot say (Redis before 7.2).
fn options_offered() -> i32 {
    match unsafe { raw::RedisModule_GetModuleOptionsAll } {
        Some(all) => unsafe { all() },
        None => 0,
    }
}

/// Whether the server is Valkey and offers atomic slot migration to modules (Valkey 9;
/// Redis 8.x keeps unknown option bits without reading them, so its answer alone is not
/// enough, and Valkey 8.1 does not offer the bit).
pub fn offers_atomic_slot_migration(ctx: &Context) -> bool {
    options_offered() & HANDLE_ATOMIC_SLOT_MIGRATION != 0
        && ctx.server_info("server").field("valkey_version").is_some()
}

/// Declares the module's options: `handle-io-errors` everywhere (an RDB load error is the
/// module's own to report), and `handle-atomic-slot-migration` where the server offers it
/// (each key is one value serialized whole by its DUMP payload, the module keeps no state
/// outside its keys but INFO counts, which follow the keys through their free and unlink
/// callbacks: nothing more to do when slots arrive or leave).
pub fn declare_module_options(ctx: &Context) {
    let mut options = raw::ModuleOptions::HANDLE_IO_ERRORS.bits();
    if offers_atomic_slot_migration(ctx) {
        options |= HANDLE_ATOMIC_SLOT_MIGRATION;
    }
    // Present on every server the module loads on (Redis 6+); never a panic at load.
    if let Some(set) = unsafe { raw::RedisModule_SetModuleOptions } {
        unsafe { set(ctx.ctx, options) };
    }
}
