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
use crate::snapshot::{scandump_each, Local};
use redbloom_core::bloom::Chain;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::CuckooFilter;
use redbloom_core::health::{compound, set_bits, LinkFill};
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
    /// The capacity it was reserved for (`None`: a static filter, built for its items and
    /// holding no more).
    pub capacity: Option<u64>,
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

/// A Bloom or counting link as the core's health reads it (its set bits, the rate that
/// fill gives: `redbloom_core::health`, the figures `*.HEALTH` replies), its set bits
/// counted here from the link's SCANDUMP chunks.
fn bloom_like(capacity: u64, items: u64, fill: LinkFill, error: f64, memory: u64) -> LinkReport {
    LinkReport {
        capacity,
        items,
        bits: fill.bits,
        hashes: Some(fill.hashes),
        fill: fill.fill(),
        estimated_fp: fill.fp(),
        target_fp: Some(error),
        memory,
    }
}

/// What a filter's data hold, counted a chunk at a time as SCANDUMP returns them: per
/// link (sub-filter) the set bits (non-zero counters, used slots).
struct Counts {
    /// Each array's size in bytes, in SCANDUMP order.
    sizes: Vec<u64>,
    used: Vec<u64>,
}

impl Counts {
    fn new(local: &Local) -> Counts {
        let sizes: Vec<u64> = match local {
            Local::Bloom(chain) => chain.links().iter().map(|l| l.bytes()).collect(),
            Local::Counting(chain) => chain.links().iter().map(|l| l.bytes()).collect(),
            Local::Cuckoo(filter) => filter
                .sub_filters()
                .iter()
                .map(|s| s.data().len() as u64)
                .collect(),
            Local::Static(_) | Local::Expandable(_) | Local::XfLoading(_) | Local::EmptyCuckoo => {
                Vec::new()
            }
        };
        Counts {
            used: vec![0; sizes.len()],
            sizes,
        }
    }

    /// Counts one chunk (its next iterator `iter`) of `local`'s data.
    fn add(&mut self, local: &Local, iter: i64, data: &[u8]) {
        let len = data.len() as u64;
        let Some(mut offset) = u64::try_from(iter)
            .ok()
            .and_then(|i| i.checked_sub(len + 1))
        else {
            return;
        };
        let mut rest = data;
        for (i, &size) in self.sizes.iter().enumerate() {
            if rest.is_empty() {
                return;
            }
            if offset >= size {
                offset -= size;
                continue;
            }
            let take = rest.len().min((size - offset) as usize);
            let (here, after) = rest.split_at(take);
            self.used[i] += match local {
                Local::Counting(_) => here
                    .iter()
                    .map(|b| u64::from(b & 0x0f != 0) + u64::from(b >> 4 != 0))
                    .sum(),
                Local::Cuckoo(_) => here.iter().filter(|&&b| b != 0).count() as u64,
                _ => set_bits(here),
            };
            rest = after;
            offset = 0;
        }
    }
}

fn bloom_links(chain: &Chain, counts: &Counts) -> Vec<LinkReport> {
    chain
        .links()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            // The link's own shape (bits, hashes, layout), its set bits counted here.
            let fill = LinkFill {
                set: counts.used[i],
                ..l.fill_figures()
            };
            bloom_like(l.entries(), l.items(), fill, l.error(), l.bytes())
        })
        .collect()
}

fn counting_links(chain: &CountingChain, counts: &Counts) -> Vec<LinkReport> {
    chain
        .links()
        .iter()
        .enumerate()
        .map(|(i, l)| {
            // The link's own shape (bits, hashes, layout), its set bits counted here.
            let fill = LinkFill {
                set: counts.used[i],
                ..l.fill_figures()
            };
            bloom_like(l.entries(), l.items(), fill, l.error(), l.bytes())
        })
        .collect()
}

