//! Criterion benchmarks of the core (no Redis): hashing, Bloom links at 1 K, 10 M and 100 M
//! capacity (classic and BLOCKED layout), a 14-link chain, the Cuckoo and counting filters — and, as speed references
//! on the same workloads through one adapter, the `fastbloom` and `bloomfilter` crates.
//! Compare within one run: the machine is shared.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use redbloom_core::bloom::chain::Chain;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
use redbloom_core::hash::HashPair;
use std::hint::black_box;
use std::time::Duration;

/// Items per measured iteration.
const BATCH: usize = 10_000;

fn item(prefix: &str, i: usize) -> Vec<u8> {
    format!("{prefix}:{i}").into_bytes()
}

fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    range.map(|i| item(prefix, i)).collect()
}

/// One interface over redbloom's chain and the reference crates, so the workloads are the
/// same for each.
trait BloomLike {
    fn insert(&mut self, item: &[u8]) -> bool;
    fn contains(&self, item: &[u8]) -> bool;
}

struct Redbloom(Chain);
struct FastBloom(fastbloom::BloomFilter);
struct BloomFilterCrate(bloomfilter::Bloom<[u8]>);

impl BloomLike for Redbloom {
    fn insert(&mut self, item: &[u8]) -> bool {
        let pair = self.0.hash(item);
        matches!(
            self.0.add(pair, u64::MAX),
            redbloom_core::bloom::chain::AddOutcome::Added
        )
    }
    fn contains(&self, item: &[u8]) -> bool {
        self.0.contains(self.0.hash(item))
    }
}

impl BloomLike for FastBloom {
    fn insert(&mut self, item: &[u8]) -> bool {
        !self.0.insert(item)
    }
    fn contains(&self, item: &[u8]) -> bool {
        self.0.contains(item)
    }
}

impl BloomLike for BloomFilterCrate {
    fn insert(&mut self, item: &[u8]) -> bool {
        let new = !self.0.check(item);
        self.0.set(item);
        new
    }
    fn contains(&self, item: &[u8]) -> bool {
        self.0.check(item)
    }
}

/// A filter of each implementation sized for `capacity` at 1 %, pre-filled with `fill` items.
fn implementations(capacity: usize, fill: usize) -> Vec<(&'static str, Box<dyn BloomLike>)> {
    let mut all: Vec<(&'static str, Box<dyn BloomLike>)> = vec![
        (
            "redbloom",
            Box::new(Redbloom(
                Chain::new(capacity as u64, 0.01, 2, false, u64::MAX).unwrap(),
            )),
        ),
        (
            "redbloom-blocked",
            Box::new(Redbloom(
                Chain::with_layout(capacity as u64, 0.01, 2, false, true, u64::MAX).unwrap(),
            )),
        ),
        (
            "fastbloom",
            Box::new(FastBloom(
                fastbloom::BloomFilter::with_false_pos(0.01).expected_items(capacity),
            )),
        ),
        (
            "bloomfilter",
            Box::new(BloomFilterCrate(
                bloomfilter::Bloom::new_for_fp_rate(capacity, 0.01).unwrap(),
            )),
        ),
    ];
    for (_, filter) in &mut all {
        for i in 0..fill {
            filter.insert(&item("fill", i));
        }
    }
    all
}

fn hashing(c: &mut Criterion) {
    let keys = items("user", 0..BATCH);
    let mut group = c.benchmark_group("hash");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("pair64", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(HashPair::wide(black_box(k)));
            }
        })
    });
    group.bench_function("cuckoo", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(CuckooHash::new(black_box(k)));
            }
        })
    });
    group.finish();
}

