//! CF.SCANDUMP / CF.LOADCHUNK against a real server: replies, validation of headers and
//! chunks, round trips, and random cursors and chunks that never crash the server.

use crate::support::cf::{add_range, cf_header, cmd, debug_line, info_reply, numbers};
use crate::support::replies::{err, int, ints, ok};
use crate::support::{call, scandump, Reply, Rng, Server};
use std::time::{Duration, Instant};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn scandump_replies() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 100"), ok());
    // An empty filter cannot be dumped: [0, nil] even at iterator 0.
    for iter in ["0", "1", "1000"] {
        assert_eq!(
            call(&mut c, &format!("CF.SCANDUMP cf {iter}")),
            Reply::Array(Some(vec![int(0), Reply::Bulk(None)]))
        );
        assert_eq!(c.last_raw, b"*2\r\n:0\r\n$-1\r\n");
    }
    assert_eq!(call(&mut c, "CF.SCANDUMP cf -1"), err("Invalid position"));
    assert_eq!(call(&mut c, "CF.SCANDUMP cf abc"), err("Invalid position"));
    // The position is checked before the key.
    assert_eq!(
        call(&mut c, "CF.SCANDUMP missing -1"),
        err("Invalid position")
    );
    assert_eq!(
        call(&mut c, "CF.SCANDUMP missing x"),
        err("Invalid position")
    );

    // CF.RESERVE k 1000; CF.ADD k hello → the documented header and 159 at byte 558.
    assert_eq!(call(&mut c, "CF.RESERVE k 1000"), ok());
    assert_eq!(call(&mut c, "CF.ADD k hello"), int(1));
    let header =
        hex::decode("0100000000000000000200000000000000000000000000000100000000000000020014000100")
            .unwrap();
    assert_eq!(
        call(&mut c, "CF.SCANDUMP k 0"),
        Reply::Array(Some(vec![int(1), Reply::Bulk(Some(header.clone()))]))
    );
    let mut data = vec![0u8; 1024];
    data[558] = 159;
    let chunk = Reply::Array(Some(vec![int(1025), Reply::Bulk(Some(data))]));
    assert_eq!(call(&mut c, "CF.SCANDUMP k 1"), chunk);
    // A sub-filter of at most 16 MiB is returned whole from any position inside it.
    let mid = call(&mut c, "CF.SCANDUMP k 500").array();
    assert_eq!(mid[0], int(1524));
    assert_eq!(mid[1], chunk.array()[1]);
    for end in ["1025", "5000", "9223372036854775807"] {
        assert_eq!(
            call(&mut c, &format!("CF.SCANDUMP k {end}")),
            Reply::Array(Some(vec![int(0), Reply::Bulk(None)])),
            "{end}"
        );
        assert_eq!(c.last_raw, b"*2\r\n:0\r\n$-1\r\n");
    }
    // CF.RESERVE cf 8; CF.ADD cf item1 → 00 00 00 00 07 00 00 00.
    assert_eq!(call(&mut c, "CF.RESERVE tiny 8"), ok());
    assert_eq!(call(&mut c, "CF.ADD tiny item1"), int(1));
    assert_eq!(
        scandump(&mut c, "CF.SCANDUMP", "tiny"),
        vec![
            (1, Some(cf_header(1, 4, 0, 1, 2, 20, 1))),
            (9, Some(vec![0, 0, 0, 0, 7, 0, 0, 0])),
            (0, None),
        ]
    );
}

