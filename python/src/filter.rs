//! The local filter classes: one native `Filter` holding a [`Local`] (the filter the server
//! would hold, byte for byte), and the four families as its subclasses.

use crate::errors::to_py;
use crate::expandable::ExpandableFilter;
use crate::items::{item, maybe_detach, Items};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use redbloom_core::client_logic::built::{Built, Limits};
use redbloom_core::client_logic::family::{Family, FilterSpec};
use redbloom_core::client_logic::snapshot::{encode, open_file, Local};
use redbloom_core::client_logic::words;
use redbloom_core::counting::{CountingAdd, CountingChain};
use redbloom_core::cuckoo::CuckooHash;
use redbloom_core::limits::{BF_DEFAULT_EXPANSION, DEFAULT_MAX_FILTER_BYTES};
use redbloom_core::static_filter::item_key;

/// A filter held here, with the bytes a server holding it would have.
#[pyclass(subclass, module = "redbloom._native")]
pub struct Filter {
    pub local: Local,
    /// How it was reserved (for a filter made here): `push` checks that the server makes
    /// the same empty filter from it, so the server's defaults are honoured.
    pub spec: Option<FilterSpec>,
    /// The SCANDUMP header of the empty filter it started as (`None` for one loaded).
    pub empty_header: Option<Vec<u8>>,
}

impl Filter {
    pub fn new(local: Local) -> Filter {
        Filter {
            local,
            spec: None,
            empty_header: None,
        }
    }

    /// Runs `f` on the filter as a [`Built`] (the adds the CLI's loads make), then puts it
    /// back.
    fn with_built<T>(&mut self, f: impl FnOnce(&mut Built) -> T) -> PyResult<T> {
        let local = std::mem::replace(&mut self.local, Local::EmptyCuckoo);
        let mut built = match local {
            Local::Bloom(c) => Built::Bloom(c),
            Local::Cuckoo(c) => Built::Cuckoo(c),
            other => {
                self.local = other;
                return Err(PyTypeError::new_err("this filter takes no adds"));
            }
        };
        let out = f(&mut built);
        self.local = match built {
            Built::Bloom(c) => Local::Bloom(c),
            Built::Cuckoo(c) => Local::Cuckoo(c),
            Built::Static(s) => Local::Static(s),
            Built::Expandable(f) => Local::Expandable(f),
        };
        Ok(out)
    }
}

/// `filter` as a Python object of its family's class (an expandable filter: its own
/// class, [`ExpandableFilter`]).
pub fn wrap(py: Python<'_>, filter: Filter) -> PyResult<Py<PyAny>> {
    if let Local::Expandable(f) = filter.local {
        let xf = ExpandableFilter {
            filter: *f,
            reserved: None,
        };
        return Ok(Py::new(py, xf)?.into_any());
    }
    let family = filter.local.family();
    let init = PyClassInitializer::from(filter);
    Ok(match family {
        Family::Bf => Py::new(py, init.add_subclass(BloomFilter))?.into_any(),
        Family::Cf => Py::new(py, init.add_subclass(CuckooFilter))?.into_any(),
        Family::Cbf => Py::new(py, init.add_subclass(CountingBloomFilter))?.into_any(),
        Family::Sf => Py::new(py, init.add_subclass(StaticFilter))?.into_any(),
        Family::Xf => return Err(PyValueError::new_err("an unfinished expandable filter")),
    })
}

/// SCANDUMP replies as Python (iterator, bytes) pairs.
type PyChunks<'py> = Vec<(i64, Bound<'py, PyBytes>)>;

fn bool_list(list: &[bool], py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(PyList::new(py, list)?.into_any().unbind())
}

