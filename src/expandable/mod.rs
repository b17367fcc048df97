//! XF.* — the expandable filter (docs/xf.md): a fingerprint table that grows one small
//! partition at a time from any start, so the size need not be known in advance, with a
//! false-positive rate that stays under the rate asked at every size. Its commands
//! ([`handlers`]), its data type ([`value`]) and the command table ([`commands`]).

mod commands;
mod handlers;
pub mod value;

use crate::command_table::Family;

/// The module's ACL category for XF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "xf";

/// The XF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "xf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
