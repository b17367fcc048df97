//! The one place with `unsafe`: module-API calls the `redis-module` crate has no safe
//! wrapper for (key access by type, argument parsing without copies, type callbacks,
//! AOF emission, command info, the allocator). Everything above this file is safe Rust.

use super::command_docs::{self, ArgDoc, ArgKind};
use super::stats::{Snapshot, TypeStats};
use redbloom_core::rdb::{FieldReader, FieldWriter};
use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisResult, RedisValue};
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

// ---------------------------------------------------------------------------------------
// Allocator

/// Redis' allocator once the module is loaded (so `used_memory`, `maxmemory` and MEMORY
/// USAGE see filters), the system allocator before that and in tests and benchmarks.
/// Uses `RedisModule_TryAlloc` where the server has it, so a refused allocation is an
/// error the caller handles rather than a server abort.
pub struct ModuleAllocator;

fn redis_size(layout: Layout) -> usize {
    // jemalloc aligns a block to its size class; rounding the size up to the alignment
    // gives the alignment the layout asks for (as the redis-module crate does).
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

/// Allocations from this size on are checked against the memory the machine can give.
const LARGE_ALLOCATION: usize = 64 << 20;

/// Whether `size` bytes can be had at all. Redis' jemalloc maps memory with MAP_NORESERVE
/// when the kernel overcommits (Linux' default), so a 1 TiB request "succeeds" — and the
/// server is killed by the OOM killer as soon as the filter's pages are zeroed. A request
/// larger than the memory the kernel reports available (free RAM and swap) is refused
/// instead, so it becomes an error reply.
fn can_have(size: usize) -> bool {
    size < LARGE_ALLOCATION
        || std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| available_memory(&text))
            .map_or(true, |available| size as u64 <= available)
}

/// MemAvailable + SwapFree of a `/proc/meminfo` text, in bytes.
fn available_memory(meminfo: &str) -> Option<u64> {
    let field = |name: &str| {
        meminfo.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.trim().strip_suffix("kB")?;
            value.trim().parse::<u64>().ok()
        })
    };
    let memory = field("MemAvailable:")?;
    let swap = field("SwapFree:").unwrap_or(0);
    Some(memory.saturating_add(swap).saturating_mul(1024))
}