#[test]
fn loadchunk_validation() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "SET str x"), ok());
    assert_eq!(call(&mut c, "CF.RESERVE cf 8"), ok());
    assert_eq!(call(&mut c, "CF.ADD cf item1"), int(1));
    let header = cf_header(1, 4, 0, 1, 2, 20, 1);
    let cases: Vec<(&str, &str, Vec<u8>, &str)> = vec![
        // Iterator unparsable or 0.
        ("new", "0", b"x".to_vec(), "Invalid position"),
        ("new", "abc", b"x".to_vec(), "Invalid position"),
        ("cf", "0", b"x".to_vec(), "Invalid position"),
        ("str", "x", b"x".to_vec(), "Invalid position"),
        // Header: the key must be empty, then the length must be 38.
        ("cf", "1", header.clone(), "ERR item exists"),
        ("cf", "1", b"abc".to_vec(), "ERR item exists"),
        ("str", "1", header.clone(), WRONGTYPE),
        ("new", "1", header[..37].to_vec(), "Invalid header"),
        ("new", "1", b"".to_vec(), "Invalid header"),
        ("new", "1", vec![0u8; 46], "Invalid header"),
        // Data chunks need an existing CF.
        ("new", "9", b"12345678".to_vec(), "ERR not found"),
        ("str", "9", b"12345678".to_vec(), WRONGTYPE),
        // Chunk checks.
        (
            "cf",
            "-9223372036854775808",
            b"1".to_vec(),
            "Couldn't load chunk!",
        ),
        (
            "cf",
            "922337203685477588",
            b"1".to_vec(),
            "Couldn't load chunk!",
        ),
        ("cf", "4", vec![b'a'; 37], "Couldn't load chunk!"),
        ("cf", "4", b"abcd".to_vec(), "Couldn't load chunk!"),
        ("cf", "-1", b"a".to_vec(), "Couldn't load chunk!"),
        ("cf", "5", b"".to_vec(), "Couldn't load chunk!"),
        ("cf", "10", b"123456789".to_vec(), "Couldn't load chunk!"),
        ("cf", "2", b"a".to_vec(), ""),
    ];
    for (key, iter, data, expected) in cases {
        let reply = cmd(
            &mut c,
            &[b"CF.LOADCHUNK", key.as_bytes(), iter.as_bytes(), &data],
        );
        if expected.is_empty() {
            assert_eq!(reply, ok());
        } else {
            assert_eq!(reply, err(expected), "{key} {iter}");
        }
    }
    assert_eq!(call(&mut c, "EXISTS new"), int(0));
    // The accepted chunk wrote "a" at byte 0; item1 is untouched; adds still work.
    assert_eq!(
        scandump(&mut c, "CF.SCANDUMP", "cf")[1],
        (9, Some(vec![b'a', 0, 0, 0, 7, 0, 0, 0]))
    );
    assert_eq!(call(&mut c, "CF.EXISTS cf item1"), int(1));
    assert_eq!(call(&mut c, "CF.ADD cf more"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS cf more"), int(1));
}

/// RedisBloom quirk (COMPAT §7.4): a chunk positioned past the end of all sub-filters lands
/// in the last one, at the offset reduced by the total size.
#[test]
fn loadchunk_past_the_end_lands_in_the_last_sub_filter() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 8"), ok());
    // Start offset = pos − len − 1 = 10 → 10 − 8 = byte 2 of the only sub-filter.
    assert_eq!(cmd(&mut c, &[b"CF.LOADCHUNK", b"cf", b"12", b"\x07"]), ok());
    // Offset 15 → byte 7, the last one; offset 16 → byte 8 does not fit.
    assert_eq!(cmd(&mut c, &[b"CF.LOADCHUNK", b"cf", b"17", b"\x09"]), ok());
    assert_eq!(
        cmd(&mut c, &[b"CF.LOADCHUNK", b"cf", b"18", b"\x09"]),
        err("Couldn't load chunk!")
    );
    assert_eq!(
        cmd(&mut c, &[b"CF.LOADCHUNK", b"cf", b"18", b"\x09\x09"]),
        err("Couldn't load chunk!")
    );
    assert_eq!(call(&mut c, "CF.ADD cf x"), int(1));
    let dump = scandump(&mut c, "CF.SCANDUMP", "cf");
    let data = dump[1].1.clone().unwrap();
    assert_eq!((data[2], data[7]), (7, 9));
}

