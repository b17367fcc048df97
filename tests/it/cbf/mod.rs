//! CBF.*: commands and their replies (SCANDUMP/LOADCHUNK included), persistence,
//! replication, and the measurements docs/cbf.md reports.

mod commands;
mod measure;
mod persistence;
mod replication;
