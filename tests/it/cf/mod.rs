//! CF.*: commands and their replies, SCANDUMP/LOADCHUNK, persistence, replication.

mod commands;
mod dump;
mod persistence;
mod replication;
