//! Items from the command line, a file (one item per line; a trailing `\r` is dropped) or
//! standard input, and the progress bar (only when standard error is a terminal; cleared
//! from the screen whenever it ends, an error or a signal included).
//!
//! Blank lines: commands that add items skip them ([`nonblank`]: an empty item is almost
//! always a stray newline, and adding it would make every later check of "" answer 1);
//! commands that ask about items answer them, so the answers stay one per input line.

use indicatif::{HumanCount, ProgressBar, ProgressFinish, ProgressState, ProgressStyle};
use redbloom_client::{Error, Result};
use std::io::{ErrorKind, IsTerminal, Read};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Bytes read at a time by [`for_each_batch`] (more when one line is longer).
const READ_BYTES: usize = if cfg!(test) { 16 } else { 16 << 20 };

/// Splits `data` into lines: `\n` ends an item, a `\r` before it is not part of it; a
/// last line without `\n` is an item too; an empty file has no items.
pub fn line_slices(data: &[u8]) -> Vec<&[u8]> {
    let mut items = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        let line = &data[start..end];
        items.push(line.strip_suffix(b"\r").unwrap_or(line));
        start = end + 1;
    }
    if start < data.len() {
        let line = &data[start..];
        items.push(line.strip_suffix(b"\r").unwrap_or(line));
    }
    items
}

/// How long standard input may pause before the lines read so far are a batch (so that
/// `tail -f log | redbloom shard exists …` answers as lines come).
const PAUSE: Duration = Duration::from_millis(50);

/// What one read gave.
enum Got {
    Data(usize),
    End,
    /// Standard input gave nothing for [`PAUSE`].
    Paused,
}

/// A file, or standard input read on a thread of its own (so a pause can be seen).
enum Source {
    File(std::fs::File),
    Stdin {
        chunks: Receiver<std::io::Result<Vec<u8>>>,
        pending: Vec<u8>,
        at: usize,
    },
}

impl Source {
    fn open(file: Option<&Path>) -> Result<Source> {
        if let Some(path) = file.filter(|p| *p != Path::new("-")) {
            return std::fs::File::open(path)
                .map(Source::File)
                .map_err(|e| Error::file(format!("cannot read {}: {e}", path.display())));
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut chunk = vec![0u8; 1 << 20];
                let outcome = match stdin.read(&mut chunk) {
                    Ok(n) => {
                        chunk.truncate(n);
                        Ok(chunk)
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let last = !matches!(&outcome, Ok(c) if !c.is_empty());
                if tx.send(outcome).is_err() || last {
                    return;
                }
            }
        });
        Ok(Source::Stdin {
            chunks: rx,
            pending: Vec::new(),
            at: 0,
        })
    }

    fn read(&mut self, out: &mut [u8]) -> Result<Got> {
        let fail = |e: std::io::Error| Error::new(format!("cannot read the input: {e}"));
        match self {
            Source::File(file) => loop {
                match file.read(out) {
                    Ok(0) => return Ok(Got::End),
                    Ok(n) => return Ok(Got::Data(n)),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(fail(e)),
                }
            },
            Source::Stdin {
                chunks,
                pending,
                at,
            } => {
                if *at == pending.len() {
                    match chunks.recv_timeout(PAUSE) {
                        Ok(Ok(chunk)) if chunk.is_empty() => return Ok(Got::End),
                        Ok(Ok(chunk)) => {
                            *pending = chunk;
                            *at = 0;
                        }
                        Ok(Err(e)) => return Err(fail(e)),
                        Err(RecvTimeoutError::Timeout) => return Ok(Got::Paused),
                        Err(RecvTimeoutError::Disconnected) => return Ok(Got::End),
                    }
                }
                let n = out.len().min(pending.len() - *at);
                out[..n].copy_from_slice(&pending[*at..*at + n]);
                *at += n;
                Ok(Got::Data(n))
            }
        }
    }
}

