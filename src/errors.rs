//! Every literal error reply, defined once. The texts are RedisBloom 2.4.20's, byte for byte
//! (some have no `ERR` prefix, one ends in a space): clients match on them.

// Shared key lookup errors.
pub const NOT_FOUND: &str = "ERR not found";
pub const ITEM_EXISTS: &str = "ERR item exists";

// Any command: the key could not take the new value, or the handler panicked (redbloom's own).
pub const COULD_NOT_STORE: &str = "ERR could not store the filter";
pub const INTERNAL_ERROR: &str = "ERR internal error in redbloom";

// Creation and growth (HEAD's hardening: fallible allocation, and redbloom's ceiling).
pub const INSUFFICIENT_MEMORY_TO_CREATE: &str = "ERR Insufficient memory to create filter";
pub const PROBLEM_INSERTING: &str = "ERR problem inserting into filter";
pub const TOO_LARGE: &str = "ERR filter would exceed the max-filter-bytes limit";
pub const TOO_LARGE_FOR_MAXMEMORY: &str = "ERR filter would exceed the memory left under maxmemory";

// BF.RESERVE
pub const BAD_ERROR_RATE: &str = "ERR bad error rate";
pub const ERROR_RATE_RANGE: &str = "ERR (0 < error rate range < 1) ";
pub const BAD_CAPACITY: &str = "ERR bad capacity";
pub const CAPACITY_RANGE: &str = "ERR (capacity should be larger than 0)";
pub const NO_EXPANSION: &str = "ERR no expansion";
pub const NONSCALING_CANNOT_EXPAND: &str = "Nonscaling filters cannot expand";
pub const BAD_EXPANSION: &str = "ERR bad expansion";
pub const EXPANSION_RANGE: &str = "ERR expansion must be in the range [0, 32768]";
pub const COULD_NOT_CREATE_BF: &str = "ERR could not create filter";

// BF.ADD / BF.MADD / BF.INSERT
pub const NONSCALING_FULL: &str = "ERR non scaling filter is full";
pub const INSERT_BAD_ERROR_RATE: &str = "Bad error rate";
pub const INSERT_BAD_EXPANSION: &str = "Bad expansion";
pub const INSERT_BAD_CAPACITY: &str = "Bad capacity";
pub const UNKNOWN_ARGUMENT: &str = "Unknown argument received";
pub const BAD_ARGUMENT: &str = "Bad argument received";

// BF.INFO, BF.SCANDUMP, BF.LOADCHUNK
pub const INVALID_INFO_VALUE: &str = "Invalid information value";
pub const SCANDUMP_NOT_NUMERIC: &str = "Second argument must be numeric";
pub const LOADCHUNK_NOT_NUMERIC: &str = "ERR Second argument must be numeric";
pub const RECEIVED_BAD_DATA: &str = "ERR received bad data";
pub const NO_LINK_FOUND: &str = "ERR invalid offset - no link found";
pub const CHUNK_TOO_BIG: &str = "ERR invalid chunk - Too big for current filter";

// BF.MERGE, CBF.MERGE, CF.MERGE (redbloom's own); the first two are followed by a key name.
pub const MERGE_SHAPE_DIFFERS: &str =
    "ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: ";
pub const MERGE_INTERSECT_MULTI_LINK: &str = "ERR INTERSECT needs filters of a single link: ";
pub const MERGE_BAD_NUMKEYS: &str = "ERR numkeys must be a positive integer";
pub const MERGE_NUMKEYS_MISMATCH: &str = "ERR numkeys does not match the keys given";
pub const CF_MERGE_FULL: &str = "ERR the merged filter is full: a fingerprint found no slot";
pub const CF_MERGE_HUGE: &str =
    "ERR Cuckoo filters with a sub-filter of 4 GiB or more cannot be merged";

// WBF.RESERVE, WBF.AT
pub const BAD_WINDOW: &str = "ERR bad window";
pub const BAD_TIME: &str = "ERR bad time";
pub const AT_FROM_CLIENT: &str = "ERR WBF.AT is accepted only from the master or the AOF";

