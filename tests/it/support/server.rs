//! A real redis-server (or valkey-server, `REDBLOOM_SERVER`) per test on a free loopback
//! port, with the freshly built module loaded, in a directory of its own; it fails the test
//! when the server died, did not shut down cleanly or logged a caught panic.

use super::resp::{encode, RawConnection};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The module under test: `REDBLOOM_MODULE` if set, else the cdylib cargo built next to
/// this test binary.
pub fn module_path() -> PathBuf {
    if let Ok(path) = std::env::var("REDBLOOM_MODULE") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    for dir in [deps, deps.parent().expect("profile dir")] {
        let candidate = dir.join("libredbloom.so");
        if candidate.exists() {
            return candidate;
        }
    }
    panic!("libredbloom.so not found next to {}", exe.display());
}

/// The server binary: `REDBLOOM_SERVER` (e.g. a valkey-server path) or `redis-server`.
pub fn server_binary() -> String {
    std::env::var("REDBLOOM_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

/// `REDBLOOM_SERVER_WRAPPER`: a command the server runs under (e.g. `valgrind
/// --tool=memcheck ...`), split on whitespace; `None` when unset or empty.
pub fn server_wrapper() -> Option<Vec<String>> {
    let wrapper = std::env::var("REDBLOOM_SERVER_WRAPPER").ok()?;
    let words: Vec<String> = wrapper.split_whitespace().map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

/// How much longer than usual start-up, shutdown and polling may take: 20× under a
/// wrapper such as valgrind.
pub fn slowdown() -> u32 {
    if server_wrapper().is_some() {
        20
    } else {
        1
    }
}

/// The command-line client that goes with the server: `valkey-cli` next to a
/// `valkey-server`, else `redis-cli`.
pub fn cli_binary() -> String {
    let server = PathBuf::from(server_binary());
    if let Some(name) = server.file_name().and_then(|n| n.to_str()) {
        let cli = server.with_file_name(name.replace("-server", "-cli"));
        if cli.is_file() {
            return cli.display().to_string();
        }
    }
    "redis-cli".to_string()
}

/// The first port the kernel hands out to outgoing connections
/// (`net.ipv4.ip_local_port_range`); a server port at or above it can be taken by any
/// client socket between [`free_port`]'s check and the server's bind.
fn ephemeral_start() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768)
}

/// A port nobody listens on (nor on port + 10000, a cluster node's bus port), below the
/// ephemeral range so that no outgoing connection takes it, distinct across the tests of
/// the binary (a counter: they run on several threads) and, by the process id, from other
/// test processes. A port lost anyway is retried by [`Server`]'s start.
pub fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let pid = std::process::id();
    // Both the port and its bus port stay below the ephemeral range: [10000, start - 10000).
    let span = ephemeral_start().saturating_sub(20000).max(1000);
    loop {
        let n = u32::from(NEXT.fetch_add(1, Ordering::SeqCst));
        let port = (10000 + (pid.wrapping_mul(61) + n) % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok()
            && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok()
        {
            return port;
        }
    }
}

/// Process ids the tests SIGKILLed on purpose ([`Server::kill_pid`]): their exit is no
/// failure.
static KILLED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// What the server printed on stdout and stderr (e.g. a Rust panic message), next to its log.
const STDERR_FILE: &str = "server.stderr";

/// A running server; stopped (by its handle) and its directory removed on drop. A server
/// that exited by itself (not SIGKILLed by the test), did not exit cleanly on SHUTDOWN, or
/// logged a caught panic fails the test, with its log and stderr printed.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    extra: Vec<String>,
    keep_dir: bool,
    /// Another module than the one under test (a RedisBloom build, [`redisbloom`]).
    module: Option<PathBuf>,
}

