//! CF.*: commands and their replies, persistence, replication.

mod commands;
mod persistence;
mod replication;
