//! The expandable filter's workloads of the end-to-end benchmark (issue 47): `XF.EXISTS`
//! and `XF.MEXISTS` ×100 on filters grown from 100 items to 10^3 .. 10^7 items (1 %),
//! beside the filters users grow when the size is unknown, on the same server in the same
//! rounds: the auto-grown Bloom filter (`BF.RESERVE 0.01 100`, what `BF.ADD` creates:
//! capacity 100, expansion 2, a chain of links) and the Cuckoo filter with expansion
//! (`CF.RESERVE 1024 EXPANSION 2`). Every query is of an item the filter holds (item `i`
//! of a round is `fill:(i mod size)`), so sizes compare like with like. [`report`] prints
//! per size the server CPU per item of each and the medians of the per-round ratios
//! XF ÷ BF and XF ÷ CF (target: ≤ 0.8× the auto-grown BF at 10^6), XF's flatness (its CPU
//! per item at each size ÷ at 10^6; target within ±20 % from 10^3 to 10^7) and the bits
//! per item of each filter. redbloom only (RedisBloom has no XF). `E2E_XF_MAX` (default
//! 10000000) caps the largest size; `E2E_XF_MAX=100000000` adds 10^8 items (XF ≈ 200 MB,
//! the auto-grown BF ≈ 485 MB, the grown CF ≈ 210 MB; filling them takes minutes).
//!
//! **Floors.** The same rounds measure what a lookup costs without the lookup: Redis' own
//! `EXISTS` on a key, `XF.CARD` (a module command that opens the key, checks its type and
//! answers an integer), and `XF.EXISTS` / `BF.EXISTS` (single and ×100) on a filter holding
//! one item (XF: one partition; BF: one link). The report sets them beside the 10^6
//! filters: what XF's lookup adds to the floor is what the code can cut.

use super::{encode_into, item, Filter, Generator, RawConnection, Reply, Sample, Target};
use super::{median, Workload};

/// The sizes, with their labels.
fn sizes() -> Vec<(u64, &'static str)> {
    let max: u64 = super::env_or("E2E_XF_MAX", 10_000_000);
    [
        (1_000, "1K"),
        (10_000, "10K"),
        (100_000, "100K"),
        (1_000_000, "1M"),
        (10_000_000, "10M"),
        (100_000_000, "100M"),
    ]
    .into_iter()
    .filter(|&(n, _)| n <= max)
    .collect()
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The three filters of a size: (key prefix, creation, fill command).
const KINDS: [(&str, &str, &str); 3] = [
    ("xf", "XF.RESERVE {key} 0.01", "XF.MADD"),
    ("bfauto", "BF.RESERVE {key} 0.01 100", "BF.MADD"),
    ("cfgrow", "CF.RESERVE {key} 1024 EXPANSION 2", "CF.INSERT"),
];

/// The kinds measured at `size`: all three, but at 10^8 XF alone unless
/// `E2E_XF_100M_ALL=1` (the auto-grown BF's fill alone then takes many minutes).
fn kinds(size: u64) -> usize {
    if size >= 100_000_000 && super::env_or("E2E_XF_100M_ALL", 0) == 0 {
        1
    } else {
        KINDS.len()
    }
}

fn key(kind: &str, label: &str) -> &'static str {
    leak(format!("{kind}{label}"))
}

/// The floors' filters: one item each (`fill:0`).
const FLOOR_FILTERS: [(&str, &str); 2] = [
    ("xffloor", "XF.RESERVE xffloor 0.01"),
    ("bffloor", "BF.RESERVE bffloor 0.01 100"),
];

/// Plain strings of 2 MB and 200 MB (XF's sizes at 10^6 and 10^8 items): `GETBIT` at a
/// random offset in them is the server's floor plus one random cache line of that much
/// memory (its TLB miss included), `GETBIT` of one bit over and over the floor alone.
const LINE_STRINGS: [(&str, &str, u64); 2] = [
    ("xfline2m", "SETBIT xfline2m 16777215 1", 16_777_216),
    (
        "xfline200m",
        "SETBIT xfline200m 1677721599 1",
        1_677_721_600,
    ),
];

/// The random-line floors: (name, key, bits: 0 for one bit over and over).
const LINE_FLOORS: [(&str, &str, u64); 3] = [
    ("XF. floor: GETBIT one bit (cached)", "xfline2m", 0),
    (
        "XF. floor: GETBIT random line of 2 MB",
        "xfline2m",
        16_777_216,
    ),
    (
        "XF. floor: GETBIT random line of 200 MB",
        "xfline200m",
        1_677_721_600,
    ),
];