// CF.RESERVE
pub const CF_BAD_CAPACITY: &str = "Bad capacity";
pub const PARSE_MAXITERATIONS: &str = "Couldn't parse MAXITERATIONS";
pub const PARSE_BUCKETSIZE: &str = "Couldn't parse BUCKETSIZE";
pub const PARSE_EXPANSION: &str = "Couldn't parse EXPANSION";
pub const MAXITERATIONS_RANGE: &str =
    "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
pub const BUCKETSIZE_RANGE: &str =
    "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
pub const CF_EXPANSION_RANGE: &str =
    "EXPANSION: value must be an integer between 0 and 32768, inclusive.";
pub const CF_CAPACITY_TOO_SMALL: &str = "Capacity must be at least (BucketSize * 2)";
pub const COULD_NOT_CREATE_CF: &str = "ERR Could not create filter";

// CF.ADD / CF.ADDNX / CF.INSERT / CF.INSERTNX
pub const MAX_EXPANSIONS_REACHED: &str = "Maximum expansions reached";
pub const FILTER_FULL: &str = "Filter is full";
pub const INSUFFICIENT_MEMORY: &str = "ERR Insufficient memory";

// CF.DEL, CF.COMPACT, CF.SCANDUMP, CF.LOADCHUNK
pub const CF_NOT_FOUND: &str = "Not found";
pub const CF_COMPACT_NOT_FOUND: &str = "Cuckoo filter was not found";
pub const INVALID_POSITION: &str = "Invalid position";
pub const INVALID_HEADER: &str = "Invalid header";
pub const COULD_NOT_CREATE_FILTER_FROM_HEADER: &str = "Couldn't create filter!";
pub const COULD_NOT_LOAD_CHUNK: &str = "Couldn't load chunk!";

// CMS.* (RedisBloom 2.4.20's texts; none has an `ERR` prefix)
pub const CMS_KEY_DOES_NOT_EXIST: &str = "CMS: key does not exist";
pub const CMS_KEY_EXISTS: &str = "CMS: key already exists";
pub const CMS_INVALID_WIDTH: &str = "CMS: invalid width";
pub const CMS_INVALID_DEPTH: &str = "CMS: invalid depth";
pub const CMS_INVALID_OVERESTIMATION: &str = "CMS: invalid overestimation value";
pub const CMS_INVALID_PROB: &str = "CMS: invalid prob value";
pub const CMS_INVALID_INIT_ARGUMENTS: &str = "CMS: invalid init arguments";
pub const CMS_INSUFFICIENT_MEMORY: &str = "CMS: Insufficient memory to create the key";
pub const CMS_CANNOT_PARSE_NUMBER: &str = "CMS: Cannot parse number";
pub const CMS_INCRBY_OVERFLOW: &str = "CMS: INCRBY overflow";
pub const CMS_INVALID_NUMKEYS: &str = "CMS: invalid numkeys";
pub const CMS_NUMKEYS_NOT_POSITIVE: &str = "CMS: Number of keys must be positive";
pub const CMS_WRONG_NUMBER_OF_KEYS: &str = "CMS: wrong number of keys";
pub const CMS_WRONG_NUMBER_OF_KEYS_WEIGHTS: &str = "CMS: wrong number of keys/weights";
pub const CMS_INVALID_WEIGHT: &str = "CMS: invalid weight value";
pub const CMS_DIMENSIONS_DIFFER: &str = "CMS: width/depth is not equal";
pub const CMS_MERGE_OVERFLOW: &str = "CMS: MERGE overflow";
// CMS.* texts RedisBloom 8.12 added (the published texts: docs/compat.md, "Count-Min Sketch")
pub const CMS_CELL_SIZE_INVALID: &str = "CMS: CELL_SIZE must be 1, 2, 4 or 8";
pub const CMS_INCRBY_UNDERFLOW: &str = "CMS: INCRBY underflow";
pub const CMS_CELL_SIZE_DIFFERS: &str = "CMS: cell size is not equal";

