//! `SF.BUILD key error_rate FROM source`: the filter of a set's or sorted set's members or
//! a hash's fields, as they are when the command runs.
//!
//! A source of at most [`FROM_SYNC_MAX_MEMBERS`] members is read and built in the command
//! itself (~5 ms at the limit). A larger one is built in a forked child, as BGSAVE saves:
//! the child sees the data set as it was at the fork, scans the source, builds the
//! filter and writes it to an unnamed in-memory file made before the fork; the client is
//! blocked meanwhile and the server serves everyone else. When the server has reaped the
//! child, a thread reads the filter back and checks it (the SF.LOADCHUNK checks: header,
//! sizes, checksum); the answer, on the main thread, then stores it, unless the key was created
//! meanwhile (`ERR item exists`, nothing overwritten), replicates it as its SF.LOADCHUNK
//! sequence, as every FROM build is, and replies OK.
//!
//! One build runs at a time, and only when no other child (BGSAVE, an AOF rewrite) runs:
//! the server keeps a single child. A client that disconnects while blocked kills its
//! child. Where the client cannot block (MULTI/EXEC, scripts) a large source is an error;
//! a write from the master or the AOF (never FROM: masters replicate LOADCHUNK) builds in
//! the command, whatever the size, so a replica does not refuse it.

use super::handlers::{build_and_store, max_bytes, store};
use super::value::STATIC_TYPE;
use crate::api::args::{Args, OwnedArgs};
use crate::api::blocking::{block, can_block, Answer, Blocked, BlockedId};
use crate::api::events::on_fork_child_died;
use crate::api::fork::{
    exit_from_child, fork, kill_child, slot_migration_child_running, ForkError, Forked, SharedFile,
};
use crate::api::keys::{served_here, Key, KeyState};
use crate::api::replication::is_trusted;
use crate::api::source::{open_source, scan_members, SourceError};
use crate::errors;
use redbloom_core::static_filter::dump as static_dump;
use redbloom_core::static_filter::{
    build_with as build_filter, item_key, BuildError, StaticFilter,
};
use redis_module::logging::{log_notice, log_warning};
use redis_module::{Context, RedisError, RedisResult, RedisValue};
use std::sync::Mutex;

/// The largest source read and built in the command itself; larger ones are built in a
/// forked child (the command then holds the main thread for the fork alone).
pub const FROM_SYNC_MAX_MEMBERS: u64 = 20_000;

/// The source is the last argument: `SF.BUILD key error_rate [ENCODING e] FROM source`.
pub(super) fn source_arg(args: &Args) -> usize {
    args.len() - 1
}

fn error(text: &'static str) -> RedisError {
    RedisError::Str(text)
}

pub(super) fn source_error(e: SourceError) -> RedisError {
    match e {
        SourceError::Missing => error(errors::NOT_FOUND),
        SourceError::WrongType => RedisError::WrongType,
        SourceError::NoPermission => error(errors::SF_SOURCE_NOPERM),
        SourceError::Failed => error(errors::INTERNAL_ERROR),
    }
}

/// SF.BUILD key error_rate FROM source, `key` open for writing and empty.
pub fn build_from(ctx: &Context, args: &Args, rate: f64, key: &Key) -> RedisResult {
    let source = open_source(ctx, args, source_arg(args)).map_err(source_error)?;
    if source.members() <= FROM_SYNC_MAX_MEMBERS || is_trusted(ctx) {
        let mut keys = Vec::new();
        keys.try_reserve(source.members() as usize)
            .map_err(|_| error(errors::INSUFFICIENT_MEMORY_TO_CREATE))?;
        source
            .read_all(ctx, args, source_arg(args), |m| keys.push(item_key(m)))
            .map_err(source_error)?;
        return build_and_store(ctx, args, key, keys, rate, true);
    }
    if !can_block(ctx) {
        return Err(error(errors::SF_FROM_CANNOT_BLOCK));
    }
    source
        .check_readable(ctx, args, source_arg(args))
        .map_err(source_error)?;
    if crate::config::SfBuildSlices::get() != crate::config::SfBuildSlices::no {
        if let Some(reply) = super::slices::start(ctx, args, rate, &source) {
            return reply;
        }
    }
    let started = fork_build(ctx, args, rate, source.members()).map_err(error)?;
    start_job(started, block::<Built>(ctx), args.to_owned());
    Ok(RedisValue::NoReply)
}

