//! `redbloom._native`: the native half of the `redbloom` Python package — local filters
//! with the server's bytes ([`filter`]) and the client logic every redbloom client shares
//! (`redbloom_core::client_logic`: slots, sharded layouts and routing, snapshot files, the
//! all-or-nothing ship's names and scripts). The I/O is Python's, through redis-py.
//! Unsafe code is allowed in `items` (reading items in place; see there) and `heap` (the
//! counting allocator) alone.
#![deny(unsafe_code)]

mod errors;
mod expandable;
mod filter;
mod heap;
mod info;
mod items;
mod layout;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use redbloom_core::client_logic::built::{Built, Limits};
use redbloom_core::client_logic::family::Family;
use redbloom_core::client_logic::ship;
use redbloom_core::client_logic::slot::key_slot as slot_of;
use redbloom_core::client_logic::snapshot::Local;

#[global_allocator]
static HEAP: heap::Counted = heap::Counted;

/// Bytes the native module has allocated and not freed (its filters' arrays and tables,
/// and any other of its allocations alive now): `python/bench/bench.py memory` measures a
/// filter with it.
#[pyfunction]
fn _heap_bytes() -> usize {
    heap::live()
}

/// The cluster slot of `key` (CLUSTER KEYSLOT), a str (UTF-8) or bytes.
#[pyfunction]
fn key_slot(key: &Bound<'_, PyAny>) -> PyResult<u16> {
    Ok(slot_of(&items::item(key)?))
}

/// The temporary key an all-or-nothing push of `key` builds under (in `key`'s slot).
#[pyfunction]
fn temp_key(key: &str) -> String {
    ship::temp_key(key)
}

fn family_of(name: &str) -> PyResult<Family> {
    Family::parse(name).map_err(errors::to_py)
}

/// The local filter of `family`'s SCANDUMP replies `chunks` (header first); `key` names it
/// in errors.
#[pyfunction]
#[pyo3(signature = (family, chunks, key = "chunks"))]
fn from_chunks(
    py: Python<'_>,
    family: &str,
    chunks: Vec<(i64, Vec<u8>)>,
    key: &str,
) -> PyResult<Py<PyAny>> {
    let family = family_of(family)?;
    let local = py
        .detach(|| Local::from_chunks(family, &chunks, key))
        .map_err(errors::to_py)?;
    filter::wrap(py, filter::Filter::new(local))
}

/// The empty Cuckoo filter a CF.INFO reply (as (field, value) text pairs) describes.
#[pyfunction]
fn cuckoo_from_info(py: Python<'_>, info: Vec<(String, String)>) -> PyResult<Py<PyAny>> {
    let built = Built::from_cuckoo_info(&info, &Limits::default()).map_err(errors::to_py)?;
    let Built::Cuckoo(f) = built else {
        unreachable!("from_cuckoo_info builds a Cuckoo filter")
    };
    filter::wrap(py, filter::Filter::new(Local::Cuckoo(f)))
}

/// The empty Bloom filter's SCANDUMP header a server's reserve gives, checked (a header
/// this package cannot read is an error); returns it unchanged.
#[pyfunction]
fn check_bloom_header<'py>(py: Python<'py>, header: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    Built::from_bloom_header(header, &Limits::default()).map_err(errors::to_py)?;
    Ok(PyBytes::new(py, header))
}

/// The family ("bf", "cf", "cbf", "static") of a key whose TYPE is `kind`, or None.
#[pyfunction]
fn family_of_type(kind: &str) -> Option<&'static str> {
    Family::of_type(kind).map(Family::name)
}

/// The command prefix ("BF", "CF", "CBF", "SF") of a family.
#[pyfunction]
fn prefix(family: &str) -> PyResult<&'static str> {
    Ok(family_of(family)?.prefix())
}

/// The union (or, with `intersect`, the intersection) of `filters` (one family and shape):
/// the filter BF.MERGE / CBF.MERGE / CF.MERGE of them makes on a server, byte for byte.
#[pyfunction]
#[pyo3(signature = (filters, intersect = false))]
fn merge(
    py: Python<'_>,
    filters: Vec<PyRef<'_, filter::Filter>>,
    intersect: bool,
) -> PyResult<Py<PyAny>> {
    let locals: Vec<&Local> = filters.iter().map(|f| &f.local).collect();
    let names: Vec<String> = (0..locals.len()).map(|i| format!("filter {i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let merged = py
        .detach(|| redbloom_core::client_logic::merge::merge(&locals, &names, intersect))
        .map_err(|e| match e {
            // A shape or family mismatch is a bad argument here, not a bad file.
            redbloom_core::client_logic::LogicError::File(m) => {
                pyo3::exceptions::PyValueError::new_err(m)
            }
            other => errors::to_py(other),
        })?;
    filter::wrap(py, filter::Filter::new(merged))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<filter::Filter>()?;
    m.add_class::<filter::BloomFilter>()?;
    m.add_class::<filter::CuckooFilter>()?;
    m.add_class::<filter::CountingBloomFilter>()?;
    m.add_class::<filter::StaticFilter>()?;
    m.add_class::<layout::Layout>()?;
    m.add_class::<expandable::ExpandableFilter>()?;
    m.add_function(wrap_pyfunction!(expandable::xf_from_chunks_py, m)?)?;
    m.add("XF_TYPE", expandable::XF_TYPE)?;
    m.add_function(wrap_pyfunction!(filter::load, m)?)?;
    m.add_function(wrap_pyfunction!(key_slot, m)?)?;
    m.add_function(wrap_pyfunction!(temp_key, m)?)?;
    m.add_function(wrap_pyfunction!(from_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(cuckoo_from_info, m)?)?;
    m.add_function(wrap_pyfunction!(check_bloom_header, m)?)?;
    m.add_function(wrap_pyfunction!(family_of_type, m)?)?;
    m.add_function(wrap_pyfunction!(prefix, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(_heap_bytes, m)?)?;
    m.add("SWAP_SCRIPT", ship::SWAP)?;
    m.add("RUN_ID_SCRIPT", ship::RUN_ID)?;
    m.add("SnapshotError", m.py().get_type::<errors::SnapshotError>())?;
    m.add("FilterError", m.py().get_type::<errors::FilterError>())?;
    Ok(())
}
