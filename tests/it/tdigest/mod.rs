//! TDIGEST.*: the t-digest against files and replies RedisBloom made itself
//! ([`fixtures`]), exact replies and errors, replication and the server features
//! ([`commands`]), hostile payloads and the memory ceiling ([`hostile`]).

mod commands;
mod fixtures;
mod hostile;
