//! Reply shapes per protocol, byte for byte: RESP2 clients get RedisBloom 2.4.20's replies,
//! RESP3 clients (after `HELLO 3`) RedisBloom 2.6's — booleans, maps, nulls (COMPAT §0.5
//! and the RESP3 notes of each command). Every command runs on two keys with the same
//! history, one per connection, so both see the same filter state.

use crate::support::{RawConnection, Server};

/// The wire form of reply lines: each line followed by CRLF.
fn wire(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\r\n")).collect()
}

/// The two connections of a test: RESP2 and RESP3, each with its own key prefix.
struct Both {
    resp2: RawConnection,
    resp3: RawConnection,
}

impl Both {
    fn new(server: &Server) -> Both {
        Both {
            resp2: server.raw(),
            resp3: server.raw3(),
        }
    }

    /// `line` with every `@name` argument replaced by `prefix` + name.
    fn args(line: &str, prefix: &str) -> Vec<String> {
        line.split(' ')
            .map(|arg| match arg.strip_prefix('@') {
                Some(name) => format!("{prefix}{name}"),
                None => arg.to_string(),
            })
            .collect()
    }

    /// Runs `line` on both connections; returns (RESP2 bytes, RESP3 bytes).
    fn run(&mut self, line: &str) -> (String, String) {
        let two = self.resp2.call_raw(&Self::args(line, "r2:"));
        let three = self.resp3.call_raw(&Self::args(line, "r3:"));
        (
            String::from_utf8_lossy(&two).to_string(),
            String::from_utf8_lossy(&three).to_string(),
        )
    }

    /// Runs `line` on both connections and checks both replies exactly.
    fn expect(&mut self, line: &str, resp2: &[&str], resp3: &[&str]) {
        let (two, three) = self.run(line);
        assert_eq!(two, wire(resp2), "RESP2 reply of {line}");
        assert_eq!(three, wire(resp3), "RESP3 reply of {line}");
    }

    /// Runs `line` on both connections and checks that both get the same `reply`.
    fn same(&mut self, line: &str, reply: &[&str]) {
        self.expect(line, reply, reply);
    }

    /// Runs `line` on both connections; the replies must be identical (and are returned).
    fn identical(&mut self, line: &str) -> String {
        let (two, three) = self.run(line);
        assert_eq!(two, three, "{line} must not depend on the protocol");
        two
    }
}

const NONSCALING_FULL: &str = "-ERR non scaling filter is full";

#[test]
fn bloom_replies_per_protocol() {
    let server = Server::start();
    let mut c = Both::new(&server);
    c.same("BF.RESERVE @b 0.01 100", &["+OK"]);
    c.expect("BF.ADD @b x", &[":1"], &["#t"]);
    c.expect("BF.ADD @b x", &[":0"], &["#f"]);
    c.expect("BF.MADD @b x y", &["*2", ":0", ":1"], &["*2", "#f", "#t"]);
    c.expect("BF.EXISTS @b x", &[":1"], &["#t"]);
    c.expect("BF.EXISTS @b nothing", &[":0"], &["#f"]);
    c.expect("BF.EXISTS @missing x", &[":0"], &["#f"]);
    c.expect(
        "BF.MEXISTS @b x nothing y",
        &["*3", ":1", ":0", ":1"],
        &["*3", "#t", "#f", "#t"],
    );
    c.expect(
        "BF.MEXISTS @missing x y",
        &["*2", ":0", ":0"],
        &["*2", "#f", "#f"],
    );
    c.expect(
        "BF.INSERT @b ITEMS y z",
        &["*2", ":0", ":1"],
        &["*2", "#f", "#t"],
    );
    c.same("BF.CARD @b", &[":3"]);
    c.same("BF.CARD @missing", &[":0"]);
    c.expect(
        "BF.INFO @b",
        &[
            "*10",
            "+Capacity",
            ":100",
            "+Size",
            ":240",
            "+Number of filters",
            ":1",
            "+Number of items inserted",
            ":3",
            "+Expansion rate",
            ":2",
        ],
        &[
            "%5",
            "+Capacity",
            ":100",
            "+Size",
            ":240",
            "+Number of filters",
            ":1",
            "+Number of items inserted",
            ":3",
            "+Expansion rate",
            ":2",
        ],
    );
    for (field, label, value) in [
        ("CAPACITY", "Capacity", ":100"),
        ("size", "Size", ":240"),
        ("Filters", "Number of filters", ":1"),
        ("ITEMS", "Number of items inserted", ":3"),
        ("expansion", "Expansion rate", ":2"),
    ] {
        c.expect(
            &format!("BF.INFO @b {field}"),
            &["*1", value],
            &["%1", &format!("+{label}"), value],
        );
    }
    c.same("BF.INFO @b nonsense", &["-Invalid information value"]);
    c.same("BF.INFO @missing", &["-ERR not found"]);

    // A full non-scaling filter: the error element ends the array in both protocols.
    c.expect(
        "BF.INSERT @n CAPACITY 1 NONSCALING ITEMS a b c",
        &["*2", ":1", NONSCALING_FULL],
        &["*2", "#t", NONSCALING_FULL],
    );
    c.expect(
        "BF.MADD @n b c",
        &["*1", NONSCALING_FULL],
        &["*1", NONSCALING_FULL],
    );
    c.same("BF.ADD @n b", &[NONSCALING_FULL]);
    c.expect(
        "BF.INFO @n",
        &[
            "*10",
            "+Capacity",
            ":1",
            "+Size",
            ":104",
            "+Number of filters",
            ":1",
            "+Number of items inserted",
            ":1",
            "+Expansion rate",
            "$-1",
        ],
        &[
            "%5",
            "+Capacity",
            ":1",
            "+Size",
            ":104",
            "+Number of filters",
            ":1",
            "+Number of items inserted",
            ":1",
            "+Expansion rate",
            "_",
        ],
    );
    c.expect(
        "BF.INFO @n EXPANSION",
        &["*1", "$-1"],
        &["%1", "+Expansion rate", "_"],
    );

    // No RESP3 notes for these in COMPAT: the same bytes in both protocols.
    let debug = c.identical("BF.DEBUG @b");
    assert!(debug.starts_with("*2\r\n$6\r\nsize:3\r\n"), "{debug:?}");
    let header = c.identical("BF.SCANDUMP @b 0");
    assert!(header.starts_with("*2\r\n:1\r\n$"), "{header:?}");
    c.same("BF.SCANDUMP @b 999999", &["*2", ":0", "$0", ""]);
    c.same("SET @s x", &["+OK"]);
    c.same(
        "BF.ADD @s x",
        &["-WRONGTYPE Operation against a key holding the wrong kind of value"],
    );
}

