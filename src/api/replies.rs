//! Replies: RESP2 shapes for RESP2 clients, RESP3 types (booleans, maps, nulls) for RESP3
//! clients.

use redis_module::{raw, Context, RedisResult, RedisValue};
use std::ffi::{c_char, c_int, CStr, CString};

/// Which RESP3 types a command's reply may use. RedisBloom 2.6+ answers a client that said
/// `HELLO 3` with booleans, maps and nulls, and every other client with 2.4.20's RESP2
/// shapes; each type is used only where the server has its reply call (COMPAT §0.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    booleans: bool,
    maps: bool,
    resp3: bool,
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
            resp3,
        }
    }
}

fn put_integer(ctx: &Context, value: i64) {
    unsafe { raw::RedisModule_ReplyWithLongLong.unwrap()(ctx.ctx, value) };
}

/// A double as the server writes one (`RedisModule_ReplyWithDouble`: a bulk string of
/// its `%.17g` form to a RESP2 client on Redis 7.0, a RESP3 double otherwise).
fn put_double(ctx: &Context, value: f64) {
    unsafe { super::calls::reply_with_double(ctx.ctx, value) };
}

/// Runs `f` with `bytes` as a C string (cut at a NUL byte): copied into a buffer on the
/// stack when short, so a reply does not allocate and free a `CString` for it (~300
/// instructions, as much as the reply itself).
fn with_c_string(bytes: &[u8], f: impl FnOnce(*const c_char)) {
    let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
    with_nul_free(bytes, f);
}

/// [`with_c_string`] for bytes known to hold no NUL.
fn with_nul_free(bytes: &[u8], f: impl FnOnce(*const c_char)) {
    // A short item (most are) has a short buffer to clear.
    if bytes.len() < 32 {
        let mut buffer = [0u8; 32];
        buffer[..bytes.len()].copy_from_slice(bytes);
        return f(buffer.as_ptr().cast());
    }
    let mut buffer = [0u8; 128];
    if bytes.len() < buffer.len() {
        buffer[..bytes.len()].copy_from_slice(bytes);
        f(buffer.as_ptr().cast());
    } else {
        f(CString::new(bytes).unwrap_or_default().as_ptr());
    }
}

/// Whether `bytes` can be a simple string: no NUL, CR or LF. Eight bytes at a time (a
/// word holds one of them when `word ^ that byte repeated` has a zero byte: the classic
/// test `(x - 0x01…01) & !x & 0x80…80`), where a loop over the bytes was three
/// comparisons per byte.
fn fits_simple_string(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if has_zero(x)
            || has_zero(x ^ (ONES * u64::from(b'\r')))
            || has_zero(x ^ (ONES * u64::from(b'\n')))
        {
            return false;
        }
    }
    !words
        .remainder()
        .iter()
        .any(|&b| matches!(b, 0 | b'\r' | b'\n'))
}

/// Replies with the simple string `+text` (`OK`, ...), without allocating (`OK`, every
/// write's reply, without even a copy).
pub fn put_simple_string(ctx: &Context, text: &str) {
    let reply = |text| unsafe {
        raw::RedisModule_ReplyWithSimpleString.unwrap()(ctx.ctx, text);
    };
    match text {
        "OK" => reply(c"OK".as_ptr()),
        _ => with_c_string(text.as_bytes(), reply),
    }
}

/// Replies with one double (see [`put_double`]).
pub fn reply_double(ctx: &Context, value: f64) -> RedisResult {
    put_double(ctx, value);
    Ok(RedisValue::NoReply)
}

/// `#t`/`#f` for RESP3 clients, `:1`/`:0` for RESP2 ones: the server's boolean reply
/// already writes the integer to a RESP2 client, so the client's protocol is not looked
/// up (that lookup, `RedisModule_GetContextFlags`, also computes the server's memory
/// state: ~1.5 % of a single CF.ADD's CPU). A server without the call gets the integer.
fn put_bool(ctx: &Context, value: bool) {
    match unsafe { raw::RedisModule_ReplyWithBool } {
        Some(reply_bool) => unsafe {
            reply_bool(ctx.ctx, c_int::from(value));
        },
        None => put_integer(ctx, i64::from(value)),
    }
}

/// Replies with one boolean (RESP2: the integer 1 or 0).
pub fn reply_bool(ctx: &Context, value: bool) -> RedisResult {
    put_bool(ctx, value);
    Ok(RedisValue::NoReply)
}

/// An array reply written element by element, without building the elements first.
///
/// The client's protocol is looked up only when an element needs it (an item, CF.INSERT's
/// failure), never for integers, booleans, doubles or nulls, which the server writes in
/// the client's protocol itself: the lookup, `RedisModule_GetContextFlags`, computes the
/// server's memory state, and on Redis 8 with `enable-debug-command local` it also asks
/// whether the client's connection is local (`getpeername`, `inet_ntop`: ~1,800
/// instructions, doubling a CMS.QUERY).
pub struct ArrayReply<'c> {
    ctx: &'c Context,
    protocol: Option<Protocol>,
    count: usize,
    postponed: bool,
}

