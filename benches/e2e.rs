//! End-to-end benchmark: redis-server with the module on loopback, driven by a pipelined
//! load generator (one client thread, several connections, deep pipelines, so the server's
//! main thread is the bottleneck). For each workload it reports throughput and the server
//! main thread's CPU time per item (from /proc), as a ratio to GETBIT or SETBIT measured in
//! the same run — this machine is shared and noisy, so only same-run ratios mean anything.
//!
//! With `REDISBLOOM_SO=/path/to/redisbloom-2.4.20.so` (and, on Redis 8,
//! `REDISBLOOM8_SO=/path/to/redisbloom-8.2.3.so`) servers with those modules run beside
//! the first (one that is not set, not a file or does not load is skipped with a message);
//! `REFERENCE_MODULE=/path/to/module.so` instead runs that one module as "reference".
//! Every round runs each workload on every server back to back (the order alternating),
//! and the report adds, per reference and workload, the median of the per-round ratios
//! redbloom ÷ reference and their spread (min and max), PING and GETBIT as controls. The
//! server is `REDBLOOM_SERVER` (default `redis-server`), started without
//! `--enable-debug-command` (Redis 8 doubles some module commands' cost with it). The server is pinned to one
//! core and the client to another (`taskset`) when the machine has two; `E2E_PIN=0` turns
//! that off.
//!
//! `make bench-e2e` (or `cargo bench --bench e2e`); `E2E_REFERENCE_IS_REDBLOOM=1` when the
//! reference is another redbloom build (every workload then runs on both); `E2E_ROUNDS` (default 5), `E2E_SCALE`
//! (default 1.0; multiplies every operation count) and `E2E_ONLY` (comma-separated
//! substrings of workload names; only the filters those need are set up) tune the run.
//! Workloads and filters are two tables in `main`: a new comparison (e.g. a layout option
//! against the classic one) is a filter line plus workload lines naming their baseline.

#[path = "e2e/expandable.rs"]
mod expandable;
#[path = "e2e/sketches.rs"]
mod sketches;
#[path = "e2e/static_filter.rs"]
mod static_filter;
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;
use support::resp::encode_into;
use support::{RawConnection, Reply};

const CONNECTIONS: usize = 8;
const PIPELINE: usize = 64;

/// Reads one reply without building it; counts error replies.
fn skip_reply(reader: &mut BufReader<TcpStream>, line: &mut Vec<u8>, errors: &mut u64) {
    line.clear();
    reader.read_until(b'\n', line).expect("read");
    match line[0] {
        b'-' => *errors += 1,
        b'$' => {
            let len: i64 = std::str::from_utf8(&line[1..line.len() - 2])
                .unwrap()
                .parse()
                .unwrap();
            if len >= 0 {
                let mut skip = vec![0; len as usize + 2];
                reader.read_exact(&mut skip).expect("bulk");
            }
        }
        b'*' => {
            let len: i64 = std::str::from_utf8(&line[1..line.len() - 2])
                .unwrap()
                .parse()
                .unwrap();
            for _ in 0..len.max(0) {
                skip_reply(reader, line, errors);
            }
        }
        _ => {}
    }
}

/// CPU time of the server's main thread, in nanoseconds: the scheduler's own account
/// (`/proc/<pid>/task/<pid>/schedstat`, first field), exact where `stat`'s utime/stime
/// count 10 ms ticks.
fn main_thread_cpu_ns(pid: u32) -> u64 {
    let stat =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/schedstat")).expect("schedstat");
    stat.split(' ').next().unwrap().parse().expect("run time")
}

struct Sample {
    items_per_sec: f64,
    cpu_ns_per_item: f64,
}

/// A workload: writes the command of operation `i` into the buffer.
type Generator<'a> = Box<dyn FnMut(u64, &mut Vec<u8>) + 'a>;

struct Load {
    readers: Vec<BufReader<TcpStream>>,
    writers: Vec<TcpStream>,
}

impl Load {
    fn connect(port: u16) -> Load {
        let mut readers = Vec::new();
        let mut writers = Vec::new();
        for _ in 0..CONNECTIONS {
            let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            stream.set_nodelay(true).unwrap();
            readers.push(BufReader::with_capacity(
                1 << 16,
                stream.try_clone().unwrap(),
            ));
            writers.push(stream);
        }
        Load { readers, writers }
    }

