//! BF.MERGE and CBF.MERGE destkey numkeys key [key ...] [OVERRIDE] [INTERSECT], generic
//! over [`BloomKind`] (see [`crate::merge`] for the arguments, the checks and why the
//! command replicates as received).

use super::{error, BloomKind};
use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{Key, KeyState};
use crate::errors;
use crate::merge::{key_error, merge_error, parse};
use crate::stats::tracked;
use crate::write::Write;
use redbloom_core::merge::MergeOp;
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// Checks one operand (in argument `i`) against the first source: its shape, and a single
/// link for INTERSECT.
fn check<F: BloomKind>(
    args: &Args,
    first: &F,
    filter: &F,
    i: usize,
    intersect: bool,
) -> Result<(), RedisError> {
    if !first.same_shape(filter) {
        return Err(key_error(errors::MERGE_SHAPE_DIFFERS, args, i));
    }
    if intersect && filter.link_count() != 1 {
        return Err(key_error(errors::MERGE_INTERSECT_MULTI_LINK, args, i));
    }
    Ok(())
}

/// BF.MERGE / CBF.MERGE: the sources (and the destination, unless OVERRIDE) merged into
/// the destination; every check before anything is written.
pub fn merge<F: BloomKind>(ctx: &Context, args: &Args) -> RedisResult {
    let request = parse(args, true)?;
    let op = if request.intersect {
        MergeOp::Intersect
    } else {
        MergeOp::Union
    };
    let mut write = Write::new(ctx, args);
    let merged = {
        let dest = Key::open(ctx, args, 1, false);
        let dest = dest.state_shared_in::<F>(F::data_types())?;
        let keys: Vec<Key> = request
            .sources()
            .map(|i| Key::open(ctx, args, i, false))
            .collect();
        let mut operands: Vec<&F> = Vec::with_capacity(keys.len() + 1);
        let mut operand_args: Vec<usize> = Vec::with_capacity(keys.len() + 1);
        for (key, i) in keys.iter().zip(request.sources()) {
            let filter = key.state_shared_in::<F>(F::data_types())?;
            let filter = filter.ok_or(error(errors::NOT_FOUND))?;
            check(
                args,
                operands.first().copied().unwrap_or(filter),
                filter,
                i,
                request.intersect,
            )?;
            operands.push(filter);
            operand_args.push(i);
        }
        if let Some(dest) = dest.filter(|_| request.merges_dest(args)) {
            check(args, operands[0], dest, 1, request.intersect)?;
            operands.insert(0, dest);
            operand_args.insert(0, 1);
        }
        F::merge(&operands, op, write.max_bytes())
            .map_err(|e| merge_error(e, args, &operand_args))?
    };
    let key = Key::open(ctx, args, 1, true);
    write.marked_if(merged.is_blocked());
    let stored_type = merged.stored_type();
    match key.state_in::<F>(F::data_types()) {
        KeyState::Ours(old) if std::ptr::eq(old.stored_type(), stored_type) => {
            tracked(old, |old| *old = merged);
        }
        _ => {
            key.set(stored_type, Box::new(merged))?;
        }
    }
    write.as_received();
    drop(write);
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
