//! WBF.* — the sliding-window Bloom filter (docs/wbf.md): [`handlers`] (with the module's
//! clock and WBF.AT, writes at the master's time) and the command table [`commands`].

mod commands;
mod handlers;

use crate::command_table::Family;

/// The module's ACL category for WBF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "wbf";

/// The WBF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "wbf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