/// A child forked by [`fork_build`], seen from the server.
pub(super) struct Started {
    pid: i32,
    file: SharedFile,
    max_bytes: u64,
    too_large: &'static str,
}

/// Forks the child that builds the filter of the source at argument 4 as it is now, of
/// `members` members (from a command or a main-thread callback whose database is the
/// source's); the server then goes on with the child's pid and the file it writes to.
pub(super) fn fork_build(
    ctx: &Context,
    args: &Args,
    rate: f64,
    members: u64,
) -> Result<Started, &'static str> {
    let file = SharedFile::new().map_err(|e| {
        log_warning(format!(
            "redbloom: SF.BUILD FROM: no memfd for the child ({e})"
        ));
        errors::SF_FROM_CHILD_FAILED
    })?;
    let max_bytes = max_bytes(ctx);
    let too_large = crate::write::too_large();
    on_fork_child_died(forgotten);
    match fork(done) {
        Ok(Forked::Child) => child(ctx, args, rate, members, max_bytes, &file),
        Ok(Forked::Parent(pid)) => Ok(Started {
            pid,
            file,
            max_bytes,
            too_large,
        }),
        Err(ForkError::Busy) if slot_migration_child_running(ctx) => {
            Err(errors::SF_FROM_BUSY_MIGRATION)
        }
        Err(ForkError::Busy) => Err(errors::SF_FROM_BUSY),
        Err(ForkError::Failed(e)) => {
            log_warning(format!("redbloom: SF.BUILD FROM could not fork ({e})"));
            Err(errors::SF_FROM_CHILD_FAILED)
        }
    }
}

/// The build in the child `started` answers `client` when the child is done.
pub(super) fn start_job(started: Started, client: Blocked<Built>, args: OwnedArgs) {
    *jobs() = Some(Job {
        pid: started.pid,
        client,
        file: started.file,
        args,
        max_bytes: started.max_bytes,
        too_large: started.too_large,
    });
}

/// A build running in a forked child. Only main-thread callbacks touch it.
struct Job {
    pid: i32,
    client: Blocked<Built>,
    file: SharedFile,
    args: OwnedArgs,
    max_bytes: u64,
    /// The ceiling's refusal as the command saw it (bf.max-filter-bytes or maxmemory).
    too_large: &'static str,
}

/// The one build in a child (the server runs one child at a time).
static JOB: Mutex<Option<Job>> = Mutex::new(None);

fn jobs() -> std::sync::MutexGuard<'static, Option<Job>> {
    JOB.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the child writes at offset 0 of the file: a status byte, then for a filter its
/// SF.SCANDUMP header and its data. None is 0, which a byte never written reads as.
#[repr(u8)]
#[derive(Clone, Copy)]
enum Status {
    Built = 1,
    TooManyItems,
    TooLarge,
    OutOfMemory,
    Unpeelable,
    SourceFailed,
}

const STATUSES: [Status; 6] = [
    Status::Built,
    Status::TooManyItems,
    Status::TooLarge,
    Status::OutOfMemory,
    Status::Unpeelable,
    Status::SourceFailed,
];

