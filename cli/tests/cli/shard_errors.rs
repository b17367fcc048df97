//! Sharded filters on one server (all members on it), and the bad inputs: each a one-line
//! error, exit code 1 and nothing written.

use crate::common::{fails, ok, url, write_items};
use crate::support::{Reply, Server, TempDir};

/// `[--json] shard create URL NAME --shards N --error-rate E --capacity C`.
fn create_args<'a>(
    u: &'a str,
    name: &'a str,
    shards: &'a str,
    rate: &'a str,
    capacity: &'a str,
    json: bool,
) -> Vec<&'a str> {
    let mut args = if json { vec!["--json"] } else { vec![] };
    args.extend([
        "shard",
        "create",
        u,
        name,
        "--shards",
        shards,
        "--error-rate",
        rate,
        "--capacity",
        capacity,
    ]);
    args
}

fn create(u: &str, name: &str) {
    ok(&create_args(u, name, "4", "0.01", "1000", false));
}

/// Every key and its type, to compare before and after a refused command.
fn snapshot(server: &Server) -> Vec<(String, Vec<u8>)> {
    let mut conn = server.raw();
    conn.sorted_keys()
        .into_iter()
        .map(|k| {
            let dump = conn.call(&["DUMP", &k]).bytes();
            (k, dump)
        })
        .collect()
}