#[test]
fn loadchunk_header_checks() {
    let server = Server::start();
    let mut c = server.raw();
    let bad = "Couldn't create filter!";
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (cf_header(0, 0, 0, 1, 2, 20, 1), bad),        // no buckets
        (cf_header(0, 3, 0, 1, 2, 20, 1), bad),        // not a power of two
        (cf_header(0, 1 << 56, 0, 1, 2, 20, 1), bad),  // beyond 56 bits
        (cf_header(0, 1 << 40, 0, 1, 2, 20, 1), bad),  // 2 TiB: ceiling
        (cf_header(0, 1 << 33, 0, 1, 1, 20, 1), bad),  // 8 GiB: ceiling
        (cf_header(0, 64, 0, 0, 2, 20, 1), bad),       // no sub-filters
        (cf_header(0, 64, 0, 65536, 2, 20, 1), bad),   // > 65535 sub-filters
        (cf_header(0, 64, 0, 1 << 32, 2, 20, 1), bad), // truncates to 0 in 2.4.20
        (cf_header(0, 64, 0, 1, 0, 20, 1), bad),       // bucket size 0
        (cf_header(0, 64, 0, 1, 256, 20, 1), bad),     // bucket size 256
        (cf_header(0, 64, 0, 1, 2, 0, 1), bad),        // max iterations 0
        (cf_header(0, 64, 0, 2, 2, 20, 0), bad),       // expansion 0, 2 sub-filters
        (cf_header(0, 64, 0, 1, 2, 20, 3), bad),       // expansion not a power of two
        (cf_header(0, 64, 0, 1, 2, 20, 32769), bad),   // expansion too large
        (cf_header(0, 64, 0, 1, 2, 20, 65535), bad),
        (cf_header(0, 1 << 20, 0, 40, 2, 20, 2), bad), // grown sizes overflow 56 bits
        (cf_header(0, 64, 0, 1, 2, 20, 0), ""),
        (cf_header(0, 64, 0, 2, 2, 65535, 32768), ""),
        (cf_header(u64::MAX, 1, u64::MAX, 1, 255, 1, 1), ""), // counters are not checked
        (cf_header(5, 64, 0, 65535, 1, 20, 1), ""),           // the sub-filter cap itself
    ];
    for (i, (header, expected)) in cases.iter().enumerate() {
        let key = format!("k{i}");
        let reply = cmd(&mut c, &[b"CF.LOADCHUNK", key.as_bytes(), b"1", header]);
        if expected.is_empty() {
            assert_eq!(reply, ok(), "case {i}");
            // The header comes back unchanged (when there is something to dump).
            let back = call(&mut c, &format!("CF.SCANDUMP {key} 0"));
            if header[..8] != [0; 8] {
                assert_eq!(
                    back,
                    Reply::Array(Some(vec![int(1), Reply::Bulk(Some(header.clone()))])),
                    "case {i}"
                );
            }
        } else {
            assert_eq!(reply, err(expected), "case {i}");
            assert_eq!(call(&mut c, &format!("EXISTS {key}")), int(0), "case {i}");
        }
    }
    assert_eq!(
        call(&mut c, "CF.DEBUG k17"),
        debug_line(2, 64, 0, 0, 2, 65535, 32768)
    );
    // Sub-filter 1 has 64 × 32768 buckets: 40 + 16 + 128 + 16 + 4 MiB.
    assert_eq!(
        call(&mut c, "CF.INFO k17").array()[1],
        int(40 + 16 + 128 + 16 + (4 << 20))
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG k19"),
        debug_line(1, 64, 5, 0, 65535, 20, 1)
    );
    // The 65535-sub-filter filter answers queries and refuses to grow.
    assert_eq!(call(&mut c, "CF.EXISTS k19 a"), int(0));
    assert_eq!(
        call(&mut c, "CF.ADD k19 a"),
        err("Maximum expansions reached")
    );
    // Zeroing the first 9 bytes of a real header (numItems and the low byte of
    // numBuckets, here 64) leaves numBuckets 0.
    assert_eq!(call(&mut c, "CF.RESERVE src 100"), ok());
    assert_eq!(call(&mut c, "CF.ADD src a"), int(1));
    let mut header = call(&mut c, "CF.SCANDUMP src 0").array()[1].bytes();
    header[..9].fill(0);
    assert_eq!(
        cmd(&mut c, &[b"CF.LOADCHUNK", b"dst", b"1", &header]),
        err(bad)
    );
    let mut header = call(&mut c, "CF.SCANDUMP src 0").array()[1].bytes();
    header[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert_eq!(
        cmd(&mut c, &[b"CF.LOADCHUNK", b"dst", b"1", &header]),
        err(bad)
    );
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
}