unsafe impl GlobalAlloc for ModuleAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !can_have(layout.size()) {
            return ptr::null_mut();
        }
        match (raw::RedisModule_TryAlloc, raw::RedisModule_Alloc) {
            (Some(try_alloc), _) => try_alloc(redis_size(layout)).cast(),
            (None, Some(alloc)) => alloc(redis_size(layout)).cast(),
            (None, None) => System.alloc(layout),
        }
    }

    /// Zeroed by the allocator, never by writing zeros: jemalloc serves a large calloc
    /// from fresh (or purged) pages it knows are zero, so a filter's pages become
    /// resident only as bits are set, and reserving one costs the main thread no more
    /// than RedisBloom's calloc. `RedisModule_TryCalloc` (Valkey 8.1 exports it) refuses
    /// with NULL; Redis 7.0 has only `RedisModule_Calloc`, which aborts the server on
    /// failure, so there `can_have` is what keeps an impossible size an error reply.
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !can_have(layout.size()) {
            return ptr::null_mut();
        }
        match (raw::RedisModule_TryCalloc, raw::RedisModule_Calloc) {
            (Some(try_calloc), _) => try_calloc(1, redis_size(layout)).cast(),
            (None, Some(calloc)) => calloc(1, redis_size(layout)).cast(),
            (None, None) => System.alloc_zeroed(layout),
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        match raw::RedisModule_Free {
            Some(free) => free(p.cast()),
            None => System.dealloc(p, layout),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Arguments

/// A command's arguments, borrowed from Redis without copying or reference counting.
pub struct Args<'a> {
    argv: &'a [*mut raw::RedisModuleString],
}

impl<'a> Args<'a> {
    pub fn len(&self) -> usize {
        self.argv.len()
    }

    pub fn is_empty(&self) -> bool {
        self.argv.is_empty()
    }

    /// The bytes of argument `i`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        let mut len = 0usize;
        unsafe {
            let p = raw::RedisModule_StringPtrLen.unwrap()(self.argv[i], &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }

    /// Argument `i` as Redis parses a 64-bit integer (rejects "+5", "010", spaces, ...).
    pub fn integer(&self, i: usize) -> Option<i64> {
        let mut value: std::os::raw::c_longlong = 0;
        let status =
            unsafe { raw::RedisModule_StringToLongLong.unwrap()(self.argv[i], &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// Argument `i` as Redis parses a double (accepts "inf" and exponents, rejects "nan").
    pub fn double(&self, i: usize) -> Option<f64> {
        let mut value = 0f64;
        let status = unsafe { raw::RedisModule_StringToDouble.unwrap()(self.argv[i], &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    pub(crate) fn raw(&self, i: usize) -> *mut raw::RedisModuleString {
        self.argv[i]
    }
}

// ---------------------------------------------------------------------------------------
// Keys

/// What a key holds, as far as one filter type is concerned.
pub enum KeyState<'k, T> {
    Empty,
    Ours(&'k mut T),
    /// Another Redis type, or another module type.
    Other,
}

/// An open key; closed on drop.
pub struct Key {
    handle: *mut raw::RedisModuleKey,
}

impl Key {
    /// Opens argument `i` of `args` for reading, or for reading and writing.
    pub fn open(ctx: &Context, args: &Args, i: usize, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        let handle =
            unsafe { raw::RedisModule_OpenKey.unwrap()(ctx.ctx, args.raw(i), mode as c_int) };
        Key {
            handle: handle.cast(),
        }
    }

    pub fn state<T>(&self, of: &RedisType) -> KeyState<'_, T> {
        if self.handle.is_null() {
            return KeyState::Empty;
        }
        unsafe {
            let key_type = raw::RedisModule_KeyType.unwrap()(self.handle);
            if key_type == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
                return KeyState::Empty;
            }
            if key_type != raw::REDISMODULE_KEYTYPE_MODULE as c_int
                || raw::RedisModule_ModuleTypeGetType.unwrap()(self.handle) != *of.raw_type.borrow()
            {
                return KeyState::Other;
            }
            let value = raw::RedisModule_ModuleTypeGetValue.unwrap()(self.handle).cast::<T>();
            match value.as_mut() {
                Some(value) => KeyState::Ours(value),
                None => KeyState::Other,
            }
        }
    }

    /// Stores a new value in an empty key opened for writing; returns it for further use.
    /// The value then belongs to Redis and lives as long as the key, not as `self`.
    #[allow(clippy::mut_from_ref)]
    pub fn set<T: ModuleValue>(&self, of: &RedisType, value: Box<T>) -> Result<&mut T, RedisError> {
        let raw_value = Box::into_raw(value);
        let status = unsafe {
            raw::RedisModule_ModuleTypeSetValue.unwrap()(
                self.handle,
                *of.raw_type.borrow(),
                raw_value.cast(),
            )
        };
        if status == raw::REDISMODULE_OK as c_int {
            let value = unsafe { &mut *raw_value };
            T::stats().created(value.snapshot());
            Ok(value)
        } else {
            drop(unsafe { Box::from_raw(raw_value) });
            Err(RedisError::Str("ERR could not store the filter"))
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            unsafe { raw::RedisModule_CloseKey.unwrap()(self.handle) };
        }
    }
}

// ---------------------------------------------------------------------------------------
// Commands

pub type Handler = fn(&Context, &Args) -> RedisResult;

/// The text every caught panic is logged with, at warning level (the integration-test
/// harness fails a test whose server logged it).
pub const CAUGHT_PANIC_LOG: &str = "redbloom: caught a panic";

/// Runs `f`, turning a panic into `None` logged at warning level with `CAUGHT_PANIC_LOG`,
/// where it was caught (`place`) and the panic's message.
fn catch_panic<R>(place: &str, f: impl FnOnce() -> R) -> Option<R> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            redis_module::logging::log_warning(format!("{CAUGHT_PANIC_LOG} in {place}: {message}"));
        })
        .ok()
}

/// Runs a command handler; a panic becomes an error reply instead of crossing into Redis.
///
/// # Safety
/// `ctx`, `argv` and `argc` must be the arguments Redis passed to a command callback.
pub unsafe fn run_command(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    let context = Context::new(ctx);
    let argv = if argv.is_null() || argc <= 0 {
        &[][..]
    } else {
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
    };
    let args = Args { argv };
    // The log line says a command failed; no data was changed after the failure point.
    let reply = catch_panic("a command", || handler(&context, &args))
        .unwrap_or(Err(RedisError::Str("ERR internal error in redbloom")));
    if let Err(e) = &reply {
        if super::write::is_trusted(&context) {
            super::write::log_divergence(&context, &args, &e.to_string());
        }
    }
    context.reply(reply) as c_int
}

/// Declares an `extern "C"` entry point for a handler.
#[macro_export]
macro_rules! command_entry {
    ($handler:path) => {{
        extern "C" fn entry(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::ffi::c_int,
        ) -> std::ffi::c_int {
            // SAFETY: these are the callback's own arguments from Redis.
            unsafe { $crate::redis::ffi::run_command(ctx, argv, argc, $handler) }
        }
        entry as $crate::redis::ffi::CommandFn
    }};
}

pub type CommandFn =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// How a command touches its key (key specs: cluster routing, ACL key permissions).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum KeyAccess {
    Read,
    Write,
}

/// Everything Redis is told about one command.
pub struct CommandSpec {
    pub name: &'static str,
    pub entry: CommandFn,
    pub flags: &'static str,
    pub arity: i32,
    pub key: KeyAccess,
    pub summary: &'static str,
    pub complexity: &'static str,
    pub since: &'static str,
    /// Argument syntax for COMMAND DOCS (see `command_docs`).
    pub args: &'static str,
    /// The module's ACL category for the command family (`bloom`, `cuckoo`, `cbf`).
    pub acl_category: &'static str,
}

/// C strings and argument arrays that must outlive a `SetCommandInfo` call.
#[derive(Default)]
struct RawArgs {
    strings: Vec<CString>,
    arrays: Vec<Vec<raw::RedisModuleCommandArg>>,
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
            arg.key_spec_index = if doc.kind == ArgKind::Key { 0 } else { -1 };
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
pub fn register_command(ctx: &Context, spec: &CommandSpec) -> Result<(), String> {
    let name = CString::new(spec.name).map_err(|e| e.to_string())?;
    let flags = CString::new(spec.flags).map_err(|e| e.to_string())?;
    let status = unsafe {
        raw::RedisModule_CreateCommand.unwrap()(
            ctx.ctx,
            name.as_ptr(),
            Some(spec.entry),
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
        KeyAccess::Write => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
    };
    let mut key_specs: [raw::RedisModuleCommandKeySpec; 2] = unsafe { std::mem::zeroed() };
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

// ---------------------------------------------------------------------------------------
// Replies: RESP2 shapes for RESP2 clients, RESP3 types for RESP3 clients

/// Which RESP3 types a command's reply may use. RedisBloom 2.6+ answers a client that said
/// `HELLO 3` with booleans, maps and nulls, and every other client with 2.4.20's RESP2
/// shapes; each type is used only where the server has its reply call (COMPAT §0.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    booleans: bool,
    maps: bool,
}

impl Protocol {
    /// The protocol of the client the command in `ctx` replies to.
    pub fn of(ctx: &Context) -> Protocol {
        let flags = unsafe { raw::RedisModule_GetContextFlags.map_or(0, |get| get(ctx.ctx)) };
        let resp3 = flags as u32 & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0;
        let (reply_bool, reply_map, reply_null) = unsafe {
            (
                raw::RedisModule_ReplyWithBool,
                raw::RedisModule_ReplyWithMap,
                raw::RedisModule_ReplyWithNull,
            )
        };
        Protocol {
            booleans: resp3 && reply_bool.is_some(),
            maps: resp3 && reply_map.is_some() && reply_null.is_some(),
        }
    }
}

fn put_integer(ctx: &Context, value: i64) {
    unsafe { raw::RedisModule_ReplyWithLongLong.unwrap()(ctx.ctx, value) };
}

/// `#t`/`#f` for RESP3 clients, `:1`/`:0` for RESP2 ones.
fn put_bool(ctx: &Context, protocol: Protocol, value: bool) {
    match unsafe { raw::RedisModule_ReplyWithBool } {
        Some(reply_bool) if protocol.booleans => unsafe {
            reply_bool(ctx.ctx, c_int::from(value));
        },
        _ => put_integer(ctx, i64::from(value)),
    }
}

/// Replies with one boolean (RESP2: the integer 1 or 0).
pub fn reply_bool(ctx: &Context, value: bool) -> RedisResult {
    put_bool(ctx, Protocol::of(ctx), value);
    Ok(RedisValue::NoReply)
}

/// An array reply written element by element, without building the elements first.
pub struct ArrayReply<'c> {
    ctx: &'c Context,
    protocol: Protocol,
    count: usize,
    postponed: bool,
}

impl<'c> ArrayReply<'c> {
    /// An array of `len` elements.
    pub fn with_len(ctx: &'c Context, len: usize) -> Self {
        unsafe { raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, len as std::os::raw::c_long) };
        ArrayReply {
            ctx,
            protocol: Protocol::of(ctx),
            count: 0,
            postponed: false,
        }
    }

    /// An array whose length is known only at the end (`finish` sets it).
    pub fn postponed(ctx: &'c Context) -> Self {
        unsafe {
            raw::RedisModule_ReplyWithArray.unwrap()(
                ctx.ctx,
                raw::REDISMODULE_POSTPONED_LEN as std::os::raw::c_long,
            )
        };
        ArrayReply {
            ctx,
            protocol: Protocol::of(ctx),
            count: 0,
            postponed: true,
        }
    }

    pub fn integer(&mut self, value: i64) {
        put_integer(self.ctx, value);
        self.count += 1;
    }

    /// A boolean element (RESP2: the integer 1 or 0).
    pub fn boolean(&mut self, value: bool) {
        put_bool(self.ctx, self.protocol, value);
        self.count += 1;
    }

    /// A boolean element where a failure is false in RESP3 but its own integer in RESP2
    /// (CF.INSERT: `None`, no space, is -1 there).
    pub fn boolean_or(&mut self, value: Option<bool>, resp2_failure: i64) {
        match value {
            None if !self.protocol.booleans => self.integer(resp2_failure),
            value => self.boolean(value.unwrap_or(false)),
        }
    }

    pub fn error(&mut self, text: &'static str) {
        let text = CString::new(text).unwrap_or_default();
        unsafe { raw::RedisModule_ReplyWithError.unwrap()(self.ctx.ctx, text.as_ptr()) };
        self.count += 1;
    }

    /// Ends the array; the command's reply is complete.
    pub fn finish(self) -> RedisResult {
        if self.postponed {
            unsafe {
                raw::RedisModule_ReplySetArrayLength.unwrap()(
                    self.ctx.ctx,
                    self.count as std::os::raw::c_long,
                )
            };
        }
        Ok(RedisValue::NoReply)
    }
}

/// Replies with an array of integers without building an intermediate vector of values.
pub fn reply_integers(ctx: &Context, values: impl ExactSizeIterator<Item = i64>) -> RedisResult {
    let mut reply = ArrayReply::with_len(ctx, values.len());
    values.for_each(|v| reply.integer(v));
    reply.finish()
}

/// Replies with an array of booleans (RESP2: integers 1 and 0).
pub fn reply_bools(ctx: &Context, values: impl ExactSizeIterator<Item = bool>) -> RedisResult {
    let mut reply = ArrayReply::with_len(ctx, values.len());
    values.for_each(|v| reply.boolean(v));
    reply.finish()
}

/// One labelled field of an INFO-style reply; `None` is a null value.
pub type Field = (&'static str, Option<i64>);

/// How an INFO-style reply looks to a RESP2 client (RESP3 clients always get a map of
/// label → value, in the given order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resp2Fields {
    /// A flat array: label, value, label, value, ... (BF.INFO key, CF.INFO key).
    Labelled,
    /// The values alone (BF.INFO key FIELD: `[value]`).
    ValuesOnly,
}

/// Replies with labelled fields: a RESP3 map, or the RESP2 array `resp2` describes.
/// Labels are simple strings and a `None` value is null (RESP2: a nil bulk string).
pub fn reply_fields(ctx: &Context, fields: &[Field], resp2: Resp2Fields) -> RedisResult {
    let values: Vec<(&'static str, FieldValue)> = fields
        .iter()
        .map(|&(label, value)| (label, value.map_or(FieldValue::Null, FieldValue::Integer)))
        .collect();
    reply_field_values(ctx, &values, resp2)
}

/// A value of [`reply_field_values`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValue {
    Integer(i64),
    /// A RESP3 double; RESP2: a bulk string of its shortest decimal form.
    Double(f64),
    Null,
}

/// [`reply_fields`] with values of any [`FieldValue`] kind.
pub fn reply_field_values(
    ctx: &Context,
    fields: &[(&'static str, FieldValue)],
    resp2: Resp2Fields,
) -> RedisResult {
    let protocol = Protocol::of(ctx);
    let len = fields.len() as std::os::raw::c_long;
    let labels = protocol.maps || resp2 == Resp2Fields::Labelled;
    unsafe {
        match raw::RedisModule_ReplyWithMap {
            Some(reply_map) if protocol.maps => reply_map(ctx.ctx, len),
            _ if labels => raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, 2 * len),
            _ => raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, len),
        };
    }
    for &(label, value) in fields {
        if labels {
            let label = CString::new(label).unwrap_or_default();
            unsafe { raw::RedisModule_ReplyWithSimpleString.unwrap()(ctx.ctx, label.as_ptr()) };
        }
        match value {
            FieldValue::Integer(value) => put_integer(ctx, value),
            FieldValue::Double(value) => unsafe {
                raw::RedisModule_ReplyWithDouble.unwrap()(ctx.ctx, value);
            },
            // The server writes `_` for a RESP3 client, `$-1` for a RESP2 one.
            FieldValue::Null => unsafe {
                raw::RedisModule_ReplyWithNull.unwrap()(ctx.ctx);
            },
        }
    }
    Ok(RedisValue::NoReply)
}

// ---------------------------------------------------------------------------------------
// Data types: RDB, AOF, memory

/// A filter stored in Redis keys as a module type.
pub trait ModuleValue: Sized {
    /// Writes the value's fields in the type's current RDB encoding (also what DEBUG
    /// DIGEST-VALUE hashes, so equal filters have equal digests).
    fn save<W: FieldWriter>(&self, out: &mut W);
    /// Reads a value of encoding `encver`; `None` fails the load cleanly.
    fn load(rdb: &mut RdbReader, encver: i32) -> Option<Self>;
    /// Emits commands that rebuild the value.
    fn aof_rewrite(&self, aof: &mut AofWriter);
    /// The figure MEMORY USAGE reports.
    fn mem_usage(&self) -> usize;
    /// An independent copy (COPY), or `None` when memory cannot be had.
    fn try_clone(&self) -> Option<Self>;
    /// This value's share of its type's INFO totals.
    fn snapshot(&self) -> Snapshot;
    /// Its type's INFO totals.
    fn stats() -> &'static TypeStats;
}

/// Runs a change to a filter and updates its type's INFO totals.
pub fn tracked<T: ModuleValue, R>(value: &mut T, change: impl FnOnce(&mut T) -> R) -> R {
    let before = value.snapshot();
    let result = change(value);
    T::stats().changed(before, value.snapshot());
    result
}

/// Reads module values from an RDB stream; every read reports I/O errors.
pub struct RdbReader {
    io: *mut raw::RedisModuleIO,
}

impl FieldReader for RdbReader {
    fn unsigned(&mut self) -> Option<u64> {
        raw::load_unsigned(self.io).ok()
    }
    fn double(&mut self) -> Option<f64> {
        raw::load_double(self.io).ok()
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        let buffer = raw::load_string_buffer(self.io).ok()?;
        // Only the non-zero pages are written, so a loaded filter that is mostly empty
        // stays mostly non-resident once Redis' read buffer is freed.
        redbloom_core::sparse_copy(buffer.as_ref()).ok()
    }
}

pub struct RdbWriter {
    io: *mut raw::RedisModuleIO,
}

impl FieldWriter for RdbWriter {
    fn unsigned(&mut self, v: u64) {
        raw::save_unsigned(self.io, v);
    }
    fn double(&mut self, v: f64) {
        raw::save_double(self.io, v);
    }
    fn buffer(&mut self, v: &[u8]) {
        raw::save_slice(self.io, v);
    }
}

/// Emits the commands of an AOF rewrite for one key.
pub struct AofWriter {
    io: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
}

impl AofWriter {
    /// Emits `<command> <key> <position> <data>`.
    pub fn emit_chunk(&mut self, command: &'static std::ffi::CStr, position: i64, data: &[u8]) {
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(
                self.io,
                command.as_ptr(),
                c"slb".as_ptr(),
                self.key,
                position as std::os::raw::c_longlong,
                data.as_ptr().cast::<c_char>(),
                data.len(),
            );
        }
    }
}

/// Feeds a value's RDB fields to DEBUG DIGEST-VALUE.
struct DigestWriter {
    digest: *mut raw::RedisModuleDigest,
}

impl FieldWriter for DigestWriter {
    fn unsigned(&mut self, v: u64) {
        unsafe { raw::RedisModule_DigestAddLongLong.unwrap()(self.digest, v as i64) };
    }
    fn double(&mut self, v: f64) {
        unsafe { raw::RedisModule_DigestAddLongLong.unwrap()(self.digest, v.to_bits() as i64) };
    }
    fn buffer(&mut self, v: &[u8]) {
        unsafe {
            raw::RedisModule_DigestAddStringBuffer.unwrap()(
                self.digest,
                v.as_ptr().cast::<c_char>().cast_mut(),
                v.len(),
            )
        };
    }
}

extern "C" fn rdb_load<T: ModuleValue>(io: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    let loaded = catch_panic("rdb_load", || T::load(&mut RdbReader { io }, encver));
    match loaded {
        Some(Some(value)) => {
            T::stats().created(value.snapshot());
            Box::into_raw(Box::new(value)).cast()
        }
        _ => ptr::null_mut(),
    }
}

extern "C" fn rdb_save<T: ModuleValue>(io: *mut raw::RedisModuleIO, value: *mut c_void) {
    let Some(value) = (unsafe { value.cast::<T>().as_ref() }) else {
        return;
    };
    let _ = catch_panic("rdb_save", || value.save(&mut RdbWriter { io }));
}

extern "C" fn aof_rewrite<T: ModuleValue>(
    io: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    let Some(value) = (unsafe { value.cast::<T>().as_ref() }) else {
        return;
    };
    let _ = catch_panic("aof_rewrite", || {
        value.aof_rewrite(&mut AofWriter { io, key })
    });
}

extern "C" fn mem_usage<T: ModuleValue>(value: *const c_void) -> usize {
    unsafe { value.cast::<T>().as_ref() }.map_or(0, T::mem_usage)
}

extern "C" fn free<T: ModuleValue>(value: *mut c_void) {
    if !value.is_null() {
        let value = unsafe { Box::from_raw(value.cast::<T>()) };
        T::stats().freed(value.snapshot());
    }
}

/// Lazy free: Redis frees a value on a background thread when the effort exceeds its
/// threshold (64), so dropping a large filter never stalls the server.
extern "C" fn free_effort<T: ModuleValue>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    unsafe { value.cast::<T>().as_ref() }.map_or(1, |v| {
        let s = v.snapshot();
        (s.sub_filters as usize).saturating_add(s.bytes as usize / 65536)
    })
}

