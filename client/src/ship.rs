//! Shipping filters built here ([`crate::load::Built`]) all or nothing: each is written with
//! LOADCHUNK under a temporary key in its target's hash slot ([`temp_key`]) and renamed into
//! place only once complete, by a script that checks on the server, atomically, that
//!
//! - the node is still the one the ship began on (its `run_id`: no failover, restart or
//!   slot move lost chunks in between; otherwise the ship starts over),
//! - the target is still absent (`load`: a key created meanwhile is never overwritten), or
//!   still an empty filter (`shard load`: a member that received items meanwhile is never
//!   overwritten).
//!
//! An interrupted ship (a signal, a failure) leaves every target as it was; its temporary
//! keys are deleted on the way out, and one left by a killed process is replaced by the
//! next run (every ship starts with `DEL temp`). After a reconnection during a ship (a
//! dropped connection, a failover) the ship starts over into a fresh temporary key, so a
//! chunk is never resent into a half-built filter on another copy of it.
//!
//! Two loads into the same target at the same time share its temporary key and are not
//! supported.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{command, Family};
use crate::load::{Built, Limits};
use crate::shard::info_pairs;
pub use redbloom_core::client_logic::ship::{temp_key, RUN_ID, SWAP, TEMP_SUFFIX};
use redis::{FromRedisValue, Value};

/// Times a ship starts over (after a reconnection or a failover) before it fails.
const ATTEMPTS: u32 = 3;
/// Data chunks (at most 16 MiB each) per pipelined round.
const CHUNKS_PER_ROUND: usize = 2;

/// Fails when `key` exists: a load never overwrites (checked again at its end).
pub fn ensure_absent(conn: &mut Conn, key: &str) -> Result<()> {
    if conn.query::<i64>(redis::cmd("EXISTS").arg(key))? != 0 {
        return Err(Error::new(format!("{key} already exists")));
    }
    Ok(())
}

/// The server's limits ([`Limits`]) from its configs; the defaults for those it does not
/// have or does not show (CONFIG may be refused).
pub fn server_limits(conn: &mut Conn) -> Limits {
    let mut limits = Limits::default();
    let mut get = |name: &str| -> Option<u64> {
        let reply: Vec<String> = conn
            .query_node(redis::cmd("CONFIG").arg("GET").arg(name))
            .ok()?;
        reply.get(1)?.parse().ok()
    };
    if let Some(bytes) = get("bf.max-filter-bytes") {
        limits.max_bytes = bytes;
    }
    // RedisBloom 8 names it unprefixed (redbloom on Redis 8 both ways), 2.x `bf.`-prefixed.
    if let Some(n) = get("cf-max-expansions").or_else(|| get("bf.cf-max-expansions")) {
        limits.cf_max_expansions = n;
    }
    limits
}

/// The command that reads an empty filter's shape: BF's and XF's SCANDUMP header, CF's INFO (an
/// empty Cuckoo filter has no SCANDUMP header).
fn shape_query(family: Family, key: &str) -> Result<redis::Cmd> {
    Ok(match family {
        Family::Bf => redis::cmd("BF.SCANDUMP").arg(key).arg(0).clone(),
        Family::Xf => redis::cmd("XF.SCANDUMP").arg(key).arg(0).clone(),
        Family::Cf => redis::cmd("CF.INFO").arg(key).clone(),
        Family::Cbf => return Err(Error::usage(crate::load::LOAD_FAMILIES)),
        // Built whole here, never reserved.
        Family::Sf => return Err(Error::usage(crate::family::SF_NOT_RESERVED)),
    })
}

/// The empty filter a shape query's reply describes, built here.
fn from_shape(family: Family, reply: Value, limits: &Limits) -> Result<Built> {
    match family {
        Family::Cf => Ok(Built::from_cuckoo_info(&info_pairs(&reply), limits)?),
        _ => {
            let parts = Vec::<Value>::from_redis_value(reply)?;
            let header = match parts.get(1) {
                Some(Value::Nil) | None => Vec::new(),
                Some(v) => Vec::<u8>::from_redis_value(v.clone())?,
            };
            if family == Family::Xf {
                return Ok(Built::from_xf_header(&header, limits)?);
            }
            Ok(Built::from_bloom_header(&header, limits)?)
        }
    }
}

