//! The shared logic's refusals as Python exceptions: bad arguments are ValueError, a
//! snapshot file that does not read is `SnapshotError` (a ValueError), an item or filter
//! the server would refuse is `FilterError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::PyErr;
use redbloom_core::client_logic::LogicError;

create_exception!(
    _native,
    SnapshotError,
    PyValueError,
    "A snapshot file that is not one, is damaged or truncated, or of an unknown version."
);
create_exception!(
    _native,
    FilterError,
    PyException,
    "The filter refuses an item or an operation as the server would (full, cannot grow)."
);

/// The Python exception of a refusal.
pub fn to_py(e: LogicError) -> PyErr {
    match e {
        LogicError::Usage(m) => PyValueError::new_err(m),
        LogicError::File(m) => SnapshotError::new_err(m),
        LogicError::Failed(m) => FilterError::new_err(m),
    }
}
