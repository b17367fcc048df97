//! The expandable filter's data type (`RBexpandF`) and how a value is persisted, copied
//! and counted. A key holds a complete filter, or one that XF.LOADCHUNK is still loading
//! (its header and the chunks so far; no command but XF.LOADCHUNK reads it).
//!
//! **RDB layout** (the core's `rdb::save_xf`): the SCANDUMP header as one buffer, the
//! number of chunks, then each chunk as a buffer. A partial load is saved the same way
//! with the chunks it has, its header followed by one byte, [`PARTIAL`] (no header is
//! that long: the core's `load_xf` and tools refuse it), and comes back as a partial
//! load. A value saved complete must load complete: RESTORE of a payload missing chunks,
//! or whose header announces more than its chunks hold, is refused, never made a partial
//! load. Every value goes through the core's loader, so what RDB or RESTORE brings passes
//! the checks XF.LOADCHUNK runs.

use crate::api::types::{type_methods, AofWriter, ModuleValue, RdbReader, Snapshot, TypeStats};
use crate::stats::EXPANDABLE_STATS;
use redbloom_core::expandable::rdb::{save_xf, XF_ENCODING};
use redbloom_core::expandable::{self as xf, Loader, XFilter, XfError};
use redbloom_core::health::{label, Health, Value};
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{FieldReader, FieldWriter};
use redis_module::native_types::RedisType;

/// The byte after the header of a partial load's RDB value.
const PARTIAL: u8 = b'P';

/// The expandable filter type: redbloom's own (RedisBloom and valkey-bloom refuse it), a
/// 9-character name of its own.
pub static EXPANDABLE_TYPE: RedisType =
    RedisType::new("RBexpandF", XF_ENCODING, type_methods::<XfValue>());

/// What an XF key holds. The filter is inline (the value is boxed once, by the key): a
/// lookup follows no further pointer to reach its fields; a partial load is the rare case.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum XfValue {
    Ready(XFilter),
    Loading(Box<Loading>),
}

/// A filter XF.LOADCHUNK is loading: the core's loader, and what it was given (to save
/// the partial load and to emit it in an AOF rewrite).
#[derive(Clone, Debug)]
pub struct Loading {
    loader: Loader,
    max_bytes: u64,
    header: Vec<u8>,
    chunks: Vec<(i64, Vec<u8>)>,
}

/// The XF.LOADCHUNK iterator of a chunk (the one after its last partition, as SCANDUMP
/// numbers them), read from its first 12 bytes; `None` for a chunk too short to say.
fn chunk_iter(data: &[u8]) -> Option<i64> {
    let first = u64::from_le_bytes(data.get(..8)?.try_into().ok()?);
    let count = u32::from_le_bytes(data.get(8..12)?.try_into().ok()?);
    i64::try_from(first.checked_add(u64::from(count))?.checked_add(1)?).ok()
}

impl Loading {
    /// A key's value after the header at iterator 1, under the ceiling `max_bytes`.
    pub fn start(header: &[u8], max_bytes: u64) -> Result<XfValue, XfError> {
        Loading::replay(header.to_vec(), Vec::new(), max_bytes)
    }

    /// The value a header and chunks make: the filter once the loader has every chunk
    /// (and the whole passes every check), else the partial load.
    fn replay(
        header: Vec<u8>,
        chunks: Vec<(i64, Vec<u8>)>,
        max_bytes: u64,
    ) -> Result<XfValue, XfError> {
        let mut loader = Loader::from_header(&header, max_bytes)?;
        for (iter, data) in &chunks {
            loader.load_chunk(*iter, data)?;
        }
        if loader.is_complete() {
            return loader.finish().map(XfValue::Ready);
        }
        Ok(XfValue::Loading(Box::new(Loading {
            loader,
            max_bytes,
            header,
            chunks,
        })))
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<Loading>()
            + self.header.len()
            + self.chunks.iter().map(|(_, c)| c.len() * 2).sum::<usize>()
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
        match loading.loader.clone().finish() {
            Ok(filter) => {
                *self = XfValue::Ready(filter);
                Ok(())
            }
            Err(e) => {
                // Back to the value before this chunk (a rare path: a forged last chunk
                // that passed its own checks but not the whole's).
                let (header, chunks) = (loading.header.clone(), loading.chunks.clone());
                *self = Loading::replay(header, chunks, loading.max_bytes)?;
                Err(e)
            }
        }
    }
}

