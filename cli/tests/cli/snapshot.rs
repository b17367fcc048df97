//! `redbloom export` + `redbloom check` answer as the server did; `Snapshot::fetch`,
//! `contains` and `refresh` (downloading again only after a change).

use crate::common::{fails, ok, url, write_items};
use crate::support::{Reply, Server, TempDir};
use redbloom_client::{Conn, Snapshot};

#[test]
fn export_and_check_answer_like_the_server() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    let dir = TempDir::new("snapshot");
    conn.call(&["BF.RESERVE", "bf", "0.01", "2000"]);
    conn.call(&["CF.RESERVE", "cf", "2000"]);
    conn.call(&["CBF.RESERVE", "cbf", "0.01", "2000"]);
    for i in 0..5000 {
        let item = format!("in:{i}");
        conn.call(&["BF.ADD", "bf", &item]);
        if i < 3000 {
            conn.call(&["CF.ADD", "cf", &item]);
            conn.call(&["CBF.ADD", "cbf", &item]);
        }
    }
    conn.call(&["CF.DEL", "cf", "in:7"]);
    conn.call(&["CBF.DEL", "cbf", "in:7"]);
    conn.call(&["CF.RESERVE", "empty", "100"]);
    let probes: Vec<String> = (0..5000)
        .map(|i| format!("in:{i}"))
        .chain((0..5000).map(|i| format!("out:{i}")))
        .collect();
    let probe_file = dir.0.join("probes.txt");
    write_items(&probe_file, probes.iter().cloned());
    for (key, exists) in [
        ("bf", "BF.MEXISTS"),
        ("cf", "CF.MEXISTS"),
        ("cbf", "CBF.MEXISTS"),
        ("empty", "CF.MEXISTS"),
    ] {
        let file = dir.0.join(format!("{key}.snap"));
        let out = ok(&["export", &u, key, file.to_str().unwrap()]);
        assert!(out.starts_with(&format!("exported {key} (")), "{out}");
        let data = std::fs::read(&file).unwrap();
        let family = if key == "empty" { "cf" } else { key };
        let end = data.iter().position(|&b| b == b'\n').unwrap() + 1;
        let line = format!("redbloom-snapshot 2 {family} {}\n", data.len() - end);
        assert_eq!(&data[..end], line.as_bytes(), "{key}");
        let mut server_answers = Vec::new();
        for part in probes.chunks(1000) {
            let mut cmd = vec![exists.to_string(), key.to_string()];
            cmd.extend(part.iter().cloned());
            server_answers.extend(conn.call(&cmd).ints());
        }
        let local: Vec<i64> = ok(&[
            "check",
            file.to_str().unwrap(),
            "--items-file",
            probe_file.to_str().unwrap(),
        ])
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
        assert_eq!(local, server_answers, "{key}");
        assert!(local.contains(&0));
    }
    assert_eq!(
        ok(&[
            "check",
            dir.0.join("bf.snap").to_str().unwrap(),
            "in:1",
            "nope:1"
        ]),
        "1\n0\n"
    );
    assert_eq!(
        ok(&[
            "--json",
            "check",
            dir.0.join("bf.snap").to_str().unwrap(),
            "in:1"
        ]),
        "[1]\n"
    );

    // Refusals.
    conn.call(&["SET", "s", "x"]);
    let f = dir.0.join("s.snap");
    assert_eq!(
        fails(&["export", &u, "s", f.to_str().unwrap()]),
        "redbloom: s is a key of type string, not a bf, cf, cbf, static or xf filter nor a sharded filter"
    );
    assert!(!f.exists());
    let name = f.to_str().unwrap();
    let refused = |bytes: &[u8]| {
        std::fs::write(&f, bytes).unwrap();
        fails(&["check", name, "a"])
    };
    assert_eq!(
        refused(b"hello\n"),
        format!("redbloom: {name}: not a redbloom snapshot file (no snapshot header line)")
    );
    let good = std::fs::read(dir.0.join("bf.snap")).unwrap();
    let line = good.iter().position(|&b| b == b'\n').unwrap() + 1;
    let body = good.len() - line;
    assert_eq!(
        refused(&good[..good.len() - 20]),
        format!(
            "redbloom: {name}: truncated snapshot file ({} of its {body} bytes after the header line)",
            body - 20
        )
    );
    // 64 zeroed bytes inside the bit array (issue 33: 381 false negatives and exit 0).
    let mut zeroed = good.clone();
    zeroed[line + 200..line + 264].fill(0);
    assert_ne!(zeroed, good);
    assert_eq!(
        refused(&zeroed),
        format!("redbloom: {name}: damaged snapshot file (its checksum does not match)")
    );
    let mut v1 = good.clone();
    v1[18] = b'1';
    assert_eq!(
        refused(&v1),
        format!("redbloom: {name}: snapshot file version 1; this redbloom reads version 2")
    );
    // A family this version does not know is refused, not read as another.
    let mut unknown = format!("redbloom-snapshot 2 topk {body}\n").into_bytes();
    unknown.extend_from_slice(&good[line..]);
    assert_eq!(
        refused(&unknown),
        format!(
            "redbloom: {name}: snapshot of an unknown filter type 'topk' (this redbloom reads bf, cf, cbf, static and xf)"
        )
    );
    // The same file as a cf snapshot: its checksum (over the line too) no longer matches.
    let mut relabelled = format!("redbloom-snapshot 2 cf {body}\n").into_bytes();
    relabelled.extend_from_slice(&good[line..]);
    assert_eq!(
        refused(&relabelled),
        format!("redbloom: {name}: damaged snapshot file (its checksum does not match)")
    );
    let missing = dir.0.join("missing.snap");
    assert!(fails(&["check", missing.to_str().unwrap(), "a"])
        .starts_with(&format!("redbloom: cannot read {}: ", missing.display())));
}

