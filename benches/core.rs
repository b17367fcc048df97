//! Criterion benchmarks of the core (no Redis): hashing and Bloom link add/check.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use redbloom::filter::chain::Chain;
use redbloom::filter::hash::HashPair;
use std::hint::black_box;

fn items(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("user:{i}").into_bytes()).collect()
}

fn hashing(c: &mut Criterion) {
    let keys = items(1024);
    let mut group = c.benchmark_group("hash");
    group.throughput(Throughput::Elements(keys.len() as u64));
    group.bench_function("pair64", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(HashPair::wide(black_box(k)));
            }
        })
    });
    group.finish();
}

fn bloom(c: &mut Criterion) {
    let keys = items(10_000);
    for capacity in [1_000u64, 10_000_000] {
        let mut group = c.benchmark_group(format!("bloom/{capacity}"));
        group.throughput(Throughput::Elements(keys.len() as u64));
        group.bench_function("add", |b| {
            b.iter_batched_ref(
                || Chain::new(capacity, 0.01, 2, true, u64::MAX).unwrap(),
                |chain| {
                    for k in &keys {
                        let pair = chain.hash(k);
                        black_box(chain.add(pair, u64::MAX));
                    }
                },
                BatchSize::LargeInput,
            )
        });
        let mut chain = Chain::new(capacity, 0.01, 2, true, u64::MAX).unwrap();
        for k in &keys {
            let pair = chain.hash(k);
            chain.add(pair, u64::MAX);
        }
        group.bench_function("check", |b| {
            b.iter(|| {
                for k in &keys {
                    black_box(chain.contains(chain.hash(k)));
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, hashing, bloom);
criterion_main!(benches);
