//! Totals per filter type for the module's INFO section, kept current by the data-type
//! callbacks (create, load, copy, free) and by every command that changes a filter.

use std::sync::atomic::{AtomicI64, Ordering};

/// What one filter contributes to the totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes: i64,
    pub items: i64,
    pub sub_filters: i64,
}

/// Running totals of one filter type. Atomic: lazy free runs the free callback off the
/// main thread.
pub struct TypeStats {
    pub name: &'static str,
    filters: AtomicI64,
    bytes: AtomicI64,
    items: AtomicI64,
    sub_filters: AtomicI64,
}

impl TypeStats {
    pub const fn new(name: &'static str) -> Self {
        TypeStats {
            name,
            filters: AtomicI64::new(0),
            bytes: AtomicI64::new(0),
            items: AtomicI64::new(0),
            sub_filters: AtomicI64::new(0),
        }
    }

    fn add(&self, filters: i64, s: Snapshot) {
        self.filters.fetch_add(filters, Ordering::Relaxed);
        self.bytes.fetch_add(s.bytes, Ordering::Relaxed);
        self.items.fetch_add(s.items, Ordering::Relaxed);
        self.sub_filters.fetch_add(s.sub_filters, Ordering::Relaxed);
    }

    /// A filter came into being (created, loaded, copied).
    pub fn created(&self, s: Snapshot) {
        self.add(1, s);
    }

    /// A filter was freed.
    pub fn freed(&self, s: Snapshot) {
        self.add(
            -1,
            Snapshot {
                bytes: -s.bytes,
                items: -s.items,
                sub_filters: -s.sub_filters,
            },
        );
    }

    /// A filter changed from `before` to `after`.
    pub fn changed(&self, before: Snapshot, after: Snapshot) {
        if before != after {
            self.add(
                0,
                Snapshot {
                    bytes: after.bytes - before.bytes,
                    items: after.items - before.items,
                    sub_filters: after.sub_filters - before.sub_filters,
                },
            );
        }
    }

    /// (filters, bytes, items, sub-filters) now.
    pub fn totals(&self) -> [(&'static str, i64); 4] {
        [
            ("filters", self.filters.load(Ordering::Relaxed)),
            ("bytes", self.bytes.load(Ordering::Relaxed)),
            ("items", self.items.load(Ordering::Relaxed)),
            ("sub_filters", self.sub_filters.load(Ordering::Relaxed)),
        ]
    }
}

pub static BLOOM_STATS: TypeStats = TypeStats::new("bf");
pub static CUCKOO_STATS: TypeStats = TypeStats::new("cf");
pub static COUNTING_STATS: TypeStats = TypeStats::new("cbf");
pub static WINDOW_STATS: TypeStats = TypeStats::new("wbf");

/// Every type's totals, in INFO order.
pub fn all() -> [&'static TypeStats; 4] {
    [&BLOOM_STATS, &CUCKOO_STATS, &COUNTING_STATS, &WINDOW_STATS]
}

/// The module's INFO section (`INFO bf` or `INFO modules`): per filter type the number of
/// filters, their memory (as MEMORY USAGE counts it), items and sub-filters.
pub fn info(ctx: &redis_module::InfoContext) {
    let build = || -> redis_module::RedisResult<()> {
        let mut section = ctx.builder().add_section("filters");
        for stats in all() {
            for (field, value) in stats.totals() {
                section = section.field(&format!("{}_{field}", stats.name), value)?;
            }
        }
        section
            .build_section()?
            .add_section("config")
            .field(
                "max_filter_bytes",
                super::config::MAX_FILTER_BYTES.get() as i64,
            )?
            .build_section()?
            // MODULE LIST shows the RedisBloom version redbloom answers like; its own is here.
            .add_section("version")
            .field("redbloom_version", crate::REDBLOOM_VERSION)?
            .build_section()?
            .build_info()?;
        Ok(())
    };
    // INFO has no way to report an error; a failed section is simply left out.
    let _ = build();
}

#[cfg(test)]
mod tests {
    use super::*;

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
