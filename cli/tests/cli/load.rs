//! `redbloom load` and `shard load`: the filter built locally and shipped with LOADCHUNK
//! is byte for byte BF.RESERVE + BF.MADD of the same items in order; a Cuckoo filter
//! answers as CF.RESERVE + CF.ADD of them; refusals write nothing.

use crate::common::{fails, ok, url, write_items};
use crate::support::{scandump, RawConnection, Reply, Server, TempDir};
use std::io::Write;
use std::process::{Command, Stdio};

fn items(n: usize) -> Vec<String> {
    // Some repeats: MADD answers 0 for them and the load must skip them alike.
    (0..n)
        .map(|i| format!("item:{}", if i % 97 == 5 { i - 5 } else { i }))
        .collect()
}

/// `command key item…` in commands of 1,000 items, pipelined.
fn add_batched(conn: &mut RawConnection, command: &str, key: &str, items: &[String]) {
    let cmds: Vec<Vec<String>> = items
        .chunks(1000)
        .map(|part| {
            let mut cmd = vec![command.to_string(), key.to_string()];
            cmd.extend(part.iter().cloned());
            cmd
        })
        .collect();
    for reply in conn.pipeline(&cmds) {
        assert!(matches!(reply, Reply::Array(_)), "{reply:?}");
    }
}

#[test]
fn bloom_load_is_byte_identical_to_madd() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("load");
    let list = items(40_000);
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    // (load options, the BF.RESERVE arguments after the key)
    // The first two fit in one link (the second, over 1 MiB, is built on one thread per
    // core, each setting the bits of its part of the array), the others grow or fill it.
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--error-rate", "0.01", "--capacity", "100000"],
            &["0.01", "100000"],
        ),
        (
            &["--error-rate", "0.01", "--capacity", "1000000"],
            &["0.01", "1000000"],
        ),
        (
            &["--error-rate", "0.01", "--capacity", "5000"],
            &["0.01", "5000"],
        ),
        (
            &[
                "--error-rate",
                "0.001",
                "--capacity",
                "3000",
                "--expansion",
                "4",
            ],
            &["0.001", "3000", "EXPANSION", "4"],
        ),
        (
            &[
                "--error-rate",
                "0.05",
                "--capacity",
                "50000",
                "--nonscaling",
            ],
            &["0.05", "50000", "NONSCALING"],
        ),
    ];
    for (n, (options, reserve)) in cases.iter().enumerate() {
        let key = format!("loaded:{n}");
        let reference = format!("madd:{n}");
        let mut args = vec!["load", &u, &key];
        args.extend_from_slice(options);
        args.extend_from_slice(&["--file", f]);
        let out = ok(&args);
        assert!(
            out.starts_with(&format!("loaded {key}: 40000 items, ")),
            "{out}"
        );
        let mut cmd = vec!["BF.RESERVE", reference.as_str()];
        cmd.extend_from_slice(reserve);
        assert_eq!(conn.call(&cmd), Reply::ok());
        add_batched(&mut conn, "BF.MADD", &reference, &list);
        // (`assert!`: a differing megabyte DUMP is not worth printing.)
        assert!(
            conn.call(&["DUMP", &key]).bytes() == conn.call(&["DUMP", &reference]).bytes(),
            "DUMP differs: {options:?}"
        );
        assert!(
            scandump(&mut conn, "BF.SCANDUMP", &key)
                == scandump(&mut conn, "BF.SCANDUMP", &reference),
            "SCANDUMP differs: {options:?}"
        );
        assert_eq!(
            conn.call(&["BF.CARD", &key]),
            conn.call(&["BF.CARD", &reference])
        );
    }

    // Standard input, and JSON.
    let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args([
            "--json",
            "load",
            &u,
            "stdin",
            "--error-rate",
            "0.01",
            "--capacity",
            "100",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"a\nb\r\nc").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let out: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["items"], 3);
    assert_eq!(
        conn.call(&["BF.MEXISTS", "stdin", "a", "b", "c", "b\r"]),
        Reply::int_array(&[1, 1, 1, 0])
    );

    // Refusals: an existing key; a non-scaling filter too small for the items.
    let before = conn.call(&["DUMP", "loaded:0"]).bytes();
    assert_eq!(
        fails(&[
            "load",
            &u,
            "loaded:0",
            "--error-rate",
            "0.01",
            "--capacity",
            "10",
            "--file",
            f
        ]),
        "redbloom: loaded:0 already exists"
    );
    assert_eq!(conn.call(&["DUMP", "loaded:0"]).bytes(), before);
    let line = fails(&[
        "load",
        &u,
        "small",
        "--error-rate",
        "0.01",
        "--capacity",
        "100",
        "--nonscaling",
        "--file",
        f,
    ]);
    assert!(line.starts_with("redbloom: item "), "{line}");
    assert_eq!(conn.call(&["EXISTS", "small"]), Reply::Int(0));
    assert_eq!(
        fails(&[
            "load",
            &u,
            "x",
            "--error-rate",
            "0.01",
            "--capacity",
            "100",
            "--type",
            "cbf",
            "--file",
            f
        ]),
        "redbloom: load supports bf, cf, static and xf filters"
    );
}

