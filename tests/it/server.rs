//! How redbloom behaves as a Redis citizen: COPY, DEBUG DIGEST-VALUE, lazy free, keyspace
//! events, the INFO section, module configs and load arguments, the memory ceiling,
//! maxmemory, command metadata.

use crate::support::{
    call, start_replica, wait_for_replicas, wait_until, RawConnection, Reply, Server,
};

fn info_field(conn: &mut RawConnection, section: &str, field: &str) -> i64 {
    let text = conn.call(&["INFO", section]).text() + &conn.call(&["INFO"]).text();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("{field} not in INFO {section}:\n{text}"))
        .trim()
        .parse()
        .expect("numeric INFO field")
}

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

#[test]
fn copy_makes_an_independent_deep_copy() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "BF.MADD bf a b c"),
        Reply::Array(Some(vec![Reply::Int(1); 3]))
    );
    assert_eq!(
        call(&mut conn, "CF.INSERT cf ITEMS a b c").ints(),
        vec![1, 1, 1]
    );
    assert_eq!(call(&mut conn, "CBF.MADD cbf a a b").ints(), vec![1, 1, 1]);
    for (source, target) in [("bf", "bf2"), ("cf", "cf2"), ("cbf", "cbf2")] {
        assert_eq!(conn.call(&["COPY", source, target]), Reply::Int(1));
        assert_eq!(
            conn.call(&["DUMP", source]).bytes(),
            conn.call(&["DUMP", target]).bytes()
        );
    }
    // Changing the copy leaves the original alone, and the reverse.
    assert_eq!(call(&mut conn, "BF.ADD bf2 only-in-copy"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.EXISTS bf only-in-copy"), Reply::Int(0));
    assert_eq!(call(&mut conn, "CF.DEL cf a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.EXISTS cf2 a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.DEL cbf2 a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.COUNT cbf a"), Reply::Int(2));
    assert_eq!(call(&mut conn, "CBF.COUNT cbf2 a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.CARD bf2"), Reply::Int(4));
    assert_eq!(call(&mut conn, "BF.CARD bf"), Reply::Int(3));
    // COPY onto an existing key needs REPLACE, as for every type.
    assert_eq!(call(&mut conn, "COPY bf bf2"), Reply::Int(0));
    assert_eq!(call(&mut conn, "COPY bf bf2 REPLACE"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.EXISTS bf2 only-in-copy"), Reply::Int(0));
}

/// DEBUG DIGEST-VALUE follows the content: equal for filters built by the same commands
/// (and then their DUMP payloads are equal too), different for filters with the same
/// shape and item count but other items (so other bits, buckets or counters), different
/// after one more add; and a replica's values have the master's digests and DUMP payloads.
#[test]
fn digests_are_equal_for_equal_filters_and_on_replicas() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut conn = master.raw();
    let digest = |conn: &mut RawConnection, key: &str| {
        conn.call(&["DEBUG", "DIGEST-VALUE", key]).array()[0].bytes()
    };
    let dump = |conn: &mut RawConnection, key: &str| conn.call(&["DUMP", key]).bytes();
    let families = [
        ("bf", "BF.RESERVE {} 0.01 1000", "BF.ADD", "BF.CARD {}"),
        ("cf", "CF.RESERVE {} 1000", "CF.ADD", "CF.INFO {}"),
        ("cbf", "CBF.RESERVE {} 0.01 1000", "CBF.ADD", "CBF.CARD {}"),
    ];
    let mut keys = Vec::new();
    for (family, reserve, add, count) in families {
        let [same, twin, other] = [0, 1, 2].map(|k| format!("{family}:{k}"));
        for key in [&same, &twin, &other] {
            assert_eq!(call(&mut conn, &reserve.replace("{}", key)), ok());
            // The third filter gets as many items as the others, but different ones.
            // (A Bloom add of an item that tests positive already adds nothing.)
            let prefix = if key == &other { "other" } else { "item" };
            let (mut added, mut i) = (0, 0);
            while added < 50 {
                added += conn.call(&[add, key, &format!("{prefix}{i}")]).int();
                i += 1;
            }
        }
        assert_eq!(
            digest(&mut conn, &same),
            digest(&mut conn, &twin),
            "{family}"
        );
        assert_eq!(dump(&mut conn, &same), dump(&mut conn, &twin), "{family}");
        // Same shape and counts: only the content differs.
        assert_eq!(
            call(&mut conn, &count.replace("{}", &same)),
            call(&mut conn, &count.replace("{}", &other)),
            "{family}"
        );
        let scandump = format!("{}.SCANDUMP", family.to_uppercase());
        let header = |conn: &mut RawConnection, key: &str| {
            conn.call(&[scandump.as_str(), key, "0"]).array()[1].bytes()
        };
        assert_eq!(
            header(&mut conn, &same),
            header(&mut conn, &other),
            "{family}"
        );
        assert_ne!(dump(&mut conn, &same), dump(&mut conn, &other), "{family}");
        assert_ne!(
            digest(&mut conn, &same),
            digest(&mut conn, &other),
            "{family}"
        );
        assert_eq!(conn.call(&[add, &twin, "extra"]), Reply::Int(1));
        assert_ne!(
            digest(&mut conn, &same),
            digest(&mut conn, &twin),
            "{family}"
        );
        keys.extend([same, twin, other]);
    }
    wait_for_replicas(&mut conn, 1);
    let mut replica_conn = replica.raw();
    for key in &keys {
        assert_eq!(
            digest(&mut conn, key),
            digest(&mut replica_conn, key),
            "{key}"
        );
        assert_eq!(dump(&mut conn, key), dump(&mut replica_conn, key), "{key}");
    }
    assert_eq!(
        call(&mut conn, "DEBUG DIGEST"),
        call(&mut replica_conn, "DEBUG DIGEST")
    );
}

#[test]
fn unlink_of_a_large_filter_is_freed_in_the_background() {
    let server = Server::start();
    let mut conn = server.raw();
    // ~120 MB: far above Redis' lazy-free threshold.
    assert_eq!(call(&mut conn, "BF.RESERVE big 0.0001 50000000"), ok());
    assert_eq!(call(&mut conn, "BF.RESERVE small 0.01 100"), ok());
    let before = info_field(&mut conn, "stats", "lazyfreed_objects");
    assert_eq!(call(&mut conn, "UNLINK small"), Reply::Int(1));
    assert_eq!(info_field(&mut conn, "stats", "lazyfreed_objects"), before);
    assert_eq!(call(&mut conn, "UNLINK big"), Reply::Int(1));
    wait_until("lazy free", || {
        info_field(&mut conn, "stats", "lazyfreed_objects") == before + 1
    });
    assert_eq!(call(&mut conn, "PING"), Reply::Simple("PONG".into()));
}

#[test]
fn every_write_publishes_a_keyspace_event() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "CONFIG SET notify-keyspace-events Kd"),
        ok()
    );
    let mut subscriber = server.raw();
    subscriber.call(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    let writes: &[&str] = &[
        "BF.RESERVE b 0.01 100",
        "BF.ADD b x",
        "BF.MADD b y z",
        "BF.INSERT b ITEMS w",
        "CF.RESERVE c 100",
        "CF.ADD c x",
        "CF.ADDNX c y",
        "CF.INSERT c ITEMS z",
        "CF.INSERTNX c ITEMS w",
        "CF.DEL c x",
        "CF.COMPACT c",
        "CBF.RESERVE n 0.01 100",
        "CBF.ADD n x",
        "CBF.MADD n y z",
        "CBF.INSERT n ITEMS w",
        "CBF.DEL n x",
        "TOPK.RESERVE t 3",
        "TOPK.ADD t x y",
        "TOPK.INCRBY t z 2",
        // Handlers of one command name their event themselves: in lower case, whatever
        // the case the command came in.
        "topk.Add t w",
        "TopK.IncrBy t w 1",
        "CMS.INITBYDIM m 10 2",
        "CMS.INCRBY m x 1",
        "Cms.IncrBy m y 2",
        "TDIGEST.CREATE d",
        "TDIGEST.ADD d 1.5",
        "tdigest.ADD d 2 3",
    ];
    for line in writes {
        assert!(!matches!(call(&mut conn, line), Reply::Error(_)), "{line}");
    }
    // LOADCHUNK from a dump of b into b2.
    let dump = crate::support::scandump(&mut conn, "BF.SCANDUMP", "b");
    crate::support::loadchunks(&mut conn, "BF.LOADCHUNK", "b2", &dump);
    let mut expected: Vec<(String, String)> = writes
        .iter()
        .map(|line| {
            let parts: Vec<&str> = line.split(' ').collect();
            (parts[1].to_string(), parts[0].to_ascii_lowercase())
        })
        .collect();
    expected.extend(std::iter::repeat_n(
        ("b2".to_string(), "bf.loadchunk".to_string()),
        dump.len() - 1,
    ));
    for (key, event) in expected {
        let message = subscriber.read_reply().array();
        assert_eq!(message[2].text(), format!("__keyspace@0__:{key}"));
        assert_eq!(message[3].text(), event);
    }
    // Reads publish nothing: the next event is the next write.
    call(&mut conn, "BF.EXISTS b x");
    call(&mut conn, "CF.COUNT c y");
    call(&mut conn, "BF.ADD b last");
    assert_eq!(subscriber.read_reply().array()[3].text(), "bf.add");
}

