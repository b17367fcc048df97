//! The server-wide health counts: how many filters raise each alert
//! (`redbloom_core::health::ALERTS`), kept like the INFO totals of `types.rs` by the
//! data-type callbacks (created, loaded, copied, freed) and by every write
//! (`stats::tracked`); INFO reads counters, never keys. A write that newly raises "over
//! its FP rate" or "over its capacity" asks for its keyspace event (`events::raise`).

use super::events::raise;
use redbloom_core::health::{ALERTS, OVER_CAPACITY, OVER_FP};
use std::sync::atomic::{AtomicI64, Ordering};

/// The number of alert flags.
pub const FLAGS: usize = ALERTS.len();

/// Filters raising each alert, in two parts as `TypeStats` keeps them: the main thread's
/// (create, load, copy, write: a single writer, plain loads and stores) and the frees'
/// (atomic adds: lazy free runs on a background thread).
struct AlertCounts {
    main_thread: [AtomicI64; FLAGS],
    freed: [AtomicI64; FLAGS],
}

static COUNTS: AlertCounts = AlertCounts {
    main_thread: [const { AtomicI64::new(0) }; FLAGS],
    freed: [const { AtomicI64::new(0) }; FLAGS],
};

/// Unix time (seconds) a filter last raised an alert it did not have; 0: never.
static LAST_CROSSING: AtomicI64 = AtomicI64::new(0);

fn add_on_main_thread(alerts: u8, delta: i64) {
    for (i, (flag, _)) in ALERTS.iter().enumerate() {
        if alerts & flag != 0 {
            let counter = &COUNTS.main_thread[i];
            counter.store(
                counter.load(Ordering::Relaxed).wrapping_add(delta),
                Ordering::Relaxed,
            );
        }
    }
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A filter with these alerts came into being (created, loaded, restored, copied).
pub fn created(alerts: u8) {
    if alerts != 0 {
        add_on_main_thread(alerts, 1);
        LAST_CROSSING.store(now_seconds(), Ordering::Relaxed);
    }
}

/// A filter with these alerts was freed (on any thread).
pub fn freed(alerts: u8) {
    for (i, (flag, _)) in ALERTS.iter().enumerate() {
        if alerts & flag != 0 {
            COUNTS.freed[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A write changed a filter's alerts from `before` to `after`; a newly raised "over its
/// FP rate" or "over its capacity" asks for its keyspace event.
pub fn changed(before: u8, after: u8) {
    if before == after {
        return;
    }
    add_on_main_thread(before & !after, -1);
    let raised = after & !before;
    add_on_main_thread(raised, 1);
    if raised != 0 {
        LAST_CROSSING.store(now_seconds(), Ordering::Relaxed);
        let events = u8::from(raised & OVER_FP != 0) | (u8::from(raised & OVER_CAPACITY != 0) << 1);
        if events != 0 {
            raise(events);
        }
    }
}

/// Filters raising each alert now, in `ALERTS` order, and the time of the last crossing.
pub fn counts() -> ([i64; FLAGS], i64) {
    let each = std::array::from_fn(|i| {
        COUNTS.main_thread[i]
            .load(Ordering::Relaxed)
            .wrapping_sub(COUNTS.freed[i].load(Ordering::Relaxed))
    });
    (each, LAST_CROSSING.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use redbloom_core::health::{LONG_CHAIN, SATURATED};

    /// The only test touching the counts (they are the process's).
    #[test]
    fn counts_follow_create_change_and_free() {
        let at = |flag: u8| ALERTS.iter().position(|(f, _)| *f == flag).unwrap();
        let count = |flag: u8| counts().0[at(flag)];
        created(0);
        assert_eq!(counts(), ([0; FLAGS], 0));
        created(OVER_CAPACITY | LONG_CHAIN);
        created(OVER_CAPACITY);
        assert_eq!((count(OVER_CAPACITY), count(LONG_CHAIN)), (2, 1));
        assert!(counts().1 > 0);
        changed(OVER_CAPACITY, OVER_CAPACITY | OVER_FP | SATURATED);
        assert_eq!((count(OVER_FP), count(SATURATED)), (1, 1));
        changed(OVER_CAPACITY | OVER_FP | SATURATED, 0);
        assert_eq!(count(OVER_CAPACITY), 1);
        assert_eq!((count(OVER_FP), count(SATURATED)), (0, 0));
        freed(OVER_CAPACITY | LONG_CHAIN);
        assert_eq!(counts().0, [0; FLAGS]);
    }
}
