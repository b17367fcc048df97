//! The module data types and how each filter is persisted, copied and counted.

use crate::api::types::{type_methods, AofWriter, ModuleValue, RdbReader, Snapshot, TypeStats};
use crate::stats::{
    BLOOM_STATS, CMS_STATS, COUNTING_STATS, CUCKOO_STATS, TDIGEST_STATS, TOPK_STATS, WINDOW_STATS,
};
use redbloom_core::bloom::chain::Chain;
use redbloom_core::bloom::dump as bloom_dump;
use redbloom_core::cms::CountMinSketch;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::dump as cuckoo_dump;
use redbloom_core::cuckoo::CuckooFilter;
use redbloom_core::health::Health;
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{self, FieldWriter};
use redbloom_core::tdigest::TDigest;
use redbloom_core::topk::TopK;
use redbloom_core::window::dump as window_dump;
use redbloom_core::window::WindowFilter;
use redis_module::native_types::RedisType;

/// RedisBloom's Bloom filter type: same name and encoding, so RDB files move both ways.
pub static BLOOM_TYPE: RedisType =
    RedisType::new("MBbloom--", rdb::BLOOM_ENCODING, type_methods::<Chain>());

/// BLOCKED Bloom filters (redbloom's cache-local layout): a type of their own, so that
/// RedisBloom refuses an RDB file or DUMP payload holding one ("no matching module type")
/// instead of reading it as a classic filter, which would miss nearly every added item.
/// The value is a [`Chain`] with the BLOCKED option; the BF.* commands serve both types.
/// Chains with that option stored under `MBbloom--` (written before this type existed) still
/// load and answer as before (docs/migration.md).
pub static BLOCKED_TYPE: RedisType = RedisType::new(
    "RBblockBF",
    rdb::BLOCKED_ENCODING,
    type_methods::<BlockedChain>(),
);

/// The value of a [`BLOCKED_TYPE`] key: a blocked [`Chain`], the same in memory (the BF.*
/// handlers read both types' values as `Chain`), with that type's callbacks.
#[repr(transparent)]
pub struct BlockedChain(pub Chain);

/// The command that precedes every write to a BLOCKED filter in the replication stream and
/// the AOF (`BF.BLOCKEDWRITE key`, which does nothing). RedisBloom does not know it: its
/// replica discards the MULTI/EXEC the write arrives in, and its AOF loading stops, so it
/// never builds, grows or auto-creates a classic filter under that key.
pub const BLOCKED_WRITE: &std::ffi::CStr = c"BF.BLOCKEDWRITE";

/// Emits a chain's LOADCHUNK sequence, exactly what SCANDUMP would return (COMPAT §4.4);
/// a blocked chain's begins with [`BLOCKED_WRITE`].
fn chain_aof_rewrite(chain: &Chain, aof: &mut AofWriter) {
    if chain.is_blocked() {
        aof.emit_key_only(BLOCKED_WRITE);
    }
    aof.emit_chunk(c"BF.LOADCHUNK", 1, &bloom_dump::header(chain));
    let mut iter = 1;
    while let Some((next, data)) = bloom_dump::chunk(chain, iter) {
        aof.emit_chunk(c"BF.LOADCHUNK", next, data);
        iter = next;
    }
}

fn chain_snapshot(chain: &Chain) -> Snapshot {
    Snapshot {
        bytes: Chain::mem_usage(chain) as i64,
        items: chain.items() as i64,
        sub_filters: chain.links().len() as i64,
    }
}

impl ModuleValue for BlockedChain {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_chain(&self.0, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_blocked(input, encver).map(BlockedChain)
    }

    fn aof_rewrite(&self, aof: &mut AofWriter) {
        chain_aof_rewrite(&self.0, aof);
    }

    fn mem_usage(&self) -> usize {
        Chain::mem_usage(&self.0) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        Chain::try_clone(&self.0).map(BlockedChain)
    }

    fn snapshot(&self) -> Snapshot {
        chain_snapshot(&self.0)
    }

    /// BLOCKED filters count in BF's totals, as they did under `MBbloom--`.
    fn stats() -> &'static TypeStats {
        &BLOOM_STATS
    }

    fn alerts(&self) -> u8 {
        self.0.alerts()
    }

    fn health(&self) -> Health {
        self.0.health()
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        Chain::relocate(&mut self.0, from, relocator)
    }
}

