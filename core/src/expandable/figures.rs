//! The measurement behind docs/xf.md's figures and chart (an ignored release test):
//!
//! ```text
//! cargo test --release -p redbloom-core --lib xf_growth_figures -- --ignored --nocapture
//! ```
//!
//! XF grown from its default capacity (100), the auto-grown Bloom filter BF.ADD makes (a
//! chain from 100 items, expansion 2) and a Cuckoo filter with expansion 2 (capacity 1024
//! at first, as `CF.RESERVE key 1024 EXPANSION 2` makes) take the same items, at 1 % and
//! 0.1 %. Every ~2 % of growth: each one's memory (bits per item of what MEMORY USAGE reports) and XF's FP
//! bound; at each decade: the false-positive rate measured on 1M absent items and XF's
//! ns per lookup (the median of 5 rounds of 100k lookups, half present, half absent,
//! interleaved with the Bloom filter's). `XF_FIGURES_MAX` sets the largest size (10^7 by
//! default); `XF_FIGURES_DIR` where the CSV files and the SVG chart go (docs/sizing).

use super::{XFilter, XfParams};
use crate::bloom::Chain;
use crate::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
use std::fmt::Write as _;
use std::time::Instant;

const PROBES: u64 = 1_000_000;
const ABSENT: u64 = 1 << 62;

struct Sample {
    items: u64,
    xf: f64,
    bf: f64,
    cf: f64,
    bound: f64,
}

struct Decade {
    items: u64,
    xf_bits: f64,
    xf_avg: f64,
    xf_worst: f64,
    xf_fp: f64,
    bound: f64,
    bf_bits: f64,
    bf_fp: f64,
    cf_bits: f64,
    cf_fp: f64,
    xf_ns: f64,
    bf_ns: f64,
}

