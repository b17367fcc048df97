//! A connection to one server or to a whole cluster, chosen from any node's URL: pipelines
//! of single-key commands go to the nodes that own the keys (grouped per node, written to
//! every node before any reply is read, so the nodes work at once), MOVED/ASK redirections
//! are followed, and a pipeline that fails on a connection or cluster error (a failover, a
//! node restarting) is sent again on a fresh connection until [`Conn::retry_for`] runs out.

pub use crate::conn_url::parse_url;
use crate::conn_url::{no_answer, open_error};
use crate::error::{Error, Result};
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, ConnectionLike, FromRedisValue, RetryMethod, Value};
use std::time::{Duration, Instant};

enum Inner {
    Single(redis::Connection),
    Cluster(Box<ClusterConnection>),
}

pub struct Conn {
    url: String,
    /// What a reconnection to a single server uses (the URL's settings, the password of
    /// `REDISCLI_AUTH`).
    info: redis::ConnectionInfo,
    /// Connecting, each write and each reply must take at most this long.
    timeout: Duration,
    /// The CA certificate (PEM) a `rediss://` server's certificate is checked against
    /// (`None`: the system's trusted roots).
    tls_ca: Option<Vec<u8>>,
    /// Every node's `redis://host:port` (a cluster), so a reconnection does not depend on
    /// the node of the URL staying up.
    nodes: Vec<String>,
    username: Option<String>,
    password: Option<String>,
    inner: Option<Inner>,
    /// How long a failing pipeline is retried before its error is returned.
    pub retry_for: Duration,
    /// Fresh connections made since the first ([`Conn::reconnects`]).
    reconnects: u64,
    /// Told, every few seconds, what a retried pipeline waits for (CLUSTERDOWN, LOADING,
    /// a lost connection…); the CLI prints it on standard error.
    pub notice: Option<fn(&str)>,
}

/// How the error of a master with fewer replicas than `--wait-replicas` asks for starts.
pub const REPLICAS_SHORT: &str = "--wait-replicas";

/// One command's reply over two sends of it: an array of per-item answers (1 newly added)
/// with each item's 1 from either kept; any other reply as the later send gave it.
fn newly_added_in_either(before: Value, after: Value) -> Value {
    let added = |v: &Value| matches!(v, Value::Int(1) | Value::Boolean(true));
    match (before, after) {
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => Value::Array(
            a.into_iter()
                .zip(b)
                .map(|(x, y)| if added(&x) { x } else { y })
                .collect(),
        ),
        (_, after) => after,
    }
}

/// A retried pipeline is told of ([`Conn::notice`]) after this long, and again every
/// [`NOTICE_EVERY`].
const NOTICE_AFTER: Duration = Duration::from_secs(1);
const NOTICE_EVERY: Duration = Duration::from_secs(5);

/// [`Conn::open`]'s timeout: for connecting, each write and each reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Where a password missing from the URL is read from, as redis-cli does.
pub const AUTH_VARIABLE: &str = "REDISCLI_AUTH";

fn server_error(value: &Value) -> Option<String> {
    match value {
        Value::ServerError(e) => Some(format!("{} {}", e.code(), e.details().unwrap_or_default())),
        _ => None,
    }
}

/// A pipeline that failed: the command whose reply was an error (`None`: the pipeline as a
/// whole, e.g. a lost connection), and the error.
#[derive(Debug)]
pub struct Failure {
    pub index: Option<usize>,
    pub error: Error,
}

/// Whether sending again may succeed: connection loss, timeouts, redirections, TRYAGAIN,
/// CLUSTERDOWN, LOADING, MASTERDOWN; not a command's own error (WRONGTYPE, bad arguments).
fn retryable(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || !matches!(e.retry_method(), RetryMethod::NoRetry)
}

impl Conn {
    /// Connects to `url` (`redis://[user:password@]host:port[/db]`, or any node of a
    /// cluster: a node with `cluster_enabled:1` makes this a cluster
    /// connection over all nodes it knows), within [`DEFAULT_TIMEOUT`].
    pub fn open(url: &str) -> Result<Conn> {
        Conn::open_with(url, DEFAULT_TIMEOUT)
    }

    /// [`Conn::open`] with `timeout` for connecting, each write and each reply. A URL
    /// without a password takes the one in `REDISCLI_AUTH`, if set.
    pub fn open_with(url: &str, timeout: Duration) -> Result<Conn> {
        Conn::open_tls(url, timeout, None)
    }

