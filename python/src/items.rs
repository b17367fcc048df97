//! Python items as bytes: `bytes` as they are, `str` encoded as UTF-8 (as redis-py encodes
//! it), `bytearray` / `memoryview` as their bytes; anything else is a TypeError saying what
//! to pass (an int is not guessed at: redis-py would send `str(n)`, which the caller can
//! pass explicitly).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};
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
        let list = match iterable.cast::<PyList>() {
            Ok(list) => list.clone(),
            Err(_) => PyList::new(
                iterable.py(),
                iterable.try_iter()?.collect::<PyResult<Vec<_>>>()?,
            )?,
        };
        if let Some(items) = Items::ascii(&list)? {
            return Ok(items);
        }
        let mut items = Items {
            data: Vec::new(),
            ends: Vec::with_capacity(list.len()),
        };
        for obj in list.iter() {
            items.data.extend_from_slice(&item(&obj)?);
            items.ends.push(items.data.len());
        }
        Ok(items)
    }

    /// The common case fast: a list of ASCII `str` is joined and encoded once (one
    /// allocation, not one per item, which the stable ABI of CPython 3.9 would make), each
    /// item's bytes being its characters. `None` for anything else (non-ASCII text,
    /// bytes, other types), which goes item by item.
    fn ascii(list: &Bound<'_, PyList>) -> PyResult<Option<Items>> {
        if list.is_empty() {
            return Ok(None);
        }
        let Ok(joined) = PyString::new(list.py(), "").call_method1("join", (list,)) else {
            return Ok(None);
        };
        if !joined.call_method0("isascii")?.extract::<bool>()? {
            return Ok(None);
        }
        let data = joined
            .cast::<PyString>()?
            .to_cow()?
            .into_owned()
            .into_bytes();
        let mut ends = Vec::with_capacity(list.len());
        let mut end = 0;
        for obj in list.iter() {
            end += obj.len()?;
            ends.push(end);
        }
        Ok(Some(Items { data, ends }))
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
