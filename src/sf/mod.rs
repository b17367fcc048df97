//! SF.* — the static filter (docs/static.md): a binary fuse filter built once from a set
//! known in advance ([`handlers`]), its data type ([`value`]) and the command table
//! ([`commands`]).

mod commands;
mod from;
mod handlers;
mod slices;
pub mod value;

use crate::command_table::Family;
use crate::stats::InfoSection;

pub use from::FROM_SYNC_MAX_MEMBERS;
pub use slices::key_changed;

/// INFO's `sf` section: SF.BUILD FROM's copies in slices (registered in `lib.rs`).
pub const INFO_SECTION: InfoSection = InfoSection {
    name: "sf",
    fields: slices::info,
};

/// The module's ACL category for SF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "sf";

/// The SF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "sf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
