//! Module configs: what the `redis-module` crate's registration leaves to do.

use redis_module::{raw, Context};

/// Applies the config file's values to the module configs registered so far.
pub fn load_configs(ctx: &Context) {
    if let Some(load) = unsafe { raw::RedisModule_LoadConfigs } {
        unsafe { load(ctx.ctx) };
    }
}
