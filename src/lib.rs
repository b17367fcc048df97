//! redbloom: RedisBloom-compatible Bloom (BF.*) and Cuckoo (CF.*) filters, Count-Min
//! Sketches (CMS.*), Top-K (TOPK.*) and t-digests (TDIGEST.*) for Redis, plus a counting
//! (CBF.*) and a sliding-window (WBF.*) Bloom filter, a static filter (SF.*) and an
//! expandable filter (XF.*): the module over the pure
//! `redbloom-core` crate.
//!
//! Layers, each using only those below it: [`api`] (the module API, the only `unsafe`) ←
//! [`errors`], [`config`], [`stats`], [`types`], [`options`], [`write`], [`command_table`]
//! ← the families [`bf`], [`cf`], [`cbf`], [`wbf`], [`sf`], [`expandable`] (XF), [`cms`], [`topk`], [`tdigest`]
//! (handlers, parsing, command table; CBF runs BF's handlers, generic over
//! [`bf::BloomKind`]; [`merge`] is what BF.MERGE, CBF.MERGE and CF.MERGE share) ← this file,
//! which registers the families' tables and the ten data types.
#![deny(unsafe_code)]

pub mod api;
pub mod bf;
pub mod cbf;
pub mod cf;
pub mod cms;
pub mod command_table;
#[cfg(test)]
mod command_table_tests;
pub mod config;
pub mod errors;
pub mod expandable;
pub mod health;
#[cfg(test)]
mod layout_tests;
pub mod merge;
pub mod options;
pub mod scandump;
pub mod sf;
pub mod stats;
pub mod tdigest;
pub mod topk;
pub mod types;
pub mod wbf;
pub mod write;

pub use api::panic::CAUGHT_PANIC_LOG;

use api::commands::{add_acl_categories, register_command, Command};
use command_table::Family;
use expandable::value::EXPANDABLE_TYPE;
use redis_module::{Context, RedisString, Status};
use sf::value::STATIC_TYPE;
use types::{
    BLOCKED_TYPE, BLOOM_TYPE, CMS_TYPE, COUNTING_TYPE, CUCKOO_TYPE, TDIGEST_TYPE, TOPK_TYPE,
    WINDOW_TYPE,
};

/// MODULE LIST `ver`: the RedisBloom version whose replies redbloom gives, as clients and
/// tools gate features on it (as they read Valkey's `redis_version`). RESP3 clients get the
/// reply shapes of the 2.6 line (every 2.6.x has the same ones), RESP2 clients 2.4.20's,
/// which 2.6 kept: 2.6.0 is the lowest version true of both, so it claims no later
/// release's changes. redbloom's own version is in INFO (`bf_redbloom_version`) and the
/// load log (docs/differences.md).
pub const REDISBLOOM_COMPATIBLE_VERSION: i32 = 20600;

/// redbloom's own version (Cargo.toml).
pub const REDBLOOM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The command families, in registration order.
pub const FAMILIES: [Family; 9] = [
    bf::FAMILY,
    cf::FAMILY,
    cbf::FAMILY,
    wbf::FAMILY,
    cms::FAMILY,
    topk::FAMILY,
    tdigest::FAMILY,
    sf::FAMILY,
    expandable::FAMILY,
];

/// The module's ACL categories, one per family.
pub fn acl_categories() -> Vec<&'static str> {
    FAMILIES.iter().map(|family| family.acl_category).collect()
}

/// Every command of every family, in registration order.
pub fn commands() -> Vec<Command> {
    FAMILIES
        .iter()
        .flat_map(|family| (family.commands)())
        .collect()
}

/// The INFO sections the families add after the shared ones.
pub const INFO_SECTIONS: [stats::InfoSection; 1] = [sf::INFO_SECTION];

fn info(ctx: &redis_module::InfoContext) {
    stats::info(ctx, &INFO_SECTIONS);
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_slice().to_vec()).collect();
    if let Err(message) = config::apply_load_args(&args) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    if let Err(message) = api::calls::check() {
        ctx.log_warning(&message);
        return Status::Err;
    }
    config::register(ctx);
    if let Err(message) = add_acl_categories(ctx, &acl_categories()) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    api::config::declare_module_options(ctx);
    if let Err(message) = api::events::watch_forks(ctx) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    if let Err(message) = api::events::watch_key_changes(ctx, sf::key_changed) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    api::info::register_info(ctx, info);
    for command in commands() {
        if let Err(message) = register_command(ctx, &command) {
            ctx.log_warning(&message);
            return Status::Err;
        }
    }
    ctx.log_notice(&format!(
        "redbloom {REDBLOOM_VERSION} loaded (RedisBloom {}.{}.{} compatible: 2.4.20 replies for \
         RESP2 clients, 2.6 reply shapes for RESP3 clients)",
        REDISBLOOM_COMPATIBLE_VERSION / 10000,
        REDISBLOOM_COMPATIBLE_VERSION / 100 % 100,
        REDISBLOOM_COMPATIBLE_VERSION % 100
    ));
    Status::Ok
}

// The module's entry point, global allocator and data types. The macro's expansion (its
// `unsafe` and `#[no_mangle]`) is the redis-module crate's code, to which `unsafe_code` does
// not apply; what it runs here is `init` and `api::allocator`.
redis_module::redis_module! {
    name: "bf",
    version: REDISBLOOM_COMPATIBLE_VERSION,
    allocator: (api::allocator::ModuleAllocator, api::allocator::ModuleAllocator),
    data_types: [
        BLOOM_TYPE,
        CUCKOO_TYPE,
        COUNTING_TYPE,
        WINDOW_TYPE,
        BLOCKED_TYPE,
        CMS_TYPE,
        TOPK_TYPE,
        TDIGEST_TYPE,
        STATIC_TYPE,
        EXPANDABLE_TYPE,
    ],
    init: init,
}
