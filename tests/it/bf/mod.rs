//! BF.*: commands and their replies, SCANDUMP/LOADCHUNK, persistence, replication, and
//! the BLOCKED layout.

mod blocked;
mod commands;
mod dump;
mod going_back;
mod persistence;
mod replication;
