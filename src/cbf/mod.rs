//! CBF.* — the counting Bloom filter (docs/cbf.md). It is BF's chain with 4-bit counters,
//! so it runs BF's handlers ([`crate::bf::handlers`], through the adapter [`kind`]) — same
//! arguments, validation order, replies and errors — and adds CBF.DEL and CBF.COUNT
//! ([`handlers`]). The command table is [`commands`].

mod commands;
mod handlers;
mod kind;

use crate::command_table::Family;

/// The module's ACL category for CBF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "cbf";

/// The CBF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "cbf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};
