//! `redbloom load --type xf` (issue 47): the expandable filter built locally and shipped
//! with XF.LOADCHUNK under a temporary key, renamed into place once whole, is byte for
//! byte what `XF.RESERVE` + `XF.MADD` of the same items in the same order make; refusals
//! write nothing; `inspect`, `export` and `check` read XF keys and snapshots; a load
//! interrupted mid-ship leaves the key absent.

use crate::common::{fails, ok, url, write_items};
use crate::support::{scandump, RawConnection, Reply, Server, TempDir};

/// `n` items, one in 53 a repeat of an earlier one (XF holds a repeat twice, as XF.MADD).
fn items(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("user:{}", if i % 53 == 9 { i - 9 } else { i }))
        .collect()
}

/// `XF.MADD key items…`, 1,000 items a command.
fn madd(conn: &mut RawConnection, key: &str, items: &[String]) {
    for part in items.chunks(1000) {
        let mut cmd = vec!["XF.MADD".to_string(), key.to_string()];
        cmd.extend(part.iter().cloned());
        assert!(conn.call(&cmd).ints().iter().all(|&x| x == 1), "{key}");
    }
}

/// The value `key` holds, as XF.SCANDUMP gives it.
fn dump(conn: &mut RawConnection, key: &str) -> Vec<(i64, Option<Vec<u8>>)> {
    scandump(conn, "XF.SCANDUMP", key)
}

/// Items, the load's options, and the reference's XF.RESERVE rate and capacity (`None`:
/// XF.MADD's defaults).
type Case<'a> = (usize, &'a [&'a str], Option<[&'a str; 2]>);

#[test]
fn xf_load_is_byte_identical_to_xf_madd() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("load-xf");
    let cases: [Case; 4] = [
        (1, &[], None),
        (20_000, &[], None),
        (
            20_000,
            &["--error-rate", "0.001", "--capacity", "5000"],
            Some(["0.001", "5000"]),
        ),
        (3_000, &["--capacity", "1"], Some(["0.01", "1"])),
    ];
    for (case, (n, options, reserve)) in cases.iter().enumerate() {
        let list = items(*n);
        let file = dir.0.join(format!("items-{case}.txt"));
        write_items(&file, list.iter().cloned());
        let key = format!("loaded:{case}");
        let reference = format!("made:{case}");
        let mut args = vec!["load", &u, &key, "--type", "xf"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["--file", file.to_str().unwrap()]);
        let out = ok(&args);
        if let Some([rate, capacity]) = reserve {
            let reply = conn.call(&["XF.RESERVE", &reference, rate, "CAPACITY", capacity]);
            assert_eq!(reply, Reply::ok());
        }
        madd(&mut conn, &reference, &list);
        let loaded = dump(&mut conn, &key);
        assert!(loaded == dump(&mut conn, &reference), "case {case}");
        let bytes: usize = loaded
            .iter()
            .map(|(_, d)| d.as_ref().map_or(0, Vec::len))
            .sum();
        // The header and the data chunks (of at most 1 MiB each).
        let chunks = loaded.len() - 1;
        assert_eq!(
            out,
            format!("loaded {key}: {n} items, {bytes} bytes in {chunks} chunks\n"),
            "case {case}"
        );
        assert!(
            conn.call(&["DUMP", &key]).bytes() == conn.call(&["DUMP", &reference]).bytes(),
            "case {case}"
        );
        assert_eq!(conn.call(&["XF.CARD", &key]), Reply::Int(*n as i64));
        assert_eq!(
            conn.call(&["TYPE", &key]),
            Reply::Simple("RBexpandF".into())
        );
    }
    // No temporary key is left.
    let mut expected: Vec<String> = (0..4)
        .flat_map(|c| [format!("loaded:{c}"), format!("made:{c}")])
        .collect();
    expected.sort();
    assert_eq!(conn.sorted_keys(), expected);
}

