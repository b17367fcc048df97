//! `redbloom load URL KEY [--error-rate E] --capacity C [--expansion X | --nonscaling]
//! [--type bf|cf] [--file F]`.

use crate::connect;
use crate::input;
use crate::shard_cmd::SpecArgs;
use crate::signals;
use clap::Args;
use redbloom_client::ship::{self, Replace, Ship, Target};
use redbloom_client::{Error, Family, Result};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub struct LoadArgs {
    /// Any node of a cluster, or a single server: redis://[user:password@]host:port[/db]
    /// (the password may come from REDISCLI_AUTH instead).
    url: String,
    /// The key to create; it must not exist.
    key: String,
    #[command(flatten)]
    spec: SpecArgs,
    /// bf or cf.
    #[arg(long = "type", default_value = "bf")]
    family: String,
    /// One item per line (`-`: standard input, also the default).
    #[arg(long)]
    file: Option<PathBuf>,
}

pub fn run(args: LoadArgs, json: bool) -> Result<()> {
    let family = Family::parse(&args.family)?;
    if family == Family::Cbf {
        return Err(Error::usage("load supports bf and cf filters"));
    }
    let spec = args.spec.spec(family, false)?;
    let mut conn = connect::open(&args.url)?;
    ship::ensure_absent(&mut conn, &args.key)?;
    // The server reserves the filter (under the temporary key, deleted again at once), so
    // its configs decide what the options leave open; the filter is built from that.
    let limits = ship::server_limits(&mut conn);
    let temp = ship::temp_key(&args.key);
    let mut built = ship::reserved(
        &mut conn,
        family,
        spec.reserve(&temp, spec.capacity),
        &temp,
        &limits,
    )
    .map_err(|e| e.context(&args.key))?;
    // The input streams through the filter, a read at a time: what is held is the filter
    // and one read, whatever the input's size. Nothing is written before its end.
    let mut items = 0;
    let reading = input::progress("build");
    input::for_each_batch(args.file.as_deref(), |batch| {
        built.add_within(batch, items, &limits)?;
        items += batch.len() as u64;
        reading.set_position(items);
        Ok(())
    })?;
    reading.finish_and_clear();
    let mut chunks = 1;
    built.for_each_chunk(|_, _| {
        chunks += 1;
        Ok(())
    })?;
    signals::catch();
    let bar = input::bytes_progress("ship", built.dump_bytes());
    let target = Target {
        key: &args.key,
        built: &built,
        replace: Replace::Absent,
    };
    let bytes = ship::deliver(
        &mut conn,
        &[target],
        &mut Ship::new(&signals::stopped, &mut |n| bar.set_position(n)),
    )?;
    bar.finish_and_clear();
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
