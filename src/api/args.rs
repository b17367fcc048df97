//! A command's arguments, read in place.

use redis_module::raw;
use std::ffi::c_int;
use std::ops::Deref;

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

    /// Each of the arguments `at` through `parse`, in order, stopping at the first error:
    /// the values of a multi-value command (TDIGEST.ADD's values, CMS.INCRBY's increments).
    pub fn parse_each<T: Copy + Default, E>(
        &self,
        at: impl Iterator<Item = usize>,
        parse: impl FnMut(usize) -> Result<T, E>,
    ) -> Result<Parsed<T>, E> {
        at.map(parse).collect()
    }
}

/// A command's arguments kept past its callback (a blocked command answers later): each
/// string retained, released on drop. Made and dropped on the main thread only.
pub struct OwnedArgs {
    argv: Vec<*mut raw::RedisModuleString>,
}

// SAFETY: only moved between places on the main thread (a static guarded by a mutex, a
// blocked client's private data); never used from another thread.
unsafe impl Send for OwnedArgs {}

impl Args<'_> {
    /// Keeps the arguments past the command.
    pub fn to_owned(&self) -> OwnedArgs {
        let argv = self
            .argv
            .iter()
            .map(|&s| {
                unsafe { raw::RedisModule_RetainString.unwrap()(std::ptr::null_mut(), s) };
                s
            })
            .collect();
        OwnedArgs { argv }
    }
}

impl OwnedArgs {
    pub fn args(&self) -> Args<'_> {
        Args { argv: &self.argv }
    }
}

impl Drop for OwnedArgs {
    fn drop(&mut self) {
        for &s in &self.argv {
            unsafe { raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), s) };
        }
    }
}

/// How many parsed values [`Parsed`] holds without allocating.
const INLINE: usize = 8;

/// Values parsed from a command's arguments: up to [`INLINE`] of them in place, more in a
/// vector. A command with one value then allocates nothing for it (an allocation and a
/// free are ~250 instructions, a tenth of a single TDIGEST.ADD inside the module).
pub struct Parsed<T> {
    inline: [T; INLINE],
    len: usize,
    heap: Vec<T>,
}

impl<T: Copy + Default> FromIterator<T> for Parsed<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut parsed = Parsed {
            inline: [T::default(); INLINE],
            len: 0,
            heap: Vec::new(),
        };
        let mut iter = iter.into_iter();
        while parsed.len < INLINE {
            match iter.next() {
                Some(value) => {
                    parsed.inline[parsed.len] = value;
                    parsed.len += 1;
                }
                None => return parsed,
            }
        }
        if let Some(value) = iter.next() {
            parsed.heap.reserve(INLINE + 1 + iter.size_hint().0);
            parsed.heap.extend_from_slice(&parsed.inline);
            parsed.heap.push(value);
            parsed.heap.extend(iter);
        }
        parsed
    }
}

impl<T> Deref for Parsed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        if self.heap.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_values_keep_their_order_in_place_and_beyond() {
        for n in [0, 1, INLINE - 1, INLINE, INLINE + 1, 3 * INLINE + 2] {
            let parsed: Parsed<u64> = (0..n as u64).map(|v| v * 7).collect();
            let expected: Vec<u64> = (0..n as u64).map(|v| v * 7).collect();
            assert_eq!(&*parsed, expected.as_slice(), "{n} values");
        }
        let stopped: Result<Parsed<u64>, u64> = (0..20u64)
            .map(|v| if v < 12 { Ok(v) } else { Err(v) })
            .collect();
        assert_eq!(stopped.err(), Some(12));
    }
}