#[test]
fn info_section_counts_filters_bytes_items_and_sub_filters() {
    let server = Server::start();
    let mut conn = server.raw();
    call(&mut conn, "BF.RESERVE a 0.01 10");
    for i in 0..25 {
        conn.call(&["BF.ADD", "a", &format!("item{i}")]);
    }
    call(&mut conn, "BF.ADD b x");
    call(&mut conn, "CF.INSERT c ITEMS x y z");
    call(&mut conn, "CBF.MADD n x y z x");
    call(&mut conn, "CBF.DEL n y");
    let bf_bytes =
        call(&mut conn, "BF.INFO a SIZE").ints()[0] + call(&mut conn, "BF.INFO b SIZE").ints()[0];
    let bf_items = call(&mut conn, "BF.CARD a").int() + 1;
    let bf_links = call(&mut conn, "BF.INFO a FILTERS").ints()[0] + 1;
    let expect = |conn: &mut RawConnection, field: &str, value: i64| {
        assert_eq!(info_field(conn, "bf", field), value, "{field}");
    };
    expect(&mut conn, "bf_bf_filters", 2);
    expect(&mut conn, "bf_bf_bytes", bf_bytes);
    expect(&mut conn, "bf_bf_items", bf_items);
    expect(&mut conn, "bf_bf_sub_filters", bf_links);
    expect(&mut conn, "bf_cf_filters", 1);
    let cf_bytes = call(&mut conn, "CF.INFO c").array()[1].int();
    expect(&mut conn, "bf_cf_bytes", cf_bytes);
    expect(&mut conn, "bf_cf_items", 3);
    expect(&mut conn, "bf_cbf_filters", 1);
    expect(&mut conn, "bf_cbf_items", 3);
    let cbf_bytes = call(&mut conn, "CBF.INFO n SIZE").ints()[0];
    expect(&mut conn, "bf_cbf_bytes", cbf_bytes);
    // Totals survive a reload and drop to zero after a flush.
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), ok());
    // Valkey 9 may free the values the reload replaced on its lazy-free thread: their
    // counts leave once those frees have run.
    wait_until("the replaced filters' frees", || {
        info_field(&mut conn, "bf", "bf_bf_filters") == 2
    });
    expect(&mut conn, "bf_bf_items", bf_items);
    call(&mut conn, "COPY a a2");
    expect(&mut conn, "bf_bf_filters", 3);
    // SYNC: Valkey flushes in the background by default, and the totals follow the frees.
    call(&mut conn, "FLUSHALL SYNC");
    for field in [
        "bf_bf_filters",
        "bf_bf_bytes",
        "bf_bf_items",
        "bf_cf_filters",
        "bf_cf_bytes",
        "bf_cbf_filters",
        "bf_cbf_bytes",
    ] {
        expect(&mut conn, field, 0);
    }
    expect(&mut conn, "bf_max_filter_bytes", 4 << 30);
}

