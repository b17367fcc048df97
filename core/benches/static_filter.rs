//! Criterion benchmarks of the static filter (no Redis), the ribbon (the default) beside
//! encoding 1's binary fuse filter in one run: building from 1M and 10M item keys at 1 %
//! (items per second: `Throughput::Elements`), hashing the items, and lookups of present
//! and absent items in the 10M filters. `cargo bench -p redbloom-core --bench
//! static_filter`; compare within one run: the machine is shared.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use redbloom_core::static_filter::{build_with, item_key, Encoding};
use std::hint::black_box;
use std::time::Duration;

fn keys(prefix: &str, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| item_key(format!("{prefix}:{i}").as_bytes()))
        .collect()
}

fn building(c: &mut Criterion) {
    for n in [1_000_000usize, 10_000_000] {
        let mut group = c.benchmark_group(format!("sf/build {}M", n / 1_000_000));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        let k = keys("item", n);
        for (name, encoding) in ENCODINGS {
            group.bench_function(format!("{name} build at 0.01"), |b| {
                b.iter_batched(
                    || k.clone(),
                    |k| black_box(build_with(k, 0.01, u64::MAX, encoding).unwrap()),
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
    }
    let items: Vec<Vec<u8>> = (0..1_000_000)
        .map(|i| format!("user:{i}").into_bytes())
        .collect();
    let mut group = c.benchmark_group("sf/hash 1M");
    group.throughput(Throughput::Elements(items.len() as u64));
    group.bench_function("item_key", |b| {
        b.iter(|| items.iter().map(|i| item_key(i)).fold(0, u64::wrapping_add))
    });
    group.finish();
}

const ENCODINGS: [(&str, Encoding); 2] = [("ribbon", Encoding::Ribbon), ("fuse", Encoding::Fuse)];

fn lookups(c: &mut Criterion) {
    let n = 10_000_000;
    let present = keys("item", 10_000);
    let absent = keys("absent", 10_000);
    let mut group = c.benchmark_group("sf/10M lookups");
    group.throughput(Throughput::Elements(10_000));
    for (name, encoding) in ENCODINGS {
        let filter = build_with(keys("item", n), 0.01, u64::MAX, encoding).unwrap();
        group.bench_function(format!("{name} present"), |b| {
            b.iter(|| present.iter().filter(|&&k| filter.contains(k)).count())
        });
        group.bench_function(format!("{name} absent"), |b| {
            b.iter(|| absent.iter().filter(|&&k| filter.contains(k)).count())
        });
        group.bench_function(format!("{name} absent, contains_each (prefetched)"), |b| {
            b.iter(|| {
                let mut hits = 0;
                filter.contains_each(&absent, |hit| hits += usize::from(hit));
                hits
            })
        });
    }
    group.finish();
}

fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = quick();
    targets = building, lookups
}
criterion_main!(benches);
