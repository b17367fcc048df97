//! Sharded filters: one logical filter made of N member keys whose hash slots are spread
//! evenly over the cluster's slot space, and a descriptor hash at the filter's name.
//! The layout and the routing rule are documented in docs/sharding.md.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{command, reserve, FilterSpec};
use crate::slot::key_slot;
use redis::{FromRedisValue, Value};
use std::collections::HashMap;

pub use redbloom_core::client_logic::sharding::{
    member_capacity, member_key, member_tag, route, Layout, FORMAT, MAX_SHARDS, ROUTING, VERSION,
};

/// A sharded filter's descriptor, as read from (or written to) its hash: the shared
/// [`Layout`] with the I/O of the `redis` crate.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    pub name: String,
    pub spec: FilterSpec,
    pub members: Vec<String>,
}

impl From<Layout> for Descriptor {
    fn from(l: Layout) -> Descriptor {
        Descriptor {
            name: l.name,
            spec: l.spec,
            members: l.members,
        }
    }
}

impl Descriptor {
    /// A new layout of `shards` members for `spec` at `name`.
    pub fn new(name: &str, shards: u32, spec: FilterSpec) -> Result<Descriptor> {
        Ok(Layout::new(name, shards, spec)?.into())
    }

    /// The shared layout this descriptor describes.
    pub fn layout(&self) -> Layout {
        Layout {
            name: self.name.clone(),
            spec: self.spec.clone(),
            members: self.members.clone(),
        }
    }

    pub fn shards(&self) -> u32 {
        self.members.len() as u32
    }

    /// Each member's capacity ([`Layout::member_capacity`]).
    pub fn member_capacity(&self) -> u64 {
        member_capacity(self.spec.capacity, self.shards())
    }

    /// The hash fields, in the order they are written ([`Layout::fields`]).
    pub fn fields(&self) -> Vec<(String, String)> {
        self.layout().fields()
    }

    /// Parses a descriptor's fields (HGETALL), refusing anything this version cannot read.
    pub fn parse(name: &str, map: &HashMap<String, String>) -> Result<Descriptor> {
        Ok(Layout::parse(name, map)?.into())
    }

    /// Reads and checks the descriptor at `name`, then checks that every member exists
    /// with its family's type.
    pub fn open(conn: &mut Conn, name: &str) -> Result<Descriptor> {
        let descriptor = Descriptor::read(conn, name)?;
        descriptor.check_members(conn)?;
        Ok(descriptor)
    }

    /// Reads and checks the descriptor at `name`, not its members.
    pub fn read(conn: &mut Conn, name: &str) -> Result<Descriptor> {
        let kind: String = conn.query(redis::cmd("TYPE").arg(name))?;
        match kind.as_str() {
            "hash" => {}
            "none" => {
                return Err(Error::new(format!(
                    "no sharded filter {name} (no such key)"
                )))
            }
            other => {
                return Err(Error::new(format!(
                    "{name} is not a sharded filter descriptor (a key of type {other})"
                )))
            }
        }
        let map: HashMap<String, String> = conn.query(redis::cmd("HGETALL").arg(name))?;
        Descriptor::parse(name, &map)
    }

    fn check_members(&self, conn: &mut Conn) -> Result<()> {
        let cmds: Vec<redis::Cmd> = self
            .members
            .iter()
            .map(|m| redis::cmd("TYPE").arg(m).clone())
            .collect();
        let kinds = conn.pipeline(&cmds)?;
        let expected = self.spec.family.type_names();
        for (member, kind) in self.members.iter().zip(kinds) {
            let kind = String::from_redis_value(kind)?;
            if kind == "none" {
                return Err(Error::new(format!(
                    "{}: member {member} is missing",
                    self.name
                )));
            }
            if !expected.contains(&kind.as_str()) {
                return Err(Error::new(format!(
                    "{}: member {member} is a key of type {kind}, not a {} filter",
                    self.name,
                    self.spec.family.name()
                )));
            }
        }
        Ok(())
    }