// TOPK.* (RedisBloom 2.4.20's texts; none has an `ERR` prefix)
pub const TOPK_KEY_DOES_NOT_EXIST: &str = "TopK: key does not exist";
pub const TOPK_KEY_EXISTS: &str = "TopK: key already exists";
pub const TOPK_INVALID_K: &str = "TopK: invalid k";
pub const TOPK_INVALID_WIDTH: &str = "TopK: invalid width";
pub const TOPK_INVALID_DEPTH: &str = "TopK: invalid depth";
pub const TOPK_INVALID_DECAY: &str = "TopK: invalid decay value. must be '<= 1' & '> 0'";
/// RedisBloom's text as its C source spells it: a line continuation inside the string
/// leaves 28 spaces before "and".
pub const TOPK_INVALID_INCREMENT: &str = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000";
pub const TOPK_WITHCOUNT_EXPECTED: &str = "WITHCOUNT keyword expected";
// TDIGEST.* (RedisBloom 2.4.20's texts)
pub const TD_KEY_DOES_NOT_EXIST: &str = "ERR T-Digest: key does not exist";
pub const TD_KEY_EXISTS: &str = "ERR T-Digest: key already exists";
pub const TD_PARSE_COMPRESSION: &str = "ERR T-Digest: error parsing compression parameter";
pub const TD_COMPRESSION_NOT_POSITIVE: &str =
    "ERR T-Digest: compression parameter needs to be a positive integer";
pub const TD_WRONG_KEYWORD: &str = "ERR T-Digest: wrong keyword";
pub const TD_ALLOCATION_FAILED: &str = "ERR T-Digest: allocation failed";
pub const TD_DEST_ALLOCATION_FAILED: &str = "ERR T-Digest: allocation of destination digest failed";
pub const TD_PARSE_VAL: &str = "ERR T-Digest: error parsing val parameter";
pub const TD_VAL_NOT_FINITE: &str = "ERR T-Digest: val parameter needs to be a finite number";
pub const TD_OVERFLOW: &str = "ERR T-Digest: overflow detected";
pub const TD_PARSE_NUMKEYS: &str = "ERR T-Digest: error parsing numkeys";
pub const TD_NUMKEYS_NOT_POSITIVE: &str = "ERR T-Digest: numkeys needs to be a positive integer";
pub const TD_PARSE_VALUE: &str = "ERR T-Digest: error parsing value";
pub const TD_PARSE_RANK: &str = "ERR T-Digest: error parsing rank";
pub const TD_RANK_NEGATIVE: &str = "ERR T-Digest: rank needs to be non negative";
pub const TD_PARSE_QUANTILE: &str = "ERR T-Digest: error parsing quantile";
pub const TD_QUANTILE_RANGE: &str = "ERR T-Digest: quantile should be in [0,1]";
pub const TD_PARSE_CDF: &str = "ERR T-Digest: error parsing cdf";
pub const TD_PARSE_LOW_CUT: &str = "ERR T-Digest: error parsing low_cut_percentile";
pub const TD_PARSE_HIGH_CUT: &str = "ERR T-Digest: error parsing high_cut_percentile";
pub const TD_CUTS_RANGE: &str =
    "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]";
pub const TD_CUTS_ORDER: &str =
    "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile";

// Module configs (CONFIG SET wraps these in its own error) and load-time arguments (the
// server logs these and refuses to start): redbloom's texts.
pub const CONFIG_BAD_ERROR_RATE: &str = "Invalid value for `bf-error-rate`";
pub const CONFIG_ERROR_RATE_RANGE: &str =
    "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)";
