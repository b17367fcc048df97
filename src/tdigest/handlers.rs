//! The TDIGEST.* commands: RedisBloom 2.4.20's checks in its order, with its error texts;
//! replies as 2.4.20 (RESP2: doubles as the server formats them) and 2.6 (RESP3: doubles,
//! TDIGEST.INFO a map).
//!
//! Replication. Every write is deterministic (the same float operations on every server),
//! so CREATE, RESET, ADD and MERGE replicate as received (an ADD that stops at an overflow
//! replicates the values it did add). But t-digest-c merges a digest's buffer whenever a
//! query needs it (QUANTILE, CDF, TRIMMED_MEAN, RANK and BYRANK inside the range), and a
//! digest merged at another moment holds other centroids. So a read that merges on a
//! master replicates that merge (`TDIGEST.QUANTILE key 0`, which merges and changes nothing
//! else, on any server), and a read on a replica answers from a merged copy, leaving the
//! digest as its master has it.

use crate::api::args::{Args, Parsed};
use crate::api::events::{forks, notify_command, notify_write};
use crate::api::keys::{Key, KeyState};
use crate::api::replication::{replicate, replicate_verbatim, Replicated};
use crate::api::replies::{reply_double, ArrayReply, FieldsReply};
use crate::errors;
use crate::stats::tracked;
use crate::types::TDIGEST_TYPE;
use crate::write::{too_large, Write};
use redbloom_core::tdigest::{TDigest, TDigestError, DEFAULT_COMPRESSION};
use redis_module::{Context, ContextFlags, RedisError, RedisResult, RedisValue};
use std::ops::{Deref, DerefMut};

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

/// The digest in `key`: `key does not exist` when empty, WRONGTYPE for anything else.
#[inline(always)]
fn existing(key: &Key) -> Result<&mut TDigest, RedisError> {
    match key.state::<TDigest>(&TDIGEST_TYPE) {
        KeyState::Ours(digest) => Ok(digest),
        KeyState::Empty => Err(error(errors::TD_KEY_DOES_NOT_EXIST)),
        KeyState::Other => Err(RedisError::WrongType),
    }
}

/// Whether this command may change a digest on its own account: a client's command on a
/// master (a replica's digests change only as its master's stream says; AOF loading
/// replays the merges it recorded).
fn acts_as_master(ctx: &Context) -> bool {
    !ctx.get_flags()
        .intersects(ContextFlags::SLAVE | ContextFlags::REPLICATED | ContextFlags::LOADING)
}

/// Merges `digest` (argument `i`) in place and replicates that merge
/// (`TDIGEST.QUANTILE key 0`: it merges and changes nothing else, on any server).
fn merge_and_replicate(ctx: &Context, args: &Args, i: usize, digest: &mut TDigest) {
    if tracked(digest, TDigest::compress).is_ok() && !digest.has_unmerged() {
        let zero = b"0";
        replicate(
            ctx,
            args,
            "TDIGEST.QUANTILE",
            &[Replicated::Arg(i), Replicated::Bytes(zero)],
        );
    }
}

/// The digest in argument `i`, first merged (on a master) if a save wrote it merged
/// since it was last used: a DUMP (RedisBloom merges the stored digest there) or a fork
/// child's RDB or AOF rewrite (what a replica's full sync and a restart load). Either
/// way the merge is replicated, so replicas and the AOF hold what the master holds.
#[inline(always)]
fn settled<'k>(
    ctx: &Context,
    args: &Args,
    key: &'k Key,
    i: usize,
) -> Result<&'k mut TDigest, RedisError> {
    Ok(settle(ctx, args, i, existing(key)?))
}

/// [`settled`] for a digest already looked up. The usual case, no save and no fork child
/// since the digest's last use, is two comparisons in the command's own function; the
/// rest is out of line.
#[inline(always)]
fn settle<'d>(ctx: &Context, args: &Args, i: usize, digest: &'d mut TDigest) -> &'d mut TDigest {
    if digest.stamp() == forks() && !digest.merge_is_due() {
        return digest;
    }
    settle_after_save(ctx, args, i, digest)
}

