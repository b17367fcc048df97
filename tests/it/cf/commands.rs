//! CF.* against a real server: every reply and literal error string of COMPAT §2 / §12 in
//! the documented validation order, wrong arity and wrong types, RedisBloom's cuckoo flow
//! checks (COMPAT §10.2) and redbloom's deliberate differences from 2.4.20.

use crate::support::replies::{err, int, ints, ok};

use crate::support::cf::{add_range, arity, bulk, cmd, debug_line, info_reply, numbers};
use crate::support::{call, scandump, RawConnection, Reply, Server};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

// ------------------------------------------------------------------------------------------
// Arity and key types

#[test]
fn wrong_arity_for_every_command() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE k 100"), ok());
    let cases: &[(&str, &[&str])] = &[
        (
            "cf.reserve",
            &[
                "cf.reserve",
                "cf.reserve k",
                "cf.reserve k 100 BUCKETSIZE",
                "cf.reserve k 100 BUCKETSIZE 2 EXPANSION",
            ],
        ),
        ("cf.add", &["cf.add", "cf.add k", "cf.add k a b"]),
        ("cf.addnx", &["cf.addnx", "cf.addnx k", "cf.addnx k a b"]),
        (
            "cf.insert",
            &[
                "cf.insert",
                "cf.insert k",
                "cf.insert k ITEMS",
                "cf.insert k CAPACITY 100",
                "cf.insert k NOCREATE NOCREATE",
                "cf.insert k NOCREATE CAPACITY",
            ],
        ),
        (
            "cf.insertnx",
            &[
                "cf.insertnx",
                "cf.insertnx k",
                "cf.insertnx k ITEMS",
                "cf.insertnx k NOCREATE NOCREATE",
            ],
        ),
        (
            "cf.exists",
            &["cf.exists", "cf.exists k", "cf.exists k a b"],
        ),
        ("cf.mexists", &["cf.mexists", "cf.mexists k"]),
        ("cf.count", &["cf.count", "cf.count k", "cf.count k a b"]),
        ("cf.del", &["cf.del", "cf.del k", "cf.del k a b"]),
        ("cf.compact", &["cf.compact", "cf.compact k x"]),
        ("cf.info", &["cf.info", "cf.info k x"]),
        ("cf.debug", &["cf.debug", "cf.debug k x"]),
        (
            "cf.scandump",
            &["cf.scandump", "cf.scandump k", "cf.scandump k 0 0"],
        ),
        (
            "cf.loadchunk",
            &[
                "cf.loadchunk",
                "cf.loadchunk k",
                "cf.loadchunk k 1",
                "cf.loadchunk k 1 a b",
            ],
        ),
    ];
    for (name, lines) in cases {
        for line in *lines {
            assert_eq!(call(&mut c, line), arity(name), "{line}");
        }
    }
    // The message names the command in lower case however it was typed, whether Redis
    // (registered arity) or the module (CF.RESERVE's even argc) rejects it.
    assert_eq!(call(&mut c, "CF.ADD k"), arity("cf.add"));
    assert_eq!(
        call(&mut c, "CF.RESERVE k 100 BUCKETSIZE"),
        arity("cf.reserve")
    );
    assert_eq!(call(&mut c, "CF.INSERT k CAPACITY"), arity("cf.insert"));
    // Nothing above changed the filter.
    assert_eq!(
        call(&mut c, "CF.DEBUG k"),
        debug_line(2, 64, 0, 0, 1, 20, 1)
    );
}

#[test]
fn wrong_type_keys() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "SET str value"), ok());
    assert_eq!(call(&mut c, "BF.ADD bloom a"), int(1));
    for key in ["str", "bloom"] {
        let line = |rest: &str| rest.replace("KEY", key);
        let read_zero: &[(&str, Reply)] = &[
            ("CF.EXISTS KEY a", int(0)),
            ("CF.MEXISTS KEY a b c", ints(&[0, 0, 0])),
            ("CF.COUNT KEY a", int(0)),
            ("CF.DEL KEY a", err("Not found")),
            ("CF.COMPACT KEY", err("Cuckoo filter was not found")),
            ("CF.RESERVE KEY 100", err(WRONGTYPE)),
            ("CF.ADD KEY a", err(WRONGTYPE)),
            ("CF.ADDNX KEY a", err(WRONGTYPE)),
            ("CF.INSERT KEY ITEMS a", err(WRONGTYPE)),
            ("CF.INSERTNX KEY ITEMS a", err(WRONGTYPE)),
            ("CF.INSERT KEY NOCREATE ITEMS a", err(WRONGTYPE)),
            ("CF.INFO KEY", err(WRONGTYPE)),
            ("CF.DEBUG KEY", err(WRONGTYPE)),
            ("CF.SCANDUMP KEY 0", err(WRONGTYPE)),
            ("CF.SCANDUMP KEY 1", err(WRONGTYPE)),
            ("CF.LOADCHUNK KEY 1 abc", err(WRONGTYPE)),
            ("CF.LOADCHUNK KEY 2 abc", err(WRONGTYPE)),
        ];
        for (text, expected) in read_zero {
            let text = line(text);
            assert_eq!(&call(&mut c, &text), expected, "{text}");
        }
    }
    // The wrong-type keys are untouched.
    assert_eq!(call(&mut c, "GET str"), bulk("value"));
    assert_eq!(call(&mut c, "BF.EXISTS bloom a"), int(1));
    assert_eq!(
        call(&mut c, "TYPE bloom"),
        Reply::Simple("MBbloom--".into())
    );
    // And a CF key is the wrong type for BF commands.
    assert_eq!(call(&mut c, "CF.ADD cf a"), int(1));
    assert_eq!(call(&mut c, "TYPE cf"), Reply::Simple("MBbloomCF".into()));
    assert_eq!(call(&mut c, "BF.ADD cf a"), err(WRONGTYPE));
    assert_eq!(call(&mut c, "GET cf"), err(WRONGTYPE));
}