/// The empty filter `key` (a reserved, empty member) is, built here to be filled.
pub fn shape_of(conn: &mut Conn, family: Family, key: &str, limits: &Limits) -> Result<Built> {
    let reply = conn.query::<Value>(&shape_query(family, key)?)?;
    from_shape(family, reply, limits).map_err(|e| e.context(key))
}

/// Refuses a temporary key that exists and is not a filter of `family` (not something an
/// interrupted load left).
fn check_temp(conn: &mut Conn, temp: &str, family: Family) -> Result<()> {
    let kind: String = conn.query(redis::cmd("TYPE").arg(temp))?;
    if kind != "none" && !family.type_names().contains(&kind.as_str()) {
        return Err(Error::new(format!(
            "{temp} (the temporary key of this load) exists and is a key of type {kind}: not \
             left by an interrupted load; remove or rename it"
        )));
    }
    Ok(())
}

/// What `cmd` (a RESERVE of `temp`) makes on the server, built here: reserved, read back
/// and deleted again in one pipeline, so the server's configs and rules decide what the
/// options leave open (the expansion, the bucket size, EXPANSION 0).
pub fn reserved(
    conn: &mut Conn,
    family: Family,
    reserve: redis::Cmd,
    temp: &str,
    limits: &Limits,
) -> Result<Built> {
    check_temp(conn, temp, family)?;
    let cmds = [
        redis::cmd("DEL").arg(temp).clone(),
        reserve,
        shape_query(family, temp)?,
        redis::cmd("DEL").arg(temp).clone(),
    ];
    let replies = conn.pipeline(&cmds)?;
    let reply = replies.into_iter().nth(2).unwrap_or(Value::Nil);
    from_shape(family, reply, limits)
}

/// How a target is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// The target must not exist (`load`).
    Absent,
    /// The target must be an empty filter of this family (`shard load`'s members).
    EmptyFilter(Family),
}

/// One filter to ship: built here, for `key`.
pub struct Target<'a> {
    pub key: &'a str,
    pub built: &'a Built,
    pub replace: Replace,
}

/// Shipping under way: whether to stop (a signal), and bytes sent so far.
pub struct Ship<'s> {
    pub stop: &'s dyn Fn() -> bool,
    pub progress: &'s mut dyn FnMut(u64),
    sent: u64,
}

impl<'s> Ship<'s> {
    pub fn new(stop: &'s dyn Fn() -> bool, progress: &'s mut dyn FnMut(u64)) -> Ship<'s> {
        Ship {
            stop,
            progress,
            sent: 0,
        }
    }
}

fn loadchunk(family: Family, key: &str, iter: i64, data: &[u8]) -> redis::Cmd {
    command(family, "LOADCHUNK")
        .arg(key)
        .arg(iter)
        .arg(data)
        .clone()
}

/// Why one attempt of a ship ended early.
enum Early {
    /// The connection was made again meanwhile: start over.
    Reconnected,
    Failed(Error),
}

impl From<Error> for Early {
    fn from(e: Error) -> Early {
        Early::Failed(e)
    }
}

