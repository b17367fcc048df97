//! The RDB field stream: an abstract sequence of unsigned, double and buffer fields, so
//! that each filter family's save/load (`bloom::rdb`, `cuckoo::rdb`, `counting::rdb`,
//! `window::rdb`) serves Redis' RDB I/O, tests and fuzzing alike (COMPAT §4.2).
//!
//! The families' functions and encoding versions are re-exported here under their
//! historical paths (`rdb::save_chain`, `rdb::BLOOM_ENCODING`, ...).

pub use crate::bloom::rdb::{
    load_blocked, load_chain, save_chain, BLOCKED_ENCODING, BLOOM_ENCODING,
};
pub use crate::cms::rdb::{load_cms, save_cms, save_cms_v1, CMS_CELL_SIZE_ENCODING, CMS_ENCODING};
pub use crate::counting::rdb::{load_counting, save_counting, COUNTING_ENCODING};
pub use crate::cuckoo::rdb::{load_cuckoo, save_cuckoo, CUCKOO_ENCODING};
pub use crate::static_filter::rdb::{load_static, save_static, STATIC_ENCODING};
pub use crate::tdigest::rdb::{load_tdigest, save_tdigest, TDIGEST_ENCODING};
pub use crate::topk::rdb::{load_topk, save_topk, TOPK_ENCODING};
pub use crate::window::rdb::{load_window, save_window, WINDOW_ENCODING};

/// A source of RDB fields; any error ends the load.
pub trait FieldReader {
    fn unsigned(&mut self) -> Option<u64>;
    fn double(&mut self) -> Option<f64>;
    fn buffer(&mut self) -> Option<Vec<u8>>;
}

/// A sink of RDB fields.
pub trait FieldWriter {
    fn unsigned(&mut self, v: u64);
    fn double(&mut self, v: f64);
    fn buffer(&mut self, v: &[u8]);
}

/// One RDB field, for in-memory streams.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Unsigned(u64),
    Double(f64),
    Buffer(Vec<u8>),
}

/// An in-memory field stream (tests, fuzzing, COPY-like tools). A plain value: its fields
/// are public so a test or fuzz target can build, edit and inspect a stream directly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    /// The fields, in stream order.
    pub fields: Vec<Field>,
    /// Index of the next field a read returns.
    pub read_at: usize,
}

impl Fields {
    fn next(&mut self) -> Option<&Field> {
        let field = self.fields.get(self.read_at)?;
        self.read_at += 1;
        Some(field)
    }
}

impl FieldReader for Fields {
    fn unsigned(&mut self) -> Option<u64> {
        match self.next()? {
            Field::Unsigned(v) => Some(*v),
            _ => None,
        }
    }
    fn double(&mut self) -> Option<f64> {
        match self.next()? {
            Field::Double(v) => Some(*v),
            _ => None,
        }
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        match self.next()? {
            Field::Buffer(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl FieldWriter for Fields {
    fn unsigned(&mut self, v: u64) {
        self.fields.push(Field::Unsigned(v));
    }
    fn double(&mut self, v: f64) {
        self.fields.push(Field::Double(v));
    }
    fn buffer(&mut self, v: &[u8]) {
        self.fields.push(Field::Buffer(v.to_vec()));
    }
}