#[pymethods]
impl Filter {
    /// The family: "bf", "cf", "cbf" or "static".
    #[getter]
    fn family(&self) -> &'static str {
        self.local.family().name()
    }

    /// Adds one item; returns whether it was new (BF.ADD / CF.ADD / CBF.ADD's reply).
    fn add(&mut self, item_obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        let bytes = item(item_obj)?;
        match &mut self.local {
            Local::Bloom(chain) => {
                let pair = chain.hash(&bytes);
                match chain.add(pair, DEFAULT_MAX_FILTER_BYTES) {
                    redbloom_core::bloom::AddOutcome::Added => Ok(true),
                    redbloom_core::bloom::AddOutcome::Exists => Ok(false),
                    other => Err(to_py(redbloom_core::client_logic::LogicError::Failed(
                        format!(
                            "the filter refuses the item ({})",
                            words::add_outcome(&other)
                        ),
                    ))),
                }
            }
            Local::Counting(chain) => match chain.add(chain.hash(&bytes), DEFAULT_MAX_FILTER_BYTES)
            {
                CountingAdd::Added => Ok(true),
                other => Err(to_py(redbloom_core::client_logic::LogicError::Failed(
                    format!(
                        "the filter refuses the item ({})",
                        words::counting_add(&other)
                    ),
                ))),
            },
            Local::Cuckoo(_) => {
                let one = [bytes.as_ref()];
                self.with_built(|b| b.add_within(&one, 0, &Limits::default()))?
                    .map_err(to_py)?;
                Ok(true)
            }
            _ => Err(PyTypeError::new_err(
                "a static filter takes no items once built (StaticFilter.build)",
            )),
        }
    }

    /// Adds every item of `items` (any iterable of str or bytes) in order (with the GIL
    /// released while the filter is updated, for batches of 8,192 items or more).
    fn add_many(&mut self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<()> {
        let items = Items::collect(items)?;
        let release = items.release_gil();
        let slices = items.slices();
        match &mut self.local {
            Local::Counting(chain) => maybe_detach(py, release, || {
                for (at, s) in slices.iter().enumerate() {
                    if let CountingAdd::Added = chain.add(chain.hash(s), DEFAULT_MAX_FILTER_BYTES) {
                        continue;
                    }
                    return Err(redbloom_core::client_logic::LogicError::Failed(format!(
                        "item {} of the input: the filter refuses it",
                        at + 1
                    )));
                }
                Ok(())
            }),
            _ => {
                let this = &mut *self;
                maybe_detach(py, release, || {
                    this.with_built(|b| b.add_within(slices, 0, &Limits::default()))
                })?
            }
        }
        .map_err(to_py)
    }

    fn __contains__(&self, item_obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.local.contains(&item(item_obj)?))
    }

    /// Whether each item of `items` may be in the filter, as a list of bools (the GIL is
    /// released while they are looked up, for batches of 8,192 items or more).
    fn contains_many(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let items = Items::collect(items)?;
        let release = items.release_gil();
        let slices = items.slices();
        let local = &self.local;
        let answers = maybe_detach(py, release, || {
            let mut out = Vec::with_capacity(slices.len());
            match local {
                Local::Bloom(chain) => {
                    let pairs: Vec<_> = slices.iter().map(|s| chain.hash(s)).collect();
                    chain.contains_each(&pairs, |b| out.push(b));
                }
                Local::Static(f) => {
                    let keys: Vec<u64> = slices.iter().map(|s| item_key(s)).collect();
                    f.contains_each(&keys, |b| out.push(b));
                }
                Local::Cuckoo(f) => {
                    out.extend(slices.iter().map(|s| f.contains(&CuckooHash::new(s))))
                }
                other => out.extend(slices.iter().map(|s| other.contains(s))),
            }
            out
        });
        bool_list(&answers, py)
    }

    /// Items added (for a static filter: distinct items built from).
    fn __len__(&self) -> usize {
        (match &self.local {
            Local::Bloom(c) => c.items(),
            Local::Cuckoo(f) => f.num_items(),
            Local::Counting(c) => c.items(),
            Local::Static(f) => f.items(),
            // Never held by a `Filter` (`wrap` makes an `ExpandableFilter` of it).
            Local::Expandable(f) => f.items(),
            Local::XfLoading(_) | Local::EmptyCuckoo => 0,
        }) as usize
    }

    /// The filter's figures, named as the server's INFO reply's (lowercase).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::info::info(py, &self.local)
    }

    /// The SCANDUMP replies a server holding this filter gives: `[(iterator, data), …]`,
    /// the header first (empty for an empty Cuckoo filter).
    fn chunks<'py>(&self, py: Python<'py>) -> PyResult<PyChunks<'py>> {
        let chunks = py.detach(|| self.local.chunks());
        Ok(chunks
            .into_iter()
            .map(|(i, d)| (i, PyBytes::new(py, &d)))
            .collect())
    }

    /// Writes the filter to `path` as a redbloom snapshot file (`redbloom check` reads it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let file = py.detach(|| encode(self.local.family(), &self.local.chunks()));
        std::fs::write(&path, file)?;
        Ok(())
    }

    /// The RESERVE words this filter was made with (`None` for a loaded or pulled one).
    fn _reserve_words<'py>(&self, py: Python<'py>, key: &str) -> Option<Vec<Bound<'py, PyBytes>>> {
        let spec = self.spec.as_ref()?;
        Some(
            spec.reserve(key, spec.capacity)
                .iter()
                .map(|w| PyBytes::new(py, w))
                .collect(),
        )
    }

    /// The SCANDUMP header of the empty filter it was made as (`None` for a loaded one).
    fn _empty_header<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.empty_header.as_ref().map(|h| PyBytes::new(py, h))
    }

    /// Writes this filter to `key` through `client` (a redis-py `Redis` or `RedisCluster`),
    /// all or nothing: built under a temporary key in `key`'s slot and renamed into place
    /// once complete; `key` must not exist. An interrupt or a dropped connection leaves
    /// `key` as it was. `progress`, if given, is called with the bytes sent so far. With a
    /// `redis.asyncio` client it returns an awaitable.
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

    /// Pickling: the filter's family and SCANDUMP replies (so filters built in worker
    /// processes come back to the parent whole).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (&'static str, PyChunks<'py>))> {
        let py = slf.py();
        let rebuild = py.import("redbloom._native")?.getattr("from_chunks")?;
        let this = slf.borrow();
        Ok((rebuild, (this.family(), this.chunks(py)?)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<redbloom {} filter: {} items>",
            self.local.family().name(),
            self.__len__()
        )
    }
}

