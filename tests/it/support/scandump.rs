//! SCANDUMP and LOADCHUNK of any family, whole.

use super::resp::{RawConnection, Reply};

/// Every reply of a full SCANDUMP: (iterator returned, data), terminator included.
pub fn scandump(conn: &mut RawConnection, command: &str, key: &str) -> Vec<(i64, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut iter = 0i64;
    loop {
        let reply = conn.call(&[
            command.as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
        ]);
        let parts = reply.array();
        let next = parts[0].int();
        let data = match &parts[1] {
            Reply::Bulk(b) => b.clone(),
            other => panic!("unexpected SCANDUMP data {other:?}"),
        };
        out.push((next, data));
        if next == 0 {
            return out;
        }
        iter = next;
    }
}

/// Replays a SCANDUMP (all but the terminator) with LOADCHUNK into `key`.
pub fn loadchunks(
    conn: &mut RawConnection,
    command: &str,
    key: &str,
    dump: &[(i64, Option<Vec<u8>>)],
) {
    for (iter, data) in dump.iter().filter(|(iter, _)| *iter != 0) {
        let reply = conn.call(&[
            command.as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            data.as_deref().unwrap_or_default(),
        ]);
        assert_eq!(reply, Reply::Simple("OK".into()), "{command} {key} {iter}");
    }
}
