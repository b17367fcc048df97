//! Measurements of the ribbon beside the fuse filter (ignored tests, run by hand with
//! `cargo test --release -p redbloom-core --lib NAME -- --ignored --nocapture`): large
//! builds, first-seed success, 10^8 items, the rate on many keys, interleaved lookups.

use super::ribbon_tests::{fp_rate, keys_of};
use super::*;

/// This thread's CPU time (user + system), from /proc (Linux; 0 elsewhere).
fn thread_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// `cargo test --release -p redbloom-core --lib measure_large_builds -- --ignored
/// --nocapture`: the three encodings at 1 %, 0.1 % and 0.01 % of 1M and 10M items, one
/// run (encoding 3's line also gives its bumped keys).
#[test]
#[ignore = "measurement: prints seeds, memory and rates of large builds"]
fn measure_large_builds() {
    for n in [1_000_000u64, 10_000_000] {
        let keys = keys_of("item:", n);
        for error in [0.01, 0.001, 0.0001] {
            for encoding in [Encoding::Ribbon, Encoding::StandardRibbon, Encoding::Fuse] {
                let (wall, cpu) = (std::time::Instant::now(), thread_cpu_secs());
                let f = build_with(keys.clone(), error, u64::MAX, encoding).unwrap();
                let (wall, cpu) = (wall.elapsed().as_secs_f64(), thread_cpu_secs() - cpu);
                let bumped = match f.layout() {
                    Layout::Bumped(b) => format!(" ({} bumped)", b.bumped),
                    _ => String::new(),
                };
                eprintln!(
                    "{n} items at {error} {encoding:?}{bumped}: seed {} {:.3} bits/item, FP \
                     {:.5} % on 4M absent (guaranteed {:.5} %), build {:.2} M items/s of CPU \
                     time ({:.2} wall)",
                    f.seed(),
                    f.bits_per_item(),
                    100.0 * fp_rate(&f, 4_000_000),
                    100.0 * f.guaranteed_error(),
                    n as f64 / cpu / 1e6,
                    n as f64 / wall / 1e6
                );
            }
        }
    }
}

#[test]
#[ignore = "measurement: first-seed success by size"]
fn measure_seeds() {
    for n in [100_000u64, 1_000_000, 10_000_000] {
        let mut seeds = Vec::new();
        for set in 0..(20_000_000 / n).min(20) {
            let f = build(keys_of(&format!("s{set}:"), n), 0.0001, u64::MAX).unwrap();
            seeds.push(f.seed());
        }
        let f = build(keys_of("q", n), 0.0001, u64::MAX).unwrap();
        eprintln!("n {n}: seeds {seeds:?} bits/item {:.3}", f.bits_per_item());
    }
}

/// This process's peak resident memory (VmHWM), in bytes (Linux; 0 elsewhere).
fn peak_resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// `cargo test --release -p redbloom-core --lib measure_hundred_million -- --ignored
/// --nocapture` (about 5 GB of memory): 10^8 item keys at 1 %, the ribbon's seed, memory,
/// rate, build speed and peak extra memory (the peak resident memory over that of the
/// keys alone, against the filter's size).
#[test]
#[ignore = "measurement: a 10^8-item build"]
fn measure_hundred_million() {
    let n = 100_000_000u64;
    let keys: Vec<u64> = (0..n).map(|i| mix(i, 0x1234_5678)).collect();
    let before = peak_resident();
    let (wall, cpu) = (std::time::Instant::now(), thread_cpu_secs());
    let f = build(keys, 0.01, u64::MAX).unwrap();
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), thread_cpu_secs() - cpu);
    let extra = peak_resident().saturating_sub(before);
    let hits = (0..10_000_000u64)
        .filter(|i| f.contains(mix(*i, 0x5eed)))
        .count();
    eprintln!(
        "10^8 at 0.01: seed {}, {} bytes, {:.3} bits/item, FP {:.4} % on 10M absent \
         (designed {:.4} %), build {:.2} M items/s of CPU time ({:.2} wall), peak extra \
         memory {:.2} GB = {:.1}x the filter",
        f.seed(),
        f.mem_usage(),
        f.bits_per_item(),
        hits as f64 / 1e5,
        100.0 * f.guaranteed_error(),
        n as f64 / cpu / 1e6,
        n as f64 / wall / 1e6,
        extra as f64 / 1e9,
        extra as f64 / f.mem_usage() as f64
    );
    assert!(f.contains(mix(17, 0x1234_5678)));
}

