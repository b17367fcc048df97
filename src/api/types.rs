//! Data types: the callbacks Redis calls for a module value (RDB load and save, AOF
//! rewrite, MEMORY USAGE, DEBUG DIGEST-VALUE, COPY, free and lazy free) and the running
//! totals per type they keep for INFO.

use super::panic::catch_panic;
use redbloom_core::memory::Relocator;
use redbloom_core::rdb::{FieldReader, FieldWriter};
use redis_module::raw;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI64, Ordering};

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
    /// Its alert flags (`redbloom_core::health`), in O(links) without allocating: every
    /// write compares them before and after for INFO's alert counts.
    fn alerts(&self) -> u8;
    /// Its health figures (the `*.HEALTH` reply).
    fn health(&self) -> redbloom_core::health::Health;
    /// Offers the value's heap buffers to active defragmentation from cursor `from` (0:
    /// the start); returns the cursor to resume from when `relocator` asked to pause. By
    /// default nothing is offered (the value's box itself still is).
    fn defrag(&mut self, _from: u64, _relocator: &mut impl Relocator) -> Option<u64> {
        None
    }
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
    /// The buffer Redis read the field into becomes the filter's array, as RedisBloom
    /// does: no second allocation, zeroing or copy (RESTORE and RDB loading of a large
    /// filter took 1.4x RedisBloom's time with a copy). Redis allocates it with its
    /// allocator, which is this module's global allocator, for exactly `len` bytes.
    /// Its pages are resident as Redis wrote them.
    fn buffer(&mut self) -> Option<Vec<u8>> {
        let (load, failed, free) = unsafe {
            (
                raw::RedisModule_LoadStringBuffer?,
                raw::RedisModule_IsIOError?,
                raw::RedisModule_Free?,
            )
        };
        let mut len = 0usize;
        let ptr = unsafe { load(self.io, &mut len) };
        let io_error = unsafe { failed(self.io) } != 0;
        if io_error || len == 0 {
            if !ptr.is_null() {
                unsafe { free(ptr.cast()) };
            }
            return (!io_error).then(Vec::new);
        }
        if ptr.is_null() {
            return None;
        }
        Some(unsafe { Vec::from_raw_parts(ptr.cast::<u8>(), len, len) })
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

impl AofWriter {
    /// Emits `<command> <key>`.
    pub fn emit_key_only(&mut self, command: &'static std::ffi::CStr) {
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(self.io, command.as_ptr(), c"s".as_ptr(), self.key);
        }
    }

    /// Emits `RESTORE <key> 0 <DUMP key>`: RedisBloom's AOF rewrite for the types that have
    /// no chunk command (CMS, TopK, t-digest), so either module replays the other's file.
    /// Unlike RedisBloom, the DUMP runs in the key's own database, not always in db 0.
    pub fn emit_restore(&mut self) {
        unsafe {
            let ctx = raw::RedisModule_GetThreadSafeContext.unwrap()(ptr::null_mut());
            if let Some(db_of) = raw::RedisModule_GetDbIdFromIO {
                raw::RedisModule_SelectDb.unwrap()(ctx, db_of(self.io));
            }
            let reply =
                raw::RedisModule_Call.unwrap()(ctx, c"DUMP".as_ptr(), c"s".as_ptr(), self.key);
            if !reply.is_null()
                && raw::RedisModule_CallReplyType.unwrap()(reply)
                    == raw::REDISMODULE_REPLY_STRING as c_int
            {
                let mut len = 0usize;
                let data = raw::RedisModule_CallReplyStringPtr.unwrap()(reply, &mut len);
                raw::RedisModule_EmitAOF.unwrap()(
                    self.io,
                    c"RESTORE".as_ptr(),
                    c"slb".as_ptr(),
                    self.key,
                    0 as std::os::raw::c_longlong,
                    data,
                    len,
                );
            } else {
                raw::RedisModule_LogIOError.unwrap()(
                    self.io,
                    c"warning".as_ptr(),
                    c"redbloom: DUMP failed during the AOF rewrite".as_ptr(),
                );
            }
            if !reply.is_null() {
                raw::RedisModule_FreeCallReply.unwrap()(reply);
            }
            raw::RedisModule_FreeThreadSafeContext.unwrap()(ctx);
        }
    }
}

/// Feeds a value's RDB fields to DEBUG DIGEST-VALUE. A buffer goes in as its length and
/// its XXH3-128 hash, not byte by byte: the server's digest (SHA-1 over every byte fed)
/// took 1.8 s over a 0.92 GiB filter, a 128-bit hash of it takes a few tens of
/// milliseconds, and any change of the bytes still changes the digest (but for a 2^-128
/// chance).
struct DigestWriter {
    digest: *mut raw::RedisModuleDigest,
}