#[test]
fn missing_keys() {
    let server = Server::start();
    let mut c = server.raw();
    let cases: &[(&str, Reply)] = &[
        ("CF.EXISTS nokey a", int(0)),
        ("CF.MEXISTS nokey a b", ints(&[0, 0])),
        ("CF.COUNT nokey a", int(0)),
        ("CF.DEL nokey a", err("Not found")),
        ("CF.COMPACT nokey", err("Cuckoo filter was not found")),
        ("CF.INFO nokey", err("ERR not found")),
        ("CF.DEBUG nokey", err("ERR not found")),
        ("CF.SCANDUMP nokey 0", err("ERR not found")),
        ("CF.SCANDUMP nokey 5", err("ERR not found")),
        ("CF.LOADCHUNK nokey 2 abc", err("ERR not found")),
        ("CF.LOADCHUNK nokey -3 abc", err("ERR not found")),
        ("CF.INSERT nokey NOCREATE ITEMS a", err("ERR not found")),
        ("CF.INSERTNX nokey NOCREATE ITEMS a", err("ERR not found")),
    ];
    for (text, expected) in cases {
        assert_eq!(&call(&mut c, text), expected, "{text}");
    }
    // None of them created the key.
    assert_eq!(call(&mut c, "EXISTS nokey"), int(0));
    assert_eq!(call(&mut c, "DBSIZE"), int(0));
}

// ------------------------------------------------------------------------------------------
// CF.RESERVE