pub const LOAD_ARGS_ODD: &str = "Invalid number of arguments passed";
pub const LOAD_BAD_ERROR_RATE: &str = "Invalid argument for 'ERROR_RATE'";
pub const LOAD_ERROR_RATE_NOT_POSITIVE: &str = "ERROR_RATE must be > 0";
pub const LOAD_ERROR_RATE_NOT_BELOW_ONE: &str = "ERROR_RATE must be < 1";
pub const LOAD_BAD_INITIAL_SIZE: &str = "Invalid argument for 'INITIAL_SIZE'";
pub const LOAD_INITIAL_SIZE_NOT_POSITIVE: &str = "INITIAL_SIZE must be > 0";
pub const LOAD_BAD_CF_MAX_EXPANSIONS: &str = "Invalid argument for 'CF_MAX_EXPANSIONS'";
pub const LOAD_CF_MAX_EXPANSIONS_RANGE: &str = "CF_MAX_EXPANSIONS must be an integer >= 1";
// SF.* (redbloom's own; the error rate is parsed as BF.RESERVE's, with its errors)
pub const SF_ERROR_RATE_TOO_HIGH: &str = "ERR a static filter's error rate must be below 0.5";
pub const SF_ERROR_RATE_TOO_LOW: &str =
    "ERR a static filter's error rate must be at least 2^-32 (fingerprints have at most 32 bits)";
pub const SF_ITEMS_OR_FROM: &str = "ERR expected ITEMS item [item ...] or FROM source";
pub const SF_FROM_CANNOT_BLOCK: &str =
    "ERR SF.BUILD FROM a source of more than 20000 members blocks the client, which MULTI and scripts do not allow";
pub const SF_FROM_BUSY: &str =
    "ERR SF.BUILD FROM needs a child process, and another one (BGSAVE, AOF rewrite or another build) is running; try again later";
pub const SF_FROM_BUSY_MIGRATION: &str =
    "ERR SF.BUILD FROM needs a child process, and a slot migration's snapshot (CLUSTER MIGRATESLOTS) is running; try again when the migration is done";
pub const SF_FROM_SLOT_MOVED: &str =
    "ERR SF.BUILD FROM: the key's slot moved to another node during the build (slot migration); nothing was stored, run it again on the slot's owner";
pub const SF_FROM_CHILD_FAILED: &str =
    "ERR SF.BUILD FROM: the child process building the filter failed (see the server log)";
pub const SF_SOURCE_NOPERM: &str =
    "NOPERM this user has no permissions to read the source of SF.BUILD FROM";
pub const SF_TOO_MANY_ITEMS: &str = "ERR a static filter holds at most 2147483648 items";
pub const SF_BAD_ENCODING: &str = "ERR ENCODING must be RIBBON or FUSE";
pub const SF_BUILD_FAILED: &str = "ERR could not build the filter";
pub const SF_INCOMPLETE: &str =
    "ERR the filter is incomplete: SF.LOADCHUNK has not loaded all of it";
// XF.* (redbloom's own; the error rate and capacity are parsed as BF.RESERVE's, with its
// errors; the core's refusals reply `XfError`'s own text)
pub const XF_INCOMPLETE: &str =
    "ERR the filter is incomplete: XF.LOADCHUNK has not loaded all of it";

#[cfg(test)]
mod tests {
    use super::*;
    use redbloom_core::{cuckoo, limits, static_filter};

    /// SF_FROM_CANNOT_BLOCK's limit is checked beside it, in `src/sf/from.rs` (this shared
    /// file imports no family).
    #[test]
    fn sf_errors_state_the_limits() {
        assert_eq!(
            SF_TOO_MANY_ITEMS,
            format!(
                "ERR a static filter holds at most {} items",
                static_filter::MAX_ITEMS
            )
        );
        assert_eq!(static_filter::MAX_BITS, 32);
    }

    /// The strings are literal (as clients match them); the limits they state are the
    /// core's, so the two cannot drift apart.
    #[test]
    fn range_errors_state_the_core_limits() {
        let max = limits::MAX_EXPANSION;
        assert_eq!(
            EXPANSION_RANGE,
            format!("ERR expansion must be in the range [0, {max}]")
        );
        assert_eq!(
            CF_EXPANSION_RANGE,
            format!("EXPANSION: value must be an integer between 0 and {max}, inclusive.")
        );
        assert_eq!(
            BUCKETSIZE_RANGE,
            format!(
                "BUCKETSIZE: value must be an integer between 1 and {}, inclusive.",
                cuckoo::MAX_BUCKET_SIZE
            )
        );
    }
}