/// The server's sub-filter limit of a Cuckoo filter (`cf-max-expansions`).
fn cf_limit() -> usize {
    usize::try_from(crate::config::CF_MAX_EXPANSIONS.get()).unwrap_or(usize::MAX)
}

/// RedisBloom's Cuckoo filter type.
pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    rdb::CUCKOO_ENCODING,
    type_methods::<CuckooFilter>(),
);

impl ModuleValue for Chain {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_chain(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_chain(input, encver)
    }

    /// A LOADCHUNK sequence (replayed, a blocked chain of the legacy form comes back under
    /// [`BLOCKED_TYPE`]).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        chain_aof_rewrite(self, aof);
    }

    fn mem_usage(&self) -> usize {
        Chain::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        Chain::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        chain_snapshot(self)
    }

    fn stats() -> &'static TypeStats {
        &BLOOM_STATS
    }

    fn alerts(&self) -> u8 {
        Chain::alerts(self)
    }

    fn health(&self) -> Health {
        Chain::health(self)
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        Chain::relocate(self, from, relocator)
    }
}

impl ModuleValue for CuckooFilter {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_cuckoo(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_cuckoo(input, encver)
    }

    /// The header (even for an empty filter, unlike SCANDUMP), then every chunk.
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_chunk(c"CF.LOADCHUNK", 1, &cuckoo_dump::header(self));
        let mut pos = 1;
        while let Some((next, data)) = cuckoo_dump::chunk(self, pos) {
            aof.emit_chunk(c"CF.LOADCHUNK", next, data);
            pos = next;
        }
    }

    fn mem_usage(&self) -> usize {
        CuckooFilter::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        CuckooFilter::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: CuckooFilter::mem_usage(self) as i64,
            items: self.num_items() as i64,
            sub_filters: self.num_filters() as i64,
        }
    }

    fn stats() -> &'static TypeStats {
        &CUCKOO_STATS
    }

    fn alerts(&self) -> u8 {
        CuckooFilter::alerts(self, cf_limit())
    }

    fn health(&self) -> Health {
        CuckooFilter::health(self, cf_limit())
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        CuckooFilter::relocate(self, from, relocator)
    }
}

/// The counting Bloom filter type: redbloom's own (no RedisBloom counterpart), a
/// 9-character name of its own, encoding 1.
pub static COUNTING_TYPE: RedisType = RedisType::new(
    "RBcountBF",
    rdb::COUNTING_ENCODING,
    type_methods::<CountingChain>(),
);

impl ModuleValue for CountingChain {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_counting(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_counting(input, encver)
    }

    /// A CBF.LOADCHUNK sequence, exactly what CBF.SCANDUMP would return.
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_chunk(c"CBF.LOADCHUNK", 1, &counting_dump::header(self));
        let mut iter = 1;
        while let Some((next, data)) = counting_dump::chunk(self, iter) {
            aof.emit_chunk(c"CBF.LOADCHUNK", next, data);
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        CountingChain::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        CountingChain::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: CountingChain::mem_usage(self) as i64,
            items: self.items() as i64,
            sub_filters: self.links().len() as i64,
        }
    }

    fn stats() -> &'static TypeStats {
        &COUNTING_STATS
    }

    fn alerts(&self) -> u8 {
        CountingChain::alerts(self)
    }

    fn health(&self) -> Health {
        CountingChain::health(self)
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        CountingChain::relocate(self, from, relocator)
    }
}

/// The sliding-window Bloom filter type: redbloom's own, encoding 1.
pub static WINDOW_TYPE: RedisType = RedisType::new(
    "RBslideBF",
    rdb::WINDOW_ENCODING,
    type_methods::<WindowFilter>(),
);

impl ModuleValue for WindowFilter {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_window(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_window(input, encver)
    }

    /// A WBF.LOADCHUNK sequence, exactly what WBF.SCANDUMP would return (the header holds
    /// the generations' times).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_chunk(c"WBF.LOADCHUNK", 1, &window_dump::header(self));
        let mut iter = 1;
        while let Some((next, data)) = window_dump::chunk(self, iter) {
            aof.emit_chunk(c"WBF.LOADCHUNK", next, data);
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        WindowFilter::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        WindowFilter::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: WindowFilter::mem_usage(self) as i64,
            items: self.stored_items() as i64,
            sub_filters: i64::from(self.shape().slices()),
        }
    }

    fn stats() -> &'static TypeStats {
        &WINDOW_STATS
    }

    fn alerts(&self) -> u8 {
        WindowFilter::alerts(self)
    }

    fn health(&self) -> Health {
        WindowFilter::health(self)
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        WindowFilter::relocate(self, from, relocator)
    }
}

