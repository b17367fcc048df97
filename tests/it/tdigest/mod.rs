//! TDIGEST.*: the t-digest against files and replies RedisBloom made itself
//! ([`fixtures`], and [`loaded_edges`]: loaded digests with heavy end centroids), exact
//! replies and errors, replication and the server features ([`commands`]), hostile
//! payloads and the memory ceiling ([`hostile`]).

mod commands;
mod fixtures;
mod hostile;
mod loaded_edges;
#[rustfmt::skip]
mod loaded_edges_golden;