#[test]
fn configs_set_the_defaults_of_auto_created_filters() {
    let server = Server::start();
    let mut conn = server.raw();
    let get = |conn: &mut RawConnection, name: &str| {
        conn.call(&["CONFIG", "GET", name]).array()[1].text()
    };
    for (name, default) in [
        ("bf.bf-error-rate", "0.01"),
        ("bf.bf-initial-size", "100"),
        ("bf.bf-expansion-factor", "2"),
        ("bf.cf-bucket-size", "2"),
        ("bf.cf-initial-size", "1024"),
        ("bf.cf-max-iterations", "20"),
        ("bf.cf-expansion-factor", "1"),
        ("bf.cf-max-expansions", "32"),
        ("bf.max-filter-bytes", "4294967296"),
    ] {
        assert_eq!(get(&mut conn, name), default, "{name}");
    }
    // Out-of-range values are refused by name.
    for (name, value) in [
        ("bf.bf-error-rate", "1.0"),
        ("bf.bf-error-rate", "0"),
        ("bf.bf-error-rate", "abc"),
        ("bf.bf-initial-size", "0"),
        ("bf.bf-initial-size", "4294967296"),
        ("bf.bf-expansion-factor", "32769"),
        ("bf.cf-bucket-size", "256"),
        ("bf.cf-max-iterations", "0"),
        ("bf.cf-max-expansions", "65537"),
    ] {
        let reply = conn.call(&["CONFIG", "SET", name, value]);
        assert!(
            matches!(&reply, Reply::Error(e) if e.contains(name)),
            "{name} {value}: {reply:?}"
        );
    }
    // New defaults apply to filters created afterwards, like an explicit reservation.
    call(&mut conn, "CONFIG SET bf.bf-error-rate 0.02");
    call(&mut conn, "CONFIG SET bf.bf-initial-size 200");
    call(&mut conn, "CONFIG SET bf.bf-expansion-factor 3");
    assert_eq!(get(&mut conn, "bf.bf-error-rate"), "0.02");
    call(&mut conn, "BF.ADD auto x");
    call(&mut conn, "BF.RESERVE explicit 0.02 200 EXPANSION 3");
    call(&mut conn, "BF.ADD explicit x");
    assert_eq!(
        call(&mut conn, "BF.DEBUG auto"),
        call(&mut conn, "BF.DEBUG explicit")
    );
    assert_eq!(call(&mut conn, "BF.INFO auto EXPANSION").ints(), vec![3]);
    call(&mut conn, "CONFIG SET bf.cf-bucket-size 4");
    call(&mut conn, "CONFIG SET bf.cf-initial-size 4000");
    call(&mut conn, "CONFIG SET bf.cf-max-iterations 50");
    call(&mut conn, "CONFIG SET bf.cf-expansion-factor 2");
    call(&mut conn, "CF.ADD cauto x");
    assert_eq!(
        call(&mut conn, "CF.DEBUG cauto").text(),
        "bktsize:4 buckets:1024 items:1 deletes:0 filters:1 max_iterations:50 expansion:2"
    );
    // Expansion factor 0: new Bloom filters do not scale.
    call(&mut conn, "CONFIG SET bf.bf-expansion-factor 0");
    call(&mut conn, "BF.ADD fixed x");
    assert_eq!(
        call(&mut conn, "BF.INFO fixed EXPANSION"),
        Reply::Array(Some(vec![Reply::Bulk(None)]))
    );
    // Max expansions is read at every insert: a filter that already has that many
    // sub-filters refuses every add, however empty it is.
    let max_expansions = Reply::err("Maximum expansions reached");
    call(&mut conn, "CONFIG SET bf.cf-max-expansions 1");
    assert_eq!(call(&mut conn, "CF.RESERVE one 8"), ok());
    let empty = conn.call(&["DUMP", "one"]).bytes();
    assert_eq!(call(&mut conn, "CF.ADD one x"), max_expansions);
    assert_eq!(
        conn.call(&["DUMP", "one"]).bytes(),
        empty,
        "a refused add changes nothing"
    );
    // With two allowed the filter fills its first sub-filter, grows once, fills the
    // second, and then refuses again.
    call(&mut conn, "CONFIG SET bf.cf-max-expansions 2");
    let mut added = 0;
    let mut refused = false;
    for i in 0..100 {
        match conn.call(&["CF.ADD", "one", &i.to_string()]) {
            Reply::Int(1) => added += 1,
            reply => {
                assert_eq!(reply, max_expansions);
                refused = true;
                break;
            }
        }
    }
    assert!(refused, "the second sub-filter must fill up");
    let debug = call(&mut conn, "CF.DEBUG one").text();
    assert!(debug.contains(&format!(" items:{added} ")), "{debug}");
    assert!(debug.contains(" filters:2 "), "{debug}");
    assert!(added > 8, "{debug}");
}