/// The child: scans the source as it was at the fork, builds, writes the outcome, exits
/// (0 once the outcome is written, 1 when even that failed or the build panicked).
fn child(
    ctx: &Context,
    args: &Args,
    rate: f64,
    members: u64,
    max_bytes: u64,
    file: &SharedFile,
) -> ! {
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut keys: Vec<u64> = Vec::new();
        if keys.try_reserve(members as usize).is_err() {
            return file.write_all_at(&[Status::OutOfMemory as u8], 0);
        }
        let start = std::time::Instant::now();
        let scanned = scan_members(ctx, args, source_arg(args), |m| keys.push(item_key(m)));
        // A scan visits every member at least once (some twice when the table was being
        // resized): fewer is a scan that failed midway.
        if scanned.is_err() || (keys.len() as u64) < members {
            return file.write_all_at(&[Status::SourceFailed as u8], 0);
        }
        let scanned = start.elapsed();
        let members = keys.len();
        let built = build_filter(keys, rate, max_bytes, super::handlers::encoding_of(args));
        log_notice(format!(
            "redbloom: SF.BUILD FROM child: {members} members scanned in {} ms, built in {} ms",
            scanned.as_millis(),
            (start.elapsed() - scanned).as_millis()
        ));
        let status = match built {
            Ok(filter) => {
                let header = static_dump::header(&filter);
                file.write_all_at(&header, 1)?;
                file.write_all_at(filter.data(), 1 + header.len() as u64)?;
                Status::Built
            }
            Err(BuildError::BadErrorRate | BuildError::Unpeelable) => Status::Unpeelable,
            Err(BuildError::TooManyItems) => Status::TooManyItems,
            Err(BuildError::TooLarge) => Status::TooLarge,
            Err(BuildError::OutOfMemory) => Status::OutOfMemory,
        };
        file.write_all_at(&[status as u8], 0)
    }));
    exit_from_child(if matches!(written, Ok(Ok(()))) { 0 } else { 1 })
}

/// Bytes read back per step (the filter's data is loaded piece by piece, as LOADCHUNK
/// would, never held twice whole).
const PIECE: usize = 4 << 20;

/// What the done handler hands the reading thread.
struct ReadBack {
    file: SharedFile,
    max_bytes: u64,
    too_large: &'static str,
}

/// The filter the child wrote, checked as SF.LOADCHUNK checks a dump, or the error to
/// reply.
fn read_back(job: &ReadBack) -> Result<StaticFilter, &'static str> {
    let file = &job.file;
    let failed = |what: &str| {
        log_warning(format!("redbloom: SF.BUILD FROM: {what}"));
        errors::SF_FROM_CHILD_FAILED
    };
    let mut status = vec![0u8; 5];
    file.read_exact_at(&mut status[..1], 0)
        .map_err(|_| failed("the child wrote nothing"))?;
    match STATUSES.iter().find(|&&s| s as u8 == status[0]) {
        Some(Status::Built) => {}
        Some(Status::TooManyItems) => return Err(errors::SF_TOO_MANY_ITEMS),
        Some(Status::TooLarge) => return Err(job.too_large),
        Some(Status::OutOfMemory) => return Err(errors::INSUFFICIENT_MEMORY_TO_CREATE),
        Some(Status::Unpeelable) => return Err(errors::SF_BUILD_FAILED),
        Some(Status::SourceFailed) => return Err(failed("the child could not scan the source")),
        None => return Err(failed("the child wrote an unknown status")),
    }
    file.read_exact_at(&mut status[1..], 1)
        .map_err(|_| failed("the child's header is short"))?;
    let header_len = static_dump::header_len(&status[1..])
        .ok_or_else(|| failed("the child's header has an unknown magic"))?;
    status.resize(1 + header_len, 0);
    file.read_exact_at(&mut status[1..], 1)
        .map_err(|_| failed("the child's header is short"))?;
    let mut filter = static_dump::filter_from_header(&status[1..], job.max_bytes)
        .map_err(|_| failed("the child's header was refused"))?;
    let len = filter.data().len() as u64;
    let start = status.len() as u64;
    if file.size().ok() != Some(start + len) {
        return Err(failed("the child's filter has the wrong size"));
    }
    let mut piece = Vec::new();
    piece
        .try_reserve_exact(PIECE.min(len as usize))
        .map_err(|_| errors::INSUFFICIENT_MEMORY_TO_CREATE)?;
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(PIECE as u64) as usize;
        piece.resize(n, 0);
        file.read_exact_at(&mut piece, start + at)
            .map_err(|_| failed("the child's filter could not be read"))?;
        at += n as u64;
        static_dump::load_chunk(&mut filter, (at + 1) as i64, &piece)
            .map_err(|_| failed("the child's filter was refused (checksum)"))?;
    }
    Ok(filter)
}

