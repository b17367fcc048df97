//! Active defragmentation of expandable filters: with `activedefrag yes` and a heap
//! fragmented by many small XF values (15 in 16 deleted), the server moves them
//! (`bf_defrag_moved` rises; only XF values are in the keyspace, so every move is of an
//! expandable filter's value, directory or partition), and every filter left answers,
//! dumps and digests as before. Only a server with jemalloc's defragmentation can: Redis
//! 8.2.3 here (the test ends early elsewhere, as the other families' defrag tests do).

use super::{items, mexists};
use crate::support::{call, can_defragment, info_field, wait_until, RawConnection, Reply, Server};

fn digest(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    conn.call(&["DEBUG", "DIGEST-VALUE", key]).array()[0].bytes()
}

fn moved(conn: &mut RawConnection) -> i64 {
    info_field(conn, "bf", "bf_defrag_moved").parse().unwrap()
}

/// Items of filter `i`: 3 to 300 of them, so partitions of several sizes (and splits).
fn items_of(i: usize) -> usize {
    3 + (i * 37) % 298
}

#[test]
fn active_defrag_moves_expandable_filters_and_they_still_answer() {
    let server = Server::start();
    let mut conn = server.raw();
    if !can_defragment(&mut conn) {
        return;
    }
    const KEYS: usize = 16_000;
    let adds: Vec<Vec<String>> = (0..KEYS)
        .map(|i| {
            let mut cmd = vec!["XF.MADD".to_string(), format!("k{i}")];
            cmd.extend(items(&format!("k{i}:"), 0..items_of(i)));
            cmd
        })
        .collect();
    for batch in adds.chunks(500) {
        assert!(conn
            .pipeline(batch)
            .iter()
            .all(|r| matches!(r, Reply::Array(Some(_)))));
    }
    let doomed: Vec<Vec<String>> = (0..KEYS)
        .filter(|i| i % 16 != 0)
        .map(|i| vec!["DEL".to_string(), format!("k{i}")])
        .collect();
    for batch in doomed.chunks(1000) {
        conn.pipeline(batch);
    }
    let kept: Vec<usize> = (0..KEYS).filter(|i| i % 16 == 0).collect();
    let before: Vec<(Vec<u8>, Reply)> = kept
        .iter()
        .map(|i| {
            let key = format!("k{i}");
            (digest(&mut conn, &key), conn.call(&["DUMP", &key]))
        })
        .collect();
    assert_eq!(moved(&mut conn), 0);
    crate::support::start_active_defrag(&mut conn);
    wait_until("the expandable filters moved", || moved(&mut conn) > 0);
    assert_eq!(call(&mut conn, "CONFIG SET activedefrag no"), Reply::ok());
    for (i, (digest_before, dump_before)) in kept.iter().zip(&before) {
        let key = format!("k{i}");
        assert_eq!(&digest(&mut conn, &key), digest_before, "{key}");
        assert_eq!(&conn.call(&["DUMP", &key]), dump_before, "{key}");
        let added = items(&format!("k{i}:"), 0..items_of(*i));
        assert_eq!(
            mexists(&mut conn, &key, &added),
            vec![1; added.len()],
            "{key}"
        );
    }
    let left = info_field(&mut conn, "bf", "bf_xf_filters");
    assert_eq!(left, kept.len().to_string());
}
