//! Commands: the table entry each family writes for a command, the `extern "C"` entry
//! point that runs its handler, and registration (flags, key spec, COMMAND DOCS, ACL
//! category).

use super::args::Args;
use super::command_docs::{self, ArgDoc, ArgKind};
use super::panic::catch_panic;
use super::replication::{is_trusted, log_divergence};
use super::replies::put_simple_string;
use crate::errors;
use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};
use std::ffi::{c_char, c_int, CString};
use std::ptr;

/// A command handler: parses `args`, runs the command, returns (or writes) the reply.
pub type Handler = fn(&Context, &Args) -> RedisResult;

/// Runs the handler of `H`; a panic becomes an error reply instead of crossing into Redis.
///
/// Inlined into each command's own [`entry`], with its handler: the handler is called
/// directly (not through a pointer) and its `Ok(NoReply)` needs no look at the result
/// in memory, so a command's fixed cost is the guard, the arguments' slice and the reply
/// (~60 instructions less than one shared function taking the handler as a pointer).
///
/// # Safety
/// `ctx`, `argv` and `argc` must be the arguments Redis passed to a command callback.
#[inline(always)]
unsafe fn run_command<H: Handles>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let context = Context::new(ctx);
    // Redis always passes the name at least; the other case is out of line (as a select
    // of both it was ~5 instructions more per command).
    let argv = if argc > 0 && !argv.is_null() {
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
    } else {
        no_arguments()
    };
    let args = Args { argv };
    // Only commands registered with `getkeys-api` (KeyAccess::WriteFromSources) are asked,
    // and only their entries look (`command_entry!(…, key_positions)`).
    if H::KEY_POSITIONS && is_key_positions_request(ctx) {
        report_key_positions(ctx, &args);
        return raw::REDISMODULE_OK as c_int;
    }
    // The reply is written inside the guard (one per command), where the handler
    // returned it: the result is not moved out through the guard's `Option`.
    let status = catch_panic("a command", || {
        send_reply(&context, &args, (H::HANDLER)(&context, &args))
    });
    super::events::publish_raised(&context, &args);
    // The log line says a command failed; no data was changed after the failure point.
    match status {
        Some(status) => status,
        None => send_error(&context, &args, RedisError::Str(errors::INTERNAL_ERROR)),
    }
}

#[cold]
#[inline(never)]
fn no_arguments() -> &'static [*mut raw::RedisModuleString] {
    &[]
}

/// Whether the server only asks for the command's keys (cluster routing).
fn is_key_positions_request(ctx: *mut raw::RedisModuleCtx) -> bool {
    match unsafe { raw::RedisModule_IsKeysPositionRequest } {
        Some(is_request) => (unsafe { is_request(ctx) }) != 0,
        None => false,
    }
}

/// Writes a handler's reply (unless it wrote it itself); an error on a write from the
/// master or the AOF is logged as a divergence. The usual results, `NoReply` (the handler
/// wrote the reply: arrays, doubles, booleans) and `+text`, are looked at in place: not
/// moved out of the result (a copy of its 56 bytes) nor dropped through its drop glue (a
/// call of ~20 instructions).
#[inline(always)]
fn send_reply(context: &Context, args: &Args, reply: RedisResult) -> c_int {
    match &reply {
        Ok(RedisValue::NoReply) => {}
        Ok(RedisValue::SimpleStringStatic(text)) => put_simple_string(context, text),
        _ => return send_other(context, args, reply),
    }
    std::mem::forget(reply);
    raw::REDISMODULE_OK as c_int
}

/// [`send_reply`] of any other result: out of line, so that a command's own function
/// holds only its usual path.
#[inline(never)]
fn send_other(context: &Context, args: &Args, reply: RedisResult) -> c_int {
    match reply {
        Ok(value) => context.reply(Ok(value)) as c_int,
        Err(e) => send_error(context, args, e),
    }
}

/// [`send_reply`] of an error.
#[cold]
#[inline(never)]
fn send_error(context: &Context, args: &Args, e: RedisError) -> c_int {
    if is_trusted(context) {
        log_divergence(context, args, &e.to_string());
    }
    context.reply(Err(e)) as c_int
}

/// Sends a handler's result as the reply (unless the handler wrote it: `NoReply`): a
/// blocked command's answer, [`super::blocking`].
pub(super) fn write_reply(context: &Context, reply: RedisResult) -> c_int {
    match reply {
        Ok(RedisValue::NoReply) => raw::REDISMODULE_OK as c_int,
        Ok(RedisValue::SimpleStringStatic(text)) => {
            put_simple_string(context, text);
            raw::REDISMODULE_OK as c_int
        }
        reply => context.reply(reply) as c_int,
    }
}

