//! BF.* — the scalable Bloom filter (COMPAT §1), RedisBloom's commands and data type.
//! Its handlers ([`handlers`]) are generic over [`BloomKind`], what a filter type gives
//! them: BF.* runs them on `Chain` (the adapter is [`kind`]), CBF.* on the counting chain
//! (`cbf/kind.rs`), with the same arguments, validation order, replies and errors. The
//! command table is [`commands`].

mod commands;
pub mod handlers;
mod kind;
pub mod merge;

use crate::api::keys::{ours_in, Key, KeyState};
use crate::api::types::ModuleValue;
use crate::command_table::Family;
use crate::config;
use crate::errors;
use crate::write::{Creation, Write};
use redbloom_core::bloom::chain::AddOutcome;
use redbloom_core::bloom::dump::DumpError;
use redbloom_core::bloom::link::LinkError;
use redbloom_core::fmt::shortest;
use redbloom_core::hash::HashPair;
use redbloom_core::memory::Ceiling;
use redbloom_core::merge::{MergeError, MergeOp};
use redis_module::native_types::RedisType;
use redis_module::RedisError;

/// The module's ACL category for BF.* (RedisBloom's name).
pub const ACL_CATEGORY: &str = "bloom";

/// The BF.* commands, their prefix and ACL category.
pub const FAMILY: Family = Family {
    prefix: "bf",
    acl_category: ACL_CATEGORY,
    commands: commands::commands,
};

/// The keyword of BF.RESERVE and BF.INSERT for the cache-local layout (redbloom's own).
pub const BLOCKED: &str = "BLOCKED";

/// Largest EXPANSION accepted (HEAD's range; 2.4.20 accepted anything and lost items).
const MAX_EXPANSION: i64 = redbloom_core::limits::MAX_EXPANSION as i64;

/// What BF.INFO shows of a filter.
pub struct Summary {
    pub capacity: u64,
    pub size: u64,
    pub filters: usize,
    pub items: u64,
    /// `None` for a non-scaling filter (shown as nil).
    pub growth: Option<u32>,
    /// The cache-local layout (BF.INFO adds a `Blocked` field only then).
    pub blocked: bool,
}

/// A scalable Bloom-style filter the BF.* handlers can serve.
pub trait BloomKind: ModuleValue + 'static {
    /// Whether the type has the cache-local layout (the BLOCKED keyword, `bf-blocked`).
    const HAS_BLOCKED: bool = false;
    /// The Redis data types whose values are this kind (the commands serve each of them).
    fn data_types() -> &'static [&'static RedisType];
    /// The type a new value is stored under.
    fn stored_type(&self) -> &'static RedisType {
        Self::data_types()[0]
    }
    /// Whether the filter has the cache-local layout, whose writes replicate after
    /// `BF.BLOCKEDWRITE` (`types::BLOCKED_WRITE`) so that RedisBloom refuses them.
    fn is_blocked(&self) -> bool {
        false
    }
    fn create(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        blocked: bool,
        max_bytes: u64,
    ) -> Result<Self, LinkError>;
    fn hash(&self, item: &[u8]) -> HashPair;
    fn contains(&self, pair: HashPair) -> bool;
    fn add(&mut self, pair: HashPair, max_bytes: impl Ceiling) -> AddOutcome;
    /// Membership of many items, in order.
    fn contains_each(&self, pairs: &[HashPair], mut emit: impl FnMut(bool)) {
        pairs.iter().for_each(|&pair| emit(self.contains(pair)));
    }
    /// Adds items in order until `emit` returns false.
    fn add_each(
        &mut self,
        pairs: &[HashPair],
        max_bytes: impl Ceiling,
        mut emit: impl FnMut(AddOutcome) -> bool,
    ) {
        for &pair in pairs {
            if !emit(self.add(pair, &max_bytes)) {
                return;
            }
        }
    }
    fn summary(&self) -> Summary;
    /// BF.DEBUG's lines after `size:<items>`, one per sub-filter.
    fn debug_lines(&self) -> Vec<String>;
    fn dump_header(&self) -> Vec<u8>;
    fn dump_chunk(&self, iter: i64) -> Option<(i64, &[u8])>;
    fn from_dump_header(data: &[u8], max_bytes: u64) -> Result<Self, DumpError>;
    fn load_dump_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), DumpError>;
    /// Whether two filters can be merged (the same shape, link by link).
    fn same_shape(&self, other: &Self) -> bool;
    /// Number of links (INTERSECT needs one).
    fn link_count(&self) -> usize;
    /// A new filter merging `operands` (BF.MERGE, CBF.MERGE).
    fn merge(operands: &[&Self], op: MergeOp, max_bytes: u64) -> Result<Self, MergeError>;
}

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The reply when a new filter cannot be made.
fn create_error(e: LinkError) -> RedisError {
    match e {
        LinkError::Invalid => error(errors::COULD_NOT_CREATE_BF),
        LinkError::TooLarge => error(crate::write::too_large()),
        LinkError::OutOfMemory => error(errors::INSUFFICIENT_MEMORY_TO_CREATE),
    }
}

