//! The TOPK.* command table: RedisBloom's flags (`write deny-oom` for every write;
//! TOPK.COUNT `readonly`, as RedisBloom 8 registers it, where 2.4.20 and 2.6 said
//! `write`), its summaries and complexities (commands.json), the arities it checks.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write};
use crate::command_entry;
use crate::command_table::{ITEMS_COMPLEXITY, KEY, KEY_ITEMS, READ_ONLY, WRITE_MAY_ALLOCATE};

/// Every TOPK.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "topk.reserve",
            handler: command_entry!(handlers::reserve),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Initializes a TopK with specified parameters",
            complexity: "O(1)",
            args: "key:key topk:integer [width:integer] [depth:integer] [decay:double]",
            since: "2.0.0",
        },
        Command {
            name: "topk.add",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Increases the count of one or more items by increment",
            complexity: "O(n * k) where n is the number of items and k is the depth",
            args: KEY_ITEMS,
            since: "2.0.0",
        },
        Command {
            name: "topk.incrby",
            handler: command_entry!(handlers::incrby),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Increases the count of one or more items by increment",
            complexity: "O(n * k * incr) where n is the number of items, k is the depth and incr is the increment",
            args: "key:key item:string increment:integer [item_increment:string...]",
            since: "2.0.0",
        },
        Command {
            name: "topk.query",
            handler: command_entry!(handlers::query),
            flags: "readonly",
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items are in a sketch",
            complexity: ITEMS_COMPLEXITY,
            args: KEY_ITEMS,
            since: "2.0.0",
        },
        Command {
            name: "topk.count",
            handler: command_entry!(handlers::count),
            flags: "readonly",
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Return the count for one or more items are in a sketch",
            complexity: ITEMS_COMPLEXITY,
            args: KEY_ITEMS,
            since: "2.0.0",
        },
        Command {
            name: "topk.list",
            handler: command_entry!(handlers::list),
            flags: "readonly",
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Return full list of items in Top K list",
            complexity: "O(k) where k is the value of top-k",
            args: "key:key [WITHCOUNT]",
            since: "2.0.0",
        },
        Command {
            name: "topk.info",
            handler: command_entry!(handlers::info),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a sketch",
            complexity: "O(1)",
            args: KEY,
            since: "2.0.0",
        },
        crate::command_table::health_command("topk.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// TOPK.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::topk::TopK>(ctx, args, &[&crate::types::TOPK_TYPE])
}