#[test]
fn reserve_validation_order_and_messages() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "SET str x"), ok());
    let cases: &[(&str, &str)] = &[
        // 2. capacity first, before any option.
        ("CF.RESERVE k abc MAXITERATIONS 0", "Bad capacity"),
        ("CF.RESERVE k 0100", "Bad capacity"),
        ("CF.RESERVE k +100", "Bad capacity"),
        ("CF.RESERVE k 1e3", "Bad capacity"),
        ("CF.RESERVE k 18446744073709551616", "Bad capacity"),
        ("CF.RESERVE str abc", "Bad capacity"),
        // 3. MAXITERATIONS before BUCKETSIZE and EXPANSION.
        (
            "CF.RESERVE k 100 MAXITERATIONS x BUCKETSIZE 0",
            "Couldn't parse MAXITERATIONS",
        ),
        (
            "CF.RESERVE k 100 MAXITERATIONS string",
            "Couldn't parse MAXITERATIONS",
        ),
        (
            "CF.RESERVE k 100 MAXITERATIONS 0 BUCKETSIZE x",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            "CF.RESERVE k 100 MAXITERATIONS -1",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            "CF.RESERVE k 100 MAXITERATIONS 65536",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            "CF.RESERVE k 100 MAXITERATIONS 165536",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        // 4. BUCKETSIZE before EXPANSION.
        (
            "CF.RESERVE k 100 EXPANSION x BUCKETSIZE y",
            "Couldn't parse BUCKETSIZE",
        ),
        (
            "CF.RESERVE k 100 BUCKETSIZE 0 EXPANSION x",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            "CF.RESERVE k 100 BUCKETSIZE -1",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            "CF.RESERVE k 100 BUCKETSIZE 256",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            "CF.RESERVE k 100 BUCKETSIZE 33554432",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        // 5. EXPANSION.
        ("CF.RESERVE k 100 EXPANSION x", "Couldn't parse EXPANSION"),
        (
            "CF.RESERVE k 100 EXPANSION -1",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            "CF.RESERVE k 100 EXPANSION 32769",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            "CF.RESERVE k 100 EXPANSION 327695",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        // 6. capacity against the bucket size, after every option parsed.
        ("CF.RESERVE k 1 EXPANSION x", "Couldn't parse EXPANSION"),
        (
            "CF.RESERVE k 1",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.RESERVE k 3",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.RESERVE k 0",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.RESERVE k -5",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.RESERVE k 9 BUCKETSIZE 5",
            "Capacity must be at least (BucketSize * 2)",
        ),
        // 7. key lookup last.
        (
            "CF.RESERVE str 1",
            "Capacity must be at least (BucketSize * 2)",
        ),
        ("CF.RESERVE str 100", WRONGTYPE),
        // A keyword that is the last argument has no value.
        ("CF.RESERVE k 100 X BUCKETSIZE", "Couldn't parse BUCKETSIZE"),
        (
            "CF.RESERVE k 100 X MAXITERATIONS",
            "Couldn't parse MAXITERATIONS",
        ),
        ("CF.RESERVE k 100 X EXPANSION", "Couldn't parse EXPANSION"),
    ];
    for (text, expected) in cases {
        assert_eq!(call(&mut c, text), err(expected), "{text}");
    }
    assert_eq!(call(&mut c, "EXISTS k"), int(0));
    assert_eq!(call(&mut c, "CF.RESERVE k 1000"), ok());
    assert_eq!(call(&mut c, "CF.RESERVE k 1000"), err("ERR item exists"));
    assert_eq!(
        call(&mut c, "CF.RESERVE k 4 BUCKETSIZE 2"),
        err("ERR item exists")
    );
    // Smallest accepted capacity: 2 × bucket size.
    assert_eq!(call(&mut c, "CF.RESERVE four 4"), ok());
    assert_eq!(
        call(&mut c, "CF.DEBUG four"),
        debug_line(2, 2, 0, 0, 1, 20, 1)
    );
    assert_eq!(call(&mut c, "CF.RESERVE ten 10 BUCKETSIZE 5"), ok());
    assert_eq!(
        call(&mut c, "CF.DEBUG ten"),
        debug_line(5, 2, 0, 0, 1, 20, 1)
    );
}

#[test]
fn reserve_options_and_rounding() {
    let server = Server::start();
    let mut c = server.raw();
    let cases: &[(&str, Reply)] = &[
        ("CF.RESERVE a 1000", debug_line(2, 512, 0, 0, 1, 20, 1)),
        (
            "CF.RESERVE b 10 MAXITERATIONS 10",
            debug_line(2, 8, 0, 0, 1, 10, 1),
        ),
        ("CF.RESERVE c 10000", debug_line(2, 8192, 0, 0, 1, 20, 1)),
        (
            "CF.RESERVE d 64 BUCKETSIZE 1",
            debug_line(1, 64, 0, 0, 1, 20, 1),
        ),
        ("CF.RESERVE e 9", debug_line(2, 4, 0, 0, 1, 20, 1)),
        (
            "CF.RESERVE f 100 EXPANSION 3",
            debug_line(2, 64, 0, 0, 1, 20, 4),
        ),
        (
            "CF.RESERVE g 100 EXPANSION 30000",
            debug_line(2, 64, 0, 0, 1, 20, 32768),
        ),
        (
            "CF.RESERVE h 100 EXPANSION 0",
            debug_line(2, 64, 0, 0, 1, 20, 0),
        ),
        (
            "CF.RESERVE i 100 EXPANSION 1",
            debug_line(2, 64, 0, 0, 1, 20, 1),
        ),
        // Case-insensitive keywords, any order, unknown tokens ignored, first hit wins.
        (
            "CF.RESERVE j 100 expansion 2 bucketsize 4 maxiterations 7",
            debug_line(4, 32, 0, 0, 1, 7, 2),
        ),
        (
            "CF.RESERVE k 100 foo bar BuCkEtSiZe 3",
            debug_line(3, 64, 0, 0, 1, 20, 1),
        ),
        (
            "CF.RESERVE l 100 BUCKETSIZE 4 BUCKETSIZE 8",
            debug_line(4, 32, 0, 0, 1, 20, 1),
        ),
        (
            "CF.RESERVE m 1000 MAXITERATIONS 65535 BUCKETSIZE 255 EXPANSION 32768",
            debug_line(255, 4, 0, 0, 1, 65535, 32768),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(call(&mut c, text), ok(), "{text}");
        let key = text.split(' ').nth(1).unwrap();
        assert_eq!(
            &call(&mut c, &format!("CF.DEBUG {key}")),
            expected,
            "{text}"
        );
    }
    // Reply type: a simple string.
    assert_eq!(call(&mut c, "CF.RESERVE n 100"), ok());
    assert_eq!(c.last_raw, b"+OK\r\n");
}

/// Deliberate difference (COMPAT decision 4c): keywords are searched only from argv[3], so
/// a key or capacity spelled like a keyword is a key or a capacity.
#[test]
fn reserve_keywords_only_in_option_positions() {
    let server = Server::start();
    let mut c = server.raw();
    // 2.4.20 would read "bucketsize 100" as BUCKETSIZE 100 and fail the capacity check.
    assert_eq!(call(&mut c, "CF.RESERVE bucketsize 100"), ok());
    assert_eq!(
        call(&mut c, "CF.DEBUG bucketsize"),
        debug_line(2, 64, 0, 0, 1, 20, 1)
    );
    assert_eq!(call(&mut c, "CF.RESERVE expansion 64"), ok());
    assert_eq!(
        call(&mut c, "CF.DEBUG expansion"),
        debug_line(2, 32, 0, 0, 1, 20, 1)
    );
    assert_eq!(
        call(&mut c, "CF.RESERVE maxiterations 64 BUCKETSIZE 4"),
        ok()
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG maxiterations"),
        debug_line(4, 16, 0, 0, 1, 20, 1)
    );
    // A capacity spelled like a keyword is a bad capacity, not an option.
    assert_eq!(
        call(&mut c, "CF.RESERVE k BUCKETSIZE 4 X"),
        err("Bad capacity")
    );
    // Past argv[2] every position is searched, values included (as in 2.4.20): here
    // BUCKETSIZE is found last, with no value.
    assert_eq!(
        call(&mut c, "CF.RESERVE k 100 EXPANSION BUCKETSIZE"),
        err("Couldn't parse BUCKETSIZE")
    );
}

#[test]
fn reserve_limits() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(
        call(
            &mut c,
            "CF.RESERVE cf 67108864 BUCKETSIZE 255 MAXITERATIONS 65535 EXPANSION 32768"
        ),
        ok()
    );
    // 67108864 / 255 = 263168.25 → 2^19 buckets of 255 bytes.
    let size = 40 + 16 + 255 * (1 << 19);
    assert_eq!(
        call(&mut c, "CF.INFO cf"),
        info_reply([size, 1 << 19, 1, 0, 0, 255, 32768, 65535])
    );
    assert_eq!(call(&mut c, "CF.ADD cf x"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS cf x"), int(1));
}

#[test]
fn reserve_insufficient_memory_and_ceiling() {
    let server = Server::start();
    let mut c = server.raw();
    // 2^62 buckets exceed the 56-bit bucket count: HEAD's message.
    assert_eq!(
        call(&mut c, "CF.RESERVE cf 9223372036854775807"),
        err("ERR Insufficient memory to create filter")
    );
    assert_eq!(
        call(&mut c, "CF.RESERVE cf 9223372036854775807 BUCKETSIZE 1"),
        err("ERR Insufficient memory to create filter")
    );
    // Valid layouts beyond the per-filter ceiling (4 GiB of bucket data) are refused
    // instead of aborting the server (2.4.20 crashed on these).
    for capacity in ["100000000000000", "8589934594", "4294967298 BUCKETSIZE 1"] {
        assert_eq!(
            call(&mut c, &format!("CF.RESERVE cf {capacity}")),
            err("ERR filter would exceed the max-filter-bytes limit"),
            "{capacity}"
        );
    }
    assert_eq!(call(&mut c, "EXISTS cf"), int(0));
    assert_eq!(call(&mut c, "PING"), Reply::Simple("PONG".into()));
    // Small filters still work.
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000"), ok());
    assert_eq!(call(&mut c, "CF.ADD cf a"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS cf a"), int(1));
}

// ------------------------------------------------------------------------------------------
// CF.ADD / CF.ADDNX / CF.INSERT / CF.INSERTNX

#[test]
fn add_addnx_count_del() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000"), ok());
    assert_eq!(call(&mut c, "CF.EXISTS cf k1"), int(0));
    assert_eq!(call(&mut c, "CF.ADD cf k1"), int(1));
    assert_eq!(c.last_raw, b":1\r\n");
    assert_eq!(call(&mut c, "CF.ADD cf k1"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS cf k1"), int(1));
    assert_eq!(call(&mut c, "CF.COUNT cf k1"), int(2));
    assert_eq!(call(&mut c, "CF.DEL cf k1"), int(1));
    assert_eq!(call(&mut c, "CF.COUNT cf k1"), int(1));
    assert_eq!(call(&mut c, "CF.DEL cf k1"), int(1));
    assert_eq!(call(&mut c, "CF.COUNT cf k1"), int(0));
    assert_eq!(call(&mut c, "CF.DEL cf k1"), int(0));
    assert_eq!(call(&mut c, "CF.EXISTS cf k1"), int(0));
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(2, 512, 0, 2, 1, 20, 1)
    );
    // ADDNX
    assert_eq!(call(&mut c, "CF.ADDNX cf n1"), int(1));
    assert_eq!(call(&mut c, "CF.ADDNX cf n1"), int(0));
    assert_eq!(call(&mut c, "cf.addNX cf n1"), int(0));
    assert_eq!(call(&mut c, "CF.COUNT cf n1"), int(1));
    assert_eq!(call(&mut c, "CF.ADD cf n1"), int(1));
    assert_eq!(call(&mut c, "CF.COUNT cf n1"), int(2));
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(2, 512, 2, 2, 1, 20, 1)
    );
    // Binary and empty items.
    assert_eq!(cmd(&mut c, &[b"CF.ADD", b"cf", b""]), int(1));
    assert_eq!(cmd(&mut c, &[b"CF.EXISTS", b"cf", b""]), int(1));
    assert_eq!(
        cmd(&mut c, &[b"CF.ADD", b"cf", b"\x00\xff a b\r\n"]),
        int(1)
    );
    assert_eq!(
        cmd(&mut c, &[b"CF.EXISTS", b"cf", b"\x00\xff a b\r\n"]),
        int(1)
    );
    assert_eq!(
        cmd(&mut c, &[b"CF.EXISTS", b"cf", b"\x00\xff a b\r"]),
        int(0)
    );
    // 100 items into a fresh key: all present.
    add_range(&mut c, "hundred", 0..100, &int(1));
    assert_eq!(
        crate::support::cf::cf_mexists(&mut c, "hundred", &numbers(0..100)),
        vec![1; 100]
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG hundred"),
        debug_line(2, 512, 100, 0, 1, 20, 1)
    );
}

#[test]
fn add_autocreates_with_defaults() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.ADD f1 foo"), int(1));
    assert_eq!(call(&mut c, "CF.INSERT f2 ITEMS foo"), ints(&[1]));
    assert_eq!(call(&mut c, "CF.ADDNX f3 foo"), int(1));
    assert_eq!(call(&mut c, "CF.INSERTNX f4 ITEMS foo"), ints(&[1]));
    let expected = debug_line(2, 512, 1, 0, 1, 20, 1);
    for key in ["f1", "f2", "f3", "f4"] {
        assert_eq!(call(&mut c, &format!("CF.DEBUG {key}")), expected, "{key}");
        assert_eq!(
            call(&mut c, &format!("CF.INFO {key}")),
            info_reply([40 + 16 + 1024, 512, 1, 1, 0, 2, 1, 20])
        );
    }
    assert_eq!(
        crate::support::scandump(&mut c, "CF.SCANDUMP", "f1"),
        crate::support::scandump(&mut c, "CF.SCANDUMP", "f2")
    );
}

#[test]
fn insert_options_and_errors() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(
        call(&mut c, "CF.INSERT f3 CAPACITY 10000 ITEMS foo"),
        ints(&[1])
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG f3"),
        debug_line(2, 8192, 1, 0, 1, 20, 1)
    );
    let cases: &[(&str, &str)] = &[
        ("CF.INSERT f3 CAPACITY str ITEMS foo", "Bad capacity"),
        ("CF.INSERT f3 CAPACITY 1.5 ITEMS foo", "Bad capacity"),
        // Checked even though the key exists (and the value would be ignored).
        (
            "CF.INSERT f3 CAPACITY 3 ITEMS foo",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.INSERT f3 CAPACITY -1 ITEMS foo",
            "Capacity must be at least (BucketSize * 2)",
        ),
        (
            "CF.INSERTNX f3 CAPACITY 3 ITEMS foo",
            "Capacity must be at least (BucketSize * 2)",
        ),
        ("CF.INSERT f3 FOO ITEMS foo", "Unknown argument received"),
        (
            "CF.INSERT f3 NOCREATE xyz ITEMS foo",
            "Unknown argument received",
        ),
        // Parsing stops at the first bad option, before later ones or the items.
        ("CF.INSERT f3 CAPACITY x FOO", "Bad capacity"),
        ("CF.INSERT f3 FOO CAPACITY x", "Unknown argument received"),
    ];
    for (text, expected) in cases {
        assert_eq!(call(&mut c, text), err(expected), "{text}");
    }
    assert_eq!(
        cmd(&mut c, &[b"CF.INSERT", b"f3", b"", b"ITEMS", b"a"]),
        err("Unknown argument received")
    );
    // First-letter dispatch: c… CAPACITY, i… ITEMS, n… NOCREATE.
    assert_eq!(call(&mut c, "CF.INSERT f5 cap 64 i a b"), ints(&[1, 1]));
    assert_eq!(
        call(&mut c, "CF.DEBUG f5"),
        debug_line(2, 32, 2, 0, 1, 20, 1)
    );
    assert_eq!(call(&mut c, "CF.INSERT f5 nothing Items c"), ints(&[1]));
    assert_eq!(
        call(&mut c, "CF.INSERT f6 nocreate ITEMS c"),
        err("ERR not found")
    );
    assert_eq!(
        call(&mut c, "CF.INSERT f6 Nope ITEMS c"),
        err("ERR not found")
    );
    // Items may look like options.
    assert_eq!(
        call(&mut c, "CF.INSERT f5 ITEMS CAPACITY NOCREATE ITEMS"),
        ints(&[1, 1, 1])
    );
    assert_eq!(
        call(&mut c, "CF.MEXISTS f5 CAPACITY NOCREATE ITEMS a b c d"),
        ints(&[1, 1, 1, 1, 1, 1, 0])
    );
    // NX
    assert_eq!(call(&mut c, "CF.INSERTNX f1 ITEMS foo"), ints(&[1]));
    assert_eq!(call(&mut c, "CF.INSERTNX f1 items foo"), ints(&[0]));
    assert_eq!(
        call(&mut c, "CF.INSERTNX f3 ITEMS foo bar baz"),
        ints(&[0, 1, 1])
    );
    assert_eq!(
        call(&mut c, "CF.INSERTNX f3 ITEMS qux qux qux"),
        ints(&[1, 0, 0])
    );
    assert_eq!(call(&mut c, "CF.INSERT f3 ITEMS qux qux"), ints(&[1, 1]));
    assert_eq!(call(&mut c, "CF.COUNT f3 qux"), int(3));
    // NOCREATE works once the key exists; CAPACITY/NOCREATE together are not refused.
    assert_eq!(
        call(&mut c, "CF.INSERT f4 NOCREATE ITEMS foo"),
        err("ERR not found")
    );
    assert_eq!(call(&mut c, "CF.ADD f4 x"), int(1));
    assert_eq!(call(&mut c, "CF.INSERT f4 NOCREATE ITEMS foo"), ints(&[1]));
    assert_eq!(
        call(&mut c, "CF.INSERT f4 CAPACITY 100 NOCREATE ITEMS bar"),
        ints(&[1])
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG f4"),
        debug_line(2, 512, 3, 0, 1, 20, 1)
    );
    // An existing filter ignores CAPACITY.
    assert_eq!(
        call(&mut c, "CF.DEBUG f3"),
        debug_line(2, 8192, 6, 0, 1, 20, 1)
    );
}

#[test]
fn exists_and_mexists() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(
        call(&mut c, "CF.INSERT cf ITEMS foo bar baz"),
        ints(&[1, 1, 1])
    );
    assert_eq!(call(&mut c, "CF.EXISTS cf foo"), int(1));
    assert_eq!(call(&mut c, "CF.EXISTS cf nonexist"), int(0));
    assert_eq!(call(&mut c, "CF.MEXISTS cf foo bar baz"), ints(&[1, 1, 1]));
    assert_eq!(c.last_raw, b"*3\r\n:1\r\n:1\r\n:1\r\n");
    assert_eq!(
        call(&mut c, "CF.MEXISTS cf foo nonexist foo"),
        ints(&[1, 0, 1])
    );
    assert_eq!(call(&mut c, "CF.EXISTS missing foo"), int(0));
    assert_eq!(call(&mut c, "CF.MEXISTS missing foo"), ints(&[0]));
}

#[test]
fn info_and_debug_replies() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE a 1000"), ok());
    assert_eq!(
        call(&mut c, "CF.INFO a"),
        info_reply([1080, 512, 1, 0, 0, 2, 1, 20])
    );
    let mut raw = b"*16\r\n".to_vec();
    for (label, value) in [
        ("Size", 1080),
        ("Number of buckets", 512),
        ("Number of filters", 1),
        ("Number of items inserted", 0),
        ("Number of items deleted", 0),
        ("Bucket size", 2),
        ("Expansion rate", 1),
        ("Max iterations", 20),
    ] {
        raw.extend_from_slice(format!("+{label}\r\n:{value}\r\n").as_bytes());
    }
    assert_eq!(c.last_raw, raw);
    assert_eq!(call(&mut c, "CF.RESERVE b 9 EXPANSION 0"), ok());
    assert_eq!(
        call(&mut c, "CF.INFO b"),
        info_reply([64, 4, 1, 0, 0, 2, 0, 20])
    );
    assert_eq!(
        call(&mut c, "CF.DEBUG a"),
        debug_line(2, 512, 0, 0, 1, 20, 1)
    );
    let text = "bktsize:2 buckets:512 items:0 deletes:0 filters:1 max_iterations:20 expansion:1";
    assert_eq!(
        c.last_raw,
        format!("${}\r\n{text}\r\n", text.len()).into_bytes()
    );
}

#[test]
fn memory_usage() {
    let server = Server::start();
    let mut c = server.raw();
    // The module's 1080 (COMPAT §4.5) plus the server's per-key overhead: 32 bytes on
    // Redis 7.0 (RedisBloom's test value 1112), 24 on Valkey 8.1 and Redis 8.2.
    let want = int(1080
        + if crate::support::is_valkey(&mut c) || crate::support::is_redis8(&mut c) {
            24
        } else {
            32
        });
    assert_eq!(call(&mut c, "CF.RESERVE cf 1000"), ok());
    assert_eq!(call(&mut c, "MEMORY USAGE cf"), want);
    assert_eq!(call(&mut c, "CF.ADD cf a"), int(1));
    assert_eq!(call(&mut c, "MEMORY USAGE cf"), want);
    let before = crate::support::cf::cf_state(&mut c, "cf");
    assert_eq!(call(&mut c, "DEBUG RELOAD"), ok());
    assert_eq!(crate::support::cf::cf_state(&mut c, "cf"), before);
    assert_eq!(call(&mut c, "MEMORY USAGE cf"), want);
    assert_eq!(call(&mut c, "CF.EXISTS cf a"), int(1));
}

#[test]
fn max_iterations_debug() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE a 10 MAXITERATIONS 10"), ok());
    assert_eq!(call(&mut c, "CF.DEBUG a"), debug_line(2, 8, 0, 0, 1, 10, 1));
    assert_eq!(call(&mut c, "CF.RESERVE b 10"), ok());
    assert_eq!(call(&mut c, "CF.DEBUG b"), debug_line(2, 8, 0, 0, 1, 20, 1));
    assert_eq!(
        call(&mut c, "CF.RESERVE c 10 MAXITERATIONS string"),
        err("Couldn't parse MAXITERATIONS")
    );
}

