//! A command's arguments, read in place.

use redis_module::raw;
use std::ffi::c_int;

/// A command's arguments, borrowed from Redis without copying or reference counting.
pub struct Args<'a> {
    pub(super) argv: &'a [*mut raw::RedisModuleString],
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

    pub(super) fn raw(&self, i: usize) -> *mut raw::RedisModuleString {
        self.argv[i]
    }
}
