//! `redbloom shard create|add|exists|load|info|merge|drop`.

use crate::connect;
use crate::input;
use crate::signals;
use clap::{Args, Subcommand};
use redbloom_client::ship::Ship;
use redbloom_client::{Descriptor, Error, Family, FilterSpec, Result};
use redbloom_core::limits::{XF_DEFAULT_CAPACITY, XF_DEFAULT_ERROR_RATE};
use serde_json::json;
use std::path::PathBuf;

/// How a filter is sized and grown (shared by `shard create` and `load`).
#[derive(Args, Clone)]
pub struct SpecArgs {
    /// Target false-positive rate of the whole filter, e.g. 0.01; required but for cf,
    /// which refuses it (a Cuckoo filter's rate follows from its bucket size).
    #[arg(long)]
    pub error_rate: Option<f64>,
    /// Items the whole filter is sized for (a sharded filter: all members together).
    #[arg(long)]
    pub capacity: Option<u64>,
    /// Growth factor of each new link / sub-filter.
    #[arg(long, conflicts_with = "nonscaling")]
    pub expansion: Option<u32>,
    /// Never grow: adds past capacity fail.
    #[arg(long)]
    pub nonscaling: bool,
}

impl SpecArgs {
    /// The filter these options describe, for `family`; usage errors for an error rate
    /// missing (bf, cbf) or given (cf), a capacity missing, and a static filter (never
    /// reserved).
    pub fn spec(&self, family: Family, blocked: bool) -> Result<FilterSpec> {
        if family == Family::Sf {
            return Err(Error::usage(redbloom_client::family::SF_NOT_RESERVED));
        }
        if family == Family::Xf {
            // XF.RESERVE's own defaults (an expandable filter grows from any start).
            let spec = FilterSpec {
                family,
                error_rate: self.error_rate.unwrap_or(XF_DEFAULT_ERROR_RATE),
                capacity: self.capacity.unwrap_or(XF_DEFAULT_CAPACITY),
                expansion: self.expansion,
                nonscaling: self.nonscaling,
                blocked,
            };
            spec.validate()?;
            return Ok(spec);
        }
        let capacity = self.capacity.ok_or_else(|| {
            Error::usage(format!(
                "--capacity is required for {} filters",
                family.name()
            ))
        })?;
        let error_rate = match (family, self.error_rate) {
            (Family::Cf, Some(_)) => {
                return Err(Error::usage(
                    "--error-rate does not apply to cf filters (a Cuckoo filter's rate follows from its bucket size)",
                ))
            }
            // Not used by CF.RESERVE; the descriptor records it as for other families.
            (Family::Cf, None) => redbloom_core::limits::BF_DEFAULT_ERROR_RATE,
            (_, Some(rate)) => rate,
            (_, None) => {
                return Err(Error::usage(format!(
                    "--error-rate is required for {} filters",
                    family.name()
                )))
            }
        };
        let spec = FilterSpec {
            family,
            error_rate,
            capacity,
            expansion: self.expansion,
            nonscaling: self.nonscaling,
            blocked,
        };
        spec.validate()?;
        Ok(spec)
    }
}

