//! The `redbloom` CLI and the redbloom-client crate against real servers with the freshly
//! built module: a single server, and a 3-master cluster with one replica each.

#[path = "../../../tests/it/support/mod.rs"]
mod support;

mod cluster;
mod common;
mod conventions;
mod docs;
mod habits;
mod health;
mod input_habits;
mod inspect;
mod interrupt;
mod load;
mod load_limits;
mod load_static;
mod load_xf;
mod merge;
mod merge_shard;
mod migration;
mod proxy;
mod replicas;
mod shard_errors;
mod shard_routing;
mod snapshot;
mod streaming;
mod streaming_rss;
mod trust;
