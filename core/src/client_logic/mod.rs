//! The logic every redbloom client shares — the Rust CLI (over the `redis` crate), the Python
//! package (over redis-py) and any later binding — written once here, with no I/O: a client
//! sends the commands these functions describe and hands the replies back.
//!
//! - [`family`]: the filter families a client builds, loads and shards, their RESERVE
//!   arguments ([`family::FilterSpec`]);
//! - [`slot`]: Redis Cluster's key-to-slot rule;
//! - [`sharding`]: a sharded filter's layout (member keys spread over the slots), routing
//!   and descriptor hash;
//! - [`built`]: a filter built locally as the server's own adds build it ([`built::Built`]);
//! - [`snapshot`]: the snapshot file format (`redbloom export` / `check`) and the local
//!   filter a SCANDUMP rebuilds ([`snapshot::Local`]);
//! - [`ship`]: the names and server-side scripts of an all-or-nothing ship (temporary key in
//!   the target's slot, checked RENAME);
//! - [`words`]: the core's refusals in plain words.

pub mod built;
pub mod family;
pub mod merge;
pub mod sharding;
pub mod ship;
pub mod slot;
pub mod snapshot;
pub mod words;

use std::fmt;

/// A refusal of the shared logic, by kind (a client maps each to its own error type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogicError {
    /// Bad arguments: an option out of range, options that exclude each other.
    Usage(String),
    /// Not a valid snapshot file (damaged, truncated, of an unknown family or version).
    File(String),
    /// Anything else: a descriptor that does not parse, an item a filter refuses, a dump
    /// that does not load.
    Failed(String),
}

impl LogicError {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            LogicError::Usage(m) | LogicError::File(m) | LogicError::Failed(m) => m,
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> LogicError {
        LogicError::Usage(message.into())
    }

    pub(crate) fn failed(message: impl Into<String>) -> LogicError {
        LogicError::Failed(message.into())
    }
}

impl fmt::Display for LogicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for LogicError {}

/// The shared logic's result.
pub type Result<T> = std::result::Result<T, LogicError>;
