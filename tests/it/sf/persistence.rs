//! SF persistence and replication (the master's bytes everywhere), and damaged RESTORE
//! payloads and LOADCHUNK chunks refused without a trace.

use super::{build, mexists};
use crate::support::dump_payload::{
    decode, encode_value, learn_version, restore, seal, uncompressed_dumps, BAD_DATA_FORMAT, F,
};
use crate::support::replies::{err, ok};
use crate::support::{
    expect, redisbloom, rewrite_aof, scandump, start_replica, wait_for_replicas, RawConnection,
    Reply, Server,
};

/// A filter of items, one of a set's members, one loaded from a SCANDUMP.
fn build_filters(conn: &mut RawConnection) {
    assert_eq!(build(conn, "items", "0.01", "i", 5000), ok());
    let mut sadd = vec!["SADD".to_string(), "set".to_string()];
    sadd.extend((0..3000).map(|i| format!("m{i}")));
    conn.call(&sadd);
    expect(conn, "SF.BUILD fromset 0.0001 FROM set", ok());
    let dump = scandump(conn, "SF.SCANDUMP", "items");
    crate::support::loadchunks(conn, "SF.LOADCHUNK", "loaded", &dump);
}

const KEYS: [&str; 3] = ["items", "fromset", "loaded"];

fn dumps(conn: &mut RawConnection) -> Vec<Reply> {
    KEYS.iter()
        .flat_map(|k| {
            [
                conn.call(&["DUMP", k]),
                conn.call(&["DEBUG", "DIGEST-VALUE", k]),
                conn.call(&["SF.INFO", k]),
            ]
        })
        .collect()
}

fn all_found(conn: &mut RawConnection) {
    assert_eq!(mexists(conn, "items", "i", 5000), vec![1; 5000]);
    assert_eq!(mexists(conn, "loaded", "i", 5000), vec![1; 5000]);
    assert_eq!(mexists(conn, "fromset", "m", 3000), vec![1; 3000]);
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
    assert!(text.contains("SF.BUILD"), "ITEMS builds go as they came");
    assert_eq!(
        text.matches("SF.LOADCHUNK").count(),
        4,
        "FROM goes as its filter's LOADCHUNK sequence (header, chunk), as LOADCHUNK does"
    );
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn), before, "AOF replay");
    rewrite_aof(&mut conn);
    drop(conn);
    server.restart(&[]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn), before, "AOF rewrite + restart");
    expect(&mut conn, "DEBUG RELOAD", ok());
    assert_eq!(dumps(&mut conn), before, "DEBUG RELOAD");
    expect(&mut conn, "CONFIG SET appendonly no", ok());
    expect(&mut conn, "SAVE", ok());
    drop(conn);
    server.restart(&["--appendonly", "no"]);
    let mut conn = server.raw();
    assert_eq!(dumps(&mut conn), before, "SAVE + restart");
    all_found(&mut conn);
}

#[test]
fn replicas_hold_the_master_bytes() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    build_filters(&mut m);
    // The source changes right after the build: the replica's copy is still the build's.
    expect(&mut m, "DEL set", Reply::Int(1));
    wait_for_replicas(&mut m, 1);
    assert_eq!(dumps(&mut r), dumps(&mut m));
    all_found(&mut r);
    assert!(crate::support::call(&mut r, "SF.BUILD x 0.01 ITEMS a")
        .error()
        .starts_with("READONLY"));
    // A full sync (the replica restarted from the master's RDB) too.
    drop(r);
    let replica2 = start_replica(&master);
    wait_for_replicas(&mut m, 2);
    let mut r2 = replica2.raw();
    assert_eq!(dumps(&mut r2), dumps(&mut m));
}

