//! Merging filters on a server: `redbloom merge` (BF.MERGE, CBF.MERGE or CF.MERGE of
//! filter keys, chosen by the sources' type) and `redbloom shard merge` (sharded filters of
//! one layout, member by member). The rules are the commands' own (docs/commands.md,
//! "BF.MERGE"); what is checked here first is what a cluster needs — every key in one hash
//! slot — and what a sharded filter needs — one layout.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{key_family, Family};
use crate::shard::Descriptor;
use crate::slot::key_slot;
use redis::FromRedisValue;

/// How a merge combines its filters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Replace DEST instead of merging it in (`OVERRIDE`).
    pub override_dest: bool,
    /// The intersection (`INTERSECT`: bf and cbf filters of a single link).
    pub intersect: bool,
}

/// The usage error of `--intersect` on Cuckoo filters.
fn no_cuckoo_intersect() -> Error {
    Error::usage(redbloom_core::client_logic::merge::NO_CUCKOO_INTERSECT)
}

/// The refusal of a merge of static filters: SF has no merge (a static filter is built
/// once, from a whole set).
pub fn no_static_merge() -> Error {
    Error::new(redbloom_core::client_logic::merge::NO_STATIC_MERGE)
}

/// `PREFIX.MERGE dest numkeys sources… [OVERRIDE] [INTERSECT]`.
pub fn merge_command(
    family: Family,
    dest: &str,
    sources: &[&str],
    options: MergeOptions,
) -> redis::Cmd {
    let mut cmd = crate::family::command(family, "MERGE");
    cmd.arg(dest).arg(sources.len()).arg(sources);
    if options.override_dest {
        cmd.arg("OVERRIDE");
    }
    if options.intersect {
        cmd.arg("INTERSECT");
    }
    cmd
}

/// On a cluster, the keys must share a hash slot: an error naming each key and its slot
/// otherwise.
fn one_slot(conn: &Conn, keys: &[&str]) -> Result<()> {
    if !conn.is_cluster() {
        return Ok(());
    }
    let slots: Vec<u16> = keys.iter().map(|k| key_slot(k.as_bytes())).collect();
    if slots.iter().all(|&s| s == slots[0]) {
        return Ok(());
    }
    let listed: Vec<String> = keys
        .iter()
        .zip(&slots)
        .map(|(k, s)| format!("{k} (slot {s})"))
        .collect();
    Err(Error::new(format!(
        "the keys are in different hash slots: {}; a cluster merges keys of one slot only (give them one hash tag, e.g. {{day}}:mon and {{day}}:tue)",
        listed.join(", ")
    )))
}

/// The family of the sources (all of one), each a filter key.
fn sources_family(conn: &mut Conn, sources: &[&str]) -> Result<Family> {
    let mut found: Option<(Family, &str)> = None;
    for &source in sources {
        let family = key_family(conn, source)?.ok_or_else(|| {
            Error::new(format!(
                "{source} is a hash, not a filter (a sharded filter merges with `redbloom shard merge`)"
            ))
        })?;
        match found {
            None => found = Some((family, source)),
            Some((first, name)) if first != family => {
                return Err(Error::new(format!(
                    "{source} is a {} filter, but {name} is a {} filter: only filters of one type merge",
                    family.name(),
                    first.name()
                )))
            }
            Some(_) => {}
        }
    }
    found
        .map(|(f, _)| f)
        .ok_or_else(|| Error::usage("no source to merge"))
}

/// `redbloom merge`: merges `sources` into `dest` with the merge command of their family
/// (returned). Refused before anything is sent: keys of different slots on a cluster, a
/// source that is missing or no filter, sources of different families, `--intersect` of
/// Cuckoo filters. The server's refusals (shapes that differ, a multi-link INTERSECT, a
/// DEST of another type or shape) leave DEST as it was; their errors name DEST's node.
pub fn merge(
    conn: &mut Conn,
    dest: &str,
    sources: &[&str],
    options: MergeOptions,
) -> Result<Family> {
    let mut keys = vec![dest];
    keys.extend_from_slice(sources);
    one_slot(conn, &keys)?;
    let family = sources_family(conn, sources)?;
    if family == Family::Sf {
        return Err(no_static_merge());
    }
    if family == Family::Xf {
        return Err(Error::new(redbloom_core::client_logic::merge::NO_XF_MERGE));
    }
    if family == Family::Cf && options.intersect {
        return Err(no_cuckoo_intersect());
    }
    let cmd = merge_command(family, dest, sources, options);
    if let Err(e) = conn.query::<redis::Value>(&cmd) {
        let node = conn.node_of(key_slot(dest.as_bytes()));
        return Err(e.context(format_args!("{dest} on {node}")));
    }
    Ok(family)
}

