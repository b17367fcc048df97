//! BF.MERGE, CBF.MERGE and CF.MERGE (issue 35): unions and intersections of filters
//! built apart, their errors (each leaves the destination byte-identical), RESP2 and RESP3
//! replies, keyspace events, and a replica and an AOF replay ending with the master's
//! bytes. CROSSSLOT is in `cluster.rs`.

mod bf;
mod cbf;
mod cf;
mod positions;
mod replication;

use crate::support::{RawConnection, Reply};

/// Adds `items` with `command` (`BF.MADD`, `CBF.MADD`, `CF.INSERT … ITEMS`) in batches.
pub fn add_all(conn: &mut RawConnection, prefix: &[&str], items: &[String]) {
    for batch in items.chunks(1000) {
        let mut args: Vec<&str> = prefix.to_vec();
        args.extend(batch.iter().map(String::as_str));
        let reply = conn.call(&args);
        assert!(!matches!(reply, Reply::Error(_)), "{prefix:?}: {reply:?}");
    }
}

/// Answers of `command key items…` (BF.MEXISTS, CF.MEXISTS), in batches.
pub fn answers(conn: &mut RawConnection, command: &str, key: &str, items: &[String]) -> Vec<i64> {
    let mut out = Vec::new();
    for batch in items.chunks(1000) {
        let mut args = vec![command, key];
        args.extend(batch.iter().map(String::as_str));
        out.extend(conn.call(&args).ints());
    }
    out
}

pub fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// Runs each refused command and checks its error and that `dest` is byte-identical
/// (DUMP, or still absent) afterwards.
pub fn refused_without_change(conn: &mut RawConnection, dest: &str, cases: &[(Vec<&str>, &str)]) {
    for (command, error) in cases {
        let before = conn.call(&["DUMP", dest]);
        assert_eq!(conn.call(command), Reply::err(error), "{command:?}");
        assert_eq!(
            conn.call(&["DUMP", dest]),
            before,
            "{command:?} changed {dest}"
        );
    }
}