/// COMPAT §10.2 number_of_buckets_does_not_overflow: 2^32 buckets of one slot is exactly
/// 4 GiB, the default ceiling: accepted, and the bucket offsets stay in bounds.
#[test]
fn number_of_buckets_does_not_overflow() {
    let server = Server::start();
    let mut c = server.raw();
    let header = cf_header(0, 1 << 32, 0, 1, 1, 1, 1);
    assert_eq!(cmd(&mut c, &[b"CF.LOADCHUNK", b"cf", b"1", &header]), ok());
    assert_eq!(
        call(&mut c, "CF.INFO cf"),
        info_reply([40 + 16 + (1 << 32), 1 << 32, 1, 0, 0, 1, 1, 1])
    );
    // "1" fills its two buckets; a third copy needs a second 4 GiB sub-filter, which the
    // ceiling refuses: -1 (CF.INSERT) or the ceiling error (CF.ADD).
    assert_eq!(
        call(&mut c, "CF.INSERT cf ITEMS 1 1 1 1 1 1 1 1 1 1"),
        ints(&[1, 1, -1, -1, -1, -1, -1, -1, -1, -1])
    );
    assert_eq!(
        call(&mut c, "CF.ADD cf 1"),
        err("ERR filter would exceed the max-filter-bytes limit")
    );
    assert_eq!(call(&mut c, "CF.COUNT cf 1"), int(2));
    assert_eq!(call(&mut c, "CF.ADD cf 2"), int(1));
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(1, 1 << 32, 3, 0, 1, 1, 1)
    );
    let reply = call(&mut c, "CF.SCANDUMP cf 1").array();
    assert_eq!(reply[0], int(1 + (16 << 20)));
    assert_eq!(call(&mut c, "DEL cf"), int(1));
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
    assert_eq!(call(&mut c, "CF.ADD small x"), int(1));
}

/// COMPAT §10.2 counter_overflow: one CF.INSERT of 140000 copies of one item into a filter
/// of two one-slot buckets grows to the 65535 sub-filter cap, then answers -1.
#[test]
fn counter_overflow() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(
        call(&mut c, "CF.RESERVE cf 2 BUCKETSIZE 1 EXPANSION 1"),
        ok()
    );
    let mut args: Vec<&str> = vec!["CF.INSERT", "cf", "ITEMS"];
    args.extend(std::iter::repeat_n("1", 140_000));
    let started = Instant::now();
    let replies = c.call(&args).ints();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "CF.INSERT took {took:?}");
    // "1" has an odd fingerprint: its two buckets differ, two copies per sub-filter.
    let inserted = 2 * 65535;
    assert_eq!(replies.len(), 140_000);
    assert!(replies[..inserted].iter().all(|&r| r == 1));
    assert!(replies[inserted..].iter().all(|&r| r == -1));
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(1, 2, inserted as u64, 0, 65535, 20, 1)
    );
    assert_eq!(call(&mut c, "CF.COUNT cf 1"), int(inserted as i64));
    assert_eq!(
        call(&mut c, "CF.ADD cf 1"),
        err("Maximum expansions reached")
    );
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
}

