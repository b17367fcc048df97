//! Filter health (issue 46): the `*.HEALTH` replies, the INFO alert counts kept through
//! writes, DEL, UNLINK, RENAME, MOVE, SWAPDB, COPY, RESTORE, expiry, FLUSHALL and reloads,
//! the running fill counts after RDB reload and DUMP/RESTORE, and the crossing events.

use crate::support::{call, info_field, wait_until, RawConnection, Reply, Server};

fn alert(conn: &mut RawConnection, name: &str) -> i64 {
    info_field(conn, "bf", &format!("bf_health_{name}"))
        .parse()
        .unwrap()
}

/// The health reply (RESP2: label, value, ...) as (label, reply) pairs.
fn health(conn: &mut RawConnection, command: &str) -> Vec<(String, Reply)> {
    call(conn, command)
        .array()
        .chunks(2)
        .map(|pair| (pair[0].text(), pair[1].clone()))
        .collect()
}

fn field(reply: &[(String, Reply)], label: &str) -> Reply {
    reply
        .iter()
        .find(|(l, _)| l == label)
        .unwrap_or_else(|| panic!("no {label} in {reply:?}"))
        .1
        .clone()
}

fn number(reply: &Reply) -> f64 {
    match reply {
        Reply::Int(n) => *n as f64,
        other => other.text().parse().unwrap(),
    }
}

fn fill_past_capacity(conn: &mut RawConnection, key: &str, n: usize) {
    let mut args = vec!["BF.MADD".to_string(), key.to_string()];
    args.extend((0..n).map(|i| format!("item:{i}")));
    conn.call(&args);
}

#[test]
fn bf_health_reports_the_figures_and_counts_follow_the_key() {
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "BF.RESERVE a 0.01 100");
    let reply = health(&mut conn, "BF.HEALTH a");
    let labels: Vec<&str> = reply.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "estimated_fp_rate",
            "target_fp_rate",
            "items",
            "capacity",
            "fill",
            "links",
            "link_fill",
            "link_fp_rate",
            "alerts"
        ]
    );
    assert_eq!(number(&field(&reply, "estimated_fp_rate")), 0.0);
    assert_eq!(number(&field(&reply, "target_fp_rate")), 0.01);
    assert_eq!(field(&reply, "capacity"), Reply::Int(100));
    assert_eq!(field(&reply, "alerts"), Reply::Int(0));
    assert_eq!(alert(&mut conn, "over_capacity"), 0);
    assert_eq!(alert(&mut conn, "last_crossing"), 0);

    fill_past_capacity(&mut conn, "a", 1000);
    let reply = health(&mut conn, "BF.HEALTH a");
    assert_eq!(field(&reply, "items"), call(&mut conn, "BF.CARD a"));
    assert_eq!(field(&reply, "links"), Reply::Int(4));
    assert_eq!(field(&reply, "alerts"), Reply::Int(2 | 4));
    assert_eq!(alert(&mut conn, "over_capacity"), 1);
    assert_eq!(alert(&mut conn, "long_chains"), 1);
    assert!(alert(&mut conn, "last_crossing") > 1_700_000_000);

    // The kept counts survive a reload and a DUMP/RESTORE: the same reply.
    call(&mut conn, "DEBUG RELOAD");
    assert_eq!(health(&mut conn, "BF.HEALTH a"), reply);
    assert_eq!(alert(&mut conn, "over_capacity"), 1);
    let dump = conn.call(&["DUMP", "a"]).bytes();
    conn.call(&[b"RESTORE".as_slice(), b"b", b"0", &dump]);
    assert_eq!(health(&mut conn, "BF.HEALTH b"), reply);
    assert_eq!(alert(&mut conn, "over_capacity"), 2);
    call(&mut conn, "COPY b c");
    assert_eq!(alert(&mut conn, "over_capacity"), 3);
    call(&mut conn, "RENAME c d");
    assert_eq!(alert(&mut conn, "over_capacity"), 3);
    call(&mut conn, "MOVE d 1");
    call(&mut conn, "SWAPDB 0 1");
    assert_eq!(alert(&mut conn, "over_capacity"), 3);
    call(&mut conn, "SWAPDB 0 1");
    call(&mut conn, "DEL b");
    assert_eq!(alert(&mut conn, "over_capacity"), 2);
    call(&mut conn, "UNLINK a");
    wait_until("the lazy free", || alert(&mut conn, "over_capacity") == 1);
    call(&mut conn, "SELECT 1");
    call(&mut conn, "PEXPIRE d 1");
    wait_until("the expiry", || {
        call(&mut conn, "EXISTS d") == Reply::Int(0) && alert(&mut conn, "over_capacity") == 0
    });
    call(&mut conn, "SELECT 0");
    fill_past_capacity(&mut conn, "e", 1000);
    assert_eq!(alert(&mut conn, "long_chains"), 1);
    call(&mut conn, "FLUSHALL");
    // Valkey flushes lazily by default (lazyfree-lazy-user-flush): the frees come after.
    wait_until("the flush's frees", || alert(&mut conn, "long_chains") == 0);
    assert_eq!(
        call(&mut conn, "BF.HEALTH missing").error(),
        "ERR not found"
    );
    assert_eq!(
        call(&mut conn, "BF.HEALTH").error(),
        "ERR wrong number of arguments for 'bf.health' command"
    );
}

