//! INFO with the health counts (issue 46) stays O(1): `INFO bf` on a server holding 1M
//! filter keys (`INFO_KEYS`, half of them past their capacity) against one holding a
//! single key, interleaved round by round; the median of each and their ratio, beside
//! PING on the same two servers as the control. INFO reads counters kept on every write
//! and never scans keys, so the ratio stays ~1.
//!
//! `cargo bench --bench info_health` (or `make bench-info`). `REDBLOOM_SERVER` picks the
//! server binary, `REDBLOOM_MODULE` the module.

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::time::Instant;
use support::{RawConnection, Server};

const ROUNDS: usize = 3000;

fn fill(conn: &mut RawConnection, keys: usize) {
    let mut batch = Vec::new();
    for i in 0..keys {
        let key = format!("f:{i}");
        batch.push(vec![
            "BF.RESERVE".to_string(),
            key.clone(),
            "0.01".into(),
            "2".into(),
        ]);
        if i % 2 == 0 {
            // Past its capacity of 2 (a second link).
            batch.push(vec![
                "BF.MADD".to_string(),
                key,
                "a".into(),
                "b".into(),
                "c".into(),
            ]);
        }
        if batch.len() >= 20_000 || i + 1 == keys {
            conn.pipeline(&batch);
            batch.clear();
        }
    }
}

fn time(conn: &mut RawConnection, args: &[&str]) -> f64 {
    let start = Instant::now();
    let _ = conn.call(args);
    start.elapsed().as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let keys: usize = std::env::var("INFO_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let small = Server::start();
    let large = Server::start();
    let (mut a, mut b) = (small.raw(), large.raw());
    fill(&mut a, 1);
    let started = Instant::now();
    fill(&mut b, keys);
    eprintln!("{keys} keys in {:.1} s", started.elapsed().as_secs_f64());
    let over = support::info_field(&mut b, "bf", "bf_health_over_capacity");
    assert_eq!(over, (keys.div_ceil(2)).to_string());
    let (mut info1, mut info_n, mut ping1, mut ping_n) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        // Alternate which server goes first.
        if round % 2 == 0 {
            info1.push(time(&mut a, &["INFO", "bf"]));
            info_n.push(time(&mut b, &["INFO", "bf"]));
        } else {
            info_n.push(time(&mut b, &["INFO", "bf"]));
            info1.push(time(&mut a, &["INFO", "bf"]));
        }
        if round % 2 == 0 {
            ping1.push(time(&mut a, &["PING"]));
            ping_n.push(time(&mut b, &["PING"]));
        } else {
            ping_n.push(time(&mut b, &["PING"]));
            ping1.push(time(&mut a, &["PING"]));
        }
    }
    let (i1, i_n, p1, p_n) = (median(info1), median(info_n), median(ping1), median(ping_n));
    println!("INFO bf, 1 key:        {i1:.1} us (median of {ROUNDS})");
    println!("INFO bf, {keys} keys: {i_n:.1} us");
    println!("ratio {keys} keys / 1 key: {:.2}", i_n / i1);
    println!(
        "PING control: {p1:.1} us / {p_n:.1} us, ratio {:.2}",
        p_n / p1
    );
}