    /// [`Conn::open_with`], a `rediss://` server's certificate checked against the CA
    /// certificate `tls_ca` (PEM; `None`: the system's trusted roots).
    ///
    /// Connecting, authenticating and the first reply fit in `timeout` all together: the
    /// connection is made on a thread that is given up on (left to end by its own
    /// timeouts) when it has not answered by then.
    pub fn open_tls(url: &str, timeout: Duration, tls_ca: Option<Vec<u8>>) -> Result<Conn> {
        // rustls needs its crypto provider chosen once per process (an error: chosen already).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let info = parse_url(url)?;
        let (sender, receiver) = std::sync::mpsc::channel();
        let given = url.to_string();
        std::thread::spawn(move || {
            let _ = sender.send(Conn::open_parsed(&given, info, timeout, tls_ca));
        });
        match receiver.recv_timeout(timeout) {
            Ok(outcome) => outcome,
            Err(_) => Err(Error::connection(format!(
                "cannot connect to {}: {}",
                crate::error::mask_url(url),
                no_answer(timeout)
            ))),
        }
    }

    fn open_parsed(
        url: &str,
        mut info: redis::ConnectionInfo,
        timeout: Duration,
        tls_ca: Option<Vec<u8>>,
    ) -> Result<Conn> {
        let fail = |e: redis::RedisError| open_error(url, timeout, &e);
        if info.redis_settings().password().is_none() {
            if let Ok(password) = std::env::var(AUTH_VARIABLE) {
                let settings = info.redis_settings().clone().set_password(password);
                info = info.set_redis_settings(settings);
            }
        }
        let settings = info.redis_settings().clone();
        let single = connect_single(&info, timeout, tls_ca.as_deref()).map_err(fail)?;
        let mut single = single;
        let cluster_info: String = redis::cmd("INFO")
            .arg("cluster")
            .query(&mut single)
            .map_err(fail)?;
        let mut conn = Conn {
            url: url.to_string(),
            info,
            timeout,
            tls_ca,
            nodes: Vec::new(),
            username: settings.username().map(str::to_string),
            password: settings.password().map(str::to_string),
            inner: None,
            retry_for: Duration::from_secs(60),
            reconnects: 0,
            notice: None,
        };
        if !cluster_info.contains("cluster_enabled:1") {
            conn.inner = Some(Inner::Single(single));
            return Ok(conn);
        }
        conn.nodes = cluster_nodes(&mut single).map_err(fail)?;
        conn.inner = Some(Inner::Cluster(Box::new(
            conn.connect_cluster().map_err(fail)?,
        )));
        Ok(conn)
    }

    pub fn is_cluster(&self) -> bool {
        !self.nodes.is_empty()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn connect_cluster(&self) -> redis::RedisResult<ClusterConnection> {
        let mut builder = ClusterClient::builder(self.nodes.clone())
            .connection_timeout(self.timeout)
            .response_timeout(self.timeout)
            .retries(8)
            .min_retry_wait(50)
            .max_retry_wait(1000);
        if let Some(user) = &self.username {
            builder = builder.username(user);
        }
        if let Some(password) = &self.password {
            builder = builder.password(password);
        }
        if matches!(self.info.addr(), redis::ConnectionAddr::TcpTls { .. }) {
            builder = builder
                .tls(redis::TlsMode::Secure)
                .certs(certificates(self.tls_ca.as_deref()));
        }
        builder.build()?.get_connection()
    }

    /// How many times the connection was made again (after a connection error, a failover,
    /// a redirection): a sequence of writes that must land on one copy of a key (a load's
    /// chunks) starts over when this moves.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    fn reconnect(&mut self) -> redis::RedisResult<()> {
        self.inner = None;
        self.reconnects += 1;
        let inner = if self.is_cluster() {
            let mut conn = self.connect_cluster()?;
            // Learn nodes added since (a replica promoted keeps its address; new masters).
            if let Ok(nodes) = cluster_nodes(&mut conn) {
                if !nodes.is_empty() {
                    self.nodes = nodes;
                }
            }
            Inner::Cluster(Box::new(conn))
        } else {
            Inner::Single(connect_single(
                &self.info,
                self.timeout,
                self.tls_ca.as_deref(),
            )?)
        };
        self.inner = Some(inner);
        Ok(())
    }

