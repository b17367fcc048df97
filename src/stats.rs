//! The module's INFO section: the totals of each filter type (`api::types::TypeStats`),
//! kept current by the data-type callbacks (create, load, copy, free) and, through
//! [`tracked`], by every command that changes a filter.

use crate::api::types::{ModuleValue, TypeStats};

pub static BLOOM_STATS: TypeStats = TypeStats::new("bf");
pub static CUCKOO_STATS: TypeStats = TypeStats::new("cf");
pub static COUNTING_STATS: TypeStats = TypeStats::new("cbf");
pub static WINDOW_STATS: TypeStats = TypeStats::new("wbf");
pub static CMS_STATS: TypeStats = TypeStats::new("cms");
pub static TOPK_STATS: TypeStats = TypeStats::new("topk");
pub static TDIGEST_STATS: TypeStats = TypeStats::new("tdigest");
pub static STATIC_STATS: TypeStats = TypeStats::new("sf");
pub static EXPANDABLE_STATS: TypeStats = TypeStats::new("xf");

/// Every type's totals, in INFO order.
pub fn all() -> [&'static TypeStats; 9] {
    [
        &BLOOM_STATS,
        &CUCKOO_STATS,
        &COUNTING_STATS,
        &WINDOW_STATS,
        &CMS_STATS,
        &TOPK_STATS,
        &TDIGEST_STATS,
        &STATIC_STATS,
        &EXPANDABLE_STATS,
    ]
}

/// A section of INFO that a family adds (SF.BUILD FROM's copies, `src/sf/slices.rs`): the
/// family names it and gives its fields; `lib.rs` passes the families' sections to [`info`],
/// so this shared file imports no family.
pub struct InfoSection {
    pub name: &'static str,
    pub fields: fn() -> Vec<(&'static str, u64)>,
}

/// The module's INFO section (`INFO bf` or `INFO modules`): per filter type the number of
/// filters, their memory (as MEMORY USAGE counts it), items and sub-filters; then the
/// families' own `sections`.
pub fn info(ctx: &redis_module::InfoContext, sections: &[InfoSection]) {
    let build = || -> redis_module::RedisResult<()> {
        let mut section = ctx.builder().add_section("filters");
        for stats in all() {
            for (field, value) in stats.totals() {
                section = section.field(&format!("{}_{field}", stats.name), value)?;
            }
        }
        let mut builder = section
            .build_section()?
            .add_section("config")
            .field(
                "max_filter_bytes",
                crate::config::MAX_FILTER_BYTES.get() as i64,
            )?
            .build_section()?;
        for family_section in sections {
            let mut section = builder.add_section(family_section.name);
            for (field, value) in (family_section.fields)() {
                section = section.field(field, value as i64)?;
            }
            builder = section.build_section()?;
        }
        let mut section = builder.add_section("health");
        // Filters raising each alert, kept on every write (src/health.rs).
        for (field, value) in crate::health::info_fields() {
            section = section.field(&field, value)?;
        }
        section
            .build_section()?
            // MODULE LIST shows the RedisBloom version redbloom answers like; its own is here.
            .add_section("defrag")
            .field(
                "defrag_moved",
                crate::api::types::DEFRAG_MOVED.load(std::sync::atomic::Ordering::Relaxed),
            )?
            .build_section()?
            .add_section("version")
            .field("redbloom_version", crate::REDBLOOM_VERSION)?
            .build_section()?
            .build_info()?;
        Ok(())
    };
    // INFO has no way to report an error; a failed section is simply left out.
    let _ = build();
}

/// Runs a change to a filter and updates its type's INFO totals.
pub fn tracked<T: ModuleValue, R>(value: &mut T, change: impl FnOnce(&mut T) -> R) -> R {
    let before = value.snapshot();
    let alerts = value.alerts();
    let result = change(value);
    T::stats().changed(before, value.snapshot());
    crate::api::alerts::changed(alerts, value.alerts());
    result
}