/// [`settle`] after a save or a fork child. The server is asked whether the command acts
/// as a master only when a merge is due (`RedisModule_GetContextFlags` is ~115
/// instructions, a twentieth of a single TDIGEST.ADD's).
#[inline(never)]
fn settle_after_save<'d>(
    ctx: &Context,
    args: &Args,
    i: usize,
    digest: &'d mut TDigest,
) -> &'d mut TDigest {
    let due = digest.take_merge_due();
    let forks = forks();
    let forked = digest.stamp() != forks;
    digest.set_stamp(forks);
    if !digest.has_unmerged() {
        return digest;
    }
    // RedisBloom merged (for a buffer that cannot merge: sorted) the digest at each
    // save; a fork child's save does not change its parent's digest, whose buffer
    // this merges only if it can (for replicas, which load the merged one).
    let merges = if due > 0 {
        due
    } else {
        u32::from(forked && digest.merge_empties_buffer())
    };
    if merges > 0 && acts_as_master(ctx) {
        for _ in 0..merges {
            if !digest.has_unmerged() {
                break;
            }
            merge_and_replicate(ctx, args, i, digest);
        }
    }
    digest
}

/// A compression argument: a positive integer.
fn compression_arg(args: &Args, i: usize) -> Result<i64, RedisError> {
    let compression = args.integer(i).ok_or(error(errors::TD_PARSE_COMPRESSION))?;
    if compression <= 0 {
        return Err(error(errors::TD_COMPRESSION_NOT_POSITIVE));
    }
    Ok(compression)
}

/// The first argument from `from` on equal to `word` in any case (RedisBloom's
/// `RMUtil_ArgIndex`), as an offset from `from`.
fn keyword_at(args: &Args, from: usize, word: &str) -> Option<usize> {
    (from..args.len()).position(|i| args.bytes(i).eq_ignore_ascii_case(word.as_bytes()))
}

fn new_digest(
    compression: i64,
    write: &Write,
    failed: &'static str,
) -> Result<TDigest, RedisError> {
    TDigest::new(compression, write.max_bytes()).map_err(|e| match e {
        TDigestError::TooLarge => error(too_large()),
        _ => error(failed),
    })
}

/// TDIGEST.CREATE key [COMPRESSION compression]
pub fn create(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 && args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    match key.state::<TDigest>(&TDIGEST_TYPE) {
        KeyState::Empty => {}
        KeyState::Ours(_) => return Err(error(errors::TD_KEY_EXISTS)),
        KeyState::Other => return Err(RedisError::WrongType),
    }
    let mut compression = DEFAULT_COMPRESSION;
    if args.len() == 4 {
        // RedisBloom looks for the keyword in both arguments, then parses the last one.
        if keyword_at(args, 2, "COMPRESSION").is_none() {
            return Err(error(errors::TD_WRONG_KEYWORD));
        }
        compression = compression_arg(args, 3)?;
    }
    let mut write = Write::new(ctx, args);
    let mut digest = new_digest(compression, &write, errors::TD_ALLOCATION_FAILED)?;
    digest.set_stamp(forks());
    key.set(&TDIGEST_TYPE, Box::new(digest))?;
    write.as_received();
    drop(write);
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// TDIGEST.RESET key
pub fn reset(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, true);
    tracked(settled(ctx, args, &key, 1)?, TDigest::reset);
    ctx.replicate_verbatim();
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Runs a command taking one or more values from argument 2 on with the digest of its
/// key (opened for writing when `write`) and its values: the arity first, then the key
/// (it must hold a digest), then each value through `parse`, in order (RedisBloom's
/// order of checks). The key is looked up once.
fn with_digest_and_values<T: Copy + Default>(
    ctx: &Context,
    args: &Args,
    write: bool,
    parse: impl Fn(usize) -> Result<T, RedisError>,
    run: impl FnOnce(&mut TDigest, Parsed<T>) -> RedisResult,
) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, write);
    let digest = existing(&key)?;
    let values = args.parse_each(2..args.len(), parse)?;
    run(digest, values)
}

