//! The Redis layer: argument parsing, replies and data-type callbacks over the core.

pub mod args;
pub mod bf;
pub mod cbf;
pub mod cf;
pub mod command_docs;
pub mod config;
pub mod errors;
pub mod ffi;
pub mod stats;
pub mod types;
pub mod wbf;
pub mod write;