    fn send(&mut self, cmds: &[Cmd]) -> redis::RedisResult<Vec<Value>> {
        if self.inner.is_none() {
            self.reconnect()?;
        }
        match self.inner.as_mut().expect("connected") {
            Inner::Single(conn) => {
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.ignore_errors();
                pipe.query(conn)
            }
            Inner::Cluster(conn) => {
                let mut pipe = redis::cluster::cluster_pipe();
                for cmd in cmds {
                    pipe.add_command(cmd.clone());
                }
                pipe.query(conn)
            }
        }
    }

    /// Sends `cmds` (single-key commands, or keyless ones a single server answers) as one
    /// pipeline and returns their replies in order; a reply that is an error fails the
    /// whole call with that error (the commands before it have run).
    pub fn pipeline(&mut self, cmds: &[Cmd]) -> Result<Vec<Value>> {
        self.pipeline_at(cmds).map_err(|f| f.error)
    }

    /// [`Conn::pipeline`], its failure saying which command's reply was an error.
    pub fn pipeline_at(&mut self, cmds: &[Cmd]) -> std::result::Result<Vec<Value>, Failure> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let started = Instant::now();
        let mut pause = Duration::from_millis(50);
        let mut last_notice: Option<Instant> = None;
        let whole = |error: Error| Failure { index: None, error };
        loop {
            let outcome = self.send(cmds);
            // A command's own error reply: which one, and its text.
            let refused = match &outcome {
                Ok(values) => values
                    .iter()
                    .enumerate()
                    .find_map(|(i, v)| server_error(v).map(|t| (i, t))),
                Err(e) => e.clone().into_server_errors().and_then(|errors| {
                    errors.first().map(|(i, e)| {
                        (
                            *i,
                            format!("{} {}", e.code(), e.details().unwrap_or_default()),
                        )
                    })
                }),
            };
            let retry = match (&outcome, &refused) {
                (Ok(_), None) => return outcome.map_err(|e| whole(Error::from(e))),
                (_, Some((index, text))) => {
                    let again = [
                        "TRYAGAIN",
                        "CLUSTERDOWN",
                        "LOADING",
                        "MASTERDOWN",
                        "MOVED",
                        "ASK",
                    ]
                    .iter()
                    .any(|code| text.starts_with(code));
                    if !again || started.elapsed() > self.retry_for {
                        return Err(Failure {
                            index: Some(*index),
                            error: Error::new(text),
                        });
                    }
                    true
                }
                (Err(e), None) => retryable(e) && started.elapsed() <= self.retry_for,
            };
            if !retry {
                return outcome.map_err(|e| whole(Error::from(e)));
            }
            if let Some(notice) = self.notice {
                let waited = started.elapsed();
                if waited >= NOTICE_AFTER
                    && last_notice.is_none_or(|t: Instant| t.elapsed() >= NOTICE_EVERY)
                {
                    let what = match (&refused, &outcome) {
                        (Some((_, text)), _) => text.clone(),
                        (None, Err(e)) => e.to_string(),
                        (None, Ok(_)) => String::new(),
                    };
                    let whom = if self.is_cluster() {
                        "the cluster".to_string()
                    } else {
                        self.info.addr().to_string()
                    };
                    notice(&crate::error::redact(&format!(
                        "waiting for {whom}: {what} ({} s so far; giving up after {} s)",
                        waited.as_secs(),
                        self.retry_for.as_secs()
                    )));
                    last_notice = Some(Instant::now());
                }
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
            if let Err(e) = self.reconnect() {
                if started.elapsed() > self.retry_for {
                    return Err(whole(Error::from(e)));
                }
            }
        }
    }

    /// Every key matching `pattern` (SCAN MATCH) on the server, or on every master of a
    /// cluster (each asked over its own connection).
    pub fn scan_keys(&mut self, pattern: &str) -> Result<Vec<String>> {
        self.scan_keys_of(pattern, None)
    }

