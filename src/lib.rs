//! redbloom: RedisBloom-compatible Bloom (BF.*) and Cuckoo (CF.*) filters for Redis, plus a
//! counting and a sliding-window Bloom filter: the thin layer over the module API, on the pure
//! `redbloom-core` crate.

pub mod redis;
pub use redis::ffi::CAUGHT_PANIC_LOG;

use redbloom_core::bloom::chain::Chain;
use redbloom_core::counting::CountingChain;
use redis::ffi::{register_command, CommandSpec, KeyAccess};
use redis::types::{BLOOM_TYPE, COUNTING_TYPE, CUCKOO_TYPE, WINDOW_TYPE};
use redis::{bf, cbf, cf, wbf};
use redis_module::{redis_module, Context, RedisString, Status};

/// MODULE LIST `ver`: the RedisBloom version whose replies redbloom gives, as clients and
/// tools gate features on it (as they read Valkey's `redis_version`). RESP3 clients get the
/// reply shapes of the 2.6 line (every 2.6.x has the same ones), RESP2 clients 2.4.20's,
/// which 2.6 kept: 2.6.0 is the lowest version true of both, so it claims no later
/// release's changes. redbloom's own version is in INFO (`bf_redbloom_version`) and the
/// load log (docs/differences.md).
pub const REDISBLOOM_COMPATIBLE_VERSION: i32 = 20600;

/// redbloom's own version (Cargo.toml).
pub const REDBLOOM_VERSION: &str = env!("CARGO_PKG_VERSION");

const BF_ADD_COMPLEXITY: &str =
    "O(k), where k is the number of hash functions used by the last sub-filter";
const BF_MULTI_COMPLEXITY: &str =
    "O(k * n), where k is the number of hash functions and n is the number of items";
const BF_MADD_SUMMARY: &str =
    "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist";
const LOADCHUNK_SUMMARY: &str = "Restores a filter previously saved using SCANDUMP";
const SCANDUMP_SUMMARY: &str = "Begins an incremental save of the bloom filter";
const CAPACITY_COMPLEXITY: &str = "O(n), where n is the capacity";
const CF_ADD_COMPLEXITY: &str =
    "O(k + i), where k is the number of sub-filters and i is maxIterations";
const CF_INSERT_COMPLEXITY: &str = "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations";
const CF_EXISTS_SUMMARY: &str = "Checks whether one or more items exist in a Cuckoo Filter";
const CF_SUB_COMPLEXITY: &str = "O(k), where k is the number of sub-filters";
const CF_INSERT_ARGS: &str = "key:key [CAPACITY capacity:integer] [NOCREATE] ITEMS item:string...";

