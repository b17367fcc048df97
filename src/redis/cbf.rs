//! CBF.* — the counting Bloom filter (docs/cbf.md). It is BF's chain with 4-bit counters,
//! so it shares BF's command handlers (`bf.rs`, generic over [`BloomKind`]) — same
//! arguments, validation order, replies and errors — and adds CBF.DEL and CBF.COUNT here.

use super::args::existing;
use super::bf::{filter_or_none, BloomKind, Summary};
use super::ffi::{notify_write, reply_bool, tracked, Args, Key};
use super::types::COUNTING_TYPE;
use super::write::Write;
use redbloom_core::bloom::chain::AddOutcome;
use redbloom_core::bloom::dump::DumpError;
use redbloom_core::bloom::link::LinkError;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::{CountingAdd, CountingChain};
use redbloom_core::fmt::format_g;
use redbloom_core::hash::HashPair;
use redis_module::native_types::RedisType;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

impl BloomKind for CountingChain {
    fn data_type() -> &'static RedisType {
        &COUNTING_TYPE
    }
    fn create(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        _blocked: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        CountingChain::new(capacity, error, growth, scaling, max_bytes)
    }
    fn hash(&self, item: &[u8]) -> HashPair {
        CountingChain::hash(self, item)
    }
    fn contains(&self, pair: HashPair) -> bool {
        CountingChain::contains(self, pair)
    }
    /// Every add counts (multiset semantics): an add never answers "already present".
    fn add(&mut self, pair: HashPair, max_bytes: u64) -> AddOutcome {
        match CountingChain::add(self, pair, max_bytes) {
            CountingAdd::Added => AddOutcome::Added,
            CountingAdd::Full => AddOutcome::Full,
            CountingAdd::GrowFailed(e) => AddOutcome::GrowFailed(e),
        }
    }
    fn summary(&self) -> Summary {
        Summary {
            capacity: self.capacity(),
            size: self.mem_usage(),
            filters: self.links().len(),
            items: self.items(),
            growth: self.is_scaling().then_some(self.growth()),
            blocked: false,
        }
    }
    /// As BF.DEBUG's, with `counters:` for `bits:` (bytes are the counter array's).
    fn debug_lines(&self) -> Vec<String> {
        self.links()
            .iter()
            .map(|link| {
                format!(
                    "bytes:{} counters:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
                    link.bytes(),
                    link.bits(),
                    link.hashes(),
                    link.entries(),
                    link.items(),
                    format_g(link.error())
                )
            })
            .collect()
    }
    fn dump_header(&self) -> Vec<u8> {
        counting_dump::header(self)
    }
    fn dump_chunk(&self, iter: i64) -> Option<(i64, &[u8])> {
        counting_dump::chunk(self, iter)
    }
    fn from_dump_header(data: &[u8], max_bytes: u64) -> Result<Self, DumpError> {
        counting_dump::chain_from_header(data, max_bytes)
    }
    fn load_dump_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), DumpError> {
        counting_dump::load_chunk(self, iter, data)
    }
}

/// CBF.COUNT key item — the estimated multiplicity; 0 for a missing key or a key of
/// another type (the EXISTS rule).
pub fn count(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let n = filter_or_none::<CountingChain>(&key).map_or(0, |c| c.count(c.hash(args.bytes(2))));
    Ok(RedisValue::Integer(n as i64))
}

/// CBF.DEL key item — true (RESP2: 1) if one copy was removed, false (0) if not (absent,
/// or positive in several links). Missing key → `ERR not found`, other type → WRONGTYPE.
/// Replicated only when a copy was removed; its event is published whenever the key is a
/// counting filter.
pub fn del(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let mut write = Write::new(ctx, args);
    let key = Key::open(ctx, args, 1, true);
    let chain = existing::<CountingChain>(&key, &COUNTING_TYPE)?;
    let deleted = tracked(chain, |c| c.delete(c.hash(args.bytes(2))));
    if deleted {
        write.as_received();
    }
    notify_write(ctx, args);
    reply_bool(ctx, deleted)
}
