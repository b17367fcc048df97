//! WBF.*: commands and their replies (windows, SCANDUMP/LOADCHUNK, hostile input, COPY,
//! events, INFO, RESP3), persistence, replication.

mod bursts;
mod commands;
mod persistence;
mod replication;
