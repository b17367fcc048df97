//! Python items as bytes: `bytes` as they are, `str` encoded as UTF-8 (as redis-py encodes
//! it), `bytearray` / `memoryview` as their bytes; anything else is a TypeError saying what
//! to pass (an int is not guessed at: redis-py would send `str(n)`, which the caller can
//! pass explicitly).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use std::borrow::Cow;

/// What a TypeError for an item of type `kind` says.
pub fn refusal(kind: &str) -> String {
    format!(
        "redbloom items are str (sent as UTF-8, as redis-py sends it) or bytes, not {kind}; \
         pass str(x) or bytes (e.g. str(42) or (42).to_bytes(8, 'little'))"
    )
}

/// One item's bytes.
pub fn item<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(match s.to_cow()? {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        });
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    let kind = obj.get_type().name()?.to_string();
    Err(PyTypeError::new_err(refusal(&kind)))
}

/// Many items, packed in one buffer (the GIL can be released while they are worked on).
#[derive(Default)]
pub struct Items {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Items {
    /// The items of any iterable (a `str` or `bytes` itself is refused: iterating it would
    /// add its characters one by one).
    pub fn collect(iterable: &Bound<'_, PyAny>) -> PyResult<Items> {
        if iterable.is_instance_of::<PyString>() || iterable.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "pass an iterable of items (a list, a set, a generator), not one str or bytes: \
                 use add(item) / `item in filter` for a single item",
            ));
        }
        let mut items = Items::default();
        if let Ok(n) = iterable.len() {
            items.ends.reserve(n);
        }
        for obj in iterable.try_iter()? {
            let obj = obj?;
            items.data.extend_from_slice(&item(&obj)?);
            items.ends.push(items.data.len());
        }
        Ok(items)
    }

    /// Each item's bytes, in order.
    pub fn slices(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let s = &self.data[start..end];
                start = end;
                s
            })
            .collect()
    }
}
