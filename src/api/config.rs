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
