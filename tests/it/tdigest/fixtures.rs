//! core/tests/fixtures/redisbloom-2.4.20/tdigest.{rdb,manifest.json}, written by RedisBloom
//! 2.4.20 (RESP2 replies, the RDB file) and 2.6.28 (RESP3 replies) through
//! scripts/fixtures/redisbloom-tdigest.py: the RDB loads and every query answers byte for
//! byte as RedisBloom did (every double bit for bit); replaying the commands gives the
//! same replies and the same DUMP payloads; and with `REDISBLOOM_MODULE` set, RedisBloom
//! loads the RDB redbloom writes and answers identically (td:single included: RedisBloom
//! reads its lone unmerged node as a zero node, docs/differences.md, which none of these
//! queries sees).

use crate::support::golden::{rdb_loads_and_answers, redisbloom_loads_ours, replay_gives_the_same};

#[test]
fn a_redisbloom_rdb_loads_and_answers_identically() {
    rdb_loads_and_answers("tdigest");
}

#[test]
fn replaying_the_commands_gives_the_same_replies_and_bytes() {
    replay_gives_the_same("tdigest");
}

#[test]
fn redisbloom_loads_the_rdb_redbloom_writes() {
    redisbloom_loads_ours(
        "tdigest",
        "tdigest redisbloom_loads_the_rdb_redbloom_writes",
    );
}
