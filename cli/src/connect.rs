//! Connections of every command, with the global `--timeout` and `--tls-ca`.

use redbloom_client::{Conn, Error, Result};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

static TIMEOUT: OnceLock<Duration> = OnceLock::new();
static TLS_CA: OnceLock<Vec<u8>> = OnceLock::new();

/// Sets the timeout of every connection of this run (`--timeout`).
pub fn set_timeout(timeout: Duration) {
    let _ = TIMEOUT.set(timeout);
}

/// Reads the CA certificate `rediss://` servers are checked against (`--tls-ca`).
pub fn set_tls_ca(file: &Path) -> Result<()> {
    let pem = std::fs::read(file)
        .map_err(|e| Error::file(format!("cannot read {}: {e}", file.display())))?;
    let _ = TLS_CA.set(pem);
    Ok(())
}

/// Connects to `url` (a server or any node of a cluster) within the timeout; what a
/// retried command waits for is told on standard error.
pub fn open(url: &str) -> Result<Conn> {
    let mut conn = Conn::open_tls(
        url,
        *TIMEOUT.get_or_init(|| redbloom_client::conn::DEFAULT_TIMEOUT),
        TLS_CA.get().cloned(),
    )?;
    conn.notice = Some(|text| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "redbloom: {text}");
    });
    Ok(conn)
}
