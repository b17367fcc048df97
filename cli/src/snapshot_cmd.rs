//! `redbloom export URL KEY FILE` and `redbloom check FILE ITEM…`.

use crate::connect;
use crate::input;
use crate::shard_cmd::print_answers;
use redbloom_client::{snapshot_stream, Error, Result};
use serde_json::json;
use std::path::Path;

/// Streams KEY's SCANDUMP to FILE (`-`: standard output) a chunk at a time.
pub fn export(url: &str, key: &str, file: &Path, json: bool) -> Result<()> {
    let mut conn = connect::open(url)?;
    if file == Path::new("-") {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let (family, bytes) =
            snapshot_stream::export_to(&mut conn, key, &mut out, &std::env::temp_dir())?;
        // Standard output holds the snapshot: the summary goes to standard error.
        let _ = writeln_stderr(&format!(
            "exported {key} ({}) to the standard output: {bytes} bytes",
            family.name()
        ));
        return Ok(());
    }
    let cannot = |e: std::io::Error| Error::file(format!("cannot write {}: {e}", file.display()));
    let spool_dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    // Written beside FILE, renamed into place once whole: a failed export leaves FILE as
    // it was.
    let mut partial = file.as_os_str().to_owned();
    partial.push(format!(".partial-{}", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&partial).map_err(cannot)?);
    let outcome =
        snapshot_stream::export_to(&mut conn, key, &mut out, &spool_dir).and_then(|done| {
            std::io::Write::flush(&mut out)
                .map(|()| done)
                .map_err(cannot)
        });
    drop(out);
    let (family, bytes) = match outcome.and_then(|done| {
        std::fs::rename(&partial, file)
            .map(|()| done)
            .map_err(cannot)
    }) {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    if json {
        say!(
            "{}",
            json!({"key": key, "type": family.name(), "bytes": bytes})
        );
    } else {
        say!(
            "exported {key} ({}) to {}: {bytes} bytes",
            family.name(),
            file.display()
        );
    }
    Ok(())
}

fn writeln_stderr(line: &str) -> std::io::Result<()> {
    use std::io::Write;
    writeln!(std::io::stderr().lock(), "{line}")
}

/// Answers items from a snapshot file read a record at a time (the items are read first).
pub fn check(file: &Path, items: &[String], items_file: Option<&Path>, json: bool) -> Result<()> {
    let stdin = Path::new("-");
    let items_from_stdin = items_file == Some(stdin) || (items.is_empty() && items_file.is_none());
    if file == stdin && items_from_stdin {
        return Err(Error::usage(
            "the snapshot and the items cannot both come from standard input (give the items or --file)",
        ));
    }
    let items = input::items(items, items_file, true)?;
    let found = if file == stdin {
        snapshot_stream::check_reader("standard input", std::io::stdin().lock(), &items)?
    } else {
        let reader = std::fs::File::open(file)
            .map_err(|e| Error::file(format!("cannot read {}: {e}", file.display())))?;
        snapshot_stream::check_reader(&file.display().to_string(), reader, &items)?
    };
    let answers: Vec<i64> = found.into_iter().map(i64::from).collect();
    print_answers(&answers, json);
    Ok(())
}
