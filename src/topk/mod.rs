//! TOPK.* — Top-K (docs/compat.md, "TopK"): [`handlers`] and the command table
//! [`commands`].

mod commands;
mod handlers;

use crate::command_table::Family;

/// The module's ACL category for TOPK.* (RedisBloom 8's name).
pub const ACL_CATEGORY: &str = "topk";

/// The TOPK.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "topk",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
