//! The filter families a client builds, loads and shards, and how each is reserved.

use super::{LogicError, Result};
use crate::fmt::shortest;
use crate::limits::{XF_MAX_CAPACITY, XF_MIN_ERROR_RATE};

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
    /// Expandable filter (XF.*, redbloom's own): grows from any start, so `load` creates it
    /// with its error rate and initial capacity (never a sharded filter's members).
    Xf,
}

/// Every family, in the order errors list them.
pub const FAMILIES: [Family; 5] = [Family::Bf, Family::Cf, Family::Cbf, Family::Sf, Family::Xf];

impl Family {
    pub fn parse(name: &str) -> Result<Family> {
        match name.to_ascii_lowercase().as_str() {
            "bf" => Ok(Family::Bf),
            "cf" => Ok(Family::Cf),
            "cbf" => Ok(Family::Cbf),
            "static" => Ok(Family::Sf),
            "xf" => Ok(Family::Xf),
            other => Err(LogicError::usage(format!(
                "unknown filter type '{other}' (expected bf, cf, cbf, static or xf)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Bf => "bf",
            Family::Cf => "cf",
            Family::Cbf => "cbf",
            Family::Sf => "static",
            Family::Xf => "xf",
        }
    }

    /// The command prefix: `BF`, `CF`, `CBF`, `SF`, `XF`.
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Bf => "BF",
            Family::Cf => "CF",
            Family::Cbf => "CBF",
            Family::Sf => "SF",
            Family::Xf => "XF",
        }
    }

    /// The names `TYPE` replies for a key of this family.
    pub const fn type_names(self) -> &'static [&'static str] {
        match self {
            Family::Bf => &["MBbloom--", "RBblockBF"],
            Family::Cf => &["MBbloomCF"],
            Family::Cbf => &["RBcountBF"],
            Family::Sf => &["RBstaticF"],
            Family::Xf => &["RBexpandF"],
        }
    }

    /// The family whose keys `TYPE` names `kind`.
    pub fn of_type(kind: &str) -> Option<Family> {
        FAMILIES
            .into_iter()
            .find(|f| f.type_names().contains(&kind))
    }

    /// The command `<PREFIX>.<verb>`.
    pub fn command(self, verb: &str) -> String {
        format!("{}.{verb}", self.prefix())
    }
}

/// Why a static filter has no [`FilterSpec`]: it is never reserved.
pub const SF_NOT_RESERVED: &str =
    "a static filter is built whole from its items (redbloom load --type static), never reserved: sharded filters are bf, cf or cbf";

/// Why an expandable filter is not a sharded filter's member: it grows by itself.
pub const XF_NOT_SHARDED: &str =
    "an expandable filter grows by itself (redbloom load --type xf): sharded filters are bf, cf or cbf";

/// A command as its words: the name first, then the arguments.
pub type Words = Vec<Vec<u8>>;

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
            return Err(LogicError::usage(SF_NOT_RESERVED));
        }
        if self.family == Family::Xf {
            if self.expansion.is_some() || self.nonscaling || self.blocked {
                return Err(LogicError::usage(
                    "--expansion, --nonscaling and --blocked do not apply to xf filters (they grow by themselves)",
                ));
            }
            if !(XF_MIN_ERROR_RATE..1.0).contains(&self.error_rate) {
                return Err(LogicError::usage(
                    "--error-rate must be at least 1e-9 and below 1 for xf filters",
                ));
            }
            if !(1..=XF_MAX_CAPACITY).contains(&self.capacity) {
                return Err(LogicError::usage(
                    "--capacity must be between 1 and 2^40 for xf filters",
                ));
            }
            return Ok(());
        }
        if !(self.error_rate > 0.0 && self.error_rate < 1.0) {
            return Err(LogicError::usage(
                "--error-rate must be between 0 and 1 (exclusive)",
            ));
        }
        if self.capacity == 0 {
            return Err(LogicError::usage("--capacity must be at least 1"));
        }
        if self.nonscaling && self.expansion.is_some() {
            return Err(LogicError::usage(
                "--expansion and --nonscaling exclude each other",
            ));
        }
        if self.blocked && self.family != Family::Bf {
            return Err(LogicError::usage("--blocked applies to bf filters only"));
        }
        if self.family == Family::Cf && self.nonscaling {
            return Err(LogicError::usage(
                "--nonscaling applies to bf and cbf filters only",
            ));
        }
        Ok(())
    }

    /// The RESERVE command for `key` with `capacity` (a member's share, or the whole).
    pub fn reserve(&self, key: &str, capacity: u64) -> Words {
        let mut words = vec![self.family.command("RESERVE").into_bytes(), key.into()];
        if self.family == Family::Xf {
            words.push(shortest(self.error_rate).into_bytes());
            words.push(b"CAPACITY".to_vec());
            words.push(capacity.to_string().into_bytes());
            return words;
        }
        if self.family != Family::Cf {
            words.push(self.error_rate.to_string().into_bytes());
        }
        words.push(capacity.to_string().into_bytes());
        if let Some(x) = self.expansion {
            words.push(b"EXPANSION".to_vec());
            words.push(x.to_string().into_bytes());
        }
        if self.nonscaling {
            words.push(b"NONSCALING".to_vec());
        }
        if self.blocked {
            words.push(b"BLOCKED".to_vec());
        }
        words
    }

    /// A command adding `items` to an existing `key` (never creating it): one reply per item.
    pub fn insert<'a>(&self, key: &str, items: impl Iterator<Item = &'a [u8]>) -> Words {
        let mut words = vec![
            self.family.command("INSERT").into_bytes(),
            key.into(),
            b"NOCREATE".to_vec(),
            b"ITEMS".to_vec(),
        ];
        words.extend(items.map(<[u8]>::to_vec));
        words
    }
}

/// A command answering `items` of `key`: one 0/1 per item.
pub fn mexists<'a>(family: Family, key: &str, items: impl Iterator<Item = &'a [u8]>) -> Words {
    let mut words = vec![family.command("MEXISTS").into_bytes(), key.into()];
    words.extend(items.map(<[u8]>::to_vec));
    words
}