#[test]
fn one_server_holds_every_member() {
    let server = Server::start();
    let u = url(&server);
    let out = ok(&create_args(&u, "f", "4", "0.01", "1000", true));
    let created: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(created["member_capacity"], 314);
    let members: Vec<String> = created["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        members,
        ["{s0.0}:f", "{s1.2}:f", "{s2.0}:f", "{s3.2}:f"].map(String::from)
    );
    let mut conn = server.raw();
    for m in &members {
        assert_eq!(
            conn.call(&["BF.INFO", m, "CAPACITY"]),
            Reply::Array(Some(vec![Reply::Int(314)]))
        );
    }
    assert_eq!(
        conn.call(&["HGET", "f", "routing"]),
        Reply::bulk("xxh3_64(item) mod shards")
    );

    assert_eq!(
        ok(&["shard", "add", &u, "f", "a", "b", "c", "a"]),
        "4 items, 3 newly added\n"
    );
    assert_eq!(
        ok(&["shard", "exists", &u, "f", "a", "zz", "c"]),
        "1\n0\n1\n"
    );
    assert_eq!(
        ok(&["--json", "shard", "exists", &u, "f", "b", "zz"]),
        "[1,0]\n"
    );
    // Items on the command line, then a file's: two batches, one count and one answer list.
    let dir = TempDir::new("shard-input");
    let file = dir.0.join("items.txt");
    write_items(&file, ["d", "a", "zz2"].map(String::from).into_iter());
    let f = file.to_str().unwrap();
    assert_eq!(
        ok(&["shard", "add", &u, "f", "e", "d", "--file", f]),
        "5 items, 3 newly added\n"
    );
    assert_eq!(
        ok(&["--json", "shard", "exists", &u, "f", "q", "e", "--file", f]),
        "[0,1,1,1,1]\n"
    );
    assert_eq!(ok(&["shard", "exists", &u, "f", "--file", f]), "1\n1\n1\n");
    // Each item went to the member the rule names.
    for item in ["a", "b", "c", "d", "e", "zz2"] {
        let m = &members[redbloom_client::shard::route(item.as_bytes(), 4) as usize];
        assert_eq!(conn.call(&["BF.EXISTS", m, item]), Reply::Int(1), "{item}");
    }
    let info = ok(&["--json", "shard", "info", &u, "f"]);
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["items"], 6);
    assert_eq!(info["descriptor"]["shards"], 4);
    assert_eq!(info["members"].as_array().unwrap().len(), 4);

    assert_eq!(ok(&["shard", "drop", &u, "f"]), "dropped f (4 members)\n");
    assert_eq!(conn.call(&["DBSIZE"]), Reply::Int(0));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    create(&u, "f");
    ok(&["shard", "add", &u, "f", "x", "y"]);
    conn.call(&["SET", "plain", "v"]);
    let before = snapshot(&server);

    // NAME exists but is not a descriptor.
    assert_eq!(
        fails(&["shard", "add", &u, "plain", "a"]),
        "redbloom: plain is not a sharded filter descriptor (a key of type string)"
    );
    assert_eq!(
        fails(&create_args(&u, "plain", "2", "0.01", "10", false)),
        "redbloom: plain already exists"
    );
    conn.call(&["HSET", "h", "a", "b"]);
    assert_eq!(
        fails(&["shard", "exists", &u, "h", "a"]),
        "redbloom: h is not a sharded filter descriptor (no format field 'redbloom-sharded-filter')"
    );
    conn.call(&["DEL", "h"]);
    assert_eq!(
        fails(&["shard", "info", &u, "nothing"]),
        "redbloom: no sharded filter nothing (no such key)"
    );
    assert_eq!(snapshot(&server), before);

    // A descriptor of another version.
    conn.call(&["HSET", "f", "version", "2"]);
    assert_eq!(
        fails(&["shard", "add", &u, "f", "a"]),
        "redbloom: f: sharded filter layout version 2; this redbloom reads version 1"
    );
    assert_eq!(
        fails(&["shard", "drop", &u, "f"]),
        "redbloom: f: sharded filter layout version 2; this redbloom reads version 1"
    );
    conn.call(&["HSET", "f", "version", "1"]);
    assert_eq!(snapshot(&server), before);

    // A member missing, or of the wrong type.
    let member = conn.call(&["HGET", "f", "member:2"]).text();
    let dump = conn.call(&["DUMP", &member]).bytes();
    conn.call(&["DEL", &member]);
    let missing = snapshot(&server);
    assert_eq!(
        fails(&["shard", "add", &u, "f", "a", "b", "c"]),
        format!("redbloom: f: member {member} is missing")
    );
    assert_eq!(
        fails(&["shard", "exists", &u, "f", "a"]),
        format!("redbloom: f: member {member} is missing")
    );
    assert_eq!(snapshot(&server), missing);
    conn.call(&["CF.RESERVE", &member, "100"]);
    let wrong = snapshot(&server);
    assert_eq!(
        fails(&["shard", "add", &u, "f", "a", "b", "c"]),
        format!("redbloom: f: member {member} is a key of type MBbloomCF, not a bf filter")
    );
    assert_eq!(snapshot(&server), wrong);
    conn.call(&["DEL", &member]);
    conn.call(&[b"RESTORE".as_slice(), member.as_bytes(), b"0", &dump]);
    assert_eq!(snapshot(&server), before);

    // Members in the way of a new filter.
    assert_eq!(
        fails(&create_args(&u, "f", "4", "0.01", "1000", false)),
        "redbloom: f already exists"
    );
    conn.call(&["SET", "{s1.2}:g", "x"]);
    let before = snapshot(&server);
    assert_eq!(
        fails(&create_args(&u, "g", "4", "0.01", "1000", false)),
        "redbloom: {s1.2}:g already exists"
    );
    // Arguments the servers would refuse.
    assert_eq!(
        fails(&create_args(&u, "g2", "0", "0.01", "1000", false)),
        "redbloom: --shards must be 1 to 1024"
    );
    assert_eq!(
        fails(&create_args(&u, "g2", "2", "1.5", "1000", false)),
        "redbloom: --error-rate must be between 0 and 1 (exclusive)"
    );
    assert_eq!(snapshot(&server), before);

    // An unreachable node.
    let port = crate::support::server::free_port();
    let dead = format!("redis://127.0.0.1:{port}/");
    let line = fails(&["shard", "add", &dead, "f", "a"]);
    assert!(
        line.starts_with(&format!("redbloom: cannot connect to {dead}: ")),
        "{line}"
    );
}