    /// [`Conn::scan_keys`] of the keys of one data type (SCAN ... TYPE `type_name`) when
    /// `type_name` is given.
    pub fn scan_keys_of(&mut self, pattern: &str, type_name: Option<&str>) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.scan_each(pattern, type_name, &mut |keys| {
            out.extend(keys);
            Ok(())
        })?;
        if self.is_cluster() {
            out.sort();
            out.dedup();
        }
        Ok(out)
    }

    /// SCAN MATCH `pattern` (TYPE `type_name` when given) on the server, or on every master
    /// of a cluster, each page of keys handed to `visit` as it arrives (memory: one page).
    pub fn scan_each(
        &mut self,
        pattern: &str,
        type_name: Option<&str>,
        visit: &mut dyn FnMut(Vec<String>) -> Result<()>,
    ) -> Result<()> {
        let mut scan = |conn: &mut redis::Connection| -> Result<()> {
            let mut cursor = 0u64;
            loop {
                let mut cmd = redis::cmd("SCAN");
                cmd.arg(cursor)
                    .arg("MATCH")
                    .arg(pattern)
                    .arg("COUNT")
                    .arg(1000);
                if let Some(name) = type_name {
                    cmd.arg("TYPE").arg(name);
                }
                let (next, keys): (u64, Vec<String>) = cmd.query(conn)?;
                visit(keys)?;
                if next == 0 {
                    return Ok(());
                }
                cursor = next;
            }
        };
        if !self.is_cluster() {
            let mut conn = connect_single(&self.info, self.timeout, self.tls_ca.as_deref())?;
            return scan(&mut conn);
        }
        let tls = matches!(self.info.addr(), redis::ConnectionAddr::TcpTls { .. });
        for node in self.nodes.clone() {
            let node = if tls {
                node.replacen("redis://", "rediss://", 1)
            } else {
                node
            };
            let mut info = redis::IntoConnectionInfo::into_connection_info(node.as_str())?;
            let mut settings = info.redis_settings().clone();
            if let Some(user) = &self.username {
                settings = settings.set_username(user);
            }
            if let Some(password) = &self.password {
                settings = settings.set_password(password);
            }
            info = info.set_redis_settings(settings);
            let mut conn = connect_single(&info, self.timeout, self.tls_ca.as_deref())?;
            let role: Vec<Value> = redis::cmd("ROLE").query(&mut conn)?;
            if role
                .first()
                .cloned()
                .and_then(|v| String::from_redis_value(v).ok())
                .as_deref()
                == Some("master")
            {
                scan(&mut conn)?;
            }
        }
        Ok(())
    }

    /// `host:port` of the master serving `slot` (a single server: its URL's), for errors.
    pub fn node_of(&mut self, slot: u16) -> String {
        if !self.is_cluster() {
            return format!("{}", self.info.addr());
        }
        let Ok(ranges) = self.query_node::<Vec<Value>>(redis::cmd("CLUSTER").arg("SLOTS")) else {
            return "unknown node".into();
        };
        for range in ranges {
            let Value::Array(parts) = range else { continue };
            let bound = |i: usize| {
                parts
                    .get(i)
                    .cloned()
                    .and_then(|v| i64::from_redis_value(v).ok())
            };
            if let (Some(lo), Some(hi)) = (bound(0), bound(1)) {
                if (lo..=hi).contains(&i64::from(slot)) {
                    if let Some(Value::Array(node)) = parts.get(2) {
                        let host = node
                            .first()
                            .cloned()
                            .and_then(|v| String::from_redis_value(v).ok());
                        let port = node
                            .get(1)
                            .cloned()
                            .and_then(|v| i64::from_redis_value(v).ok());
                        if let (Some(host), Some(port)) = (host, port) {
                            return format!("{host}:{port}");
                        }
                    }
                }
            }
        }
        "unknown node".into()
    }

    /// [`Conn::pipeline_at`], then `WAIT replicas` on the master of each of `keys`' slots;
    /// when a master does not confirm (its replicas lag, or it failed over to a replica that
    /// has replicas of its own), the pipeline is sent again (the commands must be
    /// idempotent: adding an item twice to a Bloom filter is), for at most
    /// [`Conn::retry_for`]. A master with fewer replicas than asked for (INFO replication's
    /// `connected_slaves`), at the start or after a failover, fails at once ([`REPLICAS_SHORT`]
    /// starts its message): waiting would not bring them back. The errors name the node.
    ///
    /// The replies are those of the first send: an item's answer of 1 (newly added) from
    /// any send is kept, so that a resent round does not count what it added before as
    /// "already there".
    pub fn pipeline_replicated(
        &mut self,
        cmds: &[Cmd],
        keys: &[&str],
        replicas: u32,
    ) -> std::result::Result<Vec<Value>, Failure> {
        let started = Instant::now();
        let whole = |error: Error| Failure { index: None, error };
        let mut first: Option<Vec<Value>> = None;
        loop {
            let values = self.pipeline_at(cmds)?;
            let values = match first.take() {
                Some(before) => before
                    .into_iter()
                    .zip(values)
                    .map(|(a, b)| newly_added_in_either(a, b))
                    .collect(),
                None => values,
            };
            let mut waiting = None;
            for key in keys {
                let slot = crate::slot::key_slot(key.as_bytes());
                match self.wait_for_replicas(slot, replicas, 2000) {
                    Ok(n) if n >= i64::from(replicas) => continue,
                    _ => {}
                }
                // Not confirmed: does that master have the replicas at all?
                let script = "return redis.call('INFO', 'replication')";
                let info: Option<String> = self
                    .query(redis::cmd("EVAL").arg(script).arg(1).arg(*key))
                    .ok();
                let connected = info.as_deref().and_then(|text| {
                    text.lines()
                        .find_map(|l| l.strip_prefix("connected_slaves:"))
                        .and_then(|n| n.trim().parse::<u32>().ok())
                });
                let node = self.node_of(slot);
                if let Some(n) = connected.filter(|&n| n < replicas) {
                    return Err(whole(Error::new(format!(
                        "{REPLICAS_SHORT} {replicas}: {node} (the master of {key}) has {n} replica(s)"
                    ))));
                }
                waiting = Some(node);
                break;
            }
            let Some(node) = waiting else {
                return Ok(values);
            };
            if started.elapsed() > self.retry_for {
                return Err(whole(Error::new(format!(
                    "writes not acknowledged by {replicas} replica(s) of {node} within {} s",
                    self.retry_for.as_secs()
                ))));
            }
            first = Some(values);
            std::thread::sleep(Duration::from_millis(200));
            let _ = self.reconnect();
        }
    }

    /// One command, retried as a pipeline is.
    pub fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T> {
        let value = self
            .pipeline(std::slice::from_ref(cmd))?
            .pop()
            .unwrap_or(Value::Nil);
        T::from_redis_value(value).map_err(Error::from)
    }

    /// `WAIT replicas timeout` on the master serving `slot` (on the connection the writes
    /// to that slot went over), so that they survive a failover; returns the replicas that
    /// acknowledged.
    pub fn wait_for_replicas(&mut self, slot: u16, replicas: u32, timeout_ms: u64) -> Result<i64> {
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(replicas).arg(timeout_ms);
        match self.inner.as_mut() {
            Some(Inner::Cluster(conn)) => {
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(
                    Route::new(slot, SlotAddr::Master),
                ));
                let value = conn.route_command(&cmd, route)?;
                i64::from_redis_value(value).map_err(Error::from)
            }
            Some(Inner::Single(conn)) => cmd.query(conn).map_err(Error::from),
            None => Err(Error::new("not connected")),
        }
    }
}

