//! Bulk loading: a filter built locally with redbloom-core, item by item as the server's
//! BF.MADD / CF.ADD would build it, then shipped with LOADCHUNK (the header, then the bit
//! or bucket arrays in chunks of at most 16 MiB; the client's ship). The empty filter it
//! starts from is the one the server itself reserved ([`Built::from_bloom_header`],
//! [`Built::from_cuckoo_info`]), so its configs decide what the options leave open: a
//! Bloom filter loaded so is byte for byte the filter BF.RESERVE + BF.MADD of the same
//! items in the same order make on that server. A static filter is reserved by nobody: it
//! is built here whole from all the items ([`Built::build_static`]), exactly as the
//! server's `SF.BUILD key rate ITEMS …` of them builds it (the construction is a function
//! of the distinct items and the rate).

use super::family::{Family, FilterSpec, SF_NOT_RESERVED};
use super::{words, LogicError as Error, Result};
use crate::bloom::{dump as bloom_dump, Chain};
use crate::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash, CuckooParams};
use crate::expandable::{self as xf, XFilter, XfParams};
use crate::limits::CF_DEFAULT_MAX_EXPANSIONS;
use crate::limits::{
    BF_DEFAULT_EXPANSION, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_EXPANSION, CF_DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_FILTER_BYTES,
};
use crate::static_filter::{self, dump as static_dump, BuildError, StaticFilter};
use std::num::NonZeroUsize;

/// The server's limits a build keeps to, as the server's own adds would: the largest
/// filter (`bf.max-filter-bytes`, redbloom's) and the most Cuckoo sub-filters
/// (`cf-max-expansions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: u64,
    pub cf_max_expansions: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: DEFAULT_MAX_FILTER_BYTES,
            cf_max_expansions: CF_DEFAULT_MAX_EXPANSIONS as u64,
        }
    }
}

/// A filter built locally.
#[derive(Debug)]
pub enum Built {
    Bloom(Chain),
    Cuckoo(CuckooFilter),
    Static(StaticFilter),
    /// Boxed: its fixed part (the entries' histogram) is half a KiB.
    Expandable(Box<XFilter>),
}

/// What `load` builds.
pub const LOAD_FAMILIES: &str = "load supports bf, cf, static and xf filters";

