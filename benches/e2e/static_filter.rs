//! The static filter's workloads of the end-to-end benchmark (issue 36): `SF.MEXISTS` ×100
//! on a 10M-item static filter at 1 % (redbloom only), against `BF.MEXISTS` ×100 on a
//! Bloom filter of the same 10M items at the same rate (`BF.RESERVE 0.01 10000000`, full),
//! on redbloom and on each reference. The two sides run different commands, so the
//! harness' same-workload table cannot compare them: [`report`] adds a table of its own,
//! SF on redbloom ÷ BF on each reference, the median of the per-round ratios (each round
//! runs both back to back), and the memory of both filters. Targets: CPU per item ≤ 0.6×
//! RedisBloom's BF.MEXISTS ×100, MEMORY USAGE ≤ 8.3 bits per item and ≤ 0.75× RedisBloom's.
//!
//! The static filter is built here with redbloom-core from the items the Bloom filter is
//! filled with and loaded with SF.LOADCHUNK: byte for byte `SF.BUILD sf10m 0.01 ITEMS …`
//! of them (the construction is a function of the distinct items and the rate;
//! `cli/tests/cli/load_static.rs` checks it), without a 10M-argument command.

use super::{batch, item, Filter, RawConnection, Reply, Sample, Target, Workload};
use redbloom_core::static_filter::{build, dump, item_key};

/// The static filter's key.
pub const KEY: &str = "sf10m";
/// Items in both filters (scaled by `E2E_SCALE`).
pub const ITEMS: u64 = 10_000_000;
const RATE: f64 = 0.01;

/// (SF workload on redbloom, BF workload on the reference), compared in [`report`].
const PAIRS: [(&str, &str); 2] = [
    ("SF.MEXISTS×100 10M", "BF.MEXISTS×100 10M full"),
    (
        "SF.MEXISTS×100 10M absent",
        "BF.MEXISTS×100 10M full absent",
    ),
];
/// The target of SF.MEXISTS ×100 on redbloom ÷ BF.MEXISTS ×100 on RedisBloom.
const CPU_TARGET: f64 = 0.6;
/// Memory targets: bits per item, and the ratio to the reference's Bloom filter.
const BITS_TARGET: f64 = 8.3;
const MEMORY_TARGET: f64 = 0.75;

/// The full Bloom filter (on every server); the static one is built by [`setup`].
pub fn filters() -> Vec<Filter> {
    vec![Filter {
        key: "bf10mfull",
        create: "BF.RESERVE bf10mfull 0.01 10000000",
        fill_command: "BF.MADD",
        fill: ITEMS,
        fill_scales: true,
        count: Some("BF.INFO"),
        on_reference: true,
    }]
}

/// Present items (`fill:0..`, those both filters hold) and absent ones (new each round),
/// 100 per command; each SF workload's baseline is the BF one on the same server.
pub fn workloads(nb: u64) -> Vec<Workload> {
    let make = |command: &'static [u8], key: &'static [u8], present: bool| {
        Box::new(move |r: u64| {
            if present {
                batch(command, key, b"fill:", 0, 100)
            } else {
                batch(command, key, b"absent:", r * 10_000_000, 100)
            }
        }) as Box<dyn Fn(u64) -> super::Generator<'static>>
    };
    let workload = |name, filter, baseline, on_reference, make| Workload {
        name,
        filter: Some(filter),
        baseline,
        reference_target: None,
        on_reference,
        prepare: None,
        ops: nb,
        items_per_op: 100,
        make,
    };
    let mut out = Vec::new();
    for ((sf, bf), present) in PAIRS.into_iter().zip([true, false]) {
        out.push(workload(
            bf,
            "bf10mfull",
            Some(("GETBIT", None)),
            true,
            make(b"BF.MEXISTS", b"bf10mfull", present),
        ));
        out.push(workload(
            sf,
            KEY,
            Some((bf, None)),
            false,
            make(b"SF.MEXISTS", KEY.as_bytes(), present),
        ));
    }
    out
}

