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

pub fn check(file: &Path, items: &[String], items_file: Option<&Path>, json: bool) -> Result<()> {
    let data = std::fs::read(file)
        .map_err(|e| Error::file(format!("cannot read {}: {e}", file.display())))?;
    let local = snapshot::open_file(&file.display().to_string(), &data)?;
    let items = input::items(items, items_file, false)?;
    let answers: Vec<i64> = items.iter().map(|i| i64::from(local.contains(i))).collect();
    print_answers(&answers, json);
    Ok(())
}
