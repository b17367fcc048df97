//! Snapshots chunk by chunk, whatever the filter's size: `export` writes each SCANDUMP
//! reply as it arrives (to a spool file, then the snapshot file with its length line and
//! checksum), and `check` reads a snapshot file one record at a time, keeping of the filter
//! only the bytes its items' lookups read (the rest of the filter is never touched: its
//! zeroed memory is not resident). What is held is one chunk and those bytes — except for
//! a static or expandable filter, whose lookups need it whole once complete.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::snapshot::{filter_family, scandump_each, Local, FILE_VERSION, MAGIC};
use redbloom_core::client_logic::snapshot::{
    after_end, damaged, not_snapshot, parse_line, truncated, MAX_LINE,
};
use redbloom_core::cuckoo::CuckooHash;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// The largest record a snapshot file may hold (SCANDUMP chunks are 16 MiB at most): a
/// larger length is damage, refused before anything is allocated for it.
const MAX_RECORD: u64 = 256 << 20;
/// Bytes copied at a time from the spool.
const COPY_BYTES: usize = 1 << 20;

/// `redbloom export`: `key`'s SCANDUMP written to `out` as a snapshot file, a chunk at a
/// time; the records are spooled in a file of `spool_dir` (removed at once: only its open
/// handle keeps it) until the length line can be written. Returns the family and the
/// bytes written. The header is checked as `check` will load it.
pub fn export_to(
    conn: &mut Conn,
    key: &str,
    out: &mut dyn Write,
    spool_dir: &Path,
) -> Result<(Family, u64)> {
    let family = filter_family(conn, key)?;
    let spool_path = spool_dir.join(format!(".redbloom-export-{}", std::process::id()));
    let spool_error = |e: std::io::Error| {
        Error::file(format!(
            "cannot write a spool file in {}: {e}",
            spool_dir.display()
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&spool_path)
        .map_err(spool_error)?;
    let _ = std::fs::remove_file(&spool_path);
    let mut spool = BufWriter::with_capacity(COPY_BYTES, file);
    let mut body = 0u64;
    let mut first = true;
    scandump_each(conn, family, key, |iter, data| {
        if first {
            // Refuse now what `check` would refuse later.
            Local::from_header(family, &data, key)?;
            first = false;
        }
        spool
            .write_all(&iter.to_le_bytes())
            .and_then(|()| spool.write_all(&(data.len() as u64).to_le_bytes()))
            .and_then(|()| spool.write_all(&data))
            .map_err(spool_error)?;
        body += 16 + data.len() as u64;
        Ok(true)
    })?;
    spool.write_all(&[0u8; 16]).map_err(spool_error)?;
    body += 16;
    let mut file = spool
        .into_inner()
        .map_err(|e| spool_error(e.into_error()))?;
    let line = format!("{MAGIC} {FILE_VERSION} {} {}\n", family.name(), body + 8);
    let write_error = |e: std::io::Error| Error::file(format!("cannot write the snapshot: {e}"));
    let mut hash = Xxh3::new();
    hash.update(line.as_bytes());
    out.write_all(line.as_bytes()).map_err(write_error)?;
    file.seek(SeekFrom::Start(0)).map_err(spool_error)?;
    let mut buf = vec![0u8; COPY_BYTES];
    loop {
        let n = file.read(&mut buf).map_err(spool_error)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(write_error)?;
    }
    out.write_all(&hash.digest().to_le_bytes())
        .and_then(|()| out.flush())
        .map_err(write_error)?;
    Ok((family, line.len() as u64 + body + 8))
}

/// Byte offsets (over the concatenated arrays SCANDUMP's iterators count) that looking up
/// `items` reads, sorted; `None`: the lookups need the whole filter (static).
fn needed_bytes(local: &Local, items: &[Vec<u8>]) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    match local {
        Local::Bloom(chain) => {
            let mut base = 0;
            for link in chain.links() {
                for item in items {
                    let pair = chain.hash(item);
                    out.extend(link.positions(pair).map(|p| base + p / 8));
                }
                base += link.bytes();
            }
        }
        Local::Counting(chain) => {
            let mut base = 0;
            for link in chain.links() {
                for item in items {
                    let pair = chain.hash(item);
                    out.extend(link.positions(pair).map(|p| base + p / 2));
                }
                base += link.bytes();
            }
        }
        Local::Cuckoo(filter) => {
            let bs = usize::from(filter.bucket_size());
            let mut base = 0;
            for sub in filter.sub_filters() {
                for item in items {
                    for offset in sub.bucket_offsets(&CuckooHash::new(item), bs) {
                        out.extend((0..bs).map(|b| base + (offset + b) as u64));
                    }
                }
                base += sub.data().len() as u64;
            }
        }
        Local::EmptyCuckoo => {}
        Local::Static(_) | Local::Expandable(_) | Local::XfLoading(_) => return None,
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Writes `data` (a record whose next iterator is `iter`) into `local`: whole (`needed`
/// `None`), or only its bytes at the offsets of `needed`.
fn load_record(
    local: &mut Local,
    iter: i64,
    data: &[u8],
    needed: Option<&[u64]>,
    name: &str,
) -> Result<()> {
    let Some(needed) = needed else {
        return Ok(local.load_chunk(iter, data, name)?);
    };
    // The record covers [start, start + len) of the concatenated arrays.
    let len = data.len() as u64;
    let Some(start) = u64::try_from(iter)
        .ok()
        .and_then(|i| i.checked_sub(len))
        .and_then(|i| i.checked_sub(1))
    else {
        return Err(Error::new("a chunk's iterator lies before its data"));
    };
    let from = needed.partition_point(|&o| o < start);
    for &offset in needed[from..].iter().take_while(|&&o| o < start + len) {
        let byte = data[(offset - start) as usize];
        if byte != 0 {
            local.load_chunk((offset + 2) as i64, &[byte], name)?;
        }
    }
    Ok(())
}

/// `redbloom check`: answers `items` (in order) from snapshot file `name`, read from
/// `reader` a record at a time. The file's length and checksum are checked before any
/// answer is given; refusals are those of [`crate::snapshot::decode`].
pub fn check_reader(name: &str, reader: impl Read, items: &[Vec<u8>]) -> Result<Vec<bool>> {
    let bad = |what: String| Error::file(format!("{name}: {what}"));
    let mut input = BufReader::with_capacity(COPY_BYTES, reader);
    let read_error = |e: std::io::Error| bad(format!("cannot read it: {e}"));
    // The first line.
    let mut line = Vec::with_capacity(MAX_LINE);
    loop {
        let mut byte = [0u8; 1];
        let n = input.read(&mut byte).map_err(read_error)?;
        if n == 0 || line.len() == MAX_LINE {
            return Err(not_snapshot(name).into());
        }
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0]);
    }
    let (family, length) = parse_line(name, &line)?;
    let mut hash = Xxh3::new();
    hash.update(&line);
    hash.update(b"\n");
    let mut stream = Records {
        input,
        read: 0,
        length: length as u64,
    };
    let damaged = || Error::from(damaged(name));
    // Whatever goes wrong before the end is told once the length and checksum are known
    // good (a truncated or damaged file is refused as such first).
    let mut problem: Option<Error> = None;
    let mut local: Option<Local> = None;
    let mut needed: Option<Vec<u64>> = None;
    let mut buf = Vec::new();
    loop {
        let mut head = [0u8; 16];
        if !stream.fill(&mut head).map_err(read_error)? {
            return Err(stream.truncated(name));
        }
        hash.update(&head);
        let iter = i64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        if iter == 0 {
            if len != 0 && problem.is_none() {
                problem = Some(damaged());
            }
            break;
        }
        if len > MAX_RECORD || len > stream.length.saturating_sub(stream.read) {
            // Damaged (or truncated): the rest decides which.
            problem.get_or_insert_with(damaged);
            stream.drain().map_err(read_error)?;
            return Err(stream.truncated_or(name, problem.expect("set")));
        }
        buf.resize(len as usize, 0);
        if !stream.fill(&mut buf).map_err(read_error)? {
            return Err(stream.truncated(name));
        }
        hash.update(&buf);
        if problem.is_some() {
            continue;
        }
        let outcome = match local.as_mut() {
            None => Local::from_header(family, &buf, name)
                .map(|l| {
                    needed = needed_bytes(&l, items);
                    local = Some(l);
                })
                .map_err(Error::from),
            Some(l) => load_record(l, iter, &buf, needed.as_deref(), name),
        };
        if let Err(e) = outcome {
            problem = Some(Error::file(e.message()));
        }
    }
    let mut sum = [0u8; 8];
    if !stream.fill(&mut sum).map_err(read_error)? {
        return Err(stream.truncated(name));
    }
    let after = stream.drain().map_err(read_error)?;
    if after > 0 {
        return Err(after_end(name, after).into());
    }
    if stream.read != stream.length {
        return Err(stream.truncated(name));
    }
    if hash.digest().to_le_bytes() != sum {
        return Err(damaged());
    }
    if let Some(problem) = problem {
        return Err(problem);
    }
    let local = match local {
        Some(local) => local,
        None if family == Family::Cf => Local::EmptyCuckoo,
        None => return Err(bad("empty dump".into())),
    };
    let local = local.finish(name).map_err(|e| Error::file(e.message()))?;
    Ok(items.iter().map(|item| local.contains(item)).collect())
}

/// The records after the first line, counted against the length it gives.
struct Records<R: Read> {
    input: BufReader<R>,
    /// Bytes read after the line.
    read: u64,
    /// What the line says follows it.
    length: u64,
}

impl<R: Read> Records<R> {
    /// Fills `out`; false at the end of the input (then `read` counts what there was).
    fn fill(&mut self, out: &mut [u8]) -> std::io::Result<bool> {
        let mut at = 0;
        while at < out.len() {
            match self.input.read(&mut out[at..]) {
                Ok(0) => {
                    self.read += at as u64;
                    return Ok(false);
                }
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.read += at as u64;
        Ok(true)
    }

    /// Reads to the end; returns the bytes past `length`.
    fn drain(&mut self) -> std::io::Result<u64> {
        let rest = std::io::copy(&mut self.input, &mut std::io::sink())?;
        self.read += rest;
        Ok(self.read.saturating_sub(self.length))
    }

    fn truncated(&mut self, name: &str) -> Error {
        let _ = self.drain();
        truncated(name, self.read.min(self.length), self.length).into()
    }

    /// The truncation when the input was shorter than its line says, else `problem`.
    fn truncated_or(&mut self, name: &str, problem: Error) -> Error {
        if self.read < self.length {
            return self.truncated(name);
        }
        if self.read > self.length {
            return after_end(name, self.read - self.length).into();
        }
        problem
    }
}
