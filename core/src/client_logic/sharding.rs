//! Sharded filters: one logical filter made of N member keys whose hash slots are spread
//! evenly over the cluster's slot space, and a descriptor hash at the filter's name. The
//! layout and the routing rule are documented in docs/sharding.md; this is the one
//! implementation every client (the CLI, the Python package) uses.

use super::family::{Family, FilterSpec, SF_NOT_RESERVED, XF_NOT_SHARDED};
use super::slot::{key_slot, SLOTS};
use super::{LogicError, Result};
use std::collections::HashMap;

/// The descriptor's `format` field.
pub const FORMAT: &str = "redbloom-sharded-filter";
/// The layout version this crate writes and reads.
pub const VERSION: u32 = 1;
/// The descriptor's `routing` field: the rule [`route`] implements.
pub const ROUTING: &str = "xxh3_64(item) mod shards";
/// Most members a sharded filter may have.
pub const MAX_SHARDS: u32 = 1024;

/// [`Layout::member_capacity`] of a filter of `capacity` over `shards` members.
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

/// A sharded filter's layout, as its descriptor hash holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub name: String,
    pub spec: FilterSpec,
    pub members: Vec<String>,
}

fn field(map: &HashMap<String, String>, name: &str, key: &str) -> Result<String> {
    map.get(key)
        .cloned()
        .ok_or_else(|| LogicError::failed(format!("{name}: descriptor has no field '{key}'")))
}

fn number<T: std::str::FromStr>(map: &HashMap<String, String>, name: &str, key: &str) -> Result<T> {
    let text = field(map, name, key)?;
    text.parse().map_err(|_| {
        LogicError::failed(format!(
            "{name}: descriptor field '{key}' is not a number: '{text}'"
        ))
    })
}

impl Layout {
    /// A new layout of `shards` members for `spec` at `name`.
    pub fn new(name: &str, shards: u32, spec: FilterSpec) -> Result<Layout> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(LogicError::usage(format!(
                "--shards must be 1 to {MAX_SHARDS}"
            )));
        }
        if spec.family == Family::Xf {
            return Err(LogicError::usage(XF_NOT_SHARDED));
        }
        spec.validate()?;
        let members = (0..shards).map(|i| member_key(name, i, shards)).collect();
        Ok(Layout {
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

    /// The member key `item` is routed to.
    pub fn member_of(&self, item: &[u8]) -> &str {
        &self.members[route(item, self.shards()) as usize]
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
    pub fn parse(name: &str, map: &HashMap<String, String>) -> Result<Layout> {
        if map.get("format").map(String::as_str) != Some(FORMAT) {
            return Err(LogicError::failed(format!(
                "{name} is not a sharded filter descriptor (no format field '{FORMAT}')"
            )));
        }
        let version = field(map, name, "version")?;
        if version != VERSION.to_string() {
            return Err(LogicError::failed(format!(
                "{name}: sharded filter layout version {version}; this redbloom reads version {VERSION}"
            )));
        }
        let routing = field(map, name, "routing")?;
        if routing != ROUTING {
            return Err(LogicError::failed(format!(
                "{name}: unknown routing rule '{routing}'"
            )));
        }
        let family = Family::parse(&field(map, name, "family")?)
            .map_err(|e| LogicError::failed(format!("{name}: {e}")))?;
        if family == Family::Sf {
            return Err(LogicError::failed(format!("{name}: {SF_NOT_RESERVED}")));
        }
        if family == Family::Xf {
            return Err(LogicError::failed(format!("{name}: {XF_NOT_SHARDED}")));
        }
        let shards: u32 = number(map, name, "shards")?;
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(LogicError::failed(format!(
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
        Ok(Layout {
            name: name.to_string(),
            spec,
            members,
        })
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
        let d = Layout::new("f", 12, spec).unwrap();
        assert_eq!(d.member_capacity(), 84489);
        let map: HashMap<String, String> = d.fields().into_iter().collect();
        assert_eq!(Layout::parse("f", &map).unwrap(), d);
        let mut other = map.clone();
        other.insert("version".into(), "2".into());
        assert_eq!(
            Layout::parse("f", &other).unwrap_err().to_string(),
            "f: sharded filter layout version 2; this redbloom reads version 1"
        );
        let mut missing = map.clone();
        missing.remove("member:11");
        assert_eq!(
            Layout::parse("f", &missing).unwrap_err().to_string(),
            "f: descriptor has no field 'member:11'"
        );
        assert!(Layout::parse("f", &HashMap::new()).is_err());
        assert!(Layout::new("f", 0, d.spec.clone()).is_err());
        assert!(Layout::new("f", 1025, d.spec.clone()).is_err());
    }
}
