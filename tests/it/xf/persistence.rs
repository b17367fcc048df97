//! XF persistence and replication: the master's bytes after DEBUG RELOAD, restarts, AOF
//! replay and rewrite, on replicas (whatever their ceiling) and in the AOF (creation with
//! explicit parameters, then the items); every added item still found (no false negative);
//! damaged RESTORE payloads refused without a trace.

use super::{items, madd, mexists};
use crate::support::dump_payload::{
    decode, encode_value, learn_version, restore, seal, uncompressed_dumps, BAD_DATA_FORMAT, F,
};
use crate::support::replies::{err, int, ok};
use crate::support::{
    expect, rewrite_aof, scandump, start_replica, wait_for_replicas, RawConnection, Reply, Rng,
    Server,
};

const KEYS: [&str; 4] = ["auto", "reserved", "loaded", "partial"];

/// A filter created by XF.ADD, one reserved and then grown with deletes, one loaded from
/// a SCANDUMP and one partly loaded.
fn build_filters(conn: &mut RawConnection) {
    expect(conn, "XF.ADD auto a0", int(1));
    madd(conn, "auto", &items("a", 1..20_000));
    expect(conn, "XF.RESERVE reserved 0.001 CAPACITY 100", ok());
    madd(conn, "reserved", &items("r", 0..30_000));
    for i in (0..30_000).step_by(3) {
        assert_eq!(conn.call(&["XF.DEL", "reserved", &format!("r{i}")]), int(1));
    }
    let dump = scandump(conn, "XF.SCANDUMP", "auto");
    crate::support::loadchunks(conn, "XF.LOADCHUNK", "loaded", &dump);
    crate::support::loadchunks(conn, "XF.LOADCHUNK", "partial", &dump[..2]);
}

/// Asserts two [`dumps`] equal, naming the first key and reply that differ.
fn same(after: &[Reply], before: &[Reply], what: &str) {
    assert_eq!(after.len(), before.len(), "{what}");
    for (i, (a, b)) in after.iter().zip(before).enumerate() {
        let reply = ["DUMP", "DIGEST-VALUE", "XF.INFO"][i % 3];
        let shown = |r: &Reply| format!("{r:?}").chars().take(300).collect::<String>();
        assert!(
            a == b,
            "{what}: {reply} {}: {} != {}",
            KEYS[i / 3],
            shown(a),
            shown(b)
        );
    }
}

/// Per key: DUMP, DIGEST-VALUE and XF.INFO but for its size (a loaded filter's
/// partitions are allocated to the byte, a grown one's in steps: the same bytes, less
/// memory).
fn dumps(conn: &mut RawConnection) -> Vec<Reply> {
    KEYS.iter()
        .flat_map(|k| {
            let info = match conn.call(&["XF.INFO", k]) {
                Reply::Array(Some(fields)) => Reply::Array(Some(
                    fields
                        .chunks(2)
                        .filter(|f| !matches!(&f[0], Reply::Simple(l) if l == "Size" || l == "Bits per item"))
                        .flatten()
                        .cloned()
                        .collect(),
                )),
                other => other,
            };
            [
                conn.call(&["DUMP", k]),
                conn.call(&["DEBUG", "DIGEST-VALUE", k]),
                info,
            ]
        })
        .collect()
}

/// Every added item is found, in every complete filter.
fn all_found(conn: &mut RawConnection) {
    let auto = items("a", 0..20_000);
    assert_eq!(mexists(conn, "auto", &auto), vec![1; auto.len()]);
    assert_eq!(mexists(conn, "loaded", &auto), vec![1; auto.len()]);
    let kept: Vec<String> = (0..30_000)
        .filter(|i| i % 3 != 0)
        .map(|i| format!("r{i}"))
        .collect();
    assert_eq!(mexists(conn, "reserved", &kept), vec![1; kept.len()]);
}

#[test]
fn reload_restart_aof_replay_and_rewrite_keep_the_bytes() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    build_filters(&mut conn);
    let before = dumps(&mut conn);
    let aof: Vec<u8> = std::fs::read_dir(server.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    let text = String::from_utf8_lossy(&aof);
    // The creation by XF.ADD goes with both parameters explicit, then the item; commands
    // that created nothing and applied every item go as they came.
    let created = "XF.RESERVE\r\n$4\r\nauto\r\n$4\r\n0.01\r\n$8\r\nCAPACITY\r\n";
    assert!(text.contains(created), "{}", &text[..400.min(text.len())]);
    assert!(text.contains("XF.MADD\r\n$4\r\nauto\r\n$2\r\na0\r\n"));
    assert_eq!(text.matches("XF.DEL").count(), 10_000);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    same(&dumps(&mut conn), &before, "AOF replay");
    rewrite_aof(&mut conn);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    same(&dumps(&mut conn), &before, "AOF rewrite + restart");
    expect(&mut conn, "DEBUG RELOAD", ok());
    same(&dumps(&mut conn), &before, "DEBUG RELOAD");
    expect(&mut conn, "CONFIG SET appendonly no", ok());
    expect(&mut conn, "SAVE", ok());
    drop(conn);
    server.restart(&["--appendonly", "no"]);
    let mut conn = server.raw();
    same(&dumps(&mut conn), &before, "SAVE + restart");
    all_found(&mut conn);
}

