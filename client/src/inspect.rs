//! What a filter holds, read from its SCANDUMP and counted here: per link (Bloom, counting)
//! or sub-filter (Cuckoo) its capacity, items, bits, hashes, fill ratio and the
//! false-positive rate that fill implies; for the filter, that estimate against its target,
//! and warnings when it is past capacity or above target. A static filter has no links:
//! its fingerprints are reported ([`StaticReport`]), and its rate is the one they give,
//! 2^-bits, against the rate it was built for. A sharded filter is reported member by
//! member and as a whole.

use crate::conn::Conn;
use crate::error::Result;
use crate::family::{key_family, Family};
use crate::shard::{info_pairs, Descriptor};
use crate::snapshot::{download, Local};
use redbloom_core::bloom::blocked::{BLOCK_BITS, BLOCK_BYTES};
use redbloom_core::bloom::Chain;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::CuckooFilter;
use redbloom_core::static_filter::StaticFilter;

/// One link or sub-filter.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkReport {
    /// Items the link was sized for (Cuckoo: its slots, buckets × bucket size).
    pub capacity: u64,
    /// Items added to it (Cuckoo: slots in use).
    pub items: u64,
    /// Bits (counting: counters; Cuckoo: bits of its buckets).
    pub bits: u64,
    /// Hash functions (Cuckoo: none).
    pub hashes: Option<u32>,
    /// Set bits (non-zero counters, used slots) over all of them.
    pub fill: f64,
    /// The false-positive rate this fill gives: fill^hashes (Bloom, counting);
    /// 1 − (1 − 1/255)^(2 · bucket size · load) (Cuckoo: 8-bit fingerprints, two buckets).
    pub estimated_fp: f64,
    /// The rate the link was built for (Bloom, counting).
    pub target_fp: Option<f64>,
    /// Bytes of its array.
    pub memory: u64,
}

/// A static filter's fingerprints (SF.INFO's figures, counted in the downloaded filter).
#[derive(Debug, Clone, PartialEq)]
pub struct StaticReport {
    /// Fingerprint width.
    pub bits: u32,
    /// Fingerprint slots (about 1.13 per item).
    pub slots: u64,
    /// The filter's memory per item, in bits.
    pub bits_per_item: f64,
    /// The filter's own memory (SF.INFO "Size").
    pub memory: u64,
}

