//! The cross-load fuzz's recorded seeds (issue 32): streams scripts/cross-load-fuzz.py
//! ran side by side in RedisBloom 2.4.20 and redbloom (BLOCKED, CBF, WBF, XF and CMSCELL, the
//! CMS with cell sizes, in redbloom alone), random writes with extreme values (±DBL_MAX, sums that
//! overflow to NaN, t-digest weights past 2^53 and 2^63 by self-merges, CMS counters at
//! 2^32 and counts past 2^63, empty and large items), with DEBUG RELOAD and DUMP + DEL +
//! RESTORE round trips inside the stream and, at checkpoints, each key's payload from
//! both sides RESTOREd under another name and read back — recorded as the reference side
//! answered (core/tests/fixtures/redisbloom-2.4.20/crossload-<family>.commands.json,
//! `--seed 7 --commands 300 --small --checkpoint 60`). Replayed here, every reply is the
//! reference's, DUMP payloads byte for byte (but TopK's, whose heap records differ by
//! design), so RedisBloom's payloads RESTORE and answer identically.

use crate::support::golden::sequence_on_a_fresh_server;

fn replay(family: &str) {
    sequence_on_a_fresh_server(&format!("crossload-{family}.commands.json"), "resp");
}

#[test]
fn bf_seed_replays_as_redisbloom_answered() {
    replay("bf");
}

#[test]
fn blocked_seed_replays_as_recorded() {
    replay("blocked");
}

#[test]
fn cf_seed_replays_as_redisbloom_answered() {
    replay("cf");
}

#[test]
fn cbf_seed_replays_as_recorded() {
    replay("cbf");
}

#[test]
fn wbf_seed_replays_as_recorded() {
    replay("wbf");
}

#[test]
fn cms_seed_replays_as_redisbloom_answered() {
    replay("cms");
}

#[test]
fn topk_seed_replays_as_redisbloom_answered() {
    replay("topk");
}

#[test]
fn tdigest_seed_replays_as_redisbloom_answered() {
    replay("tdigest");
}

/// CMSCELL: the Count-Min Sketch with RedisBloom 8.12's cell sizes, redbloom alone (no
/// RedisBloom 8.12 here to record).
#[test]
fn cms_cell_size_seed_replays_as_recorded() {
    replay("cmscell");
}

/// XF, the expandable filter, redbloom alone (its own type: RedisBloom has none).
#[test]
fn xf_seed_replays_as_recorded() {
    replay("xf");
}
