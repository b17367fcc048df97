//! The TDIGEST.* command table: RedisBloom's flags (`write deny-oom` for every write,
//! `readonly` for every read), its summaries (commands.json), the arities it checks;
//! TDIGEST.MERGE declares its source keys.

use super::{handlers, ACL_CATEGORY};
use crate::api::commands::Command;
use crate::api::commands::KeyAccess::{Read, Write, WriteFromSources};
use crate::command_entry;
use crate::command_table::{KEY, READ_ONLY, WRITE_MAY_ALLOCATE};

const SINCE: &str = "2.4.0";

/// A read command of the table (`readonly`, one key).
fn read(
    name: &'static str,
    handler: crate::api::commands::CommandFn,
    arity: i32,
    summary: &'static str,
    args: &'static str,
) -> Command {
    Command {
        name,
        handler,
        flags: "readonly",
        arity,
        key: Read,
        acl_category: ACL_CATEGORY,
        summary,
        complexity: "O(1)",
        args,
        since: SINCE,
    }
}

/// Every TDIGEST.* command.
pub fn commands() -> Vec<Command> {
    vec![
        Command {
            name: "tdigest.create",
            handler: command_entry!(handlers::create),
            flags: WRITE_MAY_ALLOCATE,
            arity: -2,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Allocates memory and initializes a new t-digest sketch",
            complexity: "O(1)",
            args: "key:key [COMPRESSION compression:integer]",
            since: SINCE,
        },
        Command {
            name: "tdigest.reset",
            handler: command_entry!(handlers::reset),
            flags: WRITE_MAY_ALLOCATE,
            arity: 2,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Resets a t-digest sketch: empty the sketch and re-initializes it.",
            complexity: "O(1)",
            args: KEY,
            since: SINCE,
        },
        Command {
            name: "tdigest.add",
            handler: command_entry!(handlers::add),
            flags: WRITE_MAY_ALLOCATE,
            arity: -3,
            key: Write,
            acl_category: ACL_CATEGORY,
            summary: "Adds one or more observations to a t-digest sketch",
            complexity: "O(N) , where N is the number of samples to add",
            args: "key:key value:double...",
            since: SINCE,
        },
        Command {
            name: "tdigest.merge",
            handler: command_entry!(handlers::merge, key_positions),
            flags: WRITE_MAY_ALLOCATE,
            arity: -4,
            key: WriteFromSources,
            acl_category: ACL_CATEGORY,
            summary: "Merges multiple t-digest sketches into a single sketch",
            complexity: "O(N*K), where N is the number of centroids and K being the number of \
                         input sketches",
            args: "destination-key:key numkeys:integer source-key:key... \
                   [COMPRESSION compression:integer] [OVERRIDE]",
            since: SINCE,
        },
        Command {
            flags: READ_ONLY,
            ..read(
                "tdigest.min",
                command_entry!(handlers::min),
                2,
                "Returns the minimum observation value from a t-digest sketch",
                KEY,
            )
        },
        Command {
            flags: READ_ONLY,
            ..read(
                "tdigest.max",
                command_entry!(handlers::max),
                2,
                "Returns the maximum observation value from a t-digest sketch",
                KEY,
            )
        },
        read(
            "tdigest.quantile",
            command_entry!(handlers::quantile),
            -3,
            "Returns, for each input fraction, an estimation of the value (floating point) \
             that is smaller than the given fraction of observations",
            "key:key quantile:double...",
        ),
        read(
            "tdigest.cdf",
            command_entry!(handlers::cdf),
            -3,
            "Returns, for each input value, an estimation of the fraction (floating-point) of \
             (observations smaller than the given value + half the observations equal to the \
             given value)",
            "key:key value:double...",
        ),
        Command {
            complexity: "O(N) where N is the number of centroids",
            ..read(
                "tdigest.trimmed_mean",
                command_entry!(handlers::trimmed_mean),
                4,
                "Returns an estimation of the mean value from the sketch, excluding \
                 observation values outside the low and high cutoff quantiles",
                "key:key low_cut_quantile:double high_cut_quantile:double",
            )
        },
        read(
            "tdigest.rank",
            command_entry!(handlers::rank),
            -3,
            "Returns, for each input value (floating-point), the estimated rank of the value \
             (the number of observations in the sketch that are smaller than the value + half \
             the number of observations that are equal to the value)",
            "key:key value:double...",
        ),
        read(
            "tdigest.revrank",
            command_entry!(handlers::revrank),
            -3,
            "Returns, for each input value (floating-point), the estimated reverse rank of the \
             value (the number of observations in the sketch that are larger than the value + \
             half the number of observations that are equal to the value)",
            "key:key value:double...",
        ),
        read(
            "tdigest.byrank",
            command_entry!(handlers::by_rank),
            -3,
            "Returns, for each input rank, an estimation of the value (floating-point) with \
             that rank",
            "key:key rank:double...",
        ),
        read(
            "tdigest.byrevrank",
            command_entry!(handlers::by_revrank),
            -3,
            "Returns, for each input reverse rank, an estimation of the value (floating-point) \
             with that reverse rank",
            "key:key reverse_rank:double...",
        ),
        Command {
            flags: READ_ONLY,
            ..read(
                "tdigest.info",
                command_entry!(handlers::info),
                2,
                "Returns information and statistics about a t-digest sketch",
                KEY,
            )
        },
        crate::command_table::health_command(
            "tdigest.health",
            command_entry!(health),
            ACL_CATEGORY,
        ),
    ]
}

/// TDIGEST.HEALTH key (src/health.rs).
fn health(ctx: &redis_module::Context, args: &crate::api::args::Args) -> redis_module::RedisResult {
    crate::health::command::<redbloom_core::tdigest::TDigest>(
        ctx,
        args,
        &[&crate::types::TDIGEST_TYPE],
    )
}