#[test]
fn num_deletes_survive_reload() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.ADD cf a"), int(1));
    assert_eq!(call(&mut c, "CF.DEL cf a"), int(1));
    let before = call(&mut c, "CF.DEBUG cf");
    assert_eq!(before, debug_line(2, 512, 0, 1, 1, 20, 1));
    let state = crate::support::cf::cf_state(&mut c, "cf");
    assert_eq!(call(&mut c, "DEBUG RELOAD"), ok());
    assert_eq!(call(&mut c, "CF.DEBUG cf"), before);
    assert_eq!(crate::support::cf::cf_state(&mut c, "cf"), state);
}

#[test]
fn bucket_size_and_expansion_shape_growth() {
    let server = Server::start();
    let mut c = server.raw();
    let cases: &[(&str, Reply)] = &[
        ("a 64 BUCKETSIZE 1", debug_line(1, 64, 1000, 0, 18, 20, 1)),
        ("b 64 BUCKETSIZE 2", debug_line(2, 32, 1000, 0, 17, 20, 1)),
        (
            "c 256 BUCKETSIZE 4 MAXITERATIONS 500",
            debug_line(4, 64, 1000, 0, 4, 500, 1),
        ),
        ("d 64 EXPANSION 2", debug_line(2, 32, 1000, 0, 5, 20, 2)),
        (
            "e 64 EXPANSION 4 MAXITERATIONS 500",
            debug_line(2, 32, 1000, 0, 3, 500, 4),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(call(&mut c, &format!("CF.RESERVE {args}")), ok(), "{args}");
        let key = &args[..1];
        add_range(&mut c, key, 0..1000, &int(1));
        assert_eq!(
            &call(&mut c, &format!("CF.DEBUG {key}")),
            expected,
            "{args}"
        );
        assert_eq!(
            crate::support::cf::cf_mexists(&mut c, key, &numbers(0..1000)),
            vec![1; 1000]
        );
    }
    // Sizes: 40 + Σ(16 + bs × buckets_i); d has 32·(1+2+4+8+16) buckets of 2.
    assert_eq!(
        call(&mut c, "CF.INFO d"),
        info_reply([40 + 5 * 16 + 2 * 32 * 31, 32, 5, 1000, 0, 2, 2, 20])
    );
    for bad in ["BUCKETSIZE", "EXPANSION"] {
        assert_eq!(
            call(&mut c, &format!("CF.RESERVE x 64 {bad} x")),
            err(&format!("Couldn't parse {bad}"))
        );
    }
    assert_eq!(
        call(&mut c, "CF.RESERVE x 64 BUCKETSIZE"),
        arity("cf.reserve")
    );
}

#[test]
fn expansion_zero_is_full() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE a 4 EXPANSION 0"), ok());
    for item in ["1", "2", "3", "4"] {
        assert_eq!(call(&mut c, &format!("CF.ADD a {item}")), int(1), "{item}");
    }
    let dump = scandump(&mut c, "CF.SCANDUMP", "a");
    assert_eq!(call(&mut c, "CF.INSERT a ITEMS 5 6"), ints(&[-1, -1]));
    assert_eq!(call(&mut c, "CF.ADD a 5"), err("Filter is full"));
    assert_eq!(call(&mut c, "CF.ADDNX a 6"), err("Filter is full"));
    assert_eq!(call(&mut c, "CF.INSERTNX a ITEMS 6 1"), ints(&[-1, 0]));
    // A failed kick-out leaves the table exactly as it was.
    assert_eq!(scandump(&mut c, "CF.SCANDUMP", "a"), dump);
    assert_eq!(call(&mut c, "CF.DEBUG a"), debug_line(2, 2, 4, 0, 1, 20, 0));
    assert_eq!(call(&mut c, "CF.MEXISTS a 1 2 3 4"), ints(&[1, 1, 1, 1]));
}

