//! Integration-test harness: a real redis-server (or valkey-server) per test on a free
//! loopback port, with the freshly built module loaded; a raw RESP2 (or, after HELLO 3,
//! RESP3) connection that returns replies byte for byte; and the `redis` crate client.
#![allow(dead_code)]

pub mod bf;

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

/// A port nobody listens on (nor on port + 10000, a cluster node's bus port), distinct
/// across the tests of one binary and, by the process id, across test binaries.
fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let pid = std::process::id();
    loop {
        let n = u32::from(NEXT.fetch_add(1, Ordering::SeqCst));
        let port = (20000 + (pid.wrapping_mul(61) + n) % 30000) as u16;
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
        Server::launch(
            dir_path,
            extra.iter().map(|s| s.to_string()).collect(),
            false,
        )
    }

    /// A server over an existing directory (e.g. one holding an RDB file), kept on drop.
    pub fn start_in(dir: &Path, extra: &[&str]) -> Server {
        Server::launch(
            dir.to_path_buf(),
            extra.iter().map(|s| s.to_string()).collect(),
            true,
        )
    }

    fn launch(dir: PathBuf, extra: Vec<String>, keep_dir: bool) -> Server {
        let port = free_port();
        let mut server = Server {
            port,
            dir,
            child: None,
            extra,
            keep_dir,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let module = module_path();
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
        self.spawn();
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

/// A RESP2 reply as parsed from the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }
    /// An error reply with exactly this text (after the `-`).
    pub fn err(text: &str) -> Reply {
        Reply::Error(text.into())
    }
    /// A (non-nil) bulk string.
    pub fn bulk(data: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Some(data.as_ref().to_vec()))
    }
    /// A nil bulk string.
    pub fn nil() -> Reply {
        Reply::Bulk(None)
    }
    /// An array of integers.
    pub fn int_array(values: &[i64]) -> Reply {
        Reply::Array(Some(values.iter().map(|&n| Reply::Int(n)).collect()))
    }
    /// An array of bulk strings (BF.DEBUG's shape).
    pub fn bulk_array(values: &[&str]) -> Reply {
        Reply::Array(Some(values.iter().map(Reply::bulk).collect()))
    }
    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(n) => *n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Reply::Bulk(Some(b)) => b.clone(),
            Reply::Simple(s) => s.as_bytes().to_vec(),
            other => panic!("expected a string, got {other:?}"),
        }
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).to_string()
    }
    pub fn array(&self) -> Vec<Reply> {
        match self {
            Reply::Array(Some(items)) => items.clone(),
            other => panic!("expected an array, got {other:?}"),
        }
    }
    pub fn ints(&self) -> Vec<i64> {
        self.array().iter().map(Reply::int).collect()
    }
    pub fn error(&self) -> String {
        match self {
            Reply::Error(e) => e.clone(),
            other => panic!("expected an error, got {other:?}"),
        }
    }
    /// The reply in the fixture manifests' JSON form.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Reply::Simple(s) => Value::String(s.clone()),
            Reply::Error(e) => serde_json::json!({ "error": e }),
            Reply::Int(n) => Value::from(*n),
            Reply::Bulk(None) | Reply::Array(None) => Value::Null,
            Reply::Bulk(Some(b)) => Value::String(String::from_utf8_lossy(b).to_string()),
            Reply::Array(Some(items)) => Value::Array(items.iter().map(Reply::to_json).collect()),
        }
    }
}

/// A plain RESP2 connection: the exact bytes of each reply, and its parsed form.
pub struct RawConnection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Bytes of the last reply, exactly as received.
    pub last_raw: Vec<u8>,
}