fn cuckoo_links(filter: &CuckooFilter, counts: &Counts) -> Vec<LinkReport> {
    let bucket = u64::from(filter.bucket_size());
    filter
        .sub_filters()
        .iter()
        .enumerate()
        .map(|(i, sub)| {
            let bytes = sub.data().len() as u64;
            let used = counts.used[i];
            let slots = sub.buckets() * bucket;
            let load = used as f64 / slots as f64;
            LinkReport {
                capacity: slots,
                items: used,
                bits: bytes * 8,
                hashes: None,
                fill: load,
                estimated_fp: filter.sub_filter_fp(load),
                target_fp: None,
                memory: bytes,
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

/// The filter `key`'s SCANDUMP header describes (its data left zeroed, not resident) and
/// what its data chunks hold, counted as they arrive: one chunk is held at a time. A
/// static filter's figures are all in its header: its data are not read.
fn scan(conn: &mut Conn, key: &str, family: Family) -> Result<(Local, Counts)> {
    let mut state: Option<(Local, Counts)> = None;
    scandump_each(conn, family, key, |iter, data| {
        match state.as_mut() {
            None => {
                let local = Local::from_header(family, &data, key)?;
                let counts = Counts::new(&local);
                let more = !matches!(local, Local::Static(_));
                state = Some((local, counts));
                return Ok(more);
            }
            // An expandable filter's figures need it whole: loaded, a chunk at a time.
            Some((local @ Local::XfLoading(_), _)) => local.load_chunk(iter, &data, key)?,
            Some((local, counts)) => counts.add(local, iter, &data),
        }
        Ok(true)
    })?;
    match state {
        // Only an expandable filter is loaded whole (a static one's header says it all).
        Some((local @ Local::XfLoading(_), counts)) => Ok((local.finish(key)?, counts)),
        Some(state) => Ok(state),
        None => {
            let local = Local::EmptyCuckoo;
            let counts = Counts::new(&local);
            Ok((local, counts))
        }
    }
}

/// Inspects one filter key of `family`.
pub fn inspect_key(conn: &mut Conn, key: &str, family: Family) -> Result<Report> {
    let (local, counts) = scan(conn, key, family)?;
    if family != Family::Cf && matches!(local, Local::EmptyCuckoo) {
        return Err(crate::error::Error::new(format!("{key}: empty dump")));
    }
    let mut fingerprints = None;
    let (links, items, capacity, target) = match &local {
        Local::Bloom(chain) => (
            bloom_links(chain, &counts),
            chain.items(),
            chain.links()[0].entries(),
            Some(chain.target_fp()),
        ),
        Local::Counting(chain) => (
            counting_links(chain, &counts),
            chain.items(),
            chain.links()[0].entries(),
            Some(chain.target_fp()),
        ),
        Local::Cuckoo(filter) => {
            let links = cuckoo_links(filter, &counts);
            let capacity = links.first().map(|l| l.capacity).unwrap_or(0);
            (links, filter.num_items(), capacity, None)
        }
        // It holds its items, no more: no capacity (0 here, none reported).
        Local::Static(filter) => {
            fingerprints = Some(StaticReport::of(filter));
            (
                Vec::new(),
                filter.items(),
                0,
                Some(filter.requested_error()),
            )
        }
        // One table that grows: no links; its capacity is what it holds before its next
        // split, its rate the bound it keeps (XF.INFO's figures).
        Local::Expandable(filter) => (
            Vec::new(),
            filter.items(),
            filter.capacity(),
            Some(filter.error_rate()),
        ),
        Local::XfLoading(_) => unreachable!("scan finishes an expandable filter"),
        Local::EmptyCuckoo => {
            let link = empty_cuckoo(conn, key)?;
            let capacity = link.capacity;
            (vec![link], 0, capacity, None)
        }
    };
    let estimated_fp = match &local {
        Local::Static(filter) => filter.guaranteed_error(),
        Local::Expandable(filter) => filter.fp_bound(),
        _ => compound(links.iter().map(|l| l.estimated_fp)),
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
        capacity: fingerprints.is_none().then_some(capacity),
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
                capacity: Some(d.spec.capacity),
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
