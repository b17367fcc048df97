//! CF.* — the Cuckoo filter (COMPAT §2): [`handlers`] and the command table
//! [`commands`].

mod commands;
mod handlers;
mod merge;

use crate::command_table::Family;

/// The module's ACL category for CF.* (RedisBloom's name).
pub const ACL_CATEGORY: &str = "cuckoo";

/// The CF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "cf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
