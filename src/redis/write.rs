//! What a write command did, and what replicas and the AOF receive for it: the effect,
//! never the request. A command replicated as received would be re-run on the replica
//! with the replica's own config defaults and limits, and could build another filter or
//! be refused (issue 12). Handlers report here what they changed; when the handler ends,
//! [`Write`] replicates commands that recreate exactly that:
//!
//! - a new filter: a creation command with every parameter explicit (`BF.RESERVE key
//!   <error> <capacity> EXPANSION <n>`, `CF.RESERVE key <capacity> BUCKETSIZE <b>
//!   MAXITERATIONS <m> EXPANSION <e>`; a non-scaling Bloom filter, whose stored expansion
//!   no RESERVE can state, as `BF.LOADCHUNK key 1 <header>` of the new, empty filter);
//! - then the items that changed the filter, in order (`BF.MADD key …`, one `CF.ADD key
//!   item` each), deletions that deleted, a compaction, or a LOADCHUNK as received;
//! - nothing when nothing changed.
//!
//! Every command is valid for RedisBloom 2.4.20 (BF, CF). Redis wraps several commands
//! of one command in MULTI/EXEC. Writes arriving from the master or from AOF loading are
//! "trusted": the local ceiling and expansion limit do not apply to them (they were
//! checked where the write was accepted), so a replica never refuses what its master did.

use super::bf::{BloomKind, NewFilter};
use super::config;
use super::ffi::Args;
use crate::filter::cuckoo::CuckooParams;
use crate::filter::fmt::shortest;
use redis_module::{Context, ContextFlags};

/// Whether the write being run comes from the master or from loading the AOF.
pub fn is_trusted(ctx: &Context) -> bool {
    ctx.get_flags()
        .intersects(ContextFlags::REPLICATED | ContextFlags::LOADING)
}

/// One command to replicate: its name and arguments after the key.
struct Command {
    name: String,
    args: Vec<Vec<u8>>,
}

/// The effects of one write command on its key; replicated when dropped.
pub struct Write<'a> {
    ctx: &'a Context,
    args: &'a Args<'a>,
    trusted: bool,
    /// `BF`, `CBF`, `CF`: the family of the command, for the replicated names.
    family: String,
    created: Option<Command>,
    /// Items that changed the filter, in the order they were applied.
    added: Vec<&'a [u8]>,
    /// Anything else, replicated after the items (deletion, compaction).
    then: Option<Command>,
    verbatim: bool,
}

impl<'a> Write<'a> {
    pub fn new(ctx: &'a Context, args: &'a Args<'a>) -> Self {
        let name = String::from_utf8_lossy(args.bytes(0)).to_ascii_uppercase();
        let family = name.split('.').next().unwrap_or_default().to_string();
        Write {
            ctx,
            args,
            trusted: is_trusted(ctx),
            family,
            created: None,
            added: Vec::new(),
            then: None,
            verbatim: false,
        }
    }

    /// Whether this write comes from the master or from loading the AOF.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// The per-filter memory ceiling for this write (none for trusted writes: only a
    /// genuine allocation failure can stop them).
    pub fn max_bytes(&self) -> u64 {
        if self.trusted {
            u64::MAX
        } else {
            config::MAX_FILTER_BYTES.get()
        }
    }

    /// The number of Cuckoo sub-filters at which inserts are refused (none when trusted).
    pub fn cf_max_filters(&self) -> u64 {
        if self.trusted {
            u64::MAX
        } else {
            config::CF_MAX_EXPANSIONS.get()
        }
    }

    /// A per-item failure of a multi-item command. Logged when the write is trusted: the
    /// master (or the server that wrote the AOF) did apply the item.
    pub fn item_failed(&self, text: &str) {
        if self.trusted {
            log_divergence(self.ctx, self.args, text);
        }
    }

    /// A Bloom-style filter was created from `params` (`filter` as just created).
    pub fn created_bloom<F: BloomKind>(&mut self, params: &NewFilter, filter: &F) {
        let command = if params.scaling {
            Command {
                name: format!("{}.RESERVE", self.family),
                args: vec![
                    shortest(params.error).into_bytes(),
                    params.capacity.to_string().into_bytes(),
                    b"EXPANSION".to_vec(),
                    params.growth.to_string().into_bytes(),
                ],
            }
        } else {
            Command {
                name: format!("{}.LOADCHUNK", self.family),
                args: vec![b"1".to_vec(), filter.dump_header()],
            }
        };
        self.created = Some(command);
    }

    /// A Cuckoo filter was created from `params`.
    pub fn created_cuckoo(&mut self, params: CuckooParams) {
        self.created = Some(Command {
            name: "CF.RESERVE".to_string(),
            args: vec![
                params.capacity.to_string().into_bytes(),
                b"BUCKETSIZE".to_vec(),
                params.bucket_size.to_string().into_bytes(),
                b"MAXITERATIONS".to_vec(),
                params.max_iterations.to_string().into_bytes(),
                b"EXPANSION".to_vec(),
                params.expansion.to_string().into_bytes(),
            ],
        });
    }

    /// `item` was added and changed the filter.
    pub fn added(&mut self, item: &'a [u8]) {
        self.added.push(item);
    }

    /// One copy of `item` was deleted (CF.DEL, CBF.DEL).
    pub fn deleted(&mut self, item: &[u8]) {
        self.then = Some(Command {
            name: format!("{}.DEL", self.family),
            args: vec![item.to_vec()],
        });
    }

    /// The filter was compacted (CF.COMPACT).
    pub fn compacted(&mut self) {
        self.then = Some(Command {
            name: format!("{}.COMPACT", self.family),
            args: Vec::new(),
        });
    }

    /// The command carried explicit data and did exactly what it says (LOADCHUNK).
    pub fn as_received(&mut self) {
        self.verbatim = true;
    }

    fn replicate(&self, name: &str, rest: &[&[u8]]) {
        let mut args: Vec<&[u8]> = Vec::with_capacity(rest.len() + 1);
        args.push(self.args.bytes(1));
        args.extend_from_slice(rest);
        self.ctx.replicate(name, args.as_slice());
    }
}

impl Drop for Write<'_> {
    fn drop(&mut self) {
        if self.verbatim {
            self.ctx.replicate_verbatim();
            return;
        }
        if let Some(created) = &self.created {
            let rest: Vec<&[u8]> = created.args.iter().map(Vec::as_slice).collect();
            self.replicate(&created.name, &rest);
        }
        if !self.added.is_empty() {
            if self.family == "CF" {
                for &item in &self.added {
                    self.replicate("CF.ADD", &[item]);
                }
            } else {
                self.replicate(&format!("{}.MADD", self.family), &self.added);
            }
        }
        if let Some(then) = &self.then {
            let rest: Vec<&[u8]> = then.args.iter().map(Vec::as_slice).collect();
            self.replicate(&then.name, &rest);
        }
    }
}

/// Logs a write from the master or the AOF that this server could not apply: the data
/// sets now differ, which must not go unnoticed.
pub fn log_divergence(ctx: &Context, args: &Args, error: &str) {
    let command = String::from_utf8_lossy(args.bytes(0));
    let key = match args.len() {
        0 | 1 => String::new(),
        _ => String::from_utf8_lossy(args.bytes(1)).into_owned(),
    };
    ctx.log_warning(&format!(
        "redbloom: {command} {key} from the master or the AOF failed here ({error}); \
         this server's data now differs from the source"
    ));
}
