//! redbloom-core: the filters and sketches of redbloom (a Redis module, drop-in for
//! RedisBloom) — scalable Bloom, Cuckoo, counting Bloom and sliding-window Bloom filters, the
//! Count-Min Sketch, Top-K and the t-digest — in pure Rust, with no knowledge of Redis and no
//! `unsafe`.
//!
//! # Byte compatibility
//!
//! The Bloom and Cuckoo filters are byte-exact with RedisBloom 2.4.20: hashing
//! (MurmurHash2/64A), sizing, bit positions, Cuckoo slot placement, the
//! `BF.SCANDUMP`/`CF.SCANDUMP` chunks and the RDB field layouts. A dump taken from a
//! RedisBloom or redbloom server therefore loads here into the same filter, which answers
//! every membership query as the server would, and dumps back to the same bytes. Unit
//! tests pin this against RedisBloom's own vectors and files
//! (`tests/fixtures/redisbloom-2.4.20` of this crate). The Count-Min Sketch, Top-K and
//! t-digest hold RedisBloom's RDB bytes and answer as RedisBloom does (the t-digest bit for
//! bit). The counting and window filters are redbloom's own; their layouts are documented in
//! [`counting::dump`] and [`window::dump`].
//!
//! # Layout
//!
//! One module per family — the filters [`bloom`], [`cuckoo`], [`counting`], [`window`],
//! [`static_filter`], [`expandable`], the sketches [`cms`], [`topk`], [`tdigest`] — each with its type and its RDB layout
//! (`rdb`, over the shared field stream of [`rdb`]), the filters also with their SCANDUMP
//! codec (`dump`). [`hash`] holds the hash functions, [`limits`] every default and limit,
//! [`memory`] the fallible buffers every array is allocated with, and [`fmt`] the number
//! formatting the replies need. [`client_logic`] is what every client of the server (the
//! `redbloom` CLI, the Python package) shares, without I/O.
//!
//! # Loading a SCANDUMP into a local filter
//!
//! A Rust service can copy a Bloom filter out of Redis with `BF.SCANDUMP key 0`,
//! `BF.SCANDUMP key <iter>`, … (the first reply's data is the header, each later one a
//! chunk of bits, until the iterator is 0) and then answer membership locally:
//!
//! ```
//! use redbloom_core::bloom::{dump, Chain};
//! use redbloom_core::limits::DEFAULT_MAX_FILTER_BYTES;
//!
//! // What the server returns for BF.SCANDUMP: (next iterator, data) pairs, header first.
//! // (Here a filter made by this crate stands in for the server's.)
//! let mut server_side = Chain::new(1000, 0.01, 2, true, u64::MAX).unwrap();
//! for word in ["apple", "banana", "cherry"] {
//!     server_side.add(server_side.hash(word.as_bytes()), u64::MAX);
//! }
//! let mut replies: Vec<(i64, Vec<u8>)> = vec![(1, dump::header(&server_side))];
//! let mut iter = 1;
//! while let Some((next, data)) = dump::chunk(&server_side, iter) {
//!     replies.push((next, data.to_vec()));
//!     iter = next;
//! }
//! replies.push((0, Vec::new())); // the end of the scan
//!
//! // The service: the header makes an empty filter, each chunk (BF.LOADCHUNK's arguments)
//! // fills in its bits. A hostile or corrupt dump is an error, never a panic.
//! let (_, header) = &replies[0];
//! let mut local = dump::chain_from_header(header, DEFAULT_MAX_FILTER_BYTES).unwrap();
//! for (iter, data) in &replies[1..] {
//!     if *iter == 0 {
//!         break;
//!     }
//!     dump::load_chunk(&mut local, *iter, data).unwrap();
//! }
//!
//! assert_eq!(local, server_side);
//! assert!(local.contains(local.hash(b"banana")));
//! assert!(!local.contains(local.hash(b"durian")));
//! ```

#![forbid(unsafe_code)]

pub mod bloom;
pub mod client_logic;
pub mod cms;
pub mod counting;
pub mod cuckoo;
#[cfg(test)]
mod dump_sweep_tests;
pub mod expandable;
pub mod fmt;
pub mod hash;
pub mod health;
mod le_reader;
pub mod limits;
pub mod memory;
pub mod merge;
pub mod rdb;
pub mod static_filter;
pub mod tdigest;
#[cfg(test)]
mod testing;
pub mod topk;
pub mod window;

pub use limits::DEFAULT_MAX_FILTER_BYTES;
pub use memory::{copy_changed_pages, sparse_copy, zeroed_bytes, OutOfMemory};