/// The keys of a [`KeyAccess::WriteFromSources`] command, for the server's key-position
/// request: argument 1, then as many keys from argument 3 on as argument 2 counts (those
/// present). Cluster routing asks this of a module command with `getkeys-api`, so a source
/// in another slot than the destination is `CROSSSLOT`; without it Redis 7.0, Redis 8.2
/// and Valkey 8.1 route by the first-key range and never see the sources.
fn report_key_positions(ctx: *mut raw::RedisModuleCtx, args: &Args) {
    let Some(key_at) = (unsafe { raw::RedisModule_KeyAtPos }) else {
        return;
    };
    if args.len() > 1 {
        unsafe { key_at(ctx, 1) };
    }
    let count = if args.len() > 2 {
        args.integer(2).unwrap_or(0)
    } else {
        0
    };
    let last = args
        .len()
        .min(3usize.saturating_add(count.clamp(0, i64::MAX) as usize));
    for position in 3..last {
        unsafe { key_at(ctx, position as c_int) };
    }
}

/// A handler known at compile time, so that [`entry`] can be its own `extern "C"` function
/// (implemented by [`command_entry!`](crate::command_entry)).
pub trait Handles {
    const HANDLER: Handler;
    /// Whether the command answers key-position requests (a [`KeyAccess::WriteFromSources`]
    /// command, registered with `getkeys-api`).
    const KEY_POSITIONS: bool = false;
}

/// The `extern "C"` callback Redis calls for the command `H` handles.
///
/// # Safety
/// Only Redis calls it, with a command callback's arguments.
pub unsafe extern "C" fn entry<H: Handles>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: these are the callback's own arguments from Redis.
    unsafe { run_command::<H>(ctx, argv, argc) }
}

/// The `extern "C"` entry point of a handler, for [`Command::handler`]; with
/// `key_positions` for a [`KeyAccess::WriteFromSources`] command. It expands to no
/// `unsafe` code: the callback is [`entry`], instantiated for a type naming the handler.
#[macro_export]
macro_rules! command_entry {
    ($handler:path) => {{
        struct Named;
        impl $crate::api::commands::Handles for Named {
            const HANDLER: $crate::api::commands::Handler = $handler;
        }
        $crate::api::commands::entry::<Named> as $crate::api::commands::CommandFn
    }};
    ($handler:path, key_positions) => {{
        struct Named;
        impl $crate::api::commands::Handles for Named {
            const HANDLER: $crate::api::commands::Handler = $handler;
            const KEY_POSITIONS: bool = true;
        }
        $crate::api::commands::entry::<Named> as $crate::api::commands::CommandFn
    }};
}

pub type CommandFn = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *mut *mut raw::RedisModuleString,
    c_int,
) -> c_int;

/// How a command touches its keys (key specs: cluster routing, ACL key permissions). The
/// first key is argument 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAccess {
    Read,
    Write,
    /// Argument 1 is written; argument 2 is a count of keys read, from argument 3 on
    /// (CMS.MERGE, TDIGEST.MERGE; as ZUNIONSTORE's key specs).
    WriteFromSources,
}

/// Everything Redis is told about one command: one entry of a family's command table.
pub struct Command {
    /// Lower case, with the family's prefix (`bf.add`).
    pub name: &'static str,
    /// From [`command_entry!`](crate::command_entry).
    pub handler: CommandFn,
    /// Redis command flags, space-separated (`write deny-oom`, `readonly fast`).
    pub flags: &'static str,
    /// Redis' arity: the argument count with the name, negative for "at least".
    pub arity: i32,
    /// How the command touches its key (argument 1).
    pub key: KeyAccess,
    /// The family's ACL category (`bloom`, `cuckoo`, `cbf`, `wbf`).
    pub acl_category: &'static str,
    pub summary: &'static str,
    pub complexity: &'static str,
    /// Argument syntax for COMMAND DOCS (see [`command_docs`]).
    pub args: &'static str,
    /// The RedisBloom version that introduced the command (COMMAND DOCS `since`).
    pub since: &'static str,
}

/// C strings and argument arrays that must outlive a `SetCommandInfo` call.
#[derive(Default)]
struct RawArgs {
    strings: Vec<CString>,
    arrays: Vec<Vec<raw::RedisModuleCommandArg>>,
    /// Key arguments seen so far: the n-th names key spec n.
    keys: c_int,
}

impl RawArgs {
    fn text(&mut self, s: &str) -> Result<*const c_char, String> {
        let c = CString::new(s).map_err(|e| e.to_string())?;
        let p = c.as_ptr();
        self.strings.push(c);
        Ok(p)
    }

    /// A zero-terminated argument array for `docs`, kept alive by `self`.
    fn array(&mut self, docs: &[ArgDoc]) -> Result<*mut raw::RedisModuleCommandArg, String> {
        let mut array: Vec<raw::RedisModuleCommandArg> = Vec::with_capacity(docs.len() + 1);
        for doc in docs {
            let mut arg: raw::RedisModuleCommandArg = unsafe { std::mem::zeroed() };
            arg.name = self.text(&doc.name)?;
            arg.type_ = match doc.kind {
                ArgKind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                ArgKind::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                ArgKind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                ArgKind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
                ArgKind::PureToken => {
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN
                }
                ArgKind::OneOf => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
            };
            arg.key_spec_index = if doc.kind == ArgKind::Key {
                self.keys += 1;
                self.keys - 1
            } else {
                -1
            };
            if let Some(token) = &doc.token {
                arg.token = self.text(token)?;
            }
            let mut flags = 0;
            if doc.optional {
                flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
            }
            if doc.multiple {
                flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
            }
            arg.flags = flags as c_int;
            if !doc.subargs.is_empty() {
                arg.subargs = self.array(&doc.subargs)?;
            }
            array.push(arg);
        }
        array.push(unsafe { std::mem::zeroed() });
        let p = array.as_mut_ptr();
        self.arrays.push(array);
        Ok(p)
    }
}

