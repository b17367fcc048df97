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
    /// A plain decimal (`-?digits[.digits]`, few enough digits: see [`plain_decimal`]) is
    /// converted here, to the same double; anything else is the server's to parse.
    pub fn double(&self, i: usize) -> Option<f64> {
        if let Some(value) = plain_decimal(self.bytes(i)) {
            return Some(value);
        }
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

/// Exact powers of ten as doubles (10^22 is the last one a double holds exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `bytes` as a double when it is a plain decimal, `-?[0-9]+(\.[0-9]+)?` with at most 19
/// significant digits whose value without the point is at most 2^53: then the digits and
/// the power of ten are both exact doubles and one IEEE division rounds their quotient
/// correctly, as `strtod` (the server's `string2d`) rounds the decimal — the same double,
/// without the server's call (`RedisModule_StringToDouble`: ~350 instructions, where this
/// is ~40). `None` for anything else (exponents, `inf`, signs, spaces, longer numbers).
pub fn plain_decimal(bytes: &[u8]) -> Option<f64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut count = 0usize;
    let mut seen = false;
    let mut point = None;
    for (at, &b) in digits.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                // Leading zeros are not counted: `0.000…01` has one digit.
                if mantissa > 0 || b != b'0' {
                    count += 1;
                    if count > 19 {
                        return None;
                    }
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                seen = true;
            }
            b'.' if point.is_none() && at > 0 => point = Some(at),
            _ => return None,
        }
    }
    let fraction = match point {
        Some(at) if at + 1 == digits.len() => return None,
        Some(at) => digits.len() - at - 1,
        None => 0,
    };
    if !seen || mantissa > 1 << 53 || fraction >= POW10.len() {
        return None;
    }
    let value = mantissa as f64 / POW10[fraction];
    Some(if negative { -value } else { value })
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
    fn plain_decimals_are_the_doubles_the_standard_parser_gives() {
        let accepted = [
            "0",
            "-0",
            "7",
            "007",
            "-12",
            "0.5",
            "-0.25",
            "123456",
            "999999",
            "3.14159",
            "0.1",
            "0.3",
            "1.797693134862315",
            "9007199254740992",
            "0.0000000000000000000001",
            "1234567890.123456",
            "00.50",
        ];
        for text in accepted {
            let parsed = plain_decimal(text.as_bytes());
            let expected: f64 = text.parse().unwrap();
            assert_eq!(parsed.map(f64::to_bits), Some(expected.to_bits()), "{text}");
        }
        let others = [
            "",
            "-",
            ".",
            "5.",
            ".5",
            "-.5",
            "+5",
            " 5",
            "5 ",
            "1e5",
            "inf",
            "-inf",
            "nan",
            "0x10",
            "1.2.3",
            "1,5",
            "9007199254740993",
            "12345678901234567890",
            "12345678901234.56789",
            "0.00000000000000000000001",
            "5\0",
            "--5",
            "1-",
        ];
        for text in others {
            assert_eq!(plain_decimal(text.as_bytes()), None, "{text:?}");
        }
        // Random decimals of up to 19 digits, the point anywhere: each either left to the
        // server or the correctly rounded double.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut converted = 0;
        for _ in 0..50_000 {
            let len = 1 + (next() % 19) as usize;
            let mut text: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            let point = (next() % (len as u64 + 1)) as usize;
            if point > 0 && point < len {
                text.insert(point, '.');
            }
            if next() % 2 == 0 {
                text.insert(0, '-');
            }
            let expected: f64 = text.parse().unwrap();
            if let Some(value) = plain_decimal(text.as_bytes()) {
                assert_eq!(value.to_bits(), expected.to_bits(), "{text}");
                converted += 1;
            }
        }
        assert!(converted > 20_000, "{converted}");
    }

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
