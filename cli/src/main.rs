//! `redbloom`: sharded filters over Redis/Valkey Cluster, bulk loading, inspection, merges
//! and local snapshots of redbloom / RedisBloom filters. Errors are one line on standard error
//! (with `--json` a JSON object `{"error": {"kind", "message"}}`); the exit code is 0 on
//! success, 2 for a usage error, 1 for any other failure, 128 + the signal's number for a
//! load stopped by SIGINT / SIGTERM. `--json` prints results as JSON on standard output.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
    /// Print results as JSON (and errors, usage errors too, as a JSON object on standard
    /// error).
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    _server: connect::ServerArgs,
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
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// A bf, cf, cbf, static or xf filter key, or a sharded filter's name.
        key: String,
    },
    /// The filter keys at risk (over their asked FP rate or capacity, long chains, Cuckoo
    /// filters near their sub-filter limit, saturated counters), worst first, with the
    /// reservation to rebuild with; exit code 1 when any is over its asked rate.
    Health {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
    },
    /// Writes KEY's SCANDUMP to FILE (a snapshot `check` answers from).
    Export {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// A bf, cf, cbf, static or xf filter key.
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

/// The command line's parser: `-h` is redis-cli's host (help is `--help` alone), every
/// subcommand's options in alphabetical order (under "Options" and "Server options").
fn parser() -> clap::Command {
    fn adjust(command: clap::Command) -> clap::Command {
        command
            .disable_help_flag(true)
            // One display order: clap then lists the options by name.
            .mut_args(|arg| arg.display_order(0))
            .mut_subcommands(adjust)
    }
    adjust(Cli::command()).arg(
        clap::Arg::new("help")
            .long("help")
            .help("Print help")
            .action(clap::ArgAction::Help)
            .global(true),
    )
}

/// The subcommands that contact no server (the redis-cli options make no URL for them).
const OFFLINE: [&str; 2] = ["check", "merge-snapshots"];

/// `args` with the URL the redis-cli options (`-h -p -a --user -n --tls`) describe put
/// where a subcommand takes its URL (right after the subcommand's name), when they are
/// given.
fn with_url(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Ok(matches) = parser().ignore_errors(true).try_get_matches_from(&args) else {
        return args;
    };
    let (server, path) = connect::server_args(&matches);
    if !server.names_server() || path.is_empty() || OFFLINE.contains(&path[0].as_str()) {
        return args;
    }
    let mut at = 0;
    for name in &path {
        match args.iter().skip(at + 1).position(|a| a == name.as_str()) {
            Some(i) => at += i + 1,
            None => return args,
        }
    }
    let mut args = args;
    args.insert(at + 1, server.url().into());
    args
}

/// Each word of `text` that may hold a password (`user:password@host`) masked.
fn mask_words(text: &str) -> String {
    text.split_inclusive(|c: char| c.is_whitespace() || c == '\'' || c == '"')
        .map(|piece| {
            let body = piece.trim_end_matches(|c: char| c.is_whitespace() || c == '\'' || c == '"');
            format!(
                "{}{}",
                redbloom_client::mask_url(body),
                &piece[body.len()..]
            )
        })
        .collect()
}

/// A usage error the parser found: as clap prints it (masked), or with `--json` as the
/// JSON object of every other error; help and version are printed as asked.
fn parse_error(e: clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(e.exit_code() as u8);
    }
    let text = mask_words(&e.render().to_string());
    if json {
        // The first paragraph (clap lists missing arguments on the lines after the first).
        let paragraph: Vec<&str> = text
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        let message = paragraph.join(" ");
        let message = message.strip_prefix("error: ").unwrap_or(&message);
        finish(Err(Error::usage(message)), true)
    } else {
        use std::io::Write as _;
        let _ = write!(std::io::stderr().lock(), "{text}");
        ExitCode::from(USAGE)
    }
}

fn main() -> ExitCode {
    let args = with_url(std::env::args_os().collect());
    let json = args.iter().any(|a| a == "--json");
    let matches = match parser().try_get_matches_from(&args) {
        Ok(matches) => matches,
        Err(e) => return parse_error(e, json),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return parse_error(e, json),
    };
    let (server, _) = connect::server_args(&matches);
    let outcome = connect::configure(&server).and_then(|()| run(cli.command, cli.json));
    finish(outcome, cli.json)
}

fn run(command: Command, json: bool) -> redbloom_client::Result<()> {
    match command {
        Command::Shard { command } => shard_cmd::run(command, json),
        Command::Load(args) => load_cmd::run(args, json),
        Command::Inspect { url, key, .. } => inspect_cmd::run(&url, &key, json),
        Command::Health { url, .. } => health_cmd::run(&url, json),
        Command::Export { url, key, file, .. } => snapshot_cmd::export(&url, &key, &file, json),
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
