//! CF filters survive every way Redis persists and moves data: DEBUG RELOAD, SAVE and a
//! restart, an AOF rewrite (CF.LOADCHUNK, COMPAT §4.4) and a restart, the AOF of
//! CF.LOADCHUNK commands themselves, SCANDUMP/LOADCHUNK onto another server, and RESTORE
//! of forged DUMP payloads (COMPAT §4.3).

use crate::support::cf::{cf_counts, cf_mexists, cf_state, CfState};
use crate::support::{call, pipeline_expect, scandump, with_crc, RawConnection, Reply, Server};

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

fn numbers(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}

fn add_all(conn: &mut RawConnection, key: &str, items: &[String]) {
    let commands: Vec<Vec<String>> = items
        .iter()
        .map(|i| vec!["CF.ADD".to_string(), key.to_string(), i.clone()])
        .collect();
    pipeline_expect(conn, &commands, &Reply::Int(1));
}

/// One key of the sample data set and what it must look like afterwards.
struct Sample {
    key: &'static str,
    items: Vec<String>,
    state: Option<CfState>,
    counts: Vec<i64>,
}

/// Keys covering the interesting shapes: empty, single sub-filter, many sub-filters with
/// deletes recorded (numDeletes > 0), expansion 0 and 4, bucket size 1 and 255, and one
/// larger than a 16 MiB SCANDUMP piece.
fn build_samples(conn: &mut RawConnection, big: bool) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut make = |conn: &mut RawConnection,
                    key: &'static str,
                    reserve: &str,
                    items: Vec<String>,
                    deletes: &[String]| {
        assert_eq!(
            call(conn, &format!("CF.RESERVE {key} {reserve}")),
            ok(),
            "{key}"
        );
        add_all(conn, key, &items);
        for item in deletes {
            assert_eq!(
                conn.call(&["CF.DEL", key, item]),
                Reply::Int(1),
                "{key} {item}"
            );
        }
        samples.push(Sample {
            key,
            items,
            state: None,
            counts: Vec::new(),
        });
    };
    make(conn, "empty", "1000", Vec::new(), &[]);
    make(conn, "single", "1000", numbers(0..300), &numbers(0..10));
    // 64 BUCKETSIZE 1 with 1000 items: 18 sub-filters; 50 deletes stay under the 10 %
    // that would trigger a compaction, so numDeletes is 50.
    make(
        conn,
        "multi",
        "64 BUCKETSIZE 1",
        numbers(0..1000),
        &numbers(100..150),
    );
    make(
        conn,
        "grown",
        "64 EXPANSION 4 MAXITERATIONS 500",
        numbers(0..1000),
        &numbers(0..5),
    );
    make(conn, "nogrow", "100 EXPANSION 0", numbers(0..50), &[]);
    make(
        conn,
        "wide",
        "1000 BUCKETSIZE 255",
        numbers(0..400),
        &numbers(0..3),
    );
    if big {
        // 2^24 buckets of 2: 32 MiB, two SCANDUMP pieces.
        make(conn, "big", "33554432", numbers(0..2000), &numbers(0..20));
    }
    let debug = call(conn, "CF.DEBUG multi").text();
    assert!(debug.contains("deletes:50 filters:18"), "{debug}");
    for sample in &mut samples {
        sample.state = Some(cf_state(conn, sample.key));
        sample.counts = cf_counts(conn, sample.key, &sample.items);
    }
    samples
}

/// Every sample key answers exactly as before.
fn check_samples(conn: &mut RawConnection, samples: &[Sample], when: &str) {
    for sample in samples {
        let state = cf_state(conn, sample.key);
        assert_eq!(
            Some(&state),
            sample.state.as_ref(),
            "{} after {when}",
            sample.key
        );
        assert_eq!(
            cf_counts(conn, sample.key, &sample.items),
            sample.counts,
            "{} after {when}",
            sample.key
        );
        if !sample.items.is_empty() {
            let present: Vec<i64> = sample.counts.iter().map(|&n| i64::from(n > 0)).collect();
            assert_eq!(cf_mexists(conn, sample.key, &sample.items), present);
        }
    }
    // The deleted items of "single" are gone, the others are there.
    assert_eq!(call(conn, "CF.COUNT single 5"), Reply::Int(0));
    assert_eq!(call(conn, "CF.COUNT single 50"), Reply::Int(1));
    assert_eq!(
        call(conn, "CF.DEBUG empty"),
        Reply::Bulk(Some(
            b"bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
                .to_vec()
        ))
    );
}

