//! `redbloom load URL KEY [--error-rate E] --capacity C [--expansion X | --nonscaling]
//! [--type bf|cf] [--file F]`, `redbloom load URL KEY --type static --error-rate E
//! [--file F]`, and `redbloom load URL KEY --type xf [--error-rate E] [--capacity C]
//! [--file F]` (XF.RESERVE's defaults for what is not given).

use crate::connect;
use crate::input;
use crate::shard_cmd::SpecArgs;
use crate::signals;
use clap::Args;
use redbloom_client::load::{static_rate, Built, LOAD_FAMILIES};
use redbloom_client::ship::{self, Replace, Ship, Target};
use redbloom_client::{Error, Family, Result};
use redbloom_core::static_filter::item_key;
use serde_json::json;
use std::path::PathBuf;

/// Items added to the filter between two moves of the build's progress bar.
const BUILD_STEP: usize = 65_536;

#[derive(Args)]
pub struct LoadArgs {
    #[arg(help = crate::connect::URL_HELP)]
    url: String,
    #[command(flatten)]
    _server: crate::connect::ServerArgs,
    /// The key to create; it must not exist.
    key: String,
    #[command(flatten)]
    spec: SpecArgs,
    /// bf, cf, static or xf.
    #[arg(long = "type", default_value = "bf")]
    family: String,
    /// One item per line (`-`: standard input, also the default).
    #[arg(long)]
    file: Option<PathBuf>,
}

pub fn run(args: LoadArgs, json: bool) -> Result<()> {
    let family = Family::parse(&args.family)?;
    if family == Family::Cbf {
        return Err(Error::usage(LOAD_FAMILIES));
    }
    if family == Family::Sf {
        return run_static(args, json);
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
        redbloom_client::family::reserve(&spec, &temp, spec.capacity),
        &temp,
        &limits,
    )
    .map_err(|e| e.context(&args.key))?;
    // The input streams through the filter, a read at a time: what is held is the filter
    // and one read, whatever the input's size. Nothing is written before its end.
    let mut items = 0;
    let reading = input::progress("build");
    signals::catch();
    input::for_each_batch(args.file.as_deref(), |batch| {
        let (batch, _) = input::nonblank(batch);
        // The bar moves as the filter is built, not only once per read.
        for part in batch.chunks(BUILD_STEP) {
            built.add_within(part, items, &limits)?;
            items += part.len() as u64;
            reading.set_position(items);
        }
        Ok(())
    })?;
    reading.finish_and_clear();
    ship_built(&mut conn, &args.key, &built, items, json)
}

/// A static filter: every item's key read (8 bytes an item are held, not the items), the
/// filter built of them as SF.BUILD builds it, then shipped as the other families are.
/// The error rate is required (as for bf); the sizing options do not apply.
fn run_static(args: LoadArgs, json: bool) -> Result<()> {
    let spec = &args.spec;
    let sizing = [
        (spec.capacity.is_some(), "--capacity"),
        (spec.expansion.is_some(), "--expansion"),
        (spec.nonscaling, "--nonscaling"),
    ];
    if let Some((_, option)) = sizing.iter().find(|(given, _)| *given) {
        return Err(Error::usage(format!(
            "{option} does not apply to static filters (sized from their distinct items)"
        )));
    }
    let rate = spec
        .error_rate
        .ok_or_else(|| Error::usage("--error-rate is required for static filters"))?;
    static_rate(rate)?;
    let mut conn = connect::open(&args.url)?;
    ship::ensure_absent(&mut conn, &args.key)?;
    let limits = ship::server_limits(&mut conn);
    let mut keys = Vec::new();
    let reading = input::progress("read");
    signals::catch();
    input::for_each_batch(args.file.as_deref(), |batch| {
        let (batch, _) = input::nonblank(batch);
        keys.extend(batch.iter().map(|item| item_key(item)));
        reading.set_position(keys.len() as u64);
        Ok(())
    })?;
    reading.finish_and_clear();
    let items = keys.len() as u64;
    let built =
        Built::build_static(keys, rate, &limits).map_err(|e| Error::from(e).context(&args.key))?;
    ship_built(&mut conn, &args.key, &built, items, json)
}

/// Ships `built` to the absent `key` and prints what was loaded (`items`: the input's
/// lines).
fn ship_built(
    conn: &mut redbloom_client::Conn,
    key: &str,
    built: &Built,
    items: u64,
    json: bool,
) -> Result<()> {
    let mut chunks = 1;
    built.for_each_chunk(|_, _| {
        chunks += 1;
        Ok(())
    })?;
    signals::catch();
    let bar = input::bytes_progress("ship", built.dump_bytes());
    let target = Target {
        key,
        built,
        replace: Replace::Absent,
    };
    let bytes = ship::deliver(
        conn,
        &[target],
        &mut Ship::new(&signals::stopped, &mut |n| bar.set_position(n)),
    )?;
    bar.finish_and_clear();
    if json {
        say!(
            "{}",
            json!({"key": key, "items": items, "bytes": bytes, "chunks": chunks})
        );
    } else {
        say!("loaded {key}: {items} items, {bytes} bytes in {chunks} chunks");
    }
    Ok(())
}
