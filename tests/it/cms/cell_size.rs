//! RedisBloom 8.12's Count-Min Sketch extension, as docs/compat.md ("Count-Min Sketch")
//! states it: `CELL_SIZE 1|2|4|8` on both INIT commands, CMS.INFO's `cell_size` pair (only
//! for a cell size other than 4), negative increments, atomic overflow and underflow (a
//! refused increment changes no counter and not the count), CMS.QUERY of each cell size at
//! its maximum, and CMS.MERGE's cell-size check and overflow. Exact replies, RESP2 and
//! RESP3.

use crate::support::resp::RawConnection;
use crate::support::{Reply, Server};

const CELL_SIZE_INVALID: &str = "CMS: CELL_SIZE must be 1, 2, 4 or 8";
const OVERFLOW: &str = "CMS: INCRBY overflow";
const UNDERFLOW: &str = "CMS: INCRBY underflow";

/// Each cell size and the largest value its counter holds.
const MAXIMA: [(u8, i64); 4] = [(1, 255), (2, 65_535), (4, 4_294_967_295), (8, i64::MAX)];

fn ints(values: &[i64]) -> Reply {
    Reply::int_array(values)
}

fn one_error(text: &str) -> Reply {
    Reply::Array(Some(vec![Reply::err(text)]))
}

fn init(conn: &mut RawConnection, key: &str, size: u8) {
    let size = size.to_string();
    let reply = conn.call(&["CMS.INITBYDIM", key, "1000", "4", "CELL_SIZE", &size]);
    assert_eq!(reply, Reply::ok(), "{key}");
}

#[test]
fn cell_size_is_an_option_of_both_init_commands() {
    let server = Server::start();
    let mut conn = server.raw();
    for (size, _) in MAXIMA {
        let size = size.to_string();
        let dim = format!("dim{size}");
        let reply = conn.call(&["CMS.INITBYDIM", &dim, "10", "2", "CELL_SIZE", &size]);
        assert_eq!(reply, Reply::ok());
        let prob = format!("prob{size}");
        let reply = conn.call(&["CMS.INITBYPROB", &prob, "0.01", "0.01", "cell_size", &size]);
        assert_eq!(reply, Reply::ok());
    }
    let info = |size: i64, width: i64, depth: i64| {
        let mut pairs = vec![
            Reply::Simple("width".into()),
            Reply::Int(width),
            Reply::Simple("depth".into()),
            Reply::Int(depth),
            Reply::Simple("count".into()),
            Reply::Int(0),
        ];
        if size != 4 {
            pairs.extend([Reply::Simple("cell_size".into()), Reply::Int(size)]);
        }
        Reply::Array(Some(pairs))
    };
    for (size, _) in MAXIMA {
        let size = i64::from(size);
        assert_eq!(
            conn.call(&["CMS.INFO", &format!("dim{size}")]),
            info(size, 10, 2)
        );
        assert_eq!(
            conn.call(&["CMS.INFO", &format!("prob{size}")]),
            info(size, 200, 7)
        );
    }
    // RESP3: a map, with the fourth pair only for a cell size other than 4.
    let mut resp3 = RawConnection::connect_resp3(server.port).unwrap();
    assert_eq!(
        resp3.call_raw(&["CMS.INFO", "dim2"]),
        b"%4\r\n+width\r\n:10\r\n+depth\r\n:2\r\n+count\r\n:0\r\n+cell_size\r\n:2\r\n"
    );
    assert_eq!(
        resp3.call_raw(&["CMS.INFO", "dim4"]),
        b"%3\r\n+width\r\n:10\r\n+depth\r\n:2\r\n+count\r\n:0\r\n"
    );
    // Errors: the key first, then the dimensions, then the cell size; nothing is made.
    let bad: [(&[&str], &str); 9] = [
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "3"],
            CELL_SIZE_INVALID,
        ),
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "0"],
            CELL_SIZE_INVALID,
        ),
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "-4"],
            CELL_SIZE_INVALID,
        ),
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "16"],
            CELL_SIZE_INVALID,
        ),
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "x"],
            CELL_SIZE_INVALID,
        ),
        (
            &[
                "CMS.INITBYPROB",
                "k",
                "0.1",
                "0.1",
                "CELL_SIZE",
                "4294967297",
            ],
            CELL_SIZE_INVALID,
        ),
        (
            &["CMS.INITBYDIM", "k", "0", "2", "CELL_SIZE", "3"],
            "CMS: invalid width",
        ),
        (
            &["CMS.INITBYDIM", "dim1", "10", "2", "CELL_SIZE", "3"],
            "CMS: key already exists",
        ),
        (
            &["CMS.INITBYDIM", "k", "10", "2", "CELLSIZE", "2"],
            "Unknown argument received",
        ),
    ];
    for (args, error) in bad {
        assert_eq!(conn.call(args), Reply::err(error), "{args:?}");
    }
    for args in [
        &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE"][..],
        &["CMS.INITBYDIM", "k", "10", "2", "CELL_SIZE", "2", "x"],
        &["CMS.INITBYPROB", "k", "0.1", "0.1", "CELL_SIZE"],
    ] {
        let reply = conn.call(args).error();
        assert!(
            reply.starts_with("ERR wrong number of arguments"),
            "{reply}"
        );
    }
    assert_eq!(conn.call(&["EXISTS", "k"]).int(), 0);
}