/// Writes `built` under `temp` from scratch, chunk after chunk; returns the node's run_id.
fn ship_once(
    conn: &mut Conn,
    temp: &str,
    built: &Built,
    ship: &mut Ship<'_>,
) -> std::result::Result<String, Early> {
    let family = built.family();
    let header = built.header();
    let begin = [
        redis::cmd("DEL").arg(temp).clone(),
        loadchunk(family, temp, 1, &header),
        redis::cmd("EVAL").arg(RUN_ID).arg(1).arg(temp).clone(),
    ];
    let replies = conn.pipeline(&begin)?;
    let run_id = replies
        .into_iter()
        .nth(2)
        .and_then(|v| String::from_redis_value(v).ok())
        .ok_or_else(|| Error::new(format!("{temp}: the server gave no run_id")))?;
    let reconnects = conn.reconnects();
    ship.sent += header.len() as u64;
    (ship.progress)(ship.sent);
    let mut round: Vec<redis::Cmd> = Vec::with_capacity(CHUNKS_PER_ROUND);
    let mut round_bytes = 0;
    let send = |conn: &mut Conn,
                round: &mut Vec<redis::Cmd>,
                bytes: &mut u64,
                ship: &mut Ship<'_>|
     -> std::result::Result<(), Early> {
        if (ship.stop)() {
            return Err(Early::Failed(Error::interrupted("interrupted")));
        }
        let sent = conn.pipeline(round);
        round.clear();
        // A round resent on a new connection may meet chunks the old one delivered (a
        // LOADCHUNK is not idempotent): whatever it answered, the ship starts over.
        if conn.reconnects() != reconnects {
            return Err(Early::Reconnected);
        }
        sent?;
        ship.sent += *bytes;
        *bytes = 0;
        (ship.progress)(ship.sent);
        Ok(())
    };
    let mut early = None;
    let _ = built.for_each_chunk(|iter, data| {
        round.push(loadchunk(family, temp, iter, data));
        round_bytes += data.len() as u64;
        if round.len() == CHUNKS_PER_ROUND {
            if let Err(e) = send(conn, &mut round, &mut round_bytes, ship) {
                early = Some(e);
                return Err(redbloom_core::client_logic::LogicError::Failed(
                    "stopped".into(),
                ));
            }
        }
        Ok(())
    });
    if let Some(e) = early {
        return Err(e);
    }
    if !round.is_empty() {
        send(conn, &mut round, &mut round_bytes, ship)?;
    }
    Ok(run_id)
}

/// [`ship_once`], started over after a reconnection, up to [`ATTEMPTS`] times.
fn ship_one(conn: &mut Conn, temp: &str, built: &Built, ship: &mut Ship<'_>) -> Result<String> {
    for _ in 0..ATTEMPTS {
        let before = ship.sent;
        match ship_once(conn, temp, built, ship) {
            Ok(run_id) => return Ok(run_id),
            Err(Early::Reconnected) => ship.sent = before,
            Err(Early::Failed(e)) => return Err(e),
        }
    }
    Err(Error::connection(format!(
        "{temp}: the connection was lost during each of {ATTEMPTS} attempts to ship the filter"
    )))
}

fn delete_temps(conn: &mut Conn, temps: &[String]) {
    let dels: Vec<redis::Cmd> = temps
        .iter()
        .map(|t| redis::cmd("DEL").arg(t).clone())
        .collect();
    let _ = conn.pipeline(&dels);
}

/// Whether `key` holds exactly `built` (a swap whose reply was lost applied it already):
/// the same SCANDUMP header.
fn holds(conn: &mut Conn, key: &str, built: &Built) -> bool {
    let family = built.family();
    let Ok(reply) = conn.query::<Vec<Value>>(command(family, "SCANDUMP").arg(key).arg(0)) else {
        return false;
    };
    matches!(reply.get(1), Some(v) if Vec::<u8>::from_redis_value(v.clone()).ok() == Some(built.header()))
}

