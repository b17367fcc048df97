//! `redbloom load --type static` (issue 36): the static filter built locally and shipped
//! with SF.LOADCHUNK is byte for byte `SF.BUILD key rate ITEMS …` of the same items, in
//! any order and with duplicates; every item answers 1; refusals (options that do not
//! apply, an existing key, the server's ceiling) write nothing; `inspect`, `export` and
//! `check` read the filter.

use crate::common::{fails, ok, redbloom, url, write_items};
use crate::support::{scandump, RawConnection, Reply, Server, TempDir};

/// `n` items, one in 89 a repeat of an earlier one.
fn items(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("user:{}", if i % 89 == 7 { i - 7 } else { i }))
        .collect()
}

/// A directory named `name` holding `items.txt` with [`items`]`(n)`, one per line: the
/// directory (removed when dropped), the items and the file's path.
fn items_file(name: &str, n: usize) -> (TempDir, Vec<String>, String) {
    let dir = TempDir::new(name);
    let list = items(n);
    let file = dir.0.join("items.txt");
    write_items(&file, list.iter().cloned());
    let path = file.to_str().unwrap().to_string();
    (dir, list, path)
}

/// `SF.BUILD key rate ITEMS items…` in one command.
fn build(conn: &mut RawConnection, key: &str, rate: &str, items: &[String]) {
    let mut cmd = vec![
        "SF.BUILD".to_string(),
        key.into(),
        rate.into(),
        "ITEMS".into(),
    ];
    cmd.extend(items.iter().cloned());
    assert_eq!(conn.call(&cmd), Reply::ok(), "SF.BUILD {key}");
}

/// Every item answers 1 in `key` (SF.MEXISTS, 1,000 at a time).
fn all_present(conn: &mut RawConnection, key: &str, items: &[String]) {
    for part in items.chunks(1000) {
        let mut cmd = vec!["SF.MEXISTS".to_string(), key.to_string()];
        cmd.extend(part.iter().cloned());
        let answers = conn.call(&cmd).ints();
        assert_eq!(answers.len(), part.len());
        assert!(answers.iter().all(|&x| x == 1), "{key}");
    }
}

#[test]
fn static_load_is_byte_identical_to_sf_build() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("load-static");
    for (n, rate) in [
        (1usize, "0.01"),
        (30_000, "0.01"),
        (30_000, "0.001"),
        (5_000, "0.3"),
    ] {
        let list = items(n);
        let file = dir.0.join(format!("items-{n}-{rate}.txt"));
        // The file in reverse order: the filter is one of the distinct items alone.
        write_items(&file, list.iter().rev().cloned());
        let key = format!("loaded:{n}:{rate}");
        let reference = format!("built:{n}:{rate}");
        let out = ok(&[
            "load",
            &u,
            &key,
            "--type",
            "static",
            "--error-rate",
            rate,
            "--file",
            file.to_str().unwrap(),
        ]);
        let bytes = scandump(&mut conn, "SF.SCANDUMP", &key)
            .iter()
            .map(|(_, d)| d.as_ref().map_or(0, Vec::len))
            .sum::<usize>();
        assert_eq!(
            out,
            format!("loaded {key}: {n} items, {bytes} bytes in 2 chunks\n")
        );
        build(&mut conn, &reference, rate, &list);
        assert!(
            conn.call(&["DUMP", &key]).bytes() == conn.call(&["DUMP", &reference]).bytes(),
            "DUMP differs: {n} items at {rate}"
        );
        assert!(
            scandump(&mut conn, "SF.SCANDUMP", &key)
                == scandump(&mut conn, "SF.SCANDUMP", &reference),
            "SCANDUMP differs: {n} items at {rate}"
        );
        assert_eq!(
            conn.call(&["SF.INFO", &key]),
            conn.call(&["SF.INFO", &reference])
        );
        let distinct = list.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(conn.call(&["SF.CARD", &key]), Reply::Int(distinct as i64));
        all_present(&mut conn, &key, &list);
    }
    // No temporary key is left.
    assert!(
        conn.sorted_keys()
            .iter()
            .all(|k| k.starts_with("loaded:") || k.starts_with("built:")),
        "{:?}",
        conn.sorted_keys()
    );

    // Standard input, JSON.
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["--json", "load", &u, "stdin", "--type", "static"])
        .args(["--error-rate", "0.01"])
        .stdin(std::fs::File::open(dir.0.join("items-30000-0.01.txt")).unwrap())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(out["items"], 30_000);
    assert_eq!(out["chunks"], 2);
    assert!(
        conn.call(&["DUMP", "stdin"]).bytes() == conn.call(&["DUMP", "built:30000:0.01"]).bytes()
    );
}