/// RedisBloom's Count-Min Sketch type: same name and encoding (0), so RDB files and DUMP
/// payloads of 4-byte sketches move both ways; RedisBloom 8.12's encoding 1 loads too
/// (core's `cms::rdb` says what a sketch of another cell size is written as).
pub static CMS_TYPE: RedisType = RedisType::new(
    "CMSk-TYPE",
    rdb::CMS_ENCODING,
    type_methods::<CountMinSketch>(),
);

impl ModuleValue for CountMinSketch {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_cms(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_cms(input, encver)
    }

    /// `RESTORE key 0 <DUMP>`, as RedisBloom writes it (there is no chunk command).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_restore();
    }

    fn mem_usage(&self) -> usize {
        CountMinSketch::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        let counters = redbloom_core::sparse_copy(self.counter_bytes_le()).ok()?;
        CountMinSketch::from_parts(
            self.width(),
            self.depth(),
            self.count(),
            u64::from(self.cell_size()),
            counters,
        )
    }

    /// Items: the sum of the increments; one counter array.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: CountMinSketch::mem_usage(self) as i64,
            items: self.count() as i64,
            sub_filters: 1,
        }
    }

    fn stats() -> &'static TypeStats {
        &CMS_STATS
    }

    fn alerts(&self) -> u8 {
        0
    }

    fn health(&self) -> Health {
        CountMinSketch::health(self)
    }
}

/// RedisBloom's Top-K type: same name and encoding (0), so RDB files and DUMP payloads
/// move both ways (the decay generator's state rides in bytes RedisBloom ignores).
pub static TOPK_TYPE: RedisType =
    RedisType::new("TopK-TYPE", rdb::TOPK_ENCODING, type_methods::<TopK>());

impl ModuleValue for TopK {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_topk(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_topk(input, encver)
    }

    /// `RESTORE key 0 <DUMP>`, as RedisBloom writes it (there is no chunk command); the
    /// DUMP holds the generator state, so the replay goes on drawing as this value.
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_restore();
    }

    fn mem_usage(&self) -> usize {
        TopK::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        TopK::try_clone(self)
    }

    /// Items: the heap entries holding one; one bucket array.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: TopK::mem_usage(self) as i64,
            items: i64::from(self.listed_entries()),
            sub_filters: 1,
        }
    }

    fn stats() -> &'static TypeStats {
        &TOPK_STATS
    }

    fn alerts(&self) -> u8 {
        0
    }

    fn health(&self) -> Health {
        TopK::health(self)
    }

    /// The bucket array (the heap's items are small blocks the value's box defragments
    /// with).
    fn defrag(&mut self, _from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        relocator.relocate(self.buckets_mut());
        None
    }
}

/// RedisBloom's t-digest type: same name and encoding (0), so RDB files and DUMP payloads
/// move both ways.
pub static TDIGEST_TYPE: RedisType = RedisType::new(
    "TDIS-TYPE",
    rdb::TDIGEST_ENCODING,
    type_methods::<TDigest>(),
);

impl ModuleValue for TDigest {
    /// The digest merged, as RedisBloom saves it (a merged copy: the stored digest is
    /// left as it is, so a save or DUMP changes nothing a later command sees).
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_tdigest(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_tdigest(input, encver)
    }

    /// `RESTORE key 0 <DUMP>`, as RedisBloom writes it (there is no chunk command).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_restore();
    }

    fn mem_usage(&self) -> usize {
        TDigest::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        TDigest::try_clone(self)
    }

    /// Items: the observations; one centroid array.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: TDigest::mem_usage(self) as i64,
            items: self.size(),
            sub_filters: 1,
        }
    }

    fn stats() -> &'static TypeStats {
        &TDIGEST_STATS
    }

    fn alerts(&self) -> u8 {
        0
    }

    fn health(&self) -> Health {
        TDigest::health(self)
    }

    fn defrag(&mut self, _from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        TDigest::relocate(self, relocator)
    }
}