/// Every command, with the flags, arity, key access and documentation Redis shows for it
/// (COMPAT §9). CF.COMPACT is a write command here (2.4.20 flagged it read-only).
#[rustfmt::skip]
fn commands() -> Vec<CommandSpec> {
    use KeyAccess::{Read, Write};
    const RW: &str = "write deny-oom";
    const RO: &str = "readonly fast";
    const KEY_ITEM: &str = "key:key item:string";
    const KEY_ITEMS: &str = "key:key item:string...";
    const KEY: &str = "key:key";
    const SCANDUMP_ARGS: &str = "key:key iterator:integer";
    const LOADCHUNK_ARGS: &str = "key:key iterator:integer data:string";
    let spec = |name: &'static str, entry, flags, arity, key, summary, complexity, args| CommandSpec {
        name, entry, flags, arity, key, summary, complexity, args, since: "1.0.0",
        acl_category: match name.split('.').next() {
            Some("bf") => "bloom",
            Some("cf") => "cuckoo",
            Some("wbf") => "wbf",
            _ => "cbf",
        },
    };
    vec![
        spec("bf.reserve", command_entry!(bf::reserve::<Chain>), RW, -4, Write, "Creates a new Bloom Filter", "O(1)",
            "key:key error_rate:double capacity:integer [EXPANSION expansion:integer] [NONSCALING] [BLOCKED]"),
        spec("bf.add", command_entry!(bf::add::<Chain>), RW, 3, Write, "Adds an item to a Bloom Filter", BF_ADD_COMPLEXITY, KEY_ITEM),
        spec("bf.madd", command_entry!(bf::madd::<Chain>), RW, -3, Write, BF_MADD_SUMMARY, BF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("bf.insert", command_entry!(bf::insert::<Chain>), RW, -4, Write, BF_MADD_SUMMARY, BF_MULTI_COMPLEXITY,
            "key:key [CAPACITY capacity:integer] [ERROR error:double] [EXPANSION expansion:integer] [NOCREATE] [NONSCALING] [BLOCKED] ITEMS item:string..."),
        spec("bf.exists", command_entry!(bf::exists::<Chain>), RO, 3, Read, "Checks whether an item exists in a Bloom Filter", BF_ADD_COMPLEXITY, KEY_ITEM),
        spec("bf.mexists", command_entry!(bf::mexists::<Chain>), RO, -3, Read, "Checks whether one or more items exist in a Bloom Filter", BF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("bf.info", command_entry!(bf::info::<Chain>), RO, -2, Read, "Returns information about a Bloom Filter", "O(1)",
            "key:key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]"),
        CommandSpec {
            since: "2.4.4",
            ..spec("bf.card", command_entry!(bf::card::<Chain>), RO, 2, Read, "Returns the cardinality of a Bloom filter", "O(1)", KEY)
        },
        spec("bf.debug", command_entry!(bf::debug::<Chain>), RO, 2, Read, "Returns internal debug information about a Bloom Filter", "O(n), where n is the number of sub-filters", KEY),
        spec("bf.scandump", command_entry!(bf::scandump::<Chain>), RO, 3, Read, SCANDUMP_SUMMARY, CAPACITY_COMPLEXITY, SCANDUMP_ARGS),
        spec("bf.loadchunk", command_entry!(bf::loadchunk::<Chain>), RW, 4, Write, LOADCHUNK_SUMMARY, CAPACITY_COMPLEXITY, LOADCHUNK_ARGS),
        spec("cf.reserve", command_entry!(cf::reserve), RW, -3, Write, "Creates a new Cuckoo Filter", "O(1)",
            "key:key capacity:integer [BUCKETSIZE bucketsize:integer] [MAXITERATIONS maxiterations:integer] [EXPANSION expansion:integer]"),
        spec("cf.add", command_entry!(cf::add), RW, 3, Write, "Adds an item to a Cuckoo Filter", CF_ADD_COMPLEXITY, KEY_ITEM),
        spec("cf.addnx", command_entry!(cf::add), RW, 3, Write, "Adds an item to a Cuckoo Filter if the item did not exist previously.", CF_ADD_COMPLEXITY, KEY_ITEM),
        spec("cf.insert", command_entry!(cf::insert), RW, -4, Write, "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", CF_INSERT_COMPLEXITY, CF_INSERT_ARGS),
        spec("cf.insertnx", command_entry!(cf::insert), RW, -4, Write, "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", CF_INSERT_COMPLEXITY, CF_INSERT_ARGS),
        spec("cf.exists", command_entry!(cf::exists), RO, 3, Read, CF_EXISTS_SUMMARY, CF_SUB_COMPLEXITY, KEY_ITEM),
        spec("cf.mexists", command_entry!(cf::mexists), RO, -3, Read, CF_EXISTS_SUMMARY, "O(k * n), where k is the number of sub-filters and n is the number of items", KEY_ITEMS),
        spec("cf.count", command_entry!(cf::count), RO, 3, Read, "Return the number of times an item might be in a Cuckoo Filter", CF_SUB_COMPLEXITY, KEY_ITEM),
        spec("cf.del", command_entry!(cf::del), "write fast", 3, Write, "Deletes an item from a Cuckoo Filter", CF_SUB_COMPLEXITY, KEY_ITEM),
        spec("cf.compact", command_entry!(cf::compact), "write", 2, Write, "Moves items into older sub-filters where they fit and drops emptied ones", CAPACITY_COMPLEXITY, KEY),
        spec("cf.info", command_entry!(cf::info), RO, 2, Read, "Returns information about a Cuckoo Filter", "O(1)", KEY),
        spec("cf.debug", command_entry!(cf::debug), RO, 2, Read, "Returns internal debug information about a Cuckoo Filter", "O(1)", KEY),
        spec("cf.scandump", command_entry!(cf::scandump), RO, 3, Read, SCANDUMP_SUMMARY, CAPACITY_COMPLEXITY, SCANDUMP_ARGS),
        spec("cf.loadchunk", command_entry!(cf::loadchunk), RW, 4, Write, LOADCHUNK_SUMMARY, CAPACITY_COMPLEXITY, LOADCHUNK_ARGS),
        spec("cbf.reserve", command_entry!(bf::reserve::<CountingChain>), RW, -4, Write, "Creates a new counting Bloom filter", "O(1)", "key:key error_rate:double capacity:integer [EXPANSION expansion:integer] [NONSCALING]"),
        spec("cbf.add", command_entry!(bf::add::<CountingChain>), RW, 3, Write, "Adds an item to a counting Bloom filter", CBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("cbf.madd", command_entry!(bf::madd::<CountingChain>), RW, -3, Write, CBF_MADD_SUMMARY, CBF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("cbf.insert", command_entry!(bf::insert::<CountingChain>), RW, -4, Write, CBF_MADD_SUMMARY, CBF_MULTI_COMPLEXITY, "key:key [CAPACITY capacity:integer] [ERROR error:double] [EXPANSION expansion:integer] [NOCREATE] [NONSCALING] ITEMS item:string..."),
        spec("cbf.exists", command_entry!(bf::exists::<CountingChain>), RO, 3, Read, "Checks whether an item exists in a counting Bloom filter", CBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("cbf.mexists", command_entry!(bf::mexists::<CountingChain>), RO, -3, Read, "Checks whether one or more items exist in a counting Bloom filter", CBF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("cbf.count", command_entry!(cbf::count), RO, 3, Read, "Returns the estimated number of times an item was added to a counting Bloom filter", CBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("cbf.del", command_entry!(cbf::del), "write fast", 3, Write, "Deletes one occurrence of an item from a counting Bloom filter", CBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("cbf.info", command_entry!(bf::info::<CountingChain>), RO, -2, Read, "Returns information about a counting Bloom filter", "O(1)", "key:key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]"),
        spec("cbf.card", command_entry!(bf::card::<CountingChain>), RO, 2, Read, "Returns the number of items in a counting Bloom filter", "O(1)", KEY),
        spec("cbf.debug", command_entry!(bf::debug::<CountingChain>), RO, 2, Read, "Returns internal debug information about a counting Bloom filter", "O(n), where n is the number of sub-filters", KEY),
        spec("cbf.scandump", command_entry!(bf::scandump::<CountingChain>), RO, 3, Read, "Begins an incremental save of the counting Bloom filter", CAPACITY_COMPLEXITY, SCANDUMP_ARGS),
        spec("cbf.loadchunk", command_entry!(bf::loadchunk::<CountingChain>), RW, 4, Write, LOADCHUNK_SUMMARY, CAPACITY_COMPLEXITY, LOADCHUNK_ARGS),
        spec("wbf.reserve", command_entry!(wbf::reserve), RW, -4, Write, "Creates a new sliding-window Bloom filter", "O(1)", "key:key error_rate:double capacity:integer [WINDOW milliseconds:integer]"),
        spec("wbf.add", command_entry!(wbf::add), RW, 3, Write, "Adds an item to a sliding-window Bloom filter", WBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("wbf.madd", command_entry!(wbf::madd), RW, -3, Write, "Adds one or more items to a sliding-window Bloom filter", WBF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("wbf.exists", command_entry!(wbf::exists), RO, 3, Read, "Checks whether an item was added to a sliding-window Bloom filter within its window", WBF_ITEM_COMPLEXITY, KEY_ITEM),
        spec("wbf.mexists", command_entry!(wbf::mexists), RO, -3, Read, "Checks whether one or more items were added to a sliding-window Bloom filter within its window", WBF_MULTI_COMPLEXITY, KEY_ITEMS),
        spec("wbf.info", command_entry!(wbf::info), RO, -2, Read, "Returns information about a sliding-window Bloom filter", "O(k)", "key:key [CAPACITY|WINDOW|ERROR|SIZE|GENERATIONS|ITEMS]"),
        spec("wbf.card", command_entry!(wbf::card), RO, 2, Read, "Returns the number of items added within the window of a sliding-window Bloom filter", "O(k)", KEY),
        spec("wbf.scandump", command_entry!(wbf::scandump), RO, 3, Read, "Begins an incremental save of the sliding-window Bloom filter", CAPACITY_COMPLEXITY, SCANDUMP_ARGS),
        spec("wbf.loadchunk", command_entry!(wbf::loadchunk), RW, 4, Write, LOADCHUNK_SUMMARY, CAPACITY_COMPLEXITY, LOADCHUNK_ARGS),
        spec("wbf.at", command_entry!(wbf::at), RW, -5, Write, "A write at the master's time, as replicas and the AOF receive WBF writes (refused from clients)", WBF_MULTI_COMPLEXITY, "key:key milliseconds:integer subcommand:string argument:string..."),
    ]
}

const CBF_ITEM_COMPLEXITY: &str =
    "O(k * n), where k is the number of hash functions and n is the number of sub-filters";
const CBF_MULTI_COMPLEXITY: &str =
    "O(k * n * m), where k is the number of hash functions, n the number of sub-filters and m the number of items";
const CBF_MADD_SUMMARY: &str =
    "Adds one or more items to a counting Bloom filter. A filter will be created if it does not exist";

const WBF_ITEM_COMPLEXITY: &str = "O(k), where k is the number of slices an item is added to";
const WBF_MULTI_COMPLEXITY: &str =
    "O(k * n), where k is the number of slices an item is added to and n the number of items";

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_slice().to_vec()).collect();
    if let Err(message) = redis::config::apply_load_args(&args) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    redis::config::register(ctx);
    if let Err(message) = redis::ffi::add_acl_categories(ctx, &["bloom", "cuckoo", "cbf", "wbf"]) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    ctx.set_module_options(redis_module::ModuleOptions::HANDLE_IO_ERRORS);
    redis::ffi::register_info(ctx, redis::stats::info);
    for spec in commands() {
        if let Err(message) = register_command(ctx, &spec) {
            ctx.log_warning(&message);
            return Status::Err;
        }
    }
    ctx.log_notice(&format!(
        "redbloom {REDBLOOM_VERSION} loaded (RedisBloom {}.{}.{} compatible: 2.4.20 replies for \
         RESP2 clients, 2.6 reply shapes for RESP3 clients)",
        REDISBLOOM_COMPATIBLE_VERSION / 10000,
        REDISBLOOM_COMPATIBLE_VERSION / 100 % 100,
        REDISBLOOM_COMPATIBLE_VERSION % 100
    ));
    Status::Ok
}

redis_module! {
    name: "bf",
    version: REDISBLOOM_COMPATIBLE_VERSION,
    allocator: (redis::ffi::ModuleAllocator, redis::ffi::ModuleAllocator),
    data_types: [BLOOM_TYPE, CUCKOO_TYPE, COUNTING_TYPE, WINDOW_TYPE],
    init: init,
}
