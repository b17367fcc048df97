//! The BF.* command table: what Redis is told about each command (COMPAT §9).

use super::handlers;
use super::merge;
use super::ACL_CATEGORY;
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write, WriteFromSources};
use crate::command_entry;
use crate::command_table::{
    CAPACITY_COMPLEXITY, KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY, MERGE_ARGS,
    MERGE_COMPLEXITY, READ_ONLY, SCANDUMP_ARGS, SCANDUMP_SUMMARY, WRITE_MAY_ALLOCATE,
};
use redbloom_core::bloom::chain::Chain;

const ADD_COMPLEXITY: &str =
    "O(k), where k is the number of hash functions used by the last sub-filter";
const MULTI_COMPLEXITY: &str =
    "O(k * n), where k is the number of hash functions and n is the number of items";
const MADD_SUMMARY: &str =
    "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist";

/// Every BF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "bf.reserve",
            handler: command_entry!(handlers::reserve::<Chain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Creates a new Bloom Filter",
            complexity: "O(1)",
            args: "key:key error_rate:double capacity:integer [EXPANSION expansion:integer] [NONSCALING] [BLOCKED]",
            since: "1.0.0",
        },
        Command {
            name: "bf.add",
            handler: command_entry!(handlers::add::<Chain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to a Bloom Filter",
            complexity: ADD_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "bf.madd",
            handler: command_entry!(handlers::madd::<Chain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: MADD_SUMMARY,
            complexity: MULTI_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "bf.insert",
            handler: command_entry!(handlers::insert::<Chain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: MADD_SUMMARY,
            complexity: MULTI_COMPLEXITY,
            args: "key:key [CAPACITY capacity:integer] [ERROR error:double] [EXPANSION expansion:integer] [NOCREATE] [NONSCALING] [BLOCKED] ITEMS item:string...",
            since: "1.0.0",
        },
        Command {
            name: "bf.exists",
            handler: command_entry!(handlers::exists::<Chain>),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether an item exists in a Bloom Filter",
            complexity: ADD_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "bf.mexists",
            handler: command_entry!(handlers::mexists::<Chain>),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items exist in a Bloom Filter",
            complexity: MULTI_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "bf.info",
            handler: command_entry!(handlers::info::<Chain>),
            flags: READ_ONLY,
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a Bloom Filter",
            complexity: "O(1)",
            args: "key:key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|BLOCKED]",
            since: "1.0.0",
        },
        Command {
            name: "bf.card",
            handler: command_entry!(handlers::card::<Chain>),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the cardinality of a Bloom filter",
            complexity: "O(1)",
            args: KEY,
            since: "2.4.4",
        },
        Command {
            name: "bf.debug",
            handler: command_entry!(handlers::debug::<Chain>),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns internal debug information about a Bloom Filter",
            complexity: "O(n), where n is the number of sub-filters",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "bf.scandump",
            handler: command_entry!(handlers::scandump::<Chain>),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: SCANDUMP_SUMMARY,
            complexity: CAPACITY_COMPLEXITY,
            args: SCANDUMP_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "bf.loadchunk",
            handler: command_entry!(handlers::loadchunk::<Chain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: 4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: LOADCHUNK_SUMMARY,
            complexity: CAPACITY_COMPLEXITY,
            args: LOADCHUNK_ARGS,
            since: "1.0.0",
        },
        // redbloom's own: in the replication stream and the AOF only (`types::BLOCKED_WRITE`).
        Command {
            name: "bf.blockedwrite",
            handler: command_entry!(handlers::blocked_write),
            flags: "write fast",
            arity: 2,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Does nothing: precedes each write to a BLOCKED filter that replicas and the AOF receive, so that RedisBloom refuses it",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "bf.merge",
            handler: command_entry!(merge::merge::<Chain>, key_positions),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: WriteFromSources,
            acl_category: ACL_CATEGORY,
            summary: "Merges Bloom filters of one shape into one: their union or, with INTERSECT, their intersection",
            complexity: MERGE_COMPLEXITY,
            args: MERGE_ARGS,
            since: "1.0.0",
        },
        crate::command_table::health_command("bf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// BF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<Chain>(ctx, args, <Chain as crate::bf::BloomKind>::data_types())
}
