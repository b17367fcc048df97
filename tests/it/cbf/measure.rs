//! Memory per item and false-positive rate of BF, CF and CBF at 1% with 1M items, as
//! docs/cbf.md reports them. Ignored by default (slow in debug builds); run with
//! `cargo test --release --test it cbf::measure -- --ignored --nocapture`. (CF is measured
//! reserved only: grown from its defaults, 1024 × 32 sub-filters, it stops far below 1M.)

use crate::support::{RawConnection, Server};

const ITEMS: usize = 1_000_000;
const PROBES: usize = 100_000;
const BATCH: usize = 1000;

/// Sends `prefix item...` commands in batches (pipelined) and returns every integer reply.
fn batched(
    conn: &mut RawConnection,
    prefix: &[&str],
    names: impl Iterator<Item = String>,
) -> Vec<i64> {
    let names: Vec<String> = names.collect();
    let commands: Vec<Vec<String>> = names
        .chunks(BATCH)
        .map(|chunk| {
            let mut cmd: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
            cmd.extend(chunk.iter().cloned());
            cmd
        })
        .collect();
    let mut out = Vec::new();
    for group in commands.chunks(50) {
        for reply in conn.pipeline(group) {
            out.extend(reply.ints());
        }
    }
    out
}

fn measure(
    conn: &mut RawConnection,
    label: &str,
    create: Option<&str>,
    add: &[&str],
    exists: &[&str],
    key: &str,
) {
    if let Some(line) = create {
        let args: Vec<&str> = line.split(' ').collect();
        assert_eq!(conn.call(&args).text(), "OK");
    }
    let added = batched(conn, add, (0..ITEMS).map(|i| format!("item:{i}")));
    assert_eq!(added.len(), ITEMS);
    let memory = conn.call(&["MEMORY", "USAGE", key]).int();
    let hits: i64 = batched(conn, exists, (0..PROBES).map(|i| format!("probe:{i}")))
        .iter()
        .sum();
    let found: i64 = batched(conn, exists, (0..PROBES).map(|i| format!("item:{i}")))
        .iter()
        .sum();
    assert_eq!(found, PROBES as i64, "{label}: no false negatives");
    println!(
        "| {label} | {memory} | {:.2} | {:.3}% |",
        memory as f64 / ITEMS as f64,
        100.0 * hits as f64 / PROBES as f64
    );
}

#[test]
#[ignore]
fn memory_per_item_and_false_positive_rates() {
    let server = Server::start();
    let mut conn = server.raw();
    println!("| filter | MEMORY USAGE (bytes) | bytes/item | FP rate ({PROBES} probes) |");
    println!("|---|---|---|---|");
    measure(
        &mut conn,
        "BF.RESERVE 0.01 1000000",
        Some("BF.RESERVE bf 0.01 1000000"),
        &["BF.MADD", "bf"],
        &["BF.MEXISTS", "bf"],
        "bf",
    );
    measure(
        &mut conn,
        "CF.RESERVE 1000000",
        Some("CF.RESERVE cf 1000000"),
        &["CF.INSERT", "cf", "ITEMS"],
        &["CF.MEXISTS", "cf"],
        "cf",
    );
    measure(
        &mut conn,
        "CBF.RESERVE 0.01 1000000",
        Some("CBF.RESERVE cbf 0.01 1000000"),
        &["CBF.MADD", "cbf"],
        &["CBF.MEXISTS", "cbf"],
        "cbf",
    );
    measure(
        &mut conn,
        "CBF.RESERVE 0.01 1000000 NONSCALING",
        Some("CBF.RESERVE cbfns 0.01 1000000 NONSCALING"),
        &["CBF.MADD", "cbfns"],
        &["CBF.MEXISTS", "cbfns"],
        "cbfns",
    );
    measure(
        &mut conn,
        "BF grown from the default 100",
        None,
        &["BF.MADD", "bfg"],
        &["BF.MEXISTS", "bfg"],
        "bfg",
    );
    measure(
        &mut conn,
        "CBF grown from the default 100",
        None,
        &["CBF.MADD", "cbfg"],
        &["CBF.MEXISTS", "cbfg"],
        "cbfg",
    );
    for key in ["bf", "cbf", "bfg", "cbfg"] {
        let cmd = if key.starts_with("cbf") {
            "CBF.INFO"
        } else {
            "BF.INFO"
        };
        println!("{key}: {:?}", conn.call(&[cmd, key]).to_json());
    }
    println!("cf: {:?}", conn.call(&["CF.INFO", "cf"]).to_json());
}
