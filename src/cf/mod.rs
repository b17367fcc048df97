//! CF.* — the Cuckoo filter (COMPAT §2): [`handlers`] and the command table
//! [`commands`].

mod commands;
mod handlers;

pub use commands::commands;

/// The module's ACL category for CF.* (RedisBloom's name).
pub const ACL_CATEGORY: &str = "cuckoo";
