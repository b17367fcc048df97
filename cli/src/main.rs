//! `redbloom`: sharded filters over Redis/Valkey Cluster, bulk loading, inspection, merges
//! and local snapshots of redbloom / RedisBloom filters. Errors are one line on standard error
//! (with `--json` a JSON object `{"error": {"kind", "message"}}`); the exit code is 0 on
//! success, 2 for a usage error, 1 for any other failure, 128 + the signal's number for a
//! load stopped by SIGINT / SIGTERM. `--json` prints results as JSON on standard output.

use clap::{CommandFactory, Parser, Subcommand};

/// `println!` that does not panic when standard output is closed (e.g. piped into `head`):
/// the output is then dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod connect;
mod health_cmd;
mod input;
mod inspect_cmd;
mod load_cmd;
mod merge_cmd;
mod shard_cmd;
mod signals;
mod snapshot_cmd;
use redbloom_client::Error;
use std::process::ExitCode;

/// The exit code of a usage error (as clap's own).
const USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "redbloom",
    version,
    about = "Sharded, bulk-loaded and local redbloom filters"
)]
struct Cli {
    /// Print results as JSON (and errors as a JSON object on standard error).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds allowed for connecting to a server and for each of its replies.
    #[arg(long, global = true, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// For rediss:// URLs: the CA certificate (PEM) the server's is checked against
    /// (default: the system's trusted roots).
    #[arg(long, global = true, value_name = "FILE")]
    tls_ca: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sharded filters: one logical filter over N member keys spread over a cluster.
    Shard {
        #[command(subcommand)]
        command: shard_cmd::ShardCommand,
    },
    /// Builds a filter locally and ships it with LOADCHUNK (KEY must not exist).
    Load(load_cmd::LoadArgs),
    /// Per link: capacity, items, bits, hashes, fill ratio, estimated FP rate, memory;
    /// for the filter: the estimate against its target, and warnings.
    Inspect {
        /// Any node of a cluster, or a single server: redis://[user:password@]host:port[/db].
        url: String,
        /// A bf, cf, cbf or static filter key, or a sharded filter's name.
        key: String,
    },
    /// The filter keys at risk (over their asked FP rate or capacity, long chains, Cuckoo
    /// filters near their sub-filter limit, saturated counters), worst first, with the
    /// reservation to rebuild with; exit code 1 when any is over its asked rate.
    Health {
        /// Any node of a cluster, or a single server: redis://[user:password@]host:port[/db].
        url: String,
    },
    /// Writes KEY's SCANDUMP to FILE (a snapshot `check` answers from).
    Export {
        /// Any node of a cluster, or a single server: redis://[user:password@]host:port[/db].
        url: String,
        /// A bf, cf, cbf or static filter key.
        key: String,
        /// Where to write the snapshot (`-`: standard output).
        file: std::path::PathBuf,
    },
    /// Answers items (0/1 each, in order) from a snapshot file, as the server did at export.
    Check {
        /// The snapshot file `export` wrote (`-`: standard input).
        snapshot: std::path::PathBuf,
        /// Items to answer; with none and no --file, standard input (one per line).
        items: Vec<String>,
        /// More items, one per line (`-`: standard input).
        #[arg(long, alias = "items-file")]
        file: Option<std::path::PathBuf>,
    },
    /// Merges filter keys into DEST with BF.MERGE, CBF.MERGE or CF.MERGE (by their type).
    Merge(merge_cmd::MergeArgs),
    /// Merges snapshot files of one type and shape into OUT, without a server.
    MergeSnapshots(merge_cmd::MergeSnapshotsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !(cli.timeout > 0.0 && cli.timeout <= 86_400.0) {
        let _ = Cli::command()
            .error(
                clap::error::ErrorKind::ValueValidation,
                "--timeout must be more than 0 and at most 86400 seconds",
            )
            .print();
        return ExitCode::from(USAGE);
    }
    connect::set_timeout(std::time::Duration::from_secs_f64(cli.timeout));
    let outcome = match &cli.tls_ca {
        Some(file) => connect::set_tls_ca(file),
        None => Ok(()),
    }
    .and_then(|()| run(cli.command, cli.json));
    finish(outcome, cli.json)
}

fn run(command: Command, json: bool) -> redbloom_client::Result<()> {
    match command {
        Command::Shard { command } => shard_cmd::run(command, json),
        Command::Load(args) => load_cmd::run(args, json),
        Command::Inspect { url, key } => inspect_cmd::run(&url, &key, json),
        Command::Health { url } => health_cmd::run(&url, json),
        Command::Export { url, key, file } => snapshot_cmd::export(&url, &key, &file, json),
        Command::Check {
            snapshot,
            items,
            file,
        } => snapshot_cmd::check(&snapshot, &items, file.as_deref(), json),
        Command::Merge(args) => merge_cmd::run(args, json),
        Command::MergeSnapshots(args) => merge_cmd::run_snapshots(args, json),
    }
}

/// The exit code of `outcome`, its error printed (one line, or a JSON object).
fn finish(outcome: redbloom_client::Result<()>, json: bool) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            use std::io::Write as _;
            let line = if json {
                serde_json::json!({"error": {"kind": e.kind(), "message": e.message()}}).to_string()
            } else {
                format!("redbloom: {e}")
            };
            let _ = writeln!(std::io::stderr().lock(), "{line}");
            ExitCode::from(match e {
                Error::Usage(_) => USAGE,
                Error::Interrupted(_) => signals::exit_code(),
                _ => 1,
            })
        }
    }
}
