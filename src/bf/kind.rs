//! The BF.* adapter: what the classic chain gives the shared Bloom handlers.

use super::{BloomKind, Summary};
use crate::types::{BLOCKED_TYPE, BLOOM_TYPE};
use redbloom_core::bloom::chain::{AddOutcome, Chain};
use redbloom_core::bloom::dump::{self as bloom_dump, DumpError};
use redbloom_core::bloom::link::LinkError;
use redbloom_core::fmt::format_g;
use redbloom_core::hash::HashPair;
use redbloom_core::memory::Ceiling;
use redbloom_core::merge::{MergeError, MergeOp};
use redis_module::native_types::RedisType;

static BLOOM_TYPES: [&RedisType; 2] = [&BLOOM_TYPE, &BLOCKED_TYPE];

impl BloomKind for Chain {
    const HAS_BLOCKED: bool = true;
    /// Classic filters (and BLOCKED ones written before `RBblockBF` existed) are
    /// `MBbloom--`, BLOCKED filters `RBblockBF`.
    fn data_types() -> &'static [&'static RedisType] {
        &BLOOM_TYPES
    }
    fn stored_type(&self) -> &'static RedisType {
        if self.is_blocked() {
            &BLOCKED_TYPE
        } else {
            &BLOOM_TYPE
        }
    }
    fn is_blocked(&self) -> bool {
        Chain::is_blocked(self)
    }
    fn create(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        blocked: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        Chain::with_layout(capacity, error, growth, scaling, blocked, max_bytes)
    }
    fn hash(&self, item: &[u8]) -> HashPair {
        Chain::hash(self, item)
    }
    fn contains(&self, pair: HashPair) -> bool {
        Chain::contains(self, pair)
    }
    fn add(&mut self, pair: HashPair, max_bytes: impl Ceiling) -> AddOutcome {
        Chain::add(self, pair, max_bytes)
    }
    fn contains_each(&self, pairs: &[HashPair], emit: impl FnMut(bool)) {
        Chain::contains_each(self, pairs, emit)
    }
    fn add_each(
        &mut self,
        pairs: &[HashPair],
        max_bytes: impl Ceiling,
        emit: impl FnMut(AddOutcome) -> bool,
    ) {
        Chain::add_each(self, pairs, max_bytes, emit)
    }
    fn summary(&self) -> Summary {
        Summary {
            capacity: self.capacity(),
            size: self.mem_usage(),
            filters: self.links().len(),
            items: self.items(),
            growth: self.is_scaling().then_some(self.growth()),
            blocked: self.is_blocked(),
        }
    }
    /// A blocked chain's lines end in ` blocked`; classic lines are RedisBloom's.
    fn debug_lines(&self) -> Vec<String> {
        let width = if self.force64() { 64 } else { 32 };
        let layout = if self.is_blocked() { " blocked" } else { "" };
        self.links()
            .iter()
            .map(|link| {
                format!(
                    "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}{layout}",
                    link.bytes(),
                    link.bits(),
                    link.hashes(),
                    width,
                    link.entries(),
                    link.items(),
                    format_g(link.error())
                )
            })
            .collect()
    }
    fn dump_header(&self) -> Vec<u8> {
        bloom_dump::header(self)
    }
    fn dump_chunk(&self, iter: i64) -> Option<(i64, &[u8])> {
        bloom_dump::chunk(self, iter)
    }
    fn from_dump_header(data: &[u8], max_bytes: u64) -> Result<Self, DumpError> {
        bloom_dump::chain_from_header(data, max_bytes)
    }
    fn load_dump_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), DumpError> {
        bloom_dump::load_chunk(self, iter, data)
    }
    fn same_shape(&self, other: &Self) -> bool {
        Chain::same_shape(self, other)
    }
    fn link_count(&self) -> usize {
        self.links().len()
    }
    fn merge(operands: &[&Self], op: MergeOp, max_bytes: u64) -> Result<Self, MergeError> {
        Chain::merge(operands, op, max_bytes)
    }
}