#[test]
fn cuckoo_load_answers_like_cf_add() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("load-cf");
    let list = items(20_000);
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    ok(&[
        "load",
        &u,
        "cf",
        "--type",
        "cf",
        "--capacity",
        "4000",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(conn.call(&["CF.RESERVE", "ref", "4000"]), Reply::ok());
    let adds: Vec<Vec<String>> = list
        .iter()
        .map(|i| vec!["CF.ADD".to_string(), "ref".into(), i.clone()])
        .collect();
    for reply in conn.pipeline(&adds) {
        assert_eq!(reply, Reply::Int(1));
    }
    let mut probes: Vec<String> = list.clone();
    probes.extend((0..20_000).map(|i| format!("absent:{i}")));
    for part in probes.chunks(1000) {
        let mut a = vec!["CF.MEXISTS".to_string(), "cf".into()];
        a.extend(part.iter().cloned());
        let mut b = a.clone();
        b[1] = "ref".into();
        assert_eq!(conn.call(&a), conn.call(&b));
    }
    assert_eq!(
        conn.call(&["CF.INFO", "cf"]),
        conn.call(&["CF.INFO", "ref"])
    );
    // The same insertion order makes the same buckets.
    assert_eq!(
        conn.call(&["DUMP", "cf"]).bytes(),
        conn.call(&["DUMP", "ref"]).bytes()
    );
}

#[test]
fn shard_load_fills_each_member_as_madd_would() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("shard-load");
    let list = items(30_000);
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    ok(&[
        "shard",
        "create",
        &u,
        "s",
        "--shards",
        "5",
        "--error-rate",
        "0.01",
        "--capacity",
        "10000",
    ]);
    assert_eq!(
        ok(&["shard", "load", &u, "s", "--file", f]),
        "loaded s: 30000 items into 5 members\n"
    );
    for m in 0..5u32 {
        let member = conn.call(&["HGET", "s", &format!("member:{m}")]).text();
        let mine: Vec<String> = list
            .iter()
            .filter(|i| redbloom_client::shard::route(i.as_bytes(), 5) == m)
            .cloned()
            .collect();
        let reference = format!("ref:{m}");
        assert_eq!(
            conn.call(&["BF.RESERVE", &reference, "0.01", "2179"]),
            Reply::ok()
        );
        add_batched(&mut conn, "BF.MADD", &reference, &mine);
        assert_eq!(
            conn.call(&["DUMP", &member]).bytes(),
            conn.call(&["DUMP", &reference]).bytes(),
            "{member}"
        );
    }
    let found = ok(&["shard", "exists", &u, "s", "--file", f]);
    assert!(found.lines().all(|l| l == "1"));
    // Members that hold items already are not overwritten.
    let members: Vec<String> = (0..5)
        .map(|m| conn.call(&["HGET", "s", &format!("member:{m}")]).text())
        .collect();
    let held: i64 = members
        .iter()
        .map(|k| conn.call(&["BF.CARD", k]).int())
        .sum();
    let before: Vec<Vec<u8>> = members
        .iter()
        .map(|k| conn.call(&["DUMP", k]).bytes())
        .collect();
    assert_eq!(
        fails(&["shard", "load", &u, "s", "--file", f]),
        format!("redbloom: s: shard load needs empty members; they hold {held} items")
    );
    let after: Vec<Vec<u8>> = members
        .iter()
        .map(|k| conn.call(&["DUMP", k]).bytes())
        .collect();
    assert_eq!(after, before);
}