/// COMPAT §10.2 scandump round trips, and loads into another key.
#[test]
fn scandump_round_trips() {
    let server = Server::start();
    let mut c = server.raw();
    let cases: &[(&str, u64)] = &[
        ("62", 500),
        ("62 EXPANSION 2", 500),
        ("67108864", 1000),
        ("1000 BUCKETSIZE 4 MAXITERATIONS 7", 1000),
    ];
    for (n, (args, items)) in cases.iter().enumerate() {
        let src = format!("src{n}");
        let dst = format!("dst{n}");
        assert_eq!(call(&mut c, &format!("CF.RESERVE {src} {args}")), ok());
        add_range(&mut c, &src, 0..*items, &int(1));
        for i in (0..*items).step_by(9) {
            assert_eq!(call(&mut c, &format!("CF.DEL {src} {i}")), int(1));
        }
        let dump = scandump(&mut c, "CF.SCANDUMP", &src);
        crate::support::loadchunks(&mut c, "CF.LOADCHUNK", &dst, &dump);
        assert_eq!(scandump(&mut c, "CF.SCANDUMP", &dst), dump, "{args}");
        assert_eq!(
            call(&mut c, &format!("CF.DEBUG {dst}")),
            call(&mut c, &format!("CF.DEBUG {src}"))
        );
        assert_eq!(
            call(&mut c, &format!("CF.INFO {dst}")),
            call(&mut c, &format!("CF.INFO {src}"))
        );
        assert_eq!(
            call(&mut c, &format!("DUMP {dst}")),
            call(&mut c, &format!("DUMP {src}"))
        );
        let all = numbers(0..*items);
        assert_eq!(
            crate::support::cf::cf_counts(&mut c, &dst, &all),
            crate::support::cf::cf_counts(&mut c, &src, &all)
        );
        let kept: Vec<String> = (0..*items)
            .filter(|i| i % 9 != 0)
            .map(|i| i.to_string())
            .collect();
        assert_eq!(
            crate::support::cf::cf_mexists(&mut c, &dst, &kept),
            vec![1; kept.len()]
        );
        if *args == "67108864" {
            // 64 MiB: four 16 MiB pieces of the one sub-filter.
            let positions: Vec<i64> = dump.iter().map(|(next, _)| *next).collect();
            let piece = 16 << 20;
            assert_eq!(
                positions,
                vec![1, 1 + piece, 1 + 2 * piece, 1 + 3 * piece, 1 + 4 * piece, 0]
            );
        }
        assert_eq!(call(&mut c, &format!("DEL {src} {dst}")), int(2));
    }
    // Header only; chunks may come in any order (position-addressed).
    assert_eq!(call(&mut c, "CF.RESERVE a 64 EXPANSION 2"), ok());
    add_range(&mut c, "a", 0..300, &int(1));
    let dump = scandump(&mut c, "CF.SCANDUMP", "a");
    assert!(dump.len() > 3);
    let mut reversed = vec![dump[0].clone()];
    reversed.extend(dump[1..].iter().rev().cloned());
    crate::support::loadchunks(&mut c, "CF.LOADCHUNK", "b", &reversed);
    assert_eq!(scandump(&mut c, "CF.SCANDUMP", "b"), dump);
    // After DEL, chunk loads need the header again.
    assert_eq!(call(&mut c, "DEL b"), int(1));
    let (pos, data) = &dump[1];
    assert_eq!(
        cmd(
            &mut c,
            &[
                b"CF.LOADCHUNK",
                b"b",
                pos.to_string().as_bytes(),
                data.as_deref().unwrap()
            ]
        ),
        err("ERR not found")
    );
}