fn item(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

fn bits(bytes: u64, items: u64) -> f64 {
    bytes as f64 * 8.0 / items as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ns per lookup of XF and BF over the same keys: 5 interleaved rounds, medians.
fn lookup_ns(xf: &XFilter, bf: &Chain, n: u64) -> (f64, f64) {
    const LOOKUPS: u64 = 100_000;
    let keys: Vec<[u8; 8]> = (0..LOOKUPS)
        .map(|k| {
            let k = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            item(if k % 2 == 0 { k % n } else { ABSENT + k })
        })
        .collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let hits = keys
            .iter()
            .filter(|k| xf.contains(XFilter::hash(&k[..])))
            .count();
        a.push(t.elapsed().as_nanos() as f64 / LOOKUPS as f64);
        let t = Instant::now();
        let hits2 = keys.iter().filter(|k| bf.contains(bf.hash(&k[..]))).count();
        b.push(t.elapsed().as_nanos() as f64 / LOOKUPS as f64);
        assert!(hits >= LOOKUPS as usize / 2 && hits2 >= LOOKUPS as usize / 2);
    }
    (median(a), median(b))
}

fn run(rate: f64, max: u64) -> (Vec<Sample>, Vec<Decade>) {
    let mut xf = XFilter::new(
        XfParams {
            error_rate: rate,
            initial_capacity: 100,
        },
        u64::MAX,
    )
    .expect("xf");
    let mut bf = Chain::new(100, rate, 2, true, u64::MAX).expect("bf");
    let mut cf = CuckooFilter::new(
        CuckooParams {
            expansion: 2,
            ..CuckooParams::default()
        },
        u64::MAX,
    )
    .expect("cf");
    let (mut samples, mut decades) = (Vec::new(), Vec::new());
    let mut next_sample = 100u64;
    let mut next_decade = 100u64;
    let mut since_decade: Vec<f64> = Vec::new();
    for n in 1..=max {
        let it = item(n - 1);
        xf.insert(XFilter::hash(&it), u64::MAX).expect("xf insert");
        bf.add(bf.hash(&it), u64::MAX);
        cf.insert(&CuckooHash::new(&it), u64::MAX)
            .expect("cf insert");
        if n >= next_sample {
            let s = Sample {
                items: n,
                xf: bits(xf.memory_bytes() as u64, n),
                bf: bits(bf.mem_usage(), n),
                cf: bits(cf.mem_usage(), n),
                bound: xf.fp_bound(),
            };
            assert!(s.bound <= rate, "bound {} at {n}", s.bound);
            since_decade.push(s.xf);
            samples.push(s);
            next_sample = (n as f64 * 1.02).ceil() as u64;
        }
        if n == next_decade {
            let fp = |f: &dyn Fn(&[u8]) -> bool| {
                (0..PROBES).filter(|&k| f(&item(ABSENT + k))).count() as f64 / PROBES as f64
            };
            let (xf_ns, bf_ns) = lookup_ns(&xf, &bf, n);
            let worst = since_decade.iter().copied().fold(0.0, f64::max);
            let avg = since_decade.iter().sum::<f64>() / since_decade.len() as f64;
            let d = Decade {
                items: n,
                xf_bits: bits(xf.memory_bytes() as u64, n),
                xf_avg: avg,
                xf_worst: worst,
                xf_fp: fp(&|k| xf.contains(XFilter::hash(k))),
                bound: xf.fp_bound(),
                bf_bits: bits(bf.mem_usage(), n),
                bf_fp: fp(&|k| bf.contains(bf.hash(k))),
                cf_bits: bits(cf.mem_usage(), n),
                cf_fp: fp(&|k| cf.contains(&CuckooHash::new(k))),
                xf_ns,
                bf_ns,
            };
            println!(
                "{rate} {n:>10}: XF {:.2} b/i (avg {:.2} worst {:.2} since the last decade) fp {:.4}% bound {:.4}% {:.0} ns | BF {:.2} b/i fp {:.4}% {:.0} ns | CF {:.2} b/i fp {:.4}%",
                d.xf_bits, d.xf_avg, d.xf_worst, d.xf_fp * 100.0, d.bound * 100.0, d.xf_ns,
                d.bf_bits, d.bf_fp * 100.0, d.bf_ns, d.cf_bits, d.cf_fp * 100.0
            );
            since_decade.clear();
            since_decade.push(d.xf_bits);
            decades.push(d);
            next_decade *= 10;
        }
    }
    (samples, decades)
}

/// A log-x chart of bits per item against items for both rates (SVG, hand-drawn).
fn chart(runs: &[(f64, Vec<Sample>, Vec<Decade>)], max: u64) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 520.0, 70.0, 220.0, 40.0, 60.0);
    let total_h = h + 300.0;
    let (x0, x1) = (2.0f64, (max as f64).log10());
    let y1 = 64.0;
    let px = |n: u64| left + ((n as f64).log10() - x0) / (x1 - x0) * (w - left - right);
    let py = |b: f64| top + (1.0 - b.min(y1) / y1) * (h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{total_h}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="22" text-anchor="middle" font-size="15">Memory per item as filters grow from 100 items (MEMORY USAGE × 8 / items)</text>
"#,
        (w - right + left) / 2.0
    );
    for b in (0..=64).step_by(8) {
        let y = py(f64::from(b));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{b}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0
        );
    }
    let mut d = 100u64;
    while d <= max {
        let x = px(d);
        let _ = writeln!(
            s,
            r##"<line x1="{x}" x2="{x}" y1="{top}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">10^{}</text>"##,
            h - bottom,
            h - bottom + 18.0,
            (d as f64).log10().round()
        );
        d *= 10;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">items</text><text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">bits per item</text>"#,
        (w - right + left) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    let mut legend = 0.0;
    let mut line = |s: &mut String, pts: &[(u64, f64)], color: &str, dash: &str, label: &str| {
        let path: Vec<String> = pts
            .iter()
            .map(|&(n, b)| format!("{:.1},{:.1}", px(n), py(b)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            path.join(" ")
        );
        let y = top + 10.0 + legend;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{label}</text>"#,
            w - right + 10.0,
            w - right + 40.0,
            w - right + 46.0,
            y + 4.0
        );
        legend += 20.0;
    };
    for (rate, samples, _) in runs {
        let dash = if *rate < 0.005 { "6,3" } else { "" };
        let pct = rate * 100.0;
        line(
            &mut s,
            &samples.iter().map(|x| (x.items, x.xf)).collect::<Vec<_>>(),
            "#1f77b4",
            dash,
            &format!("XF at {pct} %"),
        );
        line(
            &mut s,
            &samples.iter().map(|x| (x.items, x.bf)).collect::<Vec<_>>(),
            "#d62728",
            dash,
            &format!("BF auto-grown, {pct} %"),
        );
    }
    if let Some((_, samples, _)) = runs.first() {
        line(
            &mut s,
            &samples.iter().map(|x| (x.items, x.cf)).collect::<Vec<_>>(),
            "#2ca02c",
            "",
            "CF, expansion 2",
        );
    }
    fp_panel(
        &mut s,
        runs,
        (left, w - right, h + 20.0, total_h - 50.0),
        &px,
    );
    for (b, label) in [(23.0, "target: 23 average"), (30.0, "30 worst")] {
        let y = py(b);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y}" y2="{y}" stroke="#888" stroke-dasharray="2,3"/><text x="{}" y="{}" fill="#666" font-size="11">{label}</text>"##,
            w - right,
            left + 4.0,
            y - 3.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The lower panel: the false-positive rate measured at each decade (markers) and XF's
/// bound (lines), log scale from 0.001 % to 100 %.
fn fp_panel(
    s: &mut String,
    runs: &[(f64, Vec<Sample>, Vec<Decade>)],
    (x0, x1, top, bottom): (f64, f64, f64, f64),
    px: &dyn Fn(u64) -> f64,
) {
    let py = |fp: f64| top + (0.0 - fp.max(1e-5).log10()) / 5.0 * (bottom - top);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">False-positive rate: measured on 1M absent items (markers), XF's bound (line)</text>"#,
        (x0 + x1) / 2.0,
        top - 4.0
    );
    for e in 0..=5 {
        let y = py(10f64.powi(-e));
        let label = ["100 %", "10 %", "1 %", "0.1 %", "0.01 %", "0.001 %"][e as usize];
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" x2="{x1}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{label}</text>"##,
            x0 - 6.0,
            y + 4.0
        );
    }
    let mut legend = 0.0;
    for (rate, samples, decades) in runs {
        let dash = if *rate < 0.005 { "6,3" } else { "" };
        let pts: Vec<String> = samples
            .iter()
            .map(|x| format!("{:.1},{:.1}", px(x.items), py(x.bound)))
            .collect();
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"##,
            pts.join(" ")
        );
        let y = py(*rate);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" x2="{x1}" y1="{y}" y2="{y}" stroke="#888" stroke-dasharray="2,3"/><text x="{}" y="{}" fill="#666" font-size="11">asked: {} %</text>"##,
            x0 + 4.0,
            y - 3.0,
            rate * 100.0
        );
        for d in decades {
            for (fp, color) in [
                (d.xf_fp, "#1f77b4"),
                (d.bf_fp, "#d62728"),
                (d.cf_fp, "#2ca02c"),
            ] {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}" stroke="{color}" stroke-width="2"/>"#,
                    px(d.items),
                    py(fp),
                    if dash.is_empty() { color } else { "white" }
                );
            }
        }
        let ly = top + 10.0 + legend;
        let _ = writeln!(
            s,
            r##"<circle cx="{}" cy="{ly}" r="4" fill="{}" stroke="#444" stroke-width="2"/><text x="{}" y="{}">measured, {} % asked</text>"##,
            x1 + 25.0,
            if dash.is_empty() { "#444" } else { "white" },
            x1 + 46.0,
            ly + 4.0,
            rate * 100.0
        );
        legend += 20.0;
    }
}

