//! Sharded filters: one logical filter made of N member keys whose hash slots are spread
//! evenly over the cluster's slot space, and a descriptor hash at the filter's name.
//! The layout and the routing rule are documented in docs/sharding.md.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{Family, FilterSpec, SF_NOT_RESERVED};
use crate::slot::{key_slot, SLOTS};
use redis::{FromRedisValue, Value};
use std::collections::HashMap;

/// The descriptor's `format` field.
pub const FORMAT: &str = "redbloom-sharded-filter";
/// The layout version this crate writes and reads.
pub const VERSION: u32 = 1;
/// The descriptor's `routing` field: the rule [`route`] implements.
pub const ROUTING: &str = "xxh3_64(item) mod shards";
/// Most members a sharded filter may have.
pub const MAX_SHARDS: u32 = 1024;
/// [`Descriptor::member_capacity`] of a filter of `capacity` over `shards` members.
pub fn member_capacity(capacity: u64, shards: u32) -> u64 {
    if shards <= 1 {
        return capacity;
    }
    let share = capacity as f64 / f64::from(shards);
    (share + 4.0 * share.sqrt()).ceil() as u64
}

/// The member an item belongs to: XXH3-64 (seed 0) of its bytes, modulo the member count.
pub fn route(item: &[u8], shards: u32) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(item) % u64::from(shards)) as u32
}

/// The hash tag of member `i` of `shards`: `s<i>.<c>` for the smallest `c` ≥ 0 whose
/// slot falls in the member's share of the slot space, `[i·16384/N, (i+1)·16384/N)`.
pub fn member_tag(i: u32, shards: u32) -> String {
    let lo = u32::from(SLOTS) * i / shards;
    let hi = u32::from(SLOTS) * (i + 1) / shards;
    (0u64..)
        .map(|c| format!("s{i}.{c}"))
        .find(|tag| (lo..hi).contains(&u32::from(key_slot(tag.as_bytes()))))
        .expect("every slot range is reached")
}

/// Member `i`'s key: `{<tag>}:<name>` (the tag first, so a `{` in the name cannot change
/// the slot).
pub fn member_key(name: &str, i: u32, shards: u32) -> String {
    format!("{{{}}}:{name}", member_tag(i, shards))
}

/// A sharded filter's descriptor, as read from (or written to) its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    pub name: String,
    pub spec: FilterSpec,
    pub members: Vec<String>,
}

fn field(map: &HashMap<String, String>, name: &str, key: &str) -> Result<String> {
    map.get(key)
        .cloned()
        .ok_or_else(|| Error::new(format!("{name}: descriptor has no field '{key}'")))
}

fn number<T: std::str::FromStr>(map: &HashMap<String, String>, name: &str, key: &str) -> Result<T> {
    let text = field(map, name, key)?;
    text.parse().map_err(|_| {
        Error::new(format!(
            "{name}: descriptor field '{key}' is not a number: '{text}'"
        ))
    })
}