#[test]
fn a_closed_standard_output_is_no_crash() {
    let server = Server::start();
    let u = url(&server);
    create(&u, "f");
    let items: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let mut args = vec!["shard".to_string(), "exists".into(), u.clone(), "f".into()];
    args.extend(items);
    for args in [args, vec!["inspect".into(), u.clone(), "f".into()]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_redbloom"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{:?}: {}",
            &args[..2],
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Errors of an add name the filter, the member, its node and the item by its place in the
/// whole input (issue 33): a full non-scaling member (whose reply stops at its error), and
/// a member deleted after the descriptor was read (the command's own error).
#[test]
fn add_errors_name_the_member_node_and_item() {
    let server = Server::start();
    let u = url(&server);
    let dir = TempDir::new("add-errors");
    let mut args = create_args(&u, "f", "2", "0.01", "100", false);
    args.push("--nonscaling");
    ok(&args);
    let file = dir.0.join("items.txt");
    write_items(&file, (0..1000).map(|i| format!("item:{i}")));
    // Three items on the command line, then the file's: the file's line i is item i + 4.
    let line = fails(&[
        "shard",
        "add",
        &u,
        "f",
        "a0",
        "a1",
        "a2",
        "--file",
        file.to_str().unwrap(),
    ]);
    let node = format!("127.0.0.1:{}", server.port);
    let rest = line.strip_prefix("redbloom: f: member ").expect(&line);
    let (member, rest) = rest.split_once(' ').unwrap();
    assert!(member.starts_with("{s"), "{line}");
    let rest = rest
        .strip_prefix(&format!("on {node}: item "))
        .unwrap_or_else(|| panic!("{line}"));
    let (number, rest) = rest.split_once(' ').unwrap();
    let number: usize = number.parse().unwrap();
    let index: usize = rest
        .strip_prefix("of the input (item:")
        .and_then(|r| r.split_once(')'))
        .map(|(i, _)| i.parse().unwrap())
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(number, index + 4, "{line}");
    assert!(
        line.ends_with("): ERR non scaling filter is full"),
        "{line}"
    );
    assert_eq!(
        redbloom_client::shard::route(format!("item:{index}").as_bytes(), 2) as usize,
        ["0", "1"]
            .iter()
            .position(|m| {
                let mut conn = server.raw();
                conn.call(&["HGET", "f", &format!("member:{m}")]).text() == member
            })
            .unwrap()
    );

    // --wait-replicas on a server without replicas: a fast error naming the node.
    let started = std::time::Instant::now();
    let line = fails(&["shard", "add", &u, "f", "z", "--wait-replicas", "1"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    assert!(
        line.starts_with(&format!(
            "redbloom: f: --wait-replicas 1: {node} (the master of {{s"
        )),
        "{line}"
    );
    assert!(
        line.ends_with(") has 0 replica(s); stopped at line 1 of the input: the 0 items before it were added and acknowledged, the rest were not (resume from that line, e.g. tail -n +1 FILE | redbloom shard add URL f …)"),
        "{line}"
    );

    // A member deleted after the descriptor was read.
    let mut conn = redbloom_client::Conn::open(&u).unwrap();
    let d = redbloom_client::Descriptor::open(&mut conn, "f").unwrap();
    server.raw().call(&["DEL", &d.members[1]]);
    let items: Vec<String> = (0..50).map(|i| format!("new:{i}")).collect();
    let error = d
        .add_after(&mut conn, &items, 100, None, &mut |_| {})
        .unwrap_err()
        .to_string();
    let first = items
        .iter()
        .position(|i| redbloom_client::shard::route(i.as_bytes(), 2) == 1)
        .unwrap();
    assert_eq!(
        error,
        format!(
            "f: member {} on {node}: item {} of the input (new:{first}): ERR not found",
            d.members[1],
            100 + first + 1
        )
    );
}

/// `shard drop` of a damaged sharded filter removes what exists and says what was missing;
/// members left without a descriptor are found and removed by `--force` (issue 33).
#[test]
fn drop_removes_what_exists_and_finds_orphans() {
    let server = Server::start();
    let u = url(&server);
    let mut conn = server.raw();
    create(&u, "f");
    let members: Vec<String> = (0..4)
        .map(|m| conn.call(&["HGET", "f", &format!("member:{m}")]).text())
        .collect();
    conn.call(&["DEL", &members[2]]);
    conn.call(&["DEL", &members[3]]);
    conn.call(&["SET", &members[3], "someone's"]);
    conn.call(&["SET", "unrelated", "x"]);
    assert_eq!(
        ok(&["shard", "drop", &u, "f"]),
        format!(
            "dropped f (2 members; missing: {}; not filters, left: {} (a string))\n",
            members[2], members[3]
        )
    );
    assert_eq!(
        conn.sorted_keys(),
        ["unrelated".to_string(), members[3].clone()]
    );
    conn.call(&["DEL", &members[3]]);

    // The descriptor lost: a plain drop says how to remove the members, --force does.
    create(&u, "g");
    ok(&["shard", "add", &u, "g", "a", "b"]);
    conn.call(&["DEL", "g"]);
    conn.call(&["BF.ADD", "{s0.0}:g2", "x"]);
    assert_eq!(
        fails(&["shard", "drop", &u, "g"]),
        "redbloom: no sharded filter g (no such key); `shard drop --force` removes members left without a descriptor"
    );
    let out: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "shard", "drop", &u, "g", "--force"])).unwrap();
    assert_eq!(out["members"], 4);
    assert_eq!(out["descriptor"], false);
    assert_eq!(
        conn.sorted_keys(),
        ["unrelated".to_string(), "{s0.0}:g2".to_string()]
    );
}
