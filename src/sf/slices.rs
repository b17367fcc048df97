//! SF.BUILD FROM a large source, copied in slices on the main thread: each slice (the
//! first within the command, then one per turn of the event loop, from a 0 ms timer)
//! continues a `RedisModule_ScanKey` cursor over the source for about [`SLICE`],
//! hashing members into a vector with the item hash of SF.BUILD ITEMS; the server serves
//! its other clients between slices. The build then runs on a thread of its own (the core
//! build, pure Rust), and the answer, on the main thread, stores the filter as a child's
//! is stored ([`super::from`]).
//!
//! **Point in time.** A write to the source while it is being copied (any keyspace event
//! naming the key, in any database: a write, DEL, RENAME, an expiry, an eviction; and any
//! FLUSHDB, FLUSHALL or SWAPDB) abandons the copy: the build falls back to a forked child,
//! which sees the source as it is at the fork (a source deleted meanwhile answers as a
//! missing source does). A slice that finds the source of another type or length (a
//! write that published no event) falls back the same way. The filter is thus always the
//! source at one moment: the end of the copy, or the fork. The module subscribes to
//! keyspace events at the first copy (not at load: every write of every client then runs
//! the callback, which returns at once when no copy runs).
//!
//! **Memory.** The hashes, 8 bytes per member, and the build's working memory after them
//! ([`working_bytes`]: a ribbon build sorts the hashes where they are and needs little
//! more; docs/static.md) live on the server's heap: they are counted against the memory
//! left under maxmemory as a filter is: a copy that would not fit is not started (the child, whose memory the server does not count, builds it), and the
//! filter's own ceiling is what is left after them. The hashes are freed on every way out
//! (built, fallen back, the client gone).
//!
//! Copies run side by side: each has its own cursor and timer, none needs the server's
//! single child, and BGSAVE or an AOF rewrite may run meanwhile.

use super::from::{fork_build, source_arg, source_error, start_job, Built};
use super::handlers::build_error;
use crate::api::args::OwnedArgs;
use crate::api::blocking::{block, Blocked, BlockedId};
use crate::api::source::{open_source, Slice, SlicedScan, Source};
use crate::api::timer::{self, thread_cpu};
use crate::config::SfBuildSlices;
use crate::errors;
use redbloom_core::memory::Ceiling;
use redbloom_core::static_filter::{
    build_with as build_filter, item_key, working_bytes, BuildError,
};
use redis_module::logging::{log_notice, log_warning};
use redis_module::{Context, RedisError, RedisResult, RedisValue};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The main thread's time per slice.
pub const SLICE: Duration = Duration::from_millis(2);

/// The timer's period while `bf.sf-build-slices` is `hold`.
const HOLD_MS: i64 = 1;

/// A source being copied in slices. Lives on the main thread only.
struct Copy {
    serial: usize,
    client: Blocked<Built>,
    args: OwnedArgs,
    rate: f64,
    /// Members of the source at the command.
    members: u64,
    keys: Vec<u64>,
    /// The bytes of `keys`, counted while they live.
    held: Held,
    scan: SlicedScan,
    max_bytes: u64,
    too_large: &'static str,
    slices: u32,
    /// The longest slice and the slices' total, so far.
    longest: Duration,
    longest_cpu: Duration,
    /// Slices longer than [`LONG_SLICE`].
    long: u64,
    total: Duration,
    started: Instant,
    /// A keyspace event named the source since the copy began.
    changed: bool,
}

thread_local! {
    /// The copies waiting for their next slice (the main thread's alone).
    static COPIES: RefCell<Vec<Copy>> = const { RefCell::new(Vec::new()) };
}

/// Copies in progress (waiting or in a slice): the keyspace callback's quick filter.
static COPYING: AtomicUsize = AtomicUsize::new(0);
/// Bytes of hash vectors alive (copies, and builds on their thread).
static HELD_BYTES: AtomicU64 = AtomicU64::new(0);
static SERIAL: AtomicUsize = AtomicUsize::new(1);
/// The last completed copy: its slices, its longest slice and the slices' total time
/// (microseconds), for INFO (what `make bench-stall` reports).
static LAST_SLICES: AtomicU64 = AtomicU64::new(0);
static LAST_LONGEST_USEC: AtomicU64 = AtomicU64::new(0);
static LAST_TOTAL_USEC: AtomicU64 = AtomicU64::new(0);
/// The last copy's longest slice in the main thread's CPU time: beside the wall time
/// above, what of a long slice was the thread waiting for a core.
static LAST_LONGEST_CPU_USEC: AtomicU64 = AtomicU64::new(0);
/// The last copy's slices longer than [`LONG_SLICE`] (wall time): how rare the long ones.
static LAST_LONG_SLICES: AtomicU64 = AtomicU64::new(0);

