//! `redbloom merge-snapshots`: snapshot files of filters built on many machines merged
//! here, with redbloom-core's merges — the very functions BF.MERGE, CBF.MERGE and CF.MERGE
//! run in the server, so the file written is the one `redbloom export` would write of the
//! server's merge of the same filters.

use crate::error::{Error, Result};
use crate::family::Family;
use crate::merge::MergeOptions;
use crate::snapshot::{decode, encode, Local};

/// One input: its name (for errors) and its bytes.
pub struct Input<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
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
    let names: Vec<&str> = inputs.iter().map(|i| i.name).collect();
    if locals.is_empty() {
        return Err(Error::usage("no snapshot to merge"));
    }
    let operands: Vec<&Local> = locals.iter().collect();
    let merged = redbloom_core::client_logic::merge::merge(&operands, &names, options.intersect)?;
    let family = merged.family();
    Ok((family, encode(family, &merged.chunks())))
}