#[test]
fn static_load_refusals_write_nothing() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let (dir, _, f) = items_file("load-static-refusals", 2_000);
    let f = f.as_str();
    let load = |key: &str, options: &[&str]| {
        let mut args = vec!["load", &u, key, "--type", "static"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["--file", f]);
        let run = redbloom(&args);
        assert!(!run.ok, "{args:?} succeeded");
        assert_eq!(run.stdout, "");
        (run.code, run.stderr.trim_end().to_string())
    };
    let usage = [
        (&[][..], "--error-rate is required for static filters"),
        (
            &["--error-rate", "0.01", "--capacity", "2000"][..],
            "--capacity does not apply to static filters (sized from their distinct items)",
        ),
        (
            &["--error-rate", "0.01", "--expansion", "2"][..],
            "--expansion does not apply to static filters (sized from their distinct items)",
        ),
        (
            &["--error-rate", "0.01", "--nonscaling"][..],
            "--nonscaling does not apply to static filters (sized from their distinct items)",
        ),
        (
            &["--error-rate", "0.5"][..],
            "--error-rate must be below 0.5 and at least 2^-32 for static filters",
        ),
        (
            &["--error-rate", "1e-10"][..],
            "--error-rate must be below 0.5 and at least 2^-32 for static filters",
        ),
    ];
    for (options, message) in usage {
        assert_eq!(
            load("x", options),
            (Some(2), format!("redbloom: {message}")),
            "{options:?}"
        );
    }
    // The ceiling the server's SF.BUILD and SF.LOADCHUNK keep to (at least 1 MiB: a
    // filter of 300,000 items at 30-bit fingerprints).
    let big = items(300_000);
    let big_file = dir.0.join("big.txt");
    write_items(&big_file, big.iter().cloned());
    let g = big_file.to_str().unwrap();
    build(&mut conn, "ref", "1e-9", &big);
    let size = conn.call(&["SF.INFO", "ref", "SIZE"]).ints()[0];
    let ceiling = |conn: &mut RawConnection, bytes: i64| {
        let reply = conn.call(&["CONFIG", "SET", "bf.max-filter-bytes", &bytes.to_string()]);
        assert_eq!(reply, Reply::ok());
    };
    // The same load, refused under a ceiling one byte short and then accepted.
    let load_x = [
        "load",
        u.as_str(),
        "x",
        "--type",
        "static",
        "--error-rate",
        "1e-9",
        "--file",
        g,
    ];
    ceiling(&mut conn, size - 1);
    let run = redbloom(&load_x);
    assert_eq!(
        (run.code, run.stderr.trim_end()),
        (
            Some(1),
            format!(
                "redbloom: x: the static filter of these items would exceed the server's \
                 bf.max-filter-bytes ({} bytes)",
                size - 1
            )
            .as_str()
        )
    );
    assert_eq!(conn.sorted_keys(), vec!["ref".to_string()]);
    ceiling(&mut conn, size);
    ok(&load_x);
    assert!(conn.call(&["DUMP", "x"]).bytes() == conn.call(&["DUMP", "ref"]).bytes());
    // An existing key, of any type, is left alone.
    assert_eq!(
        load("x", &["--error-rate", "1e-9"]),
        (Some(1), "redbloom: x already exists".to_string())
    );
    assert!(conn.call(&["DUMP", "x"]).bytes() == conn.call(&["DUMP", "ref"]).bytes());
    assert_eq!(conn.sorted_keys(), vec!["ref".to_string(), "x".to_string()]);
    // A static filter is never reserved: neither sharded nor a bf/cf option set.
    let not_reserved = "redbloom: a static filter is built whole from its items (redbloom load --type static), never reserved: sharded filters are bf, cf or cbf";
    assert_eq!(
        fails(&[
            "shard",
            "create",
            &u,
            "s",
            "--shards",
            "2",
            "--error-rate",
            "0.01",
            "--capacity",
            "100",
            "--type",
            "static"
        ]),
        not_reserved
    );
    assert_eq!(
        fails(&["load", &u, "b", "--error-rate", "0.01", "--file", f]),
        "redbloom: --capacity is required for bf filters"
    );
    assert_eq!(conn.sorted_keys(), vec!["ref".to_string(), "x".to_string()]);
}