/// `cargo test --release -p redbloom-core --lib measure_fp_closely -- --ignored
/// --nocapture`: the 10M-item filters of encoding 3 at 0.01 % and 1 % and encoding 2's at
/// 0.01 %, their rates on three disjoint sets of 40M absent keys (encoding 3: also the
/// hits of its ribbon alone; the others come from the list of bumped keys).
#[test]
#[ignore = "measurement: the false-positive rate on 3 × 40M absent keys"]
fn measure_fp_closely() {
    let keys = keys_of("item:", 10_000_000);
    for (error, encoding) in [
        (0.0001, Encoding::Ribbon),
        (0.01, Encoding::Ribbon),
        (0.0001, Encoding::StandardRibbon),
    ] {
        let f = build_with(keys.clone(), error, u64::MAX, encoding).unwrap();
        let mut all = 0;
        // Keys i + salt: the sets are disjoint.
        for salt in [0x5eed, 1 << 40, 2 << 40] {
            let (mut hits, mut ribbon_hits) = (0u64, 0u64);
            for i in 0..40_000_000u64 {
                let key = mix(i, salt);
                if f.contains(key) {
                    hits += 1;
                    if let Layout::Bumped(b) = f.layout() {
                        let h = mix(key, f.seed());
                        ribbon_hits +=
                            u64::from(ribbon::contains(&b.ribbon, f.bits(), f.data(), h));
                    }
                }
            }
            all += hits;
            eprintln!(
                "10M at {error} {encoding:?}: {:.3} bits/item, FP {:.5} % on 40M absent \
                 (set {salt:#x}: {hits} hits, {ribbon_hits} of them encoding 3's ribbon's; \
                 designed {:.5} %)",
                f.bits_per_item(),
                hits as f64 / 4e5,
                100.0 * f.guaranteed_error()
            );
        }
        eprintln!(
            "10M at {error} {encoding:?}: FP {:.5} % on 120M absent",
            all as f64 / 1.2e6
        );
    }
}

