//! What the integration tests share: a real server per test ([`server`]), RESP on the
//! wire ([`resp`]), expected replies ([`replies`]), background waits ([`background`]),
//! whole SCANDUMP/LOADCHUNK ([`scandump`]), the memory ceiling ([`ceiling`]), the DUMP payload codec ([`dump_payload`]) with
//! its CRC64 ([`crc64`]), RedisBloom's captured output ([`golden`]), one deterministic
//! generator ([`rng`]), and per-family helpers
//! ([`bf`], [`cf`], [`cbf`], [`wbf`]). The benchmarks include this folder too (`#[path]`),
//! so everything here refers to its siblings through `super::`.
// Not every test module (nor every benchmark including this folder) uses every helper.
#![allow(dead_code, unused_imports)]

pub mod background;
pub mod bf;
pub mod cbf;
pub mod ceiling;
pub mod cf;
pub mod crc64;
pub mod doc_match;
pub mod dump_payload;
pub mod golden;
pub mod replies;
pub mod resp;
pub mod rng;
pub mod scandump;
pub mod server;
pub mod transcript;
pub mod wbf;

pub use background::{
    can_defragment, info_field, is_redis8, is_valkey, parses_hex_floats, rewrite_aof,
    start_active_defrag, start_replica, start_replica_with, valkey_major, wait_for_aof_rewrite,
    wait_for_bgsave, wait_for_replicas, wait_until,
};
pub use crc64::{crc64_jones, with_crc};
pub use resp::{call, expect, pipeline_expect, RawConnection, Reply};
pub use rng::Rng;
pub use scandump::{loadchunks, scandump};
pub use server::{cli_binary, module_path, redisbloom, server_binary, Server, TempDir};
