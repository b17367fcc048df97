//! The filter families a sharded filter (or `load`) can be made of, and their commands.

use crate::conn::Conn;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Scalable Bloom filter (BF.*).
    Bf,
    /// Cuckoo filter (CF.*).
    Cf,
    /// Counting Bloom filter (CBF.*, redbloom's own).
    Cbf,
    /// Static filter (SF.*, redbloom's own): built whole from a known set, never reserved
    /// or added to, so `load` only (never a sharded filter's members).
    Sf,
}

impl Family {
    pub fn parse(name: &str) -> Result<Family> {
        match name.to_ascii_lowercase().as_str() {
            "bf" => Ok(Family::Bf),
            "cf" => Ok(Family::Cf),
            "cbf" => Ok(Family::Cbf),
            "static" => Ok(Family::Sf),
            other => Err(Error::usage(format!(
                "unknown filter type '{other}' (expected bf, cf, cbf or static)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Bf => "bf",
            Family::Cf => "cf",
            Family::Cbf => "cbf",
            Family::Sf => "static",
        }
    }

    /// The command prefix: `BF`, `CF`, `CBF`, `SF`.
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Bf => "BF",
            Family::Cf => "CF",
            Family::Cbf => "CBF",
            Family::Sf => "SF",
        }
    }

    /// The names `TYPE` replies for a key of this family.
    pub fn type_names(self) -> &'static [&'static str] {
        match self {
            Family::Bf => &["MBbloom--", "RBblockBF"],
            Family::Cf => &["MBbloomCF"],
            Family::Cbf => &["RBcountBF"],
            Family::Sf => &["RBstaticF"],
        }
    }

    pub fn command(self, verb: &str) -> redis::Cmd {
        redis::cmd(&format!("{}.{verb}", self.prefix()))
    }
}

/// The family of a key from its TYPE: `Some` for a bf, cf, cbf or static filter, `None` for a hash
/// (a sharded filter's descriptor, perhaps); an error for a missing key or another type.
pub fn key_family(conn: &mut Conn, key: &str) -> Result<Option<Family>> {
    let kind: String = conn.query(redis::cmd("TYPE").arg(key))?;
    if kind == "hash" {
        return Ok(None);
    }
    if kind == "none" {
        return Err(Error::new(format!("no key {key}")));
    }
    [Family::Bf, Family::Cf, Family::Cbf, Family::Sf]
        .into_iter()
        .find(|f| f.type_names().contains(&kind.as_str()))
        .map(Some)
        .ok_or_else(|| {
            Error::new(format!(
                "{key} is a key of type {kind}, not a bf, cf, cbf or static filter nor a sharded filter"
            ))
        })
}

/// Why a static filter has no [`FilterSpec`]: it is never reserved.
pub const SF_NOT_RESERVED: &str =
    "a static filter is built whole from its items (redbloom load --type static), never reserved: sharded filters are bf, cf or cbf";

/// How a filter is created: BF.RESERVE / CF.RESERVE / CBF.RESERVE arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterSpec {
    pub family: Family,
    pub error_rate: f64,
    pub capacity: u64,
    /// `None`: the server's default.
    pub expansion: Option<u32>,
    pub nonscaling: bool,
    pub blocked: bool,
}

impl FilterSpec {
    pub fn validate(&self) -> Result<()> {
        if self.family == Family::Sf {
            return Err(Error::usage(SF_NOT_RESERVED));
        }
        if !(self.error_rate > 0.0 && self.error_rate < 1.0) {
            return Err(Error::usage(
                "--error-rate must be between 0 and 1 (exclusive)",
            ));
        }
        if self.capacity == 0 {
            return Err(Error::usage("--capacity must be at least 1"));
        }
        if self.nonscaling && self.expansion.is_some() {
            return Err(Error::usage(
                "--expansion and --nonscaling exclude each other",
            ));
        }
        if self.blocked && self.family != Family::Bf {
            return Err(Error::usage("--blocked applies to bf filters only"));
        }
        if self.family == Family::Cf && self.nonscaling {
            return Err(Error::usage(
                "--nonscaling applies to bf and cbf filters only",
            ));
        }
        Ok(())
    }

    /// The RESERVE command for `key` with `capacity` (a member's share, or the whole).
    pub fn reserve(&self, key: &str, capacity: u64) -> redis::Cmd {
        let mut cmd = self.family.command("RESERVE");
        cmd.arg(key);
        if self.family != Family::Cf {
            cmd.arg(self.error_rate.to_string());
        }
        cmd.arg(capacity);
        if let Some(x) = self.expansion {
            cmd.arg("EXPANSION").arg(x);
        }
        if self.nonscaling {
            cmd.arg("NONSCALING");
        }
        if self.blocked {
            cmd.arg("BLOCKED");
        }
        cmd
    }

    /// A command adding `items` to an existing `key` (never creating it): one reply per item.
    pub fn insert<'a>(&self, key: &str, items: impl Iterator<Item = &'a [u8]>) -> redis::Cmd {
        let mut cmd = self.family.command("INSERT");
        cmd.arg(key).arg("NOCREATE").arg("ITEMS");
        for item in items {
            cmd.arg(item);
        }
        cmd
    }
}

/// A command answering `items` of `key`: one 0/1 per item.
pub fn mexists<'a>(family: Family, key: &str, items: impl Iterator<Item = &'a [u8]>) -> redis::Cmd {
    let mut cmd = family.command("MEXISTS");
    cmd.arg(key);
    for item in items {
        cmd.arg(item);
    }
    cmd
}