/// Builds the static filter of `fill:0..items` here and loads it into redbloom (when a
/// selected workload needs it).
pub fn setup(target: &mut Target, selected: &[&Workload], items: u64) {
    if target.name != "redbloom" || !selected.iter().any(|w| w.filter == Some(KEY)) {
        return;
    }
    let started = std::time::Instant::now();
    let mut it = Vec::new();
    let keys: Vec<u64> = (0..items)
        .map(|i| {
            item(b"fill:", i, &mut it);
            item_key(&it)
        })
        .collect();
    let filter = build(keys, RATE, u64::MAX).expect("the static filter builds");
    for (iter, data) in dump::load_sequence(&filter) {
        let iter = iter.to_string();
        let reply = target.conn.call(&[
            b"SF.LOADCHUNK".as_slice(),
            KEY.as_bytes(),
            iter.as_bytes(),
            &data,
        ]);
        assert_eq!(reply, Reply::Simple("OK".into()), "SF.LOADCHUNK");
    }
    println!(
        "  {KEY}: {items} items built here and loaded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn memory(conn: &mut RawConnection, key: &str) -> Option<i64> {
    match conn.call(&["MEMORY", "USAGE", key]) {
        Reply::Int(n) => Some(n),
        _ => None,
    }
}

/// The false-positive rate of the static filter on 1M absent items.
fn false_positives(conn: &mut RawConnection) -> f64 {
    let probes = 1_000_000u64;
    let mut it = Vec::new();
    let mut found = 0;
    for start in (0..probes).step_by(1000) {
        let mut cmd: Vec<Vec<u8>> = vec![b"SF.MEXISTS".to_vec(), KEY.as_bytes().to_vec()];
        for j in 0..1000 {
            item(b"absent-fp:", start + j, &mut it);
            cmd.push(it.clone());
        }
        found += conn.call(&cmd).ints().iter().sum::<i64>();
    }
    found as f64 / probes as f64
}

fn holds(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "no"
    }
}

/// SF on redbloom ÷ BF on each reference (CPU per item, per round), and both filters'
/// memory.
pub fn report(
    targets: &mut [Target],
    selected: &[&Workload],
    samples: &[Vec<Vec<Sample>>],
    rounds: usize,
) {
    let index = |name: &str| selected.iter().position(|w| w.name == name);
    let pairs: Vec<(&str, &str, usize, usize)> = PAIRS
        .iter()
        .filter_map(|&(sf, bf)| Some((sf, bf, index(sf)?, index(bf)?)))
        .collect();
    if pairs.is_empty() {
        return;
    }
    let cpu = |s: &[Sample]| super::median(s.iter().map(|x| x.cpu_ns_per_item).collect());
    for t in 1..targets.len() {
        let reference = &targets[t].name;
        println!();
        println!(
            "static filter on redbloom ÷ Bloom filter on {reference}, the same 10M items at 0.01, server CPU per item: median of the {rounds} per-round ratios (min – max):"
        );
        println!();
        println!(
            "| redbloom | ns/item | {reference} | ns/item | ratio | min – max | target | holds |"
        );
        println!("|---|---:|---|---:|---:|---:|---:|:---:|");
        for &(sf, bf, s, b) in &pairs {
            let ratios: Vec<f64> = samples[0][s]
                .iter()
                .zip(&samples[t][b])
                .map(|(x, y)| x.cpu_ns_per_item / y.cpu_ns_per_item)
                .collect();
            let min = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = ratios.iter().cloned().fold(0.0, f64::max);
            let ratio = super::median(ratios);
            println!(
                "| {sf} | {:.1} | {bf} | {:.1} | {ratio:.2} | {min:.2} – {max:.2} | ≤ {CPU_TARGET} | {} |",
                cpu(&samples[0][s]),
                cpu(&samples[t][b]),
                holds(ratio <= CPU_TARGET)
            );
        }
    }
    let conn = &mut targets[0].conn;
    let items = conn.call(&["SF.CARD", KEY]).int();
    let Some(sf_bytes) = memory(conn, KEY) else {
        return;
    };
    let bits = sf_bytes as f64 * 8.0 / items as f64;
    println!();
    println!(
        "{KEY}: {items} items, MEMORY USAGE {sf_bytes} B = {bits:.2} bits per item (target ≤ {BITS_TARGET}: {}); false-positive rate on 1M absent items {:.4} %",
        holds(bits <= BITS_TARGET),
        false_positives(conn) * 100.0
    );
    if items as u64 != ITEMS {
        println!(
            "(E2E_SCALE ≠ 1: the Bloom filters are reserved for {ITEMS} items but hold {items}; the memory ratios below hold at E2E_SCALE=1 only)"
        );
    }
    for target in targets.iter_mut() {
        let Some(bf_bytes) = memory(&mut target.conn, "bf10mfull") else {
            continue;
        };
        let ratio = sf_bytes as f64 / bf_bytes as f64;
        println!(
            "bf10mfull on {}: MEMORY USAGE {bf_bytes} B = {:.2} bits per item; {KEY} ÷ it {ratio:.3} (target ≤ {MEMORY_TARGET}: {})",
            target.name,
            bf_bytes as f64 * 8.0 / items as f64,
            holds(ratio <= MEMORY_TARGET)
        );
    }
}