#[test]
fn max_expansions_reached() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 4"), ok());
    add_range(&mut c, "cf", 0..124, &int(1));
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(2, 2, 124, 0, 32, 20, 1)
    );
    // The guard holds for every insert form, before any item, present or not.
    for line in [
        "CF.ADD cf 124",
        "CF.ADDNX cf 124",
        "CF.ADDNX cf 0",
        "CF.INSERT cf ITEMS 0 124",
        "CF.INSERTNX cf ITEMS 0",
        "CF.INSERT cf NOCREATE ITEMS 0",
    ] {
        assert_eq!(
            call(&mut c, line),
            err("Maximum expansions reached"),
            "{line}"
        );
    }
    assert_eq!(
        call(&mut c, "CF.DEBUG cf"),
        debug_line(2, 2, 124, 0, 32, 20, 1)
    );
    // Reads and deletes still work.
    assert_eq!(call(&mut c, "CF.EXISTS cf 123"), int(1));
    assert_eq!(call(&mut c, "CF.DEL cf 123"), int(1));
}

#[test]
fn max_expansions_module_argument() {
    let server = Server::start_with(&["--module-args", "CF_MAX_EXPANSIONS", "3"]);
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 4"), ok());
    // One multi-item insert may grow past the limit (the guard is per command).
    let reply = call(
        &mut c,
        "CF.INSERT cf ITEMS 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
    );
    assert_eq!(reply, ints(&[1; 20]));
    let debug = call(&mut c, "CF.DEBUG cf").text();
    let filters: u64 = debug
        .split(' ')
        .find_map(|f| f.strip_prefix("filters:"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(filters > 3, "{debug}");
    assert_eq!(
        call(&mut c, "CF.ADD cf x"),
        err("Maximum expansions reached")
    );
}

#[test]
fn compact_moves_items_down_and_drops_sub_filters() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 8 MAXITERATIONS 50"), ok());
    add_range(&mut c, "cf", 0..100, &int(1));
    assert_eq!(
        crate::support::cf::cf_mexists(&mut c, "cf", &numbers(0..100)),
        vec![1; 100]
    );
    let grown = call(&mut c, "CF.DEBUG cf").text();
    assert!(grown.contains("items:100 deletes:0"), "{grown}");
    assert!(!grown.contains("filters:1 "), "{grown}");
    assert_eq!(call(&mut c, "CF.COMPACT cf"), ok());
    let compacted = call(&mut c, "CF.DEBUG cf").text();
    assert!(compacted.contains("items:100 deletes:0"), "{compacted}");
    assert_eq!(
        crate::support::cf::cf_mexists(&mut c, "cf", &numbers(0..100)),
        vec![1; 100]
    );
    assert_eq!(
        call(&mut c, "CF.COMPACT missing"),
        err("Cuckoo filter was not found")
    );
    assert_eq!(call(&mut c, "CF.COMPACT cf extra"), arity("cf.compact"));

    // Items removed from old sub-filters make room; COMPACT then empties the newest.
    // 64 BUCKETSIZE 1: "0".."199" need several sub-filters.
    assert_eq!(call(&mut c, "CF.RESERVE g 64 BUCKETSIZE 1"), ok());
    add_range(&mut c, "g", 0..200, &int(1));
    let filters_of = |c: &mut RawConnection| -> i64 { call(c, "CF.INFO g").array()[5].int() };
    let before = filters_of(&mut c);
    assert!(before >= 4, "{before}");
    // Delete 10 % or fewer at a time so DEL's own compaction does not kick in for a while,
    // then compact explicitly.
    for i in 0..15 {
        assert_eq!(call(&mut c, &format!("CF.DEL g {i}")), int(1));
    }
    let debug = call(&mut c, "CF.DEBUG g").text();
    assert!(debug.contains("items:185 deletes:15"), "{debug}");
    assert_eq!(call(&mut c, "CF.COMPACT g"), ok());
    let after = call(&mut c, "CF.DEBUG g").text();
    assert!(after.contains("items:185 deletes:0"), "{after}");
    assert!(filters_of(&mut c) < before, "{after}");
    assert_eq!(
        crate::support::cf::cf_mexists(&mut c, "g", &numbers(15..200)),
        vec![1; 185]
    );
}

#[test]
fn del_triggers_compaction_past_ten_percent() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 64 BUCKETSIZE 1"), ok());
    add_range(&mut c, "cf", 0..300, &int(1));
    let info = call(&mut c, "CF.INFO cf").array();
    let filters = info[5].int();
    assert!(filters > 1);
    // 300 items: the 28th delete makes deletes (28) > 10 % of items (272).
    for i in 0..27 {
        assert_eq!(call(&mut c, &format!("CF.DEL cf {i}")), int(1));
    }
    let debug = call(&mut c, "CF.DEBUG cf").text();
    assert!(debug.contains("items:273 deletes:27"), "{debug}");
    assert_eq!(call(&mut c, "CF.DEL cf 27"), int(1));
    let debug = call(&mut c, "CF.DEBUG cf").text();
    assert!(debug.contains("items:272 deletes:0"), "{debug}");
    assert_eq!(
        crate::support::cf::cf_mexists(&mut c, "cf", &numbers(28..300)),
        vec![1; 272]
    );
    // A one-sub-filter filter never compacts on delete.
    assert_eq!(call(&mut c, "CF.INSERT one ITEMS a b"), ints(&[1, 1]));
    assert_eq!(call(&mut c, "CF.DEL one a"), int(1));
    assert_eq!(
        call(&mut c, "CF.DEBUG one"),
        debug_line(2, 512, 1, 1, 1, 20, 1)
    );
}

