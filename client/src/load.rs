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

/// The threads a Bloom filter is built on: one per core, at most 8 (every thread computes
/// every item's positions, so each more thread saves less). Asked of the system once: the
/// question costs system calls.
pub fn build_threads() -> NonZeroUsize {
    static THREADS: std::sync::OnceLock<NonZeroUsize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(NonZeroUsize::MIN, |n| {
            n.min(NonZeroUsize::new(8).expect("8 > 0"))
        })
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
    pub fn add_all<T: AsRef<[u8]> + Sync>(&mut self, items: &[T]) -> Result<()> {
        self.add_more(items, 0)
    }

    /// [`Built::add_all`] of a batch that follows `before` items of the same input (an error
    /// names the item by its place in the whole input).
    pub fn add_more<T: AsRef<[u8]> + Sync>(&mut self, items: &[T], before: u64) -> Result<()> {
        let refused = |at: usize, why: String| {
            Error::new(format!(
                "item {} of the input: the filter refuses it ({why})",
                before + at as u64 + 1
            ))
        };
        match self {
            Built::Bloom(chain) => chain
                .add_items(items, build_threads(), DEFAULT_MAX_FILTER_BYTES)
                .map_err(|(at, outcome)| refused(at, format!("{outcome:?}"))),
            Built::Cuckoo(filter) => {
                for (at, item) in items.iter().enumerate() {
                    filter
                        .insert(&CuckooHash::new(item.as_ref()), DEFAULT_MAX_FILTER_BYTES)
                        .map_err(|e| refused(at, format!("{e:?}")))?;
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
        self.commands(key, self.chunks())
    }

    fn commands(&self, key: &str, chunks: Vec<(i64, Vec<u8>)>) -> Vec<redis::Cmd> {
        chunks
            .into_iter()
            .map(|(iter, data)| {
                let mut cmd = self.family().command("LOADCHUNK");
                cmd.arg(key).arg(iter).arg(data);
                cmd
            })
            .collect()
    }
}

/// Fails when `key` exists: a load never overwrites.
pub fn ensure_absent(conn: &mut Conn, key: &str) -> Result<()> {
    if i64::from_redis_value(conn.query::<redis::Value>(redis::cmd("EXISTS").arg(key))?)? != 0 {
        return Err(Error::new(format!("{key} already exists")));
    }
    Ok(())
}

/// Ships `built` to `key` with LOADCHUNK; returns the bytes and the chunks sent.
pub fn ship(conn: &mut Conn, key: &str, built: &Built) -> Result<(usize, usize)> {
    let chunks = built.chunks();
    let bytes = chunks.iter().map(|(_, data)| data.len()).sum();
    let cmds = built.commands(key, chunks);
    conn.pipeline(&cmds)
        .map_err(|e| Error::new(format!("{key}: {e}")))?;
    Ok((bytes, cmds.len()))
}

/// Builds `spec`'s filter of `items` and ships it to `key`, which must not exist.
pub fn load<T: AsRef<[u8]> + Sync>(
    conn: &mut Conn,
    key: &str,
    spec: &FilterSpec,
    items: &[T],
) -> Result<Built> {
    ensure_absent(conn, key)?;
    let mut built = Built::new(spec, spec.capacity)?;
    built.add_all(items)?;
    ship(conn, key, &built)?;
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(family: Family, capacity: u64, nonscaling: bool) -> FilterSpec {
        FilterSpec {
            family,
            error_rate: 0.01,
            capacity,
            expansion: None,
            nonscaling,
            blocked: false,
        }
    }

    /// An input added in batches (as the CLI streams it) builds the filter the whole input
    /// builds at once, byte for byte; a refusal names the item by its place in the input.
    #[test]
    fn batches_build_what_the_whole_input_builds() {
        let items: Vec<Vec<u8>> = (0..300_000)
            .map(|i| format!("item:{}", i % 250_000).into_bytes())
            .collect();
        for (family, capacity) in [
            (Family::Bf, 200_000),
            (Family::Bf, 2_000_000),
            (Family::Cf, 400_000),
        ] {
            let spec = spec(family, capacity, false);
            let mut whole = Built::new(&spec, capacity).unwrap();
            whole.add_all(&items).unwrap();
            for batch in [1_000, 7_777, 65_536, 299_999] {
                let mut batched = Built::new(&spec, capacity).unwrap();
                let mut before = 0;
                for part in items.chunks(batch) {
                    batched.add_more(part, before).unwrap();
                    before += part.len() as u64;
                }
                assert!(
                    batched.chunks() == whole.chunks(),
                    "{family:?} {capacity} by {batch}"
                );
            }
        }
        let spec = spec(Family::Bf, 1_000, true);
        let mut full = Built::new(&spec, 1_000).unwrap();
        full.add_more(&items[..600], 0).unwrap();
        let error = full.add_more(&items[600..], 600).unwrap_err().to_string();
        assert!(
            error.starts_with("item 1001 of the input: the filter refuses it"),
            "{error}"
        );
    }
}