/// Declares the module's ACL categories where the server can (Redis ≥ 7.4).
pub fn add_acl_categories(ctx: &Context, names: &[&str]) -> Result<(), String> {
    let Some(add) = (unsafe { raw::RedisModule_AddACLCategory }) else {
        return Ok(());
    };
    for name in names {
        let c = CString::new(*name).map_err(|e| e.to_string())?;
        if unsafe { add(ctx.ctx, c.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            return Err(format!("could not add the ACL category {name}"));
        }
    }
    Ok(())
}

static COMMAND_INFO_VERSION: raw::RedisModuleCommandInfoVersion =
    raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };

/// Registers a command (key at argument 1) and, where the server has the API, its arity,
/// key spec and documentation.
pub fn register_command(ctx: &Context, spec: &Command) -> Result<(), String> {
    let name = CString::new(spec.name).map_err(|e| e.to_string())?;
    // A command with source keys answers the server's key-position requests (cluster
    // routing: see `report_key_positions`).
    let flags = match spec.key {
        KeyAccess::WriteFromSources => format!("{} getkeys-api", spec.flags),
        KeyAccess::Read | KeyAccess::Write => spec.flags.to_string(),
    };
    let flags = CString::new(flags).map_err(|e| e.to_string())?;
    let status = unsafe {
        raw::RedisModule_CreateCommand.unwrap()(
            ctx.ctx,
            name.as_ptr(),
            Some(spec.handler),
            flags.as_ptr(),
            1,
            1,
            1,
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(format!("could not register {}", spec.name));
    }
    let (Some(get_command), Some(set_info)) =
        (unsafe { (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo) })
    else {
        return Ok(());
    };
    let command = unsafe { get_command(ctx.ctx, name.as_ptr()) };
    if command.is_null() {
        return Err(format!("could not find {} after registering it", spec.name));
    }
    let key_flags = match spec.key {
        KeyAccess::Read => raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
        KeyAccess::Write | KeyAccess::WriteFromSources => {
            raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE
        }
    };
    let mut key_specs: [raw::RedisModuleCommandKeySpec; 3] = unsafe { std::mem::zeroed() };
    if spec.key == KeyAccess::WriteFromSources {
        // The sources: the count at argument 2, then that many keys.
        key_specs[1].flags =
            u64::from(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS);
        key_specs[1].begin_search_type =
            raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        key_specs[1].bs.index.pos = 2;
        key_specs[1].find_keys_type =
            raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
        key_specs[1].fk.keynum.keynumidx = 0;
        key_specs[1].fk.keynum.firstkey = 1;
        key_specs[1].fk.keynum.keystep = 1;
    }
    key_specs[0].flags = u64::from(key_flags);
    key_specs[0].begin_search_type =
        raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    key_specs[0].bs.index.pos = 1;
    key_specs[0].find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    key_specs[0].fk.range.lastkey = 0;
    key_specs[0].fk.range.keystep = 1;
    key_specs[0].fk.range.limit = 0;
    let summary = CString::new(spec.summary).map_err(|e| e.to_string())?;
    let complexity = CString::new(spec.complexity).map_err(|e| e.to_string())?;
    let since = CString::new(spec.since).map_err(|e| e.to_string())?;
    let docs = command_docs::parse(spec.args).map_err(|e| format!("{}: {e}", spec.name))?;
    let mut keep = RawArgs::default();
    let args = keep.array(&docs)?;
    let info = raw::RedisModuleCommandInfo {
        version: &COMMAND_INFO_VERSION,
        summary: summary.as_ptr(),
        complexity: complexity.as_ptr(),
        since: since.as_ptr(),
        history: ptr::null_mut(),
        tips: ptr::null(),
        arity: spec.arity,
        key_specs: key_specs.as_mut_ptr(),
        args,
    };
    if unsafe { set_info(command, &info) } != raw::REDISMODULE_OK as c_int {
        return Err(format!("could not set the command info of {}", spec.name));
    }
    // Module categories exist only where they can be declared (Redis ≥ 7.4).
    let can_declare = unsafe { raw::RedisModule_AddACLCategory }.is_some();
    if let (true, Some(set_categories)) = (can_declare, unsafe {
        raw::RedisModule_SetCommandACLCategories
    }) {
        let categories = CString::new(spec.acl_category).map_err(|e| e.to_string())?;
        if unsafe { set_categories(command, categories.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            return Err(format!("could not set the ACL category of {}", spec.name));
        }
    }
    Ok(())
}