/// CF.COMPACT is a write command here (2.4.20 flagged it read-only): a replica or a
/// read-only context refuses it.
#[test]
fn compact_is_a_write_command() {
    let server = Server::start();
    let mut c = server.raw();
    let info = call(&mut c, "COMMAND INFO cf.compact").array()[0].array();
    let flags: Vec<Reply> = info[2].array();
    assert!(flags.contains(&Reply::Simple("write".into())), "{flags:?}");
    assert!(
        !flags.contains(&Reply::Simple("readonly".into())),
        "{flags:?}"
    );
    assert_eq!(call(&mut c, "CF.ADD cf a"), int(1));
    // A read-only script may read the filter but not compact it.
    let reply = c.call(&[
        "EVAL_RO",
        "return redis.call('cf.exists','cf','a')",
        "1",
        "cf",
    ]);
    assert_eq!(reply, int(1));
    let reply = c.call(&["EVAL_RO", "return redis.call('cf.compact','cf')", "1", "cf"]);
    assert!(
        reply
            .error()
            .contains("Write commands are not allowed from read-only scripts"),
        "{reply:?}"
    );
}

/// A growth step that cannot happen (the 65535 sub-filter cap, reachable through CF.ADD
/// only with a higher CF_MAX_EXPANSIONS) is HEAD's `ERR Insufficient memory`, not 2.4.20's
/// `Memory allocation failure`; nothing changes.
#[test]
fn growth_failure_is_insufficient_memory() {
    let server = Server::start_with(&["--module-args", "CF_MAX_EXPANSIONS", "70000"]);
    let mut c = server.raw();
    assert_eq!(call(&mut c, "CF.RESERVE cf 2 BUCKETSIZE 1"), ok());
    let mut args: Vec<&str> = vec!["CF.INSERT", "cf", "ITEMS"];
    args.extend(std::iter::repeat_n("1", 2 * 65535));
    assert!(c.call(&args).ints().iter().all(|&r| r == 1));
    let full = debug_line(1, 2, 2 * 65535, 0, 65535, 20, 1);
    assert_eq!(call(&mut c, "CF.DEBUG cf"), full);
    assert_eq!(call(&mut c, "CF.ADD cf 1"), err("ERR Insufficient memory"));
    assert_eq!(
        call(&mut c, "CF.ADD cf other"),
        err("ERR Insufficient memory")
    );
    assert_eq!(
        call(&mut c, "CF.ADDNX cf other"),
        err("ERR Insufficient memory")
    );
    assert_eq!(call(&mut c, "CF.ADDNX cf 1"), int(0));
    assert_eq!(call(&mut c, "CF.INSERT cf ITEMS other 1"), ints(&[-1, -1]));
    assert_eq!(call(&mut c, "CF.DEBUG cf"), full);
    assert_eq!(call(&mut c, "CF.EXISTS cf other"), int(0));
    // It still reloads, unchanged.
    let state = crate::support::cf::cf_state(&mut c, "cf");
    assert_eq!(call(&mut c, "DEBUG RELOAD"), ok());
    assert_eq!(call(&mut c, "CF.DEBUG cf"), full);
    assert_eq!(crate::support::cf::cf_state(&mut c, "cf"), state);
}

