//! What a write command did, and what replicas and the AOF receive for it: the effect,
//! never the request. A command replicated as received would be re-run on the replica
//! with the replica's own config defaults and limits, and could build another filter or
//! be refused (issue 12). Handlers report here what they changed; when the handler ends,
//! [`Write`] replicates commands that recreate exactly that:
//!
//! - a new filter: a creation command with every parameter explicit (`BF.RESERVE key
//!   <error> <capacity> EXPANSION <n> [BLOCKED]`, `CF.RESERVE key <capacity> BUCKETSIZE <b>
//!   MAXITERATIONS <m> EXPANSION <e>`; a non-scaling Bloom filter, whose stored expansion
//!   no RESERVE can state, as `BF.LOADCHUNK key 1 <header>` of the new, empty filter;
//!   each family builds its own [`Creation`]);
//! - then the items that changed the filter, in order (`BF.MADD key …`, one `CF.ADD key
//!   item` each);
//! - the command as received when that does exactly the same anywhere: no filter created
//!   and every item applied, a DEL that deleted, a compaction, a LOADCHUNK;
//! - nothing when nothing changed.
//!
//! Every command is valid for RedisBloom 2.4.20 (BF, CF). A write to a BLOCKED filter,
//! which RedisBloom cannot represent, is preceded by `BF.BLOCKEDWRITE key`, redbloom's
//! own: Redis wraps the several commands of one command in MULTI/EXEC, and a RedisBloom
//! replica, not knowing the first, discards the whole transaction instead of building,
//! growing or auto-creating a classic filter under that key. Writes arriving from the
//! master or from AOF loading are "trusted": the local ceiling and expansion limit do not
//! apply to them (they were checked where the write was accepted), so a replica never
//! refuses what its master did.

use crate::api::args::Args;
use crate::api::memory::memory_left;
use crate::api::replication::{is_trusted, log_divergence, replicate, Replicated};
use crate::config;
use crate::errors;
use crate::types::BLOCKED_WRITE;
use redbloom_core::memory::Ceiling;
use redis_module::Context;
use std::cell::Cell;

thread_local! {
    /// Whether the last ceiling computed on this (the main) thread was the memory left
    /// under maxmemory rather than `bf.max-filter-bytes`: which limit a refusal names.
    static BOUND_BY_MAXMEMORY: Cell<bool> = const { Cell::new(false) };
}

/// The error of a creation or growth refused by the ceiling: the limit that refused it.
pub fn too_large() -> &'static str {
    if BOUND_BY_MAXMEMORY.with(Cell::get) {
        errors::TOO_LARGE_FOR_MAXMEMORY
    } else {
        errors::TOO_LARGE
    }
}

/// The ceilings of one write: for a client's write, `bf.max-filter-bytes` on the whole
/// filter and the memory the server has left under maxmemory on each creation or growth
/// step (asked only when a filter is created or grows); none for a trusted write (from
/// the master, the AOF or RDB loading: only a genuine allocation failure can stop it).
#[derive(Clone, Copy)]
pub struct Limit<'a> {
    ctx: &'a Context,
    trusted: bool,
}

impl<'a> Limit<'a> {
    /// The ceilings of the command running in `ctx`.
    pub fn of(ctx: &'a Context) -> Self {
        Limit {
            ctx,
            trusted: is_trusted(ctx),
        }
    }
}

impl Ceiling for Limit<'_> {
    fn max_bytes(&self) -> u64 {
        if self.trusted {
            u64::MAX
        } else {
            config::MAX_FILTER_BYTES.get()
        }
    }

    fn max_step(&self) -> u64 {
        if self.trusted {
            u64::MAX
        } else {
            memory_left(self.ctx)
        }
    }

    fn limit_for(&self, used: u64) -> u64 {
        let max_bytes = self.max_bytes();
        if self.trusted {
            return max_bytes;
        }
        let by_step = used.saturating_add(self.max_step());
        BOUND_BY_MAXMEMORY.with(|bound| bound.set(by_step < max_bytes));
        max_bytes.min(by_step)
    }
}

/// A creation command: its name after the family (`RESERVE`, `LOADCHUNK`) and its
/// arguments after the key, every parameter explicit.
pub struct Creation {
    pub name: &'static str,
    pub args: Vec<Vec<u8>>,
}

/// The effects of one write command on its key; replicated when dropped.
pub struct Write<'a> {
    ctx: &'a Context,
    args: &'a Args<'a>,
    /// Whether the write is trusted, asked for the first time it matters: the answer
    /// (`RedisModule_GetContextFlags`, which also computes the server's memory state) is
    /// ~1.5 % of a single add's server CPU, and most writes never need it.
    trusted: Cell<Option<bool>>,
    created: Option<Creation>,
    /// The first argument holding an item, if the command takes items.
    items_from: Option<usize>,
    /// Arguments holding items that changed the filter, in the order they were applied.
    added: Vec<usize>,
    /// The request itself is the effect.
    as_received: bool,
    /// The filter is BLOCKED: its effects follow `BF.BLOCKEDWRITE key`.
    marked: bool,
}