#[test]
fn xf_load_refusals_write_nothing() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("load-xf-refusals");
    let file = dir.0.join("items.txt");
    write_items(&file, items(500).into_iter());
    let f = file.to_str().unwrap();
    let grows = "redbloom: --expansion, --nonscaling and --blocked do not apply to xf filters (they grow by themselves)";
    for (options, message) in [
        (&["--expansion", "2"][..], grows),
        (&["--nonscaling"][..], grows),
        (
            &["--error-rate", "1e-10"][..],
            "redbloom: --error-rate must be at least 1e-9 and below 1 for xf filters",
        ),
        (
            &["--error-rate", "1"][..],
            "redbloom: --error-rate must be at least 1e-9 and below 1 for xf filters",
        ),
        (
            &["--capacity", "0"][..],
            "redbloom: --capacity must be between 1 and 2^40 for xf filters",
        ),
        (
            &["--capacity", "1099511627777"][..],
            "redbloom: --capacity must be between 1 and 2^40 for xf filters",
        ),
    ] {
        let mut args = vec!["load", &u, "x", "--type", "xf"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["--file", f]);
        assert_eq!(fails(&args), message, "{options:?}");
    }
    assert_eq!(conn.sorted_keys(), Vec::<String>::new());
    // An existing key, of any type, is left alone.
    assert_eq!(conn.call(&["SET", "x", "v"]), Reply::ok());
    assert_eq!(
        fails(&["load", &u, "x", "--type", "xf", "--file", f]),
        "redbloom: x already exists"
    );
    assert_eq!(conn.call(&["GET", "x"]), Reply::bulk("v"));
    // Never a sharded filter's member; never merged.
    assert_eq!(
        fails(&["shard", "create", &u, "s", "--shards", "2", "--type", "xf"]),
        "redbloom: an expandable filter grows by itself (redbloom load --type xf): sharded filters are bf, cf or cbf"
    );
    madd(&mut conn, "a", &items(10));
    madd(&mut conn, "b", &items(10));
    assert_eq!(
        fails(&["merge", &u, "d", "a", "b"]),
        "redbloom: expandable filters do not merge: add the items of one to the other"
    );
    assert_eq!(conn.sorted_keys(), ["a", "b", "x"]);
}

/// `inspect` shows XF.INFO's figures; `export` writes the snapshot `check` answers from
/// as the server does.
#[test]
fn xf_filters_are_inspected_exported_and_checked() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("xf-inspect");
    let list = items(10_000);
    madd(&mut conn, "xf", &list);
    let info = conn.call(&["XF.INFO", "xf"]).array();
    let (items, capacity) = (info[3].int(), info[5].int());
    let bound: f64 = info[15].text().parse().unwrap();
    let memory = conn.call(&["MEMORY", "USAGE", "xf"]).int();
    assert_eq!(
        ok(&["inspect", &u, "xf"]),
        format!(
            "xf: xf, {items} items, capacity {capacity}, memory {memory} bytes\n\
             estimated false-positive rate: {bound:.6} (target 0.01)\n"
        )
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "inspect", &u, "xf"])).unwrap();
    assert_eq!(json["type"], "xf");
    assert_eq!(json["items"], items);
    assert_eq!(json["capacity"], capacity);
    assert_eq!(json["links"], serde_json::json!([]));
    assert!((json["estimated_fp"].as_f64().unwrap() - bound).abs() < 1e-15);
    assert_eq!(json["target_fp"], 0.01);

    let snap = dir.0.join("xf.snap");
    let out = ok(&["export", &u, "xf", snap.to_str().unwrap()]);
    let file_bytes = std::fs::read(&snap).unwrap();
    assert_eq!(
        out,
        format!(
            "exported xf (xf) to {}: {} bytes\n",
            snap.display(),
            file_bytes.len()
        )
    );
    assert!(file_bytes.starts_with(b"redbloom-snapshot 2 xf "));
    // Present items, absent ones (a few false positives), and the server's answers.
    let probes: Vec<String> = list
        .iter()
        .step_by(7)
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
        let mut cmd = vec!["XF.MEXISTS".to_string(), "xf".to_string()];
        cmd.extend(part.iter().cloned());
        server_answers.extend(conn.call(&cmd).ints());
    }
    assert_eq!(answers, server_answers);
    assert!(answers[..list.len().div_ceil(7)].iter().all(|&a| a == 1));
    // A damaged file is refused before anything is answered.
    let mut damaged = file_bytes.clone();
    let at = damaged.len() - 100;
    damaged[at] ^= 1;
    let bad = dir.0.join("bad.snap");
    std::fs::write(&bad, &damaged).unwrap();
    assert_eq!(
        fails(&["check", bad.to_str().unwrap(), "user:1"]),
        format!(
            "redbloom: {}: damaged snapshot file (its checksum does not match)",
            bad.display()
        )
    );
    // A snapshot whose partitions do not add up to its header (checksum redone): refused
    // by the XF loader's final checks, naming the file.
    let forged = forge_missing_chunk(&file_bytes);
    let forged_path = dir.0.join("forged.snap");
    std::fs::write(&forged_path, &forged).unwrap();
    let refusal = fails(&["check", forged_path.to_str().unwrap(), "user:1"]);
    assert_eq!(
        refusal,
        format!(
            "redbloom: {}: the dump does not load (malformed or inconsistent XF data)",
            forged_path.display()
        )
    );
}

/// The snapshot `file` whose XF header announces 8 bytes of partitions more than its
/// chunks hold (its length line and checksum redone): every record passes, the totals do
/// not.
fn forge_missing_chunk(file: &[u8]) -> Vec<u8> {
    use redbloom_core::client_logic::snapshot::{decode, encode};
    let (family, mut chunks) = decode("f", file).unwrap();
    let header = &mut chunks[0].1;
    let data = u64::from_le_bytes(header[52..60].try_into().unwrap());
    header[52..60].copy_from_slice(&(data + 8).to_le_bytes());
    encode(family, &chunks)
}
