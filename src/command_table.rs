//! What the families' command tables share: flag sets, argument syntaxes and texts of
//! COMMAND DOCS used by several commands. Each family's table is its `commands.rs`; the
//! unit test `command_table_tests` checks every entry of every table.

use crate::api::commands::Command;

/// A command family: its commands' name prefix (`bf` for `bf.add`), its ACL category and
/// its command table.
pub struct Family {
    pub prefix: &'static str,
    pub acl_category: &'static str,
    pub commands: fn() -> Vec<Command>,
}

impl Family {
    /// The family's folder in `src/`: its prefix, but for XF, whose folder is named after
    /// its structure (`expandable`, as in the core).
    pub fn folder(&self) -> &'static str {
        match self.prefix {
            "xf" => "expandable",
            prefix => prefix,
        }
    }
}

/// A write that may allocate (creates or grows a filter).
pub const WRITE_MAY_ALLOCATE: &str = "write deny-oom";
/// A read that runs in constant or near-constant time.
pub const READ_ONLY: &str = "readonly fast";

pub const KEY: &str = "key:key";
pub const KEY_ITEM: &str = "key:key item:string";
pub const KEY_ITEMS: &str = "key:key item:string...";
pub const SCANDUMP_ARGS: &str = "key:key iterator:integer";
pub const LOADCHUNK_ARGS: &str = "key:key iterator:integer data:string";

pub const LOADCHUNK_SUMMARY: &str = "Restores a filter previously saved using SCANDUMP";
/// RedisBloom's summary of BF.SCANDUMP, which it gives CF.SCANDUMP too.
pub const SCANDUMP_SUMMARY: &str = "Begins an incremental save of the bloom filter";
pub const CAPACITY_COMPLEXITY: &str = "O(n), where n is the capacity";
/// CMS.INCRBY, CMS.QUERY, TOPK.QUERY and TOPK.COUNT (RedisBloom's text).
pub const ITEMS_COMPLEXITY: &str = "O(n) where n is the number of items";

/// BF.MERGE and CBF.MERGE (CF.MERGE has no INTERSECT).
pub const MERGE_ARGS: &str = "destkey:key numkeys:integer key:key... [OVERRIDE] [INTERSECT]";
pub const MERGE_COMPLEXITY: &str =
    "O(n * m), where n is the number of filters and m the size of a filter's arrays";

/// The `FAMILY.HEALTH key` command every family has (src/health.rs): read-only, O(links).
pub fn health_command(
    name: &'static str,
    handler: crate::api::commands::CommandFn,
    acl_category: &'static str,
) -> Command {
    Command {
        name,
        handler,
        flags: READ_ONLY,
        arity: 2,
        key: crate::api::commands::KeyAccess::Read,
        acl_category,
        summary: "Returns the health of a filter: its estimated false-positive rate against the rate asked, fill, links, items against capacity and alerts",
        complexity: "O(n), where n is the number of sub-filters",
        args: KEY,
        since: "1.0.0",
    }
}
