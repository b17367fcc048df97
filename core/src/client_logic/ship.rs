//! The names and server-side scripts of an all-or-nothing ship, shared by every client: a
//! filter is written with LOADCHUNK under a temporary key in its target's hash slot
//! ([`temp_key`]) and renamed into place only once complete, by [`SWAP`], which checks on the
//! server, atomically, that the node is still the one the ship began on ([`RUN_ID`]) and
//! that the target is still absent (or still an empty filter). The I/O loop around them is
//! each client's (the CLI's `redbloom_client::ship`, the Python package's `push`).

use super::slot::{hashed_part, key_slot};

/// What a temporary key's name adds to its target's.
pub const TEMP_SUFFIX: &str = ":redbloom-load";
/// The node's identity: its `run_id` (new at every start of the server process).
pub const RUN_ID: &str = "return string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')";

/// KEYS: temp, target. ARGV: the run_id the ship began on; '' (the target must be absent)
/// or the INFO command of the family (the target must be an empty filter); 'check' (only
/// the checks) or 'swap'.
/// Replies 1 (renamed), 0 (target exists / holds items), -1 (another node or process),
/// -2 (no temp key), -3 (target missing).
pub const SWAP: &str = r"
if string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') ~= ARGV[1] then return -1 end
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if ARGV[2] == '' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
else
  if redis.call('EXISTS', KEYS[2]) == 0 then return -3 end
  local info = redis.call(ARGV[2], KEYS[2])
  for i = 1, #info - 1, 2 do
    -- Field names come as status replies (tables {ok = name}) or bulk strings.
    local name = info[i]
    if type(name) == 'table' then name = name['ok'] end
    if name == 'Number of items inserted' and info[i + 1] ~= 0 then return 0 end
  end
end
if ARGV[3] == 'check' then return 1 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
";

/// The temporary key a load of `key` builds under: in `key`'s hash slot, so RENAME works on
/// a cluster, and the same for every run, so a run replaces what an interrupted one left:
/// `key` + [`TEMP_SUFFIX`] when `key` has a hash tag (`{user}:seen` → `{user}:seen:redbloom-load`),
/// `{key}` + the suffix otherwise (`seen` → `{seen}:redbloom-load`), or, for a key whose
/// braces would change the slot, a tag searched for the same slot
/// (`{redbloom-load.<n>}:key`).
pub fn temp_key(key: &str) -> String {
    let slot = key_slot(key.as_bytes());
    let tagged = hashed_part(key.as_bytes()).len() < key.len();
    let candidate = if tagged {
        format!("{key}{TEMP_SUFFIX}")
    } else {
        format!("{{{key}}}{TEMP_SUFFIX}")
    };
    if key_slot(candidate.as_bytes()) == slot && !key.is_empty() {
        return candidate;
    }
    (0u64..)
        .map(|n| format!("{{redbloom-load.{n}}}:{key}"))
        .find(|k| key_slot(k.as_bytes()) == slot)
        .expect("every slot is reached")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_keys_share_the_target_slot() {
        assert_eq!(temp_key("seen"), "{seen}:redbloom-load");
        assert_eq!(temp_key("{user}:seen"), "{user}:seen:redbloom-load");
        assert_eq!(temp_key("{s0.10}:users"), "{s0.10}:users:redbloom-load");
        for key in [
            "seen",
            "{user}:seen",
            "a}b",
            "{}x",
            "x{y",
            "",
            "{a{b}c",
            "}{",
            "🦀",
        ] {
            let temp = temp_key(key);
            assert_eq!(
                key_slot(temp.as_bytes()),
                key_slot(key.as_bytes()),
                "{key} → {temp}"
            );
            assert_ne!(temp, key);
        }
        assert!(temp_key("a}b").starts_with("{redbloom-load."));
    }
}