/// `inspect` shows a static filter's fingerprints; `export` and `check` answer as the
/// server does.
#[test]
fn static_filters_are_inspected_exported_and_checked() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let (dir, list, f) = items_file("static-inspect", 10_000);
    let f = f.as_str();
    ok(&[
        "load",
        &u,
        "st",
        "--type",
        "static",
        "--error-rate",
        "0.01",
        "--file",
        f,
    ]);
    let info = conn.call(&["SF.INFO", "st"]).array();
    let field = |i: usize| info[i].clone();
    let (items, bits, size) = (field(1).int(), field(3).int(), field(9).int());
    let memory = conn.call(&["MEMORY", "USAGE", "st"]).int();
    let bits_per_item = size as f64 * 8.0 / items as f64;
    let debug = conn.call(&["SF.DEBUG", "st"]).array()[1].text();
    let slots: u64 = debug
        .split(' ')
        .find_map(|w| w.strip_prefix("slots:"))
        .unwrap()
        .parse()
        .unwrap();
    // A ribbon: 6 bits, some blocks 7; the rate is their mix.
    assert_eq!(bits, 6);
    let rate: f64 = String::from_utf8(info[7].bytes()).unwrap().parse().unwrap();
    assert!(rate <= 0.01 && rate > 0.0078, "{rate}");
    assert_eq!(
        ok(&["inspect", &u, "st"]),
        format!(
            "st: static, {items} items, memory {memory} bytes\n  \
             fingerprints: 6 bits in {slots} slots, {bits_per_item:.2} bits per item, memory {size} bytes\n\
             estimated false-positive rate: {rate:.6} (target 0.01)\n"
        )
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "inspect", &u, "st"])).unwrap();
    assert_eq!(json["type"], "static");
    // Built for its items (issue 43): no capacity, in text or JSON.
    assert_eq!(json.get("capacity"), None);
    assert_eq!(json["fingerprints"]["bits"], 6);
    assert_eq!(json["fingerprints"]["slots"], slots);
    assert_eq!(json["fingerprints"]["memory"], size);
    // serde_json parses floats to within an ulp.
    assert!((json["estimated_fp"].as_f64().unwrap() - rate).abs() < 1e-15);
    assert_eq!(json["target_fp"], 0.01);

    let snap = dir.0.join("st.snap");
    let out = ok(&["export", &u, "st", snap.to_str().unwrap()]);
    assert!(out.starts_with("exported st (static) to "), "{out}");
    let file_bytes = std::fs::read(&snap).unwrap();
    assert!(file_bytes.starts_with(b"redbloom-snapshot 2 static "));
    let probes: Vec<String> = list
        .iter()
        .cloned()
        .chain((0..3000).map(|i| format!("absent:{i}")))
        .collect();
    let probe_file = dir.0.join("probes.txt");
    write_items(&probe_file, probes.iter().cloned());
    let answers: Vec<i64> = ok(&[
        "check",
        snap.to_str().unwrap(),
        "--file",
        probe_file.to_str().unwrap(),
    ])
    .lines()
    .map(|l| l.parse().unwrap())
    .collect();
    let mut server_answers = Vec::new();
    for part in probes.chunks(1000) {
        let mut cmd = vec!["SF.MEXISTS".to_string(), "st".into()];
        cmd.extend(part.iter().cloned());
        server_answers.extend(conn.call(&cmd).ints());
    }
    assert_eq!(answers, server_answers);
    assert!(answers[..list.len()].iter().all(|&a| a == 1));
    // Some absent items are false positives, most are not.
    let false_positives = answers[list.len()..].iter().filter(|&&a| a == 1).count();
    assert!((1..100).contains(&false_positives), "{false_positives}");
}