#[test]
fn random_scandump_positions_never_crash() {
    let server = Server::start();
    let mut c = server.raw();
    let mut rng = Rng(0x5eed_cf01);
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000 EXPANSION 2"), ok());
    add_range(&mut c, "cf", 0..3000, &int(1));
    let total: i64 = scandump(&mut c, "CF.SCANDUMP", "cf")
        .iter()
        .filter_map(|(_, d)| d.as_ref().map(|d| d.len() as i64))
        .sum::<i64>()
        - 38;
    let commands: Vec<Vec<String>> = (0..2000)
        .map(|_| {
            let pos = rng.below(total as u64 + 1024);
            vec!["CF.SCANDUMP".into(), "cf".into(), pos.to_string()]
        })
        .collect();
    for (cmd, reply) in commands.iter().zip(c.pipeline(&commands)) {
        let parts = reply.array();
        let pos: i64 = cmd[2].parse().unwrap();
        match (&parts[0], &parts[1]) {
            (Reply::Int(0), Reply::Bulk(None)) => assert!(pos > total, "{pos}"),
            (Reply::Int(1), Reply::Bulk(Some(h))) => assert_eq!((pos, h.len()), (0, 38)),
            (Reply::Int(next), Reply::Bulk(Some(d))) => assert_eq!(*next, pos + d.len() as i64),
            other => panic!("unexpected {other:?}"),
        }
    }
    // A filter with a 30000 expansion (rounded to 32768).
    assert_eq!(call(&mut c, "CF.RESERVE big 64 EXPANSION 30000"), ok());
    add_range(&mut c, "big", 0..200, &int(1));
    let commands: Vec<Vec<String>> = (0..300)
        .map(|_| {
            vec![
                "CF.SCANDUMP".into(),
                "big".into(),
                rng.below(1 << 24).to_string(),
            ]
        })
        .collect();
    for reply in c.pipeline(&commands) {
        assert_eq!(reply.array().len(), 2);
    }
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
}

#[test]
fn random_loadchunk_never_crashes() {
    let server = Server::start();
    let mut c = server.raw();
    let mut rng = Rng(0xcf_10ad);
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000 EXPANSION 2"), ok());
    add_range(&mut c, "cf", 0..3000, &int(1));
    let total = 1024 * 7; // 1024 + 2048 + 4096 bytes in three sub-filters
    assert_eq!(call(&mut c, "CF.INFO cf").array()[5], int(3));
    for round in 0..400 {
        let len = rng.below(4096) as usize;
        let data = rng.bytes(len);
        let pos = match round % 4 {
            0 => rng.next() as i64,
            1 => rng.below(total + 4096) as i64,
            2 => -(rng.below(10) as i64),
            _ => 1,
        };
        let key: &[u8] = if round % 10 == 0 { b"fresh" } else { b"cf" };
        let reply = cmd(
            &mut c,
            &[b"CF.LOADCHUNK", key, pos.to_string().as_bytes(), &data],
        );
        let allowed = [
            ok(),
            err("Couldn't load chunk!"),
            err("Invalid position"),
            err("ERR item exists"),
            err("ERR not found"),
            err("Invalid header"),
        ];
        assert!(allowed.contains(&reply), "{reply:?} at {pos} len {len}");
    }
    // Big random chunks against the data of a 16+ MiB filter.
    assert_eq!(call(&mut c, "CF.RESERVE big 20000000"), ok());
    assert_eq!(call(&mut c, "CF.ADD big x"), int(1));
    for _ in 0..6 {
        let len = 1024 + rng.below(36 << 20) as usize;
        let data = vec![rng.next() as u8; len];
        let pos = rng.below(40 << 20) as i64;
        let reply = cmd(
            &mut c,
            &[b"CF.LOADCHUNK", b"big", pos.to_string().as_bytes(), &data],
        );
        assert!(
            reply == ok() || reply == err("Couldn't load chunk!"),
            "{reply:?}"
        );
    }
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
    assert_eq!(call(&mut c, "CF.ADD other x"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS other x"), int(1));
}
