//! What a URL given to [`crate::Conn`] says, and why opening a connection to it failed, in
//! words (the URL's password masked).

use crate::error::{Error, Result};
use std::time::Duration;

/// Why opening a connection got no answer in time.
pub(crate) fn no_answer(timeout: Duration) -> String {
    format!(
        "no answer within {} s (not a Redis server, or it is stuck)",
        timeout.as_secs_f64()
    )
}

/// Why opening a connection failed, in words: refused, no answer, not Redis.
pub(crate) fn open_error(url: &str, timeout: Duration, e: &redis::RedisError) -> Error {
    let url = crate::error::mask_url(url);
    let why = if e.is_connection_refusal() {
        "connection refused".to_string()
    } else if e.is_timeout() {
        no_answer(timeout)
    } else if matches!(e.kind(), redis::ErrorKind::Parse) {
        format!(
            "the answer is not Redis' protocol (not a Redis server?): {}",
            crate::error::plain(e)
        )
    } else if matches!(e.kind(), redis::ErrorKind::AuthenticationFailed) {
        "authentication failed (wrong user name or password)".to_string()
    } else {
        crate::error::plain(e)
    };
    Error::connection(format!("cannot connect to {url}: {why}"))
}

/// What a URL given says: `redis://`, `rediss://`, `valkey://`, `valkeys://` URLs, and
/// `host:port` (no scheme: `redis://` is meant). One that does not parse is a usage error,
/// the URL echoed with its password masked.
pub fn parse_url(url: &str) -> Result<redis::ConnectionInfo> {
    let full = if url.contains(":/") {
        url.to_string()
    } else {
        format!("redis://{url}")
    };
    redis::IntoConnectionInfo::into_connection_info(full.as_str()).map_err(|e| {
        Error::usage(format!(
            "{}: {} (expected a redis:// URL or host:port)",
            crate::error::mask_url(url),
            crate::error::plain(&e)
        ))
    })
}