#[test]
fn each_cell_size_counts_to_its_maximum_and_refuses_past_it_atomically() {
    let server = Server::start();
    let mut conn = server.raw();
    for (size, max) in MAXIMA {
        let key = format!("c{size}");
        init(&mut conn, &key, size);
        let below = (max - 1).to_string();
        assert_eq!(
            conn.call(&["CMS.INCRBY", &key, "x", &below]),
            ints(&[max - 1])
        );
        // A 4-byte counter reaching u32::MAX is 2.4.20's overflow reply (applied).
        let at_max = match size {
            4 => one_error(OVERFLOW),
            _ => ints(&[max]),
        };
        assert_eq!(conn.call(&["CMS.INCRBY", &key, "x", "1"]), at_max);
        assert_eq!(conn.call(&["CMS.QUERY", &key, "x", "y"]), ints(&[max, 0]));
        let dump = conn.call(&["DUMP", &key]);
        let reply = conn.call(&["CMS.INCRBY", &key, "x", "1", "y", "7"]);
        assert_eq!(
            reply,
            Reply::Array(Some(vec![Reply::err(OVERFLOW), Reply::Int(7)])),
            "{size}"
        );
        assert_eq!(conn.call(&["CMS.QUERY", &key, "x", "y"]), ints(&[max, 7]));
        if size == 4 {
            // RedisBloom 2.4.20's arithmetic: applied, saturated, the count wraps on.
            assert_eq!(
                conn.call(&["CMS.INFO", &key]).array()[5],
                Reply::Int(max + 8)
            );
            continue;
        }
        // Refused whole: the count holds only what was applied.
        let count = max.saturating_add(7);
        assert_eq!(conn.call(&["CMS.INFO", &key]).array()[5], Reply::Int(count));
        conn.call(&["CMS.INCRBY", &key, "y", "-7"]);
        if size != 8 {
            // (8 bytes: the count stayed capped through y's 7, so it is 7 below now.)
            assert_eq!(conn.call(&["DUMP", &key]), dump, "{size}: no cell moved");
        }
    }
    // The count is capped at INT64_MAX.
    init(&mut conn, "cap", 8);
    let top = i64::MAX.to_string();
    conn.call(&["CMS.INCRBY", "cap", "a", &top]);
    assert_eq!(conn.call(&["CMS.INCRBY", "cap", "b", "5"]), ints(&[5]));
    assert_eq!(
        conn.call(&["CMS.INFO", "cap"]).array()[5],
        Reply::Int(i64::MAX)
    );
}

#[test]
fn negative_increments_apply_only_when_every_cell_holds_enough() {
    let server = Server::start();
    let mut conn = server.raw();
    // The default (4-byte) sketch takes them too.
    conn.call(&["CMS.INITBYDIM", "d", "1000", "4"]);
    for (size, _) in MAXIMA {
        let key = format!("n{size}");
        init(&mut conn, &key, size);
    }
    for key in ["d", "n1", "n2", "n4", "n8"] {
        assert_eq!(
            conn.call(&["CMS.INCRBY", key, "a", "-1"]),
            one_error(UNDERFLOW)
        );
        assert_eq!(conn.call(&["CMS.INCRBY", key, "a", "10"]), ints(&[10]));
        let reply = conn.call(&["CMS.INCRBY", key, "a", "-4", "a", "-7", "b", "0", "a", "-6"]);
        let want = vec![
            Reply::Int(6),
            Reply::err(UNDERFLOW),
            Reply::Int(0),
            Reply::Int(0),
        ];
        assert_eq!(reply, Reply::Array(Some(want)), "{key}");
        assert_eq!(
            conn.call(&["CMS.INFO", key]).array()[5],
            Reply::Int(0),
            "{key}"
        );
        let min = i64::MIN.to_string();
        assert_eq!(
            conn.call(&["CMS.INCRBY", key, "a", &min]),
            one_error(UNDERFLOW)
        );
        // Parsing is as before: every increment parsed before any is applied.
        let reply = conn.call(&["CMS.INCRBY", key, "a", "5", "b", "-x"]);
        assert_eq!(reply, Reply::err("CMS: Cannot parse number"));
        assert_eq!(conn.call(&["CMS.QUERY", key, "a"]), ints(&[0]));
    }
}

#[test]
fn merges_need_equal_cell_sizes_and_refuse_overflow() {
    let server = Server::start();
    let mut conn = server.raw();
    for (size, max) in MAXIMA {
        let (a, dest) = (format!("a{size}"), format!("m{size}"));
        init(&mut conn, &a, size);
        init(&mut conn, &dest, size);
        let half = (max / 2 + 1).to_string();
        conn.call(&["CMS.INCRBY", &a, "x", &half]);
        assert_eq!(conn.call(&["CMS.MERGE", &dest, "1", &a]), Reply::ok());
        assert_eq!(conn.call(&["CMS.QUERY", &dest, "x"]), ints(&[max / 2 + 1]));
        let dump = conn.call(&["DUMP", &dest]);
        assert_eq!(
            conn.call(&["CMS.MERGE", &dest, "2", &a, &a]),
            Reply::err("CMS: MERGE overflow"),
            "{size}"
        );
        assert_eq!(conn.call(&["DUMP", &dest]), dump);
        let weights = ["CMS.MERGE", &dest, "2", &a, &dest, "WEIGHTS", "1", "-1"];
        assert_eq!(conn.call(&weights), Reply::ok());
        assert_eq!(conn.call(&["CMS.QUERY", &dest, "x"]), ints(&[0]));
    }
    for (dest, source) in [("m1", "a2"), ("m8", "a4"), ("m4", "a1")] {
        assert_eq!(
            conn.call(&["CMS.MERGE", dest, "1", source]),
            Reply::err("CMS: cell size is not equal")
        );
    }
    // Width and depth are compared before the cell size.
    conn.call(&["CMS.INITBYDIM", "narrow", "999", "4", "CELL_SIZE", "1"]);
    assert_eq!(
        conn.call(&["CMS.MERGE", "m1", "1", "narrow"]),
        Reply::err("CMS: width/depth is not equal")
    );
}
