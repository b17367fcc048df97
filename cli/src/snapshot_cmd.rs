//! `redbloom export URL KEY FILE` and `redbloom check FILE ITEM…`.

use crate::connect;
use crate::input;
use crate::shard_cmd::print_answers;
use redbloom_client::{snapshot, Error, Result};
use serde_json::json;
use std::path::Path;

pub fn export(url: &str, key: &str, file: &Path, json: bool) -> Result<()> {
    let mut conn = connect::open(url)?;
    let (family, bytes) = snapshot::export(&mut conn, key)?;
    if file == Path::new("-") {
        use std::io::Write;
        std::io::stdout()
            .lock()
            .write_all(&bytes)
            .and_then(|()| std::io::stdout().lock().flush())
            .map_err(|e| Error::file(format!("cannot write the standard output: {e}")))?;
        // Standard output holds the snapshot: the summary goes to standard error.
        let _ = writeln_stderr(&format!(
            "exported {key} ({}) to the standard output: {} bytes",
            family.name(),
            bytes.len()
        ));
        return Ok(());
    }
    std::fs::write(file, &bytes)
        .map_err(|e| Error::file(format!("cannot write {}: {e}", file.display())))?;
    if json {
        say!(
            "{}",
            json!({"key": key, "type": family.name(), "bytes": bytes.len()})
        );
    } else {
        say!(
            "exported {key} ({}) to {}: {} bytes",
            family.name(),
            file.display(),
            bytes.len()
        );
    }
    Ok(())
}

fn writeln_stderr(line: &str) -> std::io::Result<()> {
    use std::io::Write;
    writeln!(std::io::stderr().lock(), "{line}")
}

pub fn check(file: &Path, items: &[String], items_file: Option<&Path>, json: bool) -> Result<()> {
    let stdin = Path::new("-");
    let items_from_stdin = items_file == Some(stdin) || (items.is_empty() && items_file.is_none());
    let (data, name) = if file == stdin {
        if items_from_stdin {
            return Err(Error::usage(
                "the snapshot and the items cannot both come from standard input (give the items or --file)",
            ));
        }
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut data)
            .map_err(|e| Error::file(format!("cannot read the standard input: {e}")))?;
        (data, "standard input".to_string())
    } else {
        let data = std::fs::read(file)
            .map_err(|e| Error::file(format!("cannot read {}: {e}", file.display())))?;
        (data, file.display().to_string())
    };
    let local = snapshot::open_file(&name, &data)?;
    let items = input::items(items, items_file, true)?;
    let answers: Vec<i64> = items.iter().map(|i| i64::from(local.contains(i))).collect();
    print_answers(&answers, json);
    Ok(())
}
