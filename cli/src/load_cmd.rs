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
    let items = input::items(&[], args.file.as_deref(), true)?;
    let mut conn = Conn::open(&args.url)?;
    let built = load::load(&mut conn, &args.key, &spec, &items)?;
    let chunks = built.chunks();
    let bytes: usize = chunks.iter().map(|(_, d)| d.len()).sum();
    if json {
        say!(
            "{}",
            json!({"key": args.key, "items": items.len(), "bytes": bytes, "chunks": chunks.len()})
        );
    } else {
        say!(
            "loaded {}: {} items, {bytes} bytes in {} chunks",
            args.key,
            items.len(),
            chunks.len()
        );
    }
    Ok(())
}
