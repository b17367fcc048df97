//! `redbloom health URL`: every filter key of every family (SCAN ... TYPE on the server, or
//! on every master of a cluster), asked its `*.HEALTH`; the keys at risk (any alert) as a
//! table, worst first (estimated FP over the rate asked), with the reservation to rebuild
//! with. Exit code 1 when any key is over its asked rate. A sharded filter's members
//! (`{s<i>.<c>}:<name>`, `redbloom shard create`) are reported as one row under the
//! filter's name when its descriptor names them.

use crate::connect;
use redbloom_client::redis;
use redbloom_client::shard::{info_pairs, Descriptor};
use redbloom_client::Result;
use redbloom_core::health::{alert_names, rebuild_capacity, OVER_FP};
use serde_json::json;
use std::collections::BTreeMap;
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
    /// A sharded filter (its members' figures as one): its member count.
    shards: Option<usize>,
    alerts: u8,
    estimated: Option<f64>,
    target: Option<f64>,
    items: u64,
    capacity: u64,
}

impl AtRisk {
    /// Its type as shown: `bf`, `cf`, …, or `sharded-bf` for a sharded filter.
    fn kind(&self) -> String {
        let family = self.family.to_ascii_lowercase();
        match self.shards {
            Some(_) => format!("sharded-{family}"),
            None => family,
        }
    }

    /// How far over its rate (the sort key, worst first).
    fn ratio(&self) -> f64 {
        match (self.estimated, self.target) {
            (Some(e), Some(t)) if t > 0.0 => e / t,
            (Some(e), None) => e,
            _ => 0.0,
        }
    }
}

/// The name of the sharded filter whose member `key` would be (`{s<i>.<c>}:<name>`).
fn sharded_name(key: &str) -> Option<&str> {
    let (tag, name) = key.strip_prefix("{s")?.split_once("}:")?;
    let (i, c) = tag.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(i) && digits(c) && !name.is_empty()).then_some(name)
}

/// The members seen of the sharded filter `name`, as one row when its descriptor names
/// every one of them (`None` otherwise: they are reported as keys of their own). Its
/// estimate is the members' mean (routing spreads absent items evenly), its items and
/// alerts theirs together, its rate and capacity the descriptor's.
fn as_one(conn: &mut redbloom_client::Conn, name: &str, seen: &[AtRisk]) -> Option<AtRisk> {
    let d = Descriptor::read(conn, name).ok()?;
    if !seen.iter().all(|m| d.members.contains(&m.key)) {
        return None;
    }
    let shards = d.members.len().max(1);
    Some(AtRisk {
        key: name.to_string(),
        family: seen.first()?.family,
        shards: Some(shards),
        alerts: seen.iter().fold(0, |a, m| a | m.alerts),
        estimated: Some(seen.iter().filter_map(|m| m.estimated).sum::<f64>() / shards as f64),
        target: seen
            .iter()
            .find_map(|m| m.target)
            .map(|_| d.spec.error_rate),
        items: seen.iter().map(|m| m.items).sum(),
        capacity: d.spec.capacity,
    })
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
    // Every member key seen (at risk or not), by sharded filter name.
    let mut members: BTreeMap<String, Vec<AtRisk>> = BTreeMap::new();
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
                let row = AtRisk {
                    family,
                    shards: None,
                    alerts: number("alerts").unwrap_or(0.0) as u8,
                    estimated: number("estimated_fp_rate"),
                    target: number("target_fp_rate"),
                    items: number("items").unwrap_or(0.0) as u64,
                    capacity: number("capacity").unwrap_or(0.0) as u64,
                    key,
                };
                if let Some(name) = sharded_name(&row.key) {
                    members.entry(name.to_string()).or_default().push(row);
                    continue;
                }
                add_row(&mut at_risk, &mut risky, &mut any_over, row);
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
    for (name, seen) in members {
        match as_one(&mut conn, &name, &seen) {
            Some(row) => add_row(&mut at_risk, &mut risky, &mut any_over, row),
            None => {
                for row in seen {
                    add_row(&mut at_risk, &mut risky, &mut any_over, row);
                }
            }
        }
    }
    keep_worst(&mut at_risk);
    let over = any_over;
    if json {
        let rows: Vec<_> = at_risk
            .iter()
            .map(|r| {
                json!({
                    "key": r.key, "type": r.kind(),
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
            let rebuild = match (r.target, r.shards) {
                (Some(t), Some(shards)) if r.capacity > 0 => format!(
                    "redbloom shard create URL {} --shards {shards} --type {} --error-rate {t} --capacity {}",
                    r.key,
                    r.family.to_ascii_lowercase(),
                    rebuild_capacity(r.items, r.capacity)
                ),
                (Some(t), None) if r.capacity > 0 => format!(
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
                r.kind(),
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

/// Counts `row` when it raises an alert, and keeps it (the worst [`MAX_ROWS`]).
fn add_row(at_risk: &mut Vec<AtRisk>, risky: &mut u64, any_over: &mut bool, row: AtRisk) {
    if row.alerts == 0 {
        return;
    }
    *risky += 1;
    *any_over |= row.alerts & OVER_FP != 0;
    at_risk.push(row);
    if at_risk.len() >= 2 * MAX_ROWS {
        keep_worst(at_risk);
    }
}

/// Sorts worst first (estimated FP over the rate asked, then key) and keeps [`MAX_ROWS`].
fn keep_worst(rows: &mut Vec<AtRisk>) {
    rows.sort_by(|a, b| b.ratio().total_cmp(&a.ratio()).then(a.key.cmp(&b.key)));
    rows.truncate(MAX_ROWS);
}
