//! TDIGEST.*: the t-digest against files and replies RedisBloom made itself
//! ([`fixtures`], and [`loaded_edges`]: loaded digests with heavy end centroids), exact
//! replies and errors, replication and the server features ([`commands`]), hostile payloads
//! and the memory ceiling ([`hostile`]), the digests RedisBloom writes at the edges (NaN, zero
//! weights, weights past 2^53 and 2^63: [`edges`]).

mod commands;
mod edges;
mod edges_golden;
mod fixtures;
mod hostile;
mod loaded_edges;
#[rustfmt::skip]
mod loaded_edges_golden;