/// The runs written in `dir`'s CSV files (error rate, samples, decades).
fn read_csv(dir: &str) -> Vec<(f64, Vec<Sample>, Vec<Decade>)> {
    let rows = |name: &str| -> Vec<Vec<f64>> {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).expect("read the CSV");
        let parse = |l: &str| l.split(',').map(|v| v.parse().expect("a number")).collect();
        text.lines().skip(1).map(parse).collect()
    };
    let mut runs: Vec<(f64, Vec<Sample>, Vec<Decade>)> = Vec::new();
    for r in rows("xf-growth.csv") {
        if runs.last().is_none_or(|run| run.0 != r[0]) {
            runs.push((r[0], Vec::new(), Vec::new()));
        }
        let sample = Sample {
            items: r[1] as u64,
            xf: r[2],
            bound: r[3],
            bf: r[4],
            cf: r[5],
        };
        runs.last_mut().expect("a run").1.push(sample);
    }
    for r in rows("xf-decades.csv") {
        let d = Decade {
            items: r[1] as u64,
            xf_bits: r[2],
            xf_avg: r[3],
            xf_worst: r[4],
            xf_fp: r[5],
            bound: r[6],
            bf_bits: r[7],
            bf_fp: r[8],
            cf_bits: r[9],
            cf_fp: r[10],
            xf_ns: r[11],
            bf_ns: r[12],
        };
        let run = runs
            .iter_mut()
            .find(|run| run.0 == r[0])
            .expect("the rate's samples");
        run.2.push(d);
    }
    runs
}

