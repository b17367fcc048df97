//! `info()`: a local filter's figures, under the names of the server's INFO reply
//! (lowercased, spaces as underscores).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use redbloom_core::client_logic::snapshot::Local;

pub fn info<'py>(py: Python<'py>, local: &Local) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("family", local.family().name())?;
    match local {
        Local::Bloom(c) => {
            d.set_item("capacity", c.capacity())?;
            d.set_item("size", c.mem_usage())?;
            d.set_item("number_of_filters", c.links().len())?;
            d.set_item("number_of_items_inserted", c.items())?;
            d.set_item("expansion_rate", c.is_scaling().then_some(c.growth()))?;
            d.set_item("blocked", c.is_blocked())?;
        }
        Local::Counting(c) => {
            d.set_item("capacity", c.capacity())?;
            d.set_item("size", c.mem_usage())?;
            d.set_item("number_of_filters", c.links().len())?;
            d.set_item("number_of_items_inserted", c.items())?;
            d.set_item("expansion_rate", c.is_scaling().then_some(c.growth()))?;
        }
        Local::Cuckoo(f) => {
            d.set_item("size", f.mem_usage())?;
            d.set_item("number_of_buckets", f.num_buckets())?;
            d.set_item("number_of_filters", f.num_filters())?;
            d.set_item("number_of_items_inserted", f.num_items())?;
            d.set_item("number_of_items_deleted", f.num_deletes())?;
            d.set_item("bucket_size", f.bucket_size())?;
            d.set_item("expansion_rate", f.expansion())?;
            d.set_item("max_iterations", f.max_iterations())?;
        }
        Local::Static(f) => {
            d.set_item("size", f.mem_usage())?;
            d.set_item("number_of_items", f.items())?;
            d.set_item("fingerprint_bits", f.bits())?;
            d.set_item("error_rate", f.requested_error())?;
            d.set_item("guaranteed_error_rate", f.guaranteed_error())?;
        }
        Local::EmptyCuckoo => {
            d.set_item("number_of_items_inserted", 0)?;
        }
        // Never held by a `Filter`: `wrap` makes an `ExpandableFilter` of it.
        Local::Expandable(_) | Local::XfLoading(_) => {}
    }
    Ok(d)
}
