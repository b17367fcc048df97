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
use crate::error::{words, Error, Result};
use crate::family::{key_family, Family};
use redbloom_core::bloom::{dump as bloom_dump, Chain};
use redbloom_core::counting::{dump as counting_dump, CountingChain};
use redbloom_core::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash};
use redbloom_core::limits::DEFAULT_MAX_FILTER_BYTES;
use redbloom_core::static_filter::{dump as static_dump, item_key, StaticFilter};
use redis::{FromRedisValue, Value};

/// The first line's start.
pub const MAGIC: &str = "redbloom-snapshot";
/// The file layout version.
pub const FILE_VERSION: u32 = 2;
/// Longest first line read (the magic, version, family and length fit in 64 bytes).
pub(crate) const MAX_LINE: usize = 64;

/// SCANDUMP replies, header first, without the final `[0, nil]`.
pub type Chunks = Vec<(i64, Vec<u8>)>;

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
        let reply: Vec<Value> = conn.query(family.command("SCANDUMP").arg(key).arg(iter))?;
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

/// A dump rebuilt as a local filter.
#[derive(Debug)]
pub enum Local {
    Bloom(Chain),
    Cuckoo(CuckooFilter),
    Counting(CountingChain),
    Static(StaticFilter),
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
                    .map_err(|e| err(words::dump_error(&e).to_string()))?;
                for (iter, data) in rest {
                    bloom_dump::load_chunk(&mut chain, *iter, data)
                        .map_err(|e| err(words::dump_error(&e).to_string()))?;
                }
                Local::Bloom(chain)
            }
            Family::Cf => {
                let mut filter = cuckoo_dump::filter_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(e.to_string()))?;
                for (iter, data) in rest {
                    cuckoo_dump::load_chunk(&mut filter, *iter, data)
                        .map_err(|e| err(e.to_string()))?;
                }
                Local::Cuckoo(filter)
            }
            Family::Cbf => {
                let mut chain = counting_dump::chain_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(words::dump_error(&e).to_string()))?;
                for (iter, data) in rest {
                    counting_dump::load_chunk(&mut chain, *iter, data)
                        .map_err(|e| err(words::dump_error(&e).to_string()))?;
                }
                Local::Counting(chain)
            }
            Family::Sf => {
                let mut filter = static_dump::filter_from_header(header, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| err(words::dump_error(&e).to_string()))?;
                for (iter, data) in rest {
                    static_dump::load_chunk(&mut filter, *iter, data)
                        .map_err(|e| err(words::dump_error(&e).to_string()))?;
                }
                if !filter.is_complete() {
                    return Err(err(format!("{} bytes of data missing", filter.pending())));
                }
                Local::Static(filter)
            }
        })
    }

    /// Whether the item may be in the filter (the server's EXISTS answer).
    pub fn contains(&self, item: &[u8]) -> bool {
        match self {
            Local::Bloom(chain) => chain.contains(chain.hash(item)),
            Local::Cuckoo(filter) => filter.contains(&CuckooHash::new(item)),
            Local::Counting(chain) => chain.contains(chain.hash(item)),
            Local::Static(filter) => filter.contains(item_key(item)),
            Local::EmptyCuckoo => false,
        }
    }
}

impl Local {
    /// The family of the filter.
    pub fn family(&self) -> Family {
        match self {
            Local::Bloom(_) => Family::Bf,
            Local::Cuckoo(_) | Local::EmptyCuckoo => Family::Cf,
            Local::Counting(_) => Family::Cbf,
            Local::Static(_) => Family::Sf,
        }
    }

    /// Its SCANDUMP replies, as a server holding it gives them: `(1, header)`, then each
    /// data chunk with the iterator after it (none for an empty Cuckoo filter).
    pub fn chunks(&self) -> Chunks {
        fn all<'a>(header: Vec<u8>, chunk: impl Fn(i64) -> Option<(i64, &'a [u8])>) -> Chunks {
            let mut out = vec![(1, header)];
            let mut iter = 1;
            while let Some((next, data)) = chunk(iter) {
                out.push((next, data.to_vec()));
                iter = next;
            }
            out
        }
        match self {
            Local::Bloom(c) => all(bloom_dump::header(c), |i| bloom_dump::chunk(c, i)),
            Local::Counting(c) => all(counting_dump::header(c), |i| counting_dump::chunk(c, i)),
            Local::Cuckoo(f) if f.num_items() == 0 => Vec::new(),
            Local::Cuckoo(f) => all(cuckoo_dump::header(f).to_vec(), |i| {
                cuckoo_dump::chunk(f, i)
            }),
            Local::Static(f) => all(static_dump::header(f), |i| static_dump::chunk(f, i)),
            Local::EmptyCuckoo => Vec::new(),
        }
    }
}