/// The server reaped the child (on the main thread): read its filter back and unblock
/// the client with it, or with the error.
fn done(exitcode: i32, bysignal: i32) {
    let Some(job) = jobs().take() else {
        return;
    };
    let Job { client, args, .. } = job;
    if bysignal != 0 || exitcode != 0 {
        log_warning(format!(
            "redbloom: SF.BUILD FROM: the child exited with code {exitcode}, signal {bysignal}"
        ));
        let result = Err(error(errors::SF_FROM_CHILD_FAILED));
        return client.answer(Built { args, result });
    }
    // Reading the filter back (tens of MB for 10M members: copies, page faults, the
    // checksum) runs on a thread of its own; the main thread only stores it. The thread
    // touches nothing of the server but the unblocking (thread-safe); `args` rides along
    // untouched, to be dropped on the main thread with the answer.
    let read = ReadBack {
        file: job.file,
        max_bytes: job.max_bytes,
        too_large: job.too_large,
    };
    let spawned = std::thread::Builder::new()
        .name("redbloom-sf-read".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(|| read_back(&read))
                .unwrap_or(Err(errors::INTERNAL_ERROR))
                .map_err(error);
            client.answer(Built { args, result });
        });
    if let Err(e) = spawned {
        // The closure went with the failed spawn: the client, dropped unanswered, was
        // unblocked with an error.
        log_warning(format!(
            "redbloom: SF.BUILD FROM: no thread to read the filter ({e})"
        ));
    }
}

/// The server has forgotten its child: after [`done`] (nothing left to do), or without
/// it (killed at a SHUTDOWN that then failed): the client must not wait forever.
fn forgotten() {
    let Some(job) = jobs().take() else {
        return;
    };
    log_warning("redbloom: SF.BUILD FROM: the server ended the child");
    let Job { client, args, .. } = job;
    client.answer(Built {
        args,
        result: Err(error(errors::SF_FROM_CHILD_FAILED)),
    });
}

/// A build's outcome (from a child or from a copy in slices), answered on the main
/// thread.
pub(super) struct Built {
    pub(super) args: OwnedArgs,
    pub(super) result: Result<StaticFilter, RedisError>,
}

impl Answer for Built {
    fn answer(self, ctx: &Context) -> RedisResult {
        let args = self.args.args();
        // The slot may have left this node while the client waited (an atomic slot
        // migration completes without waiting for blocked clients; the source, trimmed
        // with it, may then have looked missing to the build).
        if !served_here(ctx, &args, 1) {
            return Err(error(errors::SF_FROM_SLOT_MOVED));
        }
        let filter = self.result?;
        let key = Key::open(ctx, &args, 1, true);
        match key.state::<StaticFilter>(&STATIC_TYPE) {
            KeyState::Empty => store(ctx, &args, &key, filter, true),
            _ => Err(error(errors::ITEM_EXISTS)),
        }
    }

    fn disconnected(id: BlockedId) {
        if super::slices::disconnected(id) {
            return;
        }
        let job = {
            let mut jobs = jobs();
            match jobs.as_ref() {
                Some(job) if job.client.id() == id => jobs.take(),
                _ => None,
            }
        };
        if let Some(job) = job {
            kill_child(job.pid);
            job.client.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cannot_block_error_states_the_limit() {
        assert_eq!(
            crate::errors::SF_FROM_CANNOT_BLOCK,
            format!(
                "ERR SF.BUILD FROM a source of more than {} members blocks the client, which MULTI and scripts do not allow",
                super::FROM_SYNC_MAX_MEMBERS
            )
        );
    }
}