/// A layout in words, for the error of layouts that differ.
fn layout(d: &Descriptor) -> String {
    let s = &d.spec;
    let mut text = format!(
        "{} {} members, capacity {}",
        d.shards(),
        s.family.name(),
        s.capacity
    );
    if s.family != Family::Cf {
        text += &format!(", error rate {}", s.error_rate);
    }
    match s.expansion {
        Some(x) => text += &format!(", expansion {x}"),
        None if s.nonscaling => text += ", nonscaling",
        None => text += ", default expansion",
    }
    if s.blocked {
        text += ", blocked";
    }
    text
}

/// `redbloom shard merge`: a new sharded filter `dest` whose member *i* merges member *i*
/// of every source (all of one layout: member count, type, capacity, error rate, expansion,
/// flags — so member *i* of each has one shape and, by the layout's hash tags, one slot),
/// then its descriptor, as `shard create` writes it. Refused before anything is written:
/// layouts that differ, a DEST (or one of its member keys) that exists, `--intersect` of
/// Cuckoo filters. If a member's merge fails, the members made are deleted again.
pub fn shard_merge(
    conn: &mut Conn,
    dest: &str,
    sources: &[&str],
    intersect: bool,
) -> Result<Descriptor> {
    let descriptors = sources
        .iter()
        .map(|s| Descriptor::open(conn, s))
        .collect::<Result<Vec<_>>>()?;
    let first = descriptors
        .first()
        .ok_or_else(|| Error::usage("no source to merge"))?;
    for d in &descriptors[1..] {
        if d.shards() != first.shards() || d.spec != first.spec {
            return Err(Error::new(format!(
                "sharded filters of different layouts cannot be merged: {} ({}) and {} ({})",
                first.name,
                layout(first),
                d.name,
                layout(d)
            )));
        }
    }
    let family = first.spec.family;
    if family == Family::Cf && intersect {
        return Err(no_cuckoo_intersect());
    }
    let target = Descriptor::new(dest, first.shards(), first.spec.clone())?;
    let mut keys = vec![target.name.clone()];
    keys.extend(target.members.iter().cloned());
    let exists: Vec<redis::Cmd> = keys
        .iter()
        .map(|k| redis::cmd("EXISTS").arg(k).clone())
        .collect();
    for (key, n) in keys.iter().zip(conn.pipeline(&exists)?) {
        if i64::from_redis_value(n)? != 0 {
            return Err(Error::new(format!("{key} already exists")));
        }
    }
    let options = MergeOptions {
        override_dest: false,
        intersect,
    };
    let mut cmds = Vec::new();
    for (i, member) in target.members.iter().enumerate() {
        let mut of_i: Vec<&str> = vec![member];
        of_i.extend(descriptors.iter().map(|d| d.members[i].as_str()));
        one_slot(conn, &of_i).map_err(|e| e.context(format_args!("{dest}: member {i}")))?;
        cmds.push(merge_command(family, member, &of_i[1..], options));
    }
    if let Err(failure) = conn.pipeline_at(&cmds) {
        let deletes: Vec<redis::Cmd> = target
            .members
            .iter()
            .map(|m| redis::cmd("DEL").arg(m).clone())
            .collect();
        let _ = conn.pipeline(&deletes);
        return Err(match failure.index {
            Some(i) => {
                let member = &target.members[i];
                let node = conn.node_of(key_slot(member.as_bytes()));
                failure
                    .error
                    .context(format_args!("{dest}: member {member} on {node}"))
            }
            None => failure.error.context(dest),
        });
    }
    target.write_descriptor(conn)?;
    Ok(target)
}
