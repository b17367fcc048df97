//! `ExpandableFilter`: redbloom's expandable filter (XF.*) held here, with the bytes a
//! server holding it would have (`redbloom_core::expandable`). It is its own class, not a
//! [`Filter`](crate::filter::Filter) (its adds, deletes and counts are its own), but goes
//! through the shared client logic as the other families: `Family::Xf`, `Local::Expandable`
//! (what `load`, `pull` and `from_chunks` make of an XF dump) and the snapshot files
//! (`save`).

use crate::errors::FilterError;
use crate::items::{item, maybe_detach, Items};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use redbloom_core::client_logic::family::Family;
use redbloom_core::client_logic::snapshot::encode;
use redbloom_core::expandable::{chunk, header, Loader, XFilter, XfError, XfParams};
use redbloom_core::fmt::shortest;
use redbloom_core::limits::{DEFAULT_MAX_FILTER_BYTES, XF_DEFAULT_CAPACITY, XF_DEFAULT_ERROR_RATE};

/// The name `TYPE` replies for an XF key (the module's type).
pub const XF_TYPE: &str = Family::Xf.type_names()[0];

/// The reply text of a refusal without the server's `ERR ` prefix.
fn text(e: XfError) -> String {
    let t = e.to_string();
    t.strip_prefix("ERR ").map(str::to_owned).unwrap_or(t)
}

/// A refusal to make or load a filter: a bad argument (ValueError).
fn bad_argument(e: XfError) -> PyErr {
    PyValueError::new_err(text(e))
}

/// A refusal of an item (the filter cannot take it): `FilterError`, as the server's.
fn refused(e: XfError) -> PyErr {
    FilterError::new_err(format!("the filter refuses the item ({})", text(e)))
}

/// An expandable filter, as `XF.RESERVE key error_rate CAPACITY capacity` makes it (or
/// `XF.ADD` on a new key, with the defaults): it grows with its items at a constant
/// false-positive rate, and items can be removed.
#[pyclass(module = "redbloom._native")]
pub struct ExpandableFilter {
    pub filter: XFilter,
    /// How it was reserved, for a filter made here: `push` checks that the server's
    /// XF.RESERVE of it makes the same empty filter. `None` for a pulled or loaded one.
    pub reserved: Option<XfParams>,
}

type PyChunks<'py> = Vec<(i64, Bound<'py, PyBytes>)>;

/// Every (iterator, data) pair XF.SCANDUMP replies for `f`, header first.
fn all_chunks(f: &XFilter) -> Vec<(i64, Vec<u8>)> {
    let mut out = vec![(1, header(f))];
    let mut iter = 1;
    while let Some((next, data)) = chunk(f, iter) {
        out.push((next, data));
        iter = next;
    }
    out
}

/// The filter XF.LOADCHUNK of `chunks` (header first) makes, checked whole.
pub fn xf_from_chunks(chunks: &[(i64, Vec<u8>)]) -> Result<XFilter, XfError> {
    let ((_, head), rest) = chunks.split_first().ok_or(XfError::BadData)?;
    let mut loader = Loader::from_header(head, DEFAULT_MAX_FILTER_BYTES)?;
    for (iter, data) in rest {
        loader.load_chunk(*iter, data)?;
    }
    loader.finish()
}

#[pymethods]
impl ExpandableFilter {
    #[new]
    #[pyo3(signature = (error_rate = XF_DEFAULT_ERROR_RATE, capacity = XF_DEFAULT_CAPACITY))]
    fn new(error_rate: f64, capacity: u64) -> PyResult<Self> {
        let params = XfParams {
            error_rate,
            initial_capacity: capacity,
        };
        let filter = XFilter::new(params, DEFAULT_MAX_FILTER_BYTES).map_err(bad_argument)?;
        Ok(ExpandableFilter {
            filter,
            reserved: Some(params),
        })
    }

