//! The WBF.* command table: what Redis is told about each command.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write};
use crate::command_entry;
use crate::command_table::{
    CAPACITY_COMPLEXITY, KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY, READ_ONLY,
    SCANDUMP_ARGS, WRITE_MAY_ALLOCATE,
};

const ITEM_COMPLEXITY: &str = "O(k), where k is the number of slices an item is added to";
const MULTI_COMPLEXITY: &str =
    "O(k * n), where k is the number of slices an item is added to and n the number of items";

/// Every WBF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "wbf.reserve",
            handler: command_entry!(handlers::reserve),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Creates a new sliding-window Bloom filter",
            complexity: "O(1)",
            args: "key:key error_rate:double capacity:integer [WINDOW milliseconds:integer]",
            since: "1.0.0",
        },
        Command {
            name: "wbf.add",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: 3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds an item to a sliding-window Bloom filter",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "wbf.madd",
            handler: command_entry!(handlers::madd),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds one or more items to a sliding-window Bloom filter",
            complexity: MULTI_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "wbf.exists",
            handler: command_entry!(handlers::exists),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether an item was added to a sliding-window Bloom filter within its window",
            complexity: ITEM_COMPLEXITY,
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "wbf.mexists",
            handler: command_entry!(handlers::mexists),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items were added to a sliding-window Bloom filter within its window",
            complexity: MULTI_COMPLEXITY,
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "wbf.info",
            handler: command_entry!(handlers::info),
            flags: READ_ONLY,
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a sliding-window Bloom filter",
            complexity: "O(k)",
            args: "key:key [CAPACITY|WINDOW|ERROR|SIZE|GENERATIONS|ITEMS]",
            since: "1.0.0",
        },
        Command {
            name: "wbf.card",
            handler: command_entry!(handlers::card),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the number of items added within the window of a sliding-window Bloom filter",
            complexity: "O(k)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "wbf.scandump",
            handler: command_entry!(handlers::scandump),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Begins an incremental save of the sliding-window Bloom filter",
            complexity: CAPACITY_COMPLEXITY,
            args: SCANDUMP_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "wbf.loadchunk",
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
            name: "wbf.at",
            handler: command_entry!(handlers::at),
            flags: WRITE_MAY_ALLOCATE,
            arity: -5,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "A write at the master's time, as replicas and the AOF receive WBF writes (refused from clients)",
            complexity: MULTI_COMPLEXITY,
            args: "key:key milliseconds:integer subcommand:string argument:string...",
            since: "1.0.0",
        },
        crate::command_table::health_command("wbf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// WBF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::window::WindowFilter>(
        ctx,
        args,
        &[&crate::types::WINDOW_TYPE],
    )
}