/// `cargo test --release -p redbloom-core --lib measure_lookups -- --ignored --nocapture`:
/// encoding 3 against `OTHER` (encoding 2's ribbon; set `SF_COMPARE=fuse` for the fuse
/// filter) on the same 10M items at 1 %, 0.1 % and 0.01 %, interleaved
/// (each round times both encodings back to back on 1M absent keys, one by one and with
/// `contains_each`); medians of the per-round ratios.
#[test]
#[ignore = "measurement: interleaved lookup timings"]
fn measure_lookups() {
    let keys = keys_of("item:", 10_000_000);
    let absent = keys_of("absent:", 1_000_000);
    let time = |f: &StaticFilter, batch: bool| {
        let start = std::time::Instant::now();
        let mut hits = 0usize;
        if batch {
            f.contains_each(&absent, |hit| hits += usize::from(hit));
        } else {
            hits = absent.iter().filter(|&&k| f.contains(k)).count();
        }
        std::hint::black_box(hits);
        start.elapsed().as_secs_f64() * 1e9 / absent.len() as f64
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for error in [0.01, 0.001, 0.0001] {
        let ribbon = build_with(keys.clone(), error, u64::MAX, Encoding::Ribbon).unwrap();
        let other = match std::env::var("SF_COMPARE").as_deref() {
            Ok("fuse") => Encoding::Fuse,
            _ => Encoding::StandardRibbon,
        };
        let fuse = build_with(keys.clone(), error, u64::MAX, other).unwrap();
        for batch in [false, true] {
            let (mut r, mut f, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..11 {
                let (a, b) = if round % 2 == 0 {
                    (time(&ribbon, batch), time(&fuse, batch))
                } else {
                    let b = time(&fuse, batch);
                    (time(&ribbon, batch), b)
                };
                r.push(a);
                f.push(b);
                ratio.push(a / b);
            }
            eprintln!(
                "10M at {error}, {}: encoding 3 {:.1} ns, {other:?} {:.1} ns per absent key; \
                 3 ÷ {other:?} median {:.2} (min {:.2}, max {:.2})",
                if batch { "contains_each" } else { "one by one" },
                median(r),
                median(f),
                median(ratio.clone()),
                ratio.iter().copied().fold(f64::MAX, f64::min),
                ratio.iter().copied().fold(0.0, f64::max),
            );
        }
    }
}

/// `cargo test --release -p redbloom-core --lib measure_windowed_build -- --ignored
/// --nocapture`: the windowed build against the one-pass build it replaced, at 1 % on 1M
/// and 10M item keys, each build in a process of its own (this test run again:
/// `SF_MEASURE_ONE`), alternately, five rounds: peak extra memory (VmHWM over that of the
/// keys alone) against the filter, CPU time, the same bytes. `SF_MEASURE_ITEMS=100000000`:
/// 10^8 items instead, two rounds (the one-pass build takes ~4 GB).
#[test]
#[ignore = "measurement: memory and speed of the windowed build against the one-pass"]
fn measure_windowed_build() {
    if let Ok(one) = std::env::var("SF_MEASURE_ONE") {
        let (variant, n) = one.split_once(':').expect("variant:items");
        let n: u64 = n.parse().expect("items");
        let keys = keys_of("item:", n);
        let before = peak_resident();
        let cpu = thread_cpu_secs();
        let f = if variant == "windowed" {
            build(keys, 0.01, u64::MAX).unwrap()
        } else {
            super::banding_tests::build_one_pass(&keys, 0.01, true).unwrap()
        };
        let cpu = thread_cpu_secs() - cpu;
        let extra = peak_resident().saturating_sub(before);
        println!(
            "MEASURED {extra} {cpu} {} {} {}",
            f.mem_usage(),
            f.checksum(),
            f.seed()
        );
        return;
    }
    let (sizes, rounds) = match std::env::var("SF_MEASURE_ITEMS") {
        Ok(n) => (vec![n.parse().expect("items")], 2),
        Err(_) => (vec![1_000_000, 10_000_000], 5),
    };
    let run = |variant: &str, n: u64| -> (f64, f64, u64, u64, u64) {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "static_filter::ribbon_measures::measure_windowed_build",
            ])
            .args(["--ignored", "--nocapture", "--test-threads=1"])
            .env("SF_MEASURE_ONE", format!("{variant}:{n}"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.split_once("MEASURED ").map(|(_, m)| m));
        let v: Vec<&str> = line.expect("a measure").split(' ').collect();
        let int = |i: usize| v[i].parse::<u64>().unwrap();
        (
            v[0].parse().unwrap(),
            v[1].parse().unwrap(),
            int(2),
            int(3),
            int(4),
        )
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for n in sizes {
        let (mut mem, mut speed, mut ratio) = ([vec![], vec![]], [vec![], vec![]], vec![]);
        let (mut size, mut seed) = (0, 0);
        for round in 0..rounds {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            let mut cpu = [0.0; 2];
            let mut sums = [0; 2];
            for v in order {
                let (extra, secs, bytes, sum, s) = run(["windowed", "one-pass"][v], n);
                (size, seed) = (bytes, s);
                mem[v].push(extra / bytes as f64);
                speed[v].push(n as f64 / secs / 1e6);
                (cpu[v], sums[v]) = (secs, sum);
            }
            assert_eq!(sums[0], sums[1], "the same filter");
            ratio.push(cpu[0] / cpu[1]);
        }
        eprintln!(
            "{n} items at 1 % ({size} bytes, seed {seed}): peak extra memory windowed {:.2}x the filter \
             (one-pass {:.2}x); CPU windowed {:.2}M items/s, one-pass {:.2}M; CPU time \
             windowed ÷ one-pass median {:.2} (min {:.2}, max {:.2}); the same bytes",
            median(mem[0].clone()),
            median(mem[1].clone()),
            median(speed[0].clone()),
            median(speed[1].clone()),
            median(ratio.clone()),
            ratio.iter().copied().fold(f64::MAX, f64::min),
            ratio.iter().copied().fold(0.0, f64::max),
        );
    }
}
