//! The integration tests, one binary: each test starts a real redis-server (or
//! valkey-server, `REDBLOOM_SERVER`) with the freshly built module on a free loopback port
//! (`support::server`), talks to it with a real client and stops it. One module per
//! concern; per family (bf, cf, cbf, wbf, cms, topk, tdigest) its commands, dumps, persistence and
//! replication. Run one concern or family with a name filter, e.g. `cargo test --test it cf::`
//! (filters are substrings: `bf::` also matches `cbf::` and `wbf::`).

mod support;

mod bf;
mod cbf;
mod cf;
mod clients;
mod cluster;
mod cms;
mod crossload;
mod docs;
mod docs_figures;
mod docs_links;
mod docs_lists;
mod docs_snippets;
mod durability;
mod effects;
mod errors;
mod fixtures_redisbloom;
mod header_sweep;
mod health;
mod hostile_input;
mod large_filters;
mod merge;
mod migration;
mod operations;
mod replica_consistency;
mod resp3;
mod server;
mod sf;
mod tdigest;
mod topk;
mod upgrade;
mod wbf;
mod xf;
