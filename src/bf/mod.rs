//! BF.* — the scalable Bloom filter (COMPAT §1), RedisBloom's commands and data type. Its
//! handlers are the shared ones of [`crate::bloom`], run on `Chain` (the adapter is
//! [`kind`]); the command table is [`commands`].

mod commands;
mod kind;

use crate::command_table::Family;

/// The module's ACL category for BF.* (RedisBloom's name).
pub const ACL_CATEGORY: &str = "bloom";

/// The BF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "bf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
