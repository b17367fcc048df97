//! The global allocator: Redis' own once the module is loaded.

use redis_module::raw;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

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
            .is_none_or(|available| size as u64 <= available)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The allocation check behind "a 1 TiB RESERVE is an error reply" (found by
    /// tests/it/hostile_input.rs: with the ceiling raised, Redis' allocator granted 1 TiB and
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
