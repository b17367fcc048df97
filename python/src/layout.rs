//! A sharded filter's layout (`redbloom_core::client_logic::sharding`): the CLI's
//! descriptor, member keys and routing, for the Python `ShardedFilter`.

use crate::errors::to_py;
use crate::items::Items;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use redbloom_core::client_logic::family::{Family, FilterSpec};
use redbloom_core::client_logic::sharding::{self, route};
use std::collections::HashMap;

#[pyclass(module = "redbloom._native", frozen)]
pub struct Layout {
    inner: sharding::Layout,
}

#[pymethods]
impl Layout {
    /// A new layout of `shards` members (the CLI's `shard create`).
    #[new]
    #[pyo3(signature = (name, shards, family, capacity, error_rate = 0.01, expansion = None, non_scaling = false, blocked = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &str,
        shards: u32,
        family: &str,
        capacity: u64,
        error_rate: f64,
        expansion: Option<u32>,
        non_scaling: bool,
        blocked: bool,
    ) -> PyResult<Layout> {
        let spec = FilterSpec {
            family: Family::parse(family).map_err(to_py)?,
            error_rate,
            capacity,
            expansion,
            nonscaling: non_scaling,
            blocked,
        };
        Ok(Layout {
            inner: sharding::Layout::new(name, shards, spec).map_err(to_py)?,
        })
    }

    /// The layout a descriptor hash's fields (HGETALL, decoded) describe.
    #[staticmethod]
    fn parse(name: &str, fields: HashMap<String, String>) -> PyResult<Layout> {
        Ok(Layout {
            inner: sharding::Layout::parse(name, &fields).map_err(to_py)?,
        })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn family(&self) -> &'static str {
        self.inner.spec.family.name()
    }

    #[getter]
    fn prefix(&self) -> &'static str {
        self.inner.spec.family.prefix()
    }

    #[getter]
    fn members(&self) -> Vec<String> {
        self.inner.members.clone()
    }

    #[getter]
    fn member_capacity(&self) -> u64 {
        self.inner.member_capacity()
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.inner.spec.capacity
    }

    #[getter]
    fn error_rate(&self) -> f64 {
        self.inner.spec.error_rate
    }

    /// The descriptor hash's fields, in the order they are written.
    fn fields(&self) -> Vec<(String, String)> {
        self.inner.fields()
    }

    /// Each member's RESERVE command, as words.
    fn reserves<'py>(&self, py: Python<'py>) -> Vec<Vec<Bound<'py, PyBytes>>> {
        let capacity = self.inner.member_capacity();
        self.inner
            .members
            .iter()
            .map(|m| {
                self.inner
                    .spec
                    .reserve(m, capacity)
                    .iter()
                    .map(|w| PyBytes::new(py, w))
                    .collect()
            })
            .collect()
    }

    /// The items as bytes (a str as its UTF-8, as the routing reads it), and for each
    /// member the positions of its items and those bytes, in order: a sharded add's or
    /// lookup's plan in one pass.
    #[allow(clippy::type_complexity)]
    fn group<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, Vec<(Vec<usize>, Bound<'py, PyList>)>)> {
        // Frozen: bytes and lists are made while the views are read.
        let items = Items::collect_frozen(items)?;
        let shards = self.inner.shards();
        let all = PyList::empty(py);
        let mut groups: Vec<(Vec<usize>, Bound<'py, PyList>)> = (0..shards)
            .map(|_| (Vec::new(), PyList::empty(py)))
            .collect();
        for (at, s) in items.slices().iter().enumerate() {
            let bytes = PyBytes::new(py, s);
            let (indices, data) = &mut groups[route(s, shards) as usize];
            indices.push(at);
            data.append(&bytes)?;
            all.append(bytes)?;
        }
        Ok((all, groups))
    }

    /// Each item's member index (XXH3-64 of its bytes mod the member count).
    fn route(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let items = Items::collect(items)?;
        let slices = items.slices();
        let shards = self.inner.shards();
        let route_all = || slices.iter().map(|s| route(s, shards)).collect();
        Ok(crate::items::maybe_detach(
            py,
            items.release_gil(),
            route_all,
        ))
    }
}
