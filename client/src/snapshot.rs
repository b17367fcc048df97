//! Local copies of a filter: SCANDUMP downloaded into a redbloom-core filter that answers
//! membership here ([`Snapshot`]), and the snapshot file `redbloom export` writes and
//! `redbloom check` reads.
//!
//! File layout: the line `redbloom-snapshot 1 <family>\n` (family `bf`, `cf` or `cbf`), then
//! each SCANDUMP reply in order as an 8-byte little-endian signed iterator, an 8-byte
//! little-endian length and that many bytes of data; the header chunk comes first; a
//! record with iterator 0 and length 0 ends the file. (An empty Cuckoo filter has no
//! header: its file is the line and the end record.)
//!
//! [`Snapshot::refresh`] downloads again only when the filter changed: it compares the
//! SCANDUMP header (iterator 0), a few dozen bytes, with the one it holds. A Bloom filter's
//! header counts the items of every link, and any add that changes a bit counts one; a
//! Cuckoo filter's counts its items and its deletes, and every add or delete moves one of
//! them. A counting Bloom filter's counts adds minus deletes, which an add and a delete
//! cancel: refresh always downloads it. Not seen: a key deleted and rebuilt (or restored)
//! to a filter with the very same header.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::inspect::key_family;
use redbloom_core::bloom::{dump as bloom_dump, Chain};
use redbloom_core::counting::{dump as counting_dump, CountingChain};
use redbloom_core::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash};
use redbloom_core::limits::DEFAULT_MAX_FILTER_BYTES;
use redis::{FromRedisValue, Value};

/// The first line's start.
pub const MAGIC: &str = "redbloom-snapshot";
/// The file layout version.
pub const FILE_VERSION: u32 = 1;

/// SCANDUMP replies, header first, without the final `[0, nil]`.
pub type Chunks = Vec<(i64, Vec<u8>)>;

/// Every (iterator, data) of `PREFIX.SCANDUMP key`, header first, until iterator 0.
pub fn scandump(conn: &mut Conn, family: Family, key: &str) -> Result<Chunks> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let reply: Vec<Value> = conn.query(family.command("SCANDUMP").arg(key).arg(iter))?;
        let (Some(next), Some(data)) = (reply.first(), reply.get(1)) else {
            return Err(Error::new(format!("{key}: unexpected SCANDUMP reply")));
        };
        let next = i64::from_redis_value(next.clone())?;
        if next == 0 {
            return Ok(out);
        }
        let data = match data {
            Value::Nil => Vec::new(),
            other => Vec::<u8>::from_redis_value(other.clone())?,
        };
        out.push((next, data));
        iter = next;
    }
}

/// A dump rebuilt as a local filter.
#[derive(Debug)]
pub enum Local {
    Bloom(Chain),
    Cuckoo(CuckooFilter),
    Counting(CountingChain),
    /// A Cuckoo filter with no items (its SCANDUMP has no header).
    EmptyCuckoo,
}

impl Local {
    /// The filter `chunks` (a whole SCANDUMP of `family`) describe; a corrupt or hostile
    /// dump is an error, never a panic or an allocation past the core's limit.
    pub fn from_chunks(family: Family, chunks: &[(i64, Vec<u8>)], key: &str) -> Result<Local> {
        let err = |what: String| Error::new(format!("{key}: the dump does not load ({what})"));
        let Some(((_, header), rest)) = chunks.split_first() else {
            return match family {
                Family::Cf => Ok(Local::EmptyCuckoo),
                _ => Err(Error::new(format!("{key}: empty dump"))),
            };
        };
        Ok(match family {
            Family::Bf => {
                let mut chain = bloom_dump::chain_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(format!("{e:?}")))?;
                for (iter, data) in rest {
                    bloom_dump::load_chunk(&mut chain, *iter, data)
                        .map_err(|e| err(format!("{e:?}")))?;
                }
                Local::Bloom(chain)
            }
            Family::Cf => {
                let mut filter = cuckoo_dump::filter_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(format!("{e:?}")))?;
                for (iter, data) in rest {
                    cuckoo_dump::load_chunk(&mut filter, *iter, data)
                        .map_err(|e| err(format!("{e:?}")))?;
                }
                Local::Cuckoo(filter)
            }
            Family::Cbf => {
                let mut chain = counting_dump::chain_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(format!("{e:?}")))?;
                for (iter, data) in rest {
                    counting_dump::load_chunk(&mut chain, *iter, data)
                        .map_err(|e| err(format!("{e:?}")))?;
                }
                Local::Counting(chain)
            }
        })
    }

    /// Whether the item may be in the filter (the server's EXISTS answer).
    pub fn contains(&self, item: &[u8]) -> bool {
        match self {
            Local::Bloom(chain) => chain.contains(chain.hash(item)),
            Local::Cuckoo(filter) => filter.contains(&CuckooHash::new(item)),
            Local::Counting(chain) => chain.contains(chain.hash(item)),
            Local::EmptyCuckoo => false,
        }
    }
}