/// Refuses an error rate a static filter cannot have: SF.BUILD takes rates in
/// [2^-32, 0.5) (fingerprints of 1 to 32 bits).
pub fn static_rate(error_rate: f64) -> Result<()> {
    if static_filter::bits_for(error_rate).is_none() {
        return Err(Error::usage(
            "--error-rate must be below 0.5 and at least 2^-32 for static filters",
        ));
    }
    Ok(())
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
    /// An empty filter as `spec`'s RESERVE makes it on a server with the default configs,
    /// with `capacity` (the client's `ship::reserved` asks the server itself what it makes).
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
            .map_err(|e| {
                Error::failed(format!("cannot make the filter: {}", words::link_error(&e)))
            }),
            Family::Cf => {
                let params = CuckooParams {
                    capacity,
                    bucket_size: CF_DEFAULT_BUCKET_SIZE,
                    max_iterations: CF_DEFAULT_MAX_ITERATIONS,
                    expansion: match spec.expansion {
                        Some(x) => u16::try_from(x)
                            .map_err(|_| Error::failed("--expansion too large for a cf filter"))?,
                        None => CF_DEFAULT_EXPANSION,
                    },
                };
                CuckooFilter::new(params, DEFAULT_MAX_FILTER_BYTES)
                    .map(Built::Cuckoo)
                    .map_err(|e| Error::failed(format!("cannot make the filter: {e}")))
            }
            Family::Cbf => Err(Error::failed(LOAD_FAMILIES)),
            Family::Sf => Err(Error::usage(SF_NOT_RESERVED)),
            Family::Xf => {
                let params = XfParams {
                    error_rate: spec.error_rate,
                    initial_capacity: capacity,
                };
                XFilter::new(params, DEFAULT_MAX_FILTER_BYTES)
                    .map(|f| Built::Expandable(Box::new(f)))
                    .map_err(|e| {
                        Error::failed(format!("cannot make the filter: {}", words::xf_error(e)))
                    })
            }
        }
    }

    /// The static filter of `keys` (the items' [`static_filter::item_key`]s, duplicates
    /// allowed) at `error_rate`, within the server's `limits.max_bytes` (the ceiling
    /// SF.LOADCHUNK's header is checked against): `SF.BUILD`'s filter of the same items.
    pub fn build_static(keys: Vec<u64>, error_rate: f64, limits: &Limits) -> Result<Built> {
        static_rate(error_rate)?;
        let items = keys.len();
        static_filter::build(keys, error_rate, limits.max_bytes)
            .map(Built::Static)
            .map_err(|e| match e {
                BuildError::TooLarge => Error::failed(format!(
                    "the static filter of these items would exceed the server's \
                     bf.max-filter-bytes ({} bytes)",
                    limits.max_bytes
                )),
                BuildError::TooManyItems => Error::failed(format!(
                    "{items} items: a static filter holds at most {} distinct items",
                    static_filter::MAX_ITEMS
                )),
                other => Error::failed(format!(
                    "cannot build the static filter: {}",
                    words::build_error(&other)
                )),
            })
    }

    /// The empty Bloom filter whose SCANDUMP header (iterator 0 of an empty filter, as a
    /// RESERVE made it) is `header`.
    pub fn from_bloom_header(header: &[u8], limits: &Limits) -> Result<Built> {
        let chain = bloom_dump::chain_from_header(header, limits.max_bytes).map_err(|e| {
            Error::failed(format!(
                "cannot make the filter the server reserved: {}",
                words::dump_error(&e)
            ))
        })?;
        if chain.items() != 0 {
            return Err(Error::failed("the reserved filter is not empty"));
        }
        Ok(Built::Bloom(chain))
    }

    /// The empty expandable filter whose XF.SCANDUMP header (iterator 0 of an empty filter,
    /// as XF.RESERVE made it) is `header`: made here from its error rate and initial
    /// capacity, and refused unless its own header is the very same.
    pub fn from_xf_header(header: &[u8], limits: &Limits) -> Result<Built> {
        let field = |at: usize| -> Option<[u8; 8]> { header.get(at..at + 8)?.try_into().ok() };
        let (Some(rate), Some(capacity)) = (field(4), field(12)) else {
            return Err(Error::failed(
                "cannot make the filter the server reserved: not an XF header",
            ));
        };
        let params = XfParams {
            error_rate: f64::from_le_bytes(rate),
            initial_capacity: u64::from_le_bytes(capacity),
        };
        let filter = XFilter::new(params, limits.max_bytes).map_err(|e| {
            Error::failed(format!(
                "cannot make the filter the server reserved: {}",
                words::xf_error(e)
            ))
        })?;
        if xf::header(&filter) != header {
            return Err(Error::failed(
                "the reserved filter is not the empty filter its header describes",
            ));
        }
        Ok(Built::Expandable(Box::new(filter)))
    }

    /// The empty Cuckoo filter a CF.INFO reply (as field/value pairs) describes: its
    /// buckets, bucket size, expansion and max iterations.
    pub fn from_cuckoo_info(info: &[(String, String)], limits: &Limits) -> Result<Built> {
        let field = |name: &str| -> Result<u64> {
            info.iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse().ok())
                .ok_or_else(|| Error::failed(format!("CF.INFO reply without '{name}'")))
        };
        let small = |name: &str| -> Result<u16> {
            u16::try_from(field(name)?)
                .map_err(|_| Error::failed(format!("CF.INFO '{name}' out of range")))
        };
        if field("Number of items inserted")? != 0 || field("Number of filters")? != 1 {
            return Err(Error::failed("the reserved filter is not empty"));
        }
        let (buckets, bucket_size) = (field("Number of buckets")?, small("Bucket size")?);
        let params = CuckooParams {
            capacity: buckets.saturating_mul(u64::from(bucket_size)),
            bucket_size,
            max_iterations: small("Max iterations")?,
            expansion: small("Expansion rate")?,
        };
        let filter = CuckooFilter::new(params, limits.max_bytes).map_err(|e| {
            Error::failed(format!("cannot make the filter the server reserved: {e}"))
        })?;
        if filter.num_buckets() != buckets {
            return Err(Error::failed(format!(
                "the reserved filter has {buckets} buckets; built here: {}",
                filter.num_buckets()
            )));
        }
        Ok(Built::Cuckoo(filter))
    }

    /// Adds `items` in order (BF.MADD / CF.ADD semantics); an item the server would refuse
    /// (a full non-scaling filter, a Cuckoo filter that cannot grow) is an error.
    pub fn add_all<T: AsRef<[u8]> + Sync>(&mut self, items: &[T]) -> Result<()> {
        self.add_more(items, 0)
    }

    /// [`Built::add_all`] of a batch that follows `before` items of the same input (an error
    /// names the item by its place in the whole input), within the default [`Limits`].
    pub fn add_more<T: AsRef<[u8]> + Sync>(&mut self, items: &[T], before: u64) -> Result<()> {
        self.add_within(items, before, &Limits::default())
    }

    /// [`Built::add_more`] within the server's `limits`.
    pub fn add_within<T: AsRef<[u8]> + Sync>(
        &mut self,
        items: &[T],
        before: u64,
        limits: &Limits,
    ) -> Result<()> {
        let refused = |at: usize, why: String| {
            Error::failed(format!(
                "item {} of the input: the filter refuses it ({why})",
                before + at as u64 + 1
            ))
        };
        match self {
            Built::Bloom(chain) => chain
                .add_items(items, build_threads(), limits.max_bytes)
                .map_err(|(at, outcome)| refused(at, words::add_outcome(&outcome))),
            Built::Cuckoo(filter) => {
                for (at, item) in items.iter().enumerate() {
                    // CF.ADD refuses any add once the filter has this many sub-filters.
                    if filter.num_filters() as u64 >= limits.cf_max_expansions {
                        return Err(refused(at, "Maximum expansions reached".into()));
                    }
                    filter
                        .insert(&CuckooHash::new(item.as_ref()), limits.max_bytes)
                        .map_err(|e| refused(at, e.to_string()))?;
                }
                Ok(())
            }
            Built::Static(_) => Err(Error::failed(
                "a static filter takes no items once built (Built::build_static)",
            )),
            Built::Expandable(filter) => {
                for (at, item) in items.iter().enumerate() {
                    filter
                        .insert(XFilter::hash(item.as_ref()), limits.max_bytes)
                        .map_err(|e| refused(at, words::xf_error(e)))?;
                }
                Ok(())
            }
        }
    }

    pub fn family(&self) -> Family {
        match self {
            Built::Bloom(_) => Family::Bf,
            Built::Cuckoo(_) => Family::Cf,
            Built::Static(_) => Family::Sf,
            Built::Expandable(_) => Family::Xf,
        }
    }

    /// The SCANDUMP header (LOADCHUNK's iterator 1).
    pub fn header(&self) -> Vec<u8> {
        match self {
            Built::Bloom(chain) => bloom_dump::header(chain),
            Built::Cuckoo(filter) => cuckoo_dump::header(filter).to_vec(),
            Built::Static(filter) => static_dump::header(filter),
            Built::Expandable(filter) => xf::header(filter),
        }
    }

    /// The data chunks (LOADCHUNK's iterator, data) after the header, in order, borrowed
    /// from the filter one at a time.
    pub fn for_each_chunk(&self, mut f: impl FnMut(i64, &[u8]) -> Result<()>) -> Result<()> {
        let mut iter = 1;
        loop {
            let owned;
            let next = match self {
                Built::Bloom(chain) => bloom_dump::chunk(chain, iter),
                Built::Cuckoo(filter) => cuckoo_dump::chunk(filter, iter),
                Built::Static(filter) => static_dump::chunk(filter, iter),
                Built::Expandable(filter) => {
                    owned = xf::chunk(filter, iter);
                    owned.as_ref().map(|(next, data)| (*next, data.as_slice()))
                }
            };
            let Some((next, data)) = next else {
                return Ok(());
            };
            f(next, data)?;
            iter = next;
        }
    }

    /// Bytes of the header and the chunks.
    pub fn dump_bytes(&self) -> u64 {
        let mut bytes = self.header().len() as u64;
        let _ = self.for_each_chunk(|_, data| {
            bytes += data.len() as u64;
            Ok(())
        });
        bytes
    }

    /// The LOADCHUNK arguments (iterator, data) in order: the header, then every chunk.
    pub fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        let mut out = vec![(1, self.header())];
        let _ = self.for_each_chunk(|iter, data| {
            out.push((iter, data.to_vec()));
            Ok(())
        });
        out
    }
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
        // In words, not the core's debug names.
        assert_eq!(
            error,
            "item 1001 of the input: the filter refuses it (the non-scaling filter is full)"
        );
    }
}
