//! The snapshot file `redbloom export` writes and `redbloom check` reads (and the Python
//! package's `save` / `load`), and the local filter a whole SCANDUMP rebuilds ([`Local`]).
//!
//!
//! File layout (version 2): the line `redbloom-snapshot 2 <family> <length>\n` (family
//! `bf`, `cf`, `cbf`, `static` or `xf`; length: the bytes after the line), then each SCANDUMP reply in order
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
//! the checksum of all its data. An expandable filter's header counts its items and its
//! entries (an add adds one of each, a delete takes one of each away) and the histogram of
//! its entries' lengths, which an add and a delete of different items rarely leave as
//! they were: refresh always downloads it too. Not seen: a key deleted and rebuilt (or restored)
//! to a filter with the very same header.

use super::family::Family;
use super::words::{dump_error, xf_error};
use super::{LogicError, Result};
use crate::bloom::{dump as bloom_dump, Chain};
use crate::counting::{dump as counting_dump, CountingChain};
use crate::cuckoo::{dump as cuckoo_dump, CuckooFilter, CuckooHash};
use crate::expandable::{self as xf, Loader, XFilter};
use crate::limits::DEFAULT_MAX_FILTER_BYTES;
use crate::static_filter::{dump as static_dump, item_key, StaticFilter};

/// The first line's start.
pub const MAGIC: &str = "redbloom-snapshot";
/// The file layout version.
pub const FILE_VERSION: u32 = 2;
/// Longest first line read (the magic, version, family and length fit in 64 bytes).
pub const MAX_LINE: usize = 64;

/// SCANDUMP replies, header first, without the final `[0, nil]`.
pub type Chunks = Vec<(i64, Vec<u8>)>;

/// A dump rebuilt as a local filter.
#[derive(Debug)]
pub enum Local {
    Bloom(Chain),
    Cuckoo(CuckooFilter),
    Counting(CountingChain),
    Static(StaticFilter),
    /// An expandable filter, whole (boxed: its fixed part, the entries' histogram, is half
    /// a KiB).
    Expandable(Box<XFilter>),
    /// An expandable filter being loaded: its header and the chunks so far
    /// ([`Local::finish`] checks it whole and makes it an [`Local::Expandable`]).
    XfLoading(Box<Loader>),
    /// A Cuckoo filter with no items (its SCANDUMP has no header).
    EmptyCuckoo,
}

impl Local {
    /// The filter `chunks` (a whole SCANDUMP of `family`) describe; a corrupt or hostile
    /// dump is an error, never a panic or an allocation past the core's limit.
    pub fn from_chunks(family: Family, chunks: &[(i64, Vec<u8>)], key: &str) -> Result<Local> {
        let Some(((_, header), rest)) = chunks.split_first() else {
            return match family {
                Family::Cf => Ok(Local::EmptyCuckoo),
                _ => Err(LogicError::failed(format!("{key}: empty dump"))),
            };
        };
        let mut local = Local::from_header(family, header, key)?;
        for (iter, data) in rest {
            local.load_chunk(*iter, data, key)?;
        }
        local.finish(key)
    }

    /// The empty filter a dump's header describes (its data arrive in later chunks,
    /// [`Local::load_chunk`]); its memory is zeroed and untouched, so not resident until
    /// written.
    pub fn from_header(family: Family, header: &[u8], key: &str) -> Result<Local> {
        let max = DEFAULT_MAX_FILTER_BYTES;
        let err = |what: &str| does_not_load(key, what);
        Ok(match family {
            Family::Bf => Local::Bloom(
                bloom_dump::chain_from_header(header, max).map_err(|e| err(dump_error(&e)))?,
            ),
            Family::Cf => Local::Cuckoo(
                cuckoo_dump::filter_from_header(header, max).map_err(|e| err(&e.to_string()))?,
            ),
            Family::Cbf => Local::Counting(
                counting_dump::chain_from_header(header, max).map_err(|e| err(dump_error(&e)))?,
            ),
            Family::Sf => Local::Static(
                static_dump::filter_from_header(header, max).map_err(|e| err(dump_error(&e)))?,
            ),
            Family::Xf => Local::XfLoading(Box::new(
                Loader::from_header(header, max).map_err(|e| err(&xf_error(e)))?,
            )),
        })
    }