    /// Creates the members (each reserved for [`Descriptor::member_capacity`]: its share
    /// plus headroom) and then the descriptor; refuses when the name or any member key
    /// exists, and removes the members it made if a reservation fails.
    pub fn create(&self, conn: &mut Conn) -> Result<()> {
        let mut keys = vec![self.name.clone()];
        keys.extend(self.members.iter().cloned());
        let cmds: Vec<redis::Cmd> = keys
            .iter()
            .map(|k| redis::cmd("EXISTS").arg(k).clone())
            .collect();
        for (key, exists) in keys.iter().zip(conn.pipeline(&cmds)?) {
            if i64::from_redis_value(exists)? != 0 {
                return Err(Error::new(format!("{key} already exists")));
            }
        }
        let capacity = self.member_capacity();
        let reserves: Vec<redis::Cmd> = self
            .members
            .iter()
            .map(|m| reserve(&self.spec, m, capacity))
            .collect();
        if let Err(e) = conn.pipeline(&reserves) {
            let _ = self.delete_members(conn);
            return Err(Error::new(format!("{}: {e}", self.name)));
        }
        self.write_descriptor(conn)
    }

    /// Writes the descriptor hash (its members made already).
    pub fn write_descriptor(&self, conn: &mut Conn) -> Result<()> {
        let mut hset = redis::cmd("HSET");
        hset.arg(&self.name);
        for (k, v) in self.fields() {
            hset.arg(k).arg(v);
        }
        conn.query::<i64>(&hset)?;
        Ok(())
    }

    fn delete_members(&self, conn: &mut Conn) -> Result<()> {
        let dels: Vec<redis::Cmd> = self
            .members
            .iter()
            .map(|m| redis::cmd("DEL").arg(m).clone())
            .collect();
        conn.pipeline(&dels).map(|_| ())
    }

    /// Deletes the members and the descriptor.
    pub fn drop_all(&self, conn: &mut Conn) -> Result<()> {
        self.delete_members(conn)?;
        conn.query::<i64>(redis::cmd("DEL").arg(&self.name))?;
        Ok(())
    }

    /// Each member's INFO reply as (field, value) pairs, and its memory (MEMORY USAGE).
    pub fn member_infos(&self, conn: &mut Conn) -> Result<Vec<MemberInfo>> {
        let mut cmds = Vec::new();
        for m in &self.members {
            cmds.push(command(self.spec.family, "INFO").arg(m).clone());
            cmds.push(redis::cmd("MEMORY").arg("USAGE").arg(m).clone());
        }
        let replies = conn.pipeline(&cmds)?;
        let mut out = Vec::new();
        for (m, pair) in self.members.iter().zip(replies.chunks(2)) {
            out.push(MemberInfo {
                key: m.clone(),
                slot: key_slot(m.as_bytes()),
                info: info_pairs(&pair[0]),
                memory: i64::from_redis_value(pair[1].clone()).unwrap_or(0),
            });
        }
        Ok(out)
    }
}

#[derive(Debug, Clone)]
pub struct MemberInfo {
    pub key: String,
    pub slot: u16,
    pub info: Vec<(String, String)>,
    pub memory: i64,
}

impl MemberInfo {
    /// An integer field of the INFO reply by name (e.g. "Number of items inserted").
    pub fn int(&self, name: &str) -> Option<i64> {
        self.info
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse().ok())
    }
}

/// A flat `[name, value, …]` (RESP2) or map (RESP3) INFO reply as text pairs.
pub fn info_pairs(value: &Value) -> Vec<(String, String)> {
    let text = |v: &Value| match v {
        Value::Int(n) => n.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Nil => String::new(),
        other => String::from_redis_value(other.clone()).unwrap_or_default(),
    };
    match value {
        Value::Array(items) => items
            .chunks(2)
            .filter(|p| p.len() == 2)
            .map(|p| (text(&p[0]), text(&p[1])))
            .collect(),
        Value::Map(pairs) => pairs.iter().map(|(k, v)| (text(k), text(v))).collect(),
        _ => Vec::new(),
    }
}
