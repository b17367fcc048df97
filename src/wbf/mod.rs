//! WBF.* — the sliding-window Bloom filter (docs/wbf.md): [`handlers`] (with the module's
//! clock and WBF.AT, writes at the master's time) and the command table [`commands`].

mod commands;
mod handlers;

pub use commands::commands;

/// The module's ACL category for WBF.* (redbloom's own).
pub const ACL_CATEGORY: &str = "wbf";