/// Calls `f` with the items of `file` (`-` or none: standard input), a batch of whole lines
/// at a time, in order, split as [`line_slices`] splits the whole input — without holding
/// it: a batch is the whole lines of [`READ_BYTES`] read, or (standard input) those read
/// before a pause of [`PAUSE`]. Returns how many items there were.
pub fn for_each_batch(
    file: Option<&Path>,
    mut f: impl FnMut(&[&[u8]]) -> Result<()>,
) -> Result<u64> {
    let mut input = Source::open(file)?;
    let mut buf = vec![0u8; READ_BYTES];
    let (mut filled, mut count) = (0, 0u64);
    loop {
        if crate::signals::stopped() {
            return Err(Error::interrupted(format!(
                "stopped by {} while reading the input, after {count} lines",
                crate::signals::name()
            )));
        }
        if filled == buf.len() {
            // A line longer than the buffer: room for more of it.
            buf.resize(buf.len() * 2, 0);
        }
        let (read, paused) = match input.read(&mut buf[filled..])? {
            Got::Data(n) => (n, false),
            Got::End => (0, false),
            Got::Paused => (0, true),
        };
        filled += read;
        if read != 0 && filled < buf.len() {
            // A pipe gives 64 KiB a read: fill the buffer first, so batches stay large.
            continue;
        }
        let end = read == 0 && !paused;
        let whole = if end {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(last) => last + 1,
                None => continue,
            }
        };
        let items = line_slices(&buf[..whole]);
        if !items.is_empty() {
            f(&items)?;
            count += items.len() as u64;
        }
        buf.copy_within(whole..filled, 0);
        filled -= whole;
        if end {
            return Ok(count);
        }
    }
}

/// Calls `f` with the items of a command, in order, a batch at a time: those on the
/// command line, then those of `file` ([`for_each_batch`]; `-` is standard input), or of
/// standard input when there are neither and `stdin_default`. Returns how many there were.
pub fn for_each_input(
    args: &[String],
    file: Option<&Path>,
    stdin_default: bool,
    mut f: impl FnMut(&[&[u8]]) -> Result<()>,
) -> Result<u64> {
    let given: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    if !given.is_empty() {
        f(&given)?;
    }
    let streamed = match file {
        Some(path) => for_each_batch(Some(path), f)?,
        None if given.is_empty() && stdin_default => for_each_batch(None, f)?,
        None => 0,
    };
    Ok(given.len() as u64 + streamed)
}

/// [`for_each_input`], collected.
pub fn items(args: &[String], file: Option<&Path>, stdin_default: bool) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for_each_input(args, file, stdin_default, |batch| {
        out.extend(batch.iter().map(|item| item.to_vec()));
        Ok(())
    })?;
    Ok(out)
}

/// The non-blank lines of `batch`, and where each is in it.
pub fn nonblank<'a>(batch: &[&'a [u8]]) -> (Vec<&'a [u8]>, Vec<usize>) {
    batch
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(at, line)| (*line, at))
        .unzip()
}

/// A count of the items done on standard error (the input streams, so there is no total),
/// with a rate rounded to whole items a second; hidden when it is not a terminal.
pub fn progress(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_finish(ProgressFinish::AndClear);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}: {human_pos} items, {rate}")
            .expect("a valid template")
            .with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{} items/s", HumanCount(state.per_sec().round() as u64));
                },
            ),
    );
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A bar of bytes done out of `total` on standard error, hidden when it is not a terminal.
pub fn bytes_progress(what: &str, total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total).with_finish(ProgressFinish::AndClear);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes}, {bytes_per_sec}, {eta}",
        )
        .expect("a valid template"),
    );
    bar.set_message(what.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::{for_each_batch, line_slices, READ_BYTES};

    fn lines(data: &[u8]) -> Vec<Vec<u8>> {
        line_slices(data).into_iter().map(<[u8]>::to_vec).collect()
    }

    #[test]
    fn line_splitting() {
        assert_eq!(lines(b""), Vec::<Vec<u8>>::new());
        assert_eq!(lines(b"a\nb"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(lines(b"a\r\nb\n"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(lines(b"\n\n"), vec![Vec::<u8>::new(), Vec::new()]);
    }

    /// Streamed in batches (reads of 16 bytes in tests), any input gives the items and
    /// order `lines` gives for the whole of it: lines across reads, longer than a read,
    /// `\r\n` split between reads, empty lines, no final newline.
    #[test]
    fn batches_split_as_the_whole_input() {
        let long = "x".repeat(5 * READ_BYTES);
        let inputs = [
            String::new(),
            "\n".into(),
            "a".into(),
            "a\r\nbb\r\n\r\nccc".into(),
            format!("{long}\nshort\n{long}"),
            (0..200).map(|i| format!("item:{i}\r\n")).collect(),
            (0..50).map(|i| format!("{}\n", "y".repeat(i))).collect(),
        ];
        let dir = std::env::temp_dir().join(format!("redbloom-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (n, input) in inputs.iter().enumerate() {
            let path = dir.join(format!("{n}.txt"));
            std::fs::write(&path, input).unwrap();
            let mut got = Vec::new();
            let count = for_each_batch(Some(&path), |batch| {
                got.extend(batch.iter().map(|item| item.to_vec()));
                Ok(())
            })
            .unwrap();
            assert_eq!(got, lines(input.as_bytes()), "input {n}");
            assert_eq!(count, got.len() as u64);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