extern "C" fn copy<T: ModuleValue>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    let Some(value) = (unsafe { value.cast::<T>().as_ref() }) else {
        return ptr::null_mut();
    };
    match catch_panic("copy", || value.try_clone()) {
        Some(Some(copy)) => {
            T::stats().created(copy.snapshot());
            Box::into_raw(Box::new(copy)).cast()
        }
        _ => ptr::null_mut(),
    }
}

extern "C" fn digest<T: ModuleValue>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    let Some(value) = (unsafe { value.cast::<T>().as_ref() }) else {
        return;
    };
    let _ = catch_panic("digest", || value.save(&mut DigestWriter { digest: md }));
    unsafe { raw::RedisModule_DigestEndSequence.unwrap()(md) };
}

/// The callback table of a module type whose values are `T`.
pub const fn type_methods<T: ModuleValue>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load::<T>),
        rdb_save: Some(rdb_save::<T>),
        aof_rewrite: Some(aof_rewrite::<T>),
        mem_usage: Some(mem_usage::<T>),
        digest: Some(digest::<T>),
        free: Some(free::<T>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort::<T>),
        unlink: None,
        copy: Some(copy::<T>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
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

/// Publishes a keyspace event named after the command (`bf.add`, `cf.del`, ...) for the
/// key at argument 1, of class `d` (module events).
pub fn notify_write(ctx: &Context, args: &Args) {
    notify_event(ctx, args.bytes(0), args, 1);
}

/// Publishes the keyspace event `event` (lower-cased; class `d`, module events) for the
/// key at argument `key` of `args`.
pub fn notify_event(ctx: &Context, event: &[u8], args: &Args, key: usize) {
    let mut name = [0u8; 32];
    if event.len() >= name.len() {
        return;
    }
    for (dst, src) in name.iter_mut().zip(event) {
        *dst = src.to_ascii_lowercase();
    }
    unsafe {
        raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_NOTIFY_MODULE as c_int,
            name.as_ptr().cast::<c_char>(),
            args.raw(key),
        );
    }
}

