//! The module data types and how each filter is persisted, copied and counted.

use crate::api::types::{type_methods, AofWriter, ModuleValue, RdbReader, Snapshot, TypeStats};
use crate::stats::{BLOOM_STATS, COUNTING_STATS, CUCKOO_STATS, WINDOW_STATS};
use redbloom_core::bloom::chain::Chain;
use redbloom_core::bloom::dump as bloom_dump;
use redbloom_core::counting::dump as counting_dump;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::dump as cuckoo_dump;
use redbloom_core::cuckoo::CuckooFilter;
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{self, FieldWriter};
use redbloom_core::window::dump as window_dump;
use redbloom_core::window::WindowFilter;
use redis_module::native_types::RedisType;

/// RedisBloom's Bloom filter type: same name and encoding, so RDB files move both ways.
pub static BLOOM_TYPE: RedisType =
    RedisType::new("MBbloom--", rdb::BLOOM_ENCODING, type_methods::<Chain>());

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

    /// A LOADCHUNK sequence, exactly what SCANDUMP would return (COMPAT §4.4).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_chunk(c"BF.LOADCHUNK", 1, &bloom_dump::header(self));
        let mut iter = 1;
        while let Some((next, data)) = bloom_dump::chunk(self, iter) {
            aof.emit_chunk(c"BF.LOADCHUNK", next, data);
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        Chain::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        Chain::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: Chain::mem_usage(self) as i64,
            items: self.items() as i64,
            sub_filters: self.links().len() as i64,
        }
    }

    fn stats() -> &'static TypeStats {
        &BLOOM_STATS
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

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        WindowFilter::relocate(self, from, relocator)
    }
}
