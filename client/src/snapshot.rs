//! Local copies of a filter: SCANDUMP downloaded into a redbloom-core filter that answers
//! membership here ([`Snapshot`]), and the snapshot file `redbloom export` writes and
//! `redbloom check` reads.
//!
//! File layout (version 2): the line `redbloom-snapshot 2 <family> <length>\n` (family
//! `bf`, `cf`, `cbf` or `static`; length: the bytes after the line), then each SCANDUMP reply in order
//! as an 8-byte little-endian signed iterator, an 8-byte little-endian length and that many
//! bytes of data — the header chunk first —, a record with iterator 0 and length 0, and the
//! XXH3-64 (seed 0) of everything before it, 8 bytes little-endian. (An empty Cuckoo filter
//! has no header: its file is the line, the end record and the checksum.) A file shorter
//! than its line says is truncated, one whose checksum differs is damaged; either is refused
//! before any of it is used. Version 1 (no length, no checksum) was never released.
//!
//! [`Snapshot::refresh`] downloads again only when the filter changed: it compares the
//! SCANDUMP header (iterator 0), a few dozen bytes, with the one it holds. A Bloom filter's
//! header counts the items of every link, and any add that changes a bit counts one; a
//! Cuckoo filter's counts its items and its deletes, and every add or delete moves one of
//! them. A counting Bloom filter's counts adds minus deletes, which an add and a delete
//! cancel: refresh always downloads it. A static filter never changes, and its header holds
//! the checksum of all its data. Not seen: a key deleted and rebuilt (or restored)
//! to a filter with the very same header.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{command, key_family, Family};
pub use redbloom_core::client_logic::snapshot::{
    decode, encode, open_file, Chunks, Local, FILE_VERSION, MAGIC,
};
use redis::{FromRedisValue, Value};

/// Every (iterator, data) of `PREFIX.SCANDUMP key`, header first, until iterator 0.
pub fn scandump(conn: &mut Conn, family: Family, key: &str) -> Result<Chunks> {
    let mut out = Vec::new();
    scandump_each(conn, family, key, |iter, data| {
        out.push((iter, data));
        Ok(true)
    })?;
    Ok(out)
}

/// Calls `f` with each (iterator, data) of `PREFIX.SCANDUMP key` as it arrives, header
/// first, until iterator 0 or until `f` returns false: one chunk is held at a time.
pub fn scandump_each(
    conn: &mut Conn,
    family: Family,
    key: &str,
    mut f: impl FnMut(i64, Vec<u8>) -> Result<bool>,
) -> Result<()> {
    let mut iter = 0i64;
    loop {
        let reply: Vec<Value> = conn.query(command(family, "SCANDUMP").arg(key).arg(iter))?;
        let mut reply = reply.into_iter();
        let (Some(next), Some(data)) = (reply.next(), reply.next()) else {
            return Err(Error::new(format!("{key}: unexpected SCANDUMP reply")));
        };
        let next = i64::from_redis_value(next)?;
        if next == 0 {
            return Ok(());
        }
        let data = match data {
            Value::Nil => Vec::new(),
            other => Vec::<u8>::from_redis_value(other)?,
        };
        if !f(next, data)? {
            return Ok(());
        }
        iter = next;
    }
}

/// Downloads `key` (of `family`) with SCANDUMP into a local filter.
pub fn download(conn: &mut Conn, family: Family, key: &str) -> Result<Local> {
    let chunks = scandump(conn, family, key)?;
    Ok(Local::from_chunks(family, &chunks, key)?)
}

/// The family of a filter key (not a sharded filter: its members are separate keys).
pub(crate) fn filter_family(conn: &mut Conn, key: &str) -> Result<Family> {
    key_family(conn, key)?.ok_or_else(|| {
        Error::new(format!(
            "{key} is a hash; snapshots are of bf, cf, cbf, static and xf filter keys"
        ))
    })
}

/// A filter downloaded from the server, answering here.
#[derive(Debug)]
pub struct Snapshot {
    key: String,
    family: Family,
    /// The header chunk it was built from (empty for an empty Cuckoo filter).
    header: Vec<u8>,
    local: Local,
}

impl Snapshot {
    /// Downloads `key` (a BF, CF, CBF or SF key).
    pub fn fetch(conn: &mut Conn, key: &str) -> Result<Snapshot> {
        let family = filter_family(conn, key)?;
        let chunks = scandump(conn, family, key)?;
        Ok(Snapshot {
            key: key.to_string(),
            family,
            header: chunks.first().map(|c| c.1.clone()).unwrap_or_default(),
            local: Local::from_chunks(family, &chunks, key)?,
        })
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        self.local.contains(item)
    }

    pub fn family(&self) -> Family {
        self.family
    }

    pub fn local(&self) -> &Local {
        &self.local
    }

    /// Downloads the filter again if it changed since (the rule in the module docs);
    /// returns whether it did.
    pub fn refresh(&mut self, conn: &mut Conn) -> Result<bool> {
        if !matches!(self.family, Family::Cbf | Family::Xf) {
            let reply: Vec<Value> =
                conn.query(command(self.family, "SCANDUMP").arg(&self.key).arg(0))?;
            let header = match reply.get(1) {
                Some(Value::Nil) | None => Vec::new(),
                Some(v) => Vec::<u8>::from_redis_value(v.clone())?,
            };
            if header == self.header {
                return Ok(false);
            }
        }
        *self = Snapshot::fetch(conn, &self.key)?;
        Ok(true)
    }
}

/// `redbloom export`: `key`'s SCANDUMP as a snapshot file; returns its family and size.
pub fn export(conn: &mut Conn, key: &str) -> Result<(Family, Vec<u8>)> {
    let family = filter_family(conn, key)?;
    let chunks = scandump(conn, family, key)?;
    // Refuse now what `check` would refuse later.
    Local::from_chunks(family, &chunks, key)?;
    Ok((family, encode(family, &chunks)))
}