/// Replaces the INFO callback the `redis_module!` macro registered with ours.
pub fn register_info(ctx: &Context, callback: fn(&redis_module::InfoContext)) {
    static CALLBACK: std::sync::OnceLock<fn(&redis_module::InfoContext)> =
        std::sync::OnceLock::new();
    let _ = CALLBACK.set(callback);
    extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
        if let Some(callback) = CALLBACK.get() {
            let _ = catch_panic("info", || callback(&redis_module::InfoContext::new(ctx)));
        }
    }
    unsafe { raw::RedisModule_RegisterInfoFunc.unwrap()(ctx.ctx, Some(info)) };
}

/// Applies the config file's values to the module configs registered so far.
pub fn load_configs(ctx: &Context) {
    if let Some(load) = unsafe { raw::RedisModule_LoadConfigs } {
        unsafe { load(ctx.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The allocation check behind "a 1 TiB RESERVE is an error reply" (found by
    /// tests/hostile_input.rs: with the ceiling raised, Redis' allocator granted 1 TiB and
    /// zeroing it grew the server until it was killed).
    #[test]
    fn huge_requests_are_refused_before_the_allocator() {
        let meminfo = "MemTotal:       24000000 kB\nMemFree:        1000 kB\n\
                       MemAvailable:   20000000 kB\nSwapTotal:      0 kB\nSwapFree:       1024 kB\n";
        assert_eq!(available_memory(meminfo), Some((20_000_000 + 1024) * 1024));
        assert_eq!(available_memory("MemTotal: 5 kB\n"), None);
        assert!(can_have(LARGE_ALLOCATION - 1));
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        if available_memory(&meminfo).is_some_and(|a| a < 1 << 40) {
            assert!(!can_have(1 << 40));
            // The global allocator of this crate's builds is ModuleAllocator.
            let mut v: Vec<u8> = Vec::new();
            assert!(v.try_reserve_exact(1 << 40).is_err());
            // The zeroed path (alloc_zeroed) refuses as well.
            assert!(redbloom_core::zeroed_bytes(1 << 40).is_err());
        }
    }
}
