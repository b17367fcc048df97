//! Every TOPK.* command with valid and invalid arguments, in one sequence on an empty
//! server, answered byte for byte as RedisBloom 2.4.20 (RESP2) and 2.6.28 (RESP3) answered
//! it (core/tests/fixtures/redisbloom-2.4.20/topk.commands.json: every error text, the
//! order of checks, WITHCOUNT's prefixes, decay-1 takeovers, zero increments, INFO's
//! doubles, MEMORY USAGE). TOPK.INCRBY with a bad increment is the one reply redbloom
//! fixes: RedisBloom's is cut short after its error element (recorded `incomplete`),
//! redbloom's is that error alone. Then items a simple string cannot carry, COPY, DEBUG
//! DIGEST-VALUE and the INFO section.

use crate::support::golden::{argv, latin1, load};
use crate::support::{info_field, RawConnection, Reply, Server};

/// A TOPK.INFO reply split at its decay: the bytes up to the value and the value. Redis
/// 7.0 writes a double with `%.17g`, later servers (Redis 7.2+, Valkey) its shortest
/// form; elsewhere than on Redis 7.0 the values are compared as numbers.
pub fn split_decay(reply: &[u8]) -> Option<(&[u8], f64)> {
    let at = reply.windows(8).position(|w| w == b"+decay\r\n")? + 8;
    let text = String::from_utf8_lossy(&reply[at..]).to_string();
    let number = text
        .trim_start_matches(',')
        .rsplit("\r\n")
        .nth(1)?
        .to_string();
    Some((&reply[..at], number.parse().ok()?))
}

/// Whether a reply equals RedisBloom's on this server (doubles as this server writes them).
pub fn same_reply(got: &[u8], want: &[u8]) -> bool {
    if got == want {
        return true;
    }
    let exact = std::env::var("REDBLOOM_SERVER").is_err();
    match (split_decay(got), split_decay(want)) {
        (Some((a, x)), Some((b, y))) if !exact => a == b && x == y,
        _ => false,
    }
}

/// The last element of a reply RedisBloom cut short: its error line.
fn error_line(reply: &[u8]) -> &[u8] {
    let at = reply
        .windows(3)
        .rposition(|w| w == b"\r\n-")
        .expect("an error element");
    &reply[at + 2..]
}

fn run_golden(conn: &mut RawConnection, field: &str) {
    let exact_memory = std::env::var("REDBLOOM_SERVER").is_err();
    let mut fixed = 0;
    for record in load("topk.commands.json")["commands"].as_array().unwrap() {
        let argv = argv(record);
        let got = conn.call_raw(&argv);
        let mut want = latin1(&record[field]);
        if record.get("incomplete").is_some() {
            want = error_line(&want).to_vec();
            fixed += 1;
        }
        let name = String::from_utf8_lossy(&argv[0]).to_string();
        if name == "OBJECT" || (name == "MEMORY" && !exact_memory) {
            continue; // server-specific
        }
        assert!(
            same_reply(&got, &want),
            "{field}: {:?}: {} != {}",
            argv.iter()
                .map(|a| String::from_utf8_lossy(a).to_string())
                .collect::<Vec<_>>(),
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
        );
    }
    assert_eq!(fixed, 8, "the TOPK.INCRBY replies redbloom completes");
}

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp2() {
    let server = Server::start();
    run_golden(&mut server.raw(), "resp");
}

#[test]
fn every_reply_and_error_is_redisbloom_s_in_resp3() {
    let server = Server::start();
    run_golden(&mut server.raw3(), "resp3");
}

#[test]
fn a_bad_increment_changes_nothing_and_the_connection_stays_in_step() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["TOPK.RESERVE", "k", "3", "100", "3", "0.9"]);
    let before = conn.call(&["DUMP", "k"]);
    let reply = conn.call(&["TOPK.INCRBY", "k", "a", "10", "b", "x", "c", "1"]);
    assert_eq!(
        reply,
        Reply::Error("TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000".into())
    );
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(conn.call(&["DUMP", "k"]), before, "nothing added");
    assert_eq!(conn.call(&["TOPK.COUNT", "k", "a"]), Reply::int_array(&[0]));
}

