//! WBF against BF on one redis-server: the server main thread's CPU time per item of
//! WBF.ADD / WBF.EXISTS as a ratio to BF.ADD / BF.EXISTS measured in the same run (the
//! machine is shared and noisy: only same-run ratios mean anything). Single-item commands,
//! pipelined; filters reserved for the same error rate and capacity; the EXISTS probes are
//! half present, half absent. The median of interleaved rounds is reported.
//!
//! `cargo bench --bench wbf`; `WBF_ITEMS` (default 200000) and `WBF_ROUNDS` (default 5).

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use support::resp::encode_into;
use support::{RawConnection, Reply, Server};

const PIPELINE: usize = 256;

/// CPU time the server's main thread has run, in ns (schedstat's first field).
fn main_thread_cpu_ns(pid: u32) -> u64 {
    let stat =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/schedstat")).expect("schedstat");
    stat.split(' ').next().unwrap().parse().expect("run time")
}

/// Sends `command key item` for every item, `PIPELINE` at a time, and reads every (integer)
/// reply; returns the server main thread's CPU ns per item.
fn run(port: u16, pid: u32, command: &str, key: &str, items: &[String]) -> f64 {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let start = main_thread_cpu_ns(pid);
    let mut line = Vec::new();
    for batch in items.chunks(PIPELINE) {
        let mut out = Vec::new();
        for item in batch {
            encode_into(
                &mut out,
                &[command.as_bytes(), key.as_bytes(), item.as_bytes()],
            );
        }
        writer.write_all(&out).unwrap();
        for _ in batch {
            line.clear();
            reader.read_until(b'\n', &mut line).unwrap();
            assert!(line[0] == b':' || line[0] == b'#', "{command}: {line:?}");
        }
    }
    (main_thread_cpu_ns(pid) - start) as f64 / items.len() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::var("WBF_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let rounds: usize = std::env::var("WBF_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let server = Server::start();
    let mut conn: RawConnection = server.raw();
    let pid = server.pid();
    let error = "0.01";
    let capacity = (n * rounds).to_string();
    let mut results: Vec<(&str, Vec<f64>)> = [
        "BF.ADD",
        "WBF.ADD",
        "WBF.ADD timed",
        "BF.EXISTS",
        "WBF.EXISTS",
        "WBF.EXISTS timed",
    ]
    .iter()
    .map(|&name| (name, Vec::new()))
    .collect();
    for round in 0..rounds {
        for (key, reserve) in [
            ("bf", format!("BF.RESERVE bf {error} {capacity}")),
            ("wbf", format!("WBF.RESERVE wbf {error} {capacity}")),
            (
                "tbf",
                format!("WBF.RESERVE tbf {error} {capacity} WINDOW 3600000"),
            ),
        ] {
            if round == 0 {
                let args: Vec<&str> = reserve.split(' ').collect();
                assert_eq!(conn.call(&args), Reply::Simple("OK".into()), "{key}");
            }
        }
        let adds: Vec<String> = (0..n).map(|i| format!("item:{round}:{i}")).collect();
        let probes: Vec<String> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    format!("item:{round}:{i}")
                } else {
                    format!("absent:{round}:{i}")
                }
            })
            .collect();
        for (slot, (command, key, items)) in [
            ("BF.ADD", "bf", &adds),
            ("WBF.ADD", "wbf", &adds),
            ("WBF.ADD", "tbf", &adds),
            ("BF.EXISTS", "bf", &probes),
            ("WBF.EXISTS", "wbf", &probes),
            ("WBF.EXISTS", "tbf", &probes),
        ]
        .into_iter()
        .enumerate()
        {
            results[slot]
                .1
                .push(run(server.port, pid, command, key, items));
        }
    }
    let medians: Vec<(&str, f64)> = results
        .into_iter()
        .map(|(name, v)| (name, median(v)))
        .collect();
    println!("server main-thread CPU per item, median of {rounds} rounds of {n} items (capacity {capacity}, error {error}):");
    for (name, ns) in &medians {
        println!("  {name:18} {ns:8.0} ns");
    }
    let ratio = |a: usize, b: usize| medians[a].1 / medians[b].1;
    println!(
        "  WBF.ADD / BF.ADD            {:.3} (timed window {:.3})",
        ratio(1, 0),
        ratio(2, 0)
    );
    println!(
        "  WBF.EXISTS / BF.EXISTS      {:.3} (timed window {:.3})",
        ratio(4, 3),
        ratio(5, 3)
    );
    let bf = conn.call(&["MEMORY", "USAGE", "bf"]).int();
    let wbf = conn.call(&["MEMORY", "USAGE", "wbf"]).int();
    println!(
        "  memory: BF {bf} bytes, WBF {wbf} bytes, ratio {:.3}",
        wbf as f64 / bf as f64
    );
}
