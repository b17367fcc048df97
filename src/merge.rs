//! What BF.MERGE, CBF.MERGE and CF.MERGE share (redbloom's own commands, issue 35): their
//! arguments `destkey numkeys key [key ...] [OVERRIDE] [INTERSECT]`, checked before any key
//! is read, and their errors. Each family's handler checks every source (missing, another
//! type, another shape) and the destination before anything is written; the result is
//! built apart and swapped in, so a refused merge leaves the destination as it was.
//!
//! A merge replicates as received (after `BF.BLOCKEDWRITE` for a BLOCKED result, as every
//! BLOCKED write): a replica or an AOF replay holds the same sources and destination at
//! that point of the stream, runs the same integer OR/AND/add kernels and the same
//! fingerprint placement (no randomness, no clock, no config: a write from the master or
//! the AOF has no ceiling), and so ends with the master's bytes. Sending the result
//! instead would put the whole filter (up to gigabytes) into the replication stream and
//! the AOF for every merge.

use crate::api::args::Args;
use crate::errors;
use redbloom_core::merge::MergeError;
use redis_module::RedisError;
use std::ops::Range;

/// The keyword that replaces the destination instead of merging it in.
pub const OVERRIDE: &str = "OVERRIDE";
/// The keyword of the intersection (BF, CBF).
pub const INTERSECT: &str = "INTERSECT";

/// A merge command's arguments after the name.
pub struct MergeRequest {
    pub numkeys: usize,
    /// Replace the destination (else an existing destination is merged in).
    pub override_dest: bool,
    pub intersect: bool,
}

impl MergeRequest {
    /// The arguments naming the sources.
    pub fn sources(&self) -> Range<usize> {
        3..3 + self.numkeys
    }

    /// Whether the destination is merged in: it is not replaced, and not a source already
    /// (a destination named among the sources counts once, as that source).
    pub fn merges_dest(&self, args: &Args) -> bool {
        !self.override_dest && !self.sources().any(|i| args.bytes(i) == args.bytes(1))
    }
}

/// Parses `destkey numkeys key… [OVERRIDE] [INTERSECT]` (INTERSECT only when
/// `intersect_allowed`): numkeys a positive integer, as many keys, then only the keywords
/// (any case, any order). Anything else after the keys means numkeys does not count them.
pub fn parse(args: &Args, intersect_allowed: bool) -> Result<MergeRequest, RedisError> {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let numkeys = args.integer(2).filter(|&n| n > 0);
    let numkeys = numkeys.ok_or(RedisError::Str(errors::MERGE_BAD_NUMKEYS))?;
    let given = args.len() - 3;
    if numkeys as u64 > given as u64 {
        return Err(RedisError::Str(errors::MERGE_NUMKEYS_MISMATCH));
    }
    let mut request = MergeRequest {
        numkeys: numkeys as usize,
        override_dest: false,
        intersect: false,
    };
    for i in 3 + request.numkeys..args.len() {
        let word = args.bytes(i);
        if word.eq_ignore_ascii_case(OVERRIDE.as_bytes()) {
            request.override_dest = true;
        } else if intersect_allowed && word.eq_ignore_ascii_case(INTERSECT.as_bytes()) {
            request.intersect = true;
        } else {
            return Err(RedisError::Str(errors::MERGE_NUMKEYS_MISMATCH));
        }
    }
    Ok(request)
}

/// An error naming the key in argument `i`: `prefix` then the key.
pub fn key_error(prefix: &str, args: &Args, i: usize) -> RedisError {
    RedisError::String(format!(
        "{prefix}{}",
        String::from_utf8_lossy(args.bytes(i))
    ))
}

/// The reply for a merge the core refused; `operand_args[n]` is the argument naming
/// operand `n`.
pub fn merge_error(e: MergeError, args: &Args, operand_args: &[usize]) -> RedisError {
    let key_at = |n: usize| operand_args.get(n).copied().unwrap_or(1);
    match e {
        MergeError::ShapeDiffers(n) => key_error(errors::MERGE_SHAPE_DIFFERS, args, key_at(n)),
        MergeError::MultiLink(n) => key_error(errors::MERGE_INTERSECT_MULTI_LINK, args, key_at(n)),
        MergeError::TooLarge => RedisError::Str(crate::write::too_large()),
        MergeError::NoSpace => RedisError::Str(errors::CF_MERGE_FULL),
        MergeError::HugeSubFilter => RedisError::Str(errors::CF_MERGE_HUGE),
        MergeError::MaxFilters => RedisError::Str(errors::MAX_EXPANSIONS_REACHED),
        MergeError::NoOperands | MergeError::OutOfMemory | MergeError::Overflow => {
            RedisError::Str(errors::INSUFFICIENT_MEMORY)
        }
    }
}