#[test]
fn damaged_restore_payloads_are_refused() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    assert_eq!(build(&mut conn, "s", "0.01", "i", 2000), ok());
    let payload = conn.call(&["DUMP", "s"]).bytes();
    learn_version(&payload);
    let (id, fields) = decode(&payload);
    // Encoding 3's tag, seed, items, bits, rate, blocks, lower blocks, bumped keys,
    // pending, checksum, its check, the data.
    assert_eq!(fields.len(), 12);
    // Genuine: accepted.
    assert_eq!(
        restore(&mut conn, "copy", &seal(&encode_value(id, &fields))),
        ok()
    );
    let mut forged: Vec<(String, Vec<F>)> = Vec::new();
    for i in 0..fields.len() {
        let mut f = fields.clone();
        match &mut f[i] {
            F::U(v) => *v ^= 1,
            F::D(v) => *v *= 1.5,
            F::S(s) => s[100] ^= 0x20,
        }
        forged.push((format!("field {i} changed"), f));
    }
    let mut short = fields.clone();
    short.pop();
    forged.push(("no data".into(), short));
    let mut cut = fields.clone();
    if let F::S(s) = &mut cut[11] {
        s.truncate(s.len() - 8);
    }
    forged.push(("data cut by a word".into(), cut));
    let mut huge = fields.clone();
    huge[5] = F::U(1 << 40);
    forged.push(("2^40 blocks".into(), huge));
    for (what, f) in &forged {
        let reply = restore(&mut conn, "forged", &seal(&encode_value(id, f)));
        assert_eq!(reply, Reply::Error(BAD_DATA_FORMAT.into()), "{what}");
        expect(&mut conn, "EXISTS forged", Reply::Int(0));
    }
    // Encoding 4 is unknown, and encoding 2 has no tag 3.
    for encoding in [4, 2] {
        let other_encoding = (id & !0x3ff) | encoding;
        let reply = restore(
            &mut conn,
            "forged",
            &seal(&encode_value(other_encoding, &fields)),
        );
        assert!(
            matches!(reply, Reply::Error(_)),
            "encoding {encoding}: {reply:?}"
        );
    }
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}

#[test]
fn damaged_chunks_are_refused_and_leave_nothing_usable() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(build(&mut conn, "s", "0.01", "i", 2000), ok());
    let dump = scandump(&mut conn, "SF.SCANDUMP", "s");
    let header = dump[0].1.clone().unwrap();
    let (iter, chunk) = (dump[1].0, dump[1].1.clone().unwrap());
    let load = |conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]| {
        conn.call(&[
            b"SF.LOADCHUNK".as_slice(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            data,
        ])
    };
    // A damaged header byte (magic, bits, error rate, segment length) is refused outright;
    // damage the header cannot see (seed, counts, checksum) fails the completing chunk.
    for at in [0usize, 20, 31, 32] {
        let mut h = header.clone();
        h[at] ^= 0x40;
        assert_eq!(
            load(&mut conn, "h", 1, &h),
            err("ERR received bad data"),
            "{at}"
        );
        expect(&mut conn, "EXISTS h", Reply::Int(0));
    }
    assert_eq!(load(&mut conn, "t", 1, &header), ok());
    let mut bad = chunk.clone();
    bad[chunk.len() / 2] ^= 1;
    assert_eq!(
        load(&mut conn, "t", iter, &bad),
        err("ERR received bad data")
    );
    assert_eq!(
        load(&mut conn, "t", iter + 8, &chunk),
        err("ERR invalid offset - no link found")
    );
    let mut long = chunk.clone();
    long.extend_from_slice(&[0; 8]);
    assert_eq!(
        load(&mut conn, "t", iter + 8, &long),
        err("ERR invalid chunk - Too big for current filter")
    );
    expect(
        &mut conn,
        "SF.EXISTS t i1",
        err("ERR the filter is incomplete: SF.LOADCHUNK has not loaded all of it"),
    );
    // The genuine chunk still completes it.
    assert_eq!(load(&mut conn, "t", iter, &chunk), ok());
    assert_eq!(conn.call(&["DUMP", "t"]), conn.call(&["DUMP", "s"]));
}

#[test]
fn redisbloom_refuses_static_filters() {
    let Some(module) = redisbloom("redisbloom_refuses_static_filters") else {
        return;
    };
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(build(&mut conn, "s", "0.01", "i", 100), ok());
    let payload = conn.call(&["DUMP", "s"]).bytes();
    let reference = Server::start_with_module(&module, &[]);
    let mut rb = reference.raw();
    assert_eq!(restore(&mut rb, "s", &payload), err("ERR Bad data format"));
}
