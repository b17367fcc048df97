//! SF.* — the static filter (docs/static.md): a binary fuse filter built once from a set
//! known in advance ([`handlers`]), its data type ([`value`]) and the command table
//! ([`commands`]).

mod commands;
mod from;
mod handlers;
mod slices;
pub mod value;

use crate::command_table::Family;

pub use from::FROM_SYNC_MAX_MEMBERS;
pub use slices::{info as slice_info, key_changed};

/// The module's ACL category for SF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "sf";

/// The SF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "sf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
