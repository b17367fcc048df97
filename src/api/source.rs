//! The members of a SET or a sorted set, or the fields of a hash, read in one go on the
//! main thread (SF.BUILD ... FROM source): a point-in-time view, as no other command runs
//! meanwhile.

use super::args::Args;
use redis_module::{raw, Context};
use std::ffi::{c_int, CStr};

/// Why a source could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceError {
    /// No such key.
    Missing,
    /// Not a set, a sorted set or a hash.
    WrongType,
    /// More members than allowed.
    TooLarge,
    /// The calling user may not read the source (ACL).
    NoPermission,
    /// The server's reply was not a list of strings.
    Failed,
}

/// Calls `each` with every member of the set or sorted set, or every field of the hash,
/// at argument `i`, if it has at most `max`; returns how many there were. The members
/// come from SMEMBERS, ZRANGE 0 -1 or HKEYS called inside this command, with the calling
/// user's ACL permissions ("C").
pub fn for_each_member(
    ctx: &Context,
    args: &Args,
    i: usize,
    max: u64,
    mut each: impl FnMut(&[u8]),
) -> Result<u64, SourceError> {
    let key = args.raw(i);
    let (key_type, len) = unsafe {
        let handle =
            raw::RedisModule_OpenKey.unwrap()(ctx.ctx, key, raw::REDISMODULE_READ as c_int);
        if handle.is_null() {
            (raw::REDISMODULE_KEYTYPE_EMPTY as c_int, 0)
        } else {
            let key_type = raw::RedisModule_KeyType.unwrap()(handle);
            let len = raw::RedisModule_ValueLength.unwrap()(handle) as u64;
            raw::RedisModule_CloseKey.unwrap()(handle.cast());
            (key_type, len)
        }
    };
    let command: (&CStr, bool) = match key_type as isize {
        raw::REDISMODULE_KEYTYPE_EMPTY => return Err(SourceError::Missing),
        raw::REDISMODULE_KEYTYPE_SET => (c"SMEMBERS", false),
        raw::REDISMODULE_KEYTYPE_HASH => (c"HKEYS", false),
        raw::REDISMODULE_KEYTYPE_ZSET => (c"ZRANGE", true),
        _ => return Err(SourceError::WrongType),
    };
    if len > max {
        return Err(SourceError::TooLarge);
    }
    unsafe {
        let call = raw::RedisModule_Call.unwrap();
        let reply = if command.1 {
            call(
                ctx.ctx,
                command.0.as_ptr(),
                c"Cscc".as_ptr(),
                key,
                c"0".as_ptr(),
                c"-1".as_ptr(),
            )
        } else {
            call(ctx.ctx, command.0.as_ptr(), c"Cs".as_ptr(), key)
        };
        if reply.is_null() {
            // RedisModule_Call sets errno: EACCES when the ACL refused the command or key.
            let denied = std::io::Error::last_os_error().raw_os_error() == Some(13);
            return Err(if denied {
                SourceError::NoPermission
            } else {
                SourceError::Failed
            });
        }
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