/// `load` and `shard load` build what the server itself would under its configs (issue 33):
/// with `bf-expansion-factor 4` and `cf-bucket-size 4`, byte for byte BF.RESERVE + BF.MADD
/// and CF.RESERVE + CF.ADD on that server; `--expansion 0` and `bf-expansion-factor 0`
/// non-scaling as the server makes them; `--error-rate` refused for cf.
#[test]
fn loads_follow_the_server_configs() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    for (name, value) in [("bf.bf-expansion-factor", "4"), ("bf.cf-bucket-size", "4")] {
        assert_eq!(
            conn.call(&["CONFIG", "SET", name, value]),
            Reply::ok(),
            "{name}"
        );
    }
    let dir = TempDir::new("load-configs");
    let list = items(20_000);
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let f = file.to_str().unwrap();
    let same = |conn: &mut RawConnection, a: &str, b: &str| {
        assert!(
            conn.call(&["DUMP", a]).bytes() == conn.call(&["DUMP", b]).bytes(),
            "DUMP of {a} differs from {b}"
        );
    };
    // Grows past its capacity: the links follow the server's expansion 4.
    ok(&[
        "load",
        &u,
        "bf",
        "--error-rate",
        "0.01",
        "--capacity",
        "3000",
        "--file",
        f,
    ]);
    assert_eq!(
        conn.call(&["BF.RESERVE", "ref-bf", "0.01", "3000"]),
        Reply::ok()
    );
    add_batched(&mut conn, "BF.MADD", "ref-bf", &list);
    same(&mut conn, "bf", "ref-bf");
    assert_eq!(
        conn.call(&["BF.INFO", "bf", "EXPANSION"]),
        Reply::Array(Some(vec![Reply::Int(4)]))
    );
    // EXPANSION 0: non-scaling, as BF.RESERVE … EXPANSION 0 makes it.
    let zero = [
        "--error-rate",
        "0.01",
        "--capacity",
        "30000",
        "--expansion",
        "0",
    ];
    let mut args = vec!["load", &u, "zero"];
    args.extend(zero);
    args.extend(["--file", f]);
    ok(&args);
    assert_eq!(
        conn.call(&["BF.RESERVE", "ref-zero", "0.01", "30000", "EXPANSION", "0"]),
        Reply::ok()
    );
    add_batched(&mut conn, "BF.MADD", "ref-zero", &list);
    same(&mut conn, "zero", "ref-zero");
    // Past its capacity a non-scaling filter refuses, here as on the server.
    let mut small = vec!["load", &u, "zero-small"];
    small.extend([
        "--error-rate",
        "0.01",
        "--capacity",
        "1000",
        "--expansion",
        "0",
    ]);
    small.extend(["--file", f]);
    assert!(fails(&small).starts_with("redbloom: item "));
    assert_eq!(conn.call(&["EXISTS", "zero-small"]), Reply::Int(0));

    // Cuckoo: the server's bucket size 4.
    ok(&[
        "load",
        &u,
        "cf",
        "--type",
        "cf",
        "--capacity",
        "8000",
        "--file",
        f,
    ]);
    assert_eq!(conn.call(&["CF.RESERVE", "ref-cf", "8000"]), Reply::ok());
    let adds: Vec<Vec<String>> = list
        .iter()
        .map(|i| vec!["CF.ADD".to_string(), "ref-cf".into(), i.clone()])
        .collect();
    conn.pipeline(&adds);
    same(&mut conn, "cf", "ref-cf");
    let info = conn.call(&["CF.INFO", "cf"]).array();
    assert_eq!(info[10].text(), "Bucket size");
    assert_eq!(info[11], Reply::Int(4));
    let run = crate::common::redbloom(&[
        "load",
        &u,
        "cf2",
        "--type",
        "cf",
        "--error-rate",
        "0.01",
        "--capacity",
        "8000",
    ]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "redbloom: --error-rate does not apply to cf filters (a Cuckoo filter's rate follows from its bucket size)\n"
    );

    // A sharded filter: the members `shard create` reserved are the ones `shard load` fills.
    ok(&[
        "shard",
        "create",
        &u,
        "s",
        "--shards",
        "3",
        "--error-rate",
        "0.01",
        "--capacity",
        "3000",
    ]);
    ok(&["shard", "load", &u, "s", "--file", f]);
    for m in 0..3u32 {
        let member = conn.call(&["HGET", "s", &format!("member:{m}")]).text();
        let capacity = conn.call(&["HGET", "s", "member_capacity"]).text();
        let reference = format!("ref-s{m}");
        assert_eq!(
            conn.call(&["BF.RESERVE", &reference, "0.01", &capacity]),
            Reply::ok()
        );
        let mine: Vec<String> = list
            .iter()
            .filter(|i| redbloom_client::shard::route(i.as_bytes(), 3) == m)
            .cloned()
            .collect();
        add_batched(&mut conn, "BF.MADD", &reference, &mine);
        same(&mut conn, &member, &reference);
    }

    // A sharded Cuckoo filter: each member as CF.RESERVE + CF.ADD of its share (bucket size 4).
    ok(&[
        "shard",
        "create",
        &u,
        "c",
        "--shards",
        "2",
        "--type",
        "cf",
        "--capacity",
        "16000",
    ]);
    ok(&["shard", "load", &u, "c", "--file", f]);
    let capacity = conn.call(&["HGET", "c", "member_capacity"]).text();
    for m in 0..2u32 {
        let member = conn.call(&["HGET", "c", &format!("member:{m}")]).text();
        let reference = format!("ref-c{m}");
        assert_eq!(
            conn.call(&["CF.RESERVE", &reference, &capacity]),
            Reply::ok()
        );
        let adds: Vec<Vec<String>> = list
            .iter()
            .filter(|i| redbloom_client::shard::route(i.as_bytes(), 2) == m)
            .map(|i| vec!["CF.ADD".to_string(), reference.clone(), i.clone()])
            .collect();
        conn.pipeline(&adds);
        same(&mut conn, &member, &reference);
    }

    // bf-expansion-factor 0: the server's new filters are non-scaling, so are loaded ones.
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bf.bf-expansion-factor", "0"]),
        Reply::ok()
    );
    ok(&[
        "load",
        &u,
        "ns",
        "--error-rate",
        "0.01",
        "--capacity",
        "30000",
        "--file",
        f,
    ]);
    assert_eq!(
        conn.call(&["BF.RESERVE", "ref-ns", "0.01", "30000"]),
        Reply::ok()
    );
    add_batched(&mut conn, "BF.MADD", "ref-ns", &list);
    same(&mut conn, "ns", "ref-ns");
}
