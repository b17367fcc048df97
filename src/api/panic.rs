//! No panic crosses into Redis: every callback runs its Rust code under `catch_unwind`.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// The text every caught panic is logged with, at warning level (the integration-test
/// harness fails a test whose server logged it).
pub const CAUGHT_PANIC_LOG: &str = "redbloom: caught a panic";

/// Runs `f`, turning a panic into `None` logged at warning level with `CAUGHT_PANIC_LOG`,
/// where it was caught (`place`) and the panic's message.
#[inline(always)]
pub(super) fn catch_panic<R>(place: &str, f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(payload) => {
            log_caught(place, payload);
            None
        }
    }
}

/// Logs a caught panic (out of line: every command's entry inlines [`catch_panic`]).
#[cold]
#[inline(never)]
fn log_caught(place: &str, payload: Box<dyn std::any::Any + Send>) {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    redis_module::logging::log_warning(format!("{CAUGHT_PANIC_LOG} in {place}: {message}"));
}
