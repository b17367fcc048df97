//! Stall benchmark (issue 16): how long creating or growing a large filter holds the
//! server's main thread, and the longest PING another client waits meanwhile.
//!
//! Each measurement runs on a fresh redis-server (so every large allocation meets a fresh
//! heap, as the first reservation on a server does) with the release module, or with
//! `REFERENCE_MODULE` (a RedisBloom build) side by side for the BF and CF workloads:
//! - `BF.RESERVE` / `CF.RESERVE` / `CBF.RESERVE` of about 1 GiB;
//! - a scale step from a 512 MiB link: a filter whose one link is full (its SCANDUMP
//!   header, with the item counts set to the capacity, loaded by BF.LOADCHUNK), then the
//!   BF.ADD that adds the next, twice as large, link.
//!
//! Per workload: the main thread's CPU time for the command (scheduler account,
//! /proc/<pid>/task/<pid>/schedstat), in a pass without other clients; and, in a second
//! pass, the longest round trip of a PING loop on a second connection while the command
//! runs. The median of `STALL_ROUNDS` (default 3) rounds is reported, with the server's RSS
//! growth.
//!
//! Three more workloads time what a big value costs elsewhere: the RESTORE of a 255 MiB
//! filter's DUMP (what MIGRATE runs on the target, side by side with `REFERENCE_MODULE`),
//! BF.MERGE of two 1.03 GiB filters of random bits (redbloom's own command) and DEBUG
//! DIGEST-VALUE of a 1.03 GiB filter (RedisBloom has no digest callback).
//! Rounds interleave the two modules; ratios are medians of the per-round ratios.
//!
//! Three more time SF.BUILD FROM a SET: of 20,000 members (the largest source built in
//! the command itself) and of 10M members, copied in slices on the main thread (the
//! module's INFO gives the slices, the longest and their total, printed beside) then built
//! on a thread, and with `bf.sf-build-slices no` built in a forked child while the client
//! is blocked (the main thread's share is the fork, INFO's `latest_fork_usec`, printed
//! beside it, then reading the filter back and storing it).
//!
//! Then the growth of a filter past 10M items (`STALL_XF_ITEMS`) by MADD ×100: the longest
//! command of the expandable filter beside the auto-grown BF and the grown CF, each
//! command's CPU time and run-queue wait (`stall/expandable.rs`).
//!
//! `make bench-stall` (or `cargo bench --bench stall`). The module under test is the cdylib
//! cargo built beside this binary (`deps/libredbloom.so`: as fresh as the sources), or
//! `REDBLOOM_MODULE`; `REDBLOOM_SERVER` names the server binary, `STALL_ONLY` keeps the
//! workloads whose name contains it.

#[path = "stall/expandable.rs"]
mod expandable;
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

// ---------------------------------------------------------------------------------------
// A minimal RESP2 client

