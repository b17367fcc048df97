//! Issue 43, items 6–8: redis-cli's habits. `-h -p -a --user -n --tls --cacert` as redis-cli
//! spells them (before or after the subcommand; then no URL is given), usage errors as
//! JSON with `--json`, and `--help` pages that offer only what a subcommand uses, in order.

use crate::common::{ok, redbloom};
use crate::support::{Reply, Server};

#[test]
fn redis_cli_options_name_the_server() {
    let server = Server::start();
    let mut conn = server.raw();
    let acl = [
        "ACL",
        "SETUSER",
        "alice",
        "on",
        ">hun@ter/2",
        "~*",
        "&*",
        "+@all",
    ];
    assert_eq!(conn.call(&acl), Reply::ok());
    conn.call(&["SELECT", "2"]);
    conn.call(&["BF.ADD", "f", "a"]);
    let port = server.port.to_string();
    let expected = "f: bf, 1 items";
    // After the subcommand, before it, mixed; a password with URL characters in it.
    for args in [
        vec![
            "inspect",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "--user",
            "alice",
            "-a",
            "hun@ter/2",
            "-n",
            "2",
            "f",
        ],
        vec![
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-n",
            "2",
            "--user",
            "alice",
            "-a",
            "hun@ter/2",
            "inspect",
            "f",
        ],
        vec![
            "-p",
            &port,
            "inspect",
            "--db",
            "2",
            "--user",
            "alice",
            "--pass",
            "hun@ter/2",
            "f",
        ],
    ] {
        assert!(ok(&args).starts_with(expected), "{args:?}");
    }
    // A wrong password: masked in the URL made of the options.
    let run = redbloom(&[
        "inspect", "-p", &port, "--user", "alice", "-a", "s3cret", "f",
    ]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        format!("redbloom: cannot connect to redis://alice:***@127.0.0.1:{port}/0: authentication failed (wrong user name or password)\n")
    );
    // --tls makes a rediss:// URL (this server speaks no TLS); --cacert is --tls-ca.
    let run = redbloom(&["--timeout", "2", "inspect", "-p", &port, "--tls", "f"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.starts_with(&format!(
            "redbloom: cannot connect to rediss://127.0.0.1:{port}/0: "
        )),
        "{}",
        run.stderr
    );
    let run = redbloom(&[
        "inspect",
        "-p",
        &port,
        "--tls",
        "--cacert",
        "/nonexistent/ca.pem",
        "f",
    ]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .starts_with("redbloom: cannot read /nonexistent/ca.pem: "),
        "{}",
        run.stderr
    );
    // `-h` is the host, not help: without a value it is a usage error.
    let run = redbloom(&["-h"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .starts_with("error: a value is required for '--host <HOST>'"),
        "{}",
        run.stderr
    );
    // The shard commands take them too.
    ok(&[
        "shard",
        "create",
        "-p",
        &port,
        "users",
        "--shards",
        "2",
        "--error-rate",
        "0.01",
        "--capacity",
        "100",
    ]);
    assert_eq!(
        ok(&["shard", "add", "-p", &port, "users", "x"]),
        "1 items, 1 newly added\n"
    );
    // An unset expansion: its name alone, without a trailing space (issue 43).
    let info = ok(&["shard", "info", "-p", &port, "users"]);
    assert!(info.contains("\nexpansion:\nnonscaling: 0\n"), "{info:?}");
}

/// A refusal of the core in words, not its debug name (`(Full)` before issue 43).
#[test]
fn refusals_are_in_plain_words() {
    let server = Server::start();
    let u = crate::common::url(&server);
    let dir = crate::support::TempDir::new("plain-words");
    let file = dir.0.join("items.txt");
    crate::common::write_items(&file, (0..500).map(|i| format!("i:{i}")));
    let run = redbloom(&[
        "load",
        &u,
        "k",
        "--error-rate",
        "0.01",
        "--capacity",
        "100",
        "--nonscaling",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, Some(1));
    let line = run.stderr.trim_end();
    assert!(line.starts_with("redbloom: item "), "{line}");
    assert!(
        line.ends_with(" of the input: the filter refuses it (the non-scaling filter is full)"),
        "{line}"
    );
}

#[test]
fn usage_errors_are_json_with_json() {
    for (args, message) in [
        (
            vec!["--json", "inspect"],
            "the following required arguments were not provided: <URL> <KEY>",
        ),
        (
            vec!["inspect", "--json", "redis://:pw@h:1", "k", "extra"],
            "unexpected argument 'extra' found",
        ),
        (
            vec!["--json", "--timeout", "0", "inspect", "h:1", "k"],
            "--timeout must be more than 0 and at most 86400 seconds",
        ),
    ] {
        let run = redbloom(&args);
        assert_eq!(run.code, Some(2), "{args:?}");
        assert_eq!(run.stdout, "");
        let error: serde_json::Value = serde_json::from_str(run.stderr.trim_end()).unwrap();
        assert_eq!(
            error,
            serde_json::json!({"error": {"kind": "usage", "message": message}}),
            "{args:?}"
        );
    }
}

/// The long options of one section (`Options:` or `Server options:`) of a help page.
fn section(help: &str, title: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
        .map(|w| w.trim_end_matches(',').to_string())
        .collect()
}

#[test]
fn help_pages_offer_what_each_subcommand_uses_in_order() {
    let help = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--help");
        ok(&all)
    };
    for offline in [vec!["check"], vec!["merge-snapshots"]] {
        let page = help(&offline);
        assert!(!page.contains("--timeout"), "{offline:?}");
        assert!(!page.contains("--tls-ca"), "{offline:?}");
    }
    let load = help(&["load"]);
    assert!(!load.contains("cbf"), "{load}");
    assert!(!help(&["shard", "create"]).contains("static"));
    for page in [
        help(&["load"]),
        help(&["inspect"]),
        help(&["shard", "add"]),
        help(&["merge"]),
    ] {
        assert!(page.contains("REDISCLI_AUTH"));
        let server = section(&page, "Server options:");
        assert_eq!(
            server, // by the name shown first: -a, -h, -n, -p
            [
                "--pass",
                "--host",
                "--db",
                "--port",
                "--timeout",
                "--tls",
                "--tls-ca",
                "--user"
            ]
        );
        let mut options = section(&page, "Options:");
        assert_eq!(options.pop().as_deref(), Some("--help"));
        let mut sorted = options.clone();
        sorted.sort();
        assert_eq!(options, sorted);
    }
}
