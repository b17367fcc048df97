//! Growth without a stall (issue 47): the longest command while a filter grows from 100
//! items past `STALL_XF_ITEMS` (default 10,000,000; 100,000,000 for the target,
//! about 200 MB of XF and 7 minutes a round) by `MADD` ×100 — the expandable filter
//! (`XF.RESERVE 0.01`, which splits one partition at a time), beside the auto-grown Bloom
//! filter (`BF.RESERVE 0.01 100`: each new link twice the last) and the Cuckoo filter with
//! expansion (`CF.RESERVE 1024 EXPANSION 2`, by `CF.INSERT`). Each on a fresh server.
//!
//! Every command is sent alone and timed three ways: the slow log's wall-clock duration
//! (the server's own timing of the command, I/O excluded; threshold 500 µs), and around
//! it the main thread's CPU time and its run-queue wait (the scheduler's account, read
//! while the thread sleeps: exact to a few microseconds; a vCPU's time taken by the host
//! is in neither). A command's wall-clock time beyond its CPU time is waiting: in the
//! run queue (another process had the core), asleep (the thread was put on a CPU more
//! than once), or for the host (steal, on a VM: neither run nor queued). The thread's
//! page faults (/proc/<pid>/task/<pid>/stat) are counted around each command too: on a
//! VM a fault the host serves (memory it had taken back) shows as CPU time. Per round:
//! the longest command with its CPU and run-queue wait, the command with the most CPU
//! with its wall-clock time, how many commands took over 1 ms and 5 ms, the longest
//! round trip of a PING sent every millisecond on a second connection (the stall another
//! client sees; paced, so that it does not take a core from the server), the load average
//! and the host's steal. Target: XF's longest command ≤ 5 ms. `STALL_SERVER_PRIORITY`
//! (`-10`, or `fifo`) runs the server's main thread ahead of the machine's other work.

