//! What replicas and the AOF receive, and where a write came from.

use super::args::Args;
use redis_module::{raw, Context, ContextFlags};
use std::ffi::{c_char, CString};
use std::ptr;

/// Whether the write being run comes from the master or from loading the AOF.
pub fn is_trusted(ctx: &Context) -> bool {
    ctx.get_flags()
        .intersects(ContextFlags::REPLICATED | ContextFlags::LOADING)
}

/// Replicates the running command as received (`RedisModule_ReplicateVerbatim`, without
/// the redis-module crate's wrapper).
pub fn replicate_verbatim(ctx: &Context) {
    unsafe { raw::RedisModule_ReplicateVerbatim.unwrap()(ctx.ctx) };
}

/// Logs a write from the master or the AOF that this server could not apply: the data
/// sets now differ, which must not go unnoticed.
pub fn log_divergence(ctx: &Context, args: &Args, error: &str) {
    let command = String::from_utf8_lossy(args.bytes(0));
    let key = match args.len() {
        0 | 1 => String::new(),
        _ => String::from_utf8_lossy(args.bytes(1)).into_owned(),
    };
    ctx.log_warning(&format!(
        "redbloom: {command} {key} from the master or the AOF failed here ({error}); \
         this server's data now differs from the source"
    ));
}
/// One argument of a replicated command.
pub enum Replicated<'a> {
    /// Argument `i` of the running command, passed on without a copy.
    Arg(usize),
    Bytes(&'a [u8]),
}

/// Sends `name parts…` to replicas and the AOF (`RedisModule_Replicate`; Redis wraps the
/// commands of one command in MULTI/EXEC when there are several).
pub fn replicate(ctx: &Context, args: &Args, name: &str, parts: &[Replicated]) {
    let Ok(name) = CString::new(name) else {
        return;
    };
    let mut created = Vec::new();
    let argv: Vec<*mut raw::RedisModuleString> = parts
        .iter()
        .map(|part| match part {
            Replicated::Arg(i) => args.raw(*i),
            Replicated::Bytes(bytes) => {
                let s = unsafe {
                    raw::RedisModule_CreateString.unwrap()(
                        ptr::null_mut(),
                        bytes.as_ptr().cast::<c_char>(),
                        bytes.len(),
                    )
                };
                created.push(s);
                s
            }
        })
        .collect();
    // "v": a vector of strings; Redis keeps its own reference to each.
    unsafe {
        raw::RedisModule_Replicate.unwrap()(
            ctx.ctx,
            name.as_ptr(),
            c"v".as_ptr(),
            argv.as_ptr(),
            argv.len(),
        )
    };
    for s in created {
        unsafe { raw::RedisModule_FreeString.unwrap()(ptr::null_mut(), s) };
    }
}