#[derive(Debug)]
enum Value {
    Status,
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Value>),
}

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(port: u16) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    fn call(&mut self, args: &[&[u8]]) -> Value {
        self.writer
            .write_all(&support::resp::encode(args))
            .expect("send");
        self.read()
    }

    /// A command given as one space-separated line.
    fn line(&mut self, line: &str) -> Value {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        self.call(&args)
    }

    /// Like [`Conn::line`], failing on an error reply.
    fn ok(&mut self, line: &str) -> Value {
        match self.line(line) {
            Value::Error(e) => panic!("{line}: {e}"),
            value => value,
        }
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read");
        let line = line.trim_end_matches("\r\n");
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Value::Status,
            "-" => Value::Error(rest.to_string()),
            ":" => Value::Int(rest.parse().expect("integer")),
            "$" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    return Value::Bulk(None);
                }
                let mut data = vec![0; len as usize + 2];
                self.reader.read_exact(&mut data).expect("bulk");
                data.truncate(len as usize);
                Value::Bulk(Some(data))
            }
            "*" => {
                let len: i64 = rest.parse().expect("length");
                Value::Array((0..len.max(0)).map(|_| self.read()).collect())
            }
            _ => panic!("unexpected reply line {line:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// A server of its own per measurement

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start(module: &str) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir =
            std::env::temp_dir().join(format!("redbloom-stall-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("server dir");
        let binary = std::env::var("REDBLOOM_SERVER").unwrap_or_else(|_| "redis-server".into());
        let port_arg = port.to_string();
        let dir_arg = dir.display().to_string();
        let child = Command::new(binary)
            .args([
                "--port",
                &port_arg,
                "--bind",
                "127.0.0.1",
                "--dir",
                &dir_arg,
            ])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--logfile",
                "server.log",
                "--enable-debug-command",
                "yes",
            ])
            .args(["--loadmodule", module])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let server = Server { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !matches!(
            Conn::open(port).map(|mut c| c.line("PING")),
            Ok(Value::Status)
        ) {
            assert!(
                Instant::now() < deadline,
                "the server on {port} did not start"
            );
            thread::sleep(Duration::from_millis(10));
        }
        server
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn conn(&self) -> Conn {
        Conn::open(self.port).expect("connect")
    }

    /// The main thread's time on a CPU so far, in nanoseconds (see [`Self::main_thread`]).
    fn main_thread_ns(&self) -> u64 {
        self.main_thread().0
    }

    /// The main thread's time on a CPU and its time waiting in the run queue so far, in
    /// nanoseconds, and how many times it was put on a CPU (the scheduler's account,
    /// /proc/<pid>/task/<pid>/schedstat; a vCPU's time taken by the host is in none). The account of a running thread is brought
    /// up to date only at a timer tick or when it stops, so it is read once the thread is
    /// asleep (waiting for clients): read while it runs, it could miss a whole command.
    fn main_thread(&self) -> (u64, u64, u64) {
        let pid = self.pid();
        for _ in 0..10_000 {
            let stat =
                std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).expect("stat");
            // The state follows the command name, which is in parentheses.
            let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
            if state.starts_with('S') {
                break;
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/schedstat"))
            .expect("schedstat");
        let mut fields = stat
            .split(' ')
            .map(|f| f.trim().parse::<u64>().expect("schedstat"));
        (
            fields.next().unwrap(),
            fields.next().unwrap(),
            fields.next().unwrap(),
        )
    }

    /// The main thread's page faults so far: (minor, major). A major fault waited for a
    /// read from disk (a page of code or of a file the kernel had dropped).
    fn main_thread_faults(&self) -> (u64, u64) {
        let pid = self.pid();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).expect("stat");
        // After the command name: state, ppid, pgrp, session, tty, tpgid, flags, minflt,
        // cminflt, majflt.
        let fields: Vec<u64> = stat
            .rsplit(')')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        (fields[6], fields[8])
    }

    fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let kb = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .expect("VmRSS");
        kb.trim().parse::<u64>().unwrap() * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------------------------------
// Workloads

struct Workload {
    name: &'static str,
    /// Whether RedisBloom has the command (not CBF.*; its DEBUG DIGEST-VALUE digests
    /// nothing).
    in_redisbloom: bool,
    /// Untimed set-up commands; returns the timed command's arguments.
    setup: fn(&mut Conn) -> Vec<Vec<u8>>,
}

/// The words of a one-line command, as arguments.
fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// A numeric field of an INFO section.
fn info_field(conn: &mut Conn, section: &str, name: &str) -> u64 {
    info_field_if_any(conn, section, name).unwrap_or_else(|| panic!("{name}"))
}

/// A numeric field of an INFO section, if the server (or module) has it.
fn info_field_if_any(conn: &mut Conn, section: &str, name: &str) -> Option<u64> {
    let Value::Bulk(Some(info)) = conn.ok(&format!("INFO {section}")) else {
        panic!("INFO reply");
    };
    let info = String::from_utf8_lossy(&info).to_string();
    let prefix = format!("{name}:");
    info.lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .and_then(|v| v.trim().parse().ok())
}

/// LATENCY LATEST: each event's latest figure (ms), but `command` (the whole command).
fn latency_events(conn: &mut Conn) -> Vec<(String, f64)> {
    let Value::Array(events) = conn.ok("LATENCY LATEST") else {
        panic!("LATENCY LATEST reply");
    };
    events
        .into_iter()
        .filter_map(|event| match event {
            Value::Array(fields) => match (fields.first(), fields.get(2)) {
                (Some(Value::Bulk(Some(name))), Some(Value::Int(latest))) => {
                    Some((String::from_utf8_lossy(name).to_string(), *latest as f64))
                }
                _ => None,
            },
            _ => None,
        })
        .filter(|(name, _)| name != "command")
        .collect()
}

/// INFO memory's used_memory: what the allocator handed out, resident or not.
fn used_memory(conn: &mut Conn) -> u64 {
    info_field(conn, "memory", "used_memory")
}

/// A Bloom filter `full` with one link of ~512 MiB that holds its capacity: the next
/// BF.ADD adds a link. Made from a reserved filter's SCANDUMP header (COMPAT §7.1) with
/// the chain's and the link's item counts set to the capacity.
fn full_512_mib_link(conn: &mut Conn) {
    const CAPACITY: u64 = 390_000_000;
    conn.ok(&format!("BF.RESERVE src 0.01 {CAPACITY}"));
    let Value::Array(reply) = conn.ok("BF.SCANDUMP src 0") else {
        panic!("BF.SCANDUMP reply");
    };
    let Value::Bulk(Some(mut header)) = reply.into_iter().nth(1).expect("header") else {
        panic!("BF.SCANDUMP header");
    };
    // Chain: items u64, links u32, options u32, growth u32; then the link: bytes u64,
    // bits u64, items u64, ...
    let chain_items = 0..8;
    let link_items = 20 + 16..20 + 24;
    header[chain_items].copy_from_slice(&CAPACITY.to_le_bytes());
    header[link_items].copy_from_slice(&CAPACITY.to_le_bytes());
    let reply = conn.call(&[b"BF.LOADCHUNK", b"full", b"1", &header]);
    assert!(matches!(reply, Value::Status), "BF.LOADCHUNK: {reply:?}");
    conn.ok("DEL src");
}

/// Reserves the Bloom filter `key` with `reserve` (BF.RESERVE's rate and capacity) and
/// fills its bits with pseudo-random bytes (BF.LOADCHUNK at the positions BF.SCANDUMP
/// gives), so it is resident and looks like a filled filter: its DUMP does not compress.
fn random_filter(conn: &mut Conn, key: &str, reserve: &str) {
    conn.ok(&format!("BF.RESERVE {key} {reserve}"));
    let mut cursor = 0i64;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    loop {
        let Value::Array(reply) = conn.ok(&format!("BF.SCANDUMP {key} {cursor}")) else {
            panic!("BF.SCANDUMP reply");
        };
        let mut reply = reply.into_iter();
        let (Some(Value::Int(next)), Some(Value::Bulk(Some(mut data)))) =
            (reply.next(), reply.next())
        else {
            panic!("BF.SCANDUMP cursor and data");
        };
        if next == 0 {
            break;
        }
        // The first chunk is the header; the others are bits.
        if cursor != 0 {
            for byte in data.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *byte = state as u8;
            }
            let at = next.to_string();
            let reply = conn.call(&[b"BF.LOADCHUNK", key.as_bytes(), at.as_bytes(), &data]);
            assert!(matches!(reply, Value::Status), "BF.LOADCHUNK: {reply:?}");
        }
        cursor = next;
    }
}

/// The DUMP payload of a 255 MiB filter of random bits; the key itself is deleted.
fn dump_of_a_255_mib_filter(conn: &mut Conn) -> Vec<u8> {
    random_filter(conn, "filled", "0.01 223000000");
    let Value::Bulk(Some(payload)) = conn.ok("DUMP filled") else {
        panic!("DUMP reply");
    };
    conn.ok("DEL filled");
    payload
}

/// The set `key` of `m0 .. m{n-1}`, by pipelined SADDs of 10,000 members.
fn members_set(conn: &mut Conn, key: &str, n: usize) {
    const BATCH: usize = 10_000;
    let mut out = Vec::new();
    let mut sent = 0;
    for start in (0..n).step_by(BATCH) {
        let members: Vec<String> = (start..(start + BATCH).min(n))
            .map(|i| format!("m{i}"))
            .collect();
        let mut args: Vec<&[u8]> = vec![b"SADD", key.as_bytes()];
        args.extend(members.iter().map(String::as_bytes));
        out.extend_from_slice(&support::resp::encode(&args));
        sent += 1;
        // A few batches in flight at a time.
        if sent % 16 == 0 || start + BATCH >= n {
            conn.writer.write_all(&out).expect("send");
            out.clear();
            for _ in 0..(if sent % 16 == 0 { 16 } else { sent % 16 }) {
                assert!(matches!(conn.read(), Value::Int(_)), "SADD");
            }
        }
    }
}

fn workloads() -> Vec<Workload> {
    vec![
        Workload {
            name: "SF.BUILD FROM a 20,000-member SET (built in the command)",
            in_redisbloom: false,
            setup: |conn| {
                members_set(conn, "src", 20_000);
                words("SF.BUILD sf 0.01 FROM src")
            },
        },
        Workload {
            name: "SF.BUILD FROM a 10M-member SET (copied in slices, built on a thread)",
            in_redisbloom: false,
            setup: |conn| {
                members_set(conn, "src", 10_000_000);
                words("SF.BUILD sf 0.01 FROM src")
            },
        },
        Workload {
            name: "SF.BUILD FROM a 10M-member SET, bf.sf-build-slices no (built in a forked child)",
            in_redisbloom: false,
            setup: |conn| {
                members_set(conn, "src", 10_000_000);
                conn.ok("CONFIG SET bf.sf-build-slices no");
                words("SF.BUILD sf 0.01 FROM src")
            },
        },
        Workload {
            name: "BF.RESERVE 0.01 800M (1.03 GiB)",
            in_redisbloom: true,
            setup: |_| words("BF.RESERVE big 0.01 800000000"),
        },
        Workload {
            name: "CF.RESERVE 1G (1 GiB)",
            in_redisbloom: true,
            setup: |_| words("CF.RESERVE big 1000000000"),
        },
        Workload {
            name: "CBF.RESERVE 0.01 200M (1.03 GiB)",
            in_redisbloom: false,
            setup: |_| words("CBF.RESERVE big 0.01 200000000"),
        },
        Workload {
            name: "BF scale step from a 512 MiB link",
            in_redisbloom: true,
            setup: |conn| {
                full_512_mib_link(conn);
                words("BF.ADD full x")
            },
        },
        Workload {
            name: "RESTORE of a 255 MiB filter's DUMP (what MIGRATE runs on the target)",
            in_redisbloom: true,
            setup: |conn| {
                let payload = dump_of_a_255_mib_filter(conn);
                vec![
                    b"RESTORE".to_vec(),
                    b"copy".to_vec(),
                    b"0".to_vec(),
                    payload,
                ]
            },
        },
        Workload {
            name: "BF.MERGE of two 1.03 GiB filters of random bits (a new 1.03 GiB destination)",
            in_redisbloom: false,
            setup: |conn| {
                random_filter(conn, "a", "0.01 800000000");
                random_filter(conn, "b", "0.01 800000000");
                words("BF.MERGE merged 2 a b")
            },
        },
        Workload {
            name: "DEBUG DIGEST-VALUE of a 1.03 GiB filter of random bits",
            in_redisbloom: false,
            setup: |conn| {
                random_filter(conn, "big", "0.01 800000000");
                words("DEBUG DIGEST-VALUE big")
            },
        },
    ]
}

struct Sample {
    /// INFO's latest_fork_usec after the command (0: it forked no child).
    fork: Duration,
    /// An SF.BUILD FROM copied in slices: (slices, the longest, their total, the longest
    /// in the main thread's CPU time, how many took over 3 ms), from the module's INFO
    /// (0 slices: none).
    slices: (u64, Duration, Duration, Duration, u64),
    /// The server's RSS before the command.
    server_rss: u64,
    /// The latency monitor's events of more than 1 ms during the command, other than
    /// `command` itself: (name, ms), e.g. `fork`, `command-unblocking`.
    events: Vec<(String, f64)>,
    main_thread: Duration,
    wall: Duration,
    longest_ping: Duration,
    /// The PING loop's median: this machine's noise floor.
    median_ping: Duration,
    /// The PING loop's 99.9th percentile.
    p999_ping: Duration,
    rss_growth: u64,
    allocated: u64,
}

/// One round of `workload` on `module`: a pass for the main thread's time and the RSS,
/// another with a PING loop for the stall.
fn measure(module: &str, workload: &Workload) -> Sample {
    let fork_usec;
    let slices;
    let server_rss;
    let events;
    let (main_thread, wall, rss_growth, allocated) = {
        let server = Server::start(module);
        let mut conn = server.conn();
        let command = (workload.setup)(&mut conn);
        let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
        let used_before = used_memory(&mut conn);
        let rss_before = server.rss_bytes();
        conn.ok("CONFIG SET latency-monitor-threshold 1");
        let cpu_before = server.main_thread_ns();
        let start = Instant::now();
        let reply = conn.call(&args);
        let wall = start.elapsed();
        let cpu = server.main_thread_ns() - cpu_before;
        assert!(
            !matches!(reply, Value::Error(_)),
            "{}: {reply:?}",
            workload.name
        );
        let rss_growth = server.rss_bytes().saturating_sub(rss_before);
        let allocated = used_memory(&mut conn).saturating_sub(used_before);
        fork_usec = info_field(&mut conn, "stats", "latest_fork_usec");
        let mut sf = |name: &str| info_field_if_any(&mut conn, "bf", name).unwrap_or(0);
        slices = (
            sf("bf_sf_build_last_slices"),
            Duration::from_micros(sf("bf_sf_build_last_longest_slice_usec")),
            Duration::from_micros(sf("bf_sf_build_last_slices_usec")),
            Duration::from_micros(sf("bf_sf_build_last_longest_slice_cpu_usec")),
            sf("bf_sf_build_last_slices_over_3ms"),
        );
        server_rss = rss_before;
        events = latency_events(&mut conn);
        (Duration::from_nanos(cpu), wall, rss_growth, allocated)
    };
    let (longest_ping, median_ping, p999_ping) = {
        let server = Server::start(module);
        let mut conn = server.conn();
        let command = (workload.setup)(&mut conn);
        let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let pinger = {
            let mut pings = server.conn();
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut times = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let start = Instant::now();
                    pings.line("PING");
                    times.push(start.elapsed());
                }
                times
            })
        };
        // Let the PING loop run before and after the command, so the command falls inside.
        thread::sleep(Duration::from_millis(20));
        conn.call(&args);
        thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Relaxed);
        let mut times = pinger.join().expect("the PING loop");
        times.sort();
        (
            times[times.len() - 1],
            times[times.len() / 2],
            times[times.len() * 999 / 1000],
        )
    };
    Sample {
        fork: Duration::from_micros(fork_usec),
        slices,
        server_rss,
        events,
        main_thread,
        wall,
        longest_ping,
        median_ping,
        p999_ping,
        rss_growth,
        allocated,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

struct Summary {
    fork_ms: f64,
    /// Medians of the slices' count, the longest slice, their total and the longest in
    /// CPU time (ms), and how many took over 3 ms.
    slices: (f64, f64, f64, f64, f64),
    server_rss_mib: f64,
    /// Each latency event's median over the rounds that logged it.
    events: Vec<(String, f64)>,
    main_thread_ms: f64,
    ms_per_gib: f64,
    wall_ms: f64,
    longest_ping_ms: f64,
    median_ping_ms: f64,
    p999_ping_ms: f64,
    rss_growth_mib: f64,
    allocated_gib: f64,
}

fn summarize(samples: &[Sample]) -> Summary {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let allocated_gib = samples[0].allocated as f64 / GIB;
    let main_thread_ms = median(samples.iter().map(|s| ms(s.main_thread)).collect());
    let mut names: Vec<&String> = samples
        .iter()
        .flat_map(|s| s.events.iter().map(|e| &e.0))
        .collect();
    names.sort();
    names.dedup();
    let events = names
        .into_iter()
        .map(|name| {
            let values = samples
                .iter()
                .flat_map(|s| s.events.iter().filter(|e| &e.0 == name).map(|e| e.1))
                .collect();
            (name.clone(), median(values))
        })
        .collect();
    Summary {
        fork_ms: median(samples.iter().map(|s| ms(s.fork)).collect()),
        slices: (
            median(samples.iter().map(|s| s.slices.0 as f64).collect()),
            median(samples.iter().map(|s| ms(s.slices.1)).collect()),
            median(samples.iter().map(|s| ms(s.slices.2)).collect()),
            median(samples.iter().map(|s| ms(s.slices.3)).collect()),
            median(samples.iter().map(|s| s.slices.4 as f64).collect()),
        ),
        server_rss_mib: median(samples.iter().map(|s| s.server_rss as f64 / MIB).collect()),
        events,
        main_thread_ms,
        ms_per_gib: main_thread_ms / allocated_gib,
        wall_ms: median(samples.iter().map(|s| ms(s.wall)).collect()),
        longest_ping_ms: median(samples.iter().map(|s| ms(s.longest_ping)).collect()),
        median_ping_ms: median(samples.iter().map(|s| ms(s.median_ping)).collect()),
        p999_ping_ms: median(samples.iter().map(|s| ms(s.p999_ping)).collect()),
        rss_growth_mib: median(samples.iter().map(|s| s.rss_growth as f64 / MIB).collect()),
        allocated_gib,
    }
}

fn print_row(module: &str, s: &Summary) {
    // Per GiB allocated, for the commands that allocate (not a digest).
    let per_gib = if s.allocated_gib >= 0.01 {
        format!(" = {:>8.3} ms/GiB", s.ms_per_gib)
    } else {
        String::new()
    };
    let fork = if s.fork_ms > 0.0 {
        format!(
            " (fork {:.3} ms of a {:.0} MiB server)",
            s.fork_ms, s.server_rss_mib
        )
    } else {
        String::new()
    };
    let fork = if s.slices.0 > 0.0 {
        format!(
            "{fork} ({:.0} slices, {:.0} over 3 ms, the longest {:.3} ms wall / {:.3} ms CPU, \
             in all {:.1} ms)",
            s.slices.0, s.slices.4, s.slices.1, s.slices.3, s.slices.2
        )
    } else {
        fork
    };
    let events: Vec<String> = s
        .events
        .iter()
        .map(|(name, ms)| format!("{name} {ms:.0} ms"))
        .collect();
    let events = if events.is_empty() {
        String::new()
    } else {
        format!("  latency monitor: {}", events.join(", "))
    };
    println!(
        "  {module:<10} main thread {:>9.3} ms{fork}{per_gib}  wall {:>9.3} ms  \
         longest PING {:>9.3} ms (median {:.3}, 99.9th percentile {:.3})  used_memory +{:.2} GiB  \
         RSS +{:.1} MiB{events}",
        s.main_thread_ms,
        s.wall_ms,
        s.longest_ping_ms,
        s.median_ping_ms,
        s.p999_ping_ms,
        s.allocated_gib,
        s.rss_growth_mib
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without
    // it, and then only checks that it builds.
    if !std::env::args().any(|a| a == "--bench") {
        println!("stall benchmark: run it with `make bench-stall` (cargo bench --bench stall)");
        return;
    }
    let rounds: usize = std::env::var("STALL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    // `REDBLOOM_MODULE`, else the cdylib `cargo bench` built with this binary (in its
    // `deps/` folder: always as fresh as the bench; `target/release/libredbloom.so` is
    // only as fresh as the last `cargo build --release`).
    let module = support::module_path().display().to_string();
    let reference = std::env::var("REFERENCE_MODULE")
        .ok()
        .filter(|p| !p.is_empty());
    println!("module under test: {module}");
    match &reference {
        Some(path) => println!("reference module:  {path}"),
        None => println!("no REFERENCE_MODULE: redbloom alone"),
    }
    println!("median of {rounds} rounds, a fresh server for each measurement\n");
    // Rounds interleave the two modules, so both meet the same machine load; the ratio is
    // the median of the per-round ratios.
    let only = std::env::var("STALL_ONLY").unwrap_or_default();
    expandable::run(&module, rounds, &only);
    for workload in workloads() {
        if !workload.name.contains(only.as_str()) {
            continue;
        }
        println!("{}", workload.name);
        let reference = reference.as_deref().filter(|_| workload.in_redisbloom);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            ours.push(measure(&module, &workload));
            if let Some(path) = reference {
                theirs.push(measure(path, &workload));
            }
        }
        print_row("redbloom", &summarize(&ours));
        if !theirs.is_empty() {
            print_row("reference", &summarize(&theirs));
            let ratio = |f: fn(&Sample) -> Duration| {
                median(
                    ours.iter()
                        .zip(&theirs)
                        .map(|(a, b)| f(a).as_secs_f64() / f(b).as_secs_f64())
                        .collect(),
                )
            };
            println!(
                "  ratio redbloom / reference (median of per-round ratios): main thread {:.2}×, \
                 longest PING {:.2}×",
                ratio(|s| s.main_thread),
                ratio(|s| s.longest_ping)
            );
        }
        println!();
    }
}