#[test]
fn snapshot_refreshes_only_after_a_change() {
    let server = Server::start();
    let mut conn = Conn::open(&url(&server)).unwrap();
    let mut raw = server.raw();
    raw.call(&["BF.MADD", "bf", "a", "b"]);
    let mut snap = Snapshot::fetch(&mut conn, "bf").unwrap();
    assert!(snap.contains(b"a") && !snap.contains(b"c"));
    assert!(!snap.refresh(&mut conn).unwrap());
    // An add of an item already there changes nothing.
    assert_eq!(raw.call(&["BF.ADD", "bf", "a"]), Reply::Int(0));
    assert!(!snap.refresh(&mut conn).unwrap());
    raw.call(&["BF.ADD", "bf", "c"]);
    assert!(snap.refresh(&mut conn).unwrap());
    assert!(snap.contains(b"c"));

    raw.call(&["CF.ADD", "cf", "a"]);
    let mut snap = Snapshot::fetch(&mut conn, "cf").unwrap();
    assert!(snap.contains(b"a"));
    assert!(!snap.refresh(&mut conn).unwrap());
    // A delete and an add keep the item count but move the delete count.
    raw.call(&["CF.DEL", "cf", "a"]);
    raw.call(&["CF.ADD", "cf", "b"]);
    assert!(snap.refresh(&mut conn).unwrap());
    assert!(!snap.contains(b"a") && snap.contains(b"b"));

    raw.call(&["CBF.ADD", "cbf", "a"]);
    let mut snap = Snapshot::fetch(&mut conn, "cbf").unwrap();
    assert!(
        snap.refresh(&mut conn).unwrap(),
        "a counting filter is always downloaded again"
    );
    assert!(snap.contains(b"a"));
}

/// One spelling everywhere (issue 33): `--file` for check's items (`--items-file` still
/// accepted), `-` for standard input / output (`export … -`, `check -`), and standard
/// input by default when no items are given.
#[test]
fn files_and_standard_streams() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    conn.call(&["BF.MADD", "bf", "a", "b"]);
    let dir = TempDir::new("snapshot-streams");
    let file = dir.0.join("bf.snap");
    let f = file.to_str().unwrap();
    ok(&["export", &u, "bf", f]);
    let run = |args: &[&str], stdin: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_redbloom"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // (A command that refuses its arguments may exit before reading standard input.)
        let _ = child.stdin.take().unwrap().write_all(stdin);
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            out.stdout,
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // `export … -`: the snapshot on standard output, byte for byte the file's.
    let (code, stdout, stderr) = run(&["export", &u, "bf", "-"], b"");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, std::fs::read(&file).unwrap());
    assert!(
        stderr.starts_with("exported bf (bf) to the standard output: "),
        "{stderr}"
    );
    // `check -`: the snapshot from standard input, the items as arguments or --file.
    let items = dir.0.join("items.txt");
    std::fs::write(&items, "a\nzz\n").unwrap();
    let snapshot = std::fs::read(&file).unwrap();
    let (code, stdout, _) = run(&["check", "-", "a", "c"], &snapshot);
    assert_eq!((code, stdout), (Some(0), b"1\n0\n".to_vec()));
    let (_, stdout, _) = run(
        &["check", "-", "--file", items.to_str().unwrap()],
        &snapshot,
    );
    assert_eq!(stdout, b"1\n0\n");
    // No items: standard input; `--file -` the same.
    let (_, stdout, _) = run(&["check", f], b"b\nnope\n");
    assert_eq!(stdout, b"1\n0\n");
    let (_, stdout, _) = run(&["check", f, "a", "--file", "-"], b"b\n");
    assert_eq!(stdout, b"1\n1\n");
    let (code, _, stderr) = run(&["check", "-"], &snapshot);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "redbloom: the snapshot and the items cannot both come from standard input (give the items or --file)\n"
    );
    // A damaged snapshot on standard input is named as such.
    let mut damaged = snapshot.clone();
    let at = damaged.len() - 30;
    damaged[at] ^= 1;
    let (code, _, stderr) = run(&["check", "-", "a"], &damaged);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "redbloom: standard input: damaged snapshot file (its checksum does not match)\n"
    );
}