#[test]
fn load_arguments_accept_both_spellings() {
    for args in [
        [
            "ERROR_RATE",
            "0.02",
            "INITIAL_SIZE",
            "200",
            "CF_MAX_EXPANSIONS",
            "3",
        ],
        [
            "bf-error-rate",
            "0.02",
            "bf-initial-size",
            "200",
            "cf-max-expansions",
            "3",
        ],
    ] {
        let mut all = vec!["--module-args"];
        all.extend(args);
        let server = Server::start_with(&all);
        let mut conn = server.raw();
        let get = |conn: &mut RawConnection, name: &str| {
            conn.call(&["CONFIG", "GET", name]).array()[1].text()
        };
        assert_eq!(get(&mut conn, "bf.bf-error-rate"), "0.02");
        assert_eq!(get(&mut conn, "bf.bf-initial-size"), "200");
        assert_eq!(get(&mut conn, "bf.cf-max-expansions"), "3");
        call(&mut conn, "BF.ADD k x");
        assert_eq!(
            call(&mut conn, "BF.DEBUG k").array()[1].text(),
            "bytes:240 bits:1920 hashes:7 hashwidth:64 capacity:200 size:1 ratio:0.01"
        );
    }
}

/// An unknown load argument stops the server from starting, and its log says which argument
/// and what is accepted instead.
#[test]
fn an_unknown_load_argument_is_named_in_the_log() {
    let dir = crate::support::TempDir::new("badarg");
    // From the harness' sequence, so no test on another thread starts a server on it.
    let port = crate::support::server::free_port().to_string();
    let status = std::process::Command::new(crate::support::server_binary())
        .args(["--port", &port, "--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(&dir.0)
        .args(["--logfile", "server.log", "--loadmodule"])
        .arg(crate::support::module_path())
        .args(["EXPANSION", "4"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run the server");
    assert!(
        !status.success(),
        "the server started with an unknown load argument"
    );
    let log = std::fs::read_to_string(dir.0.join("server.log")).expect("server log");
    assert!(
        log.contains(
            "Unrecognized option 'EXPANSION'. Load arguments: ERROR_RATE (bf-error-rate), \
             INITIAL_SIZE (bf-initial-size), CF_MAX_EXPANSIONS (cf-max-expansions). Other settings \
             are module configs"
        ),
        "{log}"
    );
    assert!(log.contains("bf.bf-expansion-factor"), "{log}");
}

#[test]
fn the_memory_ceiling_refuses_oversized_filters_and_keeps_the_server_up() {
    let server = Server::start();
    let mut conn = server.raw();
    let too_large = Reply::Error("ERR filter would exceed the max-filter-bytes limit".into());
    // Default ceiling 4 GiB: a trillion-item reservation is refused at once.
    assert_eq!(
        call(&mut conn, "BF.RESERVE huge 0.01 1000000000000"),
        too_large
    );
    assert_eq!(
        call(&mut conn, "CF.RESERVE huge 100000000000000"),
        too_large
    );
    assert_eq!(call(&mut conn, "EXISTS huge"), Reply::Int(0));
    call(&mut conn, "CONFIG SET bf.max-filter-bytes 1mb");
    assert_eq!(call(&mut conn, "BF.RESERVE k 0.01 1000000"), too_large);
    assert_eq!(
        call(&mut conn, "BF.INSERT k CAPACITY 1000000 ITEMS a"),
        too_large
    );
    assert_eq!(call(&mut conn, "CF.RESERVE k 2000000"), too_large);
    assert_eq!(
        call(&mut conn, "CF.INSERT k CAPACITY 2000000 ITEMS a"),
        too_large
    );
    // Scale-out beyond the ceiling: the add fails, the filter keeps what it had.
    call(&mut conn, "BF.RESERVE grow 0.01 100000 EXPANSION 32");
    let mut outcome = Reply::Int(1);
    let mut added = 0;
    for i in 0..200_000 {
        outcome = conn.call(&["BF.ADD", "grow", &i.to_string()]);
        if matches!(outcome, Reply::Error(_)) {
            break;
        }
        added += outcome.int();
    }
    assert_eq!(outcome, too_large);
    assert_eq!(call(&mut conn, "BF.CARD grow").int(), added);
    assert_eq!(call(&mut conn, "BF.INFO grow FILTERS").ints(), vec![1]);
    // A header beyond the ceiling is bad data.
    call(&mut conn, "CONFIG SET bf.max-filter-bytes 4gb");
    call(&mut conn, "BF.RESERVE src 0.01 1000000");
    let header = conn.call(&["BF.SCANDUMP", "src", "0"]).array()[1].bytes();
    call(&mut conn, "CONFIG SET bf.max-filter-bytes 1mb");
    assert_eq!(
        conn.call(&[b"BF.LOADCHUNK".as_slice(), b"dst", b"1", &header]),
        Reply::Error("ERR received bad data".into())
    );
    // Smaller filters still work.
    assert_eq!(call(&mut conn, "BF.ADD small x"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.ADD small2 x"), Reply::Int(1));
}

#[test]
fn maxmemory_refuses_growth_but_not_reads() {
    let server = Server::start_with(&["--maxmemory-policy", "noeviction"]);
    let mut conn = server.raw();
    call(&mut conn, "BF.ADD b x");
    call(&mut conn, "CF.ADD c x");
    call(&mut conn, "CBF.MADD d x x");
    // Put the server over its limit: every command that may allocate is refused.
    call(&mut conn, "CONFIG SET maxmemory 100kb");
    let oom = |reply: Reply| {
        reply == Reply::err("OOM command not allowed when used memory > 'maxmemory'.")
    };
    for line in [
        "BF.ADD b y",
        "BF.RESERVE n 0.01 100",
        "BF.MADD b y z",
        "CF.ADD c y",
        "CF.RESERVE n 100",
        "BF.INSERT b ITEMS q",
        "CBF.ADD d y",
        "CBF.RESERVE n 0.01 100",
    ] {
        assert!(oom(call(&mut conn, line)), "{line}");
    }
    assert_eq!(call(&mut conn, "BF.EXISTS b x"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.EXISTS c x"), Reply::Int(1));
    assert_eq!(call(&mut conn, "BF.CARD b"), Reply::Int(1));
    // CF.DEL frees memory, so it is allowed under maxmemory (not deny-oom).
    assert_eq!(call(&mut conn, "CF.DEL c x"), Reply::Int(1));
    // So does CBF.DEL: it only lowers counters (docs/operations.md, "The memory ceiling").
    assert_eq!(call(&mut conn, "CBF.DEL d x"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.COUNT d x"), Reply::Int(1));
}

/// One COMMAND DOCS argument (a map, flat in RESP2) as `TOKEN name:type[flags]`, a
/// `oneof`'s or `block`'s alternatives in parentheses.
fn describe_argument(arg: &Reply) -> String {
    let parts = arg.array();
    let get = |name: &str| {
        parts
            .chunks(2)
            .find(|p| p[0].text() == name)
            .map(|p| p[1].clone())
    };
    let mut out = String::new();
    if let Some(token) = get("token") {
        out += &format!("{} ", token.text());
    }
    out += &format!(
        "{}:{}",
        get("name").unwrap().text(),
        get("type").unwrap().text()
    );
    if let Some(flags) = get("flags") {
        let flags: Vec<String> = flags.array().iter().map(Reply::text).collect();
        out += &format!("[{}]", flags.join(","));
    }
    if let Some(sub) = get("arguments") {
        let sub: Vec<String> = sub.array().iter().map(describe_argument).collect();
        out += &format!("({})", sub.join(" | "));
    }
    out
}

#[test]
fn command_metadata_is_complete() {
    let server = Server::start();
    let mut conn = server.raw();
    // Arity, flags and key specs with the right access.
    let info = call(&mut conn, "COMMAND INFO bf.exists bf.add cf.compact cf.del").array();
    let arity: Vec<i64> = info.iter().map(|c| c.array()[1].int()).collect();
    assert_eq!(arity, vec![3, 3, 2, 3]);
    let flags = |c: &Reply| {
        c.array()[2]
            .array()
            .iter()
            .map(Reply::text)
            .collect::<Vec<_>>()
    };
    assert!(flags(&info[0]).contains(&"readonly".to_string()));
    assert!(flags(&info[1]).contains(&"denyoom".to_string()));
    assert!(flags(&info[2]).contains(&"write".to_string()));
    let key_flags = |c: &Reply| {
        let spec = c.array()[8].array()[0].array();
        let at = spec
            .iter()
            .position(|f| f == &Reply::Bulk(Some(b"flags".to_vec())))
            .unwrap();
        spec[at + 1]
            .array()
            .iter()
            .map(Reply::text)
            .collect::<Vec<_>>()
    };
    assert_eq!(key_flags(&info[0]), vec!["RO", "access"]);
    assert_eq!(key_flags(&info[1]), vec!["RW", "update"]);
    // COMMAND DOCS: summary, complexity, since and arguments for redis-cli hints.
    let docs = call(&mut conn, "COMMAND DOCS bf.reserve").array();
    let fields = docs[1].array();
    let get = |name: &str| {
        let i = fields.iter().position(|f| f.text() == name).unwrap();
        fields[i + 1].clone()
    };
    assert_eq!(get("summary").text(), "Creates a new Bloom Filter");
    assert_eq!(get("complexity").text(), "O(1)");
    assert_eq!(get("since").text(), "1.0.0");
    let names: Vec<String> = get("arguments")
        .array()
        .iter()
        .map(|a| a.array()[1].text())
        .collect();
    assert_eq!(
        names,
        vec![
            "key",
            "error_rate",
            "capacity",
            "expansion",
            "nonscaling",
            "blocked"
        ]
    );
    // BF.INFO's one-field forms: COMMAND DOCS lists each field BF.INFO answers, BLOCKED
    // (of a blocked filter) included, and nothing else.
    fn tokens(reply: &Reply, out: &mut Vec<String>) {
        if let Reply::Array(Some(items)) = reply {
            for (i, item) in items.iter().enumerate() {
                if item == &Reply::bulk("token") {
                    out.push(items[i + 1].text());
                }
                tokens(item, out);
            }
        }
    }
    let mut fields = Vec::new();
    tokens(&call(&mut conn, "COMMAND DOCS bf.info"), &mut fields);
    assert_eq!(
        fields,
        [
            "CAPACITY",
            "SIZE",
            "FILTERS",
            "ITEMS",
            "EXPANSION",
            "BLOCKED"
        ]
    );
    assert_eq!(call(&mut conn, "BF.RESERVE blk 0.01 1000 BLOCKED"), ok());
    for field in &fields {
        let reply = conn.call(&["BF.INFO", "blk", field]);
        assert!(
            !matches!(reply, Reply::Error(_)),
            "BF.INFO blk {field}: {reply:?}"
        );
    }
    // SF.BUILD's two forms: a required choice (`oneof`) of `ITEMS item [item ...]` and
    // `FROM source`.
    let docs = call(&mut conn, "COMMAND DOCS sf.build").array();
    let arguments = {
        let fields = docs[1].array();
        let i = fields.iter().position(|f| f.text() == "arguments").unwrap();
        fields[i + 1].array()
    };
    let described: Vec<String> = arguments.iter().map(describe_argument).collect();
    assert_eq!(
        described,
        [
            "key:key",
            "error_rate:double",
            "ENCODING encoding:string[optional]",
            "item_source:oneof(ITEMS item:string[multiple] | FROM source:string)"
        ]
    );
    // Every command has docs: a summary, a complexity, a version, and arguments that
    // start with the key (each with a name and a type).
    let all: Vec<String> = call(&mut conn, "COMMAND LIST FILTERBY MODULE bf")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    assert_eq!(all.len(), 108);
    let mut args = vec!["COMMAND".to_string(), "DOCS".to_string()];
    args.extend(all.iter().cloned());
    let docs = conn.call(&args).array();
    assert_eq!(docs.len(), 2 * all.len(), "one DOCS entry per command");
    let mut documented = Vec::new();
    for entry in docs.chunks(2) {
        let name = entry[0].text();
        let fields = entry[1].array();
        let get = |field: &str| {
            let i = fields
                .iter()
                .position(|f| f.text() == field)
                .unwrap_or_else(|| panic!("{name}: no {field} in its docs"));
            fields[i + 1].clone()
        };
        for field in ["summary", "complexity"] {
            assert!(!get(field).text().is_empty(), "{name}: empty {field}");
        }
        assert!(
            ["1.0.0", "2.0.0", "2.4.0", "2.4.4"].contains(&get("since").text().as_str()),
            "{name}: since {:?}",
            get("since")
        );
        assert_eq!(get("group").text(), "module", "{name}");
        let arguments = get("arguments").array();
        let arg_field = |arg: &Reply, field: &str| {
            let parts = arg.array();
            let i = parts
                .iter()
                .position(|f| f.text() == field)
                .unwrap_or_else(|| panic!("{name}: an argument without {field}"));
            parts[i + 1].text()
        };
        let first = arg_field(&arguments[0], "name");
        // The merges' first key is their destination.
        assert!(
            ["key", "destination", "destination-key", "destkey"].contains(&first.as_str()),
            "{name}: {first}"
        );
        assert_eq!(arg_field(&arguments[0], "type"), "key", "{name}");
        for arg in &arguments {
            assert!(!arg_field(arg, "name").is_empty(), "{name}");
            assert!(!arg_field(arg, "type").is_empty(), "{name}");
        }
        documented.push(name);
    }
    documented.sort();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(documented, expected);
    // ACL: module categories where the server has them (Redis ≥ 7.4); by command name
    // everywhere.
    let categories: Vec<String> = call(&mut conn, "ACL CAT")
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    if categories.contains(&"bloom".to_string()) {
        let bloom: Vec<String> = call(&mut conn, "ACL CAT bloom")
            .array()
            .iter()
            .map(Reply::text)
            .collect();
        assert_eq!(bloom.len(), 14);
        assert!(bloom.iter().all(|c| c.starts_with("bf.")));
        let cuckoo = call(&mut conn, "ACL CAT cuckoo").array();
        assert_eq!(cuckoo.len(), 16);
        let counting = call(&mut conn, "ACL CAT cbf").array();
        assert_eq!(counting.len(), 15);
        let topk = call(&mut conn, "ACL CAT topk").array();
        assert_eq!(topk.len(), 8);
        let tdigest: Vec<String> = call(&mut conn, "ACL CAT tdigest")
            .array()
            .iter()
            .map(Reply::text)
            .collect();
        assert_eq!(tdigest.len(), 15);
        assert!(tdigest.iter().all(|c| c.starts_with("tdigest.")));
    }
    call(
        &mut conn,
        "ACL SETUSER reader on nopass +bf.exists +cf.exists ~*",
    );
    let mut reader = server.raw();
    call(&mut reader, "AUTH reader x");
    assert_eq!(call(&mut reader, "BF.EXISTS k x"), Reply::Int(0));
    assert_eq!(call(&mut reader, "CF.EXISTS k x"), Reply::Int(0));
    let denied = call(&mut reader, "BF.ADD k x");
    assert!(
        matches!(&denied, Reply::Error(e) if e.starts_with("NOPERM")),
        "{denied:?}"
    );
}

/// Under maxmemory with noeviction every command that may allocate is refused — all of
/// them, LOADCHUNK, COPY and RESTORE included — and changes nothing; every read, and the
/// writes that only free (CF.DEL, CF.COMPACT), keep working.
#[test]
fn maxmemory_refuses_every_allocating_command_and_serves_every_read() {
    let server = Server::start_with(&["--maxmemory-policy", "noeviction"]);
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.MADD b x y z").ints(), vec![1, 1, 1]);
    assert_eq!(
        call(&mut conn, "CF.INSERT c ITEMS x y z").ints(),
        vec![1, 1, 1]
    );
    let bf_dump = crate::support::scandump(&mut conn, "BF.SCANDUMP", "b");
    let cf_dump = crate::support::scandump(&mut conn, "CF.SCANDUMP", "c");
    let payload = conn.call(&["DUMP", "b"]).bytes();
    let before = (conn.call(&["DUMP", "b"]), conn.call(&["DUMP", "c"]));
    assert_eq!(call(&mut conn, "CONFIG SET maxmemory 100kb"), ok());
    let oom = Reply::Error("OOM command not allowed when used memory > 'maxmemory'.".into());
    let bf_header = bf_dump[0].1.clone().unwrap();
    let cf_header = cf_dump[0].1.clone().unwrap();
    let bf_chunk = bf_dump[1].clone();
    let refused: Vec<Vec<&[u8]>> = vec![
        vec![b"CF.ADDNX", b"c", b"new"],
        vec![b"CF.INSERT", b"c", b"ITEMS", b"new"],
        vec![b"CF.INSERTNX", b"c", b"ITEMS", b"new"],
        vec![b"CF.INSERT", b"fresh", b"ITEMS", b"new"],
        vec![b"BF.INSERT", b"fresh", b"ITEMS", b"new"],
        vec![b"BF.ADD", b"fresh", b"new"],
        vec![b"BF.LOADCHUNK", b"fresh", b"1", &bf_header],
        vec![b"CF.LOADCHUNK", b"fresh", b"1", &cf_header],
        vec![b"COPY", b"b", b"fresh"],
        vec![b"RESTORE", b"fresh", b"0", &payload],
    ];
    for argv in &refused {
        assert_eq!(
            conn.call(argv),
            oom,
            "{:?}",
            String::from_utf8_lossy(argv[0])
        );
    }
    let chunk_iter = bf_chunk.0.to_string();
    let chunk = bf_chunk.1.clone().unwrap();
    assert_eq!(
        conn.call(&[
            b"BF.LOADCHUNK".as_slice(),
            b"b",
            chunk_iter.as_bytes(),
            &chunk
        ]),
        oom
    );
    assert_eq!(conn.call(&["EXISTS", "fresh"]), Reply::Int(0));
    // Every read answers as before.
    assert_eq!(call(&mut conn, "BF.MEXISTS b x y z").ints(), vec![1, 1, 1]);
    assert_eq!(call(&mut conn, "BF.INFO b ITEMS").ints(), vec![3]);
    assert_eq!(call(&mut conn, "BF.DEBUG b").array().len(), 2);
    assert_eq!(
        crate::support::scandump(&mut conn, "BF.SCANDUMP", "b"),
        bf_dump
    );
    assert_eq!(call(&mut conn, "CF.MEXISTS c x y z").ints(), vec![1, 1, 1]);
    assert_eq!(call(&mut conn, "CF.COUNT c x"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.INFO c").array()[7], Reply::Int(3));
    assert!(call(&mut conn, "CF.DEBUG c").text().contains("items:3"));
    assert_eq!(
        crate::support::scandump(&mut conn, "CF.SCANDUMP", "c"),
        cf_dump
    );
    assert_eq!(
        (conn.call(&["DUMP", "b"]), conn.call(&["DUMP", "c"])),
        before
    );
    assert!(call(&mut conn, "MEMORY USAGE b").int() > 0);
    // Writes that do not allocate: allowed.
    assert_eq!(call(&mut conn, "CF.COMPACT c"), ok());
    assert_eq!(call(&mut conn, "CF.DEL c z"), Reply::Int(1));
    assert_eq!(call(&mut conn, "PING"), Reply::Simple("PONG".into()));
    // With the limit lifted everything works again.
    assert_eq!(call(&mut conn, "CONFIG SET maxmemory 0"), ok());
    assert_eq!(call(&mut conn, "CF.ADDNX c z"), Reply::Int(1));
    assert_eq!(
        conn.call(&[b"BF.LOADCHUNK".as_slice(), b"fresh", b"1", &bf_header]),
        ok()
    );
    // maxmemory is checked before a command runs (Redis' rule), and redbloom refuses a
    // single creation larger than the memory left (~23 MiB here, under 20 MiB); one
    // that fits is made.
    assert_eq!(call(&mut conn, "CONFIG SET maxmemory 20mb"), ok());
    assert_eq!(
        call(&mut conn, "BF.RESERVE big 0.01 20000000"),
        Reply::err(redbloom::errors::TOO_LARGE_FOR_MAXMEMORY)
    );
    assert_eq!(call(&mut conn, "BF.RESERVE big 0.01 5000000"), ok());
    assert_eq!(call(&mut conn, "BF.EXISTS big x"), Reply::Int(0));
    assert_eq!(call(&mut conn, "DEL big"), Reply::Int(1));
    // Valkey frees deleted keys in the background by default (lazyfree-lazy-user-del).
    wait_until("the filter to be freed", || {
        info_field(&mut conn, "memory", "lazyfree_pending_objects") == 0
    });
    assert_eq!(call(&mut conn, "BF.ADD big x"), Reply::Int(1));
}

/// A filter larger than the machine's memory is an error reply, not an abort and not an
/// OOM kill — also with the per-filter ceiling raised to its maximum, where the allocation
/// itself is attempted. (Redis' jemalloc maps with MAP_NORESERVE when the kernel
/// overcommits, so a 1 TiB request would be granted and the server killed while zeroing
/// it; the module refuses requests beyond the available memory first.)
#[test]
fn filters_larger_than_the_machine_are_error_replies() {
    let server = Server::start();
    let mut conn = server.raw();
    let used = |conn: &mut RawConnection| info_field(conn, "memory", "used_memory");
    let before = used(&mut conn);
    let too_large = Reply::Error("ERR filter would exceed the max-filter-bytes limit".into());
    let no_memory = Reply::Error("ERR Insufficient memory to create filter".into());
    // ~1 TB Bloom (8·10^11 items at 1 % → 9.6·10^12 bits) and 1 TiB Cuckoo filters.
    let huge = [
        "BF.RESERVE h 0.01 800000000000",
        "BF.INSERT h CAPACITY 800000000000 ITEMS a",
        "CF.RESERVE h 1099511627776",
        "CF.INSERT h CAPACITY 1099511627776 ITEMS a",
    ];
    for line in huge {
        assert_eq!(
            call(&mut conn, line),
            too_large,
            "{line} under the default ceiling"
        );
    }
    assert_eq!(
        call(
            &mut conn,
            "CONFIG SET bf.max-filter-bytes 9223372036854775807"
        ),
        ok()
    );
    for line in huge {
        assert_eq!(call(&mut conn, line), no_memory, "{line} without a ceiling");
        assert_eq!(call(&mut conn, "EXISTS h"), Reply::Int(0));
    }
    // More bits than 64 bits count: refused before any arithmetic overflows.
    assert_eq!(
        call(&mut conn, "BF.RESERVE h 0.01 9223372036854775807"),
        too_large
    );
    // A loaded filter whose next link would need ~3 TB: the add fails, nothing changes.
    assert_eq!(call(&mut conn, "BF.RESERVE s 0.01 100"), ok());
    assert_eq!(call(&mut conn, "BF.ADD s a"), Reply::Int(1));
    let mut header = conn.call(&["BF.SCANDUMP", "s", "0"]).array()[1].bytes();
    let chunk = conn.call(&["BF.SCANDUMP", "s", "1"]).array();
    // total items = link items = capacity = 2^40: the link is full and must grow ×2.
    header[0..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    header[36..44].copy_from_slice(&(1u64 << 40).to_le_bytes());
    header[64..72].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert_eq!(
        conn.call(&[b"BF.LOADCHUNK".as_slice(), b"g", b"1", &header]),
        ok()
    );
    let iter = chunk[0].int().to_string();
    assert_eq!(
        conn.call(&[
            b"BF.LOADCHUNK".as_slice(),
            b"g",
            iter.as_bytes(),
            &chunk[1].bytes()
        ]),
        ok()
    );
    assert_eq!(
        call(&mut conn, "BF.ADD g new-item"),
        Reply::Error("ERR problem inserting into filter".into())
    );
    assert_eq!(call(&mut conn, "BF.ADD g a"), Reply::Int(0));
    assert_eq!(call(&mut conn, "BF.INFO g FILTERS").ints(), vec![1]);
    assert_eq!(call(&mut conn, "PING"), Reply::Simple("PONG".into()));
    // Nothing of it stayed allocated.
    assert!(
        used(&mut conn) < before + (10 << 20),
        "{before} → {}",
        used(&mut conn)
    );
}

/// The harness itself: a server that dies on its own (here SIGKILLed behind the harness'
/// back, as a crash would end it) fails the test that ran it.
#[test]
fn the_harness_fails_a_test_whose_server_died() {
    let mut server = Server::start();
    let status = std::process::Command::new("kill")
        .args(["-9", &server.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    // Gone means ended and waitable, not only its port closed: the kernel closes the
    // sockets first, and a killed server's threads end after its main thread.
    wait_until("the server gone", || server.exited());
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.stop(false)));
    let message = *stopped
        .expect_err("stopping a dead server must fail the test")
        .downcast::<String>()
        .expect("a message");
    assert!(message.contains("the server exited by itself"), "{message}");
}

/// Loading logs nothing at warning level (`#`): on servers without Redis 8's global defrag
/// callbacks the redis-module crate used to log "Skip register defrag callbacks …", a
/// warning about callbacks redbloom never registers (src/api/defrag_callbacks.rs). The
/// load line is there, so the log was read.
#[test]
fn loading_logs_no_warning() {
    let server = Server::start();
    let log = server.log();
    assert!(log.contains("<bf> redbloom "), "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("# <bf>")).collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
}
