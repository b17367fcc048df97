//! `redbloom merge` and `redbloom merge-snapshots` (issue 35): the union answers 1 for every
//! item of every source and `inspect` shows its real rate; refusals leave DEST
//! byte-identical; a merge of snapshot files is the export of the server's merge of the same
//! filters. On a cluster and of sharded filters: merge_shard.rs.

use crate::common::{fails, ok, redbloom, url, write_items};
use crate::support::{RawConnection, Reply, Server, TempDir};

/// `prefix:<i>` for `range`.
fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}:{i}")).collect()
}

/// `command key items…`, 1,000 items per call; the replies as integers.
fn per_item(conn: &mut RawConnection, command: &str, key: &str, items: &[String]) -> Vec<i64> {
    let mut out = Vec::new();
    for part in items.chunks(1000) {
        let mut cmd = vec![command.to_string(), key.to_string()];
        cmd.extend(part.iter().cloned());
        match conn.call(&cmd) {
            Reply::Array(Some(values)) => out.extend(values.iter().map(Reply::int)),
            other => panic!("{command} {key}: {other:?}"),
        }
    }
    out
}

fn inspect(u: &str, key: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["--json", "inspect", u, key])).unwrap()
}

/// Two filters of 10,000 items each (capacity 10,000 at 1 %) merged: every one of the
/// 20,000 answers 1, and the rate measured on 200,000 absent items is within 1.5× of the
/// one `inspect` estimates from the fill — which also warns that it is above the target.
#[test]
fn a_union_holds_every_item_and_inspect_shows_its_rate() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let (a, b) = (items("a", 0..10_000), items("b", 0..10_000));
    for (key, its) in [("a", &a), ("b", &b)] {
        conn.call(&["BF.RESERVE", key, "0.01", "10000"]);
        assert!(per_item(&mut conn, "BF.MADD", key, its).contains(&1));
    }
    assert_eq!(
        ok(&["merge", &u, "ab", "a", "b"]),
        "merged 2 bf filter(s) into ab (BF.MERGE)\n"
    );
    let all: Vec<String> = a.iter().chain(&b).cloned().collect();
    assert!(per_item(&mut conn, "BF.MEXISTS", "ab", &all)
        .iter()
        .all(|&x| x == 1));
    let absent = items("out", 0..200_000);
    let hits = per_item(&mut conn, "BF.MEXISTS", "ab", &absent);
    let measured = hits.iter().filter(|&&x| x == 1).count() as f64 / absent.len() as f64;
    let report = inspect(&u, "ab");
    let link_fp = report["links"][0]["estimated_fp"].as_f64().unwrap();
    let estimate = report["estimated_fp"].as_f64().unwrap();
    assert_eq!(report["links"].as_array().unwrap().len(), 1);
    assert_eq!(link_fp, estimate);
    assert!(
        measured <= 1.5 * estimate && estimate <= 1.5 * measured,
        "measured {measured} vs estimated {estimate}"
    );
    // Over-full: far above the 1 % target, and inspect says so.
    assert!(estimate > 0.05, "{estimate}");
    let items = report["items"].as_u64().unwrap();
    assert!((19_000..=20_000).contains(&items), "{items}");
    assert_eq!(
        report["warnings"],
        serde_json::json!([
            format!("past capacity: {items} items in a filter reserved for 10000 (1 links)"),
            format!("estimated false-positive rate {estimate:.6} is above the target 0.01")
        ])
    );
    let text = ok(&["inspect", &u, "ab"]);
    assert!(
        text.contains(&format!("estimated FP {link_fp:.6} (target 0.005)")),
        "{text}"
    );
}

