//! Connections of every command, with the server options (`--timeout`, `--tls-ca`, and
//! redis-cli's `-h -p -a --user -n --tls --cacert`), given before the subcommand or after it.

use clap::{ArgMatches, Args, FromArgMatches};
use redbloom_client::{Conn, Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

static TIMEOUT: OnceLock<Duration> = OnceLock::new();
static TLS_CA: OnceLock<Vec<u8>> = OnceLock::new();

/// The options of commands that contact a server (none has a default here: one given
/// after the subcommand wins over one given before it).
#[derive(Args, Clone, Default)]
pub struct ServerArgs {
    /// The database number, as redis-cli's -n.
    #[arg(short = 'n', long = "db", value_name = "DB", help_heading = HEADING)]
    pub db: Option<u32>,
    /// The server's host, as redis-cli's -h (then no URL is given: it is made of -h, -p,
    /// -a, --user, -n and --tls) [default: 127.0.0.1].
    #[arg(short = 'h', long = "host", value_name = "HOST", help_heading = HEADING)]
    pub host: Option<String>,
    /// The password, as redis-cli's -a (REDISCLI_AUTH keeps it off the command line).
    #[arg(short = 'a', long = "pass", value_name = "PASSWORD", help_heading = HEADING)]
    pub password: Option<String>,
    /// The server's port, as redis-cli's -p [default: 6379].
    #[arg(short = 'p', long = "port", value_name = "PORT", help_heading = HEADING)]
    pub port: Option<u16>,
    /// Seconds allowed for connecting, authenticating and the first reply together, then
    /// for each later reply [default: 10].
    #[arg(long, value_name = "SECONDS", help_heading = HEADING)]
    pub timeout: Option<f64>,
    /// Connect over TLS (a rediss:// URL).
    #[arg(long, help_heading = HEADING)]
    pub tls: bool,
    /// For TLS (rediss:// URLs, --tls): the CA certificate (PEM) the server's is checked
    /// against (default: the system's trusted roots); --cacert as redis-cli spells it.
    #[arg(long, alias = "cacert", value_name = "FILE", help_heading = HEADING)]
    pub tls_ca: Option<PathBuf>,
    /// The ACL user name, as redis-cli's --user.
    #[arg(long, value_name = "USER", help_heading = HEADING)]
    pub user: Option<String>,
}

/// What every URL argument's `--help` says.
pub const URL_HELP: &str =
    "Any node of a cluster, or a single server: redis://[user:password@]host:port[/db] \
     or host:port; left out when -h/-p give the server. The password may come from REDISCLI_AUTH";

/// The heading the server options are listed under in `--help`.
pub const HEADING: &str = "Server options";

impl ServerArgs {
    /// These options where they were given over `before`'s.
    fn over(self, before: ServerArgs) -> ServerArgs {
        ServerArgs {
            timeout: self.timeout.or(before.timeout),
            tls_ca: self.tls_ca.or(before.tls_ca),
            host: self.host.or(before.host),
            port: self.port.or(before.port),
            password: self.password.or(before.password),
            user: self.user.or(before.user),
            db: self.db.or(before.db),
            tls: self.tls || before.tls,
        }
    }

    /// Whether the URL is to be made of the redis-cli options.
    pub fn names_server(&self) -> bool {
        self.host.is_some()
            || self.port.is_some()
            || self.password.is_some()
            || self.user.is_some()
            || self.db.is_some()
            || self.tls
    }

    /// The URL the redis-cli options describe.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let host = self.host.as_deref().unwrap_or("127.0.0.1");
        let port = self.port.unwrap_or(6379);
        let base = format!("{scheme}://{host}:{port}/{}", self.db.unwrap_or(0));
        let Ok(mut url) = url::Url::parse(&base) else {
            // A host the URL parser refuses: the connection reports it, masked.
            return base;
        };
        if let Some(user) = &self.user {
            let _ = url.set_username(user);
        }
        if let Some(password) = &self.password {
            let _ = url.set_password(Some(password));
        }
        url.to_string()
    }
}

/// The server options of every level of `matches` (the top, then each subcommand), the
/// deepest given winning, and the names of the subcommands.
pub fn server_args(matches: &ArgMatches) -> (ServerArgs, Vec<String>) {
    // A level without them (`shard`, `check`) is skipped.
    let here = |m: &ArgMatches| {
        m.try_contains_id("timeout")
            .ok()
            .and_then(|_| ServerArgs::from_arg_matches(m).ok())
    };
    let mut args = here(matches).unwrap_or_default();
    let mut path = Vec::new();
    let mut level = matches;
    while let Some((name, sub)) = level.subcommand() {
        path.push(name.to_string());
        if let Some(given) = here(sub) {
            args = given.over(args);
        }
        level = sub;
    }
    (args, path)
}

/// Sets the options of every connection of this run.
pub fn configure(args: &ServerArgs) -> Result<()> {
    let timeout = args
        .timeout
        .unwrap_or(redbloom_client::conn::DEFAULT_TIMEOUT.as_secs_f64());
    if !(timeout > 0.0 && timeout <= 86_400.0) {
        return Err(Error::usage(
            "--timeout must be more than 0 and at most 86400 seconds",
        ));
    }
    let _ = TIMEOUT.set(Duration::from_secs_f64(timeout));
    if let Some(file) = &args.tls_ca {
        set_tls_ca(file)?;
    }
    Ok(())
}

/// Reads the CA certificate TLS servers are checked against (`--tls-ca`).
fn set_tls_ca(file: &Path) -> Result<()> {
    let pem = std::fs::read(file)
        .map_err(|e| Error::file(format!("cannot read {}: {e}", file.display())))?;
    let _ = TLS_CA.set(pem);
    Ok(())
}

/// Connects to `url` (a server or any node of a cluster) within the timeout; what a
/// retried command waits for is told on standard error.
pub fn open(url: &str) -> Result<Conn> {
    let mut conn = Conn::open_tls(
        url,
        *TIMEOUT.get_or_init(|| redbloom_client::conn::DEFAULT_TIMEOUT),
        TLS_CA.get().cloned(),
    )?;
    conn.notice = Some(|text| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "redbloom: {text}");
    });
    Ok(conn)
}
