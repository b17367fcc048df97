//! Python items as bytes: `bytes` as they are, `str` encoded as UTF-8 (as redis-py encodes
//! it), `bytearray` as its bytes; anything else is a TypeError saying what to pass (an int
//! is not guessed at: redis-py would send `str(n)`, which the caller can pass explicitly).
//!
//! Items are read in place, not copied: a `bytes` is its own buffer, a `str` the UTF-8 that
//! CPython's `PyUnicode_AsUTF8AndSize` returns — for a compact ASCII str (the common key)
//! the str's own characters, for any other str a UTF-8 copy CPython makes once and keeps
//! with the str until it is freed (as for every C API that reads a str as UTF-8). Only a
//! `bytearray` (mutable) is copied.
//!
//! Why the declaration below is sound under the `abi3-py39` wheel: `PyUnicode_AsUTF8AndSize`
//! is a public function of every CPython 3 (since 3.3), exported by the interpreter with
//! this signature and these semantics, and part of the stable ABI since 3.10 (PEP 652
//! lists it). pyo3-ffi declares it only from `Py_3_10` because CPython 3.9's stable-ABI
//! list does not name it, but the interpreter a CPython ≥ 3.9 abi3 wheel loads into
//! exports it all the same (on Linux and macOS an extension's symbols resolve against the
//! running interpreter). Windows' `python3.dll` exports only the listed functions, so
//! there the str path uses pyo3's copying conversion instead.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use std::borrow::Cow;

/// A batch of at least this many items is worked on with the GIL released (other Python
/// threads run meanwhile). Below it the GIL stays held: releasing it needs the items
/// frozen first (a list copied into a tuple, so no other thread can change it), which
/// costs more than a few thousand items take to add (`python/bench/bench.py local`).
pub const RELEASE_GIL_AT: usize = 8192;

/// What a TypeError for an item of type `kind` says.
pub fn refusal(kind: &str) -> String {
    format!(
        "redbloom items are str (sent as UTF-8, as redis-py sends it) or bytes, not {kind}; \
         pass str(x) or bytes (e.g. str(42) or (42).to_bytes(8, 'little'))"
    )
}

#[cfg(not(windows))]
#[allow(unsafe_code)]
extern "C" {
    /// A str's UTF-8 and its length, borrowed from the str (see the module's docs).
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

/// The UTF-8 of a str, borrowed from it.
///
/// # Safety
/// `obj` is a live str (or subclass) and the GIL is held.
#[cfg(not(windows))]
#[allow(unsafe_code)]
unsafe fn str_view<'a>(py: Python<'_>, obj: *mut ffi::PyObject) -> PyResult<&'a [u8]> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: the caller's; CPython writes the length and returns the UTF-8 (owned by the
    // str, unchanged while it lives) or NULL with an exception set (a lone surrogate).
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(obj, &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
    }
}

/// The bytes a str or bytes (or a subclass) holds, borrowed from it; `None` for any other
/// type (and on Windows for a str).
///
/// # Safety
/// `obj` is a live object and the GIL is held. The slice is valid while `obj` lives: a
/// bytes' buffer and a str's UTF-8 never change or move once made.
#[allow(unsafe_code)]
unsafe fn view<'a>(py: Python<'_>, obj: *mut ffi::PyObject) -> Option<PyResult<&'a [u8]>> {
    // SAFETY: the caller's (a live object, the GIL held); the type objects are statics
    // of the interpreter.
    #[cfg(windows)]
    let _ = py;
    unsafe {
        let ty = ffi::Py_TYPE(obj);
        let exact_str = std::ptr::eq(ty, &raw mut ffi::PyUnicode_Type);
        let exact_bytes = !exact_str && std::ptr::eq(ty, &raw mut ffi::PyBytes_Type);
        #[cfg(not(windows))]
        if exact_str || (!exact_bytes && ffi::PyUnicode_Check(obj) != 0) {
            return Some(str_view(py, obj));
        }
        if exact_bytes || ffi::PyBytes_Check(obj) != 0 {
            let data = ffi::PyBytes_AsString(obj);
            let size = ffi::PyBytes_Size(obj);
            return Some(Ok(std::slice::from_raw_parts(
                data.cast::<u8>(),
                size as usize,
            )));
        }
        None
    }
}

/// One item's bytes (borrowed from a str or bytes; a bytearray's copied).
pub fn item<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    // SAFETY: a Bound is a live object with the GIL held, and it outlives 'a.
    #[allow(unsafe_code)]
    if let Some(bytes) = unsafe { view(obj.py(), obj.as_ptr()) } {
        return bytes.map(Cow::Borrowed);
    }
    other(obj).map(Cow::Owned)
}

/// The bytes of an item that is neither str nor bytes: a bytearray's, copied (and on
/// Windows a str's UTF-8, copied); for any other type the TypeError.
fn other(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    #[cfg(windows)]
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned().into_bytes());
    }
    let kind = obj.get_type().name()?.to_string();
    Err(PyTypeError::new_err(refusal(&kind)))
}

