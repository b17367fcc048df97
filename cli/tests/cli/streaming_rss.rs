//! Issue 43, item 3: `export`, `check` and `inspect` stream a filter chunk by chunk, so
//! their peak resident memory stays under 64 MiB plus one 16 MiB chunk whatever the
//! filter's size. Measured here on a ~91 MiB Bloom filter of random bits (before, export
//! and inspect took 2× the filter and check 3×); the figures are printed.

use crate::common::wait_peak_rss;
use crate::support::{Rng, Server};
use std::process::{Command, Stdio};

/// What the peak may reach: 64 MiB and one chunk.
pub const BOUND: u64 = (64 + 16) << 20;

/// A NONSCALING Bloom filter `key` of `capacity` at 1 % (9.585 bits an item), its data
/// random bytes (SCANDUMP's chunks, each LOADCHUNKed back with random bytes).
pub fn random_bloom(server: &Server, key: &str, capacity: u64) -> u64 {
    let mut conn = server.client();
    let _: () = redis::cmd("BF.RESERVE")
        .arg(key)
        .arg(0.01)
        .arg(capacity)
        .arg("NONSCALING")
        .query(&mut conn)
        .unwrap();
    let mut rng = Rng(capacity);
    let mut iter = 0i64;
    let mut bytes = 0;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("BF.SCANDUMP")
            .arg(key)
            .arg(iter)
            .query(&mut conn)
            .unwrap();
        if next == 0 {
            return bytes;
        }
        if iter > 0 {
            let len = data.unwrap_or_default().len();
            bytes += len as u64;
            let _: () = redis::cmd("BF.LOADCHUNK")
                .arg(key)
                .arg(next)
                .arg(rng.bytes(len))
                .query(&mut conn)
                .unwrap();
        }
        iter = next;
    }
}

/// Runs `redbloom args`, returning its standard output and peak resident memory.
pub fn measured(args: &[&str]) -> (String, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // A small output (summaries, answers): read after the end.
    let (status, peak) = wait_peak_rss(&mut child);
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(status.success(), "redbloom {args:?}: {status}");
    (out, peak)
}

#[test]
fn export_check_and_inspect_hold_one_chunk_not_the_filter() {
    use crate::common::url;
    use crate::support::TempDir;
    let server = Server::start();
    let u = url(&server);
    let size = random_bloom(&server, "big", 80_000_000);
    assert!(size > 90 << 20, "{size}");
    let dir = TempDir::new("streaming-rss");
    let snap = dir.0.join("big.snap");
    let snap = snap.to_str().unwrap();
    let mib = |b: u64| b as f64 / (1 << 20) as f64;

    let (out, export_peak) = measured(&["export", &u, "big", snap]);
    let file_bytes = std::fs::metadata(snap).unwrap().len();
    assert_eq!(
        out,
        format!("exported big (bf) to {snap}: {file_bytes} bytes\n")
    );

    // Answers as the server's, whatever they are for random bits.
    let items = ["user:1", "user:2", "nobody"];
    let mut args = vec!["check", snap];
    args.extend(items);
    let (out, check_peak) = measured(&args);
    let server_answers: Vec<i64> = redis::cmd("BF.MEXISTS")
        .arg("big")
        .arg(&items[..])
        .query(&mut server.client())
        .unwrap();
    let answers: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(answers, server_answers);

    let (out, inspect_peak) = measured(&["inspect", &u, "big"]);
    assert!(
        out.starts_with("big: bf, 0 items, capacity 80000000, memory "),
        "{out}"
    );
    // Random bits: half of them set.
    assert!(out.contains(", fill ratio 0.5000, "), "{out}");

    for (what, peak) in [
        ("export", export_peak),
        ("check", check_peak),
        ("inspect", inspect_peak),
    ] {
        eprintln!(
            "{what}: peak RSS {:.1} MiB for a {:.1} MiB filter ({:.2}x)",
            mib(peak),
            mib(size),
            peak as f64 / size as f64
        );
        assert!(peak <= BOUND, "{what}: {:.1} MiB", mib(peak));
    }
}
