//! The members of a SET or a sorted set, or the fields of a hash (SF.BUILD ... FROM
//! source): read in one go on the main thread for a small source (a point-in-time view,
//! as no other command runs meanwhile), or scanned in a forked child, the server's copy
//! at the moment of the fork, for a large one.

use super::args::Args;
use redis_module::{raw, Context};
use std::ffi::{c_int, c_void, CStr};

/// Why a source could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceError {
    /// No such key.
    Missing,
    /// Not a set, a sorted set or a hash.
    WrongType,
    /// The calling user may not read the source (ACL).
    NoPermission,
    /// The server's reply was not a list of strings.
    Failed,
}

/// A source key as found: its kind and size.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// The command that lists the members (SMEMBERS, HKEYS, ZRANGE 0 -1), and the one
    /// that counts them (SCARD, HLEN, ZCARD).
    list: &'static CStr,
    count: &'static CStr,
    members: u64,
    key_type: c_int,
}

/// Opens the key at argument `i`: a set, a sorted set or a hash, and how many members
/// (fields) it has. No ACL check: [`Source::read_all`] and [`Source::check_readable`]
/// make it.
pub fn open_source(ctx: &Context, args: &Args, i: usize) -> Result<Source, SourceError> {
    let (key_type, members) = unsafe {
        let handle =
            raw::RedisModule_OpenKey.unwrap()(ctx.ctx, args.raw(i), raw::REDISMODULE_READ as c_int);
        if handle.is_null() {
            (raw::REDISMODULE_KEYTYPE_EMPTY as c_int, 0)
        } else {
            let key_type = raw::RedisModule_KeyType.unwrap()(handle);
            let len = raw::RedisModule_ValueLength.unwrap()(handle) as u64;
            raw::RedisModule_CloseKey.unwrap()(handle.cast());
            (key_type, len)
        }
    };
    let (list, count) = match key_type as isize {
        raw::REDISMODULE_KEYTYPE_EMPTY => return Err(SourceError::Missing),
        raw::REDISMODULE_KEYTYPE_SET => (c"SMEMBERS", c"SCARD"),
        raw::REDISMODULE_KEYTYPE_HASH => (c"HKEYS", c"HLEN"),
        raw::REDISMODULE_KEYTYPE_ZSET => (c"ZRANGE", c"ZCARD"),
        _ => return Err(SourceError::WrongType),
    };
    Ok(Source {
        list,
        count,
        members,
        key_type,
    })
}

/// `RedisModule_Call` with the calling user's ACL permissions ("C"; the master's and the
/// AOF's writes unchecked); `None` and why when the server refused.
unsafe fn call_checked(
    ctx: &Context,
    command: &CStr,
    key: *mut raw::RedisModuleString,
    range: bool,
) -> Result<*mut raw::RedisModuleCallReply, SourceError> {
    let call = unsafe { raw::RedisModule_Call.unwrap() };
    // A write from the master or the AOF is not the user's to check (and Valkey 9 refuses
    // an ACL-checked call from the AOF's client, which has no user).
    let trusted = super::replication::is_trusted(ctx);
    let reply = unsafe {
        if range {
            let format = if trusted { c"scc" } else { c"Cscc" };
            call(
                ctx.ctx,
                command.as_ptr(),
                format.as_ptr(),
                key,
                c"0".as_ptr(),
                c"-1".as_ptr(),
            )
        } else {
            let format = if trusted { c"s" } else { c"Cs" };
            call(ctx.ctx, command.as_ptr(), format.as_ptr(), key)
        }
    };
    if reply.is_null() {
        // RedisModule_Call sets errno: EACCES when the ACL refused the command or key.
        let denied = std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES);
        return Err(if denied {
            SourceError::NoPermission
        } else {
            SourceError::Failed
        });
    }
    Ok(reply)
}

impl Source {
    /// Members (fields) the source had when opened.
    pub fn members(&self) -> u64 {
        self.members
    }

    /// Whether the calling user may read the source at argument `i`: its count command
    /// (SCARD, HLEN, ZCARD) run with the user's ACL permissions.
    pub fn check_readable(&self, ctx: &Context, args: &Args, i: usize) -> Result<(), SourceError> {
        let reply = unsafe { call_checked(ctx, self.count, args.raw(i), false)? };
        unsafe { raw::RedisModule_FreeCallReply.unwrap()(reply) };
        Ok(())
    }

    /// Calls `each` with every member of the source at argument `i`; returns how many
    /// there were. The members come from SMEMBERS, ZRANGE 0 -1 or HKEYS called inside this
    /// command, with the calling user's ACL permissions.
    pub fn read_all(
        &self,
        ctx: &Context,
        args: &Args,
        i: usize,
        mut each: impl FnMut(&[u8]),
    ) -> Result<u64, SourceError> {
        let range = self.list == c"ZRANGE";
        unsafe {
            let reply = call_checked(ctx, self.list, args.raw(i), range)?;
            let result = if raw::RedisModule_CallReplyType.unwrap()(reply)
                == raw::REDISMODULE_REPLY_ARRAY as c_int
            {
                let n = raw::RedisModule_CallReplyLength.unwrap()(reply);
                let mut ok = true;
                for j in 0..n {
                    let element = raw::RedisModule_CallReplyArrayElement.unwrap()(reply, j);
                    let mut len = 0usize;
                    let ptr = raw::RedisModule_CallReplyStringPtr.unwrap()(element, &mut len);
                    if ptr.is_null() {
                        ok = false;
                        break;
                    }
                    each(std::slice::from_raw_parts(ptr.cast::<u8>(), len));
                }
                if ok {
                    Ok(n as u64)
                } else {
                    Err(SourceError::Failed)
                }
            } else {
                Err(SourceError::Failed)
            };
            raw::RedisModule_FreeCallReply.unwrap()(reply);
            result
        }
    }
}

