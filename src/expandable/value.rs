//! The expandable filter's data type (`RBexpandF`) and how a value is persisted, copied
//! and counted. A key holds a complete filter, or one that XF.LOADCHUNK is still loading
//! (its header and the chunks so far; no command but XF.LOADCHUNK reads it).
//!
//! **RDB layout** (encoding [`EXPANDABLE_ENCODING`]): an unsigned kind, then for a complete
//! filter ([`COMPLETE`]) the core's encoding of it as one buffer (`rdb::encode`, which
//! `rdb::decode` checks whole), for a loading one ([`LOADING`]) the header buffer, the
//! number of chunks, and each chunk's iterator and buffer — replayed through the core's
//! loader, so a saved partial load passes the same checks as one sent by a client.

use crate::api::types::{type_methods, AofWriter, ModuleValue, RdbReader, Snapshot, TypeStats};
use crate::stats::EXPANDABLE_STATS;
use redbloom_core::expandable::dump::{self as xf_dump, Loader};
use redbloom_core::expandable::{rdb as xf_rdb, XFilter, XfError};
use redbloom_core::health::{self, label, Health, Value};
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{FieldReader, FieldWriter};
use redis_module::native_types::RedisType;

/// The type's RDB encoding version.
pub const EXPANDABLE_ENCODING: i32 = 1;
/// The first RDB field of a complete filter.
const COMPLETE: u64 = 0;
/// The first RDB field of a filter XF.LOADCHUNK is loading.
const LOADING: u64 = 1;

/// The expandable filter type: redbloom's own (RedisBloom and valkey-bloom refuse it), a
/// 9-character name of its own.
pub static EXPANDABLE_TYPE: RedisType =
    RedisType::new("RBexpandF", EXPANDABLE_ENCODING, type_methods::<XfValue>());

/// What an XF key holds.
#[derive(Debug)]
pub enum XfValue {
    Ready(XFilter),
    Loading(Box<Loading>),
}

/// A filter XF.LOADCHUNK is loading: the core's loader, and what it was given (to save
/// and copy the partial load).
#[derive(Debug)]
pub struct Loading {
    loader: Loader,
    max_bytes: u64,
    header: Vec<u8>,
    chunks: Vec<(i64, Vec<u8>)>,
}

impl Loading {
    /// A key's value after the header at iterator 1, under the ceiling `max_bytes`.
    pub fn start(header: &[u8], max_bytes: u64) -> Result<XfValue, XfError> {
        let loader = Loader::from_header(header, max_bytes)?;
        let loading = Loading {
            loader,
            max_bytes,
            header: header.to_vec(),
            chunks: Vec::new(),
        };
        loading.complete_if_done()
    }

    /// The filter once the loader has every chunk (and it passes every check), else the
    /// loading value itself.
    fn complete_if_done(self) -> Result<XfValue, XfError> {
        if self.loader.is_complete() {
            Ok(XfValue::Ready(self.loader.finish()?))
        } else {
            Ok(XfValue::Loading(Box::new(self)))
        }
    }

    /// A fresh loader given the same header and chunks (a copy, an RDB load).
    fn replay(
        header: Vec<u8>,
        chunks: Vec<(i64, Vec<u8>)>,
        max_bytes: u64,
    ) -> Result<XfValue, XfError> {
        let mut loader = Loader::from_header(&header, max_bytes)?;
        for (iter, data) in &chunks {
            loader.load_chunk(*iter, data)?;
        }
        Loading {
            loader,
            max_bytes,
            header,
            chunks,
        }
        .complete_if_done()
    }

    fn bytes(&self) -> usize {
        self.header.len() + self.chunks.iter().map(|(_, c)| c.len() + 8).sum::<usize>()
    }
}

impl XfValue {
    /// XF.LOADCHUNK's chunk at `iter` (after the header): taken whole or refused whole;
    /// the last one turns the value into the complete filter, or is refused with the
    /// filter's first failed check (the value then stays as it was before it).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), XfError> {
        let XfValue::Loading(loading) = self else {
            return Err(XfError::BadData);
        };
        loading.loader.load_chunk(iter, data)?;
        if !loading.loader.is_complete() {
            loading.chunks.push((iter, data.to_vec()));
            return Ok(());
        }
        // The value before this chunk, in case the whole filter fails its checks.
        let before = Loading::replay(
            loading.header.clone(),
            loading.chunks.clone(),
            loading.max_bytes,
        )?;
        let XfValue::Loading(taken) = std::mem::replace(self, before) else {
            return Err(XfError::BadData);
        };
        *self = XfValue::Ready(taken.loader.finish()?);
        Ok(())
    }
}

/// The SCANDUMP header of a complete filter.
pub fn dump_header(filter: &XFilter) -> Vec<u8> {
    xf_dump::header(filter)
}

/// The SCANDUMP chunk at `iter` and the iterator after it; `None` past the end.
pub fn dump_chunk(filter: &XFilter, iter: i64) -> Option<(i64, Vec<u8>)> {
    xf_dump::chunk(filter, iter)
}