/// Downloads `key` (of `family`) with SCANDUMP into a local filter.
pub fn download(conn: &mut Conn, family: Family, key: &str) -> Result<Local> {
    let chunks = scandump(conn, family, key)?;
    Local::from_chunks(family, &chunks, key)
}

/// The family of a filter key (not a sharded filter: its members are separate keys).
pub(crate) fn filter_family(conn: &mut Conn, key: &str) -> Result<Family> {
    key_family(conn, key)?.ok_or_else(|| {
        Error::new(format!(
            "{key} is a hash; snapshots are of bf, cf, cbf and static filter keys"
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
    let body: usize = chunks.iter().map(|(_, d)| 16 + d.len()).sum::<usize>() + 16 + 8;
    let mut out = format!("{MAGIC} {FILE_VERSION} {} {body}\n", family.name()).into_bytes();
    out.reserve(body);
    for (iter, data) in chunks {
        out.extend_from_slice(&iter.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(data);
    }
    out.extend_from_slice(&0i64.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads snapshot file `name`'s bytes: its family and chunks. Refused, each with its own
/// error naming the file: not a snapshot file, another version, an unknown family, a
/// truncated file (or one with bytes after its end), a damaged one (checksum).
pub fn decode(name: &str, file: &[u8]) -> Result<(Family, Chunks)> {
    let bad = |what: String| Error::file(format!("{name}: {what}"));
    let not_snapshot = || bad("not a redbloom snapshot file (no snapshot header line)".into());
    let newline = file
        .iter()
        .take(MAX_LINE)
        .position(|&b| b == b'\n')
        .ok_or_else(not_snapshot)?;
    let (family, length) = parse_line(name, &file[..newline])?;
    let body = &file[newline + 1..];
    if body.len() < length {
        return Err(bad(format!(
            "truncated snapshot file ({} of its {length} bytes after the header line)",
            body.len()
        )));
    }
    if body.len() > length {
        return Err(bad(format!(
            "{} bytes after the end of the snapshot",
            body.len() - length
        )));
    }
    let damaged = || bad("damaged snapshot file (its checksum does not match)".into());
    let Some(split) = file.len().checked_sub(8).filter(|&s| s > newline) else {
        return Err(damaged());
    };
    let (covered, stored) = file.split_at(split);
    if xxhash_rust::xxh3::xxh3_64(covered).to_le_bytes() != stored {
        return Err(damaged());
    }
    // The checksum matched: the records below are as written (a failure is a bug of the
    // writer, reported as damage all the same).
    let records = &covered[newline + 1..];
    let mut at = 0;
    let mut chunks = Vec::new();
    loop {
        let head = records.get(at..at + 16).ok_or_else(damaged)?;
        let iter = i64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        at += 16;
        if iter == 0 {
            if len != 0 || at != records.len() {
                return Err(damaged());
            }
            return Ok((family, chunks));
        }
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| at.checked_add(len))
            .ok_or_else(damaged)?;
        let data = records.get(at..end).ok_or_else(damaged)?;
        chunks.push((iter, data.to_vec()));
        at = end;
    }
}

/// The first line of snapshot file `name` (without its newline): its family and the length
/// of what follows it.
pub(crate) fn parse_line(name: &str, line: &[u8]) -> Result<(Family, usize)> {
    let bad = |what: String| Error::file(format!("{name}: {what}"));
    let not_snapshot = || bad("not a redbloom snapshot file (no snapshot header line)".into());
    let line = std::str::from_utf8(line).map_err(|_| not_snapshot())?;
    let words: Vec<&str> = line.split(' ').collect();
    if words.first() != Some(&MAGIC) {
        return Err(not_snapshot());
    }
    let version = words.get(1).copied().unwrap_or_default();
    if version != FILE_VERSION.to_string() {
        return Err(bad(format!(
            "snapshot file version {version}; this redbloom reads version {FILE_VERSION}"
        )));
    }
    let (Some(kind), Some(length), 4) = (words.get(2), words.get(3), words.len()) else {
        return Err(bad("bad snapshot header line".into()));
    };
    let family = Family::parse(kind).map_err(|_| {
        bad(format!(
            "snapshot of an unknown filter type '{kind}' (this redbloom reads bf, cf, cbf and static)"
        ))
    })?;
    let length: usize = length
        .parse()
        .map_err(|_| bad("bad snapshot header line".into()))?;
    Ok((family, length))
}

/// `redbloom export`: `key`'s SCANDUMP as a snapshot file; returns its family and size.
pub fn export(conn: &mut Conn, key: &str) -> Result<(Family, Vec<u8>)> {
    let family = filter_family(conn, key)?;
    let chunks = scandump(conn, family, key)?;
    // Refuse now what `check` would refuse later.
    Local::from_chunks(family, &chunks, key)?;
    Ok((family, encode(family, &chunks)))
}

/// `redbloom check`: the filter of snapshot file `name` (its bytes `file`).
pub fn open_file(name: &str, file: &[u8]) -> Result<Local> {
    let (family, chunks) = decode(name, file)?;
    Local::from_chunks(family, &chunks, name).map_err(|e| Error::file(e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(file: &[u8]) -> String {
        decode("f.snap", file).unwrap_err().to_string()
    }

    #[test]
    fn file_round_trip_and_refusals() {
        let chunks = vec![(1i64, vec![1u8, 2, 3]), (9, vec![4; 10])];
        let file = encode(Family::Bf, &chunks);
        // 2 records (16 + 3, 16 + 10), the end record, the checksum.
        assert!(file.starts_with(b"redbloom-snapshot 2 bf 69\n"));
        assert_eq!(decode("f", &file).unwrap(), (Family::Bf, chunks.clone()));
        for family in [Family::Cf, Family::Cbf] {
            assert_eq!(decode("f", &encode(family, &chunks)).unwrap().0, family);
        }
        let line = b"redbloom-snapshot 2 bf 69\n".len();
        for cut in 0..file.len() {
            let error = refusal(&file[..cut]);
            let expected = if cut < line {
                "f.snap: not a redbloom snapshot file (no snapshot header line)".to_string()
            } else {
                format!(
                    "f.snap: truncated snapshot file ({} of its 69 bytes after the header line)",
                    cut - line
                )
            };
            assert_eq!(error, expected, "{cut}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(
            refusal(&longer),
            "f.snap: 1 bytes after the end of the snapshot"
        );
        // Any byte changed after the line: damaged.
        for at in line..file.len() {
            let mut damaged = file.clone();
            damaged[at] ^= 0x20;
            assert_eq!(
                refusal(&damaged),
                "f.snap: damaged snapshot file (its checksum does not match)",
                "{at}"
            );
        }
        let mut v1 = file.clone();
        v1[18] = b'1';
        assert_eq!(
            refusal(&v1),
            "f.snap: snapshot file version 1; this redbloom reads version 2"
        );
        let mut unknown = b"redbloom-snapshot 2 wbf 24\n".to_vec();
        unknown.extend_from_slice(&file[line..]);
        assert_eq!(
            refusal(&unknown),
            "f.snap: snapshot of an unknown filter type 'wbf' (this redbloom reads bf, cf, cbf and static)"
        );
        assert_eq!(
            refusal(b"hello\n"),
            "f.snap: not a redbloom snapshot file (no snapshot header line)"
        );
        // A header the core refuses is an error too, naming the file.
        let bogus = encode(Family::Bf, &[(1, vec![0xff; 40])]);
        assert!(open_file("b.snap", &bogus)
            .unwrap_err()
            .to_string()
            .starts_with("b.snap: the dump does not load"));
        assert!(matches!(
            open_file("e", &encode(Family::Cf, &[])).unwrap(),
            Local::EmptyCuckoo
        ));
    }
}
