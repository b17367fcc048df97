//! redbloom-client: tools that run next to an application, not inside the server —
//! sharded filters over Redis/Valkey Cluster ([`shard`]), bulk loading with LOADCHUNK
//! ([`load`]), inspection ([`inspect`]), merges ([`merge`], [`snapshot_merge`]) and local
//! snapshots ([`snapshot`]). It speaks to redbloom or RedisBloom servers through the `redis`
//! crate and builds, reads and merges filters with redbloom-core.

/// The `redis` crate this one is built on (its `Value`, `Cmd`, errors), so an application
/// uses the same version.
pub use redis;

pub mod conn;
mod conn_url;
pub mod error;
pub mod family;
pub mod shard;
pub mod shard_drop;
pub mod shard_io;
pub mod shard_load;
pub mod slot {
    //! Redis Cluster's key-to-slot rule ([`redbloom_core::client_logic::slot`]).
    pub use redbloom_core::client_logic::slot::*;
}

pub use conn::Conn;
pub use error::{mask_url, redact, Error, Result};
pub use family::{Family, FilterSpec};
pub use shard::Descriptor;
pub use shard_load::ShardLoad;
pub mod inspect;
pub mod load;
pub mod merge;
pub mod ship;
pub mod snapshot;
pub mod snapshot_merge;
pub mod snapshot_stream;

pub use snapshot::Snapshot;