/// A slice counted as long in INFO (`sf_build_last_slices_over_3ms`).
const LONG_SLICE: Duration = Duration::from_millis(3);

struct Held(u64);

impl Held {
    fn new(bytes: u64) -> Held {
        HELD_BYTES.fetch_add(bytes, Ordering::Relaxed);
        Held(bytes)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD_BYTES.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// INFO's fields: copies in progress, bytes of hashes held by copies and their builds,
/// and the last completed copy's slices, longest slice and total (microseconds).
pub fn info() -> Vec<(&'static str, u64)> {
    vec![
        ("sf_build_copies", COPYING.load(Ordering::Relaxed) as u64),
        ("sf_build_copy_bytes", HELD_BYTES.load(Ordering::Relaxed)),
        ("sf_build_last_slices", LAST_SLICES.load(Ordering::Relaxed)),
        (
            "sf_build_last_longest_slice_usec",
            LAST_LONGEST_USEC.load(Ordering::Relaxed),
        ),
        (
            "sf_build_last_slices_usec",
            LAST_TOTAL_USEC.load(Ordering::Relaxed),
        ),
        (
            "sf_build_last_longest_slice_cpu_usec",
            LAST_LONGEST_CPU_USEC.load(Ordering::Relaxed),
        ),
        (
            "sf_build_last_slices_over_3ms",
            LAST_LONG_SLICES.load(Ordering::Relaxed),
        ),
    ]
}

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// Starts the copy of `source` (argument 4) in slices, the client blocked; `None` when
/// its hashes would not fit in memory (the caller forks instead).
pub(super) fn start(
    ctx: &Context,
    args: &crate::api::args::Args,
    rate: f64,
    source: &Source,
) -> Option<RedisResult> {
    if !crate::api::events::follow_key_writes(ctx) {
        log_warning("redbloom: SF.BUILD FROM: no keyspace events to follow: building in a child");
        return None;
    }
    let members = source.members();
    // Room for a few members visited twice (a scan of a table being resized).
    let capacity = members.saturating_add(members / 64 + 64);
    let bytes = capacity.saturating_mul(8);
    // The hashes, then the build's working memory besides them, on the server's heap.
    let encoding = super::handlers::encoding_of(args);
    let needed = bytes.saturating_add(working_bytes(members, encoding));
    let limit = crate::write::Limit::of(ctx);
    let left = limit.max_step();
    if needed >= left {
        log_notice(format!(
            "redbloom: SF.BUILD FROM: {needed} bytes of hashes and working memory would not \
             fit under maxmemory: building in a child"
        ));
        return None;
    }
    let mut keys = Vec::new();
    keys.try_reserve_exact(usize::try_from(capacity).ok()?)
        .ok()?;
    let after = left - needed;
    let (max_bytes, too_large) = if after < limit.max_bytes() {
        (after, errors::TOO_LARGE_FOR_MAXMEMORY)
    } else {
        (limit.max_bytes(), errors::TOO_LARGE)
    };
    let copy = Copy {
        serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        client: block::<Built>(ctx),
        args: args.to_owned(),
        rate,
        members,
        keys,
        held: Held::new(bytes),
        scan: SlicedScan::new(source),
        max_bytes,
        too_large,
        slices: 0,
        longest: Duration::ZERO,
        longest_cpu: Duration::ZERO,
        long: 0,
        total: Duration::ZERO,
        started: Instant::now(),
        changed: false,
    };
    COPYING.fetch_add(1, Ordering::Relaxed);
    proceed(ctx, copy);
    Some(Ok(RedisValue::NoReply))
}

/// One slice of `copy`, then its next step: another slice later, the build, or the
/// fallback to a child.
fn proceed(ctx: &Context, mut copy: Copy) {
    // Held (tests), a copy does nothing, not even its fallback, until released.
    if copy.slices > 0 && SfBuildSlices::get() == SfBuildSlices::hold {
        return park(ctx, copy, HOLD_MS);
    }
    let outcome = if copy.changed {
        Slice::Changed
    } else {
        copy.slices += 1;
        let args = copy.args.args();
        let keys = &mut copy.keys;
        let mut full = false;
        let begun = Instant::now();
        let cpu = thread_cpu();
        let outcome = copy
            .scan
            .step(ctx, &args, source_arg(&args), begun + SLICE, |m| {
                if keys.len() < keys.capacity() {
                    keys.push(item_key(m));
                } else {
                    full = true;
                }
            });
        let took = begun.elapsed();
        copy.longest = copy.longest.max(took);
        copy.long += u64::from(took > LONG_SLICE);
        copy.longest_cpu = copy.longest_cpu.max(thread_cpu().saturating_sub(cpu));
        copy.total += took;
        if full {
            Slice::Changed
        } else {
            outcome
        }
    };
    match outcome {
        Slice::More => park(ctx, copy, 0),
        // A scan visits every member at least once: fewer is a source that changed.
        Slice::Done if copy.keys.len() as u64 >= copy.members => build(copy),
        _ => fall_back(ctx, copy),
    }
}

/// Waits `ms` for the next slice.
fn park(ctx: &Context, copy: Copy, ms: i64) {
    timer::start(ctx, ms, next_slice, copy.serial);
    COPIES.with(|copies| copies.borrow_mut().push(copy));
}

fn next_slice(ctx: &Context, serial: usize) {
    let copy = COPIES.with(|copies| {
        let mut copies = copies.borrow_mut();
        let at = copies.iter().position(|c| c.serial == serial)?;
        Some(copies.swap_remove(at))
    });
    // None: the client disconnected meanwhile.
    if let Some(copy) = copy {
        proceed(ctx, copy);
    }
}

/// The copy is complete: the build runs on a thread, then answers the client.
fn build(copy: Copy) {
    COPYING.fetch_sub(1, Ordering::Relaxed);
    let Copy {
        client,
        args,
        rate,
        keys,
        held,
        max_bytes,
        too_large,
        slices,
        longest,
        longest_cpu,
        long,
        total,
        started,
        ..
    } = copy;
    let encoding = super::handlers::encoding_of(&args.args());
    LAST_LONG_SLICES.store(long, Ordering::Relaxed);
    LAST_LONGEST_CPU_USEC.store(longest_cpu.as_micros() as u64, Ordering::Relaxed);
    LAST_SLICES.store(u64::from(slices), Ordering::Relaxed);
    LAST_LONGEST_USEC.store(longest.as_micros() as u64, Ordering::Relaxed);
    LAST_TOTAL_USEC.store(total.as_micros() as u64, Ordering::Relaxed);
    log_notice(format!(
        "redbloom: SF.BUILD FROM: {} members copied in {slices} slices over {} ms \
         (slices {} ms, the longest {} us)",
        keys.len(),
        started.elapsed().as_millis(),
        total.as_millis(),
        longest.as_micros()
    ));
    let spawned = std::thread::Builder::new()
        .name("redbloom-sf-build".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(|| build_filter(keys, rate, max_bytes, encoding))
                .unwrap_or(Err(BuildError::OutOfMemory))
                .map_err(|e| match e {
                    BuildError::TooLarge => error(too_large),
                    e => build_error(e),
                });
            drop(held);
            client.answer(Built { args, result });
        });
    if let Err(e) = spawned {
        // The closure went with the failed spawn: the client, dropped unanswered, was
        // unblocked with an error, the hashes freed.
        log_warning(format!("redbloom: SF.BUILD FROM: no thread to build ({e})"));
    }
}

/// The source changed during the copy: its hashes are dropped and a child builds the
/// source as it is now.
fn fall_back(ctx: &Context, copy: Copy) {
    COPYING.fetch_sub(1, Ordering::Relaxed);
    let Copy {
        client, args, rate, ..
    } = copy;
    log_notice("redbloom: SF.BUILD FROM: the source changed during its copy: building in a child");
    let started = {
        let a = args.args();
        open_source(ctx, &a, source_arg(&a))
            .map_err(source_error)
            .and_then(|source| fork_build(ctx, &a, rate, source.members()).map_err(error))
    };
    match started {
        Ok(started) => start_job(started, client, args),
        Err(e) => client.answer(Built {
            args,
            result: Err(e),
        }),
    }
}

/// The client `id` disconnected: its copy, if it has one waiting, is dropped (true).
pub(super) fn disconnected(id: BlockedId) -> bool {
    let copy = COPIES.with(|copies| {
        let mut copies = copies.borrow_mut();
        let at = copies.iter().position(|c| c.client.id() == id)?;
        Some(copies.swap_remove(at))
    });
    match copy {
        Some(copy) => {
            COPYING.fetch_sub(1, Ordering::Relaxed);
            copy.client.abandon();
            true
        }
        None => false,
    }
}

/// A keyspace event named `key` (`None`: whole databases changed): the copies of that
/// source are abandoned at their next slice.
pub fn key_changed(key: Option<&[u8]>) {
    if COPYING.load(Ordering::Relaxed) == 0 {
        return;
    }
    COPIES.with(|copies| {
        if let Ok(mut copies) = copies.try_borrow_mut() {
            for copy in copies.iter_mut() {
                if key.is_none_or(|k| k == copy.args.args().bytes(source_arg(&copy.args.args()))) {
                    copy.changed = true;
                }
            }
        }
    });
}
