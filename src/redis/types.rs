//! The module data types and how each filter is persisted.

use super::ffi::{type_methods, AofWriter, ModuleValue, RdbReader, RdbWriter};
use crate::filter::bloom_dump;
use crate::filter::chain::Chain;
use crate::filter::cuckoo::CuckooFilter;
use crate::filter::cuckoo_dump;
use crate::filter::rdb;
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
    fn rdb_save(&self, out: &mut RdbWriter) {
        rdb::save_chain(self, out);
    }

    fn rdb_load(input: &mut RdbReader, encver: i32) -> Option<Self> {
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
        self.mem_usage() as usize
    }
}

impl ModuleValue for CuckooFilter {
    fn rdb_save(&self, out: &mut RdbWriter) {
        rdb::save_cuckoo(self, out);
    }

    fn rdb_load(input: &mut RdbReader, encver: i32) -> Option<Self> {
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
        self.mem_usage() as usize
    }
}

// ---------------------------------------------------------------------------------------
// CBF: the counting Bloom filter, redbloom's own type (no RedisBloom counterpart).

/// The counting Bloom filter type: a 9-character name of its own, encoding 1.
pub static COUNTING_TYPE: RedisType = RedisType::new(
    "RBcountBF",
    crate::filter::rdb::COUNTING_ENCODING,
    type_methods::<crate::filter::counting::CountingChain>(),
);

impl ModuleValue for crate::filter::counting::CountingChain {
    fn rdb_save(&self, out: &mut RdbWriter) {
        rdb::save_counting(self, out);
    }

    fn rdb_load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_counting(input, encver)
    }

    /// A CBF.LOADCHUNK sequence, exactly what CBF.SCANDUMP would return.
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        use crate::filter::counting_dump;
        aof.emit_chunk(c"CBF.LOADCHUNK", 1, &counting_dump::header(self));
        let mut iter = 1;
        while let Some((next, data)) = counting_dump::chunk(self, iter) {
            aof.emit_chunk(c"CBF.LOADCHUNK", next, data);
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        self.mem_usage() as usize
    }
}