fn bloom_links(c: &mut Criterion) {
    for (label, capacity, fill) in [
        ("1K", 1_000, 500),
        ("10M", 10_000_000, 1_000_000),
        ("100M", 100_000_000, 1_000_000),
    ] {
        let present = items("fill", 0..BATCH.min(fill));
        let mut group = c.benchmark_group(format!("link/{label}"));
        group.throughput(Throughput::Elements(present.len() as u64));
        for (name, mut filter) in implementations(capacity, fill) {
            group.bench_function(format!("{name}/check"), |b| {
                b.iter(|| {
                    for k in &present {
                        black_box(filter.contains(k));
                    }
                })
            });
            let mut round = 0;
            group.bench_function(format!("{name}/add"), |b| {
                b.iter_batched(
                    || {
                        round += 1;
                        items(&format!("new{round}"), 0..present.len())
                    },
                    |new| {
                        for k in &new {
                            black_box(filter.insert(k));
                        }
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
    }
}

fn chain_and_batches(c: &mut Criterion) {
    // An auto-created filter grown to 1M items has 14 links.
    let mut chain = Chain::new(100, 0.01, 2, true, u64::MAX).unwrap();
    for i in 0..1_000_000 {
        let pair = chain.hash(&item("fill", i));
        chain.add(pair, u64::MAX);
    }
    assert_eq!(chain.links().len(), 14);
    let present: Vec<HashPair> = (0..BATCH)
        .map(|i| chain.hash(&item("fill", i * 97)))
        .collect();
    let mut group = c.benchmark_group("chain14");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("contains one by one", |b| {
        b.iter(|| {
            for &p in &present {
                black_box(chain.contains(p));
            }
        })
    });
    group.bench_function("contains_each (prefetched)", |b| {
        b.iter(|| {
            chain.contains_each(&present, |hit| {
                black_box(hit);
            })
        })
    });
    group.finish();

    let mut big = Chain::new(100_000_000, 0.01, 2, false, u64::MAX).unwrap();
    let mut group = c.benchmark_group("link/100M batch");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut round = 0;
    group.bench_function("add one by one", |b| {
        b.iter_batched(
            || {
                round += 1;
                (0..BATCH)
                    .map(|i| HashPair::wide(&item(&format!("a{round}"), i)))
                    .collect::<Vec<_>>()
            },
            |pairs| {
                for p in pairs {
                    black_box(big.add(p, u64::MAX));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("add_each (prefetched)", |b| {
        b.iter_batched(
            || {
                round += 1;
                (0..BATCH)
                    .map(|i| HashPair::wide(&item(&format!("b{round}"), i)))
                    .collect::<Vec<_>>()
            },
            |pairs| {
                big.add_each(&pairs, u64::MAX, |outcome| {
                    black_box(outcome);
                    true
                })
            },
            BatchSize::LargeInput,
        )
    });
    let probes: Vec<HashPair> = (0..BATCH).map(|i| HashPair::wide(&item("a1", i))).collect();
    group.bench_function("contains one by one", |b| {
        b.iter(|| {
            for &p in &probes {
                black_box(big.contains(p));
            }
        })
    });
    group.bench_function("contains_each (prefetched)", |b| {
        b.iter(|| {
            big.contains_each(&probes, |hit| {
                black_box(hit);
            })
        })
    });
    group.finish();
}

fn cuckoo(c: &mut Criterion) {
    let params = CuckooParams {
        capacity: 10_000_000,
        ..CuckooParams::default()
    };
    let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
    for i in 0..1_000_000 {
        filter
            .insert(&CuckooHash::new(&item("fill", i)), u64::MAX)
            .unwrap();
    }
    let present: Vec<CuckooHash> = (0..BATCH)
        .map(|i| CuckooHash::new(&item("fill", i)))
        .collect();
    let mut group = c.benchmark_group("cuckoo/10M");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("lookup", |b| {
        b.iter(|| {
            for h in &present {
                black_box(filter.contains(h));
            }
        })
    });
    let mut round = 0;
    group.bench_function("insert + delete", |b| {
        b.iter_batched(
            || {
                round += 1;
                (0..BATCH)
                    .map(|i| CuckooHash::new(&item(&format!("c{round}"), i)))
                    .collect::<Vec<_>>()
            },
            |hashes| {
                for h in &hashes {
                    filter.insert(h, u64::MAX).unwrap();
                }
                for h in &hashes {
                    black_box(filter.delete(h));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn counting(c: &mut Criterion) {
    let mut filter = CountingChain::new(10_000_000, 0.01, 2, true, u64::MAX).unwrap();
    for i in 0..1_000_000 {
        let pair = filter.hash(&item("fill", i));
        filter.add(pair, u64::MAX);
    }
    let mut group = c.benchmark_group("counting/10M");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut round = 0;
    group.bench_function("add + delete", |b| {
        b.iter_batched(
            || {
                round += 1;
                (0..BATCH)
                    .map(|i| HashPair::wide(&item(&format!("d{round}"), i)))
                    .collect::<Vec<_>>()
            },
            |pairs| {
                for &p in &pairs {
                    black_box(filter.add(p, u64::MAX));
                }
                for &p in &pairs {
                    black_box(filter.delete(p));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn quick() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = quick();
    targets = hashing, bloom_links, chain_and_batches, cuckoo, counting
}
criterion_main!(benches);