impl<'c> ArrayReply<'c> {
    /// An array of `len` elements.
    pub fn with_len(ctx: &'c Context, len: usize) -> Self {
        unsafe { raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, len as std::os::raw::c_long) };
        ArrayReply {
            ctx,
            protocol: None,
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
            protocol: None,
            count: 0,
            postponed: true,
        }
    }

    /// The client's protocol, looked up on first use.
    fn protocol(&mut self) -> Protocol {
        let ctx = self.ctx;
        *self.protocol.get_or_insert_with(|| Protocol::of(ctx))
    }

    pub fn integer(&mut self, value: i64) {
        put_integer(self.ctx, value);
        self.count += 1;
    }

    /// A boolean element (RESP2: the integer 1 or 0).
    pub fn boolean(&mut self, value: bool) {
        put_bool(self.ctx, value);
        self.count += 1;
    }

    /// A boolean element where a failure is false in RESP3 but its own integer in RESP2
    /// (CF.INSERT: `None`, no space, is -1 there).
    pub fn boolean_or(&mut self, value: Option<bool>, resp2_failure: i64) {
        match value {
            None if !self.protocol().booleans => self.integer(resp2_failure),
            value => self.boolean(value.unwrap_or(false)),
        }
    }

    /// A null element (RESP2: a nil bulk string).
    pub fn null(&mut self) {
        unsafe { raw::RedisModule_ReplyWithNull.unwrap()(self.ctx.ctx) };
        self.count += 1;
    }

    /// An item (TOPK.*): for a RESP2 client a simple string, as RedisBloom 2.4.20 replies,
    /// unless the item holds a NUL, CR or LF byte, which a simple string cannot carry
    /// (RedisBloom cuts the item at its NUL, or breaks the protocol): then a bulk string;
    /// for a RESP3 client a bulk string, as RedisBloom 2.6 replies.
    pub fn item(&mut self, item: &[u8]) {
        let simple = fits_simple_string(item) && !self.protocol().resp3;
        if simple {
            with_nul_free(item, |text| unsafe {
                raw::RedisModule_ReplyWithSimpleString.unwrap()(self.ctx.ctx, text);
            });
        } else {
            unsafe {
                raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                    self.ctx.ctx,
                    item.as_ptr().cast(),
                    item.len(),
                );
            }
        }
        self.count += 1;
    }

    /// A double element: the server formats it (RESP2: a bulk string; RESP3: a double).
    pub fn double(&mut self, value: f64) {
        put_double(self.ctx, value);
        self.count += 1;
    }

    pub fn error(&mut self, text: &str) {
        with_c_string(text.as_bytes(), |text| unsafe {
            raw::RedisModule_ReplyWithError.unwrap()(self.ctx.ctx, text);
        });
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
    reply_labelled(ctx, fields, resp2)
}

/// An INFO-style reply with labels that are C strings already (`c"width"`), written
/// field by field in the handler (TOPK.INFO, CMS.INFO, TDIGEST.INFO): a RESP3 map, or the
/// RESP2 flat array label, value, label, value, ... — the server's map reply is already
/// both, so the client's protocol is not looked up (`RedisModule_GetContextFlags`, ~130
/// instructions). The server's reply calls are looked up once for the whole reply (after
/// any call the module cannot tell they did not change, so a call per field looked them
/// up again), and each field is two calls of straight-line code.
pub struct FieldsReply {
    ctx: *mut raw::RedisModuleCtx,
    label: super::calls::SimpleStringFn,
    integer: super::calls::LongLongFn,
}

impl FieldsReply {
    /// A reply of `len` labelled fields.
    #[inline(always)]
    pub fn labelled(ctx: &Context, len: usize) -> FieldsReply {
        // SAFETY: the command's context.
        unsafe { super::calls::reply_with_map(ctx.ctx, len as std::os::raw::c_long) };
        FieldsReply {
            ctx: ctx.ctx,
            label: super::calls::simple_string_fn(),
            integer: super::calls::long_long_fn(),
        }
    }

    /// A field whose value is an integer.
    #[inline(always)]
    pub fn integer(&self, label: &'static CStr, value: i64) {
        unsafe {
            (self.label)(self.ctx, label.as_ptr());
            (self.integer)(self.ctx, value);
        }
    }

    /// A field whose value is a double (RESP2: a bulk string, as the server writes it).
    #[inline(always)]
    pub fn double(&self, label: &'static CStr, value: f64) {
        unsafe {
            (self.label)(self.ctx, label.as_ptr());
            super::calls::reply_with_double(self.ctx, value);
        }
    }