    /// The family: "xf".
    #[getter]
    fn family(&self) -> &'static str {
        "xf"
    }

    /// Adds one item (XF.ADD: always inserts, an item added twice is held twice); returns
    /// True.
    fn add(&mut self, item_obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = XFilter::hash(&item(item_obj)?);
        self.filter
            .insert(h, DEFAULT_MAX_FILTER_BYTES)
            .map_err(refused)?;
        Ok(true)
    }

    /// Adds every item of `items` (any iterable of str or bytes) in order, as XF.MADD (the
    /// GIL released for batches of 8,192 items or more). A refused item stops the batch:
    /// the items before it stay added.
    fn add_many(&mut self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<()> {
        let items = Items::collect(items)?;
        let release = items.release_gil();
        let slices = items.slices();
        let filter = &mut self.filter;
        maybe_detach(py, release, || {
            for (at, s) in slices.iter().enumerate() {
                if let Err(e) = filter.insert(XFilter::hash(s), DEFAULT_MAX_FILTER_BYTES) {
                    return Err((at, e));
                }
            }
            Ok(())
        })
        .map_err(|(at, e)| {
            FilterError::new_err(format!(
                "item {} of the input: the filter refuses it ({})",
                at + 1,
                text(e)
            ))
        })
    }

    fn __contains__(&self, item_obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.filter.contains(XFilter::hash(&item(item_obj)?)))
    }

    /// Whether each item of `items` may be in the filter, as a list of bools (XF.MEXISTS).
    fn contains_many(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let items = Items::collect(items)?;
        let release = items.release_gil();
        let slices = items.slices();
        let filter = &self.filter;
        let answers: Vec<bool> = maybe_detach(py, release, || {
            slices
                .iter()
                .map(|s| filter.contains(XFilter::hash(s)))
                .collect()
        });
        Ok(PyList::new(py, answers)?.into_any().unbind())
    }

    /// Removes one entry of `item` (XF.DEL); returns whether one matched. Remove only
    /// items added: removing another may remove an added item's entry (a false negative),
    /// as for a Cuckoo filter.
    fn remove(&mut self, item_obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.filter.delete(XFilter::hash(&item(item_obj)?)))
    }

    /// The entries matching `item` (XF.COUNT): an upper bound of the times it was added.
    fn count(&self, item_obj: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.filter.count(XFilter::hash(&item(item_obj)?)))
    }

    /// Items added and not removed (XF.CARD).
    fn __len__(&self) -> usize {
        self.filter.items() as usize
    }

    /// XF.INFO's figures, its field names lowercased with underscores.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let i = self.filter.info();
        let d = PyDict::new(py);
        d.set_item("family", "xf")?;
        d.set_item("error_rate", i.error_rate)?;
        d.set_item("number_of_items", i.items)?;
        d.set_item("capacity", i.capacity)?;
        d.set_item("expansions", i.expansions)?;
        d.set_item("partitions", i.partitions)?;
        d.set_item("size", i.bytes)?;
        d.set_item("bits_per_item", i.bits_per_item)?;
        d.set_item("error_rate_bound", i.fp_bound)?;
        Ok(d)
    }

    /// The XF.SCANDUMP replies a server holding this filter gives: `[(iterator, data), …]`,
    /// the header first.
    fn chunks<'py>(&self, py: Python<'py>) -> PyChunks<'py> {
        let chunks = py.detach(|| all_chunks(&self.filter));
        chunks
            .into_iter()
            .map(|(i, d)| (i, PyBytes::new(py, &d)))
            .collect()
    }

    /// The XF.RESERVE words this filter was made with (`None` for a pulled one).
    fn _reserve_words<'py>(&self, py: Python<'py>, key: &str) -> Option<Vec<Bound<'py, PyBytes>>> {
        let p = self.reserved?;
        let words = [
            "XF.RESERVE".to_owned(),
            key.to_owned(),
            shortest(p.error_rate),
            "CAPACITY".to_owned(),
            p.initial_capacity.to_string(),
        ];
        Some(
            words
                .iter()
                .map(|w| PyBytes::new(py, w.as_bytes()))
                .collect(),
        )
    }

    /// The XF.SCANDUMP header of the empty filter it was made as (`None` for a pulled one).
    fn _empty_header<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Some(p) = self.reserved else {
            return Ok(None);
        };
        let empty = XFilter::new(p, DEFAULT_MAX_FILTER_BYTES).map_err(bad_argument)?;
        Ok(Some(PyBytes::new(py, &header(&empty))))
    }

    /// Writes this filter to `key` through `client` (a redis-py `Redis` or `RedisCluster`),
    /// all or nothing, as the other filters' `push`: built under a temporary key in `key`'s
    /// slot with XF.LOADCHUNK and renamed into place once complete; `key` must not exist.
    #[pyo3(signature = (client, key, progress = None))]
    fn push<'py>(
        slf: &Bound<'py, Self>,
        client: &Bound<'py, PyAny>,
        key: &str,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let io = slf.py().import("redbloom._io")?;
        io.call_method1("push", (client, key, slf, progress))
    }

    /// Writes the filter to `path` as a redbloom snapshot file (`redbloom check` and
    /// `redbloom.load` read it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let file = py.detach(|| encode(Family::Xf, &all_chunks(&self.filter)));
        std::fs::write(&path, file)?;
        Ok(())
    }

    /// Pickling: the filter's XF.SCANDUMP replies.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (PyChunks<'py>,))> {
        let py = slf.py();
        let rebuild = py.import("redbloom._native")?.getattr("xf_from_chunks")?;
        Ok((rebuild, (slf.borrow().chunks(py),)))
    }

    fn __repr__(&self) -> String {
        format!("<redbloom xf filter: {} items>", self.filter.items())
    }
}

/// The expandable filter of XF.SCANDUMP replies `chunks` (header first); `key` names it
/// in errors (ValueError when the chunks do not make a filter).
#[pyfunction]
#[pyo3(name = "xf_from_chunks", signature = (chunks, key = "chunks"))]
pub fn xf_from_chunks_py(
    py: Python<'_>,
    chunks: Vec<(i64, Vec<u8>)>,
    key: &str,
) -> PyResult<ExpandableFilter> {
    let filter = py.detach(|| xf_from_chunks(&chunks)).map_err(|e| {
        PyValueError::new_err(format!(
            "{key}: not an expandable filter's dump ({})",
            text(e)
        ))
    })?;
    Ok(ExpandableFilter {
        filter,
        reserved: None,
    })
}