    /// LOADCHUNK of one data chunk (of `key`'s dump) into this filter.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], key: &str) -> Result<()> {
        let err = |what: &str| does_not_load(key, what);
        match self {
            Local::Bloom(c) => {
                bloom_dump::load_chunk(c, iter, data).map_err(|e| err(dump_error(&e)))
            }
            Local::Counting(c) => {
                counting_dump::load_chunk(c, iter, data).map_err(|e| err(dump_error(&e)))
            }
            Local::Cuckoo(f) => {
                cuckoo_dump::load_chunk(f, iter, data).map_err(|e| err(&e.to_string()))
            }
            Local::Static(f) => {
                static_dump::load_chunk(f, iter, data).map_err(|e| err(dump_error(&e)))
            }
            Local::XfLoading(l) => l.load_chunk(iter, data).map_err(|e| err(&xf_error(e))),
            Local::Expandable(_) => Err(err("a chunk after the last")),
            Local::EmptyCuckoo => Err(err("an empty Cuckoo filter has no data")),
        }
    }

    /// The filter once every chunk arrived: refuses a static filter some of whose data
    /// never came and an expandable filter that does not pass its final checks (the other
    /// families are whole at any point).
    pub fn finish(self, key: &str) -> Result<Local> {
        match self {
            Local::Static(f) if !f.is_complete() => Err(does_not_load(
                key,
                &format!("{} bytes of data missing", f.pending()),
            )),
            Local::XfLoading(l) => l
                .finish()
                .map(|f| Local::Expandable(Box::new(f)))
                .map_err(|e| does_not_load(key, &xf_error(e))),
            other => Ok(other),
        }
    }

    /// Whether the item may be in the filter (the server's EXISTS answer).
    pub fn contains(&self, item: &[u8]) -> bool {
        match self {
            Local::Bloom(chain) => chain.contains(chain.hash(item)),
            Local::Cuckoo(filter) => filter.contains(&CuckooHash::new(item)),
            Local::Counting(chain) => chain.contains(chain.hash(item)),
            Local::Static(filter) => filter.contains(item_key(item)),
            Local::Expandable(filter) => filter.contains(XFilter::hash(item)),
            Local::XfLoading(_) | Local::EmptyCuckoo => false,
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
            Local::Expandable(_) | Local::XfLoading(_) => Family::Xf,
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
            Local::Expandable(f) => {
                let mut out = vec![(1, xf::header(f))];
                let mut iter = 1;
                while let Some((next, data)) = xf::chunk(f, iter) {
                    out.push((next, data));
                    iter = next;
                }
                out
            }
            // Not a filter yet: `finish` makes it one.
            Local::XfLoading(_) | Local::EmptyCuckoo => Vec::new(),
        }
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
    let newline = file
        .iter()
        .take(MAX_LINE)
        .position(|&b| b == b'\n')
        .ok_or_else(|| not_snapshot(name))?;
    let (family, length) = parse_line(name, &file[..newline])?;
    let body = &file[newline + 1..];
    if body.len() < length {
        return Err(truncated(name, body.len() as u64, length as u64));
    }
    if body.len() > length {
        return Err(after_end(name, (body.len() - length) as u64));
    }
    let damaged = || damaged(name);
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

/// The first line of snapshot file `name` (without its newline, at most [`MAX_LINE`] - 1
/// bytes): its family and the length of what follows it. Used by [`decode`] and by any
/// reader of a file a record at a time.
pub fn parse_line(name: &str, line: &[u8]) -> Result<(Family, usize)> {
    let bad = |what: String| LogicError::File(format!("{name}: {what}"));
    let line = std::str::from_utf8(line).map_err(|_| not_snapshot(name))?;
    let words: Vec<&str> = line.split(' ').collect();
    if words.first() != Some(&MAGIC) {
        return Err(not_snapshot(name));
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
            "snapshot of an unknown filter type '{kind}' (this redbloom reads bf, cf, cbf, static and xf)"
        ))
    })?;
    let length: usize = length
        .parse()
        .map_err(|_| bad("bad snapshot header line".into()))?;
    Ok((family, length))
}