#[test]
fn debug_reload_keeps_every_filter() {
    let server = Server::start();
    let mut c = server.raw();
    let samples = build_samples(&mut c, true);
    assert_eq!(call(&mut c, "DEBUG RELOAD"), ok());
    check_samples(&mut c, &samples, "DEBUG RELOAD");
    // And the reloaded filters keep working.
    assert_eq!(call(&mut c, "CF.ADD multi new"), Reply::Int(1));
    assert_eq!(call(&mut c, "CF.ADD empty new"), Reply::Int(1));
    assert_eq!(call(&mut c, "CF.EXISTS empty new"), Reply::Int(1));
}

#[test]
fn save_and_restart() {
    let mut server = Server::start();
    let mut c = server.raw();
    let samples = build_samples(&mut c, true);
    assert_eq!(call(&mut c, "SAVE"), ok());
    drop(c);
    server.restart(&[]);
    let mut c = server.raw();
    assert_eq!(call(&mut c, "DBSIZE"), Reply::Int(samples.len() as i64));
    check_samples(&mut c, &samples, "SAVE + restart");
}

/// The AOF rewrite writes CF.LOADCHUNK commands (header even for an empty filter, which
/// SCANDUMP cannot dump), and loading them rebuilds every filter.
#[test]
fn aof_rewrite_and_restart() {
    let mut server = Server::start_with(&["--aof-use-rdb-preamble", "no"]);
    let mut c = server.raw();
    let samples = build_samples(&mut c, true);
    crate::support::rewrite_aof(&mut c);
    // The rewritten base file holds CF.LOADCHUNK commands, not an RDB preamble.
    let aof_dir = server.dir.join("appendonlydir");
    let base = std::fs::read_dir(&aof_dir)
        .expect("appendonlydir")
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".base.aof"))
        .expect("base AOF file");
    let text = std::fs::read(&base).unwrap();
    let loadchunks = text.windows(12).filter(|w| w == b"CF.LOADCHUNK").count();
    // One header per key plus one per chunk (the empty filter's single sub-filter too).
    let chunks: usize = samples
        .iter()
        .map(|s| {
            let dump = &s.state.as_ref().unwrap().dump;
            if dump.len() > 1 {
                dump.len() - 1
            } else {
                2
            }
        })
        .sum();
    assert_eq!(loadchunks, chunks);
    drop(c);
    server.restart(&["--appendonly", "yes"]);
    let mut c = server.raw();
    assert_eq!(call(&mut c, "DBSIZE"), Reply::Int(samples.len() as i64));
    check_samples(&mut c, &samples, "BGREWRITEAOF + restart");
}

/// With the AOF on, the commands themselves are logged; CF.LOADCHUNK data chunks must be
/// among them (2.4.20 did not propagate them: a restart lost the data).
#[test]
fn aof_of_commands_including_loadchunk_data() {
    let mut server = Server::start_with(&["--appendonly", "yes"]);
    let mut c = server.raw();
    let samples = build_samples(&mut c, false);
    // Copies of two keys made with SCANDUMP/LOADCHUNK.
    for (src, dst) in [("multi", "multi_copy"), ("grown", "grown_copy")] {
        let dump = scandump(&mut c, "CF.SCANDUMP", src);
        crate::support::loadchunks(&mut c, "CF.LOADCHUNK", dst, &dump);
    }
    let multi = cf_state(&mut c, "multi");
    let grown = cf_state(&mut c, "grown");
    drop(c);
    server.restart(&[]);
    let mut c = server.raw();
    check_samples(&mut c, &samples, "AOF replay");
    assert_eq!(cf_state(&mut c, "multi_copy").dump, multi.dump);
    assert_eq!(cf_state(&mut c, "multi_copy").payload, multi.payload);
    assert_eq!(cf_state(&mut c, "grown_copy").dump, grown.dump);
    let kept: Vec<String> = (0..1000)
        .filter(|i| !(100..150).contains(i))
        .map(|i| i.to_string())
        .collect();
    assert_eq!(cf_mexists(&mut c, "multi_copy", &kept), vec![1; kept.len()]);
}