impl DigestWriter {
    fn add(&mut self, v: i64) {
        unsafe { raw::RedisModule_DigestAddLongLong.unwrap()(self.digest, v) };
    }
}

impl FieldWriter for DigestWriter {
    fn unsigned(&mut self, v: u64) {
        self.add(v as i64);
    }
    fn double(&mut self, v: f64) {
        self.add(v.to_bits() as i64);
    }
    fn buffer(&mut self, v: &[u8]) {
        let hash = xxhash_rust::xxh3::xxh3_128(v).to_le_bytes();
        self.add(v.len() as i64);
        unsafe {
            raw::RedisModule_DigestAddStringBuffer.unwrap()(
                self.digest,
                hash.as_ptr().cast::<c_char>().cast_mut(),
                hash.len(),
            )
        };
    }
}

extern "C" fn rdb_load<T: ModuleValue>(io: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    let loaded = catch_panic("rdb_load", || T::load(&mut RdbReader { io }, encver));
    match loaded {
        Some(Some(value)) => {
            T::stats().created(value.snapshot());
            super::alerts::created(value.alerts());
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
        super::alerts::freed(value.alerts());
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
            super::alerts::created(copy.alerts());
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

/// Buffers moved by active defragmentation since the module loaded (INFO
/// `bf_defrag_moved`).
pub static DEFRAG_MOVED: AtomicI64 = AtomicI64::new(0);

/// Moves buffers with `RedisModule_DefragAlloc` (the server decides which are worth
/// moving: jemalloc's small size classes in sparsely used pages, never a large bit array).
struct DefragRelocator {
    ctx: *mut raw::RedisModuleDefragCtx,
}

impl DefragRelocator {
    /// The new address of `ptr`'s block, if the server moved it (the old one is freed).
    fn moved(&self, ptr: *mut c_void) -> Option<*mut c_void> {
        let alloc = unsafe { raw::RedisModule_DefragAlloc }?;
        let new = unsafe { alloc(self.ctx, ptr) };
        if new.is_null() {
            return None;
        }
        DEFRAG_MOVED.fetch_add(1, Ordering::Relaxed);
        Some(new)
    }
}

impl Relocator for DefragRelocator {
    fn relocate<T>(&mut self, v: &mut Vec<T>) {
        if v.capacity() == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        let (len, capacity) = (v.len(), v.capacity());
        if let Some(new) = self.moved(v.as_mut_ptr().cast()) {
            // The old block is freed and its contents are at `new` (same size, from the
            // same allocator as the global one): rebuild the vector there without
            // dropping the old one.
            std::mem::forget(std::mem::take(v));
            *v = unsafe { Vec::from_raw_parts(new.cast::<T>(), len, capacity) };
        }
    }

    fn should_stop(&mut self) -> bool {
        unsafe { raw::RedisModule_DefragShouldStop }
            .is_some_and(|stop| unsafe { stop(self.ctx) } != 0)
    }
}

/// Active defragmentation of one value: its box, then (through [`ModuleValue::defrag`])
/// its buffers. A large value (free_effort above `active-defrag-max-scan-fields`) is
/// defragmented "late", in steps: a non-zero return asks to be called again from the
/// cursor set here.
extern "C" fn defrag<T: ModuleValue>(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    if value.is_null() || unsafe { *value }.is_null() {
        return 0;
    }
    let mut relocator = DefragRelocator { ctx };
    let mut cursor: std::ffi::c_ulong = 0;
    let resumed = unsafe { raw::RedisModule_DefragCursorGet }.is_some_and(|get| {
        let status = unsafe { get(ctx, &mut cursor) };
        status == raw::REDISMODULE_OK as c_int && cursor != 0
    });
    if !resumed {
        cursor = 0;
        if let Some(new) = relocator.moved(unsafe { *value }) {
            unsafe { *value = new };
        }
    }
    let v = unsafe { &mut *(*value).cast::<T>() };
    let next = catch_panic("defrag", || v.defrag(cursor as u64, &mut relocator));
    match (next, unsafe { raw::RedisModule_DefragCursorSet }) {
        (Some(Some(next)), Some(set)) => {
            unsafe { set(ctx, next as std::ffi::c_ulong) };
            1
        }
        _ => 0,
    }
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
        defrag: Some(defrag::<T>),
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// What one filter contributes to the totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes: i64,
    pub items: i64,
    pub sub_filters: i64,
}

/// Totals (filters, bytes, items, sub-filters) as four counters.
struct Counters([AtomicI64; 4]);

impl Counters {
    const fn new() -> Self {
        Counters([
            AtomicI64::new(0),
            AtomicI64::new(0),
            AtomicI64::new(0),
            AtomicI64::new(0),
        ])
    }

    fn read(&self) -> [i64; 4] {
        self.0.each_ref().map(|c| c.load(Ordering::Relaxed))
    }
}

fn deltas(filters: i64, s: Snapshot) -> [i64; 4] {
    [filters, s.bytes, s.items, s.sub_filters]
}

/// Running totals of one filter type, kept in two parts that INFO adds up. Creation,
/// loading, COPY and every write command run on Redis' main thread alone, so their part
/// has a single writer and is updated with plain loads and stores: an atomic add is a
/// locked instruction, and four of them on every write were measurable on a single
/// CF.ADD. Frees subtract from a part of their own with atomic adds, because lazy free
/// runs the free callback on a background thread.
pub struct TypeStats {
    pub name: &'static str,
    main_thread: Counters,
    freed: Counters,
}

impl TypeStats {
    pub const fn new(name: &'static str) -> Self {
        TypeStats {
            name,
            main_thread: Counters::new(),
            freed: Counters::new(),
        }
    }

    /// Adds to the main thread's part (only ever called there: no concurrent writer).
    fn add_on_main_thread(&self, filters: i64, s: Snapshot) {
        for (counter, delta) in self.main_thread.0.iter().zip(deltas(filters, s)) {
            if delta != 0 {
                // Wrapping, as an atomic add does: a hostile dump header may claim
                // any item count.
                let total = counter.load(Ordering::Relaxed).wrapping_add(delta);
                counter.store(total, Ordering::Relaxed);
            }
        }
    }

    /// A filter came into being (created, loaded, copied).
    pub fn created(&self, s: Snapshot) {
        self.add_on_main_thread(1, s);
    }

    /// A filter was freed (on any thread).
    pub fn freed(&self, s: Snapshot) {
        for (counter, delta) in self.freed.0.iter().zip(deltas(1, s)) {
            counter.fetch_add(delta, Ordering::Relaxed);
        }
    }

    /// A filter changed from `before` to `after`.
    pub fn changed(&self, before: Snapshot, after: Snapshot) {
        if before != after {
            self.add_on_main_thread(
                0,
                Snapshot {
                    bytes: after.bytes.wrapping_sub(before.bytes),
                    items: after.items.wrapping_sub(before.items),
                    sub_filters: after.sub_filters.wrapping_sub(before.sub_filters),
                },
            );
        }
    }

    /// (filters, bytes, items, sub-filters) now.
    pub fn totals(&self) -> [(&'static str, i64); 4] {
        let main = self.main_thread.read();
        let freed = self.freed.read();
        let total = |i: usize| main[i].wrapping_sub(freed[i]);
        [
            ("filters", total(0)),
            ("bytes", total(1)),
            ("items", total(2)),
            ("sub_filters", total(3)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_wrap_instead_of_overflowing() {
        // A hostile dump header may claim any item count; the totals wrap as an atomic
        // add would, and come back when the filter is freed.
        let stats = TypeStats::new("t");
        let huge = Snapshot {
            bytes: 1,
            items: i64::MAX,
            sub_filters: 1,
        };
        let grown = Snapshot {
            items: i64::MIN,
            ..huge
        };
        stats.created(huge);
        stats.changed(huge, grown);
        assert_eq!(stats.totals()[2], ("items", i64::MIN));
        stats.freed(grown);
        assert_eq!(
            stats.totals(),
            [
                ("filters", 0),
                ("bytes", 0),
                ("items", 0),
                ("sub_filters", 0)
            ]
        );
    }

    #[test]
    fn totals_follow_create_change_free() {
        let stats = TypeStats::new("t");
        let a = Snapshot {
            bytes: 100,
            items: 3,
            sub_filters: 1,
        };
        let b = Snapshot {
            bytes: 300,
            items: 7,
            sub_filters: 2,
        };
        stats.created(a);
        stats.created(a);
        stats.changed(a, b);
        assert_eq!(
            stats.totals(),
            [
                ("filters", 2),
                ("bytes", 400),
                ("items", 10),
                ("sub_filters", 3)
            ]
        );
        stats.freed(b);
        stats.freed(a);
        assert_eq!(
            stats.totals(),
            [
                ("filters", 0),
                ("bytes", 0),
                ("items", 0),
                ("sub_filters", 0)
            ]
        );
    }
}
