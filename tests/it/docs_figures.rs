//! Figures of the docs that no transcript shows, checked against their source: the sizing
//! tables of docs/sketches.md against a real server (Redis 7.0.15, where they were
//! measured; on other servers the formula only), and the differential fuzz run's counts in
//! docs/differences.md against the runs' committed summaries.

use crate::support::{server_binary, Server};
use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The body rows of the table that follows `caption` in `markdown`, as cells.
fn table_after(markdown: &str, caption: &str) -> Vec<Vec<String>> {
    let at = markdown
        .find(caption)
        .unwrap_or_else(|| panic!("no {caption:?}"));
    markdown[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn number(cell: &str) -> u64 {
    let digits: String = cell
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell:?}"))
}

/// The key `m`'s own overhead in MEMORY USAGE on Redis 7.0.15 (docs/sketches.md).
const KEY_M_OVERHEAD: u64 = 32;

#[test]
fn sketch_sizing_tables_are_what_the_server_reports() {
    let sketches = read("docs/sketches.md");
    // (caption, command for a row, the module's figure for a row)
    type Row = fn(&[String]) -> (String, u64);
    let tables: [(&str, Row); 4] = [
        ("| error | probability |", |row| {
            let (w, d) = row[2].split_once('×').unwrap();
            let counters = number(w) * number(d);
            (
                format!("CMS.INITBYPROB m {} {}", row[0], row[1]),
                8 + 8 * counters,
            )
        }),
        // Each cell size at 2,000 × 7 counters: RedisBloom's 8 + 8 per counter for 4 bytes,
        // 8 + the counters' bytes for the others.
        ("| CELL_SIZE | largest counter |", |row| {
            let size = number(&row[0]);
            let counters = 2000 * 7;
            assert_eq!(number(&row[2]), size * counters, "{row:?}");
            let per_counter = if size == 4 { 8 } else { size };
            (
                format!("CMS.INITBYPROB m 0.001 0.01 CELL_SIZE {size}"),
                8 + per_counter * counters,
            )
        }),
        ("| k | width × depth |", |row| {
            let (w, d) = row[1].split_once('×').unwrap();
            let (k, buckets) = (number(&row[0]), number(w) * number(d));
            let command = if row[1].contains("defaults") {
                format!("TOPK.RESERVE m {k}")
            } else {
                format!("TOPK.RESERVE m {k} {} {} 0.9", number(w), number(d))
            };
            (command, 2088 + 8 * buckets + 24 * k)
        }),
        ("| compression | capacity (centroids) |", |row| {
            let c = number(&row[0]);
            (
                format!("TDIGEST.CREATE m COMPRESSION {c}"),
                8 + 16 * number(&row[1]),
            )
        }),
    ];
    let measured_here = server_binary() == "redis-server";
    let server = Server::start();
    let mut conn = server.raw();
    let mut rows = 0;
    for (caption, row_of) in tables {
        let table = table_after(&sketches, caption);
        assert!(table.len() >= 4, "{caption}: {table:?}");
        for row in table {
            rows += 1;
            let (command, figure) = row_of(&row);
            let documented = number(row.last().unwrap());
            assert_eq!(documented, figure + KEY_M_OVERHEAD, "{command}: {row:?}");
            if measured_here {
                conn.call(&["DEL", "m"]);
                let args: Vec<&str> = command.split(' ').collect();
                conn.call(&args);
                let usage = conn.call(&["MEMORY", "USAGE", "m"]).int() as u64;
                assert_eq!(usage, documented, "{command}: MEMORY USAGE m");
            }
        }
    }
    assert!(rows >= 18, "{rows} rows");
}

/// One run of the committed fuzz summaries: (differing replies, its kinds).
fn fuzz_runs(summary: &str) -> Vec<(String, u64, BTreeSet<String>)> {
    let mut runs: Vec<(String, u64, BTreeSet<String>)> = Vec::new();
    for line in summary.lines() {
        if line.starts_with("seed ") {
            let (label, rest) = line.split_once(": ").unwrap();
            let differing = rest
                .split(", ")
                .find_map(|part| part.strip_suffix(" differing replies"))
                .unwrap();
            let kinds = rest.rsplit(", ").next().unwrap();
            runs.push((
                label.to_string(),
                differing.parse().unwrap(),
                BTreeSet::new(),
            ));
            let declared: usize = kinds.trim_end_matches(" kinds").parse().unwrap();
            runs.last_mut().unwrap().2.insert(format!("#{declared}"));
        } else if let Some(kind) = line.strip_prefix("  ") {
            let kind = kind.trim_start().split_once("  ").unwrap().1;
            runs.last_mut().unwrap().2.insert(kind.to_string());
        }
    }
    // The declared count (stored as "#n") must equal the kinds listed.
    for (label, _, kinds) in &mut runs {
        let declared = kinds.iter().find(|k| k.starts_with('#')).unwrap().clone();
        kinds.remove(&declared);
        assert_eq!(declared, format!("#{}", kinds.len()), "{label}");
    }
    runs
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_fuzz_figures_of_differences_md_are_the_runs() {
    let runs = fuzz_runs(&read("tests/fixtures/diff-fuzz-redisbloom-8.2.3.txt"));
    let labels: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        labels,
        [
            "seed 2 protocol 2",
            "seed 2 protocol 3",
            "seed 3 protocol 2",
            "seed 3 protocol 3"
        ]
    );
    let total: u64 = runs.iter().map(|r| r.1).sum();
    let all: BTreeSet<&String> = runs.iter().flat_map(|r| &r.2).collect();
    let per_protocol = |p: &str| {
        runs.iter()
            .filter(|r| r.0.ends_with(p))
            .flat_map(|r| &r.2)
            .collect::<BTreeSet<_>>()
            .len()
    };
    assert_eq!(per_protocol("protocol 2"), per_protocol("protocol 3"));
    let list = |values: Vec<String>| {
        format!(
            "{}, {}, {} and {}",
            values[0], values[1], values[2], values[3]
        )
    };
    let expected = format!(
        "{} replies differ — per run (seed 2 RESP2, RESP3; seed 3 RESP2, RESP3) {} replies in {} kinds",
        thousands(total),
        list(runs.iter().map(|r| thousands(r.1)).collect()),
        list(runs.iter().map(|r| r.2.len().to_string()).collect()),
    );
    let together = format!(
        "{} kinds together, {} per protocol",
        all.len(),
        per_protocol("protocol 2")
    );
    // Line breaks of the page are spaces.
    let differences = read("docs/differences.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        differences.contains(&expected),
        "docs/differences.md should say {expected:?}"
    );
    assert!(
        differences.contains(&together),
        "docs/differences.md should say {together:?}"
    );
}
