//! CF.MERGE destkey numkeys key [key ...] [OVERRIDE]: every fingerprint of the sources
//! (and of the destination, unless OVERRIDE) in a new filter of their shape, swapped in
//! only when all fit (see [`crate::merge`] for the arguments, the checks and why the
//! command replicates as received).

use crate::api::args::Args;
use crate::api::events::notify_write;
use crate::api::keys::{Key, KeyState};
use crate::config;
use crate::errors;
use crate::merge::{key_error, merge_error, parse};
use crate::stats::tracked;
use crate::types::CUCKOO_TYPE;
use crate::write::Write;
use redbloom_core::cuckoo::{CuckooFilter, MAX_SUB_FILTERS};
use redis_module::{Context, RedisError, RedisResult, RedisValue};

/// CF.MERGE: every check before anything is written; the result may grow as CF.ADD
/// grows a filter (up to `cf-max-expansions` sub-filters and the memory ceiling, for a
/// client's write).
pub fn merge(ctx: &Context, args: &Args) -> RedisResult {
    let request = parse(args, false)?;
    let mut write = Write::new(ctx, args);
    let merged = {
        let dest = Key::open(ctx, args, 1, false);
        let dest = dest.state_shared::<CuckooFilter>(&CUCKOO_TYPE)?;
        let keys: Vec<Key> = request
            .sources()
            .map(|i| Key::open(ctx, args, i, false))
            .collect();
        let mut operands: Vec<&CuckooFilter> = Vec::with_capacity(keys.len() + 1);
        let mut operand_args: Vec<usize> = Vec::with_capacity(keys.len() + 1);
        for (key, i) in keys.iter().zip(request.sources()) {
            let filter = key.state_shared::<CuckooFilter>(&CUCKOO_TYPE)?;
            let filter = filter.ok_or(RedisError::Str(errors::NOT_FOUND))?;
            if operands
                .first()
                .is_some_and(|first| !first.same_shape(filter))
            {
                return Err(key_error(errors::MERGE_SHAPE_DIFFERS, args, i));
            }
            operands.push(filter);
            operand_args.push(i);
        }
        if let Some(dest) = dest.filter(|_| request.merges_dest(args)) {
            if !operands[0].same_shape(dest) {
                return Err(key_error(errors::MERGE_SHAPE_DIFFERS, args, 1));
            }
            operands.insert(0, dest);
            operand_args.insert(0, 1);
        }
        let max_filters = if write.is_trusted() {
            MAX_SUB_FILTERS
        } else {
            usize::try_from(config::CF_MAX_EXPANSIONS.get())
                .unwrap_or(MAX_SUB_FILTERS)
                .min(MAX_SUB_FILTERS)
        };
        CuckooFilter::merge(&operands, write.max_bytes(), max_filters)
            .map_err(|e| merge_error(e, args, &operand_args))?
    };
    let key = Key::open(ctx, args, 1, true);
    match key.state::<CuckooFilter>(&CUCKOO_TYPE) {
        KeyState::Ours(old) => tracked(old, |old| *old = merged),
        _ => {
            key.set(&CUCKOO_TYPE, Box::new(merged))?;
        }
    }
    write.as_received();
    drop(write);
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}
