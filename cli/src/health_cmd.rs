//! `redbloom health URL`: every filter key of every family (SCAN ... TYPE on the server, or
//! on every master of a cluster), asked its `*.HEALTH`; the keys at risk (any alert) as a
//! table, worst first (estimated FP over the rate asked), with the reservation to rebuild
//! with. Exit code 1 when any key is over its asked rate.

use crate::connect;
use redbloom_client::redis;
use redbloom_client::shard::info_pairs;
use redbloom_client::Result;
use redbloom_core::health::{alert_names, rebuild_capacity, OVER_FP};
use serde_json::json;
use std::io::IsTerminal;

/// Each module data type and the family whose `HEALTH` answers for it.
const TYPES: [(&str, &str); 9] = [
    ("MBbloom--", "BF"),
    ("RBblockBF", "BF"),
    ("RBcountBF", "CBF"),
    ("MBbloomCF", "CF"),
    ("RBslideBF", "WBF"),
    ("RBstaticF", "SF"),
    ("CMSk-TYPE", "CMS"),
    ("TopK-TYPE", "TOPK"),
    ("TDIS-TYPE", "TDIGEST"),
];

struct AtRisk {
    key: String,
    family: &'static str,
    alerts: u8,
    estimated: Option<f64>,
    target: Option<f64>,
    items: u64,
    capacity: u64,
}

impl AtRisk {
    /// How far over its rate (the sort key, worst first).
    fn ratio(&self) -> f64 {
        match (self.estimated, self.target) {
            (Some(e), Some(t)) if t > 0.0 => e / t,
            (Some(e), None) => e,
            _ => 0.0,
        }
    }
}

/// The most keys at risk kept for the table (the worst; the rest are counted): memory
/// stays bounded on any keyspace.
const MAX_ROWS: usize = 10_000;

/// Runs the scan; exits with 1 when any key is over its asked rate.
pub fn run(url: &str, json: bool) -> Result<()> {
    // One connection scans (page by page, on every master), the other asks each page's
    // keys their health in one pipeline (routed by key in a cluster).
    let mut scanner = connect::open(url)?;
    let mut conn = connect::open(url)?;
    let progress = std::io::stderr().is_terminal() && !json;
    let mut scanned = 0u64;
    let mut risky = 0u64;
    let mut any_over = false;
    let mut at_risk: Vec<AtRisk> = Vec::new();
    for (type_name, family) in TYPES {
        let command = format!("{family}.HEALTH");
        scanner.scan_each("*", Some(type_name), &mut |keys| {
            if keys.is_empty() {
                return Ok(());
            }
            let cmds: Vec<redis::Cmd> = keys
                .iter()
                .map(|key| {
                    let mut cmd = redis::cmd(&command);
                    cmd.arg(key);
                    cmd
                })
                .collect();
            let replies = conn.pipeline(&cmds)?;
            for (key, reply) in keys.into_iter().zip(replies) {
                scanned += 1;
                let pairs = info_pairs(&reply);
                let number = |label: &str| {
                    pairs
                        .iter()
                        .find(|(l, _)| l == label)
                        .and_then(|(_, v)| v.parse::<f64>().ok())
                };
                let alerts = number("alerts").unwrap_or(0.0) as u8;
                if alerts == 0 {
                    continue;
                }
                risky += 1;
                any_over |= alerts & OVER_FP != 0;
                at_risk.push(AtRisk {
                    key,
                    family,
                    alerts,
                    estimated: number("estimated_fp_rate"),
                    target: number("target_fp_rate"),
                    items: number("items").unwrap_or(0.0) as u64,
                    capacity: number("capacity").unwrap_or(0.0) as u64,
                });
                if at_risk.len() >= 2 * MAX_ROWS {
                    keep_worst(&mut at_risk);
                }
            }
            if progress {
                eprint!("\rredbloom health: {scanned} keys, {risky} at risk");
            }
            Ok(())
        })?;
    }
    if progress {
        eprintln!();
    }
    keep_worst(&mut at_risk);
    let over = any_over;
    if json {
        let rows: Vec<_> = at_risk
            .iter()
            .map(|r| {
                json!({
                    "key": r.key, "type": r.family.to_ascii_lowercase(),
                    "alerts": alert_names(r.alerts), "estimated_fp": r.estimated,
                    "target_fp": r.target, "items": r.items, "capacity": r.capacity,
                    "rebuild_capacity": rebuild_capacity(r.items, r.capacity),
                })
            })
            .collect();
        say!(
            "{}",
            json!({"scanned": scanned, "at_risk_count": risky, "at_risk": rows, "over_target": over})
        );
    } else {
        say!("{scanned} filter keys, {risky} at risk");
        if risky > at_risk.len() as u64 {
            say!("(the worst {} listed)", at_risk.len());
        }
        for r in &at_risk {
            let estimate = r.estimated.map_or("-".to_string(), |e| format!("{e:.6}"));
            let target = r.target.map_or("-".to_string(), |t| t.to_string());
            let rebuild = match r.target {
                Some(t) if r.capacity > 0 => format!(
                    "{}.RESERVE {} {t} {}",
                    r.family,
                    r.key,
                    rebuild_capacity(r.items, r.capacity)
                ),
                _ => "-".to_string(),
            };
            say!(
                "{} ({}): estimated FP {estimate} (target {target}), items {} / capacity {}, {}; rebuild: {rebuild}",
                r.key,
                r.family.to_ascii_lowercase(),
                r.items,
                r.capacity,
                alert_names(r.alerts).join(", ")
            );
        }
    }
    if over {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        std::process::exit(1);
    }
    Ok(())
}

/// Sorts worst first (estimated FP over the rate asked, then key) and keeps [`MAX_ROWS`].
fn keep_worst(rows: &mut Vec<AtRisk>) {
    rows.sort_by(|a, b| b.ratio().total_cmp(&a.ratio()).then(a.key.cmp(&b.key)));
    rows.truncate(MAX_ROWS);
}
