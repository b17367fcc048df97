//! The filter families a sharded filter (or `load`) can be made of, and their commands (the
//! words from [`redbloom_core::client_logic::family`], sent with the `redis` crate).

use crate::conn::Conn;
use crate::error::{Error, Result};
pub use redbloom_core::client_logic::family::{Family, FilterSpec, Words, SF_NOT_RESERVED};

/// The `redis` crate command of `words` (the name first).
pub fn to_cmd(words: &[Vec<u8>]) -> redis::Cmd {
    let mut cmd = redis::cmd(&String::from_utf8_lossy(&words[0]));
    for word in &words[1..] {
        cmd.arg(word.as_slice());
    }
    cmd
}

/// The `redis` crate command `<PREFIX>.<verb>` of a family.
pub fn command(family: Family, verb: &str) -> redis::Cmd {
    redis::cmd(&family.command(verb))
}

/// The RESERVE command for `key` with `capacity` (a member's share, or the whole).
pub fn reserve(spec: &FilterSpec, key: &str, capacity: u64) -> redis::Cmd {
    to_cmd(&spec.reserve(key, capacity))
}

/// A command adding `items` to an existing `key` (never creating it): one reply per item.
pub fn insert<'a>(
    spec: &FilterSpec,
    key: &str,
    items: impl Iterator<Item = &'a [u8]>,
) -> redis::Cmd {
    to_cmd(&spec.insert(key, items))
}

/// A command answering `items` of `key`: one 0/1 per item.
pub fn mexists<'a>(family: Family, key: &str, items: impl Iterator<Item = &'a [u8]>) -> redis::Cmd {
    to_cmd(&redbloom_core::client_logic::family::mexists(
        family, key, items,
    ))
}

/// The family of a key from its TYPE: `Some` for a bf, cf, cbf, static or xf filter, `None` for a hash
/// (a sharded filter's descriptor, perhaps); an error for a missing key or another type.
pub fn key_family(conn: &mut Conn, key: &str) -> Result<Option<Family>> {
    let kind: String = conn.query(redis::cmd("TYPE").arg(key))?;
    if kind == "hash" {
        return Ok(None);
    }
    if kind == "none" {
        return Err(Error::new(format!("no key {key}")));
    }
    Family::of_type(&kind).map(Some).ok_or_else(|| {
        Error::new(format!(
            "{key} is a key of type {kind}, not a bf, cf, cbf, static or xf filter nor a sharded filter"
        ))
    })
}