impl ModuleValue for XfValue {
    fn save<W: FieldWriter>(&self, out: &mut W) {
        match self {
            XfValue::Ready(f) => save_xf(f, out),
            XfValue::Loading(l) => {
                let mut header = l.header.clone();
                header.push(PARTIAL);
                out.buffer(&header);
                out.unsigned(l.chunks.len() as u64);
                for (_, data) in &l.chunks {
                    out.buffer(data);
                }
            }
        }
    }

    /// The memory ceiling is not applied: the data already exists (the loader still
    /// checks every size against the bytes present before allocating).
    fn load(input: &mut RdbReader, encver: i32) -> Option<Self> {
        load_fields(input, encver)
    }

    /// The XF.LOADCHUNK sequence SCANDUMP would return; of a partial load, the header and
    /// chunks loaded so far (the replay is as incomplete as this value).
    fn aof_rewrite(&self, aof: &mut AofWriter) {
        match self {
            XfValue::Ready(f) => {
                aof.emit_chunk(c"XF.LOADCHUNK", 1, &xf::header(f));
                let mut iter = 1;
                while let Some((next, data)) = xf::chunk(f, iter) {
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
        match self {
            XfValue::Ready(f) => f.memory_bytes(),
            XfValue::Loading(l) => l.bytes(),
        }
    }

    fn try_clone(&self) -> Option<Self> {
        Some(match self {
            XfValue::Ready(f) => XfValue::Ready(f.clone()),
            XfValue::Loading(l) => XfValue::Loading(l.clone()),
        })
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

    fn alerts(&self) -> u8 {
        match self {
            XfValue::Ready(f) => f.alerts(),
            XfValue::Loading(_) => 0,
        }
    }

    /// The core's figures; of a partial load, the same labels with nothing known yet.
    fn health(&self) -> Health {
        match self {
            XfValue::Ready(f) => f.health(),
            XfValue::Loading(_) => Health {
                fields: vec![
                    (label::ESTIMATED_FP, Value::Null),
                    (label::TARGET_FP, Value::Null),
                    (label::ITEMS, Value::Integer(0)),
                    (label::CAPACITY, Value::Null),
                    ("partitions", Value::Null),
                    ("bits_per_item", Value::Null),
                    (label::ALERTS, Value::Integer(0)),
                ],
                alerts: 0,
            },
        }
    }

    /// The directory, then each partition, from cursor `from` (a partial load offers
    /// nothing: it is short-lived).
    fn defrag(&mut self, from: u64, relocator: &mut impl Relocator) -> Option<u64> {
        match self {
            XfValue::Ready(f) => f.relocate(from, relocator),
            XfValue::Loading(_) => None,
        }
    }
}

/// A value's RDB fields (see the module comment); `None` for anything that fails a check.
pub fn load_fields(input: &mut impl FieldReader, encver: i32) -> Option<XfValue> {
    if encver != XF_ENCODING {
        return None;
    }
    let mut header = input.buffer()?;
    let partial =
        header.last() == Some(&PARTIAL) && Loader::from_header(&header, u64::MAX).is_err();
    if partial {
        header.pop();
    }
    let count = input.unsigned()?;
    // Each chunk is read (and so exists in the stream) before the next is asked for.
    let mut chunks = Vec::new();
    for _ in 0..count {
        let data = input.buffer()?;
        chunks.push((chunk_iter(&data)?, data));
    }
    match Loading::replay(header, chunks, u64::MAX).ok()? {
        XfValue::Loading(_) if !partial => None,
        value => Some(value),
    }
}