impl Descriptor {
    /// A new layout of `shards` members for `spec` at `name`.
    pub fn new(name: &str, shards: u32, spec: FilterSpec) -> Result<Descriptor> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::usage(format!("--shards must be 1 to {MAX_SHARDS}")));
        }
        spec.validate()?;
        let members = (0..shards).map(|i| member_key(name, i, shards)).collect();
        Ok(Descriptor {
            name: name.to_string(),
            spec,
            members,
        })
    }

    pub fn shards(&self) -> u32 {
        self.members.len() as u32
    }

    /// Each member's capacity: its share C/N of the filter's, plus four standard deviations
    /// of the share routing gives it (√(C/N): the items per member are binomial), rounded
    /// up — so that a filter filled to its capacity has no member past its own, where a
    /// scaling member would grow a second link (2.3× its memory) and a non-scaling one
    /// would refuse items. One member takes all: exactly C.
    pub fn member_capacity(&self) -> u64 {
        member_capacity(self.spec.capacity, self.shards())
    }

    /// The hash fields, in the order they are written.
    pub fn fields(&self) -> Vec<(String, String)> {
        let s = &self.spec;
        let mut out = vec![
            ("format".to_string(), FORMAT.to_string()),
            ("version".to_string(), VERSION.to_string()),
            ("family".to_string(), s.family.name().to_string()),
            ("shards".to_string(), self.shards().to_string()),
            ("routing".to_string(), ROUTING.to_string()),
            ("capacity".to_string(), s.capacity.to_string()),
            ("error_rate".to_string(), s.error_rate.to_string()),
            (
                "member_capacity".to_string(),
                self.member_capacity().to_string(),
            ),
            (
                "expansion".to_string(),
                s.expansion.map(|x| x.to_string()).unwrap_or_default(),
            ),
            ("nonscaling".to_string(), u8::from(s.nonscaling).to_string()),
            ("blocked".to_string(), u8::from(s.blocked).to_string()),
        ];
        for (i, key) in self.members.iter().enumerate() {
            out.push((format!("member:{i}"), key.clone()));
        }
        out
    }

    /// Parses a descriptor's fields (HGETALL), refusing anything this version cannot read.
    pub fn parse(name: &str, map: &HashMap<String, String>) -> Result<Descriptor> {
        if map.get("format").map(String::as_str) != Some(FORMAT) {
            return Err(Error::new(format!(
                "{name} is not a sharded filter descriptor (no format field '{FORMAT}')"
            )));
        }
        let version = field(map, name, "version")?;
        if version != VERSION.to_string() {
            return Err(Error::new(format!(
                "{name}: sharded filter layout version {version}; this redbloom reads version {VERSION}"
            )));
        }
        let routing = field(map, name, "routing")?;
        if routing != ROUTING {
            return Err(Error::new(format!(
                "{name}: unknown routing rule '{routing}'"
            )));
        }
        let family = Family::parse(&field(map, name, "family")?)
            .map_err(|e| Error::new(format!("{name}: {e}")))?;
        if family == Family::Sf {
            return Err(Error::new(format!("{name}: {SF_NOT_RESERVED}")));
        }
        let shards: u32 = number(map, name, "shards")?;
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::new(format!(
                "{name}: descriptor has {shards} shards"
            )));
        }
        let expansion = field(map, name, "expansion")?;
        let spec = FilterSpec {
            family,
            error_rate: number(map, name, "error_rate")?,
            capacity: number(map, name, "capacity")?,
            expansion: if expansion.is_empty() {
                None
            } else {
                Some(number(map, name, "expansion")?)
            },
            nonscaling: field(map, name, "nonscaling")? == "1",
            blocked: field(map, name, "blocked")? == "1",
        };
        let members = (0..shards)
            .map(|i| field(map, name, &format!("member:{i}")))
            .collect::<Result<Vec<_>>>()?;
        Ok(Descriptor {
            name: name.to_string(),
            spec,
            members,
        })
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
            .map(|m| self.spec.reserve(m, capacity))
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
            cmds.push(self.spec.family.command("INFO").arg(m).clone());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_vectors() {
        // The vectors of docs/sharding.md: (item, XXH3-64, member of 12, member of 3).
        let cases: [(&str, u64, u32, u32); 5] = [
            ("", 0x2d06800538d394c2, 10, 1),
            ("a", 0xe6c632b61e964e1f, 7, 1),
            ("user:1000", 0xfb6841b2068c0c9f, 3, 0),
            ("hello world", 0xd447b1ea40e6988b, 7, 1),
            ("\u{1F980}", 0x38256e7e50056328, 4, 1),
        ];
        for (item, hash, of12, of3) in cases {
            assert_eq!(
                xxhash_rust::xxh3::xxh3_64(item.as_bytes()),
                hash,
                "{item:?}"
            );
            assert_eq!(route(item.as_bytes(), 12), of12, "{item:?}");
            assert_eq!(route(item.as_bytes(), 3), of3, "{item:?}");
        }
    }

    #[test]
    fn member_names_of_docs() {
        let expected = [
            ("{s0.10}:users", 653),
            ("{s1.3}:users", 2277),
            ("{s2.12}:users", 4007),
            ("{s3.54}:users", 5393),
            ("{s4.11}:users", 6237),
            ("{s5.12}:users", 7818),
            ("{s6.10}:users", 9492),
            ("{s7.2}:users", 10852),
            ("{s8.52}:users", 11208),
            ("{s9.2}:users", 12645),
            ("{s10.23}:users", 14634),
            ("{s11.19}:users", 15239),
        ];
        for (i, (key, slot)) in expected.iter().enumerate() {
            assert_eq!(member_key("users", i as u32, 12), *key);
            assert_eq!(key_slot(key.as_bytes()), *slot);
        }
    }

    #[test]
    fn member_slots_are_evenly_spread() {
        for shards in [1u32, 3, 12, 100, 1024] {
            for i in 0..shards {
                let key = member_key("users", i, shards);
                let slot = u32::from(key_slot(key.as_bytes()));
                assert!(
                    slot >= 16384 * i / shards && slot < 16384 * (i + 1) / shards,
                    "{key}"
                );
            }
        }
        assert_eq!(
            key_slot(member_key("{x}y", 3, 12).as_bytes()),
            key_slot(member_key("z", 3, 12).as_bytes())
        );
    }

    #[test]
    fn descriptor_round_trip_and_refusals() {
        let spec = FilterSpec {
            family: Family::Bf,
            error_rate: 0.01,
            capacity: 1_000_001,
            expansion: Some(4),
            nonscaling: false,
            blocked: false,
        };
        let d = Descriptor::new("f", 12, spec).unwrap();
        assert_eq!(d.member_capacity(), 84489);
        let map: HashMap<String, String> = d.fields().into_iter().collect();
        assert_eq!(Descriptor::parse("f", &map).unwrap(), d);
        let mut other = map.clone();
        other.insert("version".into(), "2".into());
        assert_eq!(
            Descriptor::parse("f", &other).unwrap_err().to_string(),
            "f: sharded filter layout version 2; this redbloom reads version 1"
        );
        let mut missing = map.clone();
        missing.remove("member:11");
        assert_eq!(
            Descriptor::parse("f", &missing).unwrap_err().to_string(),
            "f: descriptor has no field 'member:11'"
        );
        assert!(Descriptor::parse("f", &HashMap::new()).is_err());
        assert!(Descriptor::new("f", 0, d.spec.clone()).is_err());
        assert!(Descriptor::new("f", 1025, d.spec.clone()).is_err());
    }
}