/// SCANDUMP on one server, LOADCHUNK on another: identical dumps, DUMP payloads and
/// answers.
#[test]
fn scandump_loadchunk_onto_another_server() {
    let source = Server::start();
    let target = Server::start();
    let mut s = source.raw();
    let mut t = target.raw();
    let samples = build_samples(&mut s, true);
    for sample in samples.iter().filter(|s| s.key != "empty") {
        let state = sample.state.as_ref().unwrap();
        crate::support::loadchunks(&mut t, "CF.LOADCHUNK", sample.key, &state.dump);
    }
    // The empty filter is carried by its header alone (as the AOF rewrite does it).
    let header = crate::support::cf::cf_header(0, 512, 0, 1, 2, 20, 1);
    assert_eq!(
        t.call(&[b"CF.LOADCHUNK".as_slice(), b"empty", b"1", &header]),
        ok()
    );
    check_samples(&mut t, &samples, "LOADCHUNK on another server");
    // DUMP/RESTORE between the servers, too.
    for sample in &samples {
        let payload = sample.state.as_ref().unwrap().payload.bytes();
        let key = format!("{}_restored", sample.key);
        assert_eq!(
            t.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", &payload]),
            ok()
        );
        assert_eq!(
            cf_state(&mut t, &key).dump,
            sample.state.as_ref().unwrap().dump
        );
    }
}

// ------------------------------------------------------------------------------------------
// RESTORE of forged payloads

/// A DUMP payload of a one-sub-filter CF: `07`, the module id (`81` + 8 bytes), then the
/// saved fields, each `02` + a length-encoded integer; the first one is numFilters.
fn payload_of(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    let payload = conn.call(&["DUMP", key]).bytes();
    assert_eq!(payload[0], 7, "module type, version 2");
    assert_eq!(payload[1], 0x81, "64-bit module id");
    assert_eq!(
        &payload[2..10],
        &0x3016_e5a2_8982_1404u64.to_be_bytes(),
        "MBbloomCF encver 4"
    );
    assert_eq!(&payload[10..12], &[2, 1], "numFilters = 1");
    let n = payload.len();
    // RDB version 10 on Redis 7.0, 11 on Valkey 8.1, 80 on Valkey 9, 12 on Redis 8.2.
    let version = if crate::support::valkey_major(conn) >= Some(9) {
        80
    } else if crate::support::is_valkey(conn) {
        11
    } else if crate::support::is_redis8(conn) {
        12
    } else {
        10
    };
    assert_eq!(&payload[n - 10..n - 8], &[version, 0x00], "RDB version");
    let crc = u64::from_le_bytes(payload[n - 8..].try_into().unwrap());
    assert_eq!(
        crc,
        crate::support::crc64_jones(&payload[..n - 8]),
        "our CRC64 matches Redis'"
    );
    payload
}

fn restore(conn: &mut RawConnection, key: &str, payload: &[u8]) -> Reply {
    conn.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", payload])
}

#[test]
fn restore_of_forged_payloads() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000"), ok());
    assert_eq!(call(&mut c, "CF.ADD cf a"), Reply::Int(1));
    let payload = payload_of(&mut c, "cf");
    let body = &payload[..payload.len() - 8];
    let bad_format = Reply::Error("ERR Bad data format".into());

    // Sanity: re-signing the unchanged body restores fine.
    assert_eq!(restore(&mut c, "same", &with_crc(body)), ok());
    assert_eq!(call(&mut c, "CF.EXISTS same a"), Reply::Int(1));
    // A wrong CRC is Redis' own refusal.
    let mut broken = payload.clone();
    *broken.last_mut().unwrap() ^= 1;
    assert_eq!(
        restore(&mut c, "x", &broken),
        Reply::Error("ERR DUMP payload version or checksum are wrong".into())
    );

    // numFilters 0 (COMPAT §10.2 rdb_load_zero_numfilters).
    let mut zero = body.to_vec();
    zero[11] = 0;
    assert_eq!(restore(&mut c, "x", &with_crc(&zero)), bad_format);
    // numFilters 65536 (deliberate difference 4e: rejected, not truncated to 0).
    let mut many = body[..11].to_vec();
    many.extend_from_slice(&[0x80, 0x00, 0x01, 0x00, 0x00]);
    many.extend_from_slice(&body[12..]);
    assert_eq!(restore(&mut c, "x", &with_crc(&many)), bad_format);
    // numFilters 2 with one sub-filter's data: the load runs out of fields.
    let mut two = body.to_vec();
    two[11] = 2;
    assert_eq!(restore(&mut c, "x", &with_crc(&two)), bad_format);
    // numBuckets (second field, 512 = `02 42 00`... encoded as 14-bit length `42 00`).
    assert_eq!(&body[12..15], &[2, 0x42, 0x00]);
    let mut buckets = body.to_vec();
    buckets[14] = 0x01; // 513: not a power of two
    assert_eq!(restore(&mut c, "x", &with_crc(&buckets)), bad_format);
    assert_eq!(call(&mut c, "EXISTS x"), Reply::Int(0));
    // The server is fine.
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
    assert_eq!(call(&mut c, "CF.ADD cf b"), Reply::Int(1));
}
