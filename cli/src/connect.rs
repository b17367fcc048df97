//! Connections of every command, with the global `--timeout`.

use redbloom_client::{Conn, Result};
use std::sync::OnceLock;
use std::time::Duration;

static TIMEOUT: OnceLock<Duration> = OnceLock::new();

/// Sets the timeout of every connection of this run (`--timeout`).
pub fn set_timeout(timeout: Duration) {
    let _ = TIMEOUT.set(timeout);
}

/// Connects to `url` (a server or any node of a cluster) within the timeout.
pub fn open(url: &str) -> Result<Conn> {
    Conn::open_with(
        url,
        *TIMEOUT.get_or_init(|| redbloom_client::conn::DEFAULT_TIMEOUT),
    )
}
