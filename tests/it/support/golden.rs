//! RedisBloom's own output kept as fixtures (core/tests/fixtures/redisbloom-2.4.20): the
//! JSON files of captured replies (byte strings stored as latin-1 text) and the RDB files
//! beside them.

use super::server::{Server, TempDir};
use serde_json::Value;
use std::path::PathBuf;

pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("core/tests/fixtures/redisbloom-2.4.20")
}

/// The fixture file `name` (e.g. `cms.manifest.json`), parsed.
pub fn fixture_json(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A byte string stored as latin-1 text (one char per byte).
pub fn latin1(v: &Value) -> Vec<u8> {
    v.as_str()
        .unwrap()
        .chars()
        .map(|c| c as u32 as u8)
        .collect()
}

/// A record's `argv`, as bytes.
pub fn argv(record: &Value) -> Vec<Vec<u8>> {
    record["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(latin1)
        .collect()
}

/// A server started on a copy of the fixture RDB file `file`, in `dir`.
pub fn start_on_fixture_rdb(dir: &TempDir, file: &str) -> Server {
    std::fs::copy(fixture_dir().join(file), dir.0.join(file)).unwrap();
    Server::start_in(&dir.0, &["--dbfilename", file])
}