#[test]
fn a_union_of_full_filters_crosses_its_rate_and_fires_the_events_once() {
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "CONFIG SET notify-keyspace-events Ed");
    let mut events = server.raw();
    events.call(&["PSUBSCRIBE", "__keyevent@0__:health.*"]);
    for key in ["x", "y"] {
        call(&mut conn, &format!("BF.RESERVE {key} 0.01 1000 NONSCALING"));
    }
    let mut x = vec!["BF.MADD".to_string(), "x".to_string()];
    // 90 % of the capacity: under the rate asked (a full filter's estimate sits at it).
    x.extend((0..900).map(|i| format!("x{i}")));
    conn.call(&x);
    let mut y = vec!["BF.MADD".to_string(), "y".to_string()];
    y.extend((0..900).map(|i| format!("y{i}")));
    conn.call(&y);
    assert_eq!(alert(&mut conn, "over_fp_rate"), 0);
    call(&mut conn, "BF.MERGE x 2 x y OVERRIDE");
    assert_eq!(alert(&mut conn, "over_fp_rate"), 1);
    let reply = health(&mut conn, "BF.HEALTH x");
    assert!(
        number(&field(&reply, "estimated_fp_rate")) > 0.1,
        "{reply:?}"
    );
    // One event per crossing: the rate and the capacity, for x.
    for channel in ["over_fp_rate", "over_capacity"] {
        let event = events.read_reply().array();
        assert_eq!(
            (event[2].text(), event[3].text()),
            (format!("__keyevent@0__:health.{channel}"), "x".to_string())
        );
    }
    // Still over after another write: no new event (the next message is the PONG).
    call(&mut conn, "BF.ADD x another");
    events.send(&["PING"]).unwrap();
    assert_eq!(events.read_reply().array()[0].text(), "pong");
}

