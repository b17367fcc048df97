//! Bulk load against pipelined BF.MADD, and a sharded filter against one key, on servers
//! with the release build of the module. Run by hand (`make bench-load`); figures go to
//! docs/benchmarks.md. Only ratios within one run mean anything on a shared machine.
//!
//! - load: `redbloom load` (build with redbloom-core here, ship with BF.LOADCHUNK) against
//!   BF.RESERVE + BF.MADD of 1,000 items per command, 16 commands per pipeline, of the same
//!   `LOAD_ITEMS` items (default 10,000,000); the two results are checked byte-identical.
//!   Each round also measures the floor of any build on this machine: the filter's random
//!   bit sets alone (items × hashes of them, into an array of its size, on the build's
//!   threads, each owning a range; no hashing or position arithmetic), and the ratio load
//!   could reach were the build that floor.
//! - sharded: add and exists of `SHARD_ITEMS` items (default 1,000,000) through a
//!   12-member sharded filter on a 3-master cluster, against BF.MADD / BF.MEXISTS of one key
//!   on one server (same batching).
//!
//! - memory: the peak resident memory (VmHWM) of the `redbloom load` binary loading the
//!   `LOAD_ITEMS` items from a file into a filter of `MEMORY_CAPACITY` (default 400M, ~550
//!   MB), against the filter's size (MEMORY USAGE).
//!
//! - streaming: the peak resident memory of `export`, `check` (3 items) and `inspect` of a
//!   NONSCALING 1 % filter of `STREAM_CAPACITY` (default 500M, ~571 MiB) of random bits,
//!   against the filter's size: each holds one chunk, not the filter (issue 43).
//!
//! `BENCH_ROUNDS` (default 3) rounds; each reports both sides and their ratio; the medians
//! close the report.

#[allow(dead_code)]
#[path = "../tests/cli/common.rs"]
mod common;
#[allow(dead_code)]
#[path = "../tests/cli/streaming_rss.rs"]
mod streaming_rss;
#[path = "../../tests/it/support/mod.rs"]
mod support;

use redbloom_client::{load, Conn, Descriptor, Family, FilterSpec};
use std::time::Instant;
use support::Server;

const PER_COMMAND: usize = 1000;
const DEPTH: usize = 16;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `command key items…` 1,000 items a command, 16 commands a pipeline.
fn pipelined(conn: &mut redis::Connection, command: &str, key: &str, items: &[Vec<u8>]) {
    for group in items.chunks(PER_COMMAND * DEPTH) {
        let mut pipe = redis::pipe();
        for part in group.chunks(PER_COMMAND) {
            let cmd = pipe.cmd(command).arg(key);
            for item in part {
                cmd.arg(item.as_slice());
            }
        }
        let _: Vec<redis::Value> = pipe.query(conn).expect("pipeline");
    }
}

