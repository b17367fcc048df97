//! Keys: open, check the type, read or store a module value.

use super::args::Args;
use super::calls;
use super::types::ModuleValue;
use crate::errors;
use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError};
use std::ffi::c_int;

/// Whether this node serves the key at argument `index` of `args` now: always outside a
/// cluster; in a cluster, unless the key's slot is another node's (handed over by an
/// atomic slot migration that completed, or by `CLUSTER SETSLOT … NODE`; or a missing key
/// of a slot being migrated away). For a write that lands long after the server routed
/// its command (a blocked client's answer). The server's own check of a module's call
/// answers: `RedisModule_Call` of `EXISTS key` refused with `EPERM` (a non-local key).
pub fn served_here(ctx: &Context, args: &Args, index: usize) -> bool {
    if !ctx
        .get_flags()
        .contains(redis_module::ContextFlags::CLUSTER)
    {
        return true;
    }
    let (Some(call), Some(free)) = (unsafe { raw::RedisModule_Call }, unsafe {
        raw::RedisModule_FreeCallReply
    }) else {
        return true;
    };
    let reply = unsafe { call(ctx.ctx, c"EXISTS".as_ptr(), c"s".as_ptr(), args.raw(index)) };
    if reply.is_null() {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM);
    }
    unsafe { free(reply) };
    true
}

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
        let handle = unsafe { calls::open_key(ctx.ctx, args.raw(i), mode as c_int) };
        Key {
            handle: handle.cast(),
        }
    }

    #[inline(always)]
    pub fn state<T>(&self, of: &RedisType) -> KeyState<'_, T> {
        self.state_in(&[of])
    }

    /// What the key holds, as far as any of several module types whose values are all `T`
    /// in memory (BF's classic and BLOCKED types) are concerned.
    #[inline(always)]
    pub fn state_in<T>(&self, types: &[&RedisType]) -> KeyState<'_, T> {
        if self.handle.is_null() {
            return KeyState::Empty;
        }
        unsafe {
            // NULL for an empty key and for any other kind of value: only then is the key
            // type asked (a call less for the usual case, a key of ours).
            let held = calls::module_type_of(self.handle);
            if held.is_null() {
                let key_type = calls::key_type(self.handle);
                if key_type == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
                    return KeyState::Empty;
                }
                return KeyState::Other;
            }
            if !types.iter().any(|of| held == registered(of)) {
                return KeyState::Other;
            }
            let value = calls::module_value_of(self.handle).cast::<T>();
            match value.as_mut() {
                Some(value) => KeyState::Ours(value),
                None => KeyState::Other,
            }
        }
    }

    /// [`Key::state`] with a shared reference: for a command that reads several keys which
    /// may name one value twice (CMS.MERGE's sources), so no two `&mut` to it coexist.
    pub fn state_shared<T>(&self, of: &RedisType) -> Result<Option<&T>, RedisError> {
        self.state_shared_in(&[of])
    }

    /// [`Key::state_shared`] for several module types whose values are all `T` in memory.
    pub fn state_shared_in<T>(&self, types: &[&RedisType]) -> Result<Option<&T>, RedisError> {
        if self.handle.is_null() {
            return Ok(None);
        }
        unsafe {
            let key_type = calls::key_type(self.handle);
            if key_type == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
                return Ok(None);
            }
            if key_type != raw::REDISMODULE_KEYTYPE_MODULE as c_int {
                return Err(RedisError::WrongType);
            }
            let held = calls::module_type_of(self.handle);
            if !types.iter().any(|of| held == *of.raw_type.borrow()) {
                return Err(RedisError::WrongType);
            }
            let value = calls::module_value_of(self.handle).cast::<T>();
            value.as_ref().map(Some).ok_or(RedisError::WrongType)
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
            super::alerts::created(value.alerts());
            Ok(value)
        } else {
            drop(unsafe { Box::from_raw(raw_value) });
            Err(RedisError::Str(errors::COULD_NOT_STORE))
        }
    }
}

/// The server's handle of a registered type, read without the `RefCell`'s borrow count
/// (a test, a branch and its panic path on every key lookup): the handle is written once,
/// at load, before any command runs, and only ever read after that, on the main thread.
#[inline(always)]
fn registered(of: &RedisType) -> *mut raw::RedisModuleType {
    // SAFETY: no `borrow_mut` of it is alive past the module's load (see above).
    unsafe { *of.raw_type.as_ptr() }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            unsafe { calls::close_key(self.handle) };
        }
    }
}

/// The key's value if the key holds one of this type; `None` for a missing key or a key
/// of another type (the read-only item queries answer 0 for those, as RedisBloom does).
pub fn ours<'k, T>(key: &'k Key, of: &RedisType) -> Option<&'k T> {
    ours_in(key, &[of])
}

/// [`ours`] for several module types whose values are all `T` in memory.
pub fn ours_in<'k, T>(key: &'k Key, types: &[&RedisType]) -> Option<&'k T> {
    match key.state_in::<T>(types) {
        KeyState::Ours(value) => Some(value),
        _ => None,
    }
}

/// The value a command that needs an existing filter finds: `ERR not found` when the key
/// is empty, WRONGTYPE when it holds anything else.
pub fn existing<'k, T>(key: &'k Key, of: &RedisType) -> Result<&'k mut T, RedisError> {
    existing_in(key, &[of])
}

/// [`existing`] for several module types whose values are all `T` in memory.
pub fn existing_in<'k, T>(key: &'k Key, types: &[&RedisType]) -> Result<&'k mut T, RedisError> {
    match key.state_in::<T>(types) {
        KeyState::Ours(value) => Ok(value),
        KeyState::Empty => Err(RedisError::Str(errors::NOT_FOUND)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}