/// CBF.MERGE adds counts, CF.MERGE adds fingerprints, INTERSECT keeps what both hold,
/// OVERRIDE replaces DEST, a DEST that exists is merged in.
#[test]
fn counting_cuckoo_intersect_and_override() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let (a, b) = (items("x", 0..3000), items("x", 2000..5000));
    for prefix in ["BF", "CBF"] {
        for (key, its) in [("a", &a), ("b", &b)] {
            let key = format!("{prefix}{key}");
            conn.call(&[&format!("{prefix}.RESERVE"), &key, "0.01", "10000"]);
            per_item(&mut conn, &format!("{prefix}.MADD"), &key, its);
        }
    }
    conn.call(&["CF.RESERVE", "CFa", "4096"]);
    conn.call(&["CF.RESERVE", "CFb", "4096"]);
    for (key, its) in [("CFa", &a), ("CFb", &b)] {
        for item in its {
            assert_eq!(conn.call(&["CF.ADD", key, item]), Reply::Int(1));
        }
    }
    assert_eq!(
        ok(&["merge", &u, "cbf", "CBFa", "CBFb"]),
        "merged 2 cbf filter(s) into cbf (CBF.MERGE)\n"
    );
    assert_eq!(
        ok(&["merge", &u, "cf", "CFa", "CFb"]),
        "merged 2 cf filter(s) into cf (CF.MERGE)\n"
    );
    // Items in both sources count twice (a few more where positions or fingerprints collide).
    let both = items("x", 2000..3000);
    let counts: Vec<i64> = both
        .iter()
        .map(|i| conn.call(&["CBF.COUNT", "cbf", i]).int())
        .collect();
    assert!(counts.iter().all(|&c| c >= 2), "{counts:?}");
    let only_a = items("x", 0..1000);
    let cf_counts: Vec<i64> = only_a
        .iter()
        .chain(&both)
        .map(|i| conn.call(&["CF.COUNT", "cf", i]).int())
        .collect();
    assert!(cf_counts[..1000].iter().all(|&c| c >= 1));
    assert!(cf_counts[1000..].iter().all(|&c| c >= 2));
    assert_eq!(
        conn.call(&["CF.INFO", "cf"]).array()[7],
        Reply::Int(6000),
        "CF.INFO's items: the sum"
    );

    assert_eq!(
        ok(&["merge", &u, "and", "BFa", "BFb", "--intersect"]),
        "merged 2 bf filter(s) into and (BF.MERGE INTERSECT)\n"
    );
    assert!(per_item(&mut conn, "BF.MEXISTS", "and", &both)
        .iter()
        .all(|&x| x == 1));
    let outside = items("x", 5000..15000);
    let stray = per_item(&mut conn, "BF.MEXISTS", "and", &outside);
    assert!(stray.iter().filter(|&&x| x == 1).count() < 200);
    // DEST exists: merged in (a's items stay), unless --override (then only b's).
    conn.call(&["BF.RESERVE", "d", "0.01", "10000"]);
    per_item(&mut conn, "BF.MADD", "d", &items("d", 0..1000));
    ok(&["merge", &u, "d", "BFa"]);
    assert!(per_item(&mut conn, "BF.MEXISTS", "d", &items("d", 0..1000))
        .iter()
        .all(|&x| x == 1));
    ok(&["merge", &u, "d", "BFb", "--override"]);
    let gone = per_item(&mut conn, "BF.MEXISTS", "d", &items("d", 0..1000));
    assert!(gone.iter().filter(|&&x| x == 1).count() < 100, "replaced");
    assert!(per_item(&mut conn, "BF.MEXISTS", "d", &b)
        .iter()
        .all(|&x| x == 1));
}

