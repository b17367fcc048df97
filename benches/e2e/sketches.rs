//! The sketch workloads of the end-to-end benchmark: CMS, Top-K and t-digest commands, one
//! item (or value) per command and, for the batch forms, 100. Each runs on RedisBloom too;
//! the targets are redbloom ÷ RedisBloom (issue 38): ≤ 1.0 for every single command and
//! TDIGEST.ADD ×100, ≤ 0.75 for TOPK.ADD ×100.

use super::{encode_into, item, mix, Filter, Generator, Workload};

/// The three sketches, created empty before the rounds (the writes of each round fill
/// them; the reads after them, in table order, find what they wrote).
pub fn filters() -> Vec<Filter> {
    let sketch = |key, create| Filter::empty(key, create, true);
    vec![
        sketch("cms", "CMS.INITBYDIM cms 2000 5"),
        sketch("topk", "TOPK.RESERVE topk 100 2000 7 0.925"),
        sketch("topku", "TOPK.RESERVE topku 100 2000 7 0.925"),
        sketch("td", "TDIGEST.CREATE td"),
    ]
}

/// A skewed item for the Top-K (small numbers far more often than large ones, so it has
/// heavy hitters to keep, and most adds find the item in the heap). "TOPK.ADD×100
/// uniform" adds distinct items instead (to its own sketch): nearly every add then finds
/// no bucket of its own and the item in no heap entry.
fn skewed(i: u64, out: &mut Vec<u8>) {
    let x = mix(i);
    text_item(x % (1 + (x >> 32) % 10_000), out);
}

/// `topk:<n>`: text, as an expelled item comes back as a simple string from RedisBloom
/// 2.4.20, which writes it as it is (a CR or LF in it breaks the reply on Redis 8.2.3).
fn text_item(n: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(format!("topk:{n}").as_bytes());
}

/// A value for the t-digest: a decimal in 0..1000000.
fn value(i: u64) -> String {
    (mix(i) % 1_000_000).to_string()
}

fn workload(
    name: &'static str,
    filter: &'static str,
    baseline: &'static str,
    reference_target: f64,
    ops: u64,
    items_per_op: u64,
    make: Box<dyn Fn(u64) -> Generator<'static>>,
) -> Workload {
    Workload {
        name,
        filter: Some(filter),
        baseline: Some((baseline, None)),
        reference_target: Some(reference_target),
        on_reference: true,
        prepare: None,
        ops,
        items_per_op,
        make,
    }
}

/// TOPK.ADD of 100 items per command into `key` (`nb` commands a round), item `i` of the
/// run written by `make_item`.
fn topk_add_100(
    name: &'static str,
    key: &'static str,
    nb: u64,
    make_item: fn(u64, &mut Vec<u8>),
) -> Workload {
    workload(
        name,
        key,
        "SETBIT",
        0.75,
        nb,
        100,
        Box::new(move |r| {
            let mut items: Vec<Vec<u8>> = vec![Vec::new(); 100];
            Box::new(move |i, out: &mut Vec<u8>| {
                for (j, it) in items.iter_mut().enumerate() {
                    make_item((r * nb + i) * 100 + j as u64, it);
                }
                let mut args: Vec<&[u8]> = vec![b"TOPK.ADD", key.as_bytes()];
                args.extend(items.iter().map(Vec::as_slice));
                encode_into(out, &args);
            })
        }),
    )
}

/// The workloads: `n` commands per single-item workload, `nb` per batch of 100.
pub fn workloads(n: u64, nb: u64) -> Vec<Workload> {
    vec![
        workload(
            "CMS.INCRBY",
            "cms",
            "SETBIT",
            1.0,
            n,
            1,
            Box::new(move |r| {
                let mut it = Vec::new();
                Box::new(move |i, out: &mut Vec<u8>| {
                    item(b"cms:", (r * n + i) % 100_000, &mut it);
                    encode_into(out, &[b"CMS.INCRBY".as_slice(), b"cms", &it, b"1"]);
                })
            }),
        ),
        workload(
            "CMS.QUERY",
            "cms",
            "GETBIT",
            1.0,
            n,
            1,
            Box::new(|_| {
                let mut it = Vec::new();
                Box::new(move |i, out: &mut Vec<u8>| {
                    item(b"cms:", mix(i) % 200_000, &mut it);
                    encode_into(out, &[b"CMS.QUERY".as_slice(), b"cms", &it]);
                })
            }),
        ),
        workload(
            "TOPK.ADD",
            "topk",
            "SETBIT",
            1.0,
            n,
            1,
            Box::new(move |r| {
                let mut it = Vec::new();
                Box::new(move |i, out: &mut Vec<u8>| {
                    skewed(r * n + i, &mut it);
                    encode_into(out, &[b"TOPK.ADD".as_slice(), b"topk", &it]);
                })
            }),
        ),
        workload(
            "TOPK.QUERY",
            "topk",
            "GETBIT",
            1.0,
            n,
            1,
            Box::new(|_| {
                let mut it = Vec::new();
                Box::new(move |i, out: &mut Vec<u8>| {
                    skewed(i, &mut it);
                    encode_into(out, &[b"TOPK.QUERY".as_slice(), b"topk", &it]);
                })
            }),
        ),
        topk_add_100("TOPK.ADD×100", "topk", nb, skewed),
        topk_add_100("TOPK.ADD×100 uniform", "topku", nb, |i, it| {
            text_item(mix(i), it)
        }),
        workload(
            "TDIGEST.ADD",
            "td",
            "SETBIT",
            1.0,
            n,
            1,
            Box::new(move |r| {
                Box::new(move |i, out: &mut Vec<u8>| {
                    let v = value(r * n + i);
                    encode_into(out, &[b"TDIGEST.ADD".as_slice(), b"td", v.as_bytes()]);
                })
            }),
        ),
        workload(
            "TDIGEST.ADD×100",
            "td",
            "SETBIT",
            1.0,
            nb,
            100,
            Box::new(move |r| {
                Box::new(move |i, out: &mut Vec<u8>| {
                    let values: Vec<String> =
                        (0..100).map(|j| value((r * nb + i) * 100 + j)).collect();
                    let mut args: Vec<&[u8]> = vec![b"TDIGEST.ADD", b"td"];
                    args.extend(values.iter().map(|v| v.as_bytes()));
                    encode_into(out, &args);
                })
            }),
        ),
        workload(
            "TDIGEST.QUANTILE",
            "td",
            "GETBIT",
            1.0,
            n,
            1,
            Box::new(|_| {
                Box::new(move |i, out: &mut Vec<u8>| {
                    let q = format!("0.{:03}", mix(i) % 1000);
                    encode_into(out, &[b"TDIGEST.QUANTILE".as_slice(), b"td", q.as_bytes()]);
                })
            }),
        ),
    ]
}
