//! The one place with `unsafe`: the module-API calls the `redis-module` crate has no safe
//! wrapper for, each behind a safe function or type. Everything outside this folder is
//! safe Rust (`#![deny(unsafe_code)]` at the crate root). It depends on nothing of the
//! crate but `errors` (the literal error strings), so every layer above can use it.
#![allow(unsafe_code)]

pub mod alerts;
pub mod allocator;
pub mod args;
pub mod blocking;
pub mod calls;
pub mod command_docs;
pub mod commands;
pub mod config;
pub mod defrag_callbacks;
pub mod events;
pub mod fork;
pub mod info;
pub mod keys;
pub mod memory;
pub mod panic;
pub mod replication;
pub mod replies;
pub mod source;
pub mod timer;
pub mod types;
