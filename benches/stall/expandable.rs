//! Growth without a stall (issue 47): the longest command while a filter grows from 100
//! items past `STALL_XF_ITEMS` (default 10,000,000) by `MADD` ×100 — the expandable filter
//! (`XF.RESERVE 0.01`, which splits one partition at a time), beside the auto-grown Bloom
//! filter (`BF.RESERVE 0.01 100`: each new link twice the last) and the Cuckoo filter with
//! expansion (`CF.RESERVE 1024 EXPANSION 2`, by `CF.INSERT`). Each on a fresh server, with
//! a PING loop on a second connection. The longest command is the slow log's (the
//! server's own timing of each command, I/O excluded; threshold 200 µs; wall-clock, so a
//! command the kernel preempted on this shared machine counts its wait) and the most
//! main-thread CPU time one command took (the scheduler's account around each command);
//! printed with how many commands took over 1 ms and over 5 ms, the longest PING round
//! trip and the filter's bits per item at the end. Target: XF's longest command ≤ 5 ms.

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

struct Growth {
    longest: Duration,
    /// The most main-thread CPU time one command took (scheduler account read around each
    /// command: a preempted command's wait on this shared machine is not in it; the PING
    /// loop's few microseconds are).
    longest_cpu: Duration,
    over_1ms: usize,
    over_5ms: usize,
    longest_ping: Duration,
    wall: Duration,
    bits_per_item: f64,
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

/// Grows one filter on a fresh server; the slow log's entries of its fill command.
fn grow(
    module: &str,
    items: u64,
    (_, create, fill, with_items): (&str, &str, &str, bool),
) -> Growth {
    let server = Server::start(module);
    let mut conn = server.conn();
    conn.ok("CONFIG SET slowlog-log-slower-than 200");
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
            }
            longest
        })
    };
    let started = Instant::now();
    let mut longest_cpu = 0u64;
    let mut args: Vec<Vec<u8>> = Vec::new();
    for batch in 0..items.div_ceil(100) {
        args.clear();
        args.push(fill.as_bytes().to_vec());
        args.push(b"f".to_vec());
        if with_items {
            args.push(b"ITEMS".to_vec());
        }
        args.extend((0..100).map(|j| format!("g:{}", batch * 100 + j).into_bytes()));
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let before = server.main_thread_ns();
        if let Value::Error(e) = conn.call(&refs) {
            panic!("{fill}: {e}");
        }
        longest_cpu = longest_cpu.max(server.main_thread_ns() - before);
    }
    let wall = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let longest_ping = pinger.join().expect("the PING loop");
    let Value::Array(entries) = conn.ok("SLOWLOG GET -1") else {
        panic!("SLOWLOG GET");
    };
    let mut times: Vec<Duration> = entries
        .iter()
        .filter_map(|e| match e {
            Value::Array(fields) => match &fields[3] {
                Value::Array(argv) if matches!(&argv[0], Value::Bulk(Some(n)) if n.as_slice() == fill.as_bytes()) => {
                    Some(Duration::from_micros(int(&fields[2]) as u64))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    times.sort();
    let bytes = int(&conn.ok("MEMORY USAGE f"));
    Growth {
        longest: times.last().copied().unwrap_or(Duration::ZERO),
        longest_cpu: Duration::from_nanos(longest_cpu),
        over_1ms: times.iter().filter(|t| t.as_micros() > 1000).count(),
        over_5ms: times.iter().filter(|t| t.as_micros() > 5000).count(),
        longest_ping,
        wall,
        bits_per_item: bytes as f64 * 8.0 / items as f64,
    }
}

/// Each filter grown `rounds` times: the median of the longest commands, and the worst.
pub fn run(module: &str, rounds: usize, only: &str) {
    let items: u64 = std::env::var("STALL_XF_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    for filter in FILTERS {
        if !filter.0.contains(only) {
            continue;
        }
        println!("growth to {items} items: {}", filter.0);
        let mut samples: Vec<Growth> = (0..rounds).map(|_| grow(module, items, filter)).collect();
        samples.sort_by_key(|g| g.longest);
        let median = &samples[samples.len() / 2];
        let worst = &samples[samples.len() - 1];
        println!(
            "  longest command {:.2} ms (median of {rounds} rounds; worst {:.2} ms), its main-thread CPU at most {:.2} ms, commands over 1 ms: {}, over 5 ms: {}; longest PING {:.2} ms; {:.1} s in all; {:.1} bits per item at the end",
            median.longest.as_secs_f64() * 1e3,
            worst.longest.as_secs_f64() * 1e3,
            median.longest_cpu.as_secs_f64() * 1e3,
            median.over_1ms,
            median.over_5ms,
            median.longest_ping.as_secs_f64() * 1e3,
            median.wall.as_secs_f64(),
            median.bits_per_item
        );
        println!();
    }
}