#[test]
fn counting_bloom_replies_follow_bloom() {
    let server = Server::start();
    let mut c = Both::new(&server);
    c.same("CBF.RESERVE @n 0.01 100", &["+OK"]);
    c.expect("CBF.ADD @n x", &[":1"], &["#t"]);
    c.expect("CBF.ADD @n x", &[":1"], &["#t"]);
    c.expect("CBF.MADD @n y x", &["*2", ":1", ":1"], &["*2", "#t", "#t"]);
    c.expect("CBF.INSERT @n ITEMS z", &["*1", ":1"], &["*1", "#t"]);
    c.expect("CBF.EXISTS @n x", &[":1"], &["#t"]);
    c.expect("CBF.EXISTS @n nothing", &[":0"], &["#f"]);
    c.expect("CBF.EXISTS @missing x", &[":0"], &["#f"]);
    c.expect(
        "CBF.MEXISTS @n x nothing",
        &["*2", ":1", ":0"],
        &["*2", "#t", "#f"],
    );
    c.same("CBF.COUNT @n x", &[":3"]);
    c.same("CBF.COUNT @n nothing", &[":0"]);
    c.same("CBF.CARD @n", &[":5"]);
    c.expect("CBF.DEL @n x", &[":1"], &["#t"]);
    c.expect("CBF.DEL @n nothing", &[":0"], &["#f"]);
    c.same("CBF.DEL @missing x", &["-ERR not found"]);
    c.same("CBF.COUNT @n x", &[":2"]);
    let info = [
        "+Capacity",
        ":100",
        "+Size",
        ":672",
        "+Number of filters",
        ":1",
        "+Number of items inserted",
        ":4",
        "+Expansion rate",
        ":2",
    ];
    c.expect(
        "CBF.INFO @n",
        &[&["*10"], &info[..]].concat(),
        &[&["%5"], &info[..]].concat(),
    );
    c.expect(
        "CBF.INFO @n ITEMS",
        &["*1", ":4"],
        &["%1", "+Number of items inserted", ":4"],
    );
    c.expect(
        "CBF.INSERT @full CAPACITY 1 NONSCALING ITEMS a b",
        &["*2", ":1", NONSCALING_FULL],
        &["*2", "#t", NONSCALING_FULL],
    );
    c.expect(
        "CBF.INFO @full EXPANSION",
        &["*1", "$-1"],
        &["%1", "+Expansion rate", "_"],
    );
    let debug = c.identical("CBF.DEBUG @n");
    assert!(debug.starts_with("*2\r\n$6\r\nsize:4\r\n"), "{debug:?}");
    c.identical("CBF.SCANDUMP @n 0");
}