/// Parameters of a filter a command creates.
pub struct NewFilter {
    pub capacity: u64,
    pub error: f64,
    /// Capacity factor of each new link (stored also when not scaling).
    pub growth: u32,
    pub scaling: bool,
    /// The cache-local layout.
    pub blocked: bool,
}

impl NewFilter {
    /// A filter created without parameters (BF.ADD, BF.MADD, BF.INSERT's defaults): the
    /// module configs, `bf-blocked` included where the type has that layout.
    fn defaults<F: BloomKind>() -> Self {
        NewFilter {
            capacity: config::BF_INITIAL_SIZE.get(),
            error: config::BF_ERROR_RATE.get_f64(),
            growth: config::BF_EXPANSION.get() as u32,
            scaling: config::BF_EXPANSION.get() != 0,
            blocked: F::HAS_BLOCKED && config::BF_BLOCKED.get() != 0,
        }
    }

    /// Stores a new filter from these parameters in an empty `key` opened for writing.
    fn create_in<'k, F: BloomKind>(
        &self,
        key: &'k Key,
        write: &mut Write,
    ) -> Result<&'k mut F, RedisError> {
        let filter = F::create(
            self.capacity,
            self.error,
            self.growth,
            self.scaling,
            self.blocked,
            write.max_bytes(),
        )
        .map_err(create_error)?;
        write.marked_if(filter.is_blocked());
        let filter = key.set(filter.stored_type(), Box::new(filter))?;
        write.created(self.creation(&*filter));
        Ok(filter)
    }

    /// The command that recreates `filter`, just created from these parameters, on a
    /// replica or from the AOF: BF.RESERVE with every parameter explicit, or for a
    /// non-scaling filter (whose stored expansion no RESERVE can state) BF.LOADCHUNK of
    /// its header.
    fn creation<F: BloomKind>(&self, filter: &F) -> Creation {
        if self.scaling {
            let mut args = vec![
                shortest(self.error).into_bytes(),
                self.capacity.to_string().into_bytes(),
                b"EXPANSION".to_vec(),
                self.growth.to_string().into_bytes(),
            ];
            // Explicit: the replica's `bf-blocked` must not decide the layout.
            if self.blocked {
                args.push(BLOCKED.as_bytes().to_vec());
            }
            Creation {
                name: "RESERVE",
                args,
            }
        } else {
            Creation {
                name: "LOADCHUNK",
                args: vec![b"1".to_vec(), filter.dump_header()],
            }
        }
    }
}

/// The filter in a key opened for writing, created from `params` if the key is empty
/// (`None`: the key must exist).
fn filter_for_write<'k, F: BloomKind>(
    key: &'k Key,
    params: Option<&NewFilter>,
    write: &mut Write,
) -> Result<&'k mut F, RedisError> {
    match key.state_in::<F>(F::data_types()) {
        KeyState::Ours(filter) => {
            write.marked_if(filter.is_blocked());
            Ok(filter)
        }
        KeyState::Other => Err(RedisError::WrongType),
        KeyState::Empty => match params {
            Some(params) => params.create_in(key, write),
            None => Err(error(errors::NOT_FOUND)),
        },
    }
}

/// The filter of a read-only item query, or `None` for a missing key or a key of another
/// type (BF.EXISTS and BF.MEXISTS answer 0 for those, as RedisBloom does).
pub fn filter_or_none<F: BloomKind>(key: &Key) -> Option<&F> {
    ours_in(key, F::data_types())
}
