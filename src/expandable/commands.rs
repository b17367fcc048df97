//! The XF.* command table: what Redis is told about each command.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write};
use crate::command_entry;
use crate::command_table::{
    KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY, READ_ONLY, SCANDUMP_ARGS,
    WRITE_MAY_ALLOCATE,
};

const SIZE_COMPLEXITY: &str = "O(n), where n is the size of the filter";
const ITEMS_COMPLEXITY: &str = "O(n), where n is the number of items";

/// Every XF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "xf.reserve",
            handler: command_entry!(handlers::reserve),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary:
                "Creates an expandable filter, which grows with its items at a constant error rate",
            complexity: "O(1)",
            args: "key:key error_rate:double [CAPACITY capacity:integer]",
            since: "1.0.0",
        },
        Command {
            name: "xf.add",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to an expandable filter, created if it does not exist",
            complexity: "O(1)",
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "xf.madd",
            handler: command_entry!(handlers::madd),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds one or more items to an expandable filter, created if it does not exist",
            complexity: ITEMS_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "xf.exists",
            handler: command_entry!(handlers::exists),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether an item may be in an expandable filter",
            complexity: "O(1)",
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "xf.mexists",
            handler: command_entry!(handlers::mexists),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items may be in an expandable filter",
            complexity: ITEMS_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "xf.del",
            handler: command_entry!(handlers::del),
            flags: "write fast",
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Deletes an item once from an expandable filter",
            complexity: "O(1)",
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "xf.count",
            handler: command_entry!(handlers::count),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the number of times an item might be in an expandable filter",
            complexity: "O(1)",
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "xf.card",
            handler: command_entry!(handlers::card),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the number of items added to an expandable filter and not deleted",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "xf.info",
            handler: command_entry!(handlers::info),
            flags: READ_ONLY,
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about an expandable filter",
            complexity: "O(1)",
            args: "key:key [ERROR|ITEMS|CAPACITY|EXPANSIONS|PARTITIONS|SIZE|BITSPERITEM|BOUND]",
            since: "1.0.0",
        },
        Command {
            name: "xf.debug",
            handler: command_entry!(handlers::debug),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns internal debug information about an expandable filter",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "xf.scandump",
            handler: command_entry!(handlers::scandump),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Begins an incremental save of the expandable filter",
            complexity: SIZE_COMPLEXITY,
            args: SCANDUMP_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "xf.loadchunk",
            handler: command_entry!(handlers::loadchunk),
            flags: WRITE_MAY_ALLOCATE,
            arity: 4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: LOADCHUNK_SUMMARY,
            complexity: SIZE_COMPLEXITY,
            args: LOADCHUNK_ARGS,
            since: "1.0.0",
        },
        crate::command_table::health_command("xf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// XF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<super::value::XfValue>(ctx, args, &[&super::value::EXPANDABLE_TYPE])
}
