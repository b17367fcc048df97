//! The CMS.* command table: RedisBloom's flags (`write deny-oom` for every write), its
//! summaries (commands.json), the arities it checks (RedisBloom 8.12's optional `CELL_SIZE`
//! makes the INIT commands' variable); CMS.MERGE declares its source keys.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write, WriteFromSources};
use crate::command_entry;
use crate::command_table::{ITEMS_COMPLEXITY, KEY, WRITE_MAY_ALLOCATE};

/// Every CMS.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "cms.initbydim",
            handler: command_entry!(handlers::init),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Initializes a Count-Min Sketch to dimensions specified by user",
            complexity: "O(1)",
            args: "key:key width:integer depth:integer [CELL_SIZE cell_size:integer]",
            since: "2.0.0",
        },
        Command {
            name: "cms.initbyprob",
            handler: command_entry!(handlers::init),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Initializes a Count-Min Sketch to accommodate requested tolerances.",
            complexity: "O(1)",
            args: "key:key error:double probability:double [CELL_SIZE cell_size:integer]",
            since: "2.0.0",
        },
        Command {
            name: "cms.incrby",
            handler: command_entry!(handlers::incrby),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Increases the count of one or more items by increment",
            complexity: ITEMS_COMPLEXITY,
            args: "key:key item:string increment:integer [item_increment:string...]",
            since: "2.0.0",
        },
        Command {
            name: "cms.query",
            handler: command_entry!(handlers::query),
            flags: "readonly",
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the count for one or more items in a sketch",
            complexity: ITEMS_COMPLEXITY,
            args: "key:key item:string...",
            since: "2.0.0",
        },
        Command {
            name: "cms.merge",
            handler: command_entry!(handlers::merge, key_positions),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: WriteFromSources,
            acl_category: ACL_CATEGORY,
            summary: "Merges several sketches into one sketch",
            complexity: "O(n) where n is the number of sketches",
            args: "destination:key numKeys:integer source:key... [WEIGHTS weight:integer...]",
            since: "2.0.0",
        },
        Command {
            name: "cms.info",
            handler: command_entry!(handlers::info),
            flags: "readonly fast",
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a sketch",
            complexity: "O(1)",
            args: KEY,
            since: "2.0.0",
        },
        crate::command_table::health_command("cms.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// CMS.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::cms::CountMinSketch>(
        ctx,
        args,
        &[&crate::types::CMS_TYPE],
    )
}