/// The floors: (name, key, command, items per command). The last two ask the 10^6
/// filters for one item over and over: the lookup's work with its lines in the cache, so
/// that what the 10^6 lookups cost above it is their waiting for memory.
const FLOORS: [(&str, &str, &[u8], u64); 8] = [
    ("XF. floor: EXISTS (Redis' own)", "xffloor", b"EXISTS", 0),
    ("XF. floor: XF.CARD (no lookup)", "xffloor", b"XF.CARD", 0),
    ("XF. floor: XF.EXISTS 1 item", "xffloor", b"XF.EXISTS", 1),
    ("XF. floor: BF.EXISTS 1 link", "bffloor", b"BF.EXISTS", 1),
    (
        "XF. floor: XF.MEXISTS×100 1 item",
        "xffloor",
        b"XF.MEXISTS",
        100,
    ),
    (
        "XF. floor: BF.MEXISTS×100 1 link",
        "bffloor",
        b"BF.MEXISTS",
        100,
    ),
    (
        "XF. floor: XF.EXISTS 1M, one item (cached)",
        "xf1M",
        b"XF.EXISTS",
        1,
    ),
    (
        "XF. floor: BF.EXISTS auto-grown 1M, one item (cached)",
        "bfauto1M",
        b"BF.EXISTS",
        1,
    ),
];

/// Every size's three filters, filled with `fill:0..size` (not scaled), and the floors'.
pub fn filters() -> Vec<Filter> {
    let mut out: Vec<Filter> = FLOOR_FILTERS
        .iter()
        .map(|&(key, create)| Filter {
            key,
            create,
            fill_command: if key.starts_with("xf") {
                "XF.MADD"
            } else {
                "BF.MADD"
            },
            fill: 1,
            fill_scales: false,
            count: None,
            on_reference: false,
        })
        .collect();
    out.extend(
        LINE_STRINGS
            .iter()
            .map(|&(key, create, _)| Filter::empty(key, create, false)),
    );
    for (n, label) in sizes() {
        for &(kind, create, fill) in &KINDS[..kinds(n)] {
            let key = key(kind, label);
            out.push(Filter {
                key,
                create: leak(create.replace("{key}", key)),
                fill_command: fill,
                fill: n,
                fill_scales: false,
                count: None,
                on_reference: false,
            });
        }
    }
    out
}

/// The workload names of a size: (XF, BF, CF) for single lookups and for batches.
fn names(label: &str) -> [[&'static str; 3]; 2] {
    [
        [
            leak(format!("XF.EXISTS {label}")),
            leak(format!("BF.EXISTS auto-grown {label}")),
            leak(format!("CF.EXISTS grown {label}")),
        ],
        [
            leak(format!("XF.MEXISTS×100 {label}")),
            leak(format!("BF.MEXISTS×100 auto-grown {label}")),
            leak(format!("CF.MEXISTS×100 grown {label}")),
        ],
    ]
}

/// Queries of items the filter holds: `per_op` items per command from `fill:0..size`,
/// a different stretch each round.
fn present(
    command: &'static [u8],
    key: &'static str,
    size: u64,
    per_op: u64,
) -> Box<dyn Fn(u64) -> Generator<'static>> {
    Box::new(move |r: u64| {
        let mut items: Vec<Vec<u8>> = vec![Vec::new(); per_op as usize];
        Box::new(move |i, out: &mut Vec<u8>| {
            for (j, it) in items.iter_mut().enumerate() {
                let n = (r * 7_919 + i * per_op + j as u64) % size;
                item(b"fill:", n, it);
            }
            let mut args: Vec<&[u8]> = vec![command, key.as_bytes()];
            args.extend(items.iter().map(Vec::as_slice)); // none: a key-only command
            encode_into(out, &args);
        }) as Generator<'static>
    })
}

