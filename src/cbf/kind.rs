//! The CBF.* adapter: what the counting chain gives the shared Bloom handlers.

use crate::bf::{BloomKind, Summary};
use crate::types::COUNTING_TYPE;
use redbloom_core::bloom::chain::AddOutcome;
use redbloom_core::bloom::dump::DumpError;
use redbloom_core::bloom::link::LinkError;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::{CountingAdd, CountingChain};
use redbloom_core::fmt::format_g;
use redbloom_core::hash::HashPair;
use redbloom_core::memory::Ceiling;
use redbloom_core::merge::{MergeError, MergeOp};
use redis_module::native_types::RedisType;

static COUNTING_TYPES: [&RedisType; 1] = [&COUNTING_TYPE];

impl BloomKind for CountingChain {
    fn data_types() -> &'static [&'static RedisType] {
        &COUNTING_TYPES
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
    fn add(&mut self, pair: HashPair, max_bytes: impl Ceiling) -> AddOutcome {
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
    fn same_shape(&self, other: &Self) -> bool {
        CountingChain::same_shape(self, other)
    }
    fn link_count(&self) -> usize {
        self.links().len()
    }
    fn merge(operands: &[&Self], op: MergeOp, max_bytes: u64) -> Result<Self, MergeError> {
        CountingChain::merge(operands, op, max_bytes)
    }
}
