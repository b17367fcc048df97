//! The `redbloom` CLI and the redbloom-client crate against real servers with the freshly
//! built module: a single server, and a 3-master cluster with one replica each.

#[path = "../../../tests/it/support/mod.rs"]
mod support;

mod cluster;
mod common;
mod conventions;
mod inspect;
mod interrupt;
mod load;
mod proxy;
mod shard_errors;
mod snapshot;
mod streaming;