    /// Ends the reply; the command's reply is complete.
    #[inline(always)]
    pub fn finish(self) -> RedisResult {
        Ok(RedisValue::NoReply)
    }
}

/// A label of an INFO-style reply.
trait Label: Copy {
    fn put(self, ctx: &Context);
}

impl Label for &'static str {
    fn put(self, ctx: &Context) {
        put_simple_string(ctx, self);
    }
}

fn reply_labelled<L: Label>(
    ctx: &Context,
    fields: &[(L, FieldValue)],
    resp2: Resp2Fields,
) -> RedisResult {
    let len = fields.len() as std::os::raw::c_long;
    let reply_map = unsafe { raw::RedisModule_ReplyWithMap };
    let labels = match (resp2, reply_map) {
        // The server's map reply is already what each protocol wants here: a map for a
        // RESP3 client, the flat array of 2 × len for a RESP2 one. The client's protocol
        // is not looked up (`RedisModule_GetContextFlags`, ~130 instructions).
        (Resp2Fields::Labelled, Some(reply_map)) => {
            unsafe { reply_map(ctx.ctx, len) };
            true
        }
        _ => {
            let protocol = Protocol::of(ctx);
            let labels = protocol.maps || resp2 == Resp2Fields::Labelled;
            unsafe {
                match reply_map {
                    Some(reply_map) if protocol.maps => reply_map(ctx.ctx, len),
                    _ if labels => raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, 2 * len),
                    _ => raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, len),
                };
            }
            labels
        }
    };
    // A RESP2 client gets a double as its shortest decimal form (`7.91424`, not the
    // server's `%.17g` `7.9142400000000004`).
    let has_double = fields
        .iter()
        .any(|(_, v)| matches!(v, FieldValue::Double(_)));
    let resp3 = has_double && Protocol::of(ctx).resp3;
    for &(label, value) in fields {
        if labels {
            label.put(ctx);
        }
        match value {
            FieldValue::Integer(value) => put_integer(ctx, value),
            FieldValue::Double(value) if resp3 => put_double(ctx, value),
            FieldValue::Double(value) => {
                let text = redbloom_core::fmt::shortest(value);
                unsafe {
                    raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                        ctx.ctx,
                        text.as_ptr().cast(),
                        text.len(),
                    );
                }
            }
            // The server writes `_` for a RESP3 client, `$-1` for a RESP2 one.
            FieldValue::Null => unsafe {
                raw::RedisModule_ReplyWithNull.unwrap()(ctx.ctx);
            },
        }
    }
    Ok(RedisValue::NoReply)
}

/// Replies with a filter's health (the `*.HEALTH` commands): a RESP3 map of label →
/// value, or the RESP2 flat array label, value, ...; a per-link figure is an array of
/// doubles, a figure that does not apply is null.
pub fn reply_health(ctx: &Context, health: &redbloom_core::health::Health) -> RedisResult {
    use redbloom_core::health::Value;
    let len = health.fields.len() as std::os::raw::c_long;
    let protocol = Protocol::of(ctx);
    unsafe {
        match raw::RedisModule_ReplyWithMap {
            Some(reply_map) if protocol.maps => reply_map(ctx.ctx, len),
            _ => raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, 2 * len),
        };
    }
    for (label, value) in &health.fields {
        put_simple_string(ctx, label);
        match value {
            Value::Integer(v) => put_integer(ctx, *v),
            Value::Double(v) => put_double(ctx, *v),
            Value::Doubles(values) => {
                unsafe {
                    raw::RedisModule_ReplyWithArray.unwrap()(
                        ctx.ctx,
                        values.len() as std::os::raw::c_long,
                    )
                };
                values.iter().for_each(|&v| put_double(ctx, v));
            }
            Value::Null => unsafe {
                raw::RedisModule_ReplyWithNull.unwrap()(ctx.ctx);
            },
        }
    }
    Ok(RedisValue::NoReply)
}

#[cfg(test)]
mod tests {
    use super::fits_simple_string;

    #[test]
    fn simple_strings_hold_no_nul_cr_or_lf_wherever_they_are() {
        assert!(fits_simple_string(b""));
        assert!(fits_simple_string(b"i1:000000840187"));
        let text: Vec<u8> = (1..=40u8).map(|i| b'a' + i % 26).collect();
        assert!(fits_simple_string(&text));
        for bad in [0u8, b'\r', b'\n'] {
            for at in 0..text.len() {
                let mut with = text.clone();
                with[at] = bad;
                assert!(!fits_simple_string(&with), "{bad} at {at}");
                assert!(!fits_simple_string(&with[..=at]), "{bad} ending {at}");
            }
        }
        // Bytes next to the three (0x01, 0x0b, 0x0c, 0x0e, 0x80, 0xff) are fine.
        assert!(fits_simple_string(&[
            1, 11, 12, 14, 0x80, 0xff, 9, 0x8d, 0x8a, 2
        ]));
    }
}
