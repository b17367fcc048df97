//! Filter health, per key and server-wide. Per key: the `*.HEALTH key` command every
//! family registers ([`command`]), replying the figures its core computes in O(links).
//! Server-wide: the INFO fields of the counts `api/alerts.rs` keeps (by the data-type
//! callbacks and, through `stats::tracked`, every write; a crossing of the asked rate or
//! the capacity sends `health.over_fp_rate` / `health.over_capacity` once).
//! Shared infra: it knows no family (each value's `ModuleValue::alerts` and `health`).

use crate::api::args::Args;
use crate::api::keys::{existing_in, Key};
use crate::api::replies::reply_health;
use crate::api::types::ModuleValue;
use redbloom_core::health::ALERTS;
use redis_module::native_types::RedisType;
use redis_module::{Context, RedisError, RedisResult};

/// The INFO fields (`bf_health_<name>` in INFO): filters raising each alert, and the
/// time of the last crossing (counted in `api/alerts.rs`).
pub fn info_fields() -> Vec<(String, i64)> {
    let (each, last) = crate::api::alerts::counts();
    let mut fields: Vec<(String, i64)> = ALERTS
        .iter()
        .zip(each)
        .map(|((_, name), count)| (format!("health_{name}"), count))
        .collect();
    fields.push(("health_last_crossing".to_string(), last));
    fields
}

/// `FAMILY.HEALTH key`: the key's health figures, for a value of any of `types`.
pub fn command<T: ModuleValue>(ctx: &Context, args: &Args, types: &[&RedisType]) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let value = existing_in::<T>(&key, types)?;
    reply_health(ctx, &value.health())
}