/// TOPK.LIST's keyword as RedisBloom 2.4.20 compares it (`strncasecmp` over the word's
/// length, which stops at a NUL both strings share): replies recorded from it.
#[test]
fn withcount_is_compared_as_redisbloom_s_strncasecmp() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["TOPK.RESERVE", "empty", "3"]);
    conn.call(&["TOPK.RESERVE", "k", "3"]);
    conn.call(&["TOPK.ADD", "k", "a"]);
    let expected = Reply::Error("WITHCOUNT keyword expected".into());
    let listed = Reply::Array(Some(vec![Reply::Simple("a".into()), Reply::Int(1)]));
    let cases: &[(&[u8], &Reply)] = &[
        (b"WITHCOUNT\0", &listed),
        (b"WITHCOUNT\0x", &listed),
        (b"withcount\0", &listed),
        (b"WITH", &listed),
        (b"", &listed),
        (b"WITHCOUNTx", &expected),
        (b"\0", &expected),
        (b"W\0", &expected),
    ];
    for &(word, want) in cases {
        let got = conn.call(&[b"TOPK.LIST".as_slice(), b"k", word]);
        assert_eq!(&got, want, "{word:?}");
    }
    assert_eq!(
        conn.call(&[b"TOPK.LIST".as_slice(), b"empty", b"WITHCOUNT\0"]),
        Reply::Array(Some(vec![]))
    );
}

#[test]
fn items_a_simple_string_cannot_carry_are_bulk_strings() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["TOPK.RESERVE", "k", "3", "1000", "3", "0.9"]);
    let items: [&[u8]; 3] = [b"a\0b", b"line\r\nbreak", b"plain"];
    for item in items {
        conn.call(&[b"TOPK.ADD".as_slice(), b"k", item]);
    }
    conn.call(&["TOPK.ADD", "k", "plain"]);
    // RESP2: the plain item a simple string (RedisBloom 2.4.20's), the others bulk strings
    // with every byte (RedisBloom cuts at the NUL and breaks the protocol on CR LF).
    assert_eq!(
        conn.call_raw(&["TOPK.LIST", "k"]),
        b"*3\r\n+plain\r\n$3\r\na\0b\r\n$11\r\nline\r\nbreak\r\n"
    );
    let mut conn3 = server.raw3();
    assert_eq!(
        conn3.call_raw(&["TOPK.LIST", "k"]),
        b"*3\r\n$5\r\nplain\r\n$3\r\na\0b\r\n$11\r\nline\r\nbreak\r\n"
    );
    // Expelled items likewise: the three adds below expel the three items.
    let reply = conn.call_raw(&["TOPK.INCRBY", "k", "x", "5", "y", "5", "z", "9"]);
    assert!(reply.starts_with(b"*3\r\n"));
    for encoded in [
        &b"+plain\r\n"[..],
        b"$3\r\na\0b\r\n",
        b"$11\r\nline\r\nbreak\r\n",
    ] {
        assert!(
            reply.windows(encoded.len()).any(|w| w == encoded),
            "{}",
            String::from_utf8_lossy(&reply)
        );
    }
}

#[test]
fn copy_digest_and_info_section() {
    let server = Server::start();
    let mut conn = server.raw();
    conn.call(&["TOPK.RESERVE", "a", "4", "2", "2", "0.9"]);
    conn.call(&["TOPK.ADD", "a", "x", "y", "z", "w", "x", "v"]);
    assert_eq!(conn.call(&["COPY", "a", "b"]).int(), 1);
    assert_eq!(conn.call(&["DUMP", "a"]), conn.call(&["DUMP", "b"]));
    assert_eq!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    // The copy draws as the original: the same adds keep them equal.
    for key in ["a", "b"] {
        conn.call(&["TOPK.INCRBY", key, "q", "50", "r", "7"]);
    }
    assert_eq!(conn.call(&["DUMP", "a"]), conn.call(&["DUMP", "b"]));
    conn.call(&["TOPK.ADD", "b", "only-b"]);
    assert_ne!(
        conn.call(&["DEBUG", "DIGEST-VALUE", "a"]),
        conn.call(&["DEBUG", "DIGEST-VALUE", "b"])
    );
    assert_eq!(info_field(&mut conn, "bf", "bf_topk_filters"), "2");
    let listed = |conn: &mut RawConnection, key: &str| match conn.call(&["TOPK.LIST", key]) {
        Reply::Array(Some(items)) => items.len(),
        other => panic!("{other:?}"),
    };
    let items = listed(&mut conn, "a") + listed(&mut conn, "b");
    assert_eq!(
        info_field(&mut conn, "bf", "bf_topk_items"),
        items.to_string()
    );
    assert_eq!(
        info_field(&mut conn, "bf", "bf_topk_bytes"),
        (2 * (2088 + 2 * 2 * 8 + 4 * 24)).to_string()
    );
    conn.call(&["DEL", "a", "b"]);
    assert_eq!(info_field(&mut conn, "bf", "bf_topk_filters"), "0");
}
