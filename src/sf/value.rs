//! The static filter's data type (`RBstaticF`) and how a value is persisted, copied and
//! counted.

use crate::api::types::{type_methods, AofWriter, ModuleValue, RdbReader, Snapshot, TypeStats};
use crate::stats::STATIC_STATS;
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{self, FieldWriter};
use redbloom_core::static_filter::dump as static_dump;
use redbloom_core::static_filter::StaticFilter;
use redis_module::native_types::RedisType;

/// The static filter type: redbloom's own (RedisBloom and valkey-bloom refuse it), a
/// 9-character name of its own, encoding 1.
pub static STATIC_TYPE: RedisType = RedisType::new(
    "RBstaticF",
    rdb::STATIC_ENCODING,
    type_methods::<StaticFilter>(),
);

impl ModuleValue for StaticFilter {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        rdb::save_static(self, out);
    }

    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        rdb::load_static(input, encver)
    }

    /// An SF.LOADCHUNK sequence, exactly what SF.SCANDUMP returns (of a partly loaded
    /// filter, the part loaded: the replay is as incomplete as this value).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        aof.emit_chunk(c"SF.LOADCHUNK", 1, &static_dump::header(self));
        let mut iter = 1;
        while let Some((next, data)) = static_dump::chunk(self, iter) {
            aof.emit_chunk(c"SF.LOADCHUNK", next, data);
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        StaticFilter::mem_usage(self) as usize
    }

    fn try_clone(&self) -> Option<Self> {
        StaticFilter::try_clone(self)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: StaticFilter::mem_usage(self) as i64,
            items: self.items() as i64,
            sub_filters: 1,
        }
    }

    fn stats() -> &'static TypeStats {
        &STATIC_STATS
    }

    fn alerts(&self) -> u8 {
        StaticFilter::alerts(self)
    }

    fn health(&self) -> redbloom_core::health::Health {
        StaticFilter::health(self)
    }

    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        StaticFilter::relocate(self, from, relocator)
    }
}