unsafe extern "C" fn scanned<F: FnMut(&[u8])>(
    _key: *mut raw::RedisModuleKey,
    field: *mut raw::RedisModuleString,
    _value: *mut raw::RedisModuleString,
    each: *mut c_void,
) {
    let each = unsafe { &mut *each.cast::<F>() };
    let mut len = 0usize;
    let ptr = unsafe { raw::RedisModule_StringPtrLen.unwrap()(field, &mut len) };
    if !ptr.is_null() {
        each(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) });
    }
}

/// Calls `each` with every member of the set or sorted set, or every field of the hash,
/// at argument `i`, by `RedisModule_ScanKey` (no copy of the whole source). For a forked
/// child, where the source cannot change: a scan of an unchanging key visits every
/// member, some possibly twice (a hash table being resized at the fork).
pub fn scan_members<F: FnMut(&[u8])>(
    ctx: &Context,
    args: &Args,
    i: usize,
    mut each: F,
) -> Result<(), SourceError> {
    let scan = unsafe { raw::RedisModule_ScanKey }.ok_or(SourceError::Failed)?;
    unsafe {
        let handle =
            raw::RedisModule_OpenKey.unwrap()(ctx.ctx, args.raw(i), raw::REDISMODULE_READ as c_int)
                .cast::<raw::RedisModuleKey>();
        if handle.is_null() {
            return Err(SourceError::Missing);
        }
        let cursor = raw::RedisModule_ScanCursorCreate.unwrap()();
        let data = (&mut each as *mut F).cast::<c_void>();
        // 0 once every member was visited (or on an error, with errno set).
        while scan(handle, cursor, Some(scanned::<F>), data) != 0 {}
        raw::RedisModule_ScanCursorDestroy.unwrap()(cursor);
        raw::RedisModule_CloseKey.unwrap()(handle);
    }
    Ok(())
}

/// How one slice of a [`SlicedScan`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// Out of time: more members to visit in a later slice.
    More,
    /// Every member was visited.
    Done,
    /// The source is gone or not the value the scan began on (another type or another
    /// length: a write that published no keyspace event).
    Changed,
}

/// A scan of a source in slices, on the main thread, between which the server serves
/// other clients (`RedisModule_ScanKey` resumes from its cursor). The key is opened again
/// for each slice: a key handle must not outlive the callback that opened it.
pub struct SlicedScan {
    cursor: *mut raw::RedisModuleScanCursor,
    key_type: c_int,
    members: u64,
}

/// ScanKey calls between two looks at the clock (one call visits one bucket of the
/// source's hash table: about one member).
const CALLS_PER_CLOCK: usize = 128;

impl SlicedScan {
    /// A scan of `source` from its first member.
    pub fn new(source: &Source) -> SlicedScan {
        SlicedScan {
            cursor: unsafe { raw::RedisModule_ScanCursorCreate.unwrap()() },
            key_type: source.key_type,
            members: source.members,
        }
    }

    /// Continues the scan of the key at argument `i` until every member was visited or
    /// `deadline` passed, calling `each` with each member visited (some possibly twice, as
    /// any scan of a hash table).
    pub fn step<F: FnMut(&[u8])>(
        &mut self,
        ctx: &Context,
        args: &Args,
        i: usize,
        deadline: std::time::Instant,
        mut each: F,
    ) -> Slice {
        let Some(scan) = (unsafe { raw::RedisModule_ScanKey }) else {
            return Slice::Changed;
        };
        unsafe {
            let handle = raw::RedisModule_OpenKey.unwrap()(
                ctx.ctx,
                args.raw(i),
                raw::REDISMODULE_READ as c_int,
            )
            .cast::<raw::RedisModuleKey>();
            if handle.is_null() {
                return Slice::Changed;
            }
            let same = raw::RedisModule_KeyType.unwrap()(handle.cast()) == self.key_type
                && raw::RedisModule_ValueLength.unwrap()(handle.cast()) as u64 == self.members;
            let data = (&mut each as *mut F).cast::<c_void>();
            let outcome = if !same {
                Slice::Changed
            } else {
                'slice: loop {
                    for _ in 0..CALLS_PER_CLOCK {
                        if scan(handle, self.cursor, Some(scanned::<F>), data) == 0 {
                            break 'slice Slice::Done;
                        }
                    }
                    if std::time::Instant::now() >= deadline {
                        break Slice::More;
                    }
                }
            };
            raw::RedisModule_CloseKey.unwrap()(handle);
            outcome
        }
    }
}

impl Drop for SlicedScan {
    fn drop(&mut self) {
        unsafe { raw::RedisModule_ScanCursorDestroy.unwrap()(self.cursor) };
    }
}