/// Ships every target under its temporary key, then renames each into place ([`SWAP`]'s
/// checks). Until the renames nothing of the targets changes; a stop (`ship.stop`) or a
/// failure before them deletes the temporary keys and returns the error. The renames
/// themselves (one short script per target) are not interrupted. Returns the bytes sent.
pub fn deliver(conn: &mut Conn, targets: &[Target<'_>], ship: &mut Ship<'_>) -> Result<u64> {
    let temps: Vec<String> = targets.iter().map(|t| temp_key(t.key)).collect();
    for (t, temp) in targets.iter().zip(&temps) {
        check_temp(conn, temp, t.built.family())?;
    }
    let mut run_ids = Vec::new();
    for (t, temp) in targets.iter().zip(&temps) {
        match ship_one(conn, temp, t.built, ship) {
            Ok(id) => run_ids.push(id),
            Err(e) => {
                delete_temps(conn, &temps);
                return Err(match e {
                    Error::Interrupted(_) => Error::interrupted(interrupted_text(targets)),
                    other => other.context(t.key),
                });
            }
        }
    }
    if (ship.stop)() {
        delete_temps(conn, &temps);
        return Err(Error::interrupted(interrupted_text(targets)));
    }
    // Every target checked before any is renamed (each rename checks its own again).
    let checks: Vec<redis::Cmd> = targets
        .iter()
        .zip(temps.iter().zip(&run_ids))
        .map(|(t, (temp, run_id))| swap_cmd(t, temp, run_id, "check"))
        .collect();
    let checked = conn.pipeline(&checks);
    let refusal =
        match checked {
            Err(e) => Some(e),
            Ok(replies) => targets.iter().zip(replies).find_map(|(t, reply)| {
                match i64::from_redis_value(reply) {
                    Ok(0) | Ok(-3) => Some(refused(t, 0)),
                    Ok(_) => None,
                    Err(e) => Some(Error::from(e).context(t.key)),
                }
            }),
        };
    if let Some(e) = refusal {
        delete_temps(conn, &temps);
        return Err(e);
    }
    for (t, (temp, run_id)) in targets.iter().zip(temps.iter().zip(&mut run_ids)) {
        let mut attempts = 1;
        loop {
            let outcome: i64 = match conn.query(&swap_cmd(t, temp, run_id, "swap")) {
                Ok(n) => n,
                Err(e) => {
                    delete_temps(conn, &temps);
                    return Err(e.context(t.key));
                }
            };
            match outcome {
                1 => break,
                -2 if holds(conn, t.key, t.built) => break,
                -1 | -2 if attempts < ATTEMPTS => {
                    attempts += 1;
                    match ship_one(conn, temp, t.built, ship) {
                        Ok(id) => *run_id = id,
                        Err(e) => {
                            delete_temps(conn, &temps);
                            return Err(e.context(t.key));
                        }
                    }
                }
                other => {
                    delete_temps(conn, &temps);
                    return Err(refused(t, other));
                }
            }
        }
    }
    Ok(ship.sent)
}

fn swap_cmd(t: &Target<'_>, temp: &str, run_id: &str, mode: &str) -> redis::Cmd {
    let info = match t.replace {
        Replace::Absent => String::new(),
        Replace::EmptyFilter(f) => format!("{}.INFO", f.prefix()),
    };
    redis::cmd("EVAL")
        .arg(SWAP)
        .arg(2)
        .arg(temp)
        .arg(t.key)
        .arg(run_id)
        .arg(info)
        .arg(mode)
        .clone()
}

/// The error of a [`SWAP`] reply other than 1.
fn refused(t: &Target<'_>, reply: i64) -> Error {
    let key = t.key;
    match (reply, t.replace) {
        (-1 | -2, _) => Error::connection(format!(
            "{key}: the server changed during each of {ATTEMPTS} ships (failover or restart); {key} is unchanged"
        )),
        (-3, _) => Error::new(format!("{key}: missing (deleted during the load)")),
        (_, Replace::Absent) => Error::new(format!(
            "{key}: created by someone else during the load; left as it is"
        )),
        (_, Replace::EmptyFilter(_)) => Error::new(format!(
            "{key}: received items during the load; left as it is"
        )),
    }
}

fn interrupted_text(targets: &[Target<'_>]) -> String {
    match targets {
        [one] => format!("interrupted: {} is unchanged", one.key),
        _ => format!("interrupted: the {} members are unchanged", targets.len()),
    }
}