    /// Runs `ops` operations of `items_per_op` items each; fails on any error reply.
    fn run(&mut self, pid: u32, ops: u64, items_per_op: u64, mut next: Generator) -> Sample {
        let mut buffers: Vec<Vec<u8>> = (0..CONNECTIONS)
            .map(|_| Vec::with_capacity(1 << 20))
            .collect();
        let mut line = Vec::with_capacity(256);
        let mut errors = 0;
        let cpu_before = main_thread_cpu_ns(pid);
        let start = Instant::now();
        let mut i = 0;
        while i < ops {
            let mut sent = [0usize; CONNECTIONS];
            for (c, buffer) in buffers.iter_mut().enumerate() {
                buffer.clear();
                while sent[c] < PIPELINE && i < ops {
                    next(i, buffer);
                    sent[c] += 1;
                    i += 1;
                }
                self.writers[c].write_all(buffer).expect("write");
            }
            for (c, n) in sent.iter().enumerate() {
                for _ in 0..*n {
                    skip_reply(&mut self.readers[c], &mut line, &mut errors);
                }
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        let cpu = main_thread_cpu_ns(pid) - cpu_before;
        assert_eq!(errors, 0, "error replies in the workload");
        let items = (ops * items_per_op) as f64;
        Sample {
            items_per_sec: items / elapsed,
            cpu_ns_per_item: cpu as f64 / items,
        }
    }
}

/// A cheap deterministic item of index `i` (distinct for distinct i).
fn item(prefix: &[u8], i: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(prefix);
    out.extend_from_slice(&i.to_le_bytes());
}

/// A reproducible pseudo-random sequence (SplitMix64).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn single(
    command: &'static [u8],
    key: &'static [u8],
    prefix: &'static [u8],
    offset: u64,
) -> Generator<'static> {
    let mut it = Vec::new();
    Box::new(move |i, out| {
        item(prefix, offset + i, &mut it);
        encode_into(out, &[command, key, &it]);
    })
}

fn batch(
    command: &'static [u8],
    key: &'static [u8],
    prefix: &'static [u8],
    offset: u64,
    n: u64,
) -> Generator<'static> {
    let mut items: Vec<Vec<u8>> = vec![Vec::new(); n as usize];
    Box::new(move |i, out| {
        for (j, it) in items.iter_mut().enumerate() {
            item(prefix, offset + i * n + j as u64, it);
        }
        let mut args: Vec<&[u8]> = vec![command, key];
        args.extend(items.iter().map(Vec::as_slice));
        encode_into(out, &args);
    })
}

/// Fills a filter with `count` items `prefix + 0..count` in batches of 1000, several
/// batches in flight (the server works on one while the client sends the next and reads
/// the last reply: a 10^8-item fill takes minutes, not an hour).
fn fill(conn: &mut RawConnection, command: &str, key: &str, prefix: &[u8], count: u64) {
    const IN_FLIGHT: usize = 4;
    let mut it = Vec::new();
    let mut done = 0;
    let mut pending = 0;
    let check = |reply: Reply| assert!(!matches!(reply, Reply::Error(_)), "{reply:?}");
    while done < count {
        let n = (count - done).min(1000);
        let mut cmd: Vec<Vec<u8>> = vec![command.as_bytes().to_vec(), key.as_bytes().to_vec()];
        if command.ends_with("INSERT") {
            cmd.push(b"ITEMS".to_vec());
        }
        for j in 0..n {
            item(prefix, done + j, &mut it);
            cmd.push(it.clone());
        }
        conn.send(&cmd).expect("send");
        pending += 1;
        if pending == IN_FLIGHT {
            check(conn.read_reply());
            pending -= 1;
        }
        done += n;
    }
    for _ in 0..pending {
        check(conn.read_reply());
    }
}

/// A filter the workloads use, created and pre-filled on every server before the rounds.
struct Filter {
    key: &'static str,
    /// The command line creating it.
    create: &'static str,
    /// How it is pre-filled (`BF.MADD`, `CF.INSERT`, ...) with items `fill:0..`, how many,
    /// and whether `E2E_SCALE` scales that count.
    fill_command: &'static str,
    fill: u64,
    fill_scales: bool,
    /// The command whose reply gives the item count for the memory table: an INFO reply
    /// (the count is its 8th element) or an integer reply; `None`: not reported.
    count: Option<&'static str>,
    /// Whether the reference module has this type and these options.
    on_reference: bool,
}