impl ModuleValue for XfValue {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        match self {
            XfValue::Ready(f) => {
                out.unsigned(COMPLETE);
                out.buffer(&xf_rdb::encode(f));
            }
            XfValue::Loading(l) => {
                out.unsigned(LOADING);
                out.buffer(&l.header);
                out.unsigned(l.chunks.len() as u64);
                for (iter, data) in &l.chunks {
                    out.unsigned(*iter as u64);
                    out.buffer(data);
                }
            }
        }
    }

    /// The memory ceiling is not applied: the data already exists (sizes are still
    /// checked against the bytes present before anything is allocated).
    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        load_fields(input, encver)
    }

    /// The XF.LOADCHUNK sequence SCANDUMP would return; of a partial load, the header and
    /// chunks loaded so far (the replay is as incomplete as this value).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        match self {
            XfValue::Ready(f) => {
                aof.emit_chunk(c"XF.LOADCHUNK", 1, &xf_dump::header(f));
                let mut iter = 1;
                while let Some((next, data)) = xf_dump::chunk(f, iter) {
                    aof.emit_chunk(c"XF.LOADCHUNK", next, &data);
                    iter = next;
                }
            }
            XfValue::Loading(l) => {
                aof.emit_chunk(c"XF.LOADCHUNK", 1, &l.header);
                for (iter, data) in &l.chunks {
                    aof.emit_chunk(c"XF.LOADCHUNK", *iter, data);
                }
            }
        }
    }

    fn mem_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                XfValue::Ready(f) => f.memory_bytes(),
                XfValue::Loading(l) => std::mem::size_of::<Loading>() + l.bytes(),
            }
    }

    fn try_clone(&self) -> Option<Self> {
        match self {
            XfValue::Ready(f) => Some(XfValue::Ready(f.clone())),
            XfValue::Loading(l) => {
                Loading::replay(l.header.clone(), l.chunks.clone(), u64::MAX).ok()
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            bytes: self.mem_usage() as i64,
            items: match self {
                XfValue::Ready(f) => f.items() as i64,
                XfValue::Loading(_) => 0,
            },
            sub_filters: 1,
        }
    }

    fn stats() -> &'static TypeStats {
        &EXPANDABLE_STATS
    }

    /// Over its rate when the bound its entries guarantee exceeds the rate asked (the
    /// structure keeps it under by design: the alert would reveal a defect).
    fn alerts(&self) -> u8 {
        match self {
            XfValue::Ready(f) => {
                let info = f.info();
                if health::over(info.fp_bound, info.error_rate) {
                    health::OVER_FP
                } else {
                    0
                }
            }
            XfValue::Loading(_) => 0,
        }
    }

    fn health(&self) -> Health {
        let alerts = self.alerts();
        let fields = match self {
            XfValue::Ready(f) => {
                let info = f.info();
                vec![
                    (label::ESTIMATED_FP, Value::Double(info.fp_bound)),
                    (label::TARGET_FP, Value::Double(info.error_rate)),
                    (label::ITEMS, Value::Integer(info.items as i64)),
                    (label::CAPACITY, Value::Integer(info.capacity as i64)),
                    ("partitions", Value::Integer(info.partitions as i64)),
                    ("bits_per_item", Value::Double(info.bits_per_item)),
                    ("complete", Value::Integer(1)),
                    (label::ALERTS, Value::Integer(i64::from(alerts))),
                ]
            }
            XfValue::Loading(_) => vec![
                (label::ESTIMATED_FP, Value::Null),
                (label::TARGET_FP, Value::Null),
                (label::ITEMS, Value::Integer(0)),
                (label::CAPACITY, Value::Null),
                ("partitions", Value::Null),
                ("bits_per_item", Value::Null),
                ("complete", Value::Integer(0)),
                (label::ALERTS, Value::Integer(i64::from(alerts))),
            ],
        };
        Health { fields, alerts }
    }

    fn defrag(&mut self, _from: u64, _relocator: &mut impl Relocator) -> Option<u64> {
        None
    }
}

/// A value's RDB fields (see the module comment); `None` for anything that fails a check.
pub fn load_fields(input: &mut impl FieldReader, encver: i32) -> Option<XfValue> {
    if encver != EXPANDABLE_ENCODING {
        return None;
    }
    match input.unsigned()? {
        COMPLETE => xf_rdb::decode(&input.buffer()?, u64::MAX)
            .ok()
            .map(XfValue::Ready),
        LOADING => {
            let header = input.buffer()?;
            let n = input.unsigned()?;
            let mut chunks = Vec::new();
            for _ in 0..n {
                let iter = i64::try_from(input.unsigned()?).ok()?;
                chunks.push((iter, input.buffer()?));
            }
            Loading::replay(header, chunks, u64::MAX).ok()
        }
        _ => None,
    }
}
