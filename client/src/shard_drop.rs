//! Dropping a sharded filter, also a damaged one: the members that exist are deleted and
//! those missing (or of another type, which are left alone) reported; with `force`, member
//! keys left without a descriptor (or beside it) are found on every master and deleted too.

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::family::{key_family, Family};
use crate::shard::Descriptor;

/// What a drop did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Member keys deleted.
    pub deleted: Vec<String>,
    /// Members the descriptor names that did not exist.
    pub missing: Vec<String>,
    /// Keys at member names that are no filter of the family, left as they are: (key, type).
    pub kept: Vec<(String, String)>,
    /// Whether the descriptor was deleted (absent: there was none).
    pub descriptor: bool,
}

/// `{s<i>.<c>}:name` (a member key of `name` for some i, c)?
fn is_member_key(key: &str, name: &str) -> bool {
    let Some(rest) = key.strip_prefix("{s") else {
        return false;
    };
    let Some((tag, tail)) = rest.split_once('}') else {
        return false;
    };
    let Some((i, c)) = tag.split_once('.') else {
        return false;
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(i) && digits(c) && tail.strip_prefix(':') == Some(name)
}

/// `name` with SCAN MATCH's special characters escaped.
fn glob_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in name.chars() {
        if matches!(ch, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Drops the sharded filter `name`: every member that exists as a filter of its family is
/// deleted, then the descriptor; missing members and keys of another type at member names
/// are reported (the latter left alone). With `force`, also every key of the form
/// `{s<i>.<c>}:name` that is a bf, cf or cbf filter found on the masters — members left
/// without a descriptor (then there need not be one).
pub fn drop_filter(conn: &mut Conn, name: &str, force: bool) -> Result<Dropped> {
    let exists = conn.query::<i64>(redis::cmd("EXISTS").arg(name))? != 0;
    let descriptor = match (exists, force) {
        (true, _) => Some(Descriptor::read(conn, name)?),
        (false, true) => None,
        (false, false) => {
            return Err(Error::new(format!(
                "no sharded filter {name} (no such key); `shard drop --force` removes members left without a descriptor"
            )))
        }
    };
    let mut out = Dropped::default();
    let mut candidates: Vec<(String, Option<Family>)> = Vec::new();
    if let Some(d) = &descriptor {
        for m in &d.members {
            candidates.push((m.clone(), Some(d.spec.family)));
        }
    }
    if force {
        let pattern = format!("{{s*}}:{}", glob_escape(name));
        for key in conn.scan_keys(&pattern)? {
            if is_member_key(&key, name) && !candidates.iter().any(|(k, _)| *k == key) {
                candidates.push((key, None));
            }
        }
    }
    for (key, family) in candidates {
        let kind: String = conn.query(redis::cmd("TYPE").arg(&key))?;
        if kind == "none" {
            out.missing.push(key);
            continue;
        }
        let is_filter = match family {
            Some(f) => f.type_names().contains(&kind.as_str()),
            None => matches!(key_family(conn, &key), Ok(Some(_))),
        };
        if !is_filter {
            out.kept.push((key, kind));
            continue;
        }
        conn.query::<i64>(redis::cmd("DEL").arg(&key))?;
        out.deleted.push(key);
    }
    if descriptor.is_some() {
        conn.query::<i64>(redis::cmd("DEL").arg(name))?;
        out.descriptor = true;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_keys_are_recognised() {
        assert!(is_member_key("{s0.10}:users", "users"));
        assert!(is_member_key("{s11.19}:a:b", "a:b"));
        assert!(!is_member_key("{s0.10}:users2", "users"));
        assert!(!is_member_key("{s0}:users", "users"));
        assert!(!is_member_key("{sx.1}:users", "users"));
        assert!(!is_member_key("{s0.1}users", "users"));
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }
}