/// The certificates of a TLS connection: the server's checked against `ca` (PEM) or the
/// system's roots.
fn certificates(ca: Option<&[u8]>) -> redis::TlsCertificates {
    redis::TlsCertificates {
        client_tls: None,
        root_cert: ca.map(<[u8]>::to_vec),
    }
}

/// A connection to one server, every read and write within `timeout`.
fn connect_single(
    info: &redis::ConnectionInfo,
    timeout: Duration,
    tls_ca: Option<&[u8]>,
) -> redis::RedisResult<redis::Connection> {
    let client = if matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. }) {
        redis::Client::build_with_tls(info.clone(), certificates(tls_ca))?
    } else {
        redis::Client::open(info.clone())?
    };
    let conn = client.get_connection_with_timeout(timeout)?;
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    Ok(conn)
}

impl Conn {
    /// Runs a keyless command (CONFIG GET) on one node: the server, or any node of a
    /// cluster.
    pub fn query_node<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T> {
        if self.inner.is_none() {
            self.reconnect()?;
        }
        let value = match self.inner.as_mut().expect("connected") {
            Inner::Single(conn) => cmd.query::<Value>(conn)?,
            Inner::Cluster(conn) => {
                conn.route_command(cmd, RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random))?
            }
        };
        T::from_redis_value(value).map_err(Error::from)
    }
}

/// `redis://host:port` of every node `CLUSTER SLOTS` lists (masters and replicas).
fn cluster_nodes(conn: &mut impl ConnectionLike) -> redis::RedisResult<Vec<String>> {
    let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(conn)?;
    let mut nodes = Vec::new();
    for range in slots {
        let Value::Array(parts) = range else { continue };
        for node in parts.into_iter().skip(2) {
            let Value::Array(fields) = node else { continue };
            let host = fields.first().cloned().map(String::from_redis_value);
            let port = fields.get(1).cloned().map(i64::from_redis_value);
            if let (Some(Ok(host)), Some(Ok(port))) = (host, port) {
                let url = format!("redis://{host}:{port}/");
                if !nodes.contains(&url) {
                    nodes.push(url);
                }
            }
        }
    }
    Ok(nodes)
}