/// RedisBloom 2.4.20 built outside the repository (`REDISBLOOM_MODULE=/path/to/redisbloom.so`),
/// for the checks of what RedisBloom makes of redbloom's data; `None`, with a message
/// naming `test`, when it is not set or the servers under test are not Redis' own (it
/// runs on Debian's redis-server 7.0).
pub fn redisbloom(test: &str) -> Option<PathBuf> {
    let module = std::env::var("REDISBLOOM_MODULE").ok().map(PathBuf::from);
    match module {
        Some(module) if std::env::var("REDBLOOM_SERVER").is_err() => {
            assert!(
                module.is_file(),
                "REDISBLOOM_MODULE: no file {}",
                module.display()
            );
            Some(module)
        }
        _ => {
            eprintln!(
                "{test}: RedisBloom side skipped (set REDISBLOOM_MODULE to a RedisBloom 2.4.20 \
                 redisbloom.so; runs on redis-server only)"
            );
            None
        }
    }
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU16 = AtomicU16::new(0);
        let dir = std::env::temp_dir().join(format!(
            "redbloom-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Server {
    /// A server with the module and no persistence.
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A server with extra `--name value` arguments (module arguments go after
    /// `--loadmodule` via `start_with_module_args`).
    pub fn start_with(extra: &[&str]) -> Server {
        let dir = TempDir::new("srv");
        let dir_path = dir.0.clone();
        std::mem::forget(dir);
        Server::launch_with(dir_path, extra, false, None)
    }

    /// A server over an existing directory (e.g. one holding an RDB file), kept on drop.
    pub fn start_in(dir: &Path, extra: &[&str]) -> Server {
        Server::launch_with(dir.to_path_buf(), extra, true, None)
    }

    /// A server with another module than redbloom (a RedisBloom build) and extra arguments.
    pub fn start_with_module(module: &Path, extra: &[&str]) -> Server {
        let dir = TempDir::new("ref");
        let dir_path = dir.0.clone();
        std::mem::forget(dir);
        Server::launch_with(dir_path, extra, false, Some(module))
    }

    /// [`Server::start_with_module`] over an existing directory (kept on drop).
    pub fn start_in_with_module(dir: &Path, module: &Path, extra: &[&str]) -> Server {
        Server::launch_with(dir.to_path_buf(), extra, true, Some(module))
    }

    fn launch_with(dir: PathBuf, extra: &[&str], keep_dir: bool, module: Option<&Path>) -> Server {
        let mut server = Server {
            port: free_port(),
            dir,
            child: None,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            keep_dir,
            module: module.map(Path::to_path_buf),
        };
        server.spawn(5);
        server
    }

    /// Starts the server on `self.port`; `moves` more times on a fresh port when another
    /// process took that port first (only for a first start: a restart keeps its port).
    fn spawn(&mut self, moves: u32) {
        let log_start = self.log().len();
        let module = self.module.clone().unwrap_or_else(module_path);
        let mut args: Vec<String> = vec![
            "--port".into(),
            self.port.to_string(),
            "--bind".into(),
            "127.0.0.1".into(),
            "--dir".into(),
            self.dir.display().to_string(),
            "--save".into(),
            "".into(),
            "--appendonly".into(),
            "no".into(),
            "--enable-debug-command".into(),
            "local".into(),
            "--repl-diskless-sync-delay".into(),
            "0".into(),
            "--loglevel".into(),
            "notice".into(),
            "--logfile".into(),
            "server.log".into(),
        ];
        // Module arguments, when given, are `--loadmodule path args...` as one option.
        let module_args = self
            .extra
            .iter()
            .position(|a| a == "--module-args")
            .map(|i| self.extra[i + 1..].to_vec())
            .unwrap_or_default();
        let plain_extra: Vec<String> = self
            .extra
            .iter()
            .take_while(|a| *a != "--module-args")
            .cloned()
            .collect();
        args.extend(plain_extra);
        args.push("--loadmodule".into());
        args.push(module.display().to_string());
        args.extend(module_args);
        let mut command = match server_wrapper() {
            Some(words) => {
                let mut command = Command::new(&words[0]);
                command.args(&words[1..]).arg(server_binary());
                command
            }
            None => Command::new(server_binary()),
        };
        let output = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(STDERR_FILE))
            .expect("the server's stderr file");
        let child = command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("the server's stderr file"))
            .stderr(output)
            .spawn()
            .expect("start the server binary");
        let pid = child.id();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60) * slowdown();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                // Another process bound the port between free_port's check and the
                // server's bind: start again on another port.
                let log = self.log();
                if moves > 0 && log[log_start.min(log.len())..].contains("Address already in use") {
                    self.child = None;
                    self.port = free_port();
                    return self.spawn(moves - 1);
                }
                panic!(
                    "server exited ({status}); log:\n{}\nstderr:\n{}",
                    self.log(),
                    self.stderr()
                );
            }
            // A probe that fails on I/O (a connection refused, or reset while the server is
            // still setting up, as a replica starting its first sync can) is retried.
            match probe_info(self.port, "server") {
                Ok(Ok(info)) => {
                    assert!(
                        info.contains(&format!("process_id:{pid}\r")),
                        "port {} answered by another server",
                        self.port
                    );
                    // INFO answers while the data set (RDB or AOF) is still loading.
                    if let Ok(Ok(persistence)) = probe_info(self.port, "persistence") {
                        if persistence.lines().any(|line| line == "loading:0") {
                            return;
                        }
                    }
                }
                Ok(Err(e)) if e.starts_with("LOADING") => {}
                Ok(Err(e)) => panic!("unexpected INFO reply -{e}"),
                Err(_) => {}
            }
            assert!(
                Instant::now() < deadline,
                "server did not start; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server process has ended (its exit status is kept for [`Server::stop`]).
    pub fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| matches!(c.try_wait(), Ok(Some(_))))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Everything the server printed on stdout and stderr.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join(STDERR_FILE)).unwrap_or_default()
    }

    /// Panics the module caught (logged at warning level) or Rust panic messages printed.
    fn logged_panics(&self) -> Vec<String> {
        let log = self.log();
        let stderr = self.stderr();
        log.lines()
            .filter(|line| line.contains(redbloom::CAUGHT_PANIC_LOG))
            .chain(stderr.lines().filter(|line| line.contains("panicked at")))
            .map(str::to_string)
            .collect()
    }

    /// Fails the test (unless it is failing already) with `problem`, the log and stderr.
    fn fail(&self, problem: &str) {
        let report = self.report(problem);
        if std::thread::panicking() {
            eprintln!("{report}");
        } else {
            panic!("{report}");
        }
    }

    fn report(&self, problem: &str) -> String {
        format!(
            "server on port {}: {problem}\n--- log ---\n{}\n--- stderr ---\n{}",
            self.port,
            self.log(),
            self.stderr()
        )
    }

    pub fn raw(&self) -> RawConnection {
        RawConnection::connect(self.port).expect("connect")
    }

    /// A raw connection that said `HELLO 3`: replies come in RESP3 types.
    pub fn raw3(&self) -> RawConnection {
        RawConnection::connect_resp3(self.port).expect("connect")
    }

    pub fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))
            .expect("client")
            .get_connection()
            .expect("connection")
    }

    /// Stops the server with SHUTDOWN NOSAVE semantics (SIGKILL when asked).
    ///
    /// Fails the test when the server had exited by itself (a crash: not SIGKILLed by
    /// [`Server::kill_pid`]), when SHUTDOWN did not end it with status 0, or when its log
    /// shows a caught panic.
    pub fn stop(&mut self, kill: bool) {
        if let Some(problem) = self.stop_checked(kill) {
            self.fail(&problem);
        }
    }

    /// [`Server::stop`], returning the problem instead of failing.
    fn stop_checked(&mut self, kill: bool) -> Option<String> {
        let mut problem = None;
        if let Some(mut child) = self.child.take() {
            let pid = child.id();
            if let Ok(Some(status)) = child.try_wait() {
                if !KILLED.lock().unwrap().contains(&pid) {
                    problem = Some(format!("the server exited by itself ({status})"));
                }
            } else if kill {
                let _ = child.kill();
            } else {
                let _ =
                    RawConnection::connect(self.port).map(|mut c| c.send(&["SHUTDOWN", "NOSAVE"]));
                let deadline = Instant::now() + Duration::from_secs(10) * slowdown();
                while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                match child.try_wait() {
                    Ok(Some(status)) if status.success() => {}
                    Ok(Some(status)) => {
                        problem = Some(format!("SHUTDOWN ended the server with {status}"))
                    }
                    _ => {
                        let _ = child.kill();
                        problem = Some("the server did not shut down".to_string());
                    }
                }
            }
            let _ = child.wait();
            let panics = self.logged_panics();
            if !panics.is_empty() {
                problem = Some(format!("the server logged panics:\n{}", panics.join("\n")));
            }
        }
        problem
    }

    /// SIGKILLs the server by its process id, from any thread (the handle stays here and
    /// is reaped by the next `stop` or `restart`).
    pub fn kill_pid(pid: u32) {
        KILLED.lock().unwrap().push(pid);
        let status = Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -9 {pid}");
    }

    /// Starts the server again after it was killed (`stop(true)` or [`Server::kill_pid`]),
    /// on the same directory and port, with the same arguments plus `extra`, without
    /// trying a clean shutdown first.
    pub fn restart_after_kill(&mut self, extra: &[&str]) {
        self.stop(true);
        self.restart(extra);
    }

    /// Stops and starts the server again on the same directory and port, with the same
    /// arguments plus `extra` (e.g. `--appendonly yes`).
    pub fn restart(&mut self, extra: &[&str]) {
        self.stop(false);
        let module_args_at = self.extra.iter().position(|a| a == "--module-args");
        let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        match module_args_at {
            Some(at) => {
                let tail = self.extra.split_off(at);
                self.extra.append(&mut args);
                self.extra.extend(tail);
            }
            None => self.extra.extend(args),
        }
        self.spawn(0);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!(
                "--- last lines of the server log (port {}) ---\n{}\n--- stderr ---\n{}",
                self.port,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
                self.stderr()
            );
        }
        // Under a wrapper (valgrind) a clean shutdown lets it write its leak report.
        let problem = self.stop_checked(server_wrapper().is_none());
        let report = problem.map(|problem| self.report(&problem));
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        match report {
            Some(report) if !std::thread::panicking() => panic!("{report}"),
            Some(report) => eprintln!("{report}"),
            None => {}
        }
    }
}

/// `INFO <section>` on a new connection: the text, or the error reply's text; an I/O error
/// (nothing listening yet, a reset) is returned as such instead of failing the test.
pub fn probe_info(port: u16, section: &str) -> std::io::Result<Result<String, String>> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10) * slowdown()))?;
    let mut writer = stream.try_clone()?;
    writer.write_all(&encode(&["INFO", section]))?;
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let first = first.trim_end();
    if let Some(error) = first.strip_prefix('-') {
        return Ok(Err(error.to_string()));
    }
    let len: usize = first
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("unexpected INFO reply {first:?}")))?;
    let mut body = vec![0; len + 2];
    reader.read_exact(&mut body)?;
    body.truncate(len);
    Ok(Ok(String::from_utf8_lossy(&body).into_owned()))
}
