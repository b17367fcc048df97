//! Filter health, per key and server-wide. Per key: the `*.HEALTH key` command every
//! family registers ([`command`]), replying the figures its core computes in O(links).
//! Server-wide: how many filters raise each alert (`redbloom_core::health::ALERTS`), kept
//! like the INFO totals by the data-type callbacks (created, loaded, copied, freed) and by
//! every write ([`changed`], through `stats::tracked`): INFO reads counters, never keys.
//! A write that newly raises "over its FP rate" or "over its capacity" asks for a keyspace
//! event (`health.over_fp_rate`, `health.over_capacity`) once, at the crossing.
//! Shared infra: it knows no family (each value's `ModuleValue::alerts` and `health`).

use crate::api::args::Args;
use crate::api::events::raise;
use crate::api::keys::{existing_in, Key};
use crate::api::replies::reply_health;
use crate::api::types::ModuleValue;
use redbloom_core::health::{ALERTS, OVER_CAPACITY, OVER_FP};
use redis_module::native_types::RedisType;
use redis_module::{Context, RedisError, RedisResult};
use std::sync::atomic::{AtomicI64, Ordering};

const FLAGS: usize = ALERTS.len();

/// Filters raising each alert, in two parts as `TypeStats` keeps them: the main thread's
/// (create, load, copy, write: a single writer, plain loads and stores) and the frees'
/// (atomic adds: lazy free runs on a background thread).
struct AlertCounts {
    main_thread: [AtomicI64; FLAGS],
    freed: [AtomicI64; FLAGS],
}

static COUNTS: AlertCounts = AlertCounts {
    main_thread: [const { AtomicI64::new(0) }; FLAGS],
    freed: [const { AtomicI64::new(0) }; FLAGS],
};

/// Unix time (seconds) a filter last raised an alert it did not have; 0: never.
static LAST_CROSSING: AtomicI64 = AtomicI64::new(0);

fn add_on_main_thread(alerts: u8, delta: i64) {
    for (i, (flag, _)) in ALERTS.iter().enumerate() {
        if alerts & flag != 0 {
            let counter = &COUNTS.main_thread[i];
            counter.store(
                counter.load(Ordering::Relaxed).wrapping_add(delta),
                Ordering::Relaxed,
            );
        }
    }
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A filter with these alerts came into being (created, loaded, restored, copied).
pub fn created(alerts: u8) {
    if alerts != 0 {
        add_on_main_thread(alerts, 1);
        LAST_CROSSING.store(now_seconds(), Ordering::Relaxed);
    }
}

/// A filter with these alerts was freed (on any thread).
pub fn freed(alerts: u8) {
    for (i, (flag, _)) in ALERTS.iter().enumerate() {
        if alerts & flag != 0 {
            COUNTS.freed[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A write changed a filter's alerts from `before` to `after`; a newly raised "over its
/// FP rate" or "over its capacity" asks for its keyspace event.
pub fn changed(before: u8, after: u8) {
    if before == after {
        return;
    }
    add_on_main_thread(before & !after, -1);
    let raised = after & !before;
    add_on_main_thread(raised, 1);
    if raised != 0 {
        LAST_CROSSING.store(now_seconds(), Ordering::Relaxed);
        let events = u8::from(raised & OVER_FP != 0) | (u8::from(raised & OVER_CAPACITY != 0) << 1);
        if events != 0 {
            raise(events);
        }
    }
}

/// The INFO fields (`bf_health_<name>` in INFO): filters raising each alert, and the
/// time of the last crossing.
pub fn info_fields() -> Vec<(String, i64)> {
    let mut fields: Vec<(String, i64)> = ALERTS
        .iter()
        .enumerate()
        .map(|(i, (_, name))| {
            let main = COUNTS.main_thread[i].load(Ordering::Relaxed);
            (
                format!("health_{name}"),
                main.wrapping_sub(COUNTS.freed[i].load(Ordering::Relaxed)),
            )
        })
        .collect();
    fields.push((
        "health_last_crossing".to_string(),
        LAST_CROSSING.load(Ordering::Relaxed),
    ));
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