/// Per size: XF, the auto-grown BF and the grown CF, singles and ×100 batches; XF's
/// baseline is the BF of the same size (target ≤ 0.8 at 10^6), the others' GETBIT.
pub fn workloads(n: u64, nb: u64) -> Vec<Workload> {
    // A floor: measured beside GETBIT, on redbloom only.
    let floor = |name, key, ops, items_per_op, make| Workload {
        name,
        filter: Some(key),
        baseline: Some(("GETBIT", None)),
        reference_target: None,
        on_reference: false,
        prepare: None,
        ops,
        items_per_op,
        make,
    };
    let mut out: Vec<Workload> = FLOORS
        .iter()
        .map(|&(name, key, command, per_op)| {
            let ops = if per_op == 100 { nb } else { n };
            floor(
                name,
                key,
                ops,
                per_op.max(1),
                present(command, key, 1, per_op),
            )
        })
        .collect();
    out.extend(LINE_FLOORS.iter().map(|&(name, key, bits)| {
        let make: Box<dyn Fn(u64) -> Generator<'static>> = Box::new(move |r: u64| {
            Box::new(move |i, out: &mut Vec<u8>| {
                let offset = if bits == 0 {
                    0
                } else {
                    super::mix(r << 40 | i) % bits
                };
                let offset = offset.to_string();
                encode_into(
                    out,
                    &[b"GETBIT".as_slice(), key.as_bytes(), offset.as_bytes()],
                );
            }) as Generator<'static>
        });
        floor(name, key, n, 1, make)
    }));
    for (size, label) in sizes() {
        let [singles, batches] = names(label);
        for (names, per_op, ops, commands) in [
            (
                singles,
                1,
                n,
                [b"XF.EXISTS".as_slice(), b"BF.EXISTS", b"CF.EXISTS"],
            ),
            (
                batches,
                100,
                nb,
                [b"XF.MEXISTS".as_slice(), b"BF.MEXISTS", b"CF.MEXISTS"],
            ),
        ] {
            let kinds = kinds(size);
            for (i, (kind, _, _)) in KINDS[..kinds].iter().enumerate() {
                let target = (i == 0 && size == 1_000_000).then_some(0.8);
                out.push(Workload {
                    name: names[i],
                    filter: Some(key(kind, label)),
                    baseline: Some(if i == 0 && kinds > 1 {
                        (names[1], target)
                    } else {
                        ("GETBIT", None)
                    }),
                    reference_target: None,
                    on_reference: false,
                    prepare: None,
                    ops,
                    items_per_op: per_op,
                    make: present(commands[i], key(kind, label), size, per_op),
                });
            }
        }
    }
    out
}

fn memory(conn: &mut RawConnection, key: &str) -> Option<i64> {
    match conn.call(&["MEMORY", "USAGE", key]) {
        Reply::Int(n) => Some(n),
        _ => None,
    }
}

/// The per-round ratios of workload `a` ÷ workload `b` on redbloom: (median, min, max).
fn ratios(samples: &[Vec<Sample>], a: usize, b: usize) -> (f64, f64, f64) {
    let r: Vec<f64> = samples[a]
        .iter()
        .zip(&samples[b])
        .map(|(x, y)| x.cpu_ns_per_item / y.cpu_ns_per_item)
        .collect();
    let min = r.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = r.iter().cloned().fold(0.0, f64::max);
    (median(r), min, max)
}

/// The tables: CPU per item and ratios per size, XF's flatness, bits per item.
pub fn report(
    targets: &mut [Target],
    selected: &[&Workload],
    samples: &[Vec<Vec<Sample>>],
    rounds: usize,
) {
    let index = |name: &str| selected.iter().position(|w| w.name == name);
    let sizes: Vec<(u64, &str)> = sizes()
        .into_iter()
        .filter(|(_, label)| names(label).iter().all(|n| index(n[0]).is_some()))
        .collect();
    if sizes.is_empty() {
        floors(selected, &samples[0], rounds);
        return;
    }
    let s = &samples[0];
    let cpu = |w: usize| median(s[w].iter().map(|x| x.cpu_ns_per_item).collect());
    for (kind, which) in [("single lookups", 0), ("×100 batches", 1)] {
        println!();
        println!(
            "expandable filter, {kind}: server CPU per item (ns, median of {rounds} rounds) and the medians of the per-round ratios (min – max); every filter grown from 100 items (XF.RESERVE 0.01, BF.RESERVE 0.01 100, CF.RESERVE 1024 EXPANSION 2):"
        );
        println!();
        println!("| items | XF | BF auto-grown | CF grown | XF ÷ BF | XF ÷ CF | XF ÷ XF at 1M |");
        println!("|---:|---:|---:|---:|---:|---:|---:|");
        let at_1m = sizes
            .iter()
            .find(|(n, _)| *n == 1_000_000)
            .and_then(|(_, label)| index(names(label)[which][0]));
        for &(_, label) in &sizes {
            let w = names(label)[which].map(index);
            let xf = w[0].unwrap();
            let ratio = |other: Option<usize>| {
                other.map_or("—".to_string(), |o| {
                    let (r, lo, hi) = ratios(s, xf, o);
                    format!("{r:.2} ({lo:.2} – {hi:.2})")
                })
            };
            let ns = |w: Option<usize>| w.map_or("—".to_string(), |w| format!("{:.1}", cpu(w)));
            println!(
                "| {label} | {} | {} | {} | {} | {} | {} |",
                ns(w[0]),
                ns(w[1]),
                ns(w[2]),
                ratio(w[1]),
                ratio(w[2]),
                ratio(at_1m),
            );
        }
    }
    floors(selected, s, rounds);
    println!();
    println!("bits per item (MEMORY USAGE × 8 ÷ items) of the filters above:");
    println!();
    println!("| items | XF | BF auto-grown | CF grown |");
    println!("|---:|---:|---:|---:|");
    let conn = &mut targets[0].conn;
    for &(n, label) in &sizes {
        let bits: Vec<String> = KINDS
            .iter()
            .map(|(kind, _, _)| {
                memory(conn, key(kind, label)).map_or("—".to_string(), |b| {
                    format!("{:.1}", b as f64 * 8.0 / n as f64)
                })
            })
            .collect();
        println!("| {label} | {} | {} | {} |", bits[0], bits[1], bits[2]);
    }
}