#[derive(Subcommand)]
pub enum ShardCommand {
    /// Creates N members (each reserved for its share capacity / N plus headroom,
    /// ⌈C/N + 4·√(C/N)⌉) and the descriptor NAME.
    Create {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
        /// Members (1 to 1024): at least the most masters the cluster will have; 2 to 4
        /// per master let a rebalance even out memory (docs/sharding.md).
        #[arg(long)]
        shards: u32,
        #[command(flatten)]
        spec: SpecArgs,
        /// bf, cf or cbf.
        #[arg(long = "type", default_value = "bf")]
        family: String,
        /// Cache-local Bloom layout (bf only).
        #[arg(long)]
        blocked: bool,
    },
    /// Adds items (arguments, then --file, else standard input).
    Add {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
        /// Items; with none and no --file, standard input (one per line).
        items: Vec<String>,
        /// More items, one per line, after those given as arguments (`-`: standard input).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Wait until this many replicas of each master hold the items (WAIT), sending a
        /// round again after a failover.
        #[arg(long)]
        wait_replicas: Option<u32>,
    },
    /// Prints one 0/1 per item, in order.
    Exists {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
        /// Items; with none and no --file, standard input (one per line).
        items: Vec<String>,
        /// More items, one per line, after those given as arguments (`-`: standard input).
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// Bulk-loads items into the empty members (built locally, shipped with LOADCHUNK).
    Load {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
        /// One item per line (`-`: standard input, also the default).
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// The layout and each member's slot, items and memory.
    Info {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
    },
    /// A new sharded filter DEST whose member i merges member i of every SRC (sharded
    /// filters of one layout).
    Merge {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The new sharded filter's name (it and its member keys must not exist).
        dest: String,
        /// The sharded filters merged: one member count, type, capacity, error rate and
        /// options.
        #[arg(required = true, value_name = "SRC")]
        sources: Vec<String>,
        /// The intersection instead of the union (bf and cbf members of a single link).
        #[arg(long)]
        intersect: bool,
    },
    /// Deletes the members that exist and the descriptor, saying which members were
    /// missing (keys of another type at member names are left alone).
    Drop {
        #[arg(help = crate::connect::URL_HELP)]
        url: String,
        #[command(flatten)]
        _server: crate::connect::ServerArgs,
        /// The sharded filter's name: the key of its descriptor hash.
        name: String,
        /// Also find (SCAN on every master) and delete member keys `{s<i>.<c>}:NAME` left
        /// without a descriptor or beside it.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(command: ShardCommand, json: bool) -> Result<()> {
    match command {
        ShardCommand::Create {
            url,
            name,
            shards,
            spec,
            family,
            blocked,
            ..
        } => {
            let spec = spec.spec(Family::parse(&family)?, blocked)?;
            let descriptor = Descriptor::new(&name, shards, spec)?;
            let mut conn = connect::open(&url)?;
            descriptor.create(&mut conn)?;
            if json {
                say!(
                    "{}",
                    json!({"name": name, "members": descriptor.members, "member_capacity": descriptor.member_capacity()})
                );
            } else {
                say!(
                    "created {name}: {shards} members of capacity {}",
                    descriptor.member_capacity()
                );
            }
        }
        ShardCommand::Add {
            url,
            name,
            items,
            file,
            wait_replicas,
            ..
        } => {
            let mut conn = connect::open(&url)?;
            let descriptor = Descriptor::open(&mut conn, &name)?;
            let bar = input::progress("add");
            signals::catch();
            // The input streams: a batch is added before the next is read. `lines`: input
            // lines (command-line items first) done; `done`: items (blank lines skipped).
            let (mut lines, mut done, mut added) = (0u64, 0u64, 0usize);
            input::for_each_input(&items, file.as_deref(), true, |batch| {
                let (kept, at) = input::nonblank(batch);
                let mut acked = 0;
                let outcome =
                    descriptor.add_after(&mut conn, &kept, done, wait_replicas, &mut |n| {
                        acked = n;
                        bar.set_position(done + n as u64)
                    });
                let replies = match outcome {
                    Ok(replies) => replies,
                    // Without --wait-replicas an error names its item already.
                    Err(e) if wait_replicas.is_none() => return Err(e),
                    Err(e) => {
                        let line = lines + at.get(acked).map_or(batch.len(), |&i| i) as u64 + 1;
                        return Err(e.with_note(format!(
                            "stopped at line {line} of the input: the {} items before it were \
                             added and acknowledged, the rest were not (resume from that line, \
                             e.g. tail -n +{line} FILE | redbloom shard add URL {name} …)",
                            done + acked as u64
                        )));
                    }
                };
                added += replies.iter().filter(|&&r| r == 1).count();
                done += kept.len() as u64;
                lines += batch.len() as u64;
                Ok(())
            })?;
            bar.finish_and_clear();
            if json {
                say!("{}", json!({"items": done, "added": added}));
            } else {
                say!("{done} items, {added} newly added");
            }
        }
        ShardCommand::Exists {
            url,
            name,
            items,
            file,
            ..
        } => {
            let mut conn = connect::open(&url)?;
            let descriptor = Descriptor::open(&mut conn, &name)?;
            let bar = input::progress("exists");
            // Answers are printed batch after batch, as the input streams.
            let mut answers = Answers::new(json);
            let mut done = 0u64;
            let outcome = input::for_each_input(&items, file.as_deref(), true, |batch| {
                let replies = descriptor.exists_after(&mut conn, batch, done, &mut |n| {
                    bar.set_position(done + n as u64)
                })?;
                done += batch.len() as u64;
                if answers.print(&replies) {
                    Ok(())
                } else {
                    Err(stdout_closed())
                }
            });
            bar.finish_and_clear();
            match outcome {
                // The reader went away: nothing more to answer.
                Err(e) if e == stdout_closed() => return Ok(()),
                other => other?,
            };
            answers.finish();
        }
        ShardCommand::Load {
            url, name, file, ..
        } => {
            let mut conn = connect::open(&url)?;
            let descriptor = Descriptor::open(&mut conn, &name)?;
            // Streamed as `load` streams: the members' filters and one read are held.
            let mut loading = descriptor.start_load(&mut conn)?;
            let reading = input::progress("build");
            let mut read = 0;
            signals::catch();
            let mut items = 0;
            input::for_each_batch(file.as_deref(), |batch| {
                let (batch, _) = input::nonblank(batch);
                items += batch.len() as u64;
                loading.add(&batch)?;
                read += batch.len() as u64;
                reading.set_position(read);
                Ok(())
            })?;
            reading.finish_and_clear();
            signals::catch();
            let bar = input::bytes_progress("ship", loading.dump_bytes());
            loading.finish(
                &mut conn,
                &mut Ship::new(&signals::stopped, &mut |n| bar.set_position(n)),
            )?;
            bar.finish_and_clear();
            if json {
                say!("{}", json!({"name": name, "items": items}));
            } else {
                say!(
                    "loaded {name}: {items} items into {} members",
                    descriptor.members.len()
                );
            }
        }
        ShardCommand::Info { url, name, .. } => {
            let mut conn = connect::open(&url)?;
            let descriptor = Descriptor::open(&mut conn, &name)?;
            let members = descriptor.member_infos(&mut conn)?;
            let items_field = "Number of items inserted";
            let total_items: i64 = members.iter().filter_map(|m| m.int(items_field)).sum();
            let total_memory: i64 = members.iter().map(|m| m.memory).sum();
            if json {
                let fields: serde_json::Map<String, serde_json::Value> = descriptor
                    .fields()
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with("member:"))
                    .map(|(k, v)| {
                        let value = json_value(&k, v);
                        (k, value)
                    })
                    .collect();
                let list: Vec<_> = members
                    .iter()
                    .map(|m| json!({"key": m.key, "slot": m.slot, "items": m.int(items_field), "memory": m.memory}))
                    .collect();
                say!(
                    "{}",
                    json!({"name": name, "descriptor": fields, "items": total_items, "memory": total_memory, "members": list})
                );
            } else {
                for (k, v) in descriptor.fields() {
                    // An unset field (expansion) is its name alone, no trailing space.
                    match (k.starts_with("member:"), v.is_empty()) {
                        (true, _) => {}
                        (false, true) => say!("{k}:"),
                        (false, false) => say!("{k}: {v}"),
                    }
                }
                say!("items: {total_items}");
                say!("memory: {total_memory}");
                for m in &members {
                    say!(
                        "member {} slot {} items {} memory {}",
                        m.key,
                        m.slot,
                        m.int(items_field).unwrap_or(0),
                        m.memory
                    );
                }
            }
        }
        ShardCommand::Merge {
            url,
            dest,
            sources,
            intersect,
            ..
        } => {
            let mut conn = connect::open(&url)?;
            let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
            let merged =
                redbloom_client::merge::shard_merge(&mut conn, &dest, &sources, intersect)?;
            if json {
                say!(
                    "{}",
                    json!({"name": dest, "sources": sources, "members": merged.members})
                );
            } else {
                say!(
                    "merged {} sharded filters into {dest}: {} members",
                    sources.len(),
                    merged.members.len()
                );
            }
        }
        ShardCommand::Drop {
            url, name, force, ..
        } => {
            let mut conn = connect::open(&url)?;
            let dropped = redbloom_client::shard_drop::drop_filter(&mut conn, &name, force)?;
            if json {
                let kept: Vec<_> = dropped
                    .kept
                    .iter()
                    .map(|(k, t)| json!({"key": k, "type": t}))
                    .collect();
                say!(
                    "{}",
                    json!({"dropped": name, "descriptor": dropped.descriptor, "members": dropped.deleted.len(),
                           "deleted": dropped.deleted, "missing": dropped.missing, "kept": kept})
                );
            } else {
                let mut line = format!("dropped {name} ({} members", dropped.deleted.len());
                if !dropped.missing.is_empty() {
                    line += &format!("; missing: {}", dropped.missing.join(", "));
                }
                if !dropped.kept.is_empty() {
                    let kept: Vec<String> = dropped
                        .kept
                        .iter()
                        .map(|(k, t)| format!("{k} (a {t})"))
                        .collect();
                    line += &format!("; not filters, left: {}", kept.join(", "));
                }
                if !dropped.descriptor {
                    line += "; no descriptor";
                }
                say!("{line})");
            }
        }
    }
    Ok(())
}

/// A descriptor field as JSON: numbers as numbers, the flags as booleans, an unset
/// expansion as null, the rest as strings.
fn json_value(field: &str, text: String) -> serde_json::Value {
    use serde_json::Value;
    match field {
        "nonscaling" | "blocked" => Value::Bool(text == "1"),
        "format" | "family" | "routing" => Value::String(text),
        _ if text.is_empty() => Value::Null,
        _ => text
            .parse::<u64>()
            .map(Value::from)
            .or_else(|_| text.parse::<f64>().map(Value::from))
            .unwrap_or(Value::String(text)),
    }
}

/// Answers printed as they come: one 0/1 per line, or one JSON array of them all.
pub struct Answers {
    json: bool,
    printed: u64,
}

impl Answers {
    pub fn new(json: bool) -> Self {
        Answers { json, printed: 0 }
    }

    /// Prints `replies` (flushed, so a reader sees them at once); false when standard
    /// output is closed (e.g. `| head -1`): the command then stops.
    pub fn print(&mut self, replies: &[i64]) -> bool {
        use std::io::Write;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for r in replies {
            let written = match (self.json, self.printed) {
                (false, _) => writeln!(out, "{r}"),
                (true, 0) => write!(out, "[{r}"),
                (true, _) => write!(out, ",{r}"),
            };
            if written.is_err() {
                return false;
            }
            self.printed += 1;
        }
        out.flush().is_ok()
    }

    /// Closes the JSON array (`[]` when there were no answers).
    pub fn finish(self) {
        if self.json {
            say!("{}", if self.printed == 0 { "[]" } else { "]" });
        }
    }
}

/// All the answers at once ([`Answers`]).
pub fn print_answers(replies: &[i64], json: bool) {
    let mut answers = Answers::new(json);
    if answers.print(replies) {
        answers.finish();
    }
}

/// What stops a command whose standard output was closed.
fn stdout_closed() -> Error {
    Error::new("standard output closed")
}