#[test]
fn cbf_saturation_and_cf_sub_filters_are_counted() {
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "CBF.RESERVE c 0.01 100");
    for _ in 0..14 {
        call(&mut conn, "CBF.ADD c same");
    }
    assert_eq!(alert(&mut conn, "cbf_saturated"), 0);
    call(&mut conn, "CBF.ADD c same");
    assert_eq!(alert(&mut conn, "cbf_saturated"), 1);
    let reply = health(&mut conn, "CBF.HEALTH c");
    assert!(field(&reply, "saturated_counters").int() > 0);

    call(&mut conn, "CF.RESERVE f 4 BUCKETSIZE 1 EXPANSION 1");
    for i in 0..64 {
        call(&mut conn, &format!("CF.ADD f i{i}"));
    }
    let reply = health(&mut conn, "CF.HEALTH f");
    assert_eq!(field(&reply, "max_sub_filters"), Reply::Int(32));
    let links = field(&reply, "links").int();
    assert!(links >= 4, "{reply:?}");
    assert_eq!(field(&reply, "sub_filter_load").array().len() as i64, links);
    assert_eq!(alert(&mut conn, "long_chains"), 1);
    assert_eq!(alert(&mut conn, "over_capacity"), 1);

    call(&mut conn, "CMS.INITBYDIM m 200 3");
    call(&mut conn, "CMS.INCRBY m a 1000");
    let reply = health(&mut conn, "CMS.HEALTH m");
    assert_eq!(field(&reply, "error_bound"), Reply::Int(10));
    assert_eq!(
        call(&mut conn, "CF.HEALTH c").error(),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}

/// All alert counts of a server's INFO.
fn alerts(conn: &mut RawConnection) -> Vec<i64> {
    [
        "over_fp_rate",
        "over_capacity",
        "long_chains",
        "cf_near_limit",
        "cbf_saturated",
    ]
    .iter()
    .map(|name| alert(conn, name))
    .collect()
}

/// A replica applies the same writes (and loads the master's RDB at its first sync): it
/// reports the same counts, and the same health per key.
#[test]
fn a_replica_reports_the_same_counts() {
    let master = Server::start();
    let mut conn = master.raw();
    call(&mut conn, "BF.RESERVE before 0.01 10");
    fill_past_capacity(&mut conn, "before", 100);
    let replica = crate::support::start_replica(&master);
    call(&mut conn, "BF.RESERVE after 0.01 10");
    fill_past_capacity(&mut conn, "after", 100);
    call(&mut conn, "CBF.RESERVE c 0.01 100");
    for _ in 0..15 {
        call(&mut conn, "CBF.ADD c same");
    }
    call(&mut conn, "CF.RESERVE f 4 BUCKETSIZE 1 EXPANSION 1");
    for i in 0..64 {
        call(&mut conn, &format!("CF.ADD f i{i}"));
    }
    crate::support::wait_for_replicas(&mut conn, 1);
    let mut on_replica = replica.raw();
    assert_eq!(alerts(&mut conn), [0, 3, 3, 0, 1]);
    assert_eq!(alerts(&mut on_replica), alerts(&mut conn));
    for command in [
        "BF.HEALTH before",
        "BF.HEALTH after",
        "CBF.HEALTH c",
        "CF.HEALTH f",
    ] {
        assert_eq!(
            health(&mut on_replica, command),
            health(&mut conn, command),
            "{command}"
        );
    }
    call(&mut conn, "DEL after");
    crate::support::wait_for_replicas(&mut conn, 1);
    assert_eq!(alerts(&mut on_replica), [0, 2, 2, 0, 1]);
}