impl RawConnection {
    pub fn connect(port: u16) -> std::io::Result<RawConnection> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(120) * slowdown()))?;
        stream.set_nodelay(true)?;
        Ok(RawConnection {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            last_raw: Vec::new(),
        })
    }

    /// A connection switched to RESP3 with `HELLO 3` (its reply, a map, is read and dropped).
    pub fn connect_resp3(port: u16) -> std::io::Result<RawConnection> {
        let mut conn = RawConnection::connect(port)?;
        conn.call(&["HELLO", "3"]);
        assert!(
            conn.last_raw.starts_with(b"%"),
            "HELLO 3 did not answer with a map: {:?}",
            String::from_utf8_lossy(&conn.last_raw)
        );
        Ok(conn)
    }

    /// Sends a command; returns its reply's bytes exactly as received.
    pub fn call_raw<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.call(args);
        self.last_raw.clone()
    }

    pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            let arg = arg.as_ref();
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<()> {
        self.writer.write_all(&Self::encode(args))
    }

    /// Sends a command and reads its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        self.send(args).expect("send");
        self.read_reply()
    }

    /// Sends many commands at once (pipelining) and reads all replies.
    pub fn pipeline<A: AsRef<[u8]>>(&mut self, commands: &[Vec<A>]) -> Vec<Reply> {
        let mut out = Vec::new();
        for cmd in commands {
            out.extend_from_slice(&Self::encode(cmd));
        }
        self.writer.write_all(&out).expect("send");
        commands.iter().map(|_| self.read_reply()).collect()
    }

    pub fn read_reply(&mut self) -> Reply {
        self.last_raw.clear();
        self.parse()
    }

    fn line(&mut self) -> String {
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line).expect("read");
        assert!(
            line.ends_with(b"\r\n"),
            "connection closed or bad line {line:?}"
        );
        self.last_raw.extend_from_slice(&line);
        String::from_utf8_lossy(&line[..line.len() - 2]).to_string()
    }

    fn parse(&mut self) -> Reply {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Reply::Simple(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(rest.parse().expect("integer")),
            "$" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    return Reply::Bulk(None);
                }
                let mut data = vec![0; len as usize + 2];
                self.reader.read_exact(&mut data).expect("bulk");
                self.last_raw.extend_from_slice(&data);
                data.truncate(len as usize);
                Reply::Bulk(Some(data))
            }
            "*" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    return Reply::Array(None);
                }
                Reply::Array(Some((0..len).map(|_| self.parse()).collect()))
            }
            // RESP3 types (after HELLO 3) folded into the RESP2 shapes; `last_raw` tells
            // them apart: a map is its flat key/value array, null a nil bulk, a boolean 1/0,
            // a double the bulk string of its digits.
            "%" => {
                let len: i64 = rest.parse().expect("length");
                Reply::Array(Some((0..2 * len).map(|_| self.parse()).collect()))
            }
            "_" => Reply::Bulk(None),
            "#" => Reply::Int(i64::from(rest == "t")),
            "," => Reply::Bulk(Some(rest.as_bytes().to_vec())),
            _ => panic!("unexpected reply line {line:?}"),
        }
    }
}

/// `INFO <section>` on a new connection: the text, or the error reply's text; an I/O error
/// (nothing listening yet, a reset) is returned as such instead of failing the test.
fn probe_info(port: u16, section: &str) -> std::io::Result<Result<String, String>> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10) * slowdown()))?;
    let mut writer = stream.try_clone()?;
    writer.write_all(&RawConnection::encode(&["INFO", section]))?;
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

/// Expected replies, by their RESP2 shape, for tests to compare with.
pub mod replies {
    use super::Reply;

    pub fn err(text: &str) -> Reply {
        Reply::err(text)
    }

    pub fn int(n: i64) -> Reply {
        Reply::Int(n)
    }

    pub fn ok() -> Reply {
        Reply::ok()
    }

    pub fn ints(values: &[i64]) -> Reply {
        Reply::int_array(values)
    }
}

/// Shorthand: one command, its reply.
pub fn call(conn: &mut RawConnection, line: &str) -> Reply {
    let args: Vec<&str> = line.split(' ').collect();
    conn.call(&args)
}

/// One field of an INFO section (`name:value` line), e.g. `master_repl_offset`.
pub fn info_field(conn: &mut RawConnection, section: &str, name: &str) -> String {
    let info = conn.call(&["INFO", section]).text();
    let prefix = format!("{name}:");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .trim()
        .to_string()
}

/// Whether the server under test is Valkey (its INFO names it), not Redis.
pub fn is_valkey(conn: &mut RawConnection) -> bool {
    conn.call(&["INFO", "server"])
        .text()
        .contains("server_name:valkey")
}

/// Polls until `f` holds or 10 s pass.
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10) * slowdown();
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a replica of `master` and waits until it is in sync.
pub fn start_replica(master: &Server) -> Server {
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &master.port.to_string()]);
    // Probed on fresh connections: one may be reset while the first sync sets up.
    wait_until("replica sync", || {
        probe_info(replica.port, "replication")
            .is_ok_and(|info| info.is_ok_and(|text| text.contains("master_link_status:up")))
    });
    // The full sync was the master's background save of every module value.
    wait_for_bgsave(&mut master.raw());
    replica
}

/// Waits until every write so far reached the replicas (`WAIT n 10000`).
pub fn wait_for_replicas(conn: &mut RawConnection, replicas: i64) {
    let acked = conn.call(&["WAIT", &replicas.to_string(), "10000"]).int();
    assert_eq!(acked, replicas, "replicas did not acknowledge");
}

