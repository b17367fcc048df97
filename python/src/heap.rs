//! The extension's heap, counted: every allocation of this native module (the filters'
//! bit arrays, buckets and link tables, a batch's temporaries) goes through [`Counted`],
//! which keeps the bytes live at this moment. `_native._heap_bytes()` reads it, so
//! `python/bench/bench.py memory` can show what a filter holds exactly, beside the process'
//! resident size (which also holds Python's own arenas and freed-but-kept memory).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes it has handed out and not had back.
pub struct Counted;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is the system allocator's with the caller's arguments; the counter
// only observes the sizes (the layout's, which is what the caller asked for and frees).
unsafe impl GlobalAlloc for Counted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

/// Bytes this extension has allocated and not freed (its filters and anything else of
/// its own alive now).
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}
