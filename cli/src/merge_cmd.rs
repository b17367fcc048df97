//! `redbloom merge URL DEST SRC…` and `redbloom merge-snapshots OUT IN…`.

use clap::Args;
use redbloom_client::merge::{merge, MergeOptions};
use redbloom_client::snapshot_merge::{merge_files, Input};
use redbloom_client::{Error, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct MergeArgs {
    #[arg(help = crate::connect::URL_HELP)]
    url: String,
    #[command(flatten)]
    _server: crate::connect::ServerArgs,
    /// The key merged into: created with the sources' shape, or (if it exists) merged in.
    dest: String,
    /// The filter keys merged: bf, cbf or cf, all of one type and shape.
    #[arg(required = true, value_name = "SRC")]
    sources: Vec<String>,
    /// Replace DEST instead of merging it in.
    #[arg(long = "override")]
    override_dest: bool,
    /// The intersection instead of the union (bf and cbf filters of a single link).
    #[arg(long)]
    intersect: bool,
}

pub fn run(args: MergeArgs, json: bool) -> Result<()> {
    let mut conn = crate::connect::open(&args.url)?;
    let sources: Vec<&str> = args.sources.iter().map(String::as_str).collect();
    let options = MergeOptions {
        override_dest: args.override_dest,
        intersect: args.intersect,
    };
    let family = merge(&mut conn, &args.dest, &sources, options)?;
    if json {
        say!(
            "{}",
            json!({"dest": args.dest, "type": family.name(), "sources": sources})
        );
    } else {
        say!(
            "merged {} {} filter(s) into {} ({}.MERGE{})",
            sources.len(),
            family.name(),
            args.dest,
            family.prefix(),
            if args.intersect { " INTERSECT" } else { "" }
        );
    }
    Ok(())
}

#[derive(Args)]
pub struct MergeSnapshotsArgs {
    /// Where the merged snapshot is written (`-`: standard output).
    out: PathBuf,
    /// Snapshot files `export` wrote (`-`: standard input, once), all of one type and shape.
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// The intersection instead of the union (bf and cbf filters of a single link).
    #[arg(long)]
    intersect: bool,
}

pub fn run_snapshots(args: MergeSnapshotsArgs, json: bool) -> Result<()> {
    let stdin = Path::new("-");
    if args.inputs.iter().filter(|p| *p == stdin).count() > 1 {
        return Err(Error::usage("standard input (`-`) can be one input only"));
    }
    let mut files = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        if path == stdin {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut data)
                .map_err(|e| Error::file(format!("cannot read the standard input: {e}")))?;
            files.push(("standard input".to_string(), data));
        } else {
            let data = std::fs::read(path)
                .map_err(|e| Error::file(format!("cannot read {}: {e}", path.display())))?;
            files.push((path.display().to_string(), data));
        }
    }
    let inputs: Vec<Input<'_>> = files
        .iter()
        .map(|(name, bytes)| Input { name, bytes })
        .collect();
    let options = MergeOptions {
        override_dest: false,
        intersect: args.intersect,
    };
    let (family, bytes) = merge_files(&inputs, options)?;
    let summary = |to: &str| {
        format!(
            "merged {} {} snapshot(s) into {to}: {} bytes",
            inputs.len(),
            family.name(),
            bytes.len()
        )
    };
    if args.out == stdin {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(|e| Error::file(format!("cannot write the standard output: {e}")))?;
        // Standard output holds the snapshot: the summary goes to standard error.
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}",
            summary("the standard output")
        );
        return Ok(());
    }
    std::fs::write(&args.out, &bytes)
        .map_err(|e| Error::file(format!("cannot write {}: {e}", args.out.display())))?;
    if json {
        say!(
            "{}",
            json!({"out": args.out.display().to_string(), "type": family.name(), "inputs": inputs.len(), "bytes": bytes.len()})
        );
    } else {
        say!("{}", summary(&args.out.display().to_string()));
    }
    Ok(())
}