/// TDIGEST.ADD key value [value ...]: every value is parsed and checked before any is
/// added. An overflow stops the adds there (those before it stay, as in RedisBloom).
pub fn add(ctx: &Context, args: &Args) -> RedisResult {
    let parse = |i| {
        let value = args.double(i).ok_or(error(errors::TD_PARSE_VAL))?;
        if !value.is_finite() {
            return Err(error(errors::TD_VAL_NOT_FINITE));
        }
        Ok(value)
    };
    with_digest_and_values(ctx, args, true, parse, |digest, values| {
        let digest = settle(ctx, args, 1, digest);
        let added = tracked(digest, |digest| {
            values
                .iter()
                .take_while(|&&value| digest.add(value, 1).is_ok())
                .count()
        });
        if added == values.len() {
            replicate_verbatim(ctx);
        } else if added > 0 {
            let parts: Vec<Replicated> = (1..2 + added).map(Replicated::Arg).collect();
            replicate(ctx, args, "TDIGEST.ADD", &parts);
        }
        if added > 0 {
            notify_command(ctx, c"tdigest.add", args);
        }
        if added < values.len() {
            return Err(error(errors::TD_OVERFLOW));
        }
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}

/// Compresses the digest in `args[i]` in place (a MERGE source or destination).
fn compress_key(ctx: &Context, args: &Args, i: usize) -> Result<(), RedisError> {
    let key = Key::open(ctx, args, i, false);
    let digest = settled(ctx, args, &key, i)?;
    tracked(digest, TDigest::compress).map_err(|_| error(errors::TD_OVERFLOW))
}

/// Adds the (compressed) digest in `args[i]` to `into`.
fn add_key(ctx: &Context, args: &Args, i: usize, into: &mut TDigest) -> Result<(), RedisError> {
    let key = Key::open(ctx, args, i, false);
    let from = key
        .state_shared::<TDigest>(&TDIGEST_TYPE)?
        .ok_or(error(errors::TD_KEY_DOES_NOT_EXIST))?;
    into.add_centroids_of(from)
        .map_err(|_| error(errors::TD_OVERFLOW))
}

/// TDIGEST.MERGE destination numkeys source [source ...] [COMPRESSION c] [OVERRIDE]. The
/// result is a new digest: of the compression given, else the destination's when it
/// exists (without OVERRIDE), else the largest of the sources'; it receives the
/// destination's centroids (unless OVERRIDE) and then each source's, every digest
/// merged (compressed) in place first, as t-digest-c's `td_merge` does.
pub fn merge(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let dest_name = args.bytes(1);
    let dest_compression = {
        let dest = Key::open(ctx, args, 1, false);
        dest.state_shared::<TDigest>(&TDIGEST_TYPE)?
            .map(TDigest::compression_i64)
    };
    let to_exists = dest_compression.is_some();
    let numkeys = args.integer(2).ok_or(error(errors::TD_PARSE_NUMKEYS))?;
    if numkeys <= 0 {
        return Err(error(errors::TD_NUMKEYS_NOT_POSITIVE));
    }
    if numkeys > (args.len() - 3) as i64 {
        return Err(RedisError::WrongArity);
    }
    let numkeys = numkeys as usize;
    let mut compression = dest_compression.unwrap_or(0);
    let mut use_max = !to_exists;
    let mut override_dest = false;
    let rest = numkeys + 3;
    if rest < args.len() {
        let compression_at = keyword_at(args, rest, "COMPRESSION");
        if let Some(at) = compression_at {
            use_max = false;
            if rest + at + 1 >= args.len() {
                return Err(RedisError::WrongArity);
            }
            compression = compression_arg(args, rest + at + 1)?;
        }
        let override_at = keyword_at(args, rest, "OVERRIDE");
        if override_at.is_some() {
            override_dest = true;
            if compression_at.is_none() {
                use_max = true;
                compression = 0;
            }
        }
        if compression_at.is_none() && override_at.is_none() {
            return Err(error(errors::TD_WRONG_KEYWORD));
        }
    }
    for i in 3..rest {
        let key = Key::open(ctx, args, i, false);
        let source = if args.bytes(i) == dest_name && !to_exists {
            None
        } else {
            key.state_shared::<TDigest>(&TDIGEST_TYPE)?
        };
        let source = source.ok_or(error(errors::TD_KEY_DOES_NOT_EXIST))?;
        if use_max {
            compression = compression.max(source.compression_i64());
        }
    }
    let write = Write::new(ctx, args);
    let mut to = new_digest(compression, &write, errors::TD_DEST_ALLOCATION_FAILED)?;
    to.set_stamp(forks());
    drop(write);
    if to_exists && !override_dest {
        // RedisBloom ignores a failure of this first merge.
        if compress_key(ctx, args, 1).is_ok() {
            let _ = add_key(ctx, args, 1, &mut to);
        }
    }
    let mut failed = None;
    for i in 3..rest {
        if let Err(e) = compress_key(ctx, args, i).and_then(|()| add_key(ctx, args, i, &mut to)) {
            failed = Some(e);
            break;
        }
    }
    if let Some(e) = failed {
        // The sources merged so far stay merged, as in RedisBloom: replicate that.
        ctx.replicate_verbatim();
        return Err(e);
    }
    let dest = Key::open(ctx, args, 1, true);
    if let KeyState::Ours(old) = dest.state::<TDigest>(&TDIGEST_TYPE) {
        tracked(old, |old| *old = to);
    } else {
        dest.set(&TDIGEST_TYPE, Box::new(to))?;
    }
    ctx.replicate_verbatim();
    notify_write(ctx, args);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The digest a read answers from.
enum Reading<'k> {
    /// The stored digest (merged in place when the read merges it).
    Stored(&'k mut TDigest),
    /// A merged copy, on a replica: the stored digest changes only as its master's does.
    Copy(Box<TDigest>),
}

impl Deref for Reading<'_> {
    type Target = TDigest;
    fn deref(&self) -> &TDigest {
        match self {
            Reading::Stored(d) => d,
            Reading::Copy(d) => d,
        }
    }
}

impl DerefMut for Reading<'_> {
    fn deref_mut(&mut self) -> &mut TDigest {
        match self {
            Reading::Stored(d) => d,
            Reading::Copy(d) => d,
        }
    }
}

/// The digest of a read command that merges the buffer when `merges` says so (given the
/// digest): see the module doc on replication.
fn reading<'k>(
    ctx: &Context,
    args: &Args,
    digest: &'k mut TDigest,
    merges: impl FnOnce(&TDigest) -> bool,
) -> Reading<'k> {
    let digest = settle(ctx, args, 1, digest);
    // A buffer that cannot merge is only sorted, by each of the query's own merges, as
    // in RedisBloom (a merge here would sort it once more).
    if !digest.has_unmerged() || !merges(digest) || !digest.merge_empties_buffer() {
        return Reading::Stored(digest);
    }
    let flags = ctx.get_flags();
    let from_source = flags.intersects(ContextFlags::REPLICATED | ContextFlags::LOADING);
    if flags.contains(ContextFlags::SLAVE) && !from_source {
        let mut copy = Box::new(digest.clone());
        let _ = copy.compress();
        return Reading::Copy(copy);
    }
    merge_and_replicate(ctx, args, 1, digest);
    Reading::Stored(digest)
}

