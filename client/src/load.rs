//! Bulk loading: a filter built here ([`Built`], shared with every client in
//! [`redbloom_core::client_logic::built`]), then shipped with LOADCHUNK ([`crate::ship`]).

use crate::family::command;
pub use redbloom_core::client_logic::built::{
    build_threads, static_rate, Built, Limits, LOAD_FAMILIES,
};

/// The LOADCHUNK commands that make `key` the filter `built`.
pub fn loadchunks(built: &Built, key: &str) -> Vec<redis::Cmd> {
    built
        .chunks()
        .into_iter()
        .map(|(iter, data)| {
            let mut cmd = command(built.family(), "LOADCHUNK");
            cmd.arg(key).arg(iter).arg(data);
            cmd
        })
        .collect()
}