/// A RESP3 client (the `redis` crate with protocol=resp3) gets RedisBloom 2.6's shapes:
/// booleans, a map for CF.INFO, integers for CF.COUNT and CF.INSERTNX.
#[test]
fn resp3_clients_get_redisbloom_2_6_shapes() {
    use redis::Value;
    let server = Server::start();
    let client =
        redis::Client::open(format!("redis://127.0.0.1:{}/?protocol=resp3", server.port)).unwrap();
    let mut con = client.get_connection().unwrap();
    let mut run = |args: &[&str]| -> Value {
        let mut command = redis::cmd(args[0]);
        for arg in &args[1..] {
            command.arg(*arg);
        }
        command.query::<Value>(&mut con).unwrap()
    };
    // The connection really is RESP3: a server map reply arrives as a map.
    assert!(matches!(run(&["HELLO", "3"]), Value::Map(_)));
    assert_eq!(
        run(&["CF.RESERVE", "a", "9", "EXPANSION", "0"]),
        Value::Okay
    );
    assert_eq!(run(&["CF.ADD", "a", "3"]), Value::Boolean(true));
    assert_eq!(run(&["CF.ADDNX", "a", "3"]), Value::Boolean(false));
    assert_eq!(run(&["CF.EXISTS", "a", "3"]), Value::Boolean(true));
    assert_eq!(
        run(&["CF.MEXISTS", "a", "3", "4"]),
        Value::Array(vec![Value::Boolean(true), Value::Boolean(false)])
    );
    assert_eq!(
        run(&["CF.INSERT", "a", "ITEMS", "4"]),
        Value::Array(vec![Value::Boolean(true)])
    );
    assert_eq!(
        run(&["CF.INSERTNX", "a", "ITEMS", "4", "6"]),
        Value::Array(vec![Value::Int(0), Value::Int(1)])
    );
    assert_eq!(run(&["CF.COUNT", "a", "4"]), Value::Int(1));
    assert_eq!(run(&["CF.DEL", "a", "3"]), Value::Boolean(true));
    assert_eq!(run(&["CF.DEL", "a", "3"]), Value::Boolean(false));
    let label = |s: &str| Value::SimpleString(s.into());
    assert_eq!(
        run(&["CF.INFO", "a"]),
        Value::Map(vec![
            (label("Size"), Value::Int(64)),
            (label("Number of buckets"), Value::Int(4)),
            (label("Number of filters"), Value::Int(1)),
            (label("Number of items inserted"), Value::Int(2)),
            (label("Number of items deleted"), Value::Int(1)),
            (label("Bucket size"), Value::Int(2)),
            (label("Expansion rate"), Value::Int(0)),
            (label("Max iterations"), Value::Int(20)),
        ])
    );
    match run(&["CF.SCANDUMP", "a", "9"]) {
        Value::Array(items) => assert_eq!(items, vec![Value::Int(0), Value::Nil]),
        other => panic!("CF.SCANDUMP: {other:?}"),
    }
}

