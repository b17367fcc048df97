//! CMS.* — the Count-Min Sketch (docs/compat.md, "Count-Min Sketch"): [`handlers`] and the
//! command table [`commands`].

mod commands;
mod handlers;

use crate::command_table::Family;

/// The module's ACL category for CMS.* (RedisBloom 8's name).
pub const ACL_CATEGORY: &str = "cms";

/// The CMS.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "cms",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