/// Reads a snapshot file (`redbloom export`'s or `save`'s) as a local filter.
#[pyfunction]
pub fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Py<PyAny>> {
    let bytes = std::fs::read(&path)?;
    let name = path.display().to_string();
    let local = py.detach(|| open_file(&name, &bytes)).map_err(to_py)?;
    wrap(py, Filter::new(local))
}

fn made(spec: FilterSpec, local: Local) -> Filter {
    let empty_header = local.chunks().first().map(|c| c.1.clone());
    Filter {
        local,
        spec: Some(spec),
        empty_header,
    }
}

/// A scalable Bloom filter, as `BF.RESERVE key error_rate capacity [EXPANSION n]
/// [NONSCALING] [BLOCKED]` makes it.
#[pyclass(extends = Filter, module = "redbloom._native")]
pub struct BloomFilter;

#[pymethods]
impl BloomFilter {
    #[new]
    #[pyo3(signature = (capacity, error_rate = 0.01, expansion = None, non_scaling = false, blocked = false))]
    fn new(
        capacity: u64,
        error_rate: f64,
        expansion: Option<u32>,
        non_scaling: bool,
        blocked: bool,
    ) -> PyResult<(Self, Filter)> {
        let spec = FilterSpec {
            family: Family::Bf,
            error_rate,
            capacity,
            expansion,
            nonscaling: non_scaling,
            blocked,
        };
        let built = Built::new(&spec, capacity).map_err(to_py)?;
        let Built::Bloom(chain) = built else {
            unreachable!("a bf spec builds a Bloom filter")
        };
        Ok((BloomFilter, made(spec, Local::Bloom(chain))))
    }
}

/// A Cuckoo filter, as `CF.RESERVE key capacity [EXPANSION n]` makes it (bucket size 2,
/// 20 max iterations, the server's defaults).
#[pyclass(extends = Filter, module = "redbloom._native")]
pub struct CuckooFilter;

#[pymethods]
impl CuckooFilter {
    #[new]
    #[pyo3(signature = (capacity, expansion = None))]
    fn new(capacity: u64, expansion: Option<u32>) -> PyResult<(Self, Filter)> {
        let spec = FilterSpec {
            family: Family::Cf,
            error_rate: 0.01,
            capacity,
            expansion,
            nonscaling: false,
            blocked: false,
        };
        let Built::Cuckoo(filter) = Built::new(&spec, capacity).map_err(to_py)? else {
            unreachable!("a cf spec builds a Cuckoo filter")
        };
        let mut f = made(spec, Local::Cuckoo(filter));
        // An empty Cuckoo filter has no SCANDUMP header; push compares CF.INFO instead.
        f.empty_header = None;
        Ok((CuckooFilter, f))
    }
}

/// A counting Bloom filter (redbloom's CBF), as `CBF.RESERVE key error_rate capacity
/// [EXPANSION n] [NONSCALING]` makes it.
#[pyclass(extends = Filter, module = "redbloom._native")]
pub struct CountingBloomFilter;

#[pymethods]
impl CountingBloomFilter {
    #[new]
    #[pyo3(signature = (capacity, error_rate = 0.01, expansion = None, non_scaling = false))]
    fn new(
        capacity: u64,
        error_rate: f64,
        expansion: Option<u32>,
        non_scaling: bool,
    ) -> PyResult<(Self, Filter)> {
        let spec = FilterSpec {
            family: Family::Cbf,
            error_rate,
            capacity,
            expansion,
            nonscaling: non_scaling,
            blocked: false,
        };
        spec.validate().map_err(to_py)?;
        let chain = CountingChain::new(
            capacity,
            error_rate,
            expansion.unwrap_or(BF_DEFAULT_EXPANSION),
            !non_scaling,
            DEFAULT_MAX_FILTER_BYTES,
        )
        .map_err(|e| {
            PyValueError::new_err(format!("cannot make the filter: {}", words::link_error(&e)))
        })?;
        Ok((CountingBloomFilter, made(spec, Local::Counting(chain))))
    }
}

/// A static filter (redbloom's SF): built whole from a known set, as `SF.BUILD key
/// error_rate ITEMS …` builds it; it never changes, so a local copy answers for ever.
#[pyclass(extends = Filter, module = "redbloom._native")]
pub struct StaticFilter;

#[pymethods]
impl StaticFilter {
    /// The static filter of `items` (duplicates allowed) at `error_rate`.
    #[staticmethod]
    #[pyo3(signature = (items, error_rate = 0.01))]
    fn build(py: Python<'_>, items: &Bound<'_, PyAny>, error_rate: f64) -> PyResult<Py<PyAny>> {
        let keys: Vec<u64> = Items::collect(items)?
            .slices()
            .iter()
            .map(|s| item_key(s))
            .collect();
        let built = py
            .detach(|| Built::build_static(keys, error_rate, &Limits::default()))
            .map_err(to_py)?;
        let Built::Static(filter) = built else {
            unreachable!("build_static builds a static filter")
        };
        wrap(py, Filter::new(Local::Static(filter)))
    }
}