/// Every refusal: exit code, one exact line naming the key (and DEST's node for the
/// server's own refusals), and DEST byte-identical afterwards.
#[test]
fn refusals_name_the_key_and_leave_dest_untouched() {
    let server = Server::start();
    let u = url(&server);
    let node = format!("127.0.0.1:{}", server.port);
    let mut conn = server.raw();
    conn.call(&["BF.RESERVE", "dest", "0.01", "1000"]);
    conn.call(&["BF.RESERVE", "same", "0.01", "1000"]);
    conn.call(&["BF.RESERVE", "other", "0.001", "1000"]);
    conn.call(&["BF.RESERVE", "grown", "0.01", "100"]);
    per_item(&mut conn, "BF.MADD", "dest", &items("d", 0..500));
    per_item(&mut conn, "BF.MADD", "grown", &items("g", 0..500));
    conn.call(&["CF.RESERVE", "cf", "1000"]);
    conn.call(&["CBF.RESERVE", "cbf", "0.01", "1000"]);
    conn.call(&["SET", "text", "x"]);
    conn.call(&["HSET", "hash", "f", "v"]);
    conn.call(&["SF.BUILD", "sf", "0.01", "ITEMS", "a", "b"]);
    let before = conn.call(&["DUMP", "dest"]);
    let cases: [(&[&str], i32, String); 9] = [
        (
            &["dest", "same", "other"],
            1,
            format!("redbloom: dest on {node}: ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: other"),
        ),
        (&["dest", "same", "nope"], 1, "redbloom: no key nope".into()),
        (
            &["dest", "same", "cbf"],
            1,
            "redbloom: cbf is a cbf filter, but same is a bf filter: only filters of one type merge".into(),
        ),
        (
            &["dest", "text"],
            1,
            "redbloom: text is a key of type string, not a bf, cf, cbf, static or xf filter nor a sharded filter".into(),
        ),
        (
            &["dest", "hash"],
            1,
            "redbloom: hash is a hash, not a filter (a sharded filter merges with `redbloom shard merge`)".into(),
        ),
        (
            &["dest", "grown", "--intersect"],
            1,
            format!("redbloom: dest on {node}: ERR INTERSECT needs filters of a single link: grown"),
        ),
        (
            &["dest", "cf", "--intersect"],
            2,
            "redbloom: --intersect applies to bf and cbf filters only (CF.MERGE is a union)".into(),
        ),
        (
            &["dest", "sf"],
            1,
            "redbloom: static filters do not merge: build one filter of the union of their items".into(),
        ),
        (
            &["dest", "cf"],
            1,
            format!("redbloom: dest on {node}: WRONGTYPE Operation against a key holding the wrong kind of value"),
        ),
    ];
    for (args, code, line) in cases {
        let mut all = vec!["merge", u.as_str()];
        all.extend_from_slice(args);
        let run = redbloom(&all);
        assert_eq!(run.code, Some(code), "{args:?}: {}", run.stderr);
        assert_eq!(fails(&all), line, "{args:?}");
        assert_eq!(conn.call(&["DUMP", "dest"]), before, "{args:?}");
    }
    // The same refusal as JSON.
    let run = redbloom(&["--json", "merge", &u, "dest", "nope"]);
    assert_eq!(
        run.stderr.trim_end(),
        r#"{"error":{"kind":"failed","message":"no key nope"}}"#
    );
    assert_eq!(conn.call(&["DUMP", "dest"]), before);
}

