//! The CF.* command table: what Redis is told about each command (COMPAT §9). CF.COMPACT
//! is a write command here (2.4.20 flagged it read-only).

use super::{handlers, merge, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write, WriteFromSources};
use crate::command_entry;
use crate::command_table::{
    CAPACITY_COMPLEXITY, KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY,
    MERGE_COMPLEXITY, READ_ONLY, SCANDUMP_ARGS, SCANDUMP_SUMMARY, WRITE_MAY_ALLOCATE,
};

const ADD_COMPLEXITY: &str =
    "O(k + i), where k is the number of sub-filters and i is maxIterations";
const INSERT_COMPLEXITY: &str = "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations";
const EXISTS_SUMMARY: &str = "Checks whether one or more items exist in a Cuckoo Filter";
const SUB_FILTER_COMPLEXITY: &str = "O(k), where k is the number of sub-filters";
const INSERT_ARGS: &str = "key:key [CAPACITY capacity:integer] [NOCREATE] ITEMS item:string...";

/// Every CF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "cf.reserve",
            handler: command_entry!(handlers::reserve),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Creates a new Cuckoo Filter",
            complexity: "O(1)",
            args: "key:key capacity:integer [BUCKETSIZE bucketsize:integer] [MAXITERATIONS maxiterations:integer] [EXPANSION expansion:integer]",
            since: "1.0.0",
        },
        Command {
            name: "cf.add",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to a Cuckoo Filter",
            complexity: ADD_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cf.addnx",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to a Cuckoo Filter if the item did not exist previously.",
            complexity: ADD_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cf.insert",
            handler: command_entry!(handlers::insert),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist",
            complexity: INSERT_COMPLEXITY,
            args: INSERT_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "cf.insertnx",
            handler: command_entry!(handlers::insert),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist",
            complexity: INSERT_COMPLEXITY,
            args: INSERT_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "cf.exists",
            handler: command_entry!(handlers::exists),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: EXISTS_SUMMARY,
            complexity: SUB_FILTER_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cf.mexists",
            handler: command_entry!(handlers::mexists),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: EXISTS_SUMMARY,
            complexity: "O(k * n), where k is the number of sub-filters and n is the number of items",
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "cf.count",
            handler: command_entry!(handlers::count),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Return the number of times an item might be in a Cuckoo Filter",
            complexity: SUB_FILTER_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cf.del",
            handler: command_entry!(handlers::del),
            flags: "write fast",
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Deletes an item from a Cuckoo Filter",
            complexity: SUB_FILTER_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "cf.compact",
            handler: command_entry!(handlers::compact),
            flags: "write",
            arity: 2,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Moves items into older sub-filters where they fit and drops emptied ones",
            complexity: CAPACITY_COMPLEXITY,
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "cf.info",
            handler: command_entry!(handlers::info),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a Cuckoo Filter",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "cf.debug",
            handler: command_entry!(handlers::debug),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns internal debug information about a Cuckoo Filter",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "cf.scandump",
            handler: command_entry!(handlers::scandump),
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
            name: "cf.loadchunk",
            handler: command_entry!(handlers::loadchunk),
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
            name: "cf.merge",
            handler: command_entry!(merge::merge, key_positions),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: WriteFromSources,
            acl_category: ACL_CATEGORY,
            summary: "Merges Cuckoo filters of one shape into one, every item of every filter kept",
            complexity: MERGE_COMPLEXITY,
            args: "destkey:key numkeys:integer key:key... [OVERRIDE]",
            since: "1.0.0",
        },
        crate::command_table::health_command("cf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// CF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::cuckoo::CuckooFilter>(
        ctx,
        args,
        &[&crate::types::CUCKOO_TYPE],
    )
}