/// Many items, read in place: each item's bytes borrowed from the item, the items held by
/// `holder`.
pub struct Items<'py> {
    /// The list or tuple that holds the items (and so keeps them alive).
    _holder: Bound<'py, PyAny>,
    /// Whether the holder is a tuple this batch alone sees (no thread can change it), so the
    /// views stay valid with the GIL released.
    frozen: bool,
    /// Copies of the bytearrays (each a heap buffer that does not move).
    _copies: Vec<Vec<u8>>,
    /// Each item's bytes: borrowed from `_holder`'s items or `_copies`, so valid while this
    /// value lives (and, unless `frozen`, while no Python code runs: the GIL held, nothing
    /// called that could run Python code); handed out only through [`Items::slices`], which
    /// ties them to `&self`.
    views: Vec<&'py [u8]>,
}

impl<'py> Items<'py> {
    /// The items of any iterable (a `str` or `bytes` itself is refused: iterating it would
    /// add its characters one by one). A list is read where it is, unless the batch is long
    /// enough to release the GIL ([`RELEASE_GIL_AT`]): then it is copied into a tuple
    /// first (the items' references, not their bytes); any other iterable is made a tuple.
    pub fn collect(iterable: &Bound<'py, PyAny>) -> PyResult<Items<'py>> {
        Items::collect_as(iterable, false)
    }

    /// [`Items::collect`], a list always copied into a tuple: for a caller that makes
    /// Python objects while it reads the views (an allocation may run a garbage
    /// collection, and a finalizer could change the list).
    pub fn collect_frozen(iterable: &Bound<'py, PyAny>) -> PyResult<Items<'py>> {
        Items::collect_as(iterable, true)
    }

    fn collect_as(iterable: &Bound<'py, PyAny>, freeze: bool) -> PyResult<Items<'py>> {
        let py = iterable.py();
        let (holder, frozen) = if let Ok(list) = iterable.cast_exact::<PyList>() {
            if freeze || list.len() >= RELEASE_GIL_AT {
                (list.to_tuple().into_any(), true)
            } else {
                (list.clone().into_any(), false)
            }
        } else if iterable.is_exact_instance_of::<PyTuple>() {
            (iterable.clone(), true)
        } else {
            if iterable.is_instance_of::<PyString>() || iterable.is_instance_of::<PyBytes>() {
                return Err(PyTypeError::new_err(
                    "pass an iterable of items (a list, a set, a generator), not one str or \
                     bytes: use add(item) / `item in filter` for a single item",
                ));
            }
            // SAFETY: a Bound is a live object with the GIL held; PySequence_Tuple returns
            // a new reference or NULL with an exception set.
            #[allow(unsafe_code)]
            let tuple = unsafe {
                Bound::from_owned_ptr_or_err(py, ffi::PySequence_Tuple(iterable.as_ptr()))?
            };
            (tuple, true)
        };
        let mut items = Items {
            frozen,
            _copies: Vec::new(),
            views: Vec::new(),
            _holder: holder,
        };
        items.read()?;
        Ok(items)
    }

    /// Fills `views` from the holder's items, in order.
    #[allow(unsafe_code)]
    fn read(&mut self) -> PyResult<()> {
        let py = self._holder.py();
        let holder = self._holder.as_ptr();
        // SAFETY: the holder is a live list or tuple (its exact type was checked or it was
        // just made) and the GIL is held. No Python code runs while the views are read, so
        // a list keeps its items; PyList_GetItem / PyTuple_GetItem return borrowed
        // references the holder keeps alive, NULL (IndexError) past the end.
        unsafe {
            let is_list = ffi::PyList_Check(holder) != 0;
            let len = if is_list {
                ffi::PyList_Size(holder)
            } else {
                ffi::PyTuple_Size(holder)
            };
            self.views.reserve_exact(len.max(0) as usize);
            for i in 0..len {
                let obj = if is_list {
                    ffi::PyList_GetItem(holder, i)
                } else {
                    ffi::PyTuple_GetItem(holder, i)
                };
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                match view(py, obj) {
                    Some(bytes) => self.views.push(bytes?),
                    None => {
                        let copy = other(&Bound::from_borrowed_ptr(py, obj))?;
                        // The copy's heap buffer stays where it is when `_copies` grows.
                        let bytes = std::slice::from_raw_parts(copy.as_ptr(), copy.len());
                        self._copies.push(copy);
                        self.views.push(bytes);
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the batch is worked on with the GIL released: long enough, and frozen.
    pub fn release_gil(&self) -> bool {
        self.frozen && self.views.len() >= RELEASE_GIL_AT
    }

    /// Each item's bytes, in order.
    pub fn slices(&self) -> &[&[u8]] {
        &self.views
    }
}

/// Runs `f` with the GIL released when `release`, else holding it.
pub fn maybe_detach<T: Send>(py: Python<'_>, release: bool, f: impl FnOnce() -> T + Send) -> T {
    if release {
        py.detach(f)
    } else {
        f()
    }
}