/// CF.DEL removes the copy in the newest sub-filter holding the item (RedisBloom searches
/// newest first): with copies of one item in two sub-filters, one delete clears a slot of
/// the second sub-filter and leaves the first byte for byte.
#[test]
fn del_removes_from_the_newest_sub_filter_first() {
    let server = Server::start();
    let mut c = server.raw();
    assert_eq!(
        call(&mut c, "CF.RESERVE k 64 BUCKETSIZE 2 EXPANSION 1"),
        ok()
    );
    // Copies of one item share its two buckets: four fill them in the first sub-filter,
    // and the next copy goes to a second one.
    let mut copies = 0;
    while !call(&mut c, "CF.DEBUG k").text().contains(" filters:2 ") {
        assert_eq!(call(&mut c, "CF.ADD k x"), int(1));
        copies += 1;
        assert!(copies <= 10, "the filter never grew");
    }
    // Enough other items that one delete (≤ 10 % of the items) compacts nothing.
    for i in 0..20 {
        assert_eq!(c.call(&["CF.ADD", "k", &format!("other{i}")]), int(1));
    }
    let sub_filters = |c: &mut RawConnection| -> Vec<Vec<u8>> {
        let dump = scandump(c, "CF.SCANDUMP", "k");
        // Header, one chunk per (small) sub-filter, end.
        dump[1..dump.len() - 1]
            .iter()
            .map(|(_, data)| data.clone().expect("chunk data"))
            .collect()
    };
    let before = sub_filters(&mut c);
    assert_eq!(before.len(), 2);
    let occupied = |data: &[u8]| data.iter().filter(|&&b| b != 0).count();
    assert!(occupied(&before[0]) > 0 && occupied(&before[1]) > 0);
    assert_eq!(call(&mut c, "CF.COUNT k x"), int(copies));
    assert_eq!(call(&mut c, "CF.DEL k x"), int(1));
    let after = sub_filters(&mut c);
    assert_eq!(after[0], before[0], "the oldest sub-filter is untouched");
    assert_eq!(
        occupied(&after[1]),
        occupied(&before[1]) - 1,
        "one slot of the newest cleared"
    );
    assert_eq!(call(&mut c, "CF.COUNT k x"), int(copies - 1));
}