impl Filter {
    /// A key created by `create` and not pre-filled (a sketch, a string, an empty filter).
    fn empty(key: &'static str, create: &'static str, on_reference: bool) -> Filter {
        Filter {
            key,
            create,
            fill_command: "",
            fill: 0,
            fill_scales: false,
            count: None,
            on_reference,
        }
    }
}

struct Workload {
    name: &'static str,
    /// The filter it needs (set up only when a selected workload uses it).
    filter: Option<&'static str>,
    /// Another workload on the same server its CPU per item is compared with, and the
    /// target ratio where one is set.
    baseline: Option<(&'static str, Option<f64>)>,
    /// The target of redbloom ÷ reference (median of per-round ratios), where set.
    reference_target: Option<f64>,
    on_reference: bool,
    /// A key and the command creating it, run (untimed) before the workload when the key is
    /// missing; `{r}` in either stands for the round.
    prepare: Option<(&'static str, &'static str)>,
    ops: u64,
    items_per_op: u64,
    /// The command generator of round `r`.
    make: Box<dyn Fn(u64) -> Generator<'static>>,
}

/// A redis-server with one module on a free loopback port, in its own directory, killed
/// and removed on drop.
struct BenchServer {
    child: std::process::Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl BenchServer {
    /// The server with `module`, or why it did not start (a module this server refuses:
    /// RedisBloom 8 on Redis 7 or Valkey).
    fn try_start(module: &std::path::Path, cpu: Option<usize>) -> Result<BenchServer, String> {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let dir = std::env::temp_dir().join(format!("redbloom-e2e-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("server dir");
        let mut command = match cpu {
            // taskset execs the server: the child's pid is the server's.
            Some(cpu) => {
                let mut c = std::process::Command::new("taskset");
                c.arg("-c")
                    .arg(cpu.to_string())
                    .arg(support::server_binary());
                c
            }
            None => std::process::Command::new(support::server_binary()),
        };
        let child = command
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--logfile", "server.log", "--dir"])
            .arg(&dir)
            .arg("--loadmodule")
            .arg(module)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the server");
        let mut server = BenchServer { child, port, dir };
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                return Err(format!("server exited ({status}): {}", server.log()));
            }
            if let Ok(mut conn) = RawConnection::connect(port) {
                if conn.call(&["PING"]) == Reply::Simple("PONG".into()) {
                    return Ok(server);
                }
            }
            if Instant::now() >= deadline {
                return Err(format!("server did not start: {}", server.log()));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for BenchServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server under test with its load generator's connections.
struct Target {
    name: String,
    server: BenchServer,
    conn: RawConnection,
    load: Load,
}

impl Target {
    fn start(name: &str, module: &std::path::Path, cpu: Option<usize>) -> Target {
        Self::try_start(name, module, cpu).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_start(
        name: &str,
        module: &std::path::Path,
        cpu: Option<usize>,
    ) -> Result<Target, String> {
        let server = BenchServer::try_start(module, cpu)?;
        let conn = RawConnection::connect(server.port).expect("connect");
        let load = Load::connect(server.port);
        println!(
            "{name}: {} (pid {}, port {})",
            module.display(),
            server.pid(),
            server.port
        );
        Ok(Target {
            name: name.to_string(),
            server,
            conn,
            load,
        })
    }
}

/// The server's version line (`Redis server v=8.2.3 ...`, `Valkey server v=8.1.8 ...`).
fn server_version() -> String {
    std::process::Command::new(support::server_binary())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The reference modules to run beside redbloom, by name: `REFERENCE_MODULE` (any module,
/// "reference"), else RedisBloom 2.4.20 from `REDISBLOOM_SO` and, on Redis 8,
/// RedisBloom 8.2.3 from `REDISBLOOM8_SO`. A missing one is skipped with a message.
fn reference_modules(version: &str) -> Vec<(String, std::path::PathBuf)> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(path) = var("REFERENCE_MODULE") {
        return vec![("reference".to_string(), path.into())];
    }
    let mut found = Vec::new();
    let redis8 = version.starts_with("Redis server v=8.");
    for (name, env, wanted) in [
        ("RedisBloom 2.4.20", "REDISBLOOM_SO", true),
        ("RedisBloom 8.2.3", "REDISBLOOM8_SO", redis8),
    ] {
        match var(env) {
            _ if !wanted => println!("{name}: skipped (it loads only into Redis 8)"),
            None => println!("{name}: skipped ({env} is not set)"),
            Some(path) if !std::path::Path::new(&path).is_file() => {
                println!("{name}: skipped ({env}={path} is not a file)")
            }
            Some(path) => found.push((name.to_string(), path.into())),
        }
    }
    found
}

/// `template` with `{r}` replaced by the round, as a key that lives for the whole run.
fn round_key(template: &'static str, round: u64) -> &'static [u8] {
    if !template.contains("{r}") {
        return template.as_bytes();
    }
    let key = template.replace("{r}", &round.to_string());
    Box::leak(key.into_bytes().into_boxed_slice())
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn holds(value: f64, target: Option<f64>) -> &'static str {
    match target {
        Some(t) if value <= t => "yes",
        Some(_) => "no",
        None => "",
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without
    // it, and then only checks that it builds.
    if !std::env::args().any(|a| a == "--bench") {
        println!("e2e benchmark: run it with `make bench-e2e` (cargo bench --bench e2e)");
        return;
    }
    let rounds: usize = env_or("E2E_ROUNDS", 5);
    let scale: f64 = env_or("E2E_SCALE", 1.0);
    let scaled = |n: u64| ((n as f64 * scale) as u64).max(1000);
    let only: Vec<String> = std::env::var("E2E_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let version = server_version();
    println!("server: {version}");
    let references = reference_modules(&version);

    // The 100M filter is pre-filled to half (the adds of 20 rounds still fit). The 10M ones
    // to a quarter: the Cuckoo filter stays below the load (~31 % with 8-bit fingerprints
    // and 2^23 buckets) where its kick-outs start failing and it grows (its adds are deleted
    // again in the same round).
    let mut filters = vec![
        Filter {
            key: "bits",
            create: "SETBIT bits 100000000 0",
            fill_command: "",
            fill: 0,
            fill_scales: true,
            count: None,
            on_reference: true,
        },
        Filter {
            key: "bf10m",
            create: "BF.RESERVE bf10m 0.01 10000000",
            fill_command: "BF.MADD",
            fill: 2_500_000,
            fill_scales: true,
            count: Some("BF.INFO"),
            on_reference: true,
        },
        Filter {
            key: "bf100m",
            create: "BF.RESERVE bf100m 0.01 100000000",
            fill_command: "BF.MADD",
            fill: 50_000_000,
            fill_scales: true,
            count: Some("BF.INFO"),
            on_reference: true,
        },
        Filter {
            key: "cf10m",
            create: "CF.RESERVE cf10m 10000000",
            fill_command: "CF.INSERT",
            fill: 2_500_000,
            fill_scales: true,
            count: Some("CF.INFO"),
            on_reference: true,
        },
        Filter {
            key: "cbf10m",
            create: "CBF.RESERVE cbf10m 0.01 10000000",
            fill_command: "CBF.MADD",
            fill: 2_500_000,
            fill_scales: true,
            count: Some("CBF.CARD"),
            on_reference: false,
        },
        // The cache-local layout beside the classic one above, same capacity and rate.
        Filter {
            key: "bf100mblk",
            create: "BF.RESERVE bf100mblk 0.01 100000000 BLOCKED",
            fill_command: "BF.MADD",
            fill: 50_000_000,
            fill_scales: true,
            count: Some("BF.INFO"),
            on_reference: false,
        },
        // Cache-resident: what a command costs without memory stalls.
        Filter {
            key: "bf1k",
            create: "BF.RESERVE bf1k 0.01 1000",
            fill_command: "BF.MADD",
            fill: 1000,
            fill_scales: false,
            count: Some("BF.INFO"),
            on_reference: true,
        },
        // Full, for the memory table and the false-positive rate.
        Filter {
            key: "bf1m",
            create: "BF.RESERVE bf1m 0.01 1000000",
            fill_command: "BF.MADD",
            fill: 1_000_000,
            fill_scales: false,
            count: Some("BF.INFO"),
            on_reference: true,
        },
    ];
    filters.extend(sketches::filters());
    filters.extend(static_filter::filters());
    filters.extend(expandable::filters());
    // Another redbloom build as the reference (comparing two builds): it has every type
    // and option, so every workload runs on both.
    if std::env::var("E2E_REFERENCE_IS_REDBLOOM").is_ok_and(|v| v == "1") {
        filters.iter_mut().for_each(|f| f.on_reference = true);
    }

    const ADD_10M: (&str, &str) = ("add10m:{r}", "BF.RESERVE add10m:{r} 0.01 10000000");
    let n = scaled(400_000);
    let nb = scaled(20_000);
    // Adds and deletes take new items each round; reads query the pre-filled ones.
    let single_on = |command: &'static [u8], key: &'static str, prefix: &'static [u8]| {
        let per_round = prefix != b"fill:";
        Box::new(move |r: u64| {
            let key = round_key(key, r);
            single(
                command,
                key,
                prefix,
                if per_round { r * 10_000_000 } else { 0 },
            )
        }) as Box<dyn Fn(u64) -> Generator<'static>>
    };
    let batch_on = |command: &'static [u8], key: &'static str, prefix: &'static [u8]| {
        let per_round = prefix != b"fill:";
        Box::new(move |r: u64| {
            let key = round_key(key, r);
            batch(
                command,
                key,
                prefix,
                if per_round { r * 10_000_000 } else { 0 },
                100,
            )
        }) as Box<dyn Fn(u64) -> Generator<'static>>
    };
    let w = |name: &'static str,
             filter: Option<&'static str>,
             baseline: Option<(&'static str, Option<f64>)>,
             reference_target: Option<f64>,
             ops: u64,
             items_per_op: u64,
             make: Box<dyn Fn(u64) -> Generator<'static>>| Workload {
        name,
        filter,
        baseline,
        reference_target,
        on_reference: filter.is_none_or(|f| filters.iter().any(|x| x.key == f && x.on_reference)),
        prepare: None,
        ops,
        items_per_op,
        make,
    };
    let writes = Some(("SETBIT", None));
    let mut workloads: Vec<Workload> = vec![
        w(
            "PING",
            None,
            None,
            None,
            n,
            1,
            Box::new(|_| Box::new(|_, out: &mut Vec<u8>| encode_into(out, &[b"PING"]))),
        ),
        w(
            "GETBIT",
            Some("bits"),
            None,
            None,
            n,
            1,
            Box::new(|_| {
                Box::new(|i, out: &mut Vec<u8>| {
                    let offset = (mix(i) % 100_000_000).to_string();
                    encode_into(out, &[b"GETBIT".as_slice(), b"bits", offset.as_bytes()]);
                })
            }),
        ),
        w(
            "SETBIT",
            Some("bits"),
            None,
            None,
            n,
            1,
            Box::new(|_| {
                Box::new(|i, out: &mut Vec<u8>| {
                    let offset = (mix(i) % 100_000_000).to_string();
                    encode_into(
                        out,
                        &[b"SETBIT".as_slice(), b"bits", offset.as_bytes(), b"1"],
                    );
                })
            }),
        ),
        w(
            "BF.EXISTS 1K",
            Some("bf1k"),
            Some(("GETBIT", None)),
            None,
            n,
            1,
            single_on(b"BF.EXISTS", "bf1k", b"fill:"),
        ),
        w(
            "BF.EXISTS 10M",
            Some("bf10m"),
            Some(("GETBIT", Some(1.2))),
            Some(0.85),
            n,
            1,
            single_on(b"BF.EXISTS", "bf10m", b"fill:"),
        ),
        // The adds of each round go into a filter of their own, reserved before it: the
        // 10M capacity then holds every round's adds (no scale-out mid-run).
        Workload {
            prepare: Some(ADD_10M),
            ..w(
                "BF.ADD 10M",
                None,
                Some(("SETBIT", Some(1.1))),
                Some(0.85),
                n,
                1,
                single_on(b"BF.ADD", ADD_10M.0, b"add:"),
            )
        },
        w(
            "BF.MEXISTS×100 10M",
            Some("bf10m"),
            Some(("GETBIT", Some(0.2))),
            Some(0.6),
            nb,
            100,
            batch_on(b"BF.MEXISTS", "bf10m", b"fill:"),
        ),
        Workload {
            prepare: Some(ADD_10M),
            ..w(
                "BF.MADD×100 10M",
                None,
                Some(("SETBIT", Some(0.25))),
                Some(0.6),
                nb,
                100,
                batch_on(b"BF.MADD", ADD_10M.0, b"madd:"),
            )
        },
        w(
            "BF.EXISTS 100M",
            Some("bf100m"),
            Some(("GETBIT", Some(1.2))),
            None,
            n,
            1,
            single_on(b"BF.EXISTS", "bf100m", b"fill:"),
        ),
        w(
            "BF.ADD 100M",
            Some("bf100m"),
            Some(("SETBIT", Some(1.1))),
            None,
            n,
            1,
            single_on(b"BF.ADD", "bf100m", b"add:"),
        ),
        w(
            "BF.MEXISTS×100 100M",
            Some("bf100m"),
            Some(("GETBIT", Some(0.3))),
            Some(0.6),
            nb,
            100,
            batch_on(b"BF.MEXISTS", "bf100m", b"fill:"),
        ),
        w(
            "BF.MADD×100 100M",
            Some("bf100m"),
            Some(("SETBIT", Some(0.375))),
            None,
            nb,
            100,
            batch_on(b"BF.MADD", "bf100m", b"madd:"),
        ),
        // BLOCKED ÷ classic: the targets of issue 14 (≤ 0.8× single, ≤ 0.4× ×100).
        w(
            "BLOCKED BF.EXISTS 100M",
            Some("bf100mblk"),
            Some(("BF.EXISTS 100M", Some(0.8))),
            None,
            n,
            1,
            single_on(b"BF.EXISTS", "bf100mblk", b"fill:"),
        ),
        w(
            "BLOCKED BF.ADD 100M",
            Some("bf100mblk"),
            Some(("BF.ADD 100M", Some(0.8))),
            None,
            n,
            1,
            single_on(b"BF.ADD", "bf100mblk", b"add:"),
        ),
        w(
            "BLOCKED BF.MEXISTS×100 100M",
            Some("bf100mblk"),
            Some(("BF.MEXISTS×100 100M", Some(0.4))),
            None,
            nb,
            100,
            batch_on(b"BF.MEXISTS", "bf100mblk", b"fill:"),
        ),
        w(
            "BLOCKED BF.MADD×100 100M",
            Some("bf100mblk"),
            Some(("BF.MADD×100 100M", Some(0.4))),
            None,
            nb,
            100,
            batch_on(b"BF.MADD", "bf100mblk", b"madd:"),
        ),
        w(
            "CF.EXISTS 10M",
            Some("cf10m"),
            Some(("GETBIT", Some(1.2))),
            Some(0.85),
            n,
            1,
            single_on(b"CF.EXISTS", "cf10m", b"fill:"),
        ),
        w(
            "CF.ADD 10M",
            Some("cf10m"),
            Some(("SETBIT", Some(1.1))),
            Some(0.85),
            n,
            1,
            single_on(b"CF.ADD", "cf10m", b"add:"),
        ),
        // Deletes the items CF.ADD added in the same round.
        w(
            "CF.DEL 10M",
            Some("cf10m"),
            writes,
            Some(0.85),
            n,
            1,
            single_on(b"CF.DEL", "cf10m", b"add:"),
        ),
        w(
            "CBF.ADD 10M",
            Some("cbf10m"),
            writes,
            None,
            n,
            1,
            single_on(b"CBF.ADD", "cbf10m", b"add:"),
        ),
        w(
            "CBF.DEL 10M",
            Some("cbf10m"),
            writes,
            None,
            n,
            1,
            single_on(b"CBF.DEL", "cbf10m", b"add:"),
        ),
        // A new key each round, created by its first BF.ADD and grown link by link.
        w(
            "BF.ADD auto-created → 1M",
            None,
            writes,
            Some(0.85),
            scaled(1_000_000),
            1,
            Box::new(|r| {
                let key: &'static [u8] =
                    Box::leak(format!("auto{r}").into_bytes().into_boxed_slice());
                single(b"BF.ADD", key, b"auto:", 0)
            }),
        ),
    ];
    workloads.extend(sketches::workloads(n, nb));
    workloads.extend(static_filter::workloads(nb));
    workloads.extend(expandable::workloads(n, nb));
    if std::env::var("E2E_REFERENCE_IS_REDBLOOM").is_ok_and(|v| v == "1") {
        workloads.iter_mut().for_each(|w| w.on_reference = true);
    }
    let selected: Vec<&Workload> = workloads
        .iter()
        .filter(|w| only.is_empty() || only.iter().any(|o| w.name.contains(o.as_str())))
        .collect();
    // A selected workload's baseline runs too, and the baseline's own (BLOCKED ÷ classic ÷
    // GETBIT), in table order.
    let mut selected = selected;
    loop {
        let grown: Vec<&Workload> = workloads
            .iter()
            .filter(|w| {
                selected
                    .iter()
                    .any(|s| s.name == w.name || s.baseline.is_some_and(|b| b.0 == w.name))
            })
            .collect();
        if grown.len() == selected.len() {
            break;
        }
        selected = grown;
    }

    // Server on the first core, client (this thread) on the second.
    let pin = env_or("E2E_PIN", 1) != 0
        && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let server_cpu = pin.then_some(0);
    if pin {
        let status = std::process::Command::new("taskset")
            .args(["-p", "-c", "1", &std::process::id().to_string()])
            .stdout(std::process::Stdio::null())
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "taskset (util-linux) is needed to pin; E2E_PIN=0 runs without"
        );
    }
    let mut targets = vec![Target::start(
        "redbloom",
        &support::module_path(),
        server_cpu,
    )];
    for (name, path) in &references {
        match Target::try_start(name, path, server_cpu) {
            Ok(target) => targets.push(target),
            Err(e) => println!("{name}: skipped, it did not start here: {e}"),
        }
    }

    let setup = Instant::now();
    let needed = |f: &Filter| only.is_empty() || selected.iter().any(|w| w.filter == Some(f.key));
    for target in targets.iter_mut() {
        println!(
            "setting up {} (pre-filling the 100M filter to half, 10M ones to a quarter) ...",
            target.name
        );
        for filter in filters.iter().filter(|f| needed(f)) {
            if target.name != "redbloom" && !filter.on_reference {
                continue;
            }
            let reply = support::call(&mut target.conn, filter.create);
            assert!(
                !matches!(reply, Reply::Error(_)),
                "{}: {reply:?}",
                filter.create
            );
            if filter.fill > 0 {
                let count = if filter.fill_scales {
                    scaled(filter.fill)
                } else {
                    filter.fill
                };
                fill(
                    &mut target.conn,
                    filter.fill_command,
                    filter.key,
                    b"fill:",
                    count,
                );
            }
        }
        static_filter::setup(target, &selected, scaled(static_filter::ITEMS));
    }
    println!("setup took {:.1} s", setup.elapsed().as_secs_f64());

    // samples[target][workload], one per round.
    let mut samples: Vec<Vec<Vec<Sample>>> = targets
        .iter()
        .map(|_| selected.iter().map(|_| Vec::new()).collect())
        .collect();
    for round in 0..rounds {
        println!("round {} of {rounds}", round + 1);
        for (w, workload) in selected.iter().enumerate() {
            let mut order: Vec<usize> = (0..targets.len()).collect();
            if (round + w) % 2 == 1 {
                order.reverse();
            }
            for t in order {
                if t > 0 && !workload.on_reference {
                    continue;
                }
                let target = &mut targets[t];
                if let Some((key, create)) = workload.prepare {
                    let key = key.replace("{r}", &round.to_string());
                    if support::call(&mut target.conn, &format!("EXISTS {key}")).int() == 0 {
                        let create = create.replace("{r}", &round.to_string());
                        let reply = support::call(&mut target.conn, &create);
                        assert!(!matches!(reply, Reply::Error(_)), "{create}: {reply:?}");
                    }
                }
                let pid = target.server.pid();
                let sample = target.load.run(
                    pid,
                    workload.ops,
                    workload.items_per_op,
                    (workload.make)(round as u64),
                );
                samples[t][w].push(sample);
            }
        }
    }
    let cpu =
        |t: usize, w: usize| median(samples[t][w].iter().map(|x| x.cpu_ns_per_item).collect());
    let rate = |t: usize, w: usize| median(samples[t][w].iter().map(|x| x.items_per_sec).collect());
    let index = |name: &str| selected.iter().position(|w| w.name == name).unwrap();

    println!();
    println!("redbloom (median of {rounds} rounds):");
    println!();
    println!("| workload | items/s | server CPU ns/item | ratio to baseline | min – max | target | holds |");
    println!("|---|---:|---:|---:|---:|---:|:---:|");
    for (w, workload) in selected.iter().enumerate() {
        let (ratio_text, target_text, holds_text) = match workload.baseline {
            Some((b, target)) => {
                // Median and spread of the per-round ratios (both ran in the same round).
                let ratios: Vec<f64> = samples[0][w]
                    .iter()
                    .zip(&samples[0][index(b)])
                    .map(|(x, y)| x.cpu_ns_per_item / y.cpu_ns_per_item)
                    .collect();
                let min = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
                let max = ratios.iter().cloned().fold(0.0, f64::max);
                let ratio = median(ratios);
                (
                    format!("{ratio:.2}× {b} | {min:.2} – {max:.2}"),
                    target.map_or("—".to_string(), |t| format!("≤ {t}×")),
                    holds(ratio, target),
                )
            }
            None => ("— | —".to_string(), "—".to_string(), ""),
        };
        println!(
            "| {} | {:.0} | {:.0} | {ratio_text} | {target_text} | {holds_text} |",
            workload.name,
            rate(0, w),
            cpu(0, w)
        );
    }

    for t in 1..targets.len() {
        let reference = &targets[t].name;
        println!();
        println!(
            "redbloom ÷ {reference} on {version}, server CPU per item: median of the {rounds} per-round ratios (min – max); PING and GETBIT are the controls (the same server work on both):"
        );
        println!();
        println!("| workload | redbloom ns/item | {reference} ns/item | ratio | min – max | target | holds |");
        println!("|---|---:|---:|---:|---:|---:|:---:|");
        for (w, workload) in selected.iter().enumerate() {
            if !workload.on_reference {
                continue;
            }
            let ratios: Vec<f64> = samples[0][w]
                .iter()
                .zip(&samples[t][w])
                .map(|(a, b)| a.cpu_ns_per_item / b.cpu_ns_per_item)
                .collect();
            let min = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = ratios.iter().cloned().fold(0.0, f64::max);
            let ratio = median(ratios);
            println!(
                "| {} | {:.0} | {:.0} | {ratio:.2} | {min:.2} – {max:.2} | {} | {} |",
                workload.name,
                cpu(0, w),
                cpu(t, w),
                workload
                    .reference_target
                    .map_or("—".to_string(), |t| format!("≤ {t}")),
                holds(ratio, workload.reference_target)
            );
        }
    }

    static_filter::report(&mut targets, &selected, &samples, rounds);
    expandable::report(&mut targets, &selected, &samples, rounds);

    // Memory per item and the false-positive rate measured on 1M items.
    println!();
    let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    println!(
        "| filter | items | MEMORY USAGE {} | bytes/item |",
        names.join(" / ")
    );
    println!("|---|---:|---:|---:|");
    let mut memory_rows: Vec<(&str, &str)> = filters
        .iter()
        .filter_map(|f| f.count.map(|c| (f.key, c)))
        .collect();
    memory_rows.push(("auto0", "BF.INFO"));
    for (key, count) in memory_rows {
        let mut cells = Vec::new();
        let mut items = 0;
        for target in targets.iter_mut() {
            if support::call(&mut target.conn, &format!("EXISTS {key}")).int() == 0 {
                continue;
            }
            let n = match support::call(&mut target.conn, &format!("{count} {key}")) {
                Reply::Int(n) => n,
                Reply::Array(Some(v)) => v[7].int(),
                other => panic!("{other:?}"),
            };
            items = items.max(n);
            cells.push(support::call(&mut target.conn, &format!("MEMORY USAGE {key}")).int());
        }
        if cells.is_empty() {
            continue;
        }
        let text: Vec<String> = cells.iter().map(i64::to_string).collect();
        println!(
            "| {key} | {items} | {} | {:.2} |",
            text.join(" / "),
            cells[0] as f64 / items as f64
        );
    }
    let conn = &mut targets[0].conn;
    for key in ["bf1m", "bf100m", "bf100mblk"] {
        if support::call(conn, &format!("EXISTS {key}")).int() == 0 {
            continue;
        }
        let mut false_positives = 0;
        let probes = 1_000_000u64;
        let mut it = Vec::new();
        for start in (0..probes).step_by(1000) {
            let mut cmd: Vec<Vec<u8>> = vec![b"BF.MEXISTS".to_vec(), key.as_bytes().to_vec()];
            for j in 0..1000 {
                item(b"absent:", start + j, &mut it);
                cmd.push(it.clone());
            }
            false_positives += conn.call(&cmd).ints().iter().sum::<i64>();
        }
        let items = support::call(conn, &format!("BF.INFO {key} ITEMS")).ints()[0];
        println!(
            "\nfalse-positive rate of {key} (0.01, {items} items) on {probes} absent items: {:.4} %",
            false_positives as f64 * 100.0 / probes as f64
        );
    }
    let _ = std::io::stdout().flush();
}