impl StaticReport {
    fn of(filter: &StaticFilter) -> StaticReport {
        StaticReport {
            bits: filter.bits(),
            slots: filter.slots(),
            bits_per_item: filter.bits_per_item(),
            memory: filter.mem_usage(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub key: String,
    /// bf, cf, cbf, static, or sharded-bf / sharded-cf / sharded-cbf.
    pub kind: String,
    pub items: u64,
    /// The capacity it was reserved for.
    pub capacity: u64,
    pub links: Vec<LinkReport>,
    /// A static filter's fingerprints (it has no links).
    pub fingerprints: Option<StaticReport>,
    /// The chance an absent item answers 1: 1 − Π(1 − link estimate); a sharded
    /// filter's is its members' mean (routing spreads absent items evenly).
    pub estimated_fp: f64,
    pub target_fp: Option<f64>,
    /// MEMORY USAGE (a sharded filter: its members' sum).
    pub memory: u64,
    pub warnings: Vec<String>,
    pub members: Vec<Report>,
}

fn ones(data: &[u8]) -> u64 {
    data.iter().map(|b| u64::from(b.count_ones())).sum()
}

fn compound(links: &[LinkReport]) -> f64 {
    1.0 - links.iter().map(|l| 1.0 - l.estimated_fp).product::<f64>()
}

/// A Bloom or counting link with `used` of its `bits` set (non-zero).
fn bloom_like(
    capacity: u64,
    items: u64,
    bits: u64,
    hashes: u32,
    used: u64,
    error: f64,
    memory: u64,
) -> LinkReport {
    let fill = used as f64 / bits as f64;
    LinkReport {
        capacity,
        items,
        bits,
        hashes: Some(hashes),
        fill,
        estimated_fp: fill.powi(hashes as i32),
        target_fp: Some(error),
        memory,
    }
}

fn bloom_links(chain: &Chain) -> Vec<LinkReport> {
    chain
        .links()
        .iter()
        .map(|l| {
            let mut link = bloom_like(
                l.entries(),
                l.items(),
                l.bits(),
                l.hashes(),
                ones(l.data()),
                l.error(),
                l.bytes(),
            );
            if chain.is_blocked() {
                link.estimated_fp = blocked_fp(l.data(), l.hashes());
            }
            link
        })
        .collect()
}

/// A blocked link's rate: an absent item falls in one 512-bit block (each as likely) and
/// answers 1 when its k bits there are set, so the rate is the blocks' mean of
/// (set bits / 512)^k — not the whole array's fill^k, which the blocks' uneven loads
/// (Poisson) leave too low.
fn blocked_fp(data: &[u8], hashes: u32) -> f64 {
    let blocks = data.chunks(BLOCK_BYTES);
    let count = blocks.len();
    if count == 0 {
        return 0.0;
    }
    let sum: f64 = blocks
        .map(|b| (ones(b) as f64 / BLOCK_BITS as f64).powi(hashes as i32))
        .sum();
    sum / count as f64
}

fn counting_links(chain: &CountingChain) -> Vec<LinkReport> {
    chain
        .links()
        .iter()
        .map(|l| {
            // Two 4-bit counters per byte.
            let used = l
                .counters()
                .iter()
                .map(|b| u64::from(b & 0x0f != 0) + u64::from(b >> 4 != 0))
                .sum();
            bloom_like(
                l.entries(),
                l.items(),
                l.bits(),
                l.hashes(),
                used,
                l.error(),
                l.bytes(),
            )
        })
        .collect()
}

/// The rate a chain was reserved for: a scaling chain's first link got half of it.
fn chain_target(first_link_error: f64, scaling: bool) -> f64 {
    if scaling {
        first_link_error * 2.0
    } else {
        first_link_error
    }
}

fn cuckoo_links(filter: &CuckooFilter) -> Vec<LinkReport> {
    let bucket = u64::from(filter.bucket_size());
    filter
        .sub_filters()
        .iter()
        .map(|sub| {
            let data = sub.data();
            let used = data.iter().filter(|&&b| b != 0).count() as u64;
            let slots = sub.buckets() * bucket;
            let load = used as f64 / slots as f64;
            LinkReport {
                capacity: slots,
                items: used,
                bits: data.len() as u64 * 8,
                hashes: None,
                fill: load,
                estimated_fp: 1.0 - (1.0 - 1.0 / 255.0f64).powf(2.0 * bucket as f64 * load),
                target_fp: None,
                memory: data.len() as u64,
            }
        })
        .collect()
}

/// An empty Cuckoo filter (its SCANDUMP has no header): its one sub-filter from CF.INFO.
fn empty_cuckoo(conn: &mut Conn, key: &str) -> Result<LinkReport> {
    let info = info_pairs(&conn.query::<redis::Value>(redis::cmd("CF.INFO").arg(key))?);
    let field = |name: &str| {
        info.iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let slots = field("Number of buckets") * field("Bucket size");
    Ok(LinkReport {
        capacity: slots,
        items: 0,
        bits: slots * 8,
        hashes: None,
        fill: 0.0,
        estimated_fp: 0.0,
        target_fp: None,
        memory: slots,
    })
}

fn memory_usage(conn: &mut Conn, key: &str) -> u64 {
    conn.query::<i64>(redis::cmd("MEMORY").arg("USAGE").arg(key))
        .map(|m| m.max(0) as u64)
        .unwrap_or(0)
}

/// Inspects one filter key of `family`.
pub fn inspect_key(conn: &mut Conn, key: &str, family: Family) -> Result<Report> {
    let local = download(conn, family, key)?;
    let mut fingerprints = None;
    let (links, items, capacity, target) = match &local {
        Local::Bloom(chain) => (
            bloom_links(chain),
            chain.items(),
            chain.links()[0].entries(),
            Some(chain_target(chain.links()[0].error(), chain.is_scaling())),
        ),
        Local::Counting(chain) => (
            counting_links(chain),
            chain.items(),
            chain.links()[0].entries(),
            Some(chain_target(chain.links()[0].error(), chain.is_scaling())),
        ),
        Local::Cuckoo(filter) => {
            let links = cuckoo_links(filter);
            let capacity = links.first().map(|l| l.capacity).unwrap_or(0);
            (links, filter.num_items(), capacity, None)
        }
        // It holds its items, no more: its capacity.
        Local::Static(filter) => {
            fingerprints = Some(StaticReport::of(filter));
            (
                Vec::new(),
                filter.items(),
                filter.items(),
                Some(filter.requested_error()),
            )
        }
        Local::EmptyCuckoo => {
            let link = empty_cuckoo(conn, key)?;
            let capacity = link.capacity;
            (vec![link], 0, capacity, None)
        }
    };
    let estimated_fp = match &local {
        Local::Static(filter) => filter.guaranteed_error(),
        _ => compound(&links),
    };
    let mut warnings = Vec::new();
    if items > capacity && capacity > 0 {
        warnings.push(format!(
            "past capacity: {items} items in a filter reserved for {capacity} ({} links)",
            links.len()
        ));
    }
    if let Some(target) = target {
        if estimated_fp > target {
            warnings.push(format!(
                "estimated false-positive rate {estimated_fp:.6} is above the target {target}"
            ));
        }
    }
    Ok(Report {
        key: key.to_string(),
        kind: family.name().to_string(),
        items,
        capacity,
        links,
        fingerprints,
        estimated_fp,
        target_fp: target,
        memory: memory_usage(conn, key),
        warnings,
        members: Vec::new(),
    })
}

/// Inspects `key`: a filter, or a sharded filter's descriptor.
pub fn inspect(conn: &mut Conn, key: &str) -> Result<Report> {
    match key_family(conn, key)? {
        Some(family) => inspect_key(conn, key, family),
        None => {
            let d = Descriptor::open(conn, key)?;
            let members = d
                .members
                .iter()
                .map(|m| inspect_key(conn, m, d.spec.family))
                .collect::<Result<Vec<_>>>()?;
            let items = members.iter().map(|m| m.items).sum();
            let estimated_fp =
                members.iter().map(|m| m.estimated_fp).sum::<f64>() / members.len() as f64;
            let target = (d.spec.family != Family::Cf).then_some(d.spec.error_rate);
            let mut warnings = Vec::new();
            if items > d.spec.capacity {
                warnings.push(format!(
                    "past capacity: {items} items in a filter reserved for {}",
                    d.spec.capacity
                ));
            }
            if let Some(target) = target {
                if estimated_fp > target {
                    warnings.push(format!(
                        "estimated false-positive rate {estimated_fp:.6} is above the target {target}"
                    ));
                }
            }
            for m in &members {
                warnings.extend(m.warnings.iter().map(|w| format!("member {}: {w}", m.key)));
            }
            Ok(Report {
                key: key.to_string(),
                kind: format!("sharded-{}", d.spec.family.name()),
                items,
                capacity: d.spec.capacity,
                links: Vec::new(),
                fingerprints: None,
                estimated_fp,
                target_fp: target,
                memory: members.iter().map(|m| m.memory).sum(),
                warnings,
                members,
            })
        }
    }
}
