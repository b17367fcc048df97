//! CBF.*: commands and their replies, and the measurements docs/cbf.md reports.

mod commands;
mod measure;