/// TDIGEST.MIN key / TDIGEST.MAX key: NaN when empty.
#[inline(always)]
fn extreme(ctx: &Context, args: &Args, max: bool) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let digest = settled(ctx, args, &key, 1)?;
    let value = match (digest.size() > 0, max) {
        (false, _) => f64::NAN,
        (true, false) => digest.min(),
        (true, true) => digest.max(),
    };
    reply_double(ctx, value)
}

#[inline(always)]
pub fn min(ctx: &Context, args: &Args) -> RedisResult {
    extreme(ctx, args, false)
}

#[inline(always)]
pub fn max(ctx: &Context, args: &Args) -> RedisResult {
    extreme(ctx, args, true)
}

/// TDIGEST.QUANTILE key q [q ...]: each ascending run of quantiles in one walk, as
/// RedisBloom groups them (the walk's state carries over within a run).
pub fn quantile(ctx: &Context, args: &Args) -> RedisResult {
    let parse = |i| {
        let q = args.double(i).ok_or(error(errors::TD_PARSE_QUANTILE))?;
        if !(0.0..=1.0).contains(&q) {
            return Err(error(errors::TD_QUANTILE_RANGE));
        }
        Ok(q)
    };
    with_digest_and_values(ctx, args, false, parse, |digest, qs| {
        let mut digest = reading(ctx, args, digest, |_| true);
        let mut reply = ArrayReply::with_len(ctx, qs.len());
        digest.quantiles_by_runs_each(&qs, |v| reply.double(v));
        reply.finish()
    })
}

/// TDIGEST.CDF key value [value ...]
pub fn cdf(ctx: &Context, args: &Args) -> RedisResult {
    let parse = |i| args.double(i).ok_or(error(errors::TD_PARSE_CDF));
    with_digest_and_values(ctx, args, false, parse, |digest, vals| {
        let mut digest = reading(ctx, args, digest, |_| true);
        let mut reply = ArrayReply::with_len(ctx, vals.len());
        vals.iter().for_each(|&v| reply.double(digest.cdf(v)));
        reply.finish()
    })
}

