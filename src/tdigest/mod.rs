//! TDIGEST.* — the t-digest (docs/compat.md, "t-digest"): [`handlers`] and the command
//! table [`commands`].

mod commands;
mod handlers;

use crate::command_table::Family;

/// The module's ACL category for TDIGEST.* (RedisBloom 8's name).
pub const ACL_CATEGORY: &str = "tdigest";

/// The TDIGEST.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "tdigest",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
