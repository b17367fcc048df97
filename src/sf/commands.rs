//! The SF.* command table: what Redis is told about each command.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write};
use crate::command_entry;
use crate::command_table::{
    KEY, KEY_ITEM, KEY_ITEMS, LOADCHUNK_ARGS, LOADCHUNK_SUMMARY, READ_ONLY, SCANDUMP_ARGS,
    WRITE_MAY_ALLOCATE,
};

const SIZE_COMPLEXITY: &str = "O(n), where n is the size of the filter";

/// Every SF.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "sf.build",
            handler: command_entry!(handlers::build),
            flags: WRITE_MAY_ALLOCATE,
            arity: -5,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Builds a static filter of the given items (ITEMS item [item ...]), or of the members of a set or sorted set or the fields of a hash (FROM source)",
            complexity: "O(n), where n is the number of items",
            // The source is read, but not declared as a key (docs/static.md): a string.
            args: "key:key error_rate:double [ENCODING encoding:string] (ITEMS item:string... | FROM source:string)",
            since: "1.0.0",
        },
        Command {
            name: "sf.exists",
            handler: command_entry!(handlers::exists),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether an item may be in a static filter",
            complexity: "O(1)",
            args: KEY_ITEM,
            since: "1.0.0",
        },
        Command {
            name: "sf.mexists",
            handler: command_entry!(handlers::mexists),
            flags: READ_ONLY,
            arity: -3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Checks whether one or more items may be in a static filter",
            complexity: "O(n), where n is the number of items",
            args: KEY_ITEMS,
            since: "1.0.0",
        },
        Command {
            name: "sf.card",
            handler: command_entry!(handlers::card),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns the number of distinct items a static filter was built from",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "sf.info",
            handler: command_entry!(handlers::info),
            flags: READ_ONLY,
            arity: -2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns information about a static filter",
            complexity: "O(1)",
            args: "key:key [ITEMS|BITS|BITSPERITEM|ERROR|SIZE]",
            since: "1.0.0",
        },
        Command {
            name: "sf.debug",
            handler: command_entry!(handlers::debug),
            flags: READ_ONLY,
            arity: 2,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Returns internal debug information about a static filter",
            complexity: "O(1)",
            args: KEY,
            since: "1.0.0",
        },
        Command {
            name: "sf.scandump",
            handler: command_entry!(handlers::scandump),
            flags: READ_ONLY,
            arity: 3,
            key: Read,
            acl_category: ACL_CATEGORY,
            summary: "Begins an incremental save of the static filter",
            complexity: SIZE_COMPLEXITY,
            args: SCANDUMP_ARGS,
            since: "1.0.0",
        },
        Command {
            name: "sf.loadchunk",
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
        crate::command_table::health_command("sf.health", command_entry!(health), ACL_CATEGORY),
    ]
}

/// SF.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::static_filter::StaticFilter>(
        ctx,
        args,
        &[&super::value::STATIC_TYPE],
    )
}