/// Redraws the chart from the CSV files of [`xf_growth_figures`] (no measuring):
/// `cargo test --release -p redbloom-core --lib xf_growth_chart -- --ignored`.
#[test]
#[ignore = "redraws docs/sizing/xf-growth.svg from its CSV files"]
fn xf_growth_chart() {
    let dir = std::env::var("XF_FIGURES_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/sizing").to_string());
    let runs = read_csv(&dir);
    let max = runs
        .iter()
        .flat_map(|r| r.1.last())
        .map(|x| x.items)
        .max()
        .expect("samples");
    let max = 10u64.pow((max as f64).log10().ceil() as u32);
    std::fs::write(format!("{dir}/xf-growth.svg"), chart(&runs, max)).expect("write");
}

#[test]
#[ignore = "the measurement of docs/xf.md (minutes, release build)"]
fn xf_growth_figures() {
    let max: u64 = std::env::var("XF_FIGURES_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let dir = std::env::var("XF_FIGURES_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/sizing").to_string());
    let mut samples_csv = String::from(
        "error rate,items,XF bits per item,XF FP bound,BF bits per item,CF bits per item\n",
    );
    let mut decades_csv = String::from("error rate,items,XF bits per item,XF average since the previous decade,XF worst since the previous decade,XF measured FP,XF FP bound,BF bits per item,BF measured FP,CF bits per item,CF measured FP,XF ns per lookup,BF ns per lookup\n");
    let mut runs = Vec::new();
    for rate in [0.01, 0.001] {
        let (samples, decades) = run(rate, max);
        for x in &samples {
            let _ = writeln!(
                samples_csv,
                "{rate},{},{:.3},{:.6e},{:.3},{:.3}",
                x.items, x.xf, x.bound, x.bf, x.cf
            );
        }
        for d in &decades {
            let _ = writeln!(
                decades_csv,
                "{rate},{},{:.2},{:.2},{:.2},{:.6},{:.6},{:.2},{:.6},{:.2},{:.6},{:.1},{:.1}",
                d.items,
                d.xf_bits,
                d.xf_avg,
                d.xf_worst,
                d.xf_fp,
                d.bound,
                d.bf_bits,
                d.bf_fp,
                d.cf_bits,
                d.cf_fp,
                d.xf_ns,
                d.bf_ns
            );
        }
        runs.push((rate, samples, decades));
    }
    std::fs::write(format!("{dir}/xf-growth.csv"), samples_csv).expect("write");
    std::fs::write(format!("{dir}/xf-decades.csv"), decades_csv).expect("write");
    std::fs::write(format!("{dir}/xf-growth.svg"), chart(&runs, max)).expect("write");
}