impl<'a> Write<'a> {
    pub fn new(ctx: &'a Context, args: &'a Args<'a>) -> Self {
        Write {
            ctx,
            args,
            trusted: Cell::new(None),
            created: None,
            items_from: None,
            added: Vec::new(),
            as_received: false,
            marked: false,
        }
    }

    /// Whether this write comes from the master or from loading the AOF.
    pub fn is_trusted(&self) -> bool {
        match self.trusted.get() {
            Some(trusted) => trusted,
            None => {
                let trusted = is_trusted(self.ctx);
                self.trusted.set(Some(trusted));
                trusted
            }
        }
    }

    /// This write's ceilings (see [`Limit`]).
    pub fn limit(&self) -> Limit<'a> {
        Limit {
            ctx: self.ctx,
            trusted: self.is_trusted(),
        }
    }

    /// The most a filter this write creates may use: `bf.max-filter-bytes` and the memory
    /// left under maxmemory, for a client's write; no limit for a trusted one.
    pub fn max_bytes(&self) -> u64 {
        self.limit().limit_for(0)
    }

    /// A per-item failure of a multi-item command. Logged when the write is trusted: the
    /// master (or the server that wrote the AOF) did apply the item.
    pub fn item_failed(&self, text: &str) {
        if self.is_trusted() {
            log_divergence(self.ctx, self.args, text);
        }
    }

    /// The command created a filter; `creation` recreates it, empty, anywhere.
    pub fn created(&mut self, creation: Creation) {
        self.created = Some(creation);
    }

    /// The written filter is BLOCKED (when `blocked`): RedisBloom must refuse its effects.
    pub fn marked_if(&mut self, blocked: bool) {
        self.marked |= blocked;
    }

    /// The command's items are its arguments from `i` on.
    pub fn items_from(&mut self, i: usize) {
        self.items_from = Some(i);
    }

    /// The item in argument `i` was added and changed the filter.
    pub fn added(&mut self, i: usize) {
        self.added.push(i);
    }

    /// The command did exactly what it says, whatever the server's configs: LOADCHUNK
    /// (explicit data), a DEL that deleted, a compaction.
    pub fn as_received(&mut self) {
        self.as_received = true;
    }

    /// Whether the command, replayed as received, does exactly what it did here: no
    /// filter created and every one of its items applied.
    fn same_as_received(&self) -> bool {
        self.as_received
            || (self.created.is_none()
                && self.items_from.is_some_and(|from| {
                    self.added.len() == self.args.len() - from
                        && self.added.iter().copied().eq(from..self.args.len())
                }))
    }

    /// `BF`, `CF`, `CBF`: the command's family, from its name.
    fn family(&self) -> String {
        let name = self.args.bytes(0);
        let end = name.iter().position(|&c| c == b'.').unwrap_or(name.len());
        String::from_utf8_lossy(&name[..end]).to_ascii_uppercase()
    }

    /// Replicates `<family>.<name> key rest…`.
    fn send(&self, family: &str, name: &str, rest: impl Iterator<Item = Replicated<'a>>) {
        let parts: Vec<Replicated> = std::iter::once(Replicated::Arg(1)).chain(rest).collect();
        replicate(self.ctx, self.args, &format!("{family}.{name}"), &parts);
    }
}

/// The ceilings of a single-item write, asked for only when the filter must grow.
impl Ceiling for Write<'_> {
    fn max_bytes(&self) -> u64 {
        self.limit().max_bytes()
    }
    fn max_step(&self) -> u64 {
        self.limit().max_step()
    }
    fn limit_for(&self, used: u64) -> u64 {
        self.limit().limit_for(used)
    }
}

impl Drop for Write<'_> {
    fn drop(&mut self) {
        let verbatim = self.same_as_received();
        if !verbatim && self.created.is_none() && self.added.is_empty() {
            return;
        }
        if self.marked {
            let marker = BLOCKED_WRITE.to_str().unwrap_or_default();
            replicate(self.ctx, self.args, marker, &[Replicated::Arg(1)]);
        }
        if verbatim {
            if self.marked {
                // Explicitly, after the marker: the same arguments.
                let name = String::from_utf8_lossy(self.args.bytes(0));
                let parts: Vec<Replicated> = (1..self.args.len()).map(Replicated::Arg).collect();
                replicate(self.ctx, self.args, &name, &parts);
            } else {
                self.ctx.replicate_verbatim();
            }
            return;
        }
        let family = self.family();
        if let Some(created) = &self.created {
            let rest = created.args.iter().map(|a| Replicated::Bytes(a));
            self.send(&family, created.name, rest);
        }
        if self.added.is_empty() {
            return;
        }
        if family == "CF" {
            for &i in &self.added {
                self.send(&family, "ADD", std::iter::once(Replicated::Arg(i)));
            }
        } else {
            let items = self.added.iter().map(|&i| Replicated::Arg(i));
            self.send(&family, "MADD", items);
        }
    }
}