/// Seconds for `sets` random test-and-sets of bits in a `bytes` array, on `threads`
/// threads each owning a contiguous range, every line requested 16 sets ahead (as the
/// core's builder does). The positions come from a multiplicative generator (~1 ns each).
fn bit_set_floor(bytes: usize, sets: usize, threads: usize) -> f64 {
    const AHEAD: usize = 16;
    let mut data = vec![0u8; bytes];
    let span = bytes.div_ceil(threads);
    let t = Instant::now();
    std::thread::scope(|scope| {
        for (n, range) in data.chunks_mut(span).enumerate() {
            scope.spawn(move || {
                let bits = range.len() as u64 * 8;
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
                let mut ahead = [0u64; AHEAD];
                let mut clear = 0u64;
                for i in 0..sets / threads + AHEAD {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let next = ((u128::from(x >> 16) * u128::from(bits)) >> 48) as u64;
                    safe_arch::prefetch_t0(&range[(next >> 3) as usize]);
                    let pos = std::mem::replace(&mut ahead[i % AHEAD], next);
                    if i >= AHEAD {
                        let byte = &mut range[(pos >> 3) as usize];
                        clear += u64::from(*byte & (1 << (pos & 7)) == 0);
                        *byte |= 1 << (pos & 7);
                    }
                }
                std::hint::black_box(clear);
            });
        }
    });
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let rounds = env("BENCH_ROUNDS", 3);
    let n = env("LOAD_ITEMS", 10_000_000);
    let shard_n = env("SHARD_ITEMS", 1_000_000);
    let all_items: Vec<Vec<u8>> = (0..n.max(shard_n))
        .map(|i| format!("item:{i}").into_bytes())
        .collect();
    let items = &all_items;
    let spec = FilterSpec {
        family: Family::Bf,
        error_rate: 0.01,
        capacity: n as u64,
        expansion: None,
        nonscaling: false,
        blocked: false,
    };

    let server = Server::start();
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let mut plain = server.client();
    let mut conn = Conn::open(&url).unwrap();
    let mut ratios = Vec::new();
    let mut bounds = Vec::new();
    let threads = load::build_threads().get();
    println!("load of {n} items (error rate 0.01, capacity {n}), built on {threads} threads");
    for round in 0..rounds {
        let _: () = redis::cmd("FLUSHALL").query(&mut plain).unwrap();
        let t = Instant::now();
        let _: () = redis::cmd("BF.RESERVE")
            .arg("madd")
            .arg(0.01)
            .arg(n)
            .query(&mut plain)
            .unwrap();
        pipelined(&mut plain, "BF.MADD", "madd", &items[..n]);
        let madd = n as f64 / t.elapsed().as_secs_f64();
        // What `load::load` does, timed in its two parts: building here, shipping.
        let t = Instant::now();
        let mut built = load::Built::new(&spec, spec.capacity).unwrap();
        built.add_all(&items[..n]).unwrap();
        let build = t.elapsed().as_secs_f64();
        conn.pipeline(&load::loadchunks(&built, "loaded")).unwrap();
        let total = t.elapsed().as_secs_f64();
        let loaded = n as f64 / total;
        let a: Vec<u8> = redis::cmd("DUMP").arg("madd").query(&mut plain).unwrap();
        let b: Vec<u8> = redis::cmd("DUMP").arg("loaded").query(&mut plain).unwrap();
        assert!(a == b, "load and MADD differ");
        ratios.push(loaded / madd);
        let (bytes, sets) = match &built {
            load::Built::Bloom(chain) => {
                let link = &chain.links()[0];
                (link.bytes() as usize, n * link.hashes() as usize)
            }
            load::Built::Cuckoo(_) | load::Built::Static(_) | load::Built::Expandable(_) => {
                unreachable!("a bf spec")
            }
        };
        let floor = bit_set_floor(bytes, sets, threads);
        let bound = n as f64 / (floor + total - build) / madd;
        bounds.push(bound);
        println!(
            "  round {round}: BF.MADD {:.0} items/s, load {:.0} items/s (build {build:.2} s, ship {:.2} s), ratio {:.1}; \
             floor: {sets} bit sets into {bytes} bytes {floor:.2} s, ratio at most {bound:.1}",
            madd,
            loaded,
            total - build,
            loaded / madd
        );
    }
    println!(
        "load / BF.MADD median ratio: {:.1} (at most {:.1} with a build at the bit-set floor)",
        median(ratios),
        median(bounds)
    );
    drop(server);

    // One key on one server against a 12-member sharded filter on three masters.
    let items = &items[..shard_n];
    let single = Server::start();
    let mut one = single.client();
    let cluster = common::Cluster::start_with(0);
    let curl = format!("redis://127.0.0.1:{}/", cluster.nodes[0].port);
    let mut cconn = Conn::open(&curl).unwrap();
    let (mut add_ratios, mut exists_ratios) = (Vec::new(), Vec::new());
    println!("sharded add/exists of {shard_n} items: 12 members on 3 masters vs one key");
    for round in 0..rounds {
        let _: () = redis::cmd("FLUSHALL").query(&mut one).unwrap();
        let _: () = redis::cmd("BF.RESERVE")
            .arg("one")
            .arg(0.01)
            .arg(shard_n)
            .query(&mut one)
            .unwrap();
        let t = Instant::now();
        pipelined(&mut one, "BF.MADD", "one", items);
        let one_add = shard_n as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        pipelined(&mut one, "BF.MEXISTS", "one", items);
        let one_exists = shard_n as f64 / t.elapsed().as_secs_f64();

        let name = format!("sharded{round}");
        let d = Descriptor::new(
            &name,
            12,
            FilterSpec {
                capacity: shard_n as u64,
                ..spec.clone()
            },
        )
        .unwrap();
        d.create(&mut cconn).unwrap();
        let t = Instant::now();
        d.add(&mut cconn, items, None, &mut |_| {}).unwrap();
        let sh_add = shard_n as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let found = d.exists(&mut cconn, items, &mut |_| {}).unwrap();
        let sh_exists = shard_n as f64 / t.elapsed().as_secs_f64();
        assert!(found.iter().all(|&f| f == 1));
        d.drop_all(&mut cconn).unwrap();
        add_ratios.push(sh_add / one_add);
        exists_ratios.push(sh_exists / one_exists);
        println!(
            "  round {round}: one key add {one_add:.0}/s exists {one_exists:.0}/s; sharded add {sh_add:.0}/s exists {sh_exists:.0}/s; ratios add {:.2} exists {:.2}",
            sh_add / one_add,
            sh_exists / one_exists
        );
    }
    println!(
        "sharded / one key median ratios: add {:.2}, exists {:.2}",
        median(add_ratios),
        median(exists_ratios)
    );

    drop(cluster);
    drop(single);
    peak_memory(&all_items[..n], env("MEMORY_CAPACITY", 400_000_000) as u64);
    stream_memory(env("STREAM_CAPACITY", 500_000_000) as u64);
}

