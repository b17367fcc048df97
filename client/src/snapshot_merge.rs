//! `redbloom merge-snapshots`: snapshot files of filters built on many machines merged
//! here, with redbloom-core's merges — the very functions BF.MERGE, CBF.MERGE and CF.MERGE
//! run in the server, so the file written is the one `redbloom export` would write of the
//! server's merge of the same filters.

use crate::error::{Error, Result};
use crate::family::Family;
use crate::merge::{no_static_merge, MergeOptions};
use crate::snapshot::{decode, encode, Local};
use redbloom_core::bloom::Chain;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::CuckooFilter;
use redbloom_core::limits::{CF_DEFAULT_MAX_EXPANSIONS, DEFAULT_MAX_FILTER_BYTES};
use redbloom_core::merge::{MergeError, MergeOp};

/// One input: its name (for errors) and its bytes.
pub struct Input<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// The error of a merge the core refused; `names[n]` names operand `n`.
fn refusal(e: MergeError, names: &[&str]) -> Error {
    let name = |n: usize| names.get(n).copied().unwrap_or("?");
    Error::file(match e {
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

/// Merges the snapshot files `inputs` (at least one; all of one type and shape) into one
/// snapshot file's bytes, returning its family too. Every input is read and checked before
/// any merging: a file that is not an intact snapshot, files of different types or shapes,
/// `--intersect` of Cuckoo filters or of a multi-link filter are refused with an error
/// naming the file. An empty Cuckoo filter's snapshot holds no shape; it adds nothing.
pub fn merge_files(inputs: &[Input<'_>], options: MergeOptions) -> Result<(Family, Vec<u8>)> {
    let mut locals = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (family, chunks) = decode(input.name, input.bytes)?;
        let local = Local::from_chunks(family, &chunks, input.name)
            .map_err(|e| Error::file(e.message()))?;
        locals.push(local);
    }
    let Some(first) = locals.first() else {
        return Err(Error::usage("no snapshot to merge"));
    };
    let family = first.family();
    if let Some(at) = locals.iter().position(|l| l.family() != family) {
        return Err(Error::file(format!(
            "{}: a {} snapshot, and {} is a {} one: only filters of one type merge",
            inputs[at].name,
            locals[at].family().name(),
            inputs[0].name,
            family.name()
        )));
    }
    if family == Family::Cf && options.intersect {
        return Err(Error::usage(
            "--intersect applies to bf and cbf filters only (CF.MERGE is a union)",
        ));
    }
    let op = if options.intersect {
        MergeOp::Intersect
    } else {
        MergeOp::Union
    };
    let names: Vec<&str> = inputs.iter().map(|i| i.name).collect();
    let merged = match family {
        Family::Sf => return Err(no_static_merge()),
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
                    .map_err(|e| refusal(e, &names))?,
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
                    .map_err(|e| refusal(e, &names))?,
            )
        }
        Family::Cf => {
            // Empty filters (no shape in their snapshot) add nothing.
            let (filters, kept): (Vec<&CuckooFilter>, Vec<&str>) = locals
                .iter()
                .zip(&names)
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
    Ok((family, encode(family, &merged.chunks())))
}