#[test]
fn cuckoo_replies_per_protocol() {
    let server = Server::start();
    let mut c = Both::new(&server);
    c.same("CF.RESERVE @c 1000", &["+OK"]);
    c.expect("CF.ADD @c x", &[":1"], &["#t"]);
    c.expect("CF.ADD @c x", &[":1"], &["#t"]);
    c.expect("CF.ADDNX @c x", &[":0"], &["#f"]);
    c.expect("CF.ADDNX @c y", &[":1"], &["#t"]);
    c.expect(
        "CF.INSERT @c ITEMS x z",
        &["*2", ":1", ":1"],
        &["*2", "#t", "#t"],
    );
    // CF.INSERTNX keeps integers in RESP3.
    c.same("CF.INSERTNX @c ITEMS x w", &["*2", ":0", ":1"]);
    c.expect("CF.EXISTS @c x", &[":1"], &["#t"]);
    c.expect("CF.EXISTS @c nothing", &[":0"], &["#f"]);
    c.expect("CF.EXISTS @missing x", &[":0"], &["#f"]);
    c.expect(
        "CF.MEXISTS @c x nothing w",
        &["*3", ":1", ":0", ":1"],
        &["*3", "#t", "#f", "#t"],
    );
    c.same("CF.COUNT @c x", &[":3"]);
    c.same("CF.COUNT @missing x", &[":0"]);
    c.expect("CF.DEL @c x", &[":1"], &["#t"]);
    c.expect("CF.DEL @c nothing", &[":0"], &["#f"]);
    c.same("CF.DEL @missing x", &["-Not found"]);
    let info = [
        "+Size",
        ":1080",
        "+Number of buckets",
        ":512",
        "+Number of filters",
        ":1",
        "+Number of items inserted",
        ":5",
        "+Number of items deleted",
        ":1",
        "+Bucket size",
        ":2",
        "+Expansion rate",
        ":1",
        "+Max iterations",
        ":20",
    ];
    c.expect(
        "CF.INFO @c",
        &[&["*16"], &info[..]].concat(),
        &[&["%8"], &info[..]].concat(),
    );
    c.same("CF.INFO @missing", &["-ERR not found"]);
    let debug = c.identical("CF.DEBUG @c");
    assert!(debug.starts_with("$"), "{debug:?}");
    let header = c.identical("CF.SCANDUMP @c 0");
    assert!(header.starts_with("*2\r\n:1\r\n$38\r\n"), "{header:?}");
    // The end of a dump is a null: RESP3 spells it `_`.
    c.expect(
        "CF.SCANDUMP @c 999999",
        &["*2", ":0", "$-1"],
        &["*2", ":0", "_"],
    );
}

/// A Cuckoo filter that cannot grow: CF.INSERT's "no space" elements are false in RESP3
/// (-1 in RESP2), CF.INSERTNX keeps -1, and CF.ADD's error is the same in both.
#[test]
fn full_cuckoo_filter_per_protocol() {
    let server = Server::start();
    let mut c = Both::new(&server);
    c.same("CF.RESERVE @f 2 BUCKETSIZE 1 EXPANSION 0", &["+OK"]);
    let items: Vec<String> = (0..12).map(|i| format!("item{i}")).collect();
    let line = format!("CF.INSERT @f ITEMS {}", items.join(" "));
    let (two, three) = c.run(&line);
    let ints: Vec<&str> = two
        .split("\r\n")
        .skip(1)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(ints.len(), items.len(), "{two:?}");
    assert!(ints.contains(&":1") && ints.contains(&":-1"), "{two:?}");
    assert!(ints.iter().all(|l| *l == ":1" || *l == ":-1"), "{two:?}");
    let bools: Vec<&str> = ints
        .iter()
        .map(|l| if *l == ":1" { "#t" } else { "#f" })
        .collect();
    assert_eq!(three, wire(&[&["*12"], &bools[..]].concat()), "{three:?}");
    let (two, three) = c.run("CF.INSERTNX @f ITEMS item0 another");
    assert_eq!(two, three, "CF.INSERTNX keeps integers");
    assert!(two.ends_with(":-1\r\n"), "{two:?}");
    c.same("CF.ADD @f yet-another", &["-Filter is full"]);
}

/// HELLO 2 after HELLO 3 brings the RESP2 shapes back on the same connection.
#[test]
fn hello_switches_shapes_on_one_connection() {
    let server = Server::start();
    let mut conn = server.raw3();
    assert_eq!(conn.call_raw(&["BF.ADD", "k", "x"]), b"#t\r\n");
    conn.call(&["HELLO", "2"]);
    assert_eq!(conn.call_raw(&["BF.ADD", "k", "x"]), b":0\r\n");
    assert_eq!(conn.call_raw(&["BF.INFO", "k", "ITEMS"]), b"*1\r\n:1\r\n");
    conn.call(&["HELLO", "3"]);
    assert_eq!(
        conn.call_raw(&["BF.INFO", "k", "ITEMS"]),
        b"%1\r\n+Number of items inserted\r\n:1\r\n"
    );
}

/// MODULE LIST names the RedisBloom version whose replies redbloom gives; redbloom's own
/// version is in INFO and the load log.
#[test]
fn module_list_reports_the_redisbloom_version() {
    let server = Server::start();
    let mut conn = server.raw();
    let modules = conn.call(&["MODULE", "LIST"]).array();
    let bf = modules
        .iter()
        .map(|m| m.array())
        .find(|m| m[1].text() == "bf")
        .expect("module bf in MODULE LIST");
    assert_eq!(bf[2].text(), "ver");
    assert_eq!(bf[3].int(), 20600);
    assert_eq!(
        crate::support::info_field(&mut conn, "bf_version", "bf_redbloom_version"),
        env!("CARGO_PKG_VERSION")
    );
    let log = server.log();
    assert!(
        log.contains(&format!(
            "redbloom {} loaded (RedisBloom 2.6.0 compatible",
            env!("CARGO_PKG_VERSION")
        )),
        "{log}"
    );
}