/// Downloads `key` (of `family`) with SCANDUMP into a local filter.
pub fn download(conn: &mut Conn, family: Family, key: &str) -> Result<Local> {
    let chunks = scandump(conn, family, key)?;
    Local::from_chunks(family, &chunks, key)
}

/// The family of a filter key (not a sharded filter: its members are separate keys).
fn filter_family(conn: &mut Conn, key: &str) -> Result<Family> {
    key_family(conn, key)?.ok_or_else(|| {
        Error::new(format!(
            "{key} is a hash; snapshots are of bf, cf and cbf filter keys"
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
    /// Downloads `key` (a BF, CF or CBF key).
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
        if self.family != Family::Cbf {
            let reply: Vec<Value> =
                conn.query(self.family.command("SCANDUMP").arg(&self.key).arg(0))?;
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

/// The snapshot file of `chunks` of `family`.
pub fn encode(family: Family, chunks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let mut out = format!("{MAGIC} {FILE_VERSION} {}\n", family.name()).into_bytes();
    for (iter, data) in chunks {
        out.extend_from_slice(&iter.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(data);
    }
    out.extend_from_slice(&0i64.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out
}

/// Reads a snapshot file: its family and chunks; anything else than the layout above is
/// an error.
pub fn decode(file: &[u8]) -> Result<(Family, Chunks)> {
    let bad = |what: &str| Error::new(format!("not a redbloom snapshot file ({what})"));
    let newline = file
        .iter()
        .take(64)
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no header line"))?;
    let line = std::str::from_utf8(&file[..newline]).map_err(|_| bad("header line"))?;
    let words: Vec<&str> = line.split(' ').collect();
    if words.len() != 3 || words[0] != MAGIC {
        return Err(bad("header line"));
    }
    if words[1] != FILE_VERSION.to_string() {
        return Err(Error::new(format!(
            "snapshot file version {}; this redbloom reads version {FILE_VERSION}",
            words[1]
        )));
    }
    let family = Family::parse(words[2]).map_err(|_| bad("family"))?;
    let mut at = newline + 1;
    let mut chunks = Vec::new();
    loop {
        let head = file.get(at..at + 16).ok_or_else(|| bad("truncated"))?;
        let iter = i64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        at += 16;
        if iter == 0 {
            if len != 0 || at != file.len() {
                return Err(bad("data after the end record"));
            }
            return Ok((family, chunks));
        }
        let len = usize::try_from(len).map_err(|_| bad("truncated"))?;
        let end = at.checked_add(len).ok_or_else(|| bad("truncated"))?;
        let data = file.get(at..end).ok_or_else(|| bad("truncated"))?;
        chunks.push((iter, data.to_vec()));
        at = end;
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

/// `redbloom check`: the filter of a snapshot file.
pub fn open_file(file: &[u8]) -> Result<Local> {
    let (family, chunks) = decode(file)?;
    Local::from_chunks(family, &chunks, "snapshot")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trip_and_refusals() {
        let chunks = vec![(1i64, vec![1u8, 2, 3]), (9, vec![4; 10])];
        let file = encode(Family::Bf, &chunks);
        assert!(file.starts_with(b"redbloom-snapshot 1 bf\n"));
        assert_eq!(decode(&file).unwrap(), (Family::Bf, chunks));
        for cut in 0..file.len() {
            assert!(decode(&file[..cut]).is_err(), "{cut}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let mut v2 = file.clone();
        v2[18] = b'2';
        assert_eq!(
            decode(&v2).unwrap_err().0,
            "snapshot file version 2; this redbloom reads version 1"
        );
        let mut huge = b"redbloom-snapshot 1 cf\n".to_vec();
        huge.extend_from_slice(&1i64.to_le_bytes());
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
        // A header the core refuses is an error too.
        let bogus = encode(Family::Bf, &[(1, vec![0xff; 40])]);
        assert!(open_file(&bogus).is_err());
        assert!(matches!(
            open_file(&encode(Family::Cf, &[])).unwrap(),
            Local::EmptyCuckoo
        ));
    }
}
