//! CMS.*: the Count-Min Sketch against files and replies RedisBloom made itself
//! ([`fixtures`]), exact replies and errors ([`commands`]), hostile payloads and the
//! memory ceiling ([`hostile`]); RedisBloom 8.12's cell sizes ([`cell_size`]) and their
//! persistence, replication and hostile payloads ([`cell_size_persistence`]).

mod cell_size;
mod cell_size_persistence;
mod commands;
mod fixtures;
mod hostile;