/// `merge-snapshots` of exported bf, cbf and cf filters writes exactly what `export` writes
/// of the server's merge of them; `check` answers 1 for every item; damaged, differing
/// and mixed inputs are refused naming the file, and OUT is not written.
#[test]
fn merge_snapshots_is_the_export_of_the_server_merge() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("merge-snapshots");
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_string();
    let (a, b) = (items("a", 0..2000), items("b", 0..3000));
    for (family, add) in [("bf", "BF.MADD"), ("cbf", "CBF.MADD"), ("cf", "CF.ADD")] {
        let (ka, kb) = (format!("{family}a"), format!("{family}b"));
        for (key, its) in [(&ka, &a), (&kb, &b)] {
            if family == "cf" {
                conn.call(&["CF.RESERVE", key, "2048"]);
                for item in its {
                    conn.call(&[add, key, item]);
                }
            } else {
                let reserve = format!("{}.RESERVE", family.to_uppercase());
                conn.call(&[&reserve, key, "0.01", "1000"]);
                per_item(&mut conn, add, key, its);
            }
            ok(&["export", &u, key, &path(&format!("{key}.snap"))]);
        }
        let out = path(&format!("{family}.snap"));
        let printed = ok(&[
            "merge-snapshots",
            &out,
            &path(&format!("{ka}.snap")),
            &path(&format!("{kb}.snap")),
        ]);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(
            printed,
            format!(
                "merged 2 {family} snapshot(s) into {out}: {} bytes\n",
                bytes.len()
            )
        );
        let merged = format!("{family}ab");
        ok(&["merge", &u, &merged, &ka, &kb]);
        ok(&["export", &u, &merged, &path("server.snap")]);
        assert_eq!(
            bytes,
            std::fs::read(path("server.snap")).unwrap(),
            "{family}"
        );
        let all: Vec<String> = a.iter().chain(&b).cloned().collect();
        write_items(&dir.0.join("all.txt"), all.into_iter());
        let answers = ok(&["check", &out, "--file", &path("all.txt")]);
        assert_eq!(answers, "1\n".repeat(5000), "{family}");
    }
    // Standard output, then as an input again.
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(["merge-snapshots", "-", &path("bfa.snap"), &path("bfb.snap")])
        .output()
        .unwrap();
    assert!(run.status.success());
    let bf = std::fs::read(path("bf.snap")).unwrap();
    assert_eq!(run.stdout, bf);
    assert_eq!(
        String::from_utf8_lossy(&run.stderr),
        format!(
            "merged 2 bf snapshot(s) into the standard output: {} bytes\n",
            bf.len()
        )
    );

    let mut damaged = std::fs::read(path("bfb.snap")).unwrap();
    let at = damaged.len() / 2;
    damaged[at] ^= 1;
    std::fs::write(path("damaged.snap"), damaged).unwrap();
    conn.call(&["BF.RESERVE", "small", "0.01", "500"]);
    ok(&["export", &u, "small", &path("small.snap")]);
    conn.call(&["SF.BUILD", "sf", "0.01", "ITEMS", "a", "b"]);
    ok(&["export", &u, "sf", &path("sf.snap")]);
    let out = path("never.snap");
    for (inputs, line) in [
        (
            vec![path("bfa.snap"), path("damaged.snap")],
            format!("redbloom: {}: damaged snapshot file (its checksum does not match)", path("damaged.snap")),
        ),
        (
            vec![path("bfa.snap"), path("small.snap")],
            format!(
                "redbloom: {}: a filter of another shape than {}'s (error rate, capacity, expansion, scaling, layout): they cannot be merged",
                path("small.snap"),
                path("bfa.snap")
            ),
        ),
        (
            vec![path("bfa.snap"), path("cfa.snap")],
            format!(
                "redbloom: {}: a cf snapshot, and {} is a bf one: only filters of one type merge",
                path("cfa.snap"),
                path("bfa.snap")
            ),
        ),
        (
            vec![path("sf.snap"), path("sf.snap")],
            "redbloom: static filters do not merge: build one filter of the union of their items".to_string(),
        ),
        (
            vec![path("bfa.snap"), path("missing.snap")],
            format!(
                "redbloom: cannot read {}: No such file or directory (os error 2)",
                path("missing.snap")
            ),
        ),
    ] {
        let mut args = vec!["merge-snapshots".to_string(), out.clone()];
        args.extend(inputs);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(redbloom(&args).code, Some(1));
        assert_eq!(fails(&args), line);
        assert!(!dir.0.join("never.snap").exists());
    }
    // bfa has 2 links: no intersection.
    let run = redbloom(&[
        "merge-snapshots",
        &out,
        &path("bfa.snap"),
        &path("bfb.snap"),
        "--intersect",
    ]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "redbloom: {}: --intersect needs filters of a single link, and this one has more",
            path("bfa.snap")
        )
    );
    assert!(!dir.0.join("never.snap").exists());
}
