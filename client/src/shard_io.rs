//! Adding and answering items of a sharded filter: the items grouped by member, sent in
//! rounds of pipelined commands (docs/sharding.md, "How add and exists run").

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{insert, mexists};
use crate::shard::{route, Descriptor};
use crate::slot::key_slot;
use redis::Value;

/// Items per BF.INSERT / BF.MEXISTS command.
const ITEMS_PER_COMMAND: usize = 1000;
/// Items per pipelined round (all members, all nodes).
const ITEMS_PER_ROUND: usize = 100_000;

/// Makes one member's command of a round from the member key and its items.
type MakeCommand<'a> = dyn Fn(&str, &mut dyn Iterator<Item = &[u8]>) -> redis::Cmd + 'a;

/// A reply the shard's command should not have given, said in words ("answered a string
/// of 3 bytes") rather than as the client library's debug form.
fn what(reply: &Value) -> String {
    let shape = match reply {
        Value::Nil => "nil".to_string(),
        Value::Int(n) => format!("the integer {n}"),
        Value::BulkString(b) => format!("a string of {} bytes", b.len()),
        Value::SimpleString(s) => format!("the status {s:?}"),
        Value::Okay => "OK".to_string(),
        Value::Array(a) | Value::Set(a) => format!("an array of {} elements", a.len()),
        Value::Map(m) => format!("a map of {} entries", m.len()),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Double(d) => format!("the double {d}"),
        Value::ServerError(e) => format!("the error {}", e.code()),
        _ => "a reply of another type".to_string(),
    };
    format!("the server answered {shape}")
}

impl Descriptor {
    /// Item indices per member.
    fn group<T: AsRef<[u8]>>(&self, items: &[T]) -> Vec<Vec<usize>> {
        let mut groups = vec![Vec::new(); self.members.len()];
        for (at, item) in items.iter().enumerate() {
            groups[route(item.as_ref(), self.shards()) as usize].push(at);
        }
        groups
    }

    /// An error of member `m` at input item `at` (0-based within `items`, which follow
    /// `before` items of the input): names the filter, the member, its node and the item.
    fn item_error<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        m: usize,
        items: &[T],
        at: usize,
        before: u64,
        why: &str,
    ) -> Error {
        let member = &self.members[m];
        let node = conn.node_of(key_slot(member.as_bytes()));
        Error::new(format!(
            "{}: member {member} on {node}: item {} of the input ({}): {why}",
            self.name,
            before + at as u64 + 1,
            String::from_utf8_lossy(items[at].as_ref())
        ))
    }

    /// Runs one command per (member, ≤1,000 items) over `items`, round by round, and returns
    /// one integer reply per item, in the items' order. `before`: items of the input before
    /// these (errors count items over the whole input).
    fn per_item<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        items: &[T],
        before: u64,
        durable: Option<u32>,
        progress: &mut dyn FnMut(usize),
        make: &MakeCommand<'_>,
    ) -> Result<Vec<i64>> {
        let mut out = vec![0i64; items.len()];
        for (round_no, round) in items.chunks(ITEMS_PER_ROUND).enumerate() {
            let base = round_no * ITEMS_PER_ROUND;
            let mut cmds = Vec::new();
            let mut spans: Vec<(usize, Vec<usize>)> = Vec::new();
            let mut keys: Vec<&str> = Vec::new();
            for (m, group) in self.group(round).into_iter().enumerate() {
                if group.is_empty() {
                    continue;
                }
                keys.push(&self.members[m]);
                for part in group.chunks(ITEMS_PER_COMMAND) {
                    let mut iter = part.iter().map(|&i| round[i].as_ref());
                    cmds.push(make(&self.members[m], &mut iter));
                    spans.push((m, part.iter().map(|&i| base + i).collect()));
                }
            }
            let replies = match durable {
                Some(replicas) => conn.pipeline_replicated(&cmds, &keys, replicas),
                None => conn.pipeline_at(&cmds),
            };
            let replies = match replies {
                Ok(replies) => replies,
                Err(f) => {
                    return Err(match f.index.and_then(|i| spans.get(i)) {
                        Some((m, span)) => {
                            self.item_error(conn, *m, items, span[0], before, f.error.message())
                        }
                        None => f.error.context(&self.name),
                    })
                }
            };
            for ((m, span), reply) in spans.iter().zip(replies) {
                let Value::Array(values) = reply else {
                    return Err(self.item_error(
                        conn,
                        *m,
                        items,
                        span[0],
                        before,
                        &format!("{} where an array of answers was expected", what(&reply)),
                    ));
                };
                for (k, &at) in span.iter().enumerate() {
                    out[at] = match values.get(k) {
                        Some(Value::Int(n)) => *n,
                        Some(Value::Boolean(b)) => i64::from(*b),
                        Some(Value::ServerError(e)) => {
                            let why = format!("{} {}", e.code(), e.details().unwrap_or_default());
                            return Err(self.item_error(conn, *m, items, at, before, &why));
                        }
                        // A reply that stops early (a full non-scaling filter's last answer
                        // is its error; RedisBloom stops there too).
                        None => {
                            return Err(self.item_error(
                                conn,
                                *m,
                                items,
                                at,
                                before,
                                "no answer for it (the member stopped adding)",
                            ))
                        }
                        Some(other) => {
                            let why = format!("{} where 1 or 0 was expected", what(other));
                            return Err(self.item_error(conn, *m, items, at, before, &why));
                        }
                    };
                }
            }
            progress(base + round.len());
        }
        Ok(out)
    }

    /// Adds `items`; one reply per item (1 newly added, 0 maybe there already). With
    /// `durable = Some(r)`, each round waits until `r` replicas of every master it wrote to
    /// acknowledged it (`WAIT`), sending the round again after a failover.
    pub fn add<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        items: &[T],
        durable: Option<u32>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<i64>> {
        self.add_after(conn, items, 0, durable, progress)
    }

    /// [`Descriptor::add`] of items that follow `before` items of the same input (errors
    /// name an item by its place in the whole input).
    pub fn add_after<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        items: &[T],
        before: u64,
        durable: Option<u32>,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<i64>> {
        let spec = self.spec.clone();
        self.per_item(conn, items, before, durable, progress, &|key, iter| {
            insert(&spec, key, iter)
        })
    }

    /// Answers `items`: 1 maybe present, 0 absent, in order.
    pub fn exists<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        items: &[T],
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<i64>> {
        self.exists_after(conn, items, 0, progress)
    }

    /// [`Descriptor::exists`] of items that follow `before` items of the same input.
    pub fn exists_after<T: AsRef<[u8]>>(
        &self,
        conn: &mut Conn,
        items: &[T],
        before: u64,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<i64>> {
        let family = self.spec.family;
        self.per_item(conn, items, before, None, progress, &|key, iter| {
            mexists(family, key, iter)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::what;
    use redis::Value;

    #[test]
    fn an_unexpected_reply_is_said_in_words() {
        let cases = [
            (Value::Nil, "the server answered nil"),
            (Value::Int(7), "the server answered the integer 7"),
            (
                Value::BulkString(b"abc".to_vec()),
                "the server answered a string of 3 bytes",
            ),
            (Value::Okay, "the server answered OK"),
            (
                Value::Array(vec![Value::Nil, Value::Int(1)]),
                "the server answered an array of 2 elements",
            ),
            (Value::Boolean(true), "the server answered the boolean true"),
        ];
        for (reply, said) in cases {
            assert_eq!(what(&reply), said);
        }
    }
}
