//! The CBF.* command table: what Redis is told about each command.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write, WriteFromSources};
use crate::bf::handlers as bf;
use crate::bf::merge as bf_merge;
use crate::command_entry;
use crate::command_table::{
    CAPACITY_COMPLEXITY, KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY, MERGE_ARGS,
    MERGE_COMPLEXITY, READ_ONLY, SCANDUMP_ARGS, WRITE_MAY_ALLOCATE,
};
use redbloom_core::counting::CountingChain;

const ITEM_COMPLEXITY: &str =
    "O(k * n), where k is the number of hash functions and n is the number of sub-filters";
const MULTI_COMPLEXITY: &str =
    "O(k * n * m), where k is the number of hash functions, n the number of sub-filters and m the number of items";
const MADD_SUMMARY: &str =
    "Adds one or more items to a counting Bloom filter. A filter will be created if it does not exist";

/// Every CBF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "cbf.reserve",
            handler: command_entry!(bf::reserve::<CountingChain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Creates a new counting Bloom filter",
            complexity: "O(1)",
            args: "key:key error_rate:double capacity:integer [EXPANSION expansion:integer] [NONSCALING]",
            since: "1.0.0",
        },
        Command {
            name: "cbf.add",
            handler: command_entry!(bf::add::<CountingChain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to a counting Bloom filter",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cbf.madd",
            handler: command_entry!(bf::madd::<CountingChain>),
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
            name: "cbf.insert",
            handler: command_entry!(bf::insert::<CountingChain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: MADD_SUMMARY,
            complexity: MULTI_COMPLEXITY,
            args: "key:key [CAPACITY capacity:integer] [ERROR error:double] [EXPANSION expansion:integer] [NOCREATE] [NONSCALING] ITEMS item:string...",
            since: "1.0.0",
        },
        Command {
            name: "cbf.exists",
            handler: command_entry!(bf::exists::<CountingChain>),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether an item exists in a counting Bloom filter",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cbf.mexists",
            handler: command_entry!(bf::mexists::<CountingChain>),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items exist in a counting Bloom filter",
            complexity: MULTI_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "cbf.count",
            handler: command_entry!(handlers::count),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the estimated number of times an item was added to a counting Bloom filter",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cbf.del",
            handler: command_entry!(handlers::del),
            flags: "write fast",
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Deletes one occurrence of an item from a counting Bloom filter",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cbf.info",
            handler: command_entry!(bf::info::<CountingChain>),
            flags: READ_ONLY,
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a counting Bloom filter",
            complexity: "O(1)",
            args: "key:key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]",
            since: "1.0.0",
        },
        Command {
            name: "cbf.card",
            handler: command_entry!(bf::card::<CountingChain>),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the number of items in a counting Bloom filter",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "cbf.debug",
            handler: command_entry!(bf::debug::<CountingChain>),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns internal debug information about a counting Bloom filter",
            complexity: "O(n), where n is the number of sub-filters",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "cbf.scandump",
            handler: command_entry!(bf::scandump::<CountingChain>),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Begins an incremental save of the counting Bloom filter",
            complexity: CAPACITY_COMPLEXITY,
            args: SCANDUMP_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "cbf.loadchunk",
            handler: command_entry!(bf::loadchunk::<CountingChain>),
            flags: WRITE_MAY_ALLOCATE,
            arity: 4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: LOADCHUNK_SUMMARY,
            complexity: CAPACITY_COMPLEXITY,
            args: LOADCHUNK_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "cbf.merge",
            handler: command_entry!(bf_merge::merge::<CountingChain>, key_positions),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: WriteFromSources,
            acl_category: ACL_CATEGORY,
            summary: "Merges counting Bloom filters of one shape into one: counters added or, with INTERSECT, the smaller kept",
            complexity: MERGE_COMPLEXITY,
            args: MERGE_ARGS,
            since: "1.0.0",
        },
        crate::command_table::health_command("cbf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// CBF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::counting::CountingChain>(
        ctx,
        args,
        <redbloom_core::counting::CountingChain as crate::bf::BloomKind>::data_types(),
    )
}