#[test]
fn replicas_hold_the_master_bytes_whatever_their_ceiling() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    // The replica's own ceiling does not apply to what its master accepted.
    expect(&mut r, "CONFIG SET bf.max-filter-bytes 1048576", ok());
    build_filters(&mut m);
    let big = items("b", 0..200_000);
    madd(&mut m, "big", &big);
    wait_for_replicas(&mut m, 1);
    same(&dumps(&mut r), &dumps(&mut m), "replica");
    assert_eq!(r.call(&["DUMP", "big"]), m.call(&["DUMP", "big"]));
    all_found(&mut r);
    assert!(crate::support::call(&mut r, "XF.ADD x a")
        .error()
        .starts_with("READONLY"));
    // A full sync (a new replica loads the master's RDB) too.
    drop(r);
    let replica2 = start_replica(&master);
    wait_for_replicas(&mut m, 2);
    let mut r2 = replica2.raw();
    same(&dumps(&mut r2), &dumps(&mut m), "full sync");
}

#[test]
fn damaged_restore_payloads_are_refused() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    // Enough items for two chunks (of at most 1 MiB).
    madd(&mut conn, "x", &items("i", 0..700_000));
    let payload = conn.call(&["DUMP", "x"]).bytes();
    learn_version(&payload);
    let (id, fields) = decode(&payload);
    // The header, the chunk count, the chunks.
    assert!(fields.len() >= 4, "{}", fields.len());
    assert_eq!(fields[1], F::U(fields.len() as u64 - 2));
    assert_eq!(
        restore(&mut conn, "copy", &seal(&encode_value(id, &fields))),
        ok()
    );
    let refused = |conn: &mut RawConnection, what: &str, f: &[F]| {
        let reply = restore(conn, "forged", &seal(&encode_value(id, f)));
        assert_eq!(reply, err(BAD_DATA_FORMAT), "{what}");
        crate::support::dump_payload::alive_without(conn, "forged", what);
    };
    let with = |i: usize, field: F| {
        let mut f = fields.clone();
        f[i] = field;
        f
    };
    let bytes = |i: usize| match &fields[i] {
        F::S(b) => b.clone(),
        other => panic!("{other:?}"),
    };
    refused(&mut conn, "no chunk count", &fields[..1]);
    refused(&mut conn, "a chunk missing", &fields[..fields.len() - 1]);
    refused(&mut conn, "2^40 chunks", &with(1, F::U(1 << 40)));
    refused(&mut conn, "empty header", &with(0, F::S(Vec::new())));
    let header = bytes(0);
    // Its structural fields: magic, levels, split pointer, entries, data bytes, the
    // histogram's first and last counters (the error rate and item count are not
    // checkable: damage there is a filter that still finds every item, as below).
    for at in [0, 20, 24, 28, 44, 52, 60, header.len() - 1] {
        let mut h = header.clone();
        h[at] ^= 0x04;
        refused(&mut conn, &format!("header byte {at}"), &with(0, F::S(h)));
    }
    let chunk = bytes(2);
    for cut in [0, 8, 12, chunk.len() / 2, chunk.len() - 1] {
        refused(
            &mut conn,
            &format!("first chunk cut to {cut}"),
            &with(2, F::S(chunk[..cut].to_vec())),
        );
    }
    let mut long = chunk.clone();
    long.extend_from_slice(&[0; 8]);
    refused(&mut conn, "8 bytes more", &with(2, F::S(long)));
    let mut swapped = fields.clone();
    swapped.swap(2, 3);
    refused(&mut conn, "chunks swapped", &swapped);
    // Random damage anywhere: refused (never a crash, a hang or a filter that misses).
    let mut rng = Rng(47);
    for round in 0..100 {
        let i = if rng.below(4) == 0 { 0 } else { 2 };
        let mut damaged = bytes(i);
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(damaged.len() as u64) as usize;
            damaged[at] ^= 1 << rng.below(8);
        }
        let reply = restore(
            &mut conn,
            "forged",
            &seal(&encode_value(id, &with(i, F::S(damaged)))),
        );
        if reply == ok() {
            // Damage the checks cannot see (the header's error rate, say) still makes a
            // filter that finds every item.
            let found = mexists(&mut conn, "forged", &items("i", 0..1000));
            assert_eq!(found, vec![1; 1000], "round {round}");
            expect(&mut conn, "DEL forged", int(1));
        } else {
            assert_eq!(reply, err(BAD_DATA_FORMAT), "round {round}");
        }
    }
    let other_encoding = (id & !0x3ff) | 2;
    let reply = restore(
        &mut conn,
        "forged",
        &seal(&encode_value(other_encoding, &fields)),
    );
    assert!(matches!(reply, Reply::Error(_)), "encoding 2: {reply:?}");
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}