use super::{Server, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// (name, creation, fill command, whether it takes `ITEMS`).
const FILTERS: [(&str, &str, &str, bool); 3] = [
    (
        "XF, grown from 100 (XF.MADD ×100)",
        "XF.RESERVE f 0.01",
        "XF.MADD",
        false,
    ),
    (
        "BF auto-grown from 100 (BF.MADD ×100)",
        "BF.RESERVE f 0.01 100",
        "BF.MADD",
        false,
    ),
    (
        "CF with expansion 2 from 1024 (CF.INSERT ×100)",
        "CF.RESERVE f 1024 EXPANSION 2",
        "CF.INSERT",
        true,
    ),
];

/// Items per command.
const BATCH: u64 = 100;
/// The slow log's threshold, in microseconds.
const SLOWLOG_US: u64 = 500;

/// One command's account: main-thread CPU, run-queue wait, and the wall-clock time the
/// client waited for the reply (nanoseconds); the times the thread was put on a CPU (1
/// when it ran the command in one go: more when it slept or was preempted meanwhile).
#[derive(Clone, Copy, Default)]
struct Account {
    cpu: u64,
    queued: u64,
    round_trip: u64,
    runs: u64,
    /// The main thread's page faults during the command: minor, and major (a read from
    /// disk).
    minor: u64,
    major: u64,
}

struct Growth {
    /// The longest command (slow log) and its index.
    longest: Duration,
    longest_at: Option<usize>,
    /// The command with the most main-thread CPU time, and its index.
    most_cpu_at: usize,
    over_1ms: usize,
    over_5ms: usize,
    longest_ping: Duration,
    wall: Duration,
    /// The main thread's CPU time over the whole growth.
    server_cpu: Duration,
    /// The load average (1 minute) at the start and at the end.
    load: (f64, f64),
    /// The host's steal over the round, all CPUs (/proc/stat).
    steal: Duration,
    bits_per_item: f64,
    accounts: Vec<Account>,
    /// Each logged command's slow-log duration, by index.
    logged: Vec<(usize, Duration)>,
}

impl Growth {
    /// A command's slow-log duration, when it was logged.
    fn logged_wall(&self, i: usize) -> Option<Duration> {
        self.logged.iter().find(|&&(j, _)| j == i).map(|&(_, d)| d)
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

/// `STALL_SERVER_PRIORITY`: a nice value for the server's main thread (e.g. `-10`), or
/// `fifo` (the real-time class, priority 1, which no ordinary process preempts: what a
/// server on a core of its own sees); both need root. `None` (the default) leaves it at
/// the bench's priority.
fn server_priority() -> Option<String> {
    std::env::var("STALL_SERVER_PRIORITY")
        .ok()
        .filter(|v| !v.is_empty())
}

/// The 1-minute load average.
fn load_average() -> f64 {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// The host's steal time so far, all CPUs (the 8th field of /proc/stat's `cpu` line, in
/// USER_HZ ticks of 10 ms).
fn steal() -> Duration {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: u64 = text
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// The index of the command whose first item is `g:<n>`, from a slow-log entry's
/// arguments.
fn command_index(argv: &[Value]) -> Option<usize> {
    argv.iter().find_map(|a| match a {
        Value::Bulk(Some(b)) => std::str::from_utf8(b)
            .ok()?
            .strip_prefix("g:")?
            .parse::<u64>()
            .ok()
            .map(|n| (n / BATCH) as usize),
        _ => None,
    })
}

/// Grows one filter on a fresh server.
fn grow(
    module: &str,
    items: u64,
    (_, create, fill, with_items): (&str, &str, &str, bool),
) -> Growth {
    let server = Server::start(module);
    if let Some(priority) = server_priority() {
        let pid = server.pid().to_string();
        let (tool, args) = if priority == "fifo" {
            ("chrt", ["-f", "-p", "1", pid.as_str()])
        } else {
            ("renice", ["-n", priority.as_str(), "-p", pid.as_str()])
        };
        let done = std::process::Command::new(tool)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .expect(tool);
        assert!(done.success(), "{tool} {args:?} (needs root)");
    }
    let mut conn = server.conn();
    conn.ok(&format!("CONFIG SET slowlog-log-slower-than {SLOWLOG_US}"));
    conn.ok("CONFIG SET slowlog-max-len 100000");
    conn.ok(create);
    conn.ok("SLOWLOG RESET");
    let stop = Arc::new(AtomicBool::new(false));
    let pinger = {
        let mut pings = server.conn();
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut longest = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                pings.line("PING");
                longest = longest.max(start.elapsed());
                thread::sleep(Duration::from_millis(1));
            }
            longest
        })
    };
    let (load_start, steal_start) = (load_average(), steal());
    let started = Instant::now();
    let (cpu_start, _, _) = server.main_thread();
    let commands = items.div_ceil(BATCH) as usize;
    let mut accounts = Vec::with_capacity(commands);
    let mut args: Vec<Vec<u8>> = Vec::new();
    for batch in 0..commands as u64 {
        args.clear();
        args.push(fill.as_bytes().to_vec());
        args.push(b"f".to_vec());
        if with_items {
            args.push(b"ITEMS".to_vec());
        }
        args.extend((0..BATCH).map(|j| format!("g:{}", batch * BATCH + j).into_bytes()));
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let (cpu, queued, runs) = server.main_thread();
        let (minor, major) = server.main_thread_faults();
        let sent = Instant::now();
        if let Value::Error(e) = conn.call(&refs) {
            panic!("{fill}: {e}");
        }
        let round_trip = sent.elapsed().as_nanos() as u64;
        let (cpu_after, queued_after, runs_after) = server.main_thread();
        let (minor_after, major_after) = server.main_thread_faults();
        accounts.push(Account {
            cpu: cpu_after - cpu,
            queued: queued_after - queued,
            round_trip,
            runs: runs_after - runs,
            minor: minor_after - minor,
            major: major_after - major,
        });
    }
    let (cpu_end, _, _) = server.main_thread();
    let wall = started.elapsed();
    let load_end = load_average();
    let steal = steal().saturating_sub(steal_start);
    stop.store(true, Ordering::Relaxed);
    let longest_ping = pinger.join().expect("the PING loop");
    let Value::Array(entries) = conn.ok("SLOWLOG GET -1") else {
        panic!("SLOWLOG GET");
    };
    assert!(
        entries.len() < 100_000,
        "the slow log is full: raise SLOWLOG_US"
    );
    let mut logged: Vec<(usize, Duration)> = entries
        .iter()
        .filter_map(|e| match e {
            Value::Array(fields) => match &fields[3] {
                Value::Array(argv) if matches!(&argv[0], Value::Bulk(Some(n)) if n.as_slice() == fill.as_bytes()) => {
                    Some((command_index(argv)?, Duration::from_micros(int(&fields[2]) as u64)))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    logged.sort_by_key(|&(_, d)| d);
    let bytes = int(&conn.ok("MEMORY USAGE f"));
    let most_cpu_at = (0..accounts.len())
        .max_by_key(|&i| accounts[i].cpu)
        .unwrap_or(0);
    Growth {
        longest: logged.last().map_or(Duration::ZERO, |&(_, d)| d),
        longest_at: logged.last().map(|&(i, _)| i),
        most_cpu_at,
        over_1ms: logged.iter().filter(|(_, t)| t.as_micros() > 1000).count(),
        over_5ms: logged.iter().filter(|(_, t)| t.as_micros() > 5000).count(),
        longest_ping,
        wall,
        server_cpu: Duration::from_nanos(cpu_end - cpu_start),
        load: (load_start, load_end),
        steal,
        bits_per_item: bytes as f64 * 8.0 / items as f64,
        accounts,
        logged,
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// One round's line.
fn print_round(round: usize, g: &Growth) {
    let longest = match g.longest_at {
        Some(i) => {
            let a = g.accounts[i];
            format!(
                "longest command {:.2} ms (command {i}: CPU {:.2} ms, run-queue wait {:.2} ms, \
                 put on a CPU {} times, page faults {} minor / {} major)",
                g.longest.as_secs_f64() * 1e3,
                ms(a.cpu),
                ms(a.queued),
                a.runs,
                a.minor,
                a.major
            )
        }
        None => format!("no command over {SLOWLOG_US} µs"),
    };
    let top = g.accounts[g.most_cpu_at];
    let top_wall = g.logged_wall(g.most_cpu_at).map_or_else(
        || format!("under {SLOWLOG_US} µs"),
        |d| format!("{:.2} ms", d.as_secs_f64() * 1e3),
    );
    let mut cpus: Vec<u64> = g.accounts.iter().map(|a| a.cpu).collect();
    cpus.sort_unstable();
    let round_trip = g.accounts.iter().map(|a| a.round_trip).max().unwrap_or(0);
    // The commands over 1 ms (slow log) that waited for a read from disk.
    let slow_major = g
        .logged
        .iter()
        .filter(|&&(i, d)| d.as_micros() > 1000 && g.accounts[i].major > 0)
        .count();
    let majors: u64 = g.accounts.iter().map(|a| a.major).sum();
    // Page faults against CPU: how many commands faulted at all, and how many of those
    // whose CPU passed 1 ms did (the faults the VM's host serves show as CPU time).
    let faulted = g.accounts.iter().filter(|a| a.minor + a.major > 0).count();
    let heavy: Vec<&Account> = g.accounts.iter().filter(|a| a.cpu > 1_000_000).collect();
    let heavy_faulted = heavy.iter().filter(|a| a.minor + a.major > 0).count();
    println!(
        "  round {round}: {longest}; most CPU in a command {:.2} ms (command {}, wall {top_wall}, page faults {} minor / {} \
         major); major page faults {majors}, in {slow_major} of the commands over 1 ms; \
         commands with a page fault {faulted}; commands with over 1 ms of CPU {}, {heavy_faulted} \
         of them with a page fault; \
         CPU per command median {:.3} ms, 99.99th percentile {:.3} ms; commands over 1 ms: {}, \
         over 5 ms: {}; longest round trip {:.2} ms, longest PING {:.2} ms; {:.1} s, main thread \
         {:.1} s CPU; load average {:.2} → {:.2}; host steal {:.2} s; {:.1} bits per item",
        ms(top.cpu),
        g.most_cpu_at,
        top.minor,
        top.major,
        heavy.len(),
        ms(cpus[cpus.len() / 2]),
        ms(cpus[(cpus.len() * 9999 / 10000).min(cpus.len() - 1)]),
        g.over_1ms,
        g.over_5ms,
        ms(round_trip),
        g.longest_ping.as_secs_f64() * 1e3,
        g.wall.as_secs_f64(),
        g.server_cpu.as_secs_f64(),
        g.load.0,
        g.load.1,
        g.steal.as_secs_f64(),
        g.bits_per_item
    );
}

/// The median and the largest of `values`.
fn median_and_worst(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[values.len() - 1])
}

/// Each filter grown `rounds` times: each round, then the medians and the worst.
pub fn run(module: &str, rounds: usize, only: &str) {
    let items: u64 = std::env::var("STALL_XF_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    for filter in FILTERS {
        if !filter.0.contains(only) {
            continue;
        }
        let priority = server_priority().map_or(String::new(), |p| format!(" (server: {p})"));
        println!("growth to {items} items: {}{priority}", filter.0);
        let samples: Vec<Growth> = (0..rounds)
            .map(|r| {
                let g = grow(module, items, filter);
                print_round(r + 1, &g);
                g
            })
            .collect();
        let (longest, longest_worst) = median_and_worst(
            samples
                .iter()
                .map(|g| g.longest.as_secs_f64() * 1e3)
                .collect(),
        );
        let (its_cpu, its_cpu_worst) = median_and_worst(
            samples
                .iter()
                .map(|g| g.longest_at.map_or(0.0, |i| ms(g.accounts[i].cpu)))
                .collect(),
        );
        let (most_cpu, most_cpu_worst) = median_and_worst(
            samples
                .iter()
                .map(|g| ms(g.accounts[g.most_cpu_at].cpu))
                .collect(),
        );
        let (over_5ms, _) = median_and_worst(samples.iter().map(|g| g.over_5ms as f64).collect());
        println!(
            "  {rounds} rounds, median (worst): longest command {longest:.2} ms ({longest_worst:.2}), \
             its CPU {its_cpu:.2} ms ({its_cpu_worst:.2}); most CPU in a command {most_cpu:.2} ms \
             ({most_cpu_worst:.2}); commands over 5 ms {over_5ms:.0}"
        );
        println!();
    }
}
