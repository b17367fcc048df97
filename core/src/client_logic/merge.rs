//! Merging local filters: the very functions BF.MERGE, CBF.MERGE and CF.MERGE run in the
//! server, so the merged filter is the server's merge of the same filters, byte for byte
//! (`redbloom merge-snapshots`, the Python package's `merge`).

use super::family::Family;
use super::snapshot::Local;
use super::{LogicError, Result};
use crate::bloom::Chain;
use crate::counting::CountingChain;
use crate::cuckoo::CuckooFilter;
use crate::limits::{CF_DEFAULT_MAX_EXPANSIONS, DEFAULT_MAX_FILTER_BYTES};
use crate::merge::{MergeError, MergeOp};

/// The refusal of a merge of static filters: SF has no merge (a static filter is built
/// whole from its items).
pub const NO_STATIC_MERGE: &str =
    "static filters do not merge: build one filter of the union of their items";
/// The refusal of a merge of expandable filters: XF has no merge.
pub const NO_XF_MERGE: &str = "expandable filters do not merge: add the items of one to the other";
/// The refusal of an intersection of Cuckoo filters.
pub const NO_CUCKOO_INTERSECT: &str =
    "--intersect applies to bf and cbf filters only (CF.MERGE is a union)";

/// The error of a merge the core refused; `names[n]` names operand `n`.
fn refusal(e: MergeError, names: &[&str]) -> LogicError {
    let name = |n: usize| names.get(n).copied().unwrap_or("?");
    LogicError::File(match e {
        MergeError::ShapeDiffers(n) => format!(
            "{}: a filter of another shape than {}'s (error rate, capacity, expansion, scaling, layout): they cannot be merged",
            name(n),
            name(0)
        ),
        MergeError::MultiLink(n) => format!(
            "{}: --intersect needs filters of a single link, and this one has more",
            name(n)
        ),
        MergeError::TooLarge => "the merged filter would be larger than 4 GiB".to_string(),
        MergeError::NoSpace => {
            "the merged filter is full: a fingerprint found no slot".to_string()
        }
        MergeError::MaxFilters => format!(
            "the merged filter would need more than {CF_DEFAULT_MAX_EXPANSIONS} sub-filters"
        ),
        MergeError::HugeSubFilter => {
            "a sub-filter of 4 GiB or more cannot be merged".to_string()
        }
        MergeError::NoOperands | MergeError::OutOfMemory | MergeError::Overflow => {
            "not enough memory for the merged filter".to_string()
        }
    })
}

/// The union (or, with `intersect`, the intersection) of `locals`, all of one family and
/// shape; `names[n]` names operand `n` in errors. An empty Cuckoo filter adds nothing.
pub fn merge(locals: &[&Local], names: &[&str], intersect: bool) -> Result<Local> {
    let Some(first) = locals.first() else {
        return Err(LogicError::usage("no filter to merge"));
    };
    let family = first.family();
    if let Some(at) = locals.iter().position(|l| l.family() != family) {
        return Err(LogicError::File(format!(
            "{}: a {} snapshot, and {} is a {} one: only filters of one type merge",
            names[at],
            locals[at].family().name(),
            names[0],
            family.name()
        )));
    }
    if family == Family::Cf && intersect {
        return Err(LogicError::usage(NO_CUCKOO_INTERSECT));
    }
    let op = if intersect {
        MergeOp::Intersect
    } else {
        MergeOp::Union
    };
    let merged = match family {
        Family::Sf => return Err(LogicError::failed(NO_STATIC_MERGE)),
        Family::Xf => return Err(LogicError::failed(NO_XF_MERGE)),
        Family::Bf => {
            let chains: Vec<&Chain> = locals
                .iter()
                .filter_map(|l| match l {
                    Local::Bloom(c) => Some(c),
                    _ => None,
                })
                .collect();
            Local::Bloom(
                Chain::merge(&chains, op, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| refusal(e, names))?,
            )
        }
        Family::Cbf => {
            let chains: Vec<&CountingChain> = locals
                .iter()
                .filter_map(|l| match l {
                    Local::Counting(c) => Some(c),
                    _ => None,
                })
                .collect();
            Local::Counting(
                CountingChain::merge(&chains, op, DEFAULT_MAX_FILTER_BYTES)
                    .map_err(|e| refusal(e, names))?,
            )
        }
        Family::Cf => {
            // Empty filters (no shape in their snapshot) add nothing.
            let (filters, kept): (Vec<&CuckooFilter>, Vec<&str>) = locals
                .iter()
                .zip(names)
                .filter_map(|(l, n)| match l {
                    Local::Cuckoo(f) => Some((f, *n)),
                    _ => None,
                })
                .unzip();
            if filters.is_empty() {
                Local::EmptyCuckoo
            } else {
                Local::Cuckoo(
                    CuckooFilter::merge(
                        &filters,
                        DEFAULT_MAX_FILTER_BYTES,
                        CF_DEFAULT_MAX_EXPANSIONS,
                    )
                    .map_err(|e| refusal(e, &kept))?,
                )
            }
        }
    };
    Ok(merged)
}