/// The counts kept on every write equal a recount: a key rebuilt by LOADCHUNK (counted
/// chunk by chunk), a merge's result and every key after DEBUG RELOAD (counted from the
/// loaded bits) reply the same health as the key written item by item.
#[test]
fn kept_counts_equal_a_recount_after_loadchunk_merge_and_reload() {
    use crate::support::{loadchunks, scandump};
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "BF.RESERVE b 0.01 50");
    fill_past_capacity(&mut conn, "b", 300);
    call(&mut conn, "BF.RESERVE k 0.01 50 BLOCKED");
    fill_past_capacity(&mut conn, "k", 300);
    call(&mut conn, "CBF.RESERVE c 0.01 50");
    for i in 0..200 {
        call(&mut conn, &format!("CBF.ADD c i{}", i % 70));
    }
    for i in 0..30 {
        call(&mut conn, &format!("CBF.DEL c i{i}"));
    }
    call(&mut conn, "CF.RESERVE f 64 BUCKETSIZE 2");
    for i in 0..300 {
        call(&mut conn, &format!("CF.ADD f i{i}"));
    }
    for i in 0..50 {
        call(&mut conn, &format!("CF.DEL f i{i}"));
    }
    for (family, key) in [("BF", "b"), ("BF", "k"), ("CBF", "c"), ("CF", "f")] {
        let dump = scandump(&mut conn, &format!("{family}.SCANDUMP"), key);
        let copy = format!("{key}-loaded");
        loadchunks(&mut conn, &format!("{family}.LOADCHUNK"), &copy, &dump);
        assert_eq!(
            health(&mut conn, &format!("{family}.HEALTH {copy}")),
            health(&mut conn, &format!("{family}.HEALTH {key}")),
            "{family} {key}"
        );
    }
    call(&mut conn, "BF.MERGE m 2 b b-loaded");
    call(&mut conn, "CBF.MERGE n 2 c c-loaded");
    let keys = [
        ("BF", "b"),
        ("BF", "k"),
        ("BF", "m"),
        ("CBF", "c"),
        ("CBF", "n"),
        ("CF", "f"),
    ];
    let before: Vec<_> = keys
        .iter()
        .map(|(family, key)| health(&mut conn, &format!("{family}.HEALTH {key}")))
        .collect();
    let counts = alerts(&mut conn);
    call(&mut conn, "DEBUG RELOAD");
    let after: Vec<_> = keys
        .iter()
        .map(|(family, key)| health(&mut conn, &format!("{family}.HEALTH {key}")))
        .collect();
    assert_eq!(after, before);
    assert_eq!(alerts(&mut conn), counts);
}

/// MIGRATE (what slot migration runs per key): RESTORE on the target counts the key there,
/// the DEL on the source uncounts it.
#[test]
fn migrate_moves_the_counts() {
    let (source, target) = (Server::start(), Server::start());
    let mut from = source.raw();
    let mut to = target.raw();
    call(&mut from, "BF.RESERVE m 0.01 10");
    fill_past_capacity(&mut from, "m", 100);
    assert_eq!(alerts(&mut from), [0, 1, 1, 0, 0]);
    let port = target.port.to_string();
    let reply = from.call(&["MIGRATE", "127.0.0.1", &port, "m", "0", "5000"]);
    assert_eq!(reply, Reply::Simple("OK".into()));
    assert_eq!(alerts(&mut from), [0, 0, 0, 0, 0]);
    assert_eq!(alerts(&mut to), [0, 1, 1, 0, 0]);
}

/// RESP3: a map of label → value, doubles as doubles, per-link figures as arrays, a
/// figure that does not apply as null.
#[test]
fn resp3_gets_a_map() {
    let server = Server::start();
    let mut conn = server.raw3();
    conn.call(&["BF.RESERVE", "b", "0.01", "100"]);
    let reply = String::from_utf8(conn.call_raw(&["BF.HEALTH", "b"])).unwrap();
    assert_eq!(
        reply,
        "%9\r\n+estimated_fp_rate\r\n,0\r\n+target_fp_rate\r\n,0.01\r\n+items\r\n:0\r\n\
         +capacity\r\n:100\r\n+fill\r\n,0\r\n+links\r\n:1\r\n+link_fill\r\n*1\r\n,0\r\n\
         +link_fp_rate\r\n*1\r\n,0\r\n+alerts\r\n:0\r\n"
    );
    conn.call(&["CF.RESERVE", "c", "100"]);
    let reply = String::from_utf8(conn.call_raw(&["CF.HEALTH", "c"])).unwrap();
    assert!(
        reply.starts_with("%9\r\n+estimated_fp_rate\r\n,0\r\n+target_fp_rate\r\n_\r\n"),
        "{reply}"
    );
}