/// TDIGEST.TRIMMED_MEAN key low high
pub fn trimmed_mean(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 4 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let digest = existing(&key)?;
    let low = args.double(2).ok_or(error(errors::TD_PARSE_LOW_CUT))?;
    let high = args.double(3).ok_or(error(errors::TD_PARSE_HIGH_CUT))?;
    if !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
        return Err(error(errors::TD_CUTS_RANGE));
    }
    if low >= high {
        return Err(error(errors::TD_CUTS_ORDER));
    }
    let mut digest = reading(ctx, args, digest, |_| true);
    reply_double(ctx, digest.trimmed_mean(low, high))
}

/// TDIGEST.RANK / REVRANK key value [value ...]: the CDF (which merges the buffer) is
/// consulted only for values within the observed range of a non-empty digest.
pub fn rank(ctx: &Context, args: &Args) -> RedisResult {
    ranks(ctx, args, false)
}

pub fn revrank(ctx: &Context, args: &Args) -> RedisResult {
    ranks(ctx, args, true)
}

fn ranks(ctx: &Context, args: &Args, reverse: bool) -> RedisResult {
    let parse = |i| args.double(i).ok_or(error(errors::TD_PARSE_VALUE));
    with_digest_and_values(ctx, args, false, parse, |digest, vals| {
        // RedisBloom reads the size before the CDF merges the buffer.
        let mut size_before = None;
        let in_range = |d: &TDigest| {
            size_before = Some(d.size());
            d.size() != 0 && vals.iter().any(|&v| v >= d.min() && v <= d.max())
        };
        let mut digest = reading(ctx, args, digest, in_range);
        let size = size_before.unwrap_or(digest.size());
        let mut reply = ArrayReply::with_len(ctx, vals.len());
        digest.ranks_at_size_each(size, &vals, reverse, |r| reply.integer(r));
        reply.finish()
    })
}

/// TDIGEST.BYRANK / BYREVRANK key rank [rank ...]: the quantile (which merges the
/// buffer) is consulted only for ranks strictly between 0 and the size.
pub fn by_rank(ctx: &Context, args: &Args) -> RedisResult {
    by_ranks(ctx, args, false)
}

pub fn by_revrank(ctx: &Context, args: &Args) -> RedisResult {
    by_ranks(ctx, args, true)
}

fn by_ranks(ctx: &Context, args: &Args, reverse: bool) -> RedisResult {
    let parse = |i| {
        let rank = args.integer(i).ok_or(error(errors::TD_PARSE_RANK))?;
        if rank < 0 {
            return Err(error(errors::TD_RANK_NEGATIVE));
        }
        Ok(rank)
    };
    with_digest_and_values(ctx, args, false, parse, |digest, ranks| {
        // RedisBloom reads the size before the quantile merges the buffer.
        let mut size_before = None;
        let inside = |d: &TDigest| {
            size_before = Some(d.size());
            let size = d.size() as f64;
            size != 0.0 && ranks.iter().any(|&r| r != 0 && (r as f64) < size)
        };
        let mut digest = reading(ctx, args, digest, inside);
        let size = size_before.unwrap_or(digest.size());
        let mut reply = ArrayReply::with_len(ctx, ranks.len());
        digest.by_ranks_at_size_each(size, &ranks, reverse, |v| reply.double(v));
        reply.finish()
    })
}

/// TDIGEST.INFO key (RESP3: a map).
#[inline(always)]
pub fn info(ctx: &Context, args: &Args) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = Key::open(ctx, args, 1, false);
    let d = settled(ctx, args, &key, 1)?;
    let reply = FieldsReply::labelled(ctx, 9);
    reply.integer(c"Compression", d.compression_i64());
    reply.integer(c"Capacity", d.capacity() as i64);
    reply.integer(c"Merged nodes", d.merged_nodes() as i64);
    reply.integer(c"Unmerged nodes", d.unmerged_nodes() as i64);
    reply.integer(c"Merged weight", d.merged_weight());
    reply.integer(c"Unmerged weight", d.unmerged_weight());
    reply.integer(c"Observations", d.size());
    reply.integer(c"Total compressions", d.total_compressions());
    reply.integer(c"Memory usage", d.mem_usage() as i64);
    reply.finish()
}