/// `redbloom load` of `items` from a file into a filter of `capacity` (default 400M: a
/// filter of ~550 MB, which the items' bits make resident throughout): its peak resident
/// memory (VmHWM, read from /proc until it exits; the mark only grows) against the
/// filter's MEMORY USAGE.
fn peak_memory(items: &[Vec<u8>], capacity: u64) {
    let server = Server::start();
    let dir = support::TempDir::new("bench-load-memory");
    let file = dir.0.join("items.txt");
    let mut text = Vec::new();
    for item in items {
        text.extend_from_slice(item);
        text.push(b'\n');
    }
    std::fs::write(&file, text).unwrap();
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let capacity = capacity.to_string();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args([
            "load",
            &url,
            "big",
            "--error-rate",
            "0.01",
            "--capacity",
            &capacity,
        ])
        .arg("--file")
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (_, peak) = common::wait_peak_rss(&mut child);
    let peak_kb = peak / 1024;
    let mut conn = server.client();
    let bytes: u64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("big")
        .query(&mut conn)
        .unwrap();
    println!(
        "redbloom load of {} items: peak RSS {:.1} MiB for a {:.1} MiB filter: {:.2}x",
        items.len(),
        peak_kb as f64 / 1024.0,
        bytes as f64 / (1 << 20) as f64,
        peak_kb as f64 * 1024.0 / bytes as f64
    );
}

/// `export`, `check` and `inspect` of a large filter of random bits: their peak resident
/// memory against the filter's size.
fn stream_memory(capacity: u64) {
    let server = Server::start();
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let size = streaming_rss::random_bloom(&server, "big", capacity);
    let dir = support::TempDir::new("bench-stream-memory");
    let snap = dir.0.join("big.snap");
    let snap = snap.to_str().unwrap();
    let runs: [(&str, Vec<&str>); 3] = [
        ("export", vec!["export", &url, "big", snap]),
        ("check", vec!["check", snap, "user:1", "user:2", "nobody"]),
        ("inspect", vec!["inspect", &url, "big"]),
    ];
    for (what, args) in runs {
        let (_, peak) = streaming_rss::measured(&args);
        println!(
            "{what} of a {:.1} MiB filter: peak RSS {:.1} MiB: {:.3}x the filter",
            size as f64 / (1 << 20) as f64,
            peak as f64 / (1 << 20) as f64,
            peak as f64 / size as f64
        );
    }
}
