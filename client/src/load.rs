//! Bulk loading: a filter built here with redbloom-core, item by item as the server's
//! BF.MADD / CF.ADD would build it, then shipped with LOADCHUNK (the header, then the bit
//! or bucket arrays in chunks of at most 16 MiB). A Bloom filter loaded so is byte for byte
//! the filter BF.RESERVE + BF.MADD of the same items in the same order make.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{Family, FilterSpec};
use redbloom_core::bloom::{dump as bloom_dump, Chain};
use redbloom_core::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash, CuckooParams};
use redbloom_core::limits::{
    BF_DEFAULT_EXPANSION, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_EXPANSION, CF_DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_FILTER_BYTES,
};
use redis::FromRedisValue;
use std::num::NonZeroUsize;

/// A filter built locally.
#[derive(Debug)]
pub enum Built {
    Bloom(Chain),
    Cuckoo(CuckooFilter),
}

/// The threads a Bloom filter is built on: one per core, at most 8 (beyond that the
/// memory, not the cores, bounds it).
pub fn build_threads() -> NonZeroUsize {
    std::thread::available_parallelism().map_or(NonZeroUsize::MIN, |n| {
        n.min(NonZeroUsize::new(8).expect("8 > 0"))
    })
}

impl Built {
    /// An empty filter as `spec`'s RESERVE would make it, with `capacity`.
    pub fn new(spec: &FilterSpec, capacity: u64) -> Result<Built> {
        spec.validate()?;
        match spec.family {
            Family::Bf => Chain::with_layout(
                capacity,
                spec.error_rate,
                spec.expansion.unwrap_or(BF_DEFAULT_EXPANSION),
                !spec.nonscaling,
                spec.blocked,
                DEFAULT_MAX_FILTER_BYTES,
            )
            .map(Built::Bloom)
            .map_err(|e| Error::new(format!("cannot make the filter: {e:?}"))),
            Family::Cf => {
                let params = CuckooParams {
                    capacity,
                    bucket_size: CF_DEFAULT_BUCKET_SIZE,
                    max_iterations: CF_DEFAULT_MAX_ITERATIONS,
                    expansion: match spec.expansion {
                        Some(x) => u16::try_from(x)
                            .map_err(|_| Error::new("--expansion too large for a cf filter"))?,
                        None => CF_DEFAULT_EXPANSION,
                    },
                };
                CuckooFilter::new(params, DEFAULT_MAX_FILTER_BYTES)
                    .map(Built::Cuckoo)
                    .map_err(|e| Error::new(format!("cannot make the filter: {e:?}")))
            }
            Family::Cbf => Err(Error::new("load supports bf and cf filters")),
        }
    }

    /// Adds `items` in order (BF.MADD / CF.ADD semantics); an item the server would refuse
    /// (a full non-scaling filter, a Cuckoo filter that cannot grow) is an error.
    pub fn add_all(&mut self, items: &[Vec<u8>]) -> Result<()> {
        match self {
            Built::Bloom(chain) => chain
                .add_items(items, build_threads(), DEFAULT_MAX_FILTER_BYTES)
                .map_err(|(at, outcome)| {
                    Error::new(format!(
                        "item {} of the input: the filter refuses it ({outcome:?})",
                        at + 1
                    ))
                }),
            Built::Cuckoo(filter) => {
                for (at, item) in items.iter().enumerate() {
                    filter
                        .insert(&CuckooHash::new(item), DEFAULT_MAX_FILTER_BYTES)
                        .map_err(|e| {
                            Error::new(format!(
                                "item {} of the input: the filter refuses it ({e:?})",
                                at + 1
                            ))
                        })?;
                }
                Ok(())
            }
        }
    }

    pub fn family(&self) -> Family {
        match self {
            Built::Bloom(_) => Family::Bf,
            Built::Cuckoo(_) => Family::Cf,
        }
    }

    /// The LOADCHUNK arguments (iterator, data) in order: the header, then every chunk.
    pub fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        let mut out = Vec::new();
        match self {
            Built::Bloom(chain) => {
                out.push((1, bloom_dump::header(chain)));
                let mut iter = 1;
                while let Some((next, data)) = bloom_dump::chunk(chain, iter) {
                    out.push((next, data.to_vec()));
                    iter = next;
                }
            }
            Built::Cuckoo(filter) => {
                out.push((1, cuckoo_dump::header(filter).to_vec()));
                let mut iter = 1;
                while let Some((next, data)) = cuckoo_dump::chunk(filter, iter) {
                    out.push((next, data.to_vec()));
                    iter = next;
                }
            }
        }
        out
    }

    /// The LOADCHUNK commands that make `key` this filter.
    pub fn loadchunks(&self, key: &str) -> Vec<redis::Cmd> {
        self.chunks()
            .into_iter()
            .map(|(iter, data)| {
                self.family()
                    .command("LOADCHUNK")
                    .arg(key)
                    .arg(iter)
                    .arg(data)
                    .clone()
            })
            .collect()
    }
}

/// Builds `spec`'s filter of `items` and ships it to `key`, which must not exist.
pub fn load(conn: &mut Conn, key: &str, spec: &FilterSpec, items: &[Vec<u8>]) -> Result<Built> {
    if i64::from_redis_value(conn.query::<redis::Value>(redis::cmd("EXISTS").arg(key))?)? != 0 {
        return Err(Error::new(format!("{key} already exists")));
    }
    let mut built = Built::new(spec, spec.capacity)?;
    built.add_all(items)?;
    conn.pipeline(&built.loadchunks(key))
        .map_err(|e| Error::new(format!("{key}: {e}")))?;
    Ok(built)
}
