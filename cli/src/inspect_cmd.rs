//! `redbloom inspect URL KEY`.

use crate::connect;
use redbloom_client::inspect::{inspect, LinkReport, Report, StaticReport};
use redbloom_client::Result;
use serde_json::{json, Value};

fn link_json(l: &LinkReport) -> Value {
    json!({
        "capacity": l.capacity, "items": l.items, "bits": l.bits, "hashes": l.hashes,
        "fill_ratio": l.fill, "estimated_fp": l.estimated_fp, "target_fp": l.target_fp, "memory": l.memory,
    })
}

fn fingerprints_json(f: &StaticReport) -> Value {
    json!({
        "bits": f.bits, "slots": f.slots, "bits_per_item": f.bits_per_item, "memory": f.memory,
    })
}

fn report_json(r: &Report) -> Value {
    let mut out = json!({
        "key": r.key, "type": r.kind, "items": r.items, "capacity": r.capacity,
        "estimated_fp": r.estimated_fp, "target_fp": r.target_fp, "memory": r.memory,
        "links": r.links.iter().map(link_json).collect::<Vec<_>>(),
        "members": r.members.iter().map(report_json).collect::<Vec<_>>(),
        "warnings": r.warnings,
    });
    if let Some(f) = &r.fingerprints {
        out["fingerprints"] = fingerprints_json(f);
        // Built for its items: no capacity.
        if let Some(fields) = out.as_object_mut() {
            fields.remove("capacity");
        }
    }
    out
}

fn print_links(r: &Report, indent: &str) {
    let word = if r.kind.ends_with("cf") {
        "sub-filter"
    } else {
        "link"
    };
    for (i, l) in r.links.iter().enumerate() {
        let hashes = l
            .hashes
            .map(|h| format!(", hashes {h}"))
            .unwrap_or_default();
        let target = l
            .target_fp
            .map(|t| format!(" (target {t})"))
            .unwrap_or_default();
        let fill = if word == "sub-filter" {
            "load factor"
        } else {
            "fill ratio"
        };
        say!(
            "{indent}{word} {i}: capacity {}, items {}, bits {}{hashes}, {fill} {:.4}, estimated FP {:.6}{target}, memory {} bytes",
            l.capacity, l.items, l.bits, l.fill, l.estimated_fp, l.memory
        );
    }
}

fn print_text(r: &Report) {
    let capacity = r
        .capacity
        .map(|c| format!(", capacity {c}"))
        .unwrap_or_default();
    say!(
        "{}: {}, {} items{capacity}, memory {} bytes",
        r.key,
        r.kind,
        r.items,
        r.memory
    );
    print_links(r, "  ");
    if let Some(f) = &r.fingerprints {
        say!(
            "  fingerprints: {} bits in {} slots, {:.2} bits per item, memory {} bytes",
            f.bits,
            f.slots,
            f.bits_per_item,
            f.memory
        );
    }
    for m in &r.members {
        say!(
            "  member {}: {} items, estimated FP {:.6}, memory {} bytes",
            m.key,
            m.items,
            m.estimated_fp,
            m.memory
        );
        print_links(m, "    ");
    }
    match r.target_fp {
        Some(t) => say!(
            "estimated false-positive rate: {:.6} (target {t})",
            r.estimated_fp
        ),
        None => say!("estimated false-positive rate: {:.6}", r.estimated_fp),
    }
    for w in &r.warnings {
        say!("warning: {w}");
    }
}

pub fn run(url: &str, key: &str, json: bool) -> Result<()> {
    let mut conn = connect::open(url)?;
    let report = inspect(&mut conn, key)?;
    if json {
        say!("{}", report_json(&report));
    } else {
        print_text(&report);
    }
    Ok(())
}