/// Every reply of a full SCANDUMP: (iterator returned, data), terminator included.
pub fn scandump(conn: &mut RawConnection, command: &str, key: &str) -> Vec<(i64, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let reply = conn.call(&[
            command.as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
        ]);
        let parts = reply.array();
        let next = parts[0].int();
        let data = match &parts[1] {
            Reply::Bulk(b) => b.clone(),
            other => panic!("unexpected SCANDUMP data {other:?}"),
        };
        out.push((next, data));
        if next == 0 {
            return out;
        }
        iter = next;
    }
}

/// Replays a SCANDUMP (all but the terminator) with LOADCHUNK into `key`.
pub fn loadchunks(
    conn: &mut RawConnection,
    command: &str,
    key: &str,
    dump: &[(i64, Option<Vec<u8>>)],
) {
    for (iter, data) in dump.iter().filter(|(iter, _)| *iter != 0) {
        let reply = conn.call(&[
            command.as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            data.as_deref().unwrap_or_default(),
        ]);
        assert_eq!(reply, Reply::Simple("OK".into()), "{command} {key} {iter}");
    }
}

// ---------------------------------------------------------------------------------------
// Cuckoo filter helpers (tests/cf_*.rs).

/// A CF.LOADCHUNK header (38 bytes, COMPAT §7.3): numItems, numBuckets, numDeletes,
/// numFilters, bucketSize, maxIterations, expansion.
pub fn cf_header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(38);
    for field in [items, buckets, deletes, filters] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    for field in [bucket_size, max_iterations, expansion] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    out
}

/// Everything a client can observe of a CF key besides membership: CF.INFO, CF.DEBUG,
/// the whole SCANDUMP and the DUMP payload.
#[derive(Debug, PartialEq)]
pub struct CfState {
    pub info: Reply,
    pub debug: Reply,
    pub dump: Vec<(i64, Option<Vec<u8>>)>,
    pub payload: Reply,
}

pub fn cf_state(conn: &mut RawConnection, key: &str) -> CfState {
    CfState {
        info: conn.call(&["CF.INFO", key]),
        debug: conn.call(&["CF.DEBUG", key]),
        dump: scandump(conn, "CF.SCANDUMP", key),
        payload: conn.call(&["DUMP", key]),
    }
}

/// CF.COUNT of every item (one pipeline).
pub fn cf_counts(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    let commands: Vec<Vec<&str>> = items
        .iter()
        .map(|item| vec!["CF.COUNT", key, item.as_str()])
        .collect();
    conn.pipeline(&commands).iter().map(Reply::int).collect()
}

/// CF.MEXISTS of every item.
pub fn cf_mexists(conn: &mut RawConnection, key: &str, items: &[String]) -> Vec<i64> {
    let mut args = vec!["CF.MEXISTS", key];
    args.extend(items.iter().map(String::as_str));
    conn.call(&args).ints()
}

/// Sends many commands in one pipeline and checks every reply equals `expected`.
pub fn pipeline_expect(conn: &mut RawConnection, commands: &[Vec<String>], expected: &Reply) {
    for (cmd, reply) in commands.iter().zip(conn.pipeline(commands)) {
        assert_eq!(&reply, expected, "{cmd:?}");
    }
}

/// Redis' CRC64 (Jones polynomial, reflected, as `crc64(0, data)` in src/crc64.c), which
/// DUMP payloads end with (little-endian).
pub fn crc64_jones(data: &[u8]) -> u64 {
    const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A DUMP payload with its trailing CRC64 recomputed for `body` (everything before it).
pub fn with_crc(body: &[u8]) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&crc64_jones(body).to_le_bytes());
    out
}

/// Starts BGREWRITEAOF and waits until the rewrite finished, successfully.
pub fn rewrite_aof(conn: &mut RawConnection) {
    let reply = conn.call(&["BGREWRITEAOF"]);
    assert!(matches!(reply, Reply::Simple(_)), "BGREWRITEAOF: {reply:?}");
    wait_for_aof_rewrite(conn);
}

/// Waits until no AOF rewrite runs or is scheduled, and checks that the last one
/// succeeded (a forked child that crashed while writing a module value reports `err`).
pub fn wait_for_aof_rewrite(conn: &mut RawConnection) {
    wait_until("the AOF rewrite", || {
        info_field(conn, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(conn, "persistence", "aof_rewrite_scheduled") == "0"
    });
    assert_eq!(
        info_field(conn, "persistence", "aof_last_bgrewrite_status"),
        "ok",
        "the last AOF rewrite failed"
    );
}

/// Waits until no background RDB save runs, and checks that the last one succeeded
/// (full resynchronisations of replicas are such saves too).
pub fn wait_for_bgsave(conn: &mut RawConnection) {
    wait_until("the background save", || {
        info_field(conn, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    assert_eq!(
        info_field(conn, "persistence", "rdb_last_bgsave_status"),
        "ok",
        "the last background save failed"
    );
}