/// The floors' table: each floor's CPU per item and its per-round ratios to XF and to the
/// auto-grown BF at 10^6 (singles to singles, batches to batches).
fn floors(selected: &[&Workload], s: &[Vec<Sample>], rounds: usize) {
    let index = |name: &str| selected.iter().position(|w| w.name == name);
    let line_floors = LINE_FLOORS.map(|(name, key, _)| (name, key, b"GETBIT".as_slice(), 1));
    let present: Vec<_> = FLOORS
        .iter()
        .chain(&line_floors)
        .filter_map(|f| index(f.0).map(|i| (f, i)))
        .collect();
    if present.is_empty() {
        return;
    }
    let [singles, batches] = names("1M");
    println!();
    println!(
        "floors of a lookup (same rounds): server CPU per item (ns, median of {rounds} rounds) and the medians of the per-round ratios to XF and to the auto-grown BF at 10^6:"
    );
    println!();
    println!("| floor | CPU ns/item | ÷ XF at 1M | ÷ BF auto-grown at 1M |");
    println!("|---|---:|---:|---:|");
    for (&(name, _, _, per_op), w) in present {
        let at_1m = if per_op == 100 { batches } else { singles };
        let cpu = median(s[w].iter().map(|x| x.cpu_ns_per_item).collect());
        let ratio = |other: &str| {
            index(other).map_or("—".to_string(), |o| {
                let (r, lo, hi) = ratios(s, w, o);
                format!("{r:.2} ({lo:.2} – {hi:.2})")
            })
        };
        println!(
            "| {} | {cpu:.1} | {} | {} |",
            name.trim_start_matches("XF. floor: "),
            ratio(at_1m[0]),
            ratio(at_1m[1])
        );
    }
    // What one random line costs the server, beside the ±20 % band around XF at 10^6.
    let cpu =
        |name: &str| index(name).map(|w| median(s[w].iter().map(|x| x.cpu_ns_per_item).collect()));
    if let (Some(one), Some(line), Some(hot), Some(xf)) = (
        cpu(LINE_FLOORS[0].0),
        cpu(LINE_FLOORS[2].0),
        cpu(FLOORS[6].0),
        cpu(singles[0]),
    ) {
        println!();
        println!(
            "one random line of 200 MB costs the server {:.0} ns (GETBIT there ÷ GETBIT of one bit); XF.EXISTS at 10^8 reads at least one: ≥ {:.0} ns (its cached lookup at 10^6 + that line) = {:.2}× its cost at 10^6 (the band: ≤ 1.20×)",
            line - one,
            hot + line - one,
            (hot + line - one) / xf
        );
        let (alone, overlapped) = random_lines(200 << 20);
        println!(
            "random loads over 200 MB in this process (the client's core): {alone:.0} ns each one after another, {overlapped:.0} ns each with {CHAINS} in flight (the best overlap a batch can reach)"
        );
    }
}

/// Independent chains of random loads a batch could overlap at most.
const CHAINS: usize = 32;

/// Nanoseconds per load of a random cache line of a `bytes` buffer: one chain of dependent
/// loads, then [`CHAINS`] chains stepped in turn.
fn random_lines(bytes: usize) -> (f64, f64) {
    let lines = bytes / 64;
    // One cycle through every line (Sattolo's shuffle), a pointer per line.
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % i as u64) as usize);
    }
    let mut next = vec![0u64; lines * 8];
    for i in 0..lines {
        next[order[i] as usize * 8] = u64::from(order[(i + 1) % lines]) * 8;
    }
    let time = |chains: usize| {
        let steps = 2_000_000 / chains;
        let mut at: Vec<u64> = (0..chains)
            .map(|c| u64::from(order[c * lines / chains]) * 8)
            .collect();
        let start = std::time::Instant::now();
        for _ in 0..steps {
            for p in at.iter_mut() {
                *p = next[*p as usize];
            }
        }
        std::hint::black_box(&at);
        start.elapsed().as_nanos() as f64 / (steps * chains) as f64
    };
    (time(1), time(CHAINS))
}