/// File `name` has no snapshot header line.
pub fn not_snapshot(name: &str) -> LogicError {
    LogicError::File(format!(
        "{name}: not a redbloom snapshot file (no snapshot header line)"
    ))
}

/// File `name` holds `read` of the `length` bytes its line says follow it.
pub fn truncated(name: &str, read: u64, length: u64) -> LogicError {
    LogicError::File(format!(
        "{name}: truncated snapshot file ({read} of its {length} bytes after the header line)"
    ))
}

/// File `name` has `extra` bytes after the length its line gives.
pub fn after_end(name: &str, extra: u64) -> LogicError {
    LogicError::File(format!(
        "{name}: {extra} bytes after the end of the snapshot"
    ))
}

/// File `name`'s checksum does not match (or its records do not add up).
pub fn damaged(name: &str) -> LogicError {
    LogicError::File(format!(
        "{name}: damaged snapshot file (its checksum does not match)"
    ))
}

/// `key`'s dump does not load, for the reason `what`.
fn does_not_load(key: &str, what: &str) -> LogicError {
    LogicError::failed(format!("{key}: the dump does not load ({what})"))
}

/// `redbloom check`: the filter of snapshot file `name` (its bytes `file`).
pub fn open_file(name: &str, file: &[u8]) -> Result<Local> {
    let (family, chunks) = decode(name, file)?;
    Local::from_chunks(family, &chunks, name).map_err(|e| LogicError::File(e.message().to_string()))
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
            "f.snap: snapshot of an unknown filter type 'wbf' (this redbloom reads bf, cf, cbf, static and xf)"
        );
        assert_eq!(
            refusal(b"hello\n"),
            "f.snap: not a redbloom snapshot file (no snapshot header line)"
        );
        // A header the core refuses is an error too, naming the file.
        let bogus = encode(Family::Bf, &[(1, vec![0xff; 40])]);
        assert_eq!(
            open_file("b.snap", &bogus).unwrap_err(),
            LogicError::File(
                "b.snap: the dump does not load (malformed or inconsistent data)".into()
            )
        );
        assert!(matches!(
            open_file("e", &encode(Family::Cf, &[])).unwrap(),
            Local::EmptyCuckoo
        ));
    }

    /// An expandable filter's snapshot reads back as the same filter (its chunks, its
    /// answers); one whose data stop short or whose header is not XF's is refused, naming
    /// the file.
    #[test]
    fn expandable_snapshots_round_trip_and_refusals() {
        use crate::expandable::XfParams;
        let params = XfParams {
            error_rate: 0.001,
            initial_capacity: 10,
        };
        let mut f = XFilter::new(params, DEFAULT_MAX_FILTER_BYTES).unwrap();
        for i in 0..3000u32 {
            f.insert(XFilter::hash(&i.to_le_bytes()), DEFAULT_MAX_FILTER_BYTES)
                .unwrap();
        }
        let local = Local::Expandable(Box::new(f));
        let chunks = local.chunks();
        assert_eq!(
            chunks[0],
            (
                1,
                xf::header(match &local {
                    Local::Expandable(f) => f,
                    _ => unreachable!(),
                })
            )
        );
        let file = encode(Family::Xf, &chunks);
        assert!(file.starts_with(b"redbloom-snapshot 2 xf "));
        let back = open_file("x.snap", &file).unwrap();
        assert_eq!(back.family(), Family::Xf);
        assert_eq!(back.chunks(), chunks);
        assert!((0..3000u32).all(|i| back.contains(&i.to_le_bytes())));
        assert_eq!(
            open_file("x.snap", &encode(Family::Xf, &chunks[..1])).unwrap_err(),
            LogicError::File(
                "x.snap: the dump does not load (malformed or inconsistent XF data)".into()
            )
        );
        assert_eq!(
            open_file("b.snap", &encode(Family::Xf, &[(1, vec![0; 40])])).unwrap_err(),
            LogicError::File(
                "b.snap: the dump does not load (malformed or inconsistent XF data)".into()
            )
        );
    }
}
