//! Items from the command line, a file (one item per line; a trailing `\r` is dropped) or
//! standard input, and the progress bar (only when standard error is a terminal).

use indicatif::{ProgressBar, ProgressStyle};
use redbloom_client::{Error, Result};
use std::io::{IsTerminal, Read};
use std::path::Path;

/// Splits `data` into lines: `\n` ends an item, a `\r` before it is not part of it; a
/// last line without `\n` is an item too; an empty file has no items.
pub fn lines(data: &[u8]) -> Vec<Vec<u8>> {
    let mut items: Vec<Vec<u8>> = data
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line).to_vec())
        .collect();
    if data.is_empty() || data.ends_with(b"\n") {
        items.pop();
    }
    items
}

/// The items of a command: those on the command line, then those of `file` (`-` is
/// standard input); standard input when there are neither and `stdin_default`.
pub fn items(args: &[String], file: Option<&Path>, stdin_default: bool) -> Result<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<u8>> = args.iter().map(|s| s.as_bytes().to_vec()).collect();
    let mut data = Vec::new();
    match file {
        Some(path) if path == Path::new("-") => {
            std::io::stdin().read_to_end(&mut data)?;
        }
        Some(path) => {
            data = std::fs::read(path)
                .map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
        }
        None if args.is_empty() && stdin_default => {
            std::io::stdin().read_to_end(&mut data)?;
        }
        None => {}
    }
    out.extend(lines(&data));
    Ok(out)
}

/// A progress bar over `total` items on standard error, hidden when it is not a terminal.
pub fn progress(total: usize, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::lines;

    #[test]
    fn line_splitting() {
        assert_eq!(lines(b""), Vec::<Vec<u8>>::new());
        assert_eq!(lines(b"a\nb"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(lines(b"a\r\nb\n"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(lines(b"\n\n"), vec![Vec::<u8>::new(), Vec::new()]);
    }
}
