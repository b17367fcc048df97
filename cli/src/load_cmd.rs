//! `redbloom load URL KEY --error-rate E --capacity C [--expansion X | --nonscaling]
//! [--type bf|cf] [--file F]`.

use crate::input;
use crate::shard_cmd::SpecArgs;
use clap::Args;
use redbloom_client::{load, Conn, Family, FilterSpec, Result};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub struct LoadArgs {
    url: String,
    key: String,
    #[command(flatten)]
    spec: SpecArgs,
    /// bf or cf.
    #[arg(long = "type", default_value = "bf")]
    family: String,
    /// One item per line; standard input when absent.
    #[arg(long)]
    file: Option<PathBuf>,
}

pub fn run(args: LoadArgs, json: bool) -> Result<()> {
    let spec = FilterSpec {
        family: Family::parse(&args.family)?,
        error_rate: args.spec.error_rate,
        capacity: args.spec.capacity,
        expansion: args.spec.expansion,
        nonscaling: args.spec.nonscaling,
        blocked: false,
    };
    spec.validate()?;
    let mut conn = Conn::open(&args.url)?;
    load::ensure_absent(&mut conn, &args.key)?;
    // The input streams through the filter, a read at a time: what is held is the filter
    // and one read, whatever the input's size. Nothing is written before its end.
    let mut built = load::Built::new(&spec, spec.capacity)?;
    let mut items = 0;
    input::for_each_batch(args.file.as_deref(), |batch| {
        built.add_more(batch, items)?;
        items += batch.len() as u64;
        Ok(())
    })?;
    let (bytes, chunks) = load::ship(&mut conn, &args.key, &built)?;
    if json {
        say!(
            "{}",
            json!({"key": args.key, "items": items, "bytes": bytes, "chunks": chunks})
        );
    } else {
        say!(
            "loaded {}: {items} items, {bytes} bytes in {chunks} chunks",
            args.key
        );
    }
    Ok(())
}
