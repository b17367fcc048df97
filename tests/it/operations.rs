//! Operating big filters and Redis 8 (issue 27): RedisBloom 8's unprefixed config names,
//! DEBUG DIGEST-VALUE over hashed buffers, the ceiling that knows maxmemory, active
//! defragmentation.

use crate::support::{call, is_redis8, loadchunks, scandump, RawConnection, Reply, Server};

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
